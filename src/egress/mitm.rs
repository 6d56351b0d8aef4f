//! A secret host's tunnel, ended at the gateway: the worker's TLS is answered with a leaf
//! certificate from the job's CA, each request is read, checked (its Host, the placeholders it
//! carries) and has the placeholder in the secret's header replaced by the real value, then
//! goes over a kept-alive TLS connection to the real host, verified against the system's roots
//! and the operator's.
//!
//! The real value is written only into the upstream request's head; a request that cannot be
//! sent (no trusted upstream, a refused request) never has it put anywhere.

use std::net::SocketAddr;

use rustls::pki_types::ServerName;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, ReadHalf, WriteHalf};
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;

use super::Shared;
use super::allow::Target;
use super::exchange::{self, ExchangeError, Outgoing, Timeouts, Upstream};
use super::http::{self, HeadError, Reader, RequestHead, Writer, split_authority};
use super::log::{Entry, Method, Outcome};
use super::plain::placeholder_in;
use super::{stream, tunnel};

/// What TLS reads from: rustls asks for 4 KiB a read, so a buffer below it turns a 64 KiB
/// transfer into one system call instead of sixteen.
type Buffered<S> = tokio::io::BufReader<S>;
const SOCKET_BUFFER: usize = 64 * 1024;

type TlsUpstream =
    Upstream<ReadHalf<TlsStream<Buffered<TcpStream>>>, WriteHalf<TlsStream<Buffered<TcpStream>>>>;

/// TLS to the real host over the first address that answers.
async fn connect_upstream(
    shared: &Shared,
    name: &str,
    port: u16,
    addrs: &[SocketAddr],
) -> Result<TlsUpstream, String> {
    let config = shared.upstream_tls.as_ref().map_err(Clone::clone)?;
    let (tcp, addr) = stream::connect(name, port, addrs, shared.connect_timeout)
        .await
        .map_err(|r| r.reason)?;
    let server_name = ServerName::try_from(name.to_owned())
        .map_err(|_| format!("{name} is not a name TLS can verify"))?;
    let connector = tokio_rustls::TlsConnector::from(config.clone());
    let tls = match tokio::time::timeout(
        shared.connect_timeout,
        connector.connect(server_name, Buffered::with_capacity(SOCKET_BUFFER, tcp)),
    )
    .await
    {
        Err(_) => {
            return Err(format!(
                "TLS with {name}:{port} ({addr}) did not complete in time"
            ));
        }
        Ok(Err(e)) => return Err(format!("TLS with {name}:{port} ({addr}) failed: {e}")),
        Ok(Ok(tls)) => tls,
    };
    let (r, w) = tokio::io::split(tls);
    Ok(Upstream {
        reader: Reader::new(r),
        writer: Writer::new(w),
        addr,
        reused: false,
    })
}

/// What the worker's request becomes, or why it is refused (status, reason).
fn prepare(
    head: &RequestHead,
    name: &str,
    port: u16,
    shared: &Shared,
    entry: &mut Entry,
) -> Result<Outgoing, (u16, String)> {
    if head.method == "CONNECT" {
        return Err((400, "a CONNECT inside a tunnel is not served".to_owned()));
    }
    let authority = if port == 443 {
        name.to_owned()
    } else {
        format!("{name}:{port}")
    };
    let origin = if head.target.starts_with('/') || head.target == "*" {
        head.target.as_str()
    } else {
        let rest = head.target.strip_prefix("https://").ok_or_else(|| {
            (
                400,
                format!("the request target {:?} is not a path", head.target),
            )
        })?;
        let split = rest.find(['/', '?']).unwrap_or(rest.len());
        let (auth, path) = rest.split_at(split);
        let same = split_authority(auth, Some(443))
            .ok()
            .and_then(|(h, p)| Target::parse(h).ok().map(|t| (t, p)))
            .is_some_and(|(t, p)| t.name() == Some(name) && p == port);
        if !same {
            return Err((403, format!("the request names another host than {name}")));
        }
        if path.is_empty() { "/" } else { path }
    };
    let hosts: Vec<&http::Header> = head.headers.iter().filter(|h| h.is("host")).collect();
    match hosts.as_slice() {
        [] if head.version == 1 => return Err((400, "the request has no Host header".to_owned())),
        [] => {}
        [one] => {
            let sent = String::from_utf8_lossy(&one.value)
                .trim()
                .to_ascii_lowercase();
            let ok = split_authority(&sent, Some(443))
                .ok()
                .and_then(|(h, p)| Target::parse(h).ok().map(|t| (t, p)))
                .is_some_and(|(t, p)| t.name() == Some(name) && p == port);
            if !ok {
                return Err((
                    403,
                    format!("the Host header names another host than {name}"),
                ));
            }
        }
        _ => return Err((400, "the request has more than one Host header".to_owned())),
    }
    let foreign = shared.secrets.iter().filter(|s| !s.rule.is_for(name));
    if let Some(secret) = placeholder_in(head, foreign) {
        return Err((
            403,
            format!(
                "the request carries the placeholder of {}, which is not for {name}",
                secret.rule.env
            ),
        ));
    }
    let framing =
        http::request_framing(head).map_err(|why| (400, format!("the request has {why}")))?;
    let mut problem = None;
    let mut injected = Vec::new();
    // Uncompressed answers, so that a value the host echoes can be seen and masked.
    let identity: &[(&str, &[u8])] = if head.headers.iter().any(|h| h.is("accept-encoding")) {
        &[]
    } else {
        &[("Accept-Encoding", b"identity")]
    };
    let out = exchange::outgoing_head(head, origin, &authority, framing, identity, |h| {
        if h.is("accept-encoding") {
            return Some(b"identity".to_vec());
        }
        for secret in shared.secrets.iter().filter(|s| s.rule.is_for(name)) {
            if !h.is(secret.rule.injection.header()) {
                continue;
            }
            let Some(value) = secret.inject(&h.value) else {
                continue;
            };
            if let Some(why) = secret.value_problem() {
                problem = Some(why);
                return None;
            }
            injected.push((secret.rule.env.clone(), secret.rule.injection.to_string()));
            return Some(value);
        }
        None
    });
    if let Some(why) = problem {
        return Err((502, why));
    }
    for (env, header) in injected {
        entry.injected(&env, header);
    }
    Ok(Outgoing {
        head: out,
        framing,
        method: head.method.clone(),
        client_version: head.version,
        client_close: http::wants_close(head.version, &head.headers),
        redact: shared
            .secrets
            .iter()
            .filter(|s| s.rule.is_for(name))
            .map(|s| s.value.as_bytes().to_vec())
            .collect(),
    })
}

/// Serves a `CONNECT` to the secret host `name`, already allowed to `addrs`.
pub(crate) async fn serve<C>(
    mut client: C,
    name: &str,
    port: u16,
    addrs: &[SocketAddr],
    entry: &mut Entry,
    shared: &Shared,
) where
    C: AsyncRead + AsyncWrite + Unpin + Send,
{
    let mut upstream = match connect_upstream(shared, name, port, addrs).await {
        Ok(up) => Some(up),
        Err(why) => {
            entry.fail(why.clone());
            let _ = client.write_all(&http::error_response(502, &why)).await;
            let _ = client.shutdown().await;
            return;
        }
    };
    entry.event.address = upstream.as_ref().map(|u| u.addr);
    if client
        .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
        .await
        .is_err()
    {
        return;
    }
    let target = Target::Name(name.to_owned());
    let acceptor = tokio_rustls::LazyConfigAcceptor::new(
        rustls::server::Acceptor::default(),
        Buffered::with_capacity(SOCKET_BUFFER, client),
    );
    let start = match tokio::time::timeout(shared.head_timeout, acceptor).await {
        Ok(Ok(start)) => start,
        Ok(Err(e)) => {
            entry.fail(format!("the worker's TLS hello could not be read ({e})"));
            return;
        }
        Err(_) => {
            entry.fail("the worker sent no TLS hello in time");
            return;
        }
    };
    if let Some(sni) = start.client_hello().server_name()
        && !tunnel::sni_matches(sni, &target)
    {
        entry.refuse(format!(
            "the TLS server name {} is not {name}, the host the CONNECT named",
            sni.escape_default()
        ));
        return;
    }
    let config = match shared.ca.server_config(name) {
        Ok(config) => config,
        Err(e) => {
            entry.fail(e.to_string());
            return;
        }
    };
    let tls = match tokio::time::timeout(shared.head_timeout, start.into_stream(config)).await {
        Ok(Ok(tls)) => tls,
        Ok(Err(e)) => {
            entry.fail(format!(
                "the worker's TLS handshake failed ({e}); does the sandbox trust the job's CA?"
            ));
            return;
        }
        Err(_) => {
            entry.fail("the worker's TLS handshake did not complete in time");
            return;
        }
    };
    let (r, w) = tokio::io::split(tls);
    let mut reader = Reader::new(r);
    let mut writer = Writer::new(w);
    let timeouts = Timeouts {
        response: shared.idle_timeout,
        head: shared.head_timeout,
    };
    let mut wait = shared.head_timeout;
    loop {
        let head = match reader.request_head(wait, shared.head_timeout).await {
            Ok(Some(head)) => head,
            Ok(None) | Err(HeadError::Idle | HeadError::Io(_) | HeadError::Truncated) => break,
            Err(e) => {
                let status = if matches!(e, HeadError::TimedOut) {
                    408
                } else {
                    400
                };
                let why = e.reason();
                report(
                    shared,
                    String::new(),
                    name,
                    port,
                    Outcome::Refused(why.clone()),
                );
                http::answer_error(&mut writer, status, &why).await;
                break;
            }
        };
        wait = shared.idle_timeout;
        let req = match prepare(&head, name, port, shared, entry) {
            Ok(req) => req,
            Err((status, why)) => {
                let outcome = if status == 502 {
                    Outcome::Failed(why.clone())
                } else {
                    Outcome::Refused(why.clone())
                };
                report(shared, head.method.clone(), name, port, outcome);
                http::answer_error(&mut writer, status, &why).await;
                break;
            }
        };
        if !send(
            &mut reader,
            &mut writer,
            &mut upstream,
            &req,
            &timeouts,
            shared,
            name,
            port,
            addrs,
            entry,
        )
        .await
        {
            break;
        }
    }
    let _ = writer.shutdown().await;
    http::drain(&mut reader).await;
}

fn report(shared: &Shared, method: String, name: &str, port: u16, outcome: Outcome) {
    Entry::report(
        &shared.ledger,
        Method::Http(method),
        name.to_owned(),
        port,
        outcome,
    );
}

/// Sends one prepared request (on a new upstream connection when the kept one went stale);
/// `false` when the worker's connection is to close.
#[allow(clippy::too_many_arguments)]
async fn send<CR, CW>(
    reader: &mut Reader<CR>,
    writer: &mut Writer<CW>,
    upstream: &mut Option<TlsUpstream>,
    req: &Outgoing,
    timeouts: &Timeouts,
    shared: &Shared,
    name: &str,
    port: u16,
    addrs: &[SocketAddr],
    entry: &mut Entry,
) -> bool
where
    CR: AsyncRead + Unpin,
    CW: AsyncWrite + Unpin,
{
    for attempt in 0..2 {
        let up = match upstream {
            Some(up) => up,
            None => match connect_upstream(shared, name, port, addrs).await {
                Ok(up) => upstream.insert(up),
                Err(why) => {
                    report(
                        shared,
                        req.method.clone(),
                        name,
                        port,
                        Outcome::Failed(why.clone()),
                    );
                    http::answer_error(writer, 502, &why).await;
                    return false;
                }
            },
        };
        entry.event.address = Some(up.addr);
        match exchange::exchange(reader, writer, up, req, timeouts).await {
            Ok(done) => {
                entry.event.requests += 1;
                if !done.keep_upstream {
                    *upstream = None;
                }
                return done.keep_client;
            }
            Err(ExchangeError::Stale) if attempt == 0 => *upstream = None,
            Err(e @ (ExchangeError::Stale | ExchangeError::Upstream(_))) => {
                let why = match e {
                    ExchangeError::Upstream(why) => why,
                    _ => "the upstream closed the connection without answering".to_owned(),
                };
                report(
                    shared,
                    req.method.clone(),
                    name,
                    port,
                    Outcome::Failed(why.clone()),
                );
                http::answer_error(writer, 502, &why).await;
                return false;
            }
            Err(ExchangeError::BadBody(why)) => {
                let why = format!("the request body is malformed ({why})");
                report(
                    shared,
                    req.method.clone(),
                    name,
                    port,
                    Outcome::Refused(why.clone()),
                );
                http::answer_error(writer, 400, &why).await;
                return false;
            }
            Err(ExchangeError::Broken(why)) => {
                tracing::debug!("egress: {name}:{port} broke off: {why}");
                entry.event.requests += 1;
                return false;
            }
        }
    }
    false
}
