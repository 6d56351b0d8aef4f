//! The allow list: what the operator wrote (`sandbox.allow`), read into [`AllowEntry`]s, and
//! the [`Policy`] that decides, for a host and port a worker asks for, which addresses the
//! gateway may connect to.
//!
//! A name is matched first (an exact name or a `*.suffix`, with the port), then resolved by the
//! gateway itself; every address it resolves to is judged again, so a listed name that points
//! at loopback, a private network or the cloud metadata service reaches it only if an IP or
//! CIDR entry covers that address explicitly. A literal IP asked for matches IP and CIDR
//! entries only. This module resolves names and nothing else: it never connects.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::str::FromStr;
use std::time::Duration;

/// How long a name may take to resolve before the request is answered 502.
const RESOLVE_TIMEOUT: Duration = Duration::from_secs(10);

/// One allow-list entry: a host pattern and the one port it is allowed on.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct AllowEntry {
    host: HostPattern,
    port: u16,
}

/// What an entry's host part matches.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum HostPattern {
    /// Exactly this DNS name (lower-cased, no trailing dot).
    Name(String),
    /// `*.suffix`: any name strictly below `suffix` (held without the `*.`), not `suffix` itself.
    Below(String),
    /// Exactly this address (an IPv4-mapped IPv6 address is held as its IPv4 form).
    Ip(IpAddr),
    /// A network: `addr` with every bit past `prefix` zero.
    Net { addr: IpAddr, prefix: u8 },
}

impl AllowEntry {
    pub fn host(&self) -> &HostPattern {
        &self.host
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// Whether this entry lets `name` (normalized: lower case, no trailing dot) through on
    /// `port`. IP and CIDR entries never match a name.
    fn matches_name(&self, name: &str, port: u16) -> bool {
        port == self.port && self.host.matches_name(name)
    }

    /// Whether this is an IP or CIDR entry covering `ip` on `port`.
    fn covers(&self, ip: IpAddr, port: u16) -> bool {
        port == self.port && self.host.covers(ip)
    }
}

impl HostPattern {
    fn matches_name(&self, name: &str) -> bool {
        match self {
            HostPattern::Name(n) => n == name,
            HostPattern::Below(suffix) => name
                .strip_suffix(suffix.as_str())
                .and_then(|head| head.strip_suffix('.'))
                .is_some_and(|head| !head.is_empty()),
            HostPattern::Ip(_) | HostPattern::Net { .. } => false,
        }
    }

    fn covers(&self, ip: IpAddr) -> bool {
        let ip = canonical(ip);
        match *self {
            HostPattern::Ip(listed) => listed == ip,
            HostPattern::Net { addr, prefix } => in_network(ip, addr, prefix),
            HostPattern::Name(_) | HostPattern::Below(_) => false,
        }
    }
}

fn in_network(ip: IpAddr, net: IpAddr, prefix: u8) -> bool {
    match (ip, net) {
        (IpAddr::V4(ip), IpAddr::V4(net)) => {
            let mask = u32::MAX.checked_shl(32 - u32::from(prefix)).unwrap_or(0);
            u32::from(ip) & mask == u32::from(net) & mask
        }
        (IpAddr::V6(ip), IpAddr::V6(net)) => {
            let mask = u128::MAX.checked_shl(128 - u32::from(prefix)).unwrap_or(0);
            u128::from(ip) & mask == u128::from(net) & mask
        }
        _ => false,
    }
}

/// An IPv4-mapped IPv6 address (`::ffff:10.0.0.1`) is the IPv4 address it carries: the kernel
/// connects to that, so it is judged and listed as that.
pub fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6(v6),
        },
        v4 => v4,
    }
}

impl fmt::Display for AllowEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.host {
            HostPattern::Name(n) => write!(f, "{n}:{}", self.port),
            HostPattern::Below(s) => write!(f, "*.{s}:{}", self.port),
            HostPattern::Ip(IpAddr::V4(ip)) => write!(f, "{ip}:{}", self.port),
            HostPattern::Ip(IpAddr::V6(ip)) => write!(f, "[{ip}]:{}", self.port),
            HostPattern::Net {
                addr: IpAddr::V4(ip),
                prefix,
            } => write!(f, "{ip}/{prefix}:{}", self.port),
            HostPattern::Net {
                addr: IpAddr::V6(ip),
                prefix,
            } => write!(f, "[{ip}]/{prefix}:{}", self.port),
        }
    }
}

impl FromStr for AllowEntry {
    type Err = String;

    fn from_str(s: &str) -> Result<AllowEntry, String> {
        let text = s.trim();
        if text.is_empty() {
            return Err(
                "allow entry \"\" is empty: write HOST:PORT, e.g. pypi.example.com:443".to_owned(),
            );
        }
        if !text.is_ascii() {
            return Err(format!(
                "allow entry {s:?} is not ASCII: write an internationalized name in its \
                 xn-- form"
            ));
        }
        let (host_text, port_text) = split_host_port(s, text)?;
        let Some(port_text) = port_text else {
            return Err(format!(
                "allow entry {s:?} has no port: write it as {host_text}:443"
            ));
        };
        let port = parse_port(port_text).map_err(|why| format!("allow entry {s:?} {why}"))?;
        let host = parse_pattern(host_text).map_err(|why| format!("allow entry {s:?} {why}"))?;
        Ok(AllowEntry { host, port })
    }
}

impl<'de> serde::Deserialize<'de> for AllowEntry {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<AllowEntry, D::Error> {
        // Parsed inside the visitor, so that toml puts the entry's own line and column on the
        // error rather than the whole list's.
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = AllowEntry;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an allow entry such as \"pypi.example.com:443\"")
            }

            fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<AllowEntry, E> {
                text.parse().map_err(E::custom)
            }
        }
        d.deserialize_str(Visitor)
    }
}

/// Splits `HOST[:PORT]` (HOST possibly `[v6]`, `[v6]/N` or `a.b.c.d/N`) into its parts.
fn split_host_port<'a>(
    original: &str,
    text: &'a str,
) -> Result<(&'a str, Option<&'a str>), String> {
    if text.starts_with('[') {
        let Some(close) = text.find(']') else {
            return Err(format!(
                "allow entry {original:?} has a '[' without its ']'"
            ));
        };
        let after = &text[close + 1..];
        // `[v6]/N:PORT`: the prefix belongs to the host part.
        let prefix_len = match after.strip_prefix('/') {
            Some(rest) => 1 + rest.find(':').unwrap_or(rest.len()),
            None => 0,
        };
        let host = &text[..close + 1 + prefix_len];
        let rest = &after[prefix_len..];
        return match rest.strip_prefix(':') {
            Some(port) => Ok((host, Some(port))),
            None if rest.is_empty() => Ok((host, None)),
            None => Err(format!(
                "allow entry {original:?} has {rest:?} after the address: write [ADDRESS]:PORT"
            )),
        };
    }
    if text.matches(':').count() > 1 {
        return Err(format!(
            "allow entry {original:?} looks like a bare IPv6 address: write it in brackets, \
             e.g. [fd00::1]:443"
        ));
    }
    Ok(match text.rsplit_once(':') {
        Some((host, port)) => (host, Some(port)),
        None => (text, None),
    })
}

fn parse_port(text: &str) -> Result<u16, String> {
    if text == "*" {
        return Err("has a wildcard port: list each port the host is allowed on".to_owned());
    }
    if text.is_empty() {
        return Err("has an empty port (1-65535)".to_owned());
    }
    match text.parse::<u16>() {
        Ok(port) if port > 0 && text.bytes().all(|b| b.is_ascii_digit()) => Ok(port),
        _ => Err(format!("has an invalid port {text:?} (1-65535)")),
    }
}

fn parse_pattern(text: &str) -> Result<HostPattern, String> {
    if let Some((addr, prefix)) = text.split_once('/') {
        return parse_network(addr, prefix);
    }
    if let Some(inner) = text.strip_prefix('[') {
        let inner = inner.strip_suffix(']').unwrap_or(inner);
        return match inner.parse::<Ipv6Addr>() {
            Ok(ip) => Ok(HostPattern::Ip(canonical(IpAddr::V6(ip)))),
            Err(_) => Err(format!("has an invalid IPv6 address [{inner}]")),
        };
    }
    if let Ok(ip) = text.parse::<Ipv4Addr>() {
        return Ok(HostPattern::Ip(IpAddr::V4(ip)));
    }
    if let Some(suffix) = text.strip_prefix("*.") {
        if suffix.contains('*') {
            return Err("has a '*' other than one leading \"*.\"".to_owned());
        }
        return normalize_name(suffix).map(HostPattern::Below);
    }
    if text.contains('*') {
        return Err("has a '*' other than one leading \"*.\" (write *.example.com)".to_owned());
    }
    normalize_name(text).map(HostPattern::Name)
}

fn parse_network(addr: &str, prefix: &str) -> Result<HostPattern, String> {
    let ip = match addr.strip_prefix('[') {
        Some(inner) => match inner.strip_suffix(']').map(str::parse::<Ipv6Addr>) {
            Some(Ok(ip)) => IpAddr::V6(ip),
            _ => return Err(format!("has an invalid IPv6 network address {addr}")),
        },
        None => match addr.parse::<Ipv4Addr>() {
            Ok(ip) => IpAddr::V4(ip),
            Err(_) if addr.contains(':') => {
                return Err(
                    "looks like a bare IPv6 network: write it as [fd00::]/8:PORT".to_owned(),
                );
            }
            Err(_) => return Err(format!("has an invalid network address {addr:?}")),
        },
    };
    let max = if ip.is_ipv4() { 32 } else { 128 };
    let prefix: u8 = match prefix.parse::<u8>() {
        Ok(p) if p <= max && prefix.bytes().all(|b| b.is_ascii_digit()) => p,
        _ => return Err(format!("has an invalid prefix length /{prefix} (0-{max})")),
    };
    let zeroed = zero_host_bits(ip, prefix);
    if zeroed != ip {
        let shown = match zeroed {
            IpAddr::V4(v4) => format!("{v4}/{prefix}"),
            IpAddr::V6(v6) => format!("[{v6}]/{prefix}"),
        };
        return Err(format!(
            "has bits set past the /{prefix} prefix: write the network as {shown}"
        ));
    }
    Ok(HostPattern::Net { addr: ip, prefix })
}

fn zero_host_bits(ip: IpAddr, prefix: u8) -> IpAddr {
    match ip {
        IpAddr::V4(v4) => {
            let mask = u32::MAX.checked_shl(32 - u32::from(prefix)).unwrap_or(0);
            IpAddr::V4(Ipv4Addr::from(u32::from(v4) & mask))
        }
        IpAddr::V6(v6) => {
            let mask = u128::MAX.checked_shl(128 - u32::from(prefix)).unwrap_or(0);
            IpAddr::V6(Ipv6Addr::from(u128::from(v6) & mask))
        }
    }
}

/// A DNS name as the gateway compares it: lower case, no trailing dot, labels of letters,
/// digits, `-` and `_`. A name whose last label is all digits (`127.1`, `2130706433`) is
/// refused: resolvers read such names as addresses.
pub(crate) fn normalize_name(text: &str) -> Result<String, String> {
    let name = text.strip_suffix('.').unwrap_or(text).to_ascii_lowercase();
    if name.is_empty() {
        return Err("has an empty host name".to_owned());
    }
    if !name.is_ascii() {
        return Err("is not ASCII: write an internationalized name in its xn-- form".to_owned());
    }
    if name.len() > 253 {
        return Err("has a host name longer than 253 characters".to_owned());
    }
    for label in name.split('.') {
        let ok = !label.is_empty()
            && label.len() <= 63
            && label
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
            && !label.starts_with('-')
            && !label.ends_with('-');
        if !ok {
            return Err(format!("has an invalid host name {name:?}"));
        }
    }
    // inet_aton(3), which resolvers fall back on, reads `127.1`, `0x7f.1` and `2130706433`
    // as addresses.
    let numeric = |label: &str| {
        label.bytes().all(|b| b.is_ascii_digit())
            || label
                .strip_prefix("0x")
                .is_some_and(|hex| hex.bytes().all(|b| b.is_ascii_hexdigit()))
    };
    let labels: Vec<&str> = name.split('.').collect();
    if labels
        .last()
        .is_some_and(|last| last.bytes().all(|b| b.is_ascii_digit()))
        || (labels.len() <= 4 && labels.iter().all(|l| numeric(l)))
    {
        return Err(format!(
            "has {name:?}, which is neither an IP address nor a host name"
        ));
    }
    Ok(name)
}

/// The host a worker asked for: a name or a literal address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    Name(String),
    Ip(IpAddr),
}

impl Target {
    /// Reads the host part of a request's authority (`example.com`, `10.0.0.1`, `[::1]`).
    pub fn parse(host: &str) -> Result<Target, String> {
        if let Some(inner) = host.strip_prefix('[') {
            return match inner.strip_suffix(']').map(str::parse::<Ipv6Addr>) {
                Some(Ok(ip)) => Ok(Target::Ip(canonical(IpAddr::V6(ip)))),
                _ => Err(format!("invalid IPv6 address {host:?}")),
            };
        }
        if let Ok(ip) = host.parse::<Ipv4Addr>() {
            return Ok(Target::Ip(IpAddr::V4(ip)));
        }
        normalize_name(host)
            .map(Target::Name)
            .map_err(|_| format!("{host:?} is neither an IP address nor a valid host name"))
    }

    /// The name, if this is one.
    pub fn name(&self) -> Option<&str> {
        match self {
            Target::Name(n) => Some(n),
            Target::Ip(_) => None,
        }
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Target::Name(n) => f.write_str(n),
            Target::Ip(IpAddr::V4(ip)) => write!(f, "{ip}"),
            Target::Ip(IpAddr::V6(ip)) => write!(f, "[{ip}]"),
        }
    }
}

/// Why the gateway will not connect, and the HTTP status the worker is answered with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// 403 for the policy, 502 for a name that does not resolve.
    pub status: u16,
    /// One line, naming hosts and ranges only.
    pub reason: String,
}

impl Refusal {
    pub(crate) fn policy(reason: String) -> Refusal {
        Refusal {
            status: 403,
            reason,
        }
    }

    pub(crate) fn unreachable(reason: String) -> Refusal {
        Refusal {
            status: 502,
            reason,
        }
    }
}

/// What a worker may reach: the operator's allow list.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Policy {
    entries: Vec<AllowEntry>,
}

impl From<Vec<AllowEntry>> for Policy {
    fn from(entries: Vec<AllowEntry>) -> Policy {
        Policy { entries }
    }
}

impl Policy {
    pub fn new(entries: Vec<AllowEntry>) -> Policy {
        Policy { entries }
    }

    pub fn entries(&self) -> &[AllowEntry] {
        &self.entries
    }

    /// Whether a name entry (exact or `*.suffix`) lets `host` through on `port`. `host` is
    /// compared case-insensitively, a trailing dot ignored.
    pub fn allows_name(&self, host: &str, port: u16) -> bool {
        let name = host.strip_suffix('.').unwrap_or(host).to_ascii_lowercase();
        self.entries.iter().any(|e| e.matches_name(&name, port))
    }

    /// Whether an IP or CIDR entry covers `ip` on `port`.
    pub fn allows_ip(&self, ip: IpAddr, port: u16) -> bool {
        self.entries.iter().any(|e| e.covers(ip, port))
    }

    /// Whether the gateway may connect to `ip:port` once a name entry has let the name
    /// through: a public address may; an address in a special range only when an IP or CIDR
    /// entry covers it. The error names the range.
    pub fn allows_resolved(&self, ip: IpAddr, port: u16) -> Result<(), &'static str> {
        match special_range(ip) {
            Some(kind) if !self.allows_ip(ip, port) => Err(kind),
            _ => Ok(()),
        }
    }

    /// The decision for a literal address, or for a name before it is resolved: `Err` when the
    /// allow list does not let it through at all.
    pub fn check_target(&self, target: &Target, port: u16) -> Result<(), Refusal> {
        match target {
            Target::Ip(ip) => {
                if self.allows_ip(*ip, port) {
                    Ok(())
                } else if let Some(kind) = special_range(*ip) {
                    Err(Refusal::policy(format!("{target} is {kind}")))
                } else {
                    Err(Refusal::policy(format!(
                        "{target}:{port} is not on the allow list"
                    )))
                }
            }
            Target::Name(name) => {
                if self.allows_name(name, port) {
                    return Ok(());
                }
                let mut ports: Vec<u16> = self
                    .entries
                    .iter()
                    .filter(|e| e.host.matches_name(name))
                    .map(|e| e.port)
                    .collect();
                ports.sort_unstable();
                ports.dedup();
                let listed = match ports.as_slice() {
                    [] => String::new(),
                    [one] => format!(" (listed for port {one} only)"),
                    many => format!(
                        " (listed for ports {} only)",
                        many.iter()
                            .map(u16::to_string)
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                };
                Err(Refusal::policy(format!(
                    "{name}:{port} is not on the allow list{listed}"
                )))
            }
        }
    }

    /// Which of the addresses `name` resolved to the gateway may connect to, in order; `Err`
    /// naming every address and its range when none.
    pub fn filter_resolved(
        &self,
        name: &str,
        port: u16,
        resolved: &[IpAddr],
    ) -> Result<Vec<SocketAddr>, Refusal> {
        let mut allowed = Vec::new();
        let mut refused: Vec<(IpAddr, &'static str)> = Vec::new();
        for &ip in resolved {
            let ip = canonical(ip);
            if allowed.iter().any(|a: &SocketAddr| a.ip() == ip)
                || refused.iter().any(|r| r.0 == ip)
            {
                continue;
            }
            match self.allows_resolved(ip, port) {
                Ok(()) => allowed.push(SocketAddr::new(ip, port)),
                Err(kind) => refused.push((ip, kind)),
            }
        }
        if !allowed.is_empty() {
            return Ok(allowed);
        }
        Err(Refusal::policy(match refused.as_slice() {
            [] => format!("{name} resolves to no address"),
            [(ip, kind)] => format!("{name} resolves only to {ip}, {kind} not listed"),
            many => format!(
                "{name} resolves only to addresses not listed: {}",
                many.iter()
                    .map(|(ip, kind)| format!("{ip} ({kind})"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }))
    }

    /// The whole decision for `target:port`: the addresses to try, in order.
    pub async fn decide(&self, target: &Target, port: u16) -> Result<Vec<SocketAddr>, Refusal> {
        self.check_target(target, port)?;
        let name = match target {
            Target::Ip(ip) => return Ok(vec![SocketAddr::new(*ip, port)]),
            Target::Name(name) => name,
        };
        let resolved = match tokio::time::timeout(
            RESOLVE_TIMEOUT,
            tokio::net::lookup_host((name.as_str(), port)),
        )
        .await
        {
            Err(_) => {
                return Err(Refusal::unreachable(format!(
                    "resolving {name} took longer than {}s",
                    RESOLVE_TIMEOUT.as_secs()
                )));
            }
            Ok(Err(e)) => {
                return Err(Refusal::unreachable(format!(
                    "{name} does not resolve ({e})"
                )));
            }
            Ok(Ok(addrs)) => addrs.map(|a| a.ip()).collect::<Vec<_>>(),
        };
        self.filter_resolved(name, port, &resolved)
    }
}

/// The special range `ip` falls in, as a phrase (`"a loopback address"`), or `None` for a
/// public address. IPv4 addresses carried in IPv6 (mapped, compatible, NAT64, 6to4) are judged
/// as the IPv4 address they carry.
pub fn special_range(ip: IpAddr) -> Option<&'static str> {
    match canonical(ip) {
        IpAddr::V4(v4) => special_v4(v4),
        IpAddr::V6(v6) => special_v6(v6),
    }
}

fn special_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, c, _] = ip.octets();
    Some(match (a, b, c) {
        _ if ip == Ipv4Addr::new(169, 254, 169, 254) => "the cloud metadata address",
        _ if ip == Ipv4Addr::BROADCAST => "the broadcast address",
        _ if ip.is_unspecified() => "the unspecified address",
        (0, _, _) => "a \"this network\" address (0.0.0.0/8)",
        (127, _, _) => "a loopback address",
        (10, _, _) => "a private address (10.0.0.0/8)",
        (172, 16..=31, _) => "a private address (172.16.0.0/12)",
        (192, 168, _) => "a private address (192.168.0.0/16)",
        (100, 64..=127, _) => "a shared address (100.64.0.0/10, CGNAT)",
        (169, 254, _) => "a link-local address",
        (192, 0, 0) => "an IETF protocol address (192.0.0.0/24)",
        (192, 0, 2) | (198, 51, 100) | (203, 0, 113) => "a documentation address",
        (198, 18..=19, _) => "a benchmarking address (198.18.0.0/15)",
        (224..=239, _, _) => "a multicast address",
        (240..=255, _, _) => "a reserved address (240.0.0.0/4)",
        _ => return None,
    })
}

fn special_v6(ip: Ipv6Addr) -> Option<&'static str> {
    let seg = ip.segments();
    let bits = u128::from(ip);
    // IPv4 carried in IPv6: compatible (::a.b.c.d), NAT64 (64:ff9b::/96), 6to4 (2002::/16).
    let carried = if (bits >> 32 == 0 && bits > 1) || seg[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        Some(Ipv4Addr::from(bits as u32))
    } else if seg[0] == 0x2002 {
        Some(Ipv4Addr::from((bits >> 80) as u32))
    } else {
        None
    };
    if let Some(v4) = carried {
        return special_v4(v4);
    }
    Some(match seg[0] {
        _ if ip == Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254) => {
            "the cloud metadata address"
        }
        _ if ip.is_unspecified() => "the unspecified address",
        _ if ip.is_loopback() => "a loopback address",
        0xfe80..=0xfebf => "a link-local address",
        0xfec0..=0xfeff => "a site-local address (fec0::/10)",
        0xfc00..=0xfdff => "a unique local address (fc00::/7)",
        0xff00..=0xffff => "a multicast address",
        0x2001 if seg[1] == 0xdb8 => "a documentation address",
        0x0100 if seg[1..4] == [0, 0, 0] => "a discard address (100::/64)",
        _ => return None,
    })
}

#[cfg(test)]
#[path = "allow_tests.rs"]
mod tests;
