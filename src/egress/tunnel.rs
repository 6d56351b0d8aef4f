//! The opaque tunnel a `CONNECT` to an allowed, non-secret host gets: bytes both ways, counted,
//! ended when both sides have closed or nothing moved for the idle timeout.
//!
//! The worker's first bytes are looked at once: when they are a TLS ClientHello whose server
//! name (SNI) is not the host the `CONNECT` named, the tunnel is closed and refused — a
//! front-door host on the list must not carry a connection to another site behind it. A
//! hello without a server name, or a protocol that is not TLS, passes.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::time::Instant;

use super::allow::Target;

/// The buffer of each direction.
const TUNNEL_BUFFER: usize = 128 * 1024;
/// The most of a TLS ClientHello read to find its server name (several records).
const MAX_HELLO: usize = 64 * 1024;

/// How a tunnel ended.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum TunnelEnd {
    /// Both sides closed, or one failed.
    Closed,
    /// Nothing moved for the idle timeout.
    Idle,
    /// The worker's hello named another server: why.
    Refused(String),
}

enum Stop {
    Refused(String),
    Io,
}

/// Time of the last byte moved, as milliseconds after `start`.
struct Activity {
    start: Instant,
    last: AtomicU64,
}

impl Activity {
    fn touch(&self) {
        let ms = self.start.elapsed().as_millis() as u64;
        self.last.store(ms, Ordering::Relaxed);
    }

    async fn idle_for(&self, idle: Duration) {
        loop {
            let last = Duration::from_millis(self.last.load(Ordering::Relaxed));
            let deadline = self.start + last + idle;
            if Instant::now() >= deadline {
                return;
            }
            tokio::time::sleep_until(deadline).await;
        }
    }
}

/// Relays between the worker's `client` and `upstream` until the tunnel ends.
pub(crate) async fn run<C, U>(
    client: C,
    upstream: U,
    target: &Target,
    hello_timeout: Duration,
    idle: Duration,
) -> TunnelEnd
where
    C: AsyncRead + AsyncWrite + Unpin,
    U: AsyncRead + AsyncWrite + Unpin,
{
    let (mut cr, mut cw) = tokio::io::split(client);
    let (mut ur, mut uw) = tokio::io::split(upstream);
    let activity = Activity {
        start: Instant::now(),
        last: AtomicU64::new(0),
    };
    let outbound = async {
        let mut buf = vec![0u8; TUNNEL_BUFFER];
        let n = first_bytes(&mut cr, &mut buf, target, hello_timeout).await?;
        if n == 0 {
            let _ = uw.shutdown().await;
            return Ok(());
        }
        activity.touch();
        uw.write_all(&buf[..n]).await.map_err(|_| Stop::Io)?;
        pump(&mut cr, &mut uw, &mut buf, &activity).await
    };
    let inbound = async {
        let mut buf = vec![0u8; TUNNEL_BUFFER];
        pump(&mut ur, &mut cw, &mut buf, &activity).await
    };
    tokio::select! {
        r = async { tokio::try_join!(outbound, inbound) } => match r {
            Ok(_) | Err(Stop::Io) => TunnelEnd::Closed,
            Err(Stop::Refused(why)) => TunnelEnd::Refused(why),
        },
        _ = activity.idle_for(idle) => TunnelEnd::Idle,
    }
}

/// Copies until `from` ends, then closes `to`'s write side.
async fn pump<R, W>(
    from: &mut R,
    to: &mut W,
    buf: &mut [u8],
    activity: &Activity,
) -> Result<(), Stop>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    loop {
        let n = from.read(buf).await.map_err(|_| Stop::Io)?;
        if n == 0 {
            let _ = to.shutdown().await;
            return Ok(());
        }
        activity.touch();
        to.write_all(&buf[..n]).await.map_err(|_| Stop::Io)?;
        activity.touch();
    }
}

/// Reads the worker's first bytes into `buf`: a whole ClientHello when they start one (its
/// server name checked against `target`), else whatever the first read brought.
async fn first_bytes<R: AsyncRead + Unpin>(
    from: &mut R,
    buf: &mut [u8],
    target: &Target,
    hello_timeout: Duration,
) -> Result<usize, Stop> {
    let mut n = from.read(buf).await.map_err(|_| Stop::Io)?;
    if n == 0 || buf[0] != 0x16 {
        return Ok(n);
    }
    let deadline = Instant::now() + hello_timeout;
    loop {
        match client_hello_sni(&buf[..n]) {
            ClientHello::Incomplete if n < MAX_HELLO.min(buf.len()) => {
                let more = tokio::time::timeout_at(deadline, from.read(&mut buf[n..]))
                    .await
                    .map_err(|_| {
                        Stop::Refused("the TLS ClientHello did not arrive in time".to_owned())
                    })?
                    .map_err(|_| Stop::Io)?;
                if more == 0 {
                    return Err(Stop::Io);
                }
                n += more;
            }
            ClientHello::Incomplete | ClientHello::Malformed => {
                return Err(Stop::Refused(
                    "the worker sent a TLS handshake the gateway could not read".to_owned(),
                ));
            }
            ClientHello::Other | ClientHello::Sni(None) => return Ok(n),
            ClientHello::Sni(Some(name)) => {
                return if sni_matches(&name, target) {
                    Ok(n)
                } else {
                    Err(Stop::Refused(format!(
                        "the TLS server name {name} is not {target}, the host the CONNECT named"
                    )))
                };
            }
        }
    }
}

pub(crate) fn sni_matches(sni: &str, target: &Target) -> bool {
    let sni = sni.strip_suffix('.').unwrap_or(sni);
    match target {
        Target::Name(name) => sni.eq_ignore_ascii_case(name),
        Target::Ip(_) => false,
    }
}

#[derive(Debug, PartialEq, Eq)]
pub(crate) enum ClientHello {
    Incomplete,
    /// TLS records, but not a ClientHello.
    Other,
    Malformed,
    /// The server name, when the hello has one. A name that is not printable ASCII is shown
    /// escaped.
    Sni(Option<String>),
}

/// Reads the server name out of a ClientHello spread over one or more TLS records.
pub(crate) fn client_hello_sni(data: &[u8]) -> ClientHello {
    // The handshake message, gathered from consecutive handshake records.
    let mut message = Vec::new();
    let mut rest = data;
    let needed = loop {
        if rest.len() < 5 {
            return ClientHello::Incomplete;
        }
        if rest[0] != 0x16 {
            return if message.is_empty() {
                ClientHello::Other
            } else {
                ClientHello::Malformed
            };
        }
        if rest[1] != 3 {
            return ClientHello::Malformed;
        }
        let len = usize::from(u16::from_be_bytes([rest[3], rest[4]]));
        if len == 0 || len > 16384 + 2048 {
            return ClientHello::Malformed;
        }
        if rest.len() < 5 + len {
            return ClientHello::Incomplete;
        }
        message.extend_from_slice(&rest[5..5 + len]);
        rest = &rest[5 + len..];
        if message.len() >= 4 {
            if message[0] != 1 {
                return ClientHello::Other;
            }
            let body = (usize::from(message[1]) << 16)
                | (usize::from(message[2]) << 8)
                | usize::from(message[3]);
            if message.len() >= 4 + body {
                break body;
            }
            if 4 + body > MAX_HELLO {
                return ClientHello::Malformed;
            }
        }
    };
    match parse_hello(&message[4..4 + needed]) {
        Some(sni) => ClientHello::Sni(sni),
        None => ClientHello::Malformed,
    }
}

/// `Some(None)`: no server name; `None`: malformed.
fn parse_hello(body: &[u8]) -> Option<Option<String>> {
    let mut r = Bytes(body);
    r.take(2 + 32)?; // legacy_version, random
    let sid = r.u8()?;
    r.take(sid.into())?;
    let suites = r.u16()?;
    r.take(suites.into())?;
    let compression = r.u8()?;
    r.take(compression.into())?;
    if r.0.is_empty() {
        return Some(None);
    }
    let ext_len = r.u16()?;
    let mut exts = Bytes(r.take(ext_len.into())?);
    let mut found = None;
    while !exts.0.is_empty() {
        let kind = exts.u16()?;
        let len = exts.u16()?;
        let data = exts.take(len.into())?;
        if kind != 0 {
            continue;
        }
        if found.is_some() {
            return None;
        }
        let mut list = Bytes(data);
        let list_len = list.u16()?;
        let mut names = Bytes(list.take(list_len.into())?);
        while !names.0.is_empty() {
            let name_type = names.u8()?;
            let len = names.u16()?;
            let name = names.take(len.into())?;
            if name_type == 0 && found.is_none() {
                found = Some(name.escape_ascii().to_string());
            }
        }
        found.as_ref()?;
    }
    Some(found)
}

struct Bytes<'a>(&'a [u8]);

impl<'a> Bytes<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.0.len() < n {
            return None;
        }
        let (head, tail) = self.0.split_at(n);
        self.0 = tail;
        Some(head)
    }

    fn u8(&mut self) -> Option<u8> {
        self.take(1).map(|b| b[0])
    }

    fn u16(&mut self) -> Option<u16> {
        self.take(2).map(|b| u16::from_be_bytes([b[0], b[1]]))
    }
}
