//! Where a webhook may be delivered: the URL rules and the address checks that keep deliveries
//! away from the bank's own network (SSRF).
//!
//! Every address a webhook's host resolves to must be public: no loopback, private,
//! link-local (cloud metadata), shared, multicast, documentation or reserved range, in IPv4,
//! IPv6 or the IPv6 forms that embed an IPv4 address. That holds in the sandbox too, which
//! anyone who signs up can reach, and whose delivery log shows the first KiB of each answer.
//! The check runs for every delivery on the addresses the connection then uses ([`resolve`]
//! hands them to the HTTP client, which connects to nothing else), so a DNS name re-pointed
//! after saving (rebinding) is refused at delivery. Redirects are never followed. Production
//! also wants `https://`; the sandbox allows `http://`. Local development (`kobo demo`, or
//! `kobo serve --allow-loopback-webhooks`, sandbox only) allows loopback addresses, and only
//! those, for a receiver on the developer's machine.
//!
//! A business's `ip_whitelist` (addresses or CIDR ranges) further restricts the addresses,
//! in both environments.

use std::future::Future;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::pin::Pin;
use std::sync::Arc;

use ipnet::IpNet;
use url::Url;

/// The longest URL accepted (the spec's `maxLength`).
pub const URL_LENGTH_MAX: usize = 2048;

/// What a destination check needs to know.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Policy {
    /// Production: `https://` only.
    pub https_only: bool,
    /// Local development: loopback addresses are allowed besides public ones.
    pub loopback: bool,
    /// Empty: any address (that the rules above allow).
    pub whitelist: Vec<IpNet>,
}

impl Policy {
    /// The policy of a server in `environment`: production wants `https://` and never allows
    /// loopback, whatever `loopback_allowed` says.
    pub fn of(production: bool, loopback_allowed: bool, whitelist: Vec<IpNet>) -> Policy {
        Policy {
            https_only: production,
            loopback: loopback_allowed && !production,
            whitelist,
        }
    }
}

/// Parses `ip_whitelist` entries: an IP address or a CIDR range each.
pub fn parse_whitelist(entries: &[String]) -> Result<Vec<IpNet>, String> {
    entries
        .iter()
        .map(|entry| {
            let entry = entry.trim();
            entry
                .parse::<IpNet>()
                .or_else(|_| entry.parse::<IpAddr>().map(IpNet::from))
                .map_err(|_| {
                    format!("`ip_whitelist`: `{entry}` is not an IP address or a CIDR range")
                })
        })
        .collect()
}

/// Checks the form of `url` under `policy` (scheme, host, no credentials) and returns it parsed.
/// Addresses are checked by [`resolve`].
pub fn check_url(url: &str, policy: &Policy) -> Result<Url, String> {
    if url.len() > URL_LENGTH_MAX {
        return Err(format!("`url` is longer than {URL_LENGTH_MAX} characters"));
    }
    let parsed = Url::parse(url).map_err(|error| format!("`url` is not a URL: {error}"))?;
    match parsed.scheme() {
        "https" => {}
        "http" if !policy.https_only => {}
        "http" => return Err("`url` must be https:// in production".into()),
        other => return Err(format!("`url` must be https://, not {other}://")),
    }
    if parsed.host().is_none() {
        return Err("`url` has no host".into());
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err("`url` must not carry a user name or password".into());
    }
    if parsed.fragment().is_some() {
        return Err("`url` must not have a #fragment".into());
    }
    Ok(parsed)
}

/// Why `ip` is not a public address, or `None` when it is.
pub fn non_public(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => non_public_v4(v4),
        IpAddr::V6(v6) => non_public_v6(v6),
    }
}

fn non_public_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, c, _] = ip.octets();
    let reason = match (a, b, c) {
        (0, _, _) => "an unspecified (0.0.0.0/8) address",
        (10, _, _) => "a private address",
        (100, 64..=127, _) => "a shared (carrier-grade NAT) address",
        (127, _, _) => "a loopback address",
        (169, 254, _) => "a link-local address (cloud metadata lives there)",
        (172, 16..=31, _) => "a private address",
        (192, 0, 0) => "an IETF protocol address",
        (192, 0, 2) | (198, 51, 100) | (203, 0, 113) => "a documentation address",
        (192, 88, 99) => "a 6to4 relay address",
        (192, 168, _) => "a private address",
        (198, 18..=19, _) => "a benchmarking address",
        (224..=239, _, _) => "a multicast address",
        (240..=255, _, _) => "a reserved or broadcast address",
        _ => return None,
    };
    Some(reason)
}

fn non_public_v6(ip: Ipv6Addr) -> Option<&'static str> {
    let segments = ip.segments();
    // IPv4-mapped (::ffff:a.b.c.d) and NAT64 (64:ff9b::a.b.c.d) reach the embedded address.
    if let Some(v4) = ip.to_ipv4_mapped() {
        return non_public_v4(v4);
    }
    if segments[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        let v4 = Ipv4Addr::from(((segments[6] as u32) << 16) | segments[7] as u32);
        return non_public_v4(v4);
    }
    if ip.is_unspecified() {
        return Some("an unspecified address");
    }
    if ip.is_loopback() {
        return Some("a loopback address");
    }
    let reason = match segments[0] {
        // ::/96, the deprecated IPv4-compatible form, and the rest of ::/8.
        0x0000 => "a reserved address",
        0x0100 if segments[1..4] == [0, 0, 0] => "a discard-only address",
        0x2001 if segments[1] == 0 => "a Teredo address",
        0x2001 if segments[1] == 0x0db8 => "a documentation address",
        0x2002 => "a 6to4 address",
        0xfc00..=0xfdff => "a unique local (private) address",
        0xfe80..=0xfebf => "a link-local address",
        0xfec0..=0xfeff => "a site-local address",
        0xff00..=0xffff => "a multicast address",
        _ => return None,
    };
    Some(reason)
}

/// A loopback address (127.0.0.0/8, `::1`, or 127.x.y.z mapped into IPv6).
fn is_loopback(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.is_loopback(),
        IpAddr::V6(v6) => {
            v6.is_loopback() || v6.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
        }
    }
}

/// Turns a host name and port into addresses; the system resolver in production, anything in
/// tests.
pub trait Resolver: Send + Sync + 'static {
    fn lookup(
        &self,
        host: &str,
        port: u16,
    ) -> Pin<Box<dyn Future<Output = std::io::Result<Vec<SocketAddr>>> + Send + '_>>;
}

/// The operating system's resolver (`getaddrinfo`, through tokio).
pub struct SystemResolver;

impl Resolver for SystemResolver {
    fn lookup(
        &self,
        host: &str,
        port: u16,
    ) -> Pin<Box<dyn Future<Output = std::io::Result<Vec<SocketAddr>>> + Send + '_>> {
        let host = host.to_owned();
        Box::pin(async move { Ok(tokio::net::lookup_host((host, port)).await?.collect()) })
    }
}

/// A shared resolver.
pub type SharedResolver = Arc<dyn Resolver>;

/// The addresses a delivery to `url` may connect to: every address the host resolves to, each
/// allowed by `policy`; an error naming the first that is not. One refused address refuses the
/// URL: a host that resolves both inside and outside is not trusted with either.
pub async fn resolve(
    url: &Url,
    policy: &Policy,
    resolver: &dyn Resolver,
) -> Result<Vec<SocketAddr>, String> {
    let port = url
        .port_or_known_default()
        .ok_or_else(|| "`url` has no port".to_string())?;
    let addresses = match url.host() {
        Some(url::Host::Ipv4(ip)) => vec![SocketAddr::new(IpAddr::V4(ip), port)],
        Some(url::Host::Ipv6(ip)) => vec![SocketAddr::new(IpAddr::V6(ip), port)],
        Some(url::Host::Domain(name)) => {
            let found = resolver
                .lookup(name, port)
                .await
                .map_err(|error| format!("`{name}` does not resolve: {error}"))?;
            if found.is_empty() {
                return Err(format!("`{name}` resolves to no address"));
            }
            found
        }
        None => return Err("`url` has no host".into()),
    };
    for address in &addresses {
        let ip = address.ip();
        if let Some(reason) = non_public(ip).filter(|_| !(policy.loopback && is_loopback(ip))) {
            return Err(format!(
                "the webhook host resolves to {ip}, {reason}: deliveries go to public addresses only"
            ));
        }
        if !policy.whitelist.is_empty() && !policy.whitelist.iter().any(|net| net.contains(&ip)) {
            return Err(format!(
                "the webhook host resolves to {ip}, which is outside the configuration's ip_whitelist"
            ));
        }
    }
    Ok(addresses)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strict() -> Policy {
        Policy::of(true, false, Vec::new())
    }

    fn sandbox(loopback: bool) -> Policy {
        Policy::of(false, loopback, Vec::new())
    }

    struct Fixed(Vec<IpAddr>);

    impl Resolver for Fixed {
        fn lookup(
            &self,
            _host: &str,
            port: u16,
        ) -> Pin<Box<dyn Future<Output = std::io::Result<Vec<SocketAddr>>> + Send + '_>> {
            let found = self.0.iter().map(|ip| SocketAddr::new(*ip, port)).collect();
            Box::pin(async move { Ok(found) })
        }
    }

    async fn verdict(url: &str, policy: &Policy, resolves_to: &[&str]) -> Result<(), String> {
        let parsed = check_url(url, policy)?;
        let resolver = Fixed(resolves_to.iter().map(|ip| ip.parse().unwrap()).collect());
        resolve(&parsed, policy, &resolver).await.map(|_| ())
    }

    #[tokio::test]
    async fn production_refuses_every_non_public_form() {
        let refused = [
            "https://127.0.0.1/",
            "https://127.1.2.3:8443/",
            "https://2130706433/",
            "https://0x7f.0.0.1/",
            "https://0.0.0.0/",
            "https://10.1.2.3/",
            "https://172.16.0.1/",
            "https://172.31.255.255/",
            "https://192.168.1.1/",
            "https://169.254.169.254/latest/meta-data/",
            "https://100.64.0.1/",
            "https://224.0.0.1/",
            "https://255.255.255.255/",
            "https://198.18.0.1/",
            "https://[::1]/",
            "https://[::]/",
            "https://[::ffff:127.0.0.1]/",
            "https://[::ffff:a9fe:a9fe]/",
            "https://[::ffff:10.0.0.1]/",
            "https://[64:ff9b::7f00:1]/",
            "https://[::127.0.0.1]/",
            "https://[fd00:ec2::254]/",
            "https://[fc00::1]/",
            "https://[fe80::1]/",
            "https://[ff02::1]/",
            "https://[2001:db8::1]/",
        ];
        for url in refused {
            let verdict = verdict(url, &strict(), &[]).await;
            assert!(verdict.is_err(), "{url} was allowed");
        }
        for url in ["https://8.8.8.8/hook", "https://[2606:4700:4700::1111]/"] {
            assert_eq!(verdict(url, &strict(), &[]).await, Ok(()), "{url}");
        }
    }

    #[tokio::test]
    async fn production_checks_what_names_resolve_to() {
        let policy = strict();
        let url = "https://hooks.example.ng/kobo";
        assert_eq!(verdict(url, &policy, &["102.89.34.17"]).await, Ok(()));
        for inside in [
            "127.0.0.1",
            "10.0.0.7",
            "169.254.169.254",
            "::1",
            "::ffff:192.168.0.1",
        ] {
            let refused = verdict(url, &policy, &[inside]).await.unwrap_err();
            assert!(refused.contains(inside), "{refused}");
        }
        // One private address among public ones refuses the host.
        assert!(verdict(url, &policy, &["102.89.34.17", "10.0.0.7"])
            .await
            .is_err());
    }

    #[tokio::test]
    async fn production_wants_https_and_no_credentials() {
        let policy = strict();
        assert!(verdict("http://8.8.8.8/", &policy, &[])
            .await
            .unwrap_err()
            .contains("https"));
        assert!(verdict("ftp://8.8.8.8/", &policy, &[]).await.is_err());
        assert!(verdict("https://user:pw@8.8.8.8/", &policy, &[])
            .await
            .is_err());
        assert!(verdict("not a url", &policy, &[]).await.is_err());
    }

    #[tokio::test]
    async fn the_sandbox_refuses_what_production_refuses_but_allows_http() {
        for url in [
            "http://127.0.0.1:9000/",
            "http://169.254.169.254/latest/meta-data/",
            "http://10.0.0.1/",
            "http://[::ffff:127.0.0.1]:9000/metrics",
            "http://[::1]:5432/",
        ] {
            assert!(verdict(url, &sandbox(false), &[]).await.is_err(), "{url}");
        }
        let refused = verdict("http://localhost:5432/", &sandbox(false), &["127.0.0.1"]).await;
        assert!(refused.unwrap_err().contains("loopback"));
        assert_eq!(
            verdict("http://8.8.8.8/hook", &sandbox(false), &[]).await,
            Ok(())
        );
    }

    #[tokio::test]
    async fn local_development_allows_loopback_and_nothing_else() {
        let local = sandbox(true);
        for url in [
            "http://127.0.0.1:9000/",
            "http://[::1]:9000/",
            "http://[::ffff:127.0.0.1]:9000/",
        ] {
            assert_eq!(verdict(url, &local, &[]).await, Ok(()), "{url}");
        }
        assert_eq!(
            verdict("http://localhost:9000/", &local, &["127.0.0.1"]).await,
            Ok(())
        );
        for url in [
            "http://169.254.169.254/",
            "http://10.0.0.1/",
            "http://192.168.0.1/",
            "http://[fe80::1]/",
            "http://[fd00::1]/",
        ] {
            assert!(verdict(url, &local, &[]).await.is_err(), "{url}");
        }
        // Production never allows loopback.
        let production = Policy::of(true, true, Vec::new());
        assert!(verdict("https://127.0.0.1/", &production, &[])
            .await
            .is_err());
    }

    #[tokio::test]
    async fn the_whitelist_pins_the_addresses() {
        let whitelist = parse_whitelist(&["102.89.34.17".into(), "41.58.0.0/16".into()]);
        let policy = Policy::of(true, false, whitelist.unwrap());
        let url = "https://hooks.example.ng/";
        assert_eq!(verdict(url, &policy, &["102.89.34.17"]).await, Ok(()));
        assert_eq!(verdict(url, &policy, &["41.58.7.9"]).await, Ok(()));
        let refused = verdict(url, &policy, &["102.89.34.18"]).await.unwrap_err();
        assert!(refused.contains("ip_whitelist"), "{refused}");
        assert!(parse_whitelist(&["not-an-ip".into()]).is_err());
        assert!(parse_whitelist(&["10.0.0.0/33".into()]).is_err());
        assert!(parse_whitelist(&["2001:db8::/32".into()]).is_ok());
    }
}
