//! nginx serving a directory on 127.0.0.1 for one test: static files with
//! `ETag` and `Last-Modified`, and 304s to conditional requests, as real
//! sites answer. Needs `nginx` (installed by `tests/run`).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running nginx; stopped when dropped.
#[derive(Debug)]
pub struct Nginx {
    child: Child,
    pub port: u16,
    dir: PathBuf,
}

impl Nginx {
    /// Serves `root` (which nginx's workers must be able to read).
    pub fn serve(root: &Path) -> Nginx {
        Nginx::serve_on(root, "127.0.0.1")
    }

    /// Serves `root` on `ip` (a 127.x address: another host).
    pub fn serve_on(root: &Path, ip: &str) -> Nginx {
        let binary = ["/usr/sbin/nginx", "/usr/bin/nginx"]
            .into_iter()
            .find(|p| Path::new(p).exists())
            .expect("nginx is missing: tests/run installs it (apt-get install -y nginx)");
        let port = std::net::TcpListener::bind((ip, 0))
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let dir = std::env::temp_dir().join(format!("nearcrawl-nginx-{ip}-{port}"));
        std::fs::create_dir_all(&dir).unwrap();
        let d = dir.display();
        let conf = format!(
            "daemon off; master_process off; worker_processes 1; pid {d}/nginx.pid; error_log {d}/error.log;\n\
             events {{ worker_connections 256; }}\n\
             http {{ types {{ text/html html; }} default_type application/octet-stream;\n\
             access_log off; client_body_temp_path {d}/body; proxy_temp_path {d}/proxy;\n\
             fastcgi_temp_path {d}/fastcgi; uwsgi_temp_path {d}/uwsgi; scgi_temp_path {d}/scgi;\n\
             server {{ listen {ip}:{port}; root {}; }} }}\n",
            root.display()
        );
        std::fs::write(dir.join("nginx.conf"), conf).unwrap();
        let child = Command::new(binary)
            .arg("-c")
            .arg(dir.join("nginx.conf"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("starts nginx");
        let started = Instant::now();
        while std::net::TcpStream::connect((ip, port)).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "nginx does not listen"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        Nginx { child, port, dir }
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Lets nginx's workers (another user, when the tests run as root) read
/// `dir`.
pub fn open_to_all(dir: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).unwrap();
}
