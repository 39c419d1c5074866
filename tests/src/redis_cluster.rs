//! A Redis Cluster on loopback for one test: nodes started in a temporary
//! directory, joined with `redis-cli --cluster create`, stopped on drop.
//! Used by the end-to-end tests here and by `nearcrawl-cluster`'s tests and
//! benchmark.

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

#[derive(Debug)]
pub struct Cluster {
    dir: PathBuf,
    ports: Vec<u16>,
    nodes: Vec<Child>,
    /// Redis's `appendfsync`: when a node's append-only file is synced.
    appendfsync: &'static str,
}

/// A port that is free, and whose cluster bus port (+10,000) is free too;
/// never one handed out before in this process (tests start clusters at
/// once, and a port is free again between this check and a node's bind).
fn free_port() -> u16 {
    static GIVEN: std::sync::Mutex<Vec<u16>> = std::sync::Mutex::new(Vec::new());
    let mut given = GIVEN.lock().unwrap();
    for _ in 0..100 {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let clash = given
            .iter()
            .any(|&g| g.abs_diff(port) == 10_000 || g == port);
        if port < 55_000 && !clash && TcpListener::bind(("127.0.0.1", port + 10_000)).is_ok() {
            given.push(port);
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

/// The `[cluster]` section of a crawl's config naming `nodes` and crawl
/// `name` (4 partitions, leases of 2 s), or nothing without nodes.
pub fn config_section(cluster: Option<(&[String], &str)>) -> String {
    let Some((nodes, name)) = cluster else {
        return String::new();
    };
    let nodes: Vec<String> = nodes.iter().map(|n| format!("\"{n}\"")).collect();
    format!(
        "[cluster]\nnodes = [{}]\nname = \"{name}\"\npartitions = 4\nlease_secs = 2\n",
        nodes.join(", ")
    )
}

impl Cluster {
    /// Starts `n` nodes (no replicas) and waits until the cluster serves.
    /// A node killed with `kill -9` may come back without writes from its
    /// last second (`appendfsync everysec`): for tests that do not kill
    /// nodes, and for benches.
    pub fn start(n: usize) -> Cluster {
        Cluster::start_with(n, "everysec")
    }

    /// Starts `n` nodes that lose nothing they acknowledged when killed
    /// (`appendfsync always`, the setting `docs/distributed.md` asks for
    /// where a killed node must change nothing): under `everysec`, Redis
    /// may reply before it writes while a sync is slow, and a killed node
    /// comes back without entries every worker already applied.
    pub fn start_durable(n: usize) -> Cluster {
        Cluster::start_with(n, "always")
    }

    fn start_with(n: usize, appendfsync: &'static str) -> Cluster {
        need("redis-server");
        need("redis-cli");
        static CLUSTERS: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "nearcrawl-redis-{}-{}",
            std::process::id(),
            CLUSTERS.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        let mut cluster = Cluster {
            dir,
            ports: Vec::new(),
            nodes: Vec::new(),
            appendfsync,
        };
        while cluster.ports.len() < n {
            let port = free_port();
            std::fs::create_dir_all(cluster.dir.join(port.to_string())).unwrap();
            let mut child = cluster.spawn(port);
            wait_until(
                || cli(port, &["ping"]).contains("PONG") || child.try_wait().unwrap().is_some(),
                "node answers",
            );
            // Another process took the port first: this node exited (and
            // the answer was the other's).
            if child.try_wait().unwrap().is_some() {
                continue;
            }
            cluster.ports.push(port);
            cluster.nodes.push(child);
        }
        let addrs: Vec<String> = cluster
            .ports
            .iter()
            .map(|p| format!("127.0.0.1:{p}"))
            .collect();
        let mut create = Command::new("redis-cli")
            .args(["--cluster", "create"])
            .args(&addrs)
            .args(["--cluster-replicas", "0", "--cluster-yes"])
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        // It waits for the nodes to join for as long as it takes: bounded
        // here, so a node that died fails the test instead of hanging it.
        let start = Instant::now();
        let created = loop {
            if let Some(status) = create.try_wait().unwrap() {
                break status;
            }
            if start.elapsed() > Duration::from_secs(60) {
                let _ = create.kill();
                panic!("redis-cli --cluster create did not finish in 60 s");
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        assert!(created.success(), "redis-cli --cluster create failed");
        for &port in &cluster.ports {
            wait_until(
                || cli(port, &["cluster", "info"]).contains("cluster_state:ok"),
                "cluster_state:ok",
            );
        }
        cluster
    }

    /// A node on `port`, its files (cluster config, append-only log) in
    /// its own directory, so a restarted node comes back with its data.
    fn spawn(&self, port: u16) -> Child {
        let node_dir = self.dir.join(port.to_string());
        Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--cluster-enabled", "yes", "--cluster-node-timeout", "2000"])
            .arg("--cluster-config-file")
            .arg(node_dir.join("nodes.conf"))
            .args(["--appendonly", "yes", "--appendfsync", self.appendfsync])
            .args(["--save", ""])
            .arg("--dir")
            .arg(&node_dir)
            .stdout(Stdio::null())
            .spawn()
            .expect("starts redis-server")
    }

    /// The node that holds `key` (by its hash slot).
    pub fn node_of(&self, key: &str) -> usize {
        let port = self.ports[0];
        let slot: u32 = cli(port, &["cluster", "keyslot", key])
            .trim()
            .parse()
            .unwrap();
        let nodes = cli(port, &["cluster", "nodes"]);
        for line in nodes.lines() {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let Some(addr) = fields.get(1) else { continue };
            let holds = fields.iter().skip(8).any(|range| {
                let (a, b) = range.split_once('-').unwrap_or((range, range));
                matches!((a.parse::<u32>(), b.parse::<u32>()), (Ok(a), Ok(b)) if a <= slot && slot <= b)
            });
            if holds {
                let port: u16 = addr.split([':', '@']).nth(1).unwrap().parse().unwrap();
                return self.ports.iter().position(|&p| p == port).unwrap();
            }
        }
        panic!("no node holds slot {slot}");
    }

    /// The length of the stream `key` on node `i` (0 if it cannot tell).
    pub fn log_len(&self, i: usize, key: &str) -> usize {
        cli(self.ports[i], &["xlen", key])
            .trim()
            .parse()
            .unwrap_or(0)
    }

    /// The string at `key` (`GET`), if there is one.
    pub fn get(&self, key: &str) -> Option<String> {
        let port = self.ports[self.node_of(key)];
        let v = cli(port, &["get", key]).trim().to_string();
        (!v.is_empty()).then_some(v)
    }

    /// Bytes Redis holds for `key` (`MEMORY USAGE`, every element counted).
    pub fn used_memory_of(&self, key: &str) -> u64 {
        let port = self.ports[self.node_of(key)];
        cli(port, &["memory", "usage", key, "samples", "0"])
            .trim()
            .parse()
            .unwrap_or(0)
    }

    /// Bytes Redis holds per kind of key over all nodes (`MEMORY USAGE` of
    /// every key, named by `kind`).
    pub fn memory_by_kind(
        &self,
        kind: impl Fn(&str) -> &'static str,
    ) -> std::collections::BTreeMap<&'static str, u64> {
        use std::io::Write;
        let mut bytes = std::collections::BTreeMap::new();
        for &port in &self.ports {
            let keys: Vec<String> = cli(port, &["--scan"]).lines().map(str::to_string).collect();
            let mut child = Command::new("redis-cli")
                .args(["-p", &port.to_string()])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .spawn()
                .unwrap();
            let mut stdin = child.stdin.take().unwrap();
            for k in &keys {
                writeln!(stdin, "MEMORY USAGE {k} SAMPLES 0").unwrap();
            }
            drop(stdin);
            let out = child.wait_with_output().unwrap();
            let sizes = String::from_utf8_lossy(&out.stdout);
            for (k, size) in keys.iter().zip(sizes.lines()) {
                *bytes.entry(kind(k)).or_default() += size.trim().parse::<u64>().unwrap_or(0);
            }
        }
        bytes
    }

    /// Kills node `i` as `kill -9` would.
    pub fn kill(&mut self, i: usize) {
        self.nodes[i].kill().unwrap();
        self.nodes[i].wait().unwrap();
    }

    /// Starts node `i` again and waits until the cluster serves.
    pub fn restart(&mut self, i: usize) {
        self.nodes[i] = self.spawn(self.ports[i]);
        for &port in &self.ports {
            wait_until(
                || cli(port, &["cluster", "info"]).contains("cluster_state:ok"),
                "cluster_state:ok after a restart",
            );
        }
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
