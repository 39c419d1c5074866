//! Keeping a public page from turning the crawler on the machine's own
//! network: addresses that are not public are refused, on every resolved
//! address of every request and redirect hop.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use hickory_resolver::TokioResolver;
use hickory_resolver::config::{NameServerConfig, ResolverConfig, ResolverOpts};
use hickory_resolver::net::runtime::TokioRuntimeProvider;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};

use crate::config::FetchConfig;

/// True for loopback, private (RFC 1918), link-local (cloud metadata lives
/// at 169.254.169.254), CGNAT, unique-local IPv6, unspecified, multicast,
/// broadcast and documentation addresses.
pub fn is_non_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4_non_public(v4),
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return v4_non_public(v4);
            }
            let seg0 = v6.segments()[0];
            v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (seg0 & 0xfe00) == 0xfc00 // unique local fc00::/7
                || (seg0 & 0xffc0) == 0xfe80 // link local fe80::/10
                || (seg0 == 0x2001 && v6.segments()[1] == 0x0db8) // documentation
                || is_nat64_non_public(v6)
        }
    }
}

fn v4_non_public(v4: Ipv4Addr) -> bool {
    let o = v4.octets();
    v4.is_loopback()
        || v4.is_private()
        || v4.is_link_local()
        || v4.is_unspecified()
        || v4.is_broadcast()
        || v4.is_multicast()
        || v4.is_documentation()
        || o[0] == 0
        || (o[0] == 100 && (o[1] & 0xc0) == 64) // CGNAT 100.64/10
        || (o[0] == 192 && o[1] == 0 && o[2] == 0) // IETF 192.0.0/24
        || (o[0] == 198 && (o[1] & 0xfe) == 18) // benchmarking 198.18/15
        || o[0] >= 240
}

/// 64:ff9b::/96 embeds an IPv4 address.
fn is_nat64_non_public(v6: Ipv6Addr) -> bool {
    let s = v6.segments();
    if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        let v4 = Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8);
        return v4_non_public(v4);
    }
    false
}

/// The crawl's DNS: an async resolver (hickory) with a cache that keeps
/// answers for their TTL and failures for a while, a time limit per query
/// and a bound on lookups in flight, so thousands of new hosts neither
/// flood the name servers nor tie up threads as `getaddrinfo` would.
pub(crate) struct Dns {
    resolver: TokioResolver,
    permits: tokio::sync::Semaphore,
}

impl std::fmt::Debug for Dns {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dns").finish_non_exhaustive()
    }
}

impl Dns {
    pub(crate) fn new(config: &FetchConfig) -> Result<Dns, String> {
        let mut opts = ResolverOpts::default();
        opts.timeout = config.dns_timeout;
        opts.attempts = 2;
        opts.cache_size = config.dns_cache_size;
        opts.positive_max_ttl = Some(Duration::from_secs(3600));
        opts.negative_min_ttl = Some(Duration::from_secs(10));
        opts.negative_max_ttl = Some(Duration::from_secs(300));
        let builder = if config.dns_servers.is_empty() {
            TokioResolver::builder_tokio().map_err(|e| format!("system DNS configuration: {e}"))?
        } else {
            let servers = config
                .dns_servers
                .iter()
                .map(|addr| {
                    let mut server = NameServerConfig::udp_and_tcp(addr.ip());
                    for c in &mut server.connections {
                        c.port = addr.port();
                    }
                    server
                })
                .collect();
            TokioResolver::builder_with_config(
                ResolverConfig::from_name_servers(servers),
                TokioRuntimeProvider::default(),
            )
        };
        let resolver = builder
            .with_options(opts)
            .build()
            .map_err(|e| format!("DNS resolver: {e}"))?;
        Ok(Dns {
            resolver,
            permits: tokio::sync::Semaphore::new(config.dns_concurrency.max(1)),
        })
    }

    /// The addresses of `host` (from the cache when it can).
    pub(crate) async fn lookup(&self, host: &str) -> Result<Vec<IpAddr>, String> {
        let _permit = self.permits.acquire().await.expect("semaphore open");
        let lookup = self
            .resolver
            .lookup_ip(host)
            .await
            .map_err(|e| format!("{host}: {e}"))?;
        Ok(lookup.iter().collect())
    }
}

/// A resolver that drops non-public addresses (unless allowed), and fails
/// a lookup that leaves none, with a message naming the refusal.
#[derive(Debug, Clone)]
pub(crate) struct GuardedResolver {
    pub allow_private: bool,
    pub dns: Arc<Dns>,
}

/// Marker text in the lookup error, so the client can report the refusal
/// as [`FetchError::BlockedAddress`](crate::FetchError::BlockedAddress).
pub(crate) const BLOCKED_MARK: &str = "nearcrawl: non-public address refused";

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let allow = self.allow_private;
        let dns = self.dns.clone();
        Box::pin(async move {
            let host = name.as_str().to_string();
            let ips = dns.lookup(&host).await?;
            let addrs: Vec<SocketAddr> = ips.into_iter().map(|ip| SocketAddr::new(ip, 0)).collect();
            let kept: Vec<SocketAddr> = addrs
                .iter()
                .copied()
                .filter(|a| allow || !is_non_public(a.ip()))
                .collect();
            if kept.is_empty() && !addrs.is_empty() {
                return Err(format!("{BLOCKED_MARK}: {host} -> {}", addrs[0].ip()).into());
            }
            let it: Addrs = Box::new(kept.into_iter());
            Ok(it)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_addresses() {
        for a in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "255.255.255.255",
            "::1",
            "fc00::1",
            "fd12::1",
            "fe80::1",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
            "64:ff9b::a9fe:a9fe",
            "224.0.0.1",
            "198.18.0.1",
        ] {
            assert!(is_non_public(a.parse().unwrap()), "{a}");
        }
        for a in [
            "8.8.8.8",
            "93.184.216.34",
            "2606:4700::6810:85e5",
            "100.128.0.1",
            "172.32.0.1",
        ] {
            assert!(!is_non_public(a.parse().unwrap()), "{a}");
        }
    }
}
