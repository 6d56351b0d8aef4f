//! Plain-HTTP proxying: an absolute-form `GET http://host/…` decided like a `CONNECT`, sent on
//! in origin form without hop-by-hop or `Proxy-*` headers, its upstream kept alive for the
//! worker's next request to the same host (each upstream one log line). A request carrying
//! any secret's placeholder is refused: a secret never goes out in plain text.

use std::sync::Arc;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};

use super::Shared;
use super::allow::Target;
use super::exchange::{self, ExchangeError, Outgoing, Timeouts, Upstream};
use super::http::{self, Reader, RequestHead, Writer, split_authority};
use super::log::{Counters, Entry, Method, Outcome};
use super::stream;

/// The worker connection's current plain-HTTP upstream.
pub(crate) struct Session {
    target: Target,
    port: u16,
    addrs: Vec<std::net::SocketAddr>,
    upstream: Option<Upstream<OwnedReadHalf, OwnedWriteHalf>>,
    entry: Entry,
}

/// Where an absolute-form target points.
struct Absolute<'a> {
    target: Target,
    port: u16,
    authority: &'a str,
    /// The path and query, in origin form (`/` when the URL has no path).
    origin: std::borrow::Cow<'a, str>,
}

fn parse_absolute(target: &str) -> Result<Absolute<'_>, (u16, String)> {
    let bad = |why: String| (400, why);
    let scheme_end = target.find("://").ok_or_else(|| {
        bad("this is a proxy: send absolute-form requests (GET http://host/path) or CONNECT".into())
    })?;
    let scheme = &target[..scheme_end];
    if scheme.eq_ignore_ascii_case("https") {
        return Err(bad(
            "an https:// URL cannot be proxied in plain text: use CONNECT".to_owned(),
        ));
    }
    if !scheme.eq_ignore_ascii_case("http") {
        return Err(bad(format!(
            "the scheme {scheme:?} is not proxied, only http"
        )));
    }
    let rest = &target[scheme_end + 3..];
    let split = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, origin) = rest.split_at(split);
    if authority.contains('@') {
        return Err(bad("a URL with user information is not proxied".to_owned()));
    }
    let (host, port) = split_authority(authority, Some(80)).map_err(bad)?;
    let target = Target::parse(host).map_err(bad)?;
    let origin = match origin.as_bytes().first() {
        None => "/".into(),
        Some(b'?') => format!("/{origin}").into(),
        Some(_) => origin.into(),
    };
    Ok(Absolute {
        target,
        port,
        authority,
        origin,
    })
}

/// The first secret whose placeholder `head` carries, anywhere.
pub(crate) fn placeholder_in<'s>(
    head: &RequestHead,
    secrets: impl IntoIterator<Item = &'s super::Secret>,
) -> Option<&'s super::Secret> {
    secrets.into_iter().find(|s| {
        s.found_in(head.target.as_bytes())
            || head
                .headers
                .iter()
                .any(|h| s.found_in(&h.value) || s.found_in(h.name.as_bytes()))
    })
}

/// Forwards one request; `false` when the worker's connection is to close.
pub(crate) async fn forward<CR, CW>(
    head: RequestHead,
    client_r: &mut Reader<CR>,
    client_w: &mut Writer<CW>,
    session: &mut Option<Session>,
    shared: &Shared,
    counters: &Arc<Counters>,
) -> bool
where
    CR: AsyncRead + Unpin,
    CW: AsyncWrite + Unpin,
{
    let method = Method::Http(head.method.clone());
    let abs = match parse_absolute(&head.target) {
        Ok(abs) => abs,
        Err((status, why)) => {
            refuse(shared, method, String::new(), 0, client_w, status, &why).await;
            return false;
        }
    };
    let host = abs.target.to_string();
    if let Some(secret) = placeholder_in(&head, &shared.secrets) {
        let why = format!(
            "the request carries the placeholder of {} in plain HTTP; it is only sent over \
             TLS to {}",
            secret.rule.env,
            secret.rule.hosts.join(", ")
        );
        refuse(shared, method, host, abs.port, client_w, 403, &why).await;
        return false;
    }
    let framing = match http::request_framing(&head) {
        Ok(framing) => framing,
        Err(why) => {
            let why = format!("the request has {why}");
            refuse(shared, method, host, abs.port, client_w, 400, &why).await;
            return false;
        }
    };
    let same = session
        .as_ref()
        .is_some_and(|s| s.target == abs.target && s.port == abs.port);
    if !same {
        // The previous upstream's line is written as it is dropped.
        *session = None;
        let addrs = match shared.policy.decide(&abs.target, abs.port).await {
            Ok(addrs) => addrs,
            Err(refusal) => {
                let outcome = if refusal.status == 403 {
                    Outcome::Refused(refusal.reason.clone())
                } else {
                    Outcome::Failed(refusal.reason.clone())
                };
                Entry::report(&shared.ledger, method, host, abs.port, outcome);
                http::answer_error(client_w, refusal.status, &refusal.reason).await;
                return false;
            }
        };
        *session = Some(Session {
            target: abs.target.clone(),
            port: abs.port,
            addrs,
            upstream: None,
            entry: Entry::new(&shared.ledger, counters, method, host.clone(), abs.port),
        });
    }
    let Some(s) = session.as_mut() else {
        return false;
    };
    let req = Outgoing {
        head: exchange::outgoing_head(&head, &abs.origin, abs.authority, framing, &[], |_| None),
        framing,
        method: head.method.clone(),
        client_version: head.version,
        client_close: http::wants_close(head.version, &head.headers),
        redact: Vec::new(),
    };
    let timeouts = Timeouts {
        response: shared.idle_timeout,
        head: shared.head_timeout,
    };
    for attempt in 0..2 {
        let up = match s.upstream.as_mut() {
            Some(up) => up,
            None => {
                match stream::connect(&host, abs.port, &s.addrs, shared.connect_timeout).await {
                    Ok((tcp, addr)) => {
                        s.entry.event.address = Some(addr);
                        let (r, w) = tcp.into_split();
                        s.upstream.insert(Upstream {
                            reader: Reader::new(r),
                            writer: Writer::new(w),
                            addr,
                            reused: false,
                        })
                    }
                    Err(refusal) => {
                        if s.entry.event.requests == 0 {
                            s.entry.fail(refusal.reason.clone());
                        }
                        http::answer_error(client_w, 502, &refusal.reason).await;
                        return false;
                    }
                }
            }
        };
        match exchange::exchange(client_r, client_w, up, &req, &timeouts).await {
            Ok(done) => {
                s.entry.event.requests += 1;
                if !done.keep_upstream {
                    s.upstream = None;
                }
                return done.keep_client;
            }
            Err(ExchangeError::Stale) if attempt == 0 => s.upstream = None,
            Err(ExchangeError::Stale) => {
                let why = "the upstream closed the connection without answering";
                s.entry.fail(why);
                http::answer_error(client_w, 502, why).await;
                return false;
            }
            Err(ExchangeError::Upstream(why)) => {
                if s.entry.event.requests == 0 {
                    s.entry.fail(why.clone());
                }
                http::answer_error(client_w, 502, &why).await;
                return false;
            }
            Err(ExchangeError::BadBody(why)) => {
                let why = format!("the request body is malformed ({why})");
                s.entry.event.requests += 1;
                Entry::report(
                    &shared.ledger,
                    Method::Http(head.method.clone()),
                    host,
                    abs.port,
                    Outcome::Refused(why.clone()),
                );
                http::answer_error(client_w, 400, &why).await;
                return false;
            }
            Err(ExchangeError::Broken(why)) => {
                tracing::debug!("egress: {host}:{} broke off: {why}", abs.port);
                s.entry.event.requests += 1;
                return false;
            }
        }
    }
    false
}

async fn refuse<W: AsyncWrite + Unpin>(
    shared: &Shared,
    method: Method,
    host: String,
    port: u16,
    client_w: &mut Writer<W>,
    status: u16,
    why: &str,
) {
    Entry::report(
        &shared.ledger,
        method,
        host,
        port,
        Outcome::Refused(why.to_owned()),
    );
    http::answer_error(client_w, status, why).await;
}
