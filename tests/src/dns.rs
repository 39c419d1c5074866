//! A DNS server for tests: dnsmasq on 127.0.0.1, answering from a hosts
//! file (Debian's `dnsmasq-base`, which `.ci/run` installs).

use std::time::Duration;

/// dnsmasq on 127.0.0.1 answering for `*.shop.test` from a hosts file, and
/// NXDOMAIN for other `.test` names; every query logged. Killed on drop.
#[derive(Debug)]
pub struct Dnsmasq {
    child: std::process::Child,
    pub port: u16,
    log: std::path::PathBuf,
}

impl Dnsmasq {
    pub fn start(dir: &std::path::Path, names: &[(String, &str)]) -> Dnsmasq {
        std::fs::create_dir_all(dir).unwrap();
        let hosts = dir.join("hosts");
        let lines: String = names.iter().map(|(n, ip)| format!("{ip} {n}\n")).collect();
        std::fs::write(&hosts, lines).unwrap();
        let log = dir.join("dns.log");
        // A port free for UDP may be taken for TCP (dnsmasq wants both), or
        // taken between the check and dnsmasq's bind: then dnsmasq exits,
        // and another port is tried.
        for _ in 0..20 {
            let port = free_udp_and_tcp_port();
            let mut child = dnsmasq_command(port, &hosts, &log)
                .spawn()
                .expect("dnsmasq (apt-get install dnsmasq-base; .ci/run installs it)");
            // Ready once the port is taken.
            for _ in 0..100 {
                if child.try_wait().ok().flatten().is_some() {
                    break;
                }
                if std::net::UdpSocket::bind(("127.0.0.1", port)).is_err() {
                    return Dnsmasq { child, port, log };
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
        panic!("dnsmasq did not start on any of 20 ports");
    }

    /// A-record queries it answered for `name` (each lookup also asks
    /// for AAAA).
    pub fn queries_for(&self, name: &str) -> usize {
        let log = std::fs::read_to_string(&self.log).unwrap_or_default();
        log.lines()
            .filter(|l| l.contains("query[A]") && l.contains(&format!(" {name} ")))
            .count()
    }
}

fn free_udp_and_tcp_port() -> u16 {
    loop {
        let udp = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let port = udp.local_addr().unwrap().port();
        if std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
}

fn dnsmasq_command(
    port: u16,
    hosts: &std::path::Path,
    log: &std::path::Path,
) -> std::process::Command {
    let bin = ["/usr/sbin/dnsmasq", "/usr/bin/dnsmasq"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists())
        .unwrap_or("dnsmasq");
    let mut command = std::process::Command::new(bin);
    command
        .args([
            "--keep-in-foreground",
            "--conf-file=/dev/null",
            "--listen-address=127.0.0.1",
            "--bind-interfaces",
            "--no-resolv",
            "--no-hosts",
            "--local=/test/",
            "--user=root",
            "--pid-file=",
            "--log-queries",
            // As real answers: a TTL to cache them for.
            "--local-ttl=300",
        ])
        .arg(format!("--port={port}"))
        .arg(format!("--addn-hosts={}", hosts.display()))
        .arg(format!("--log-facility={}", log.display()));
    command
}

impl Drop for Dnsmasq {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
