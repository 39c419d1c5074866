//! A Redis Cluster on loopback for one test: nodes started in a temporary
//! directory, joined with `redis-cli --cluster create`, stopped on drop.

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

#[derive(Debug)]
pub struct Cluster {
    dir: PathBuf,
    ports: Vec<u16>,
    nodes: Vec<Child>,
}

/// A port that is free, and whose cluster bus port (+10,000) is free too.
fn free_port() -> u16 {
    for _ in 0..100 {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        if port < 55_000 && TcpListener::bind(("127.0.0.1", port + 10_000)).is_ok() {
            return port;
        }
    }
    panic!("no free port pair on 127.0.0.1");
}

fn need(tool: &str) {
    let found = Command::new(tool)
        .arg("--version")
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        found,
        "{tool} is missing: apt-get install -y redis-server redis-tools (.ci/run does)"
    );
}

impl Cluster {
    /// Starts `n` nodes (no replicas) and waits until the cluster serves.
    pub fn start(n: usize) -> Cluster {
        need("redis-server");
        need("redis-cli");
        let dir = std::env::temp_dir().join(format!("nearcrawl-redis-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let mut cluster = Cluster {
            dir,
            ports: Vec::new(),
            nodes: Vec::new(),
        };
        for _ in 0..n {
            let port = free_port();
            let node_dir = cluster.dir.join(port.to_string());
            std::fs::create_dir_all(&node_dir).unwrap();
            let child = Command::new("redis-server")
                .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
                .args(["--cluster-enabled", "yes", "--cluster-node-timeout", "2000"])
                .arg("--cluster-config-file")
                .arg(node_dir.join("nodes.conf"))
                .args([
                    "--appendonly",
                    "yes",
                    "--appendfsync",
                    "everysec",
                    "--save",
                    "",
                ])
                .arg("--dir")
                .arg(&node_dir)
                .stdout(Stdio::null())
                .spawn()
                .expect("starts redis-server");
            cluster.ports.push(port);
            cluster.nodes.push(child);
        }
        for &port in &cluster.ports {
            wait_until(|| cli(port, &["ping"]).contains("PONG"), "node answers");
        }
        let addrs: Vec<String> = cluster
            .ports
            .iter()
            .map(|p| format!("127.0.0.1:{p}"))
            .collect();
        let created = Command::new("redis-cli")
            .args(["--cluster", "create"])
            .args(&addrs)
            .args(["--cluster-replicas", "0", "--cluster-yes"])
            .stdout(Stdio::null())
            .status()
            .unwrap();
        assert!(created.success(), "redis-cli --cluster create failed");
        for &port in &cluster.ports {
            wait_until(
                || cli(port, &["cluster", "info"]).contains("cluster_state:ok"),
                "cluster_state:ok",
            );
        }
        cluster
    }

    pub fn urls(&self) -> Vec<String> {
        self.ports
            .iter()
            .map(|p| format!("redis://127.0.0.1:{p}"))
            .collect()
    }
}

fn cli(port: u16, args: &[&str]) -> String {
    Command::new("redis-cli")
        .args(["-p", &port.to_string()])
        .args(args)
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default()
}

fn wait_until(mut ok: impl FnMut() -> bool, what: &str) {
    let start = Instant::now();
    while !ok() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "timed out: {what}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for node in &mut self.nodes {
            let _ = node.kill();
            let _ = node.wait();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
