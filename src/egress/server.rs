//! One worker connection from its first byte: requests read one after another, a `CONNECT`
//! turning the connection into a tunnel (opaque, or ended at the gateway for a secret host),
//! an absolute-form `http://` request forwarded, anything else answered 400.

use std::sync::Arc;

use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};

use super::Shared;
use super::allow::Target;
use super::http::{self, HeadError, Reader, RequestHead, Writer, split_authority};
use super::log::{Counters, Entry, Method, Outcome};
use super::stream::{self, Counted, Rewind};
use super::{mitm, plain, tunnel};

/// Serves one accepted connection until it ends.
pub(crate) async fn serve<S>(stream: S, shared: &Shared)
where
    S: AsyncRead + AsyncWrite + Unpin + Send,
{
    let counters = Arc::new(Counters::default());
    let (r, w) = tokio::io::split(Counted::new(stream, counters.clone()));
    let mut reader = Reader::new(r);
    let mut writer = Writer::new(w);
    let mut session: Option<plain::Session> = None;
    let mut wait = shared.head_timeout;
    loop {
        let head = match reader.request_head(wait, shared.head_timeout).await {
            Ok(Some(head)) => head,
            Ok(None) | Err(HeadError::Idle | HeadError::Io(_) | HeadError::Truncated) => return,
            Err(e) => {
                let status = if matches!(e, HeadError::TimedOut) {
                    408
                } else {
                    400
                };
                let why = e.reason();
                Entry::report(
                    &shared.ledger,
                    Method::Http(String::new()),
                    String::new(),
                    0,
                    Outcome::Refused(why.clone()),
                );
                http::answer_error(&mut writer, status, &why).await;
                http::drain(&mut reader).await;
                return;
            }
        };
        wait = shared.idle_timeout;
        if head.method == "CONNECT" {
            // The plain-HTTP upstream this connection used, if any, is done with.
            drop(session.take());
            let rest = reader.take_buffered();
            let stream = reader.into_inner().unsplit(writer.into_inner());
            connect(Rewind::new(rest, stream), head, shared, &counters).await;
            return;
        }
        if !plain::forward(
            head,
            &mut reader,
            &mut writer,
            &mut session,
            shared,
            &counters,
        )
        .await
        {
            // The upstream's line is written now, not after the linger.
            drop(session.take());
            let _ = writer.shutdown().await;
            http::drain(&mut reader).await;
            return;
        }
    }
}

async fn write_raw<C: AsyncWrite + Unpin>(client: &mut C, bytes: &[u8], close: bool) -> bool {
    let ok = client.write_all(bytes).await.is_ok() && client.flush().await.is_ok();
    if close {
        let _ = client.shutdown().await;
    }
    ok
}

/// A `CONNECT`: decided, then tunnelled or ended at the gateway for a secret host.
async fn connect<C>(mut client: C, head: RequestHead, shared: &Shared, counters: &Arc<Counters>)
where
    C: AsyncRead + AsyncWrite + Unpin + Send,
{
    let parsed = split_authority(&head.target, None)
        .and_then(|(host, port)| Target::parse(host).map(|target| (target, port)));
    let (target, port) = match parsed {
        Ok(parsed) => parsed,
        Err(why) => {
            Entry::report(
                &shared.ledger,
                Method::Connect,
                String::new(),
                0,
                Outcome::Refused(why.clone()),
            );
            write_raw(&mut client, &http::error_response(400, &why), true).await;
            return;
        }
    };
    let mut entry = Entry::new(
        &shared.ledger,
        counters,
        Method::Connect,
        target.to_string(),
        port,
    );
    let addrs = match shared.policy.decide(&target, port).await {
        Ok(addrs) => addrs,
        Err(refusal) => {
            if refusal.status == 403 {
                entry.refuse(refusal.reason.clone());
            } else {
                entry.fail(refusal.reason.clone());
            }
            write_raw(
                &mut client,
                &http::error_response(refusal.status, &refusal.reason),
                true,
            )
            .await;
            return;
        }
    };
    if let Some(name) = target.name()
        && shared.secrets.iter().any(|s| s.rule.is_for(name))
    {
        let name = name.to_owned();
        mitm::serve(client, &name, port, &addrs, &mut entry, shared).await;
        return;
    }
    let host = target.to_string();
    let (upstream, addr) = match stream::connect(&host, port, &addrs, shared.connect_timeout).await
    {
        Ok(connected) => connected,
        Err(refusal) => {
            entry.fail(refusal.reason.clone());
            write_raw(
                &mut client,
                &http::error_response(502, &refusal.reason),
                true,
            )
            .await;
            return;
        }
    };
    entry.event.address = Some(addr);
    if !write_raw(
        &mut client,
        b"HTTP/1.1 200 Connection established\r\n\r\n",
        false,
    )
    .await
    {
        return;
    }
    match tunnel::run(
        client,
        upstream,
        &target,
        shared.head_timeout,
        shared.idle_timeout,
    )
    .await
    {
        tunnel::TunnelEnd::Refused(why) => entry.refuse(why),
        tunnel::TunnelEnd::Closed | tunnel::TunnelEnd::Idle => {}
    }
}
