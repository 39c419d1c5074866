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
        Nginx::start(root, ip, "types { text/html html; }", "access_log off;", "")
    }

    /// Serves a site of pages built by script ([`crate::app_site`]): its
    /// scripts and data with their types, `/app/*` falling back to the
    /// router's shell, and every request logged with its time
    /// ([`Nginx::requests`]).
    pub fn serve_app(root: &Path) -> Nginx {
        Nginx::start(
            root,
            "127.0.0.1",
            "types { text/html html; application/javascript js; application/json json; text/css css; image/png png; }",
            "log_format timed '$msec $request_time $request_uri'; access_log {d}/access.log timed;",
            "location /app/ { default_type text/html; try_files $uri /app/shell.html; }",
        )
    }

    /// The requests served, in order of their start: when each started
    /// (seconds since the epoch, as nginx saw it) and what it asked for.
    pub fn requests(&self) -> Vec<(f64, String)> {
        let log = std::fs::read_to_string(self.dir.join("access.log")).unwrap_or_default();
        let mut requests: Vec<(f64, String)> = log
            .lines()
            .filter_map(|l| {
                let mut fields = l.splitn(3, ' ');
                let ended: f64 = fields.next()?.parse().ok()?;
                let took: f64 = fields.next()?.parse().ok()?;
                Some((ended - took, fields.next()?.to_string()))
            })
            .collect();
        requests.sort_by(|a, b| a.0.total_cmp(&b.0));
        requests
    }

    fn start(root: &Path, ip: &str, types: &str, log: &str, locations: &str) -> Nginx {
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
        let log = log.replace("{d}", &d.to_string());
        let conf = format!(
            "daemon off; master_process off; worker_processes 1; pid {d}/nginx.pid; error_log {d}/error.log;\n\
             events {{ worker_connections 256; }}\n\
             http {{ {types} default_type application/octet-stream;\n\
             {log} client_body_temp_path {d}/body; proxy_temp_path {d}/proxy;\n\
             fastcgi_temp_path {d}/fastcgi; uwsgi_temp_path {d}/uwsgi; scgi_temp_path {d}/scgi;\n\
             server {{ listen {ip}:{port}; root {}; {locations} }} }}\n",
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
