//! The receiver's connections: accepted under a cap, each given deadlines, so that clients that
//! open connections and send nothing — or a byte a second — cannot keep the bot from
//! acknowledging real deliveries.
//!
//! - At most `max_connections` are open at once (and never more than the descriptor limit
//!   leaves room for). When a connection arrives at the cap, the oldest connection that is not
//!   in a request (still waiting for its head, or idle between requests) is closed to make room;
//!   when every one is in a request, the newcomer is closed at once. Clients that hold
//!   connections without a word cannot crowd out a forge, whose request follows its connection
//!   at once.
//! - A request's head must arrive within `head_timeout` (hyper starts that clock whenever the
//!   connection waits for a head, so it bounds a kept-alive connection's wait for its next
//!   request too); a connection not in a request may not stay silent for `idle_timeout`; a body
//!   must arrive whole within `body_timeout` (the webhook handler answers 408 and closes it).
//! - Accept errors (`EMFILE` among them) are logged at most once a second and the loop goes on
//!   after a short pause.

use std::collections::VecDeque;
use std::future::Future;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::TcpListener;
use tokio::sync::{Notify, Semaphore};

use crate::metrics::Metrics;

/// The descriptors kept back from the connection cap: the store, the logs, the sandboxes and
/// the forges' clients need some too.
const RESERVED_DESCRIPTORS: usize = 128;

/// How long the accept loop pauses after an accept error, so a full descriptor table does not
/// become a busy loop.
const ACCEPT_PAUSE: Duration = Duration::from_millis(20);

/// How long a shutdown waits for the requests in flight.
const DRAIN: Duration = Duration::from_secs(10);

/// The deadlines and the cap of the receiver's connections.
#[derive(Clone, Copy, Debug)]
pub struct ConnLimits {
    pub head_timeout: Duration,
    pub body_timeout: Duration,
    pub idle_timeout: Duration,
    pub max_connections: usize,
}

/// Raises the soft descriptor limit towards `wanted`, within the hard limit (the usual soft
/// default, 1,024, is far below what a receiver needs; raising it further than needed would
/// hand every child process a table it may walk), logs it, and returns the limit in force.
pub fn raise_descriptor_limit(wanted: u64) -> u64 {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `limit` is a valid rlimit for getrlimit to fill.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return 1024;
    }
    let target = wanted.min(limit.rlim_max);
    if limit.rlim_cur < target {
        let raised = libc::rlimit {
            rlim_cur: target,
            rlim_max: limit.rlim_max,
        };
        // SAFETY: `raised` is a valid rlimit; raising the soft limit within the hard one needs
        // no privilege.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 {
            tracing::info!(
                from = limit.rlim_cur,
                to = target,
                hard = limit.rlim_max,
                "raised the open-file limit"
            );
            return target;
        }
    }
    limit.rlim_cur
}

/// The connection cap in force for `configured` connections: the open-file limit raised for
/// them (and some room besides), and the cap lowered, said in the log, to what the limit in
/// force leaves room for.
pub fn connection_cap_for(configured: usize) -> usize {
    let wanted = (configured as u64).saturating_add(2 * RESERVED_DESCRIPTORS as u64);
    let descriptors = raise_descriptor_limit(wanted);
    let cap = connection_cap(configured, descriptors);
    if cap < configured {
        tracing::info!(
            connections = cap,
            descriptors,
            "server.max_connections lowered to what the open-file limit leaves room for"
        );
    }
    cap
}

/// The connection cap in force: the configured one, within what `descriptors` leaves room for.
fn connection_cap(configured: usize, descriptors: u64) -> usize {
    let room = usize::try_from(descriptors)
        .unwrap_or(usize::MAX)
        .saturating_sub(RESERVED_DESCRIPTORS)
        .max(1);
    configured.clamp(1, room)
}

/// Serves `app` on `listener` until `shutdown` resolves, then stops accepting and lets the
/// requests in flight finish (for at most [`DRAIN`]).
pub async fn serve(
    listener: TcpListener,
    app: Router,
    limits: ConnLimits,
    metrics: Arc<Metrics>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.head_timeout)
        .keep_alive(true);
    let slots = Arc::new(Semaphore::new(limits.max_connections));
    // A connection holds its slot for as long as it is open.
    let held = Arc::downgrade(&slots);
    metrics.gauge_source("forgeward_connections_open", move || {
        held.upgrade().map_or(0.0, |slots| {
            limits
                .max_connections
                .saturating_sub(slots.available_permits()) as f64
        })
    });
    let floor = Floor {
        app,
        builder,
        limits,
        metrics,
        slots,
        open: Arc::new(Open::default()),
        graceful: GracefulShutdown::new(),
    };
    let mut last_warned: Option<Instant> = None;
    tokio::pin!(shutdown);
    loop {
        let accepted = tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => accepted,
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            Err(err) => {
                // Once a second at most: a descriptor table kept full would flood the log.
                if last_warned.is_none_or(|at| at.elapsed() >= Duration::from_secs(1)) {
                    last_warned = Some(Instant::now());
                    tracing::warn!(error = %err, "accept failed");
                }
                floor.refused("accept");
                tokio::time::sleep(ACCEPT_PAUSE).await;
                continue;
            }
        };
        let slot = match floor.slots.clone().try_acquire_owned() {
            Ok(slot) => slot,
            // At the cap: room is made by closing the oldest connection not in a request, and
            // the newcomer waits for its slot. The wait is on this loop on purpose (it is the
            // closed connection's task running once): the slot goes to the arrival that made
            // room for it. Waiting off the loop queues arrivals on the semaphore, and a flood of
            // slow clients then takes every freed slot before a delivery gets one (the
            // slow-client test fails so).
            Err(_) if floor.open.evict_one() => {
                floor.refused("evicted");
                let freed = floor.slots.clone().acquire_owned();
                match tokio::time::timeout(EVICTION_WAIT, freed).await {
                    Ok(Ok(slot)) => slot,
                    _ => {
                        floor.refused("cap");
                        continue;
                    }
                }
            }
            Err(_) => {
                floor.refused("cap");
                continue;
            }
        };
        floor.start(stream, slot);
    }
    drop(listener);
    if tokio::time::timeout(DRAIN, floor.graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!("requests still in flight after {DRAIN:?}: they end with the process");
    }
    Ok(())
}

/// How long an arrival at the cap waits for the slot of the connection closed for it (the
/// closed connection's task only has to run once).
const EVICTION_WAIT: Duration = Duration::from_secs(1);

/// What every connection is served with.
struct Floor {
    app: Router,
    builder: hyper::server::conn::http1::Builder,
    limits: ConnLimits,
    metrics: Arc<Metrics>,
    /// One per open connection.
    slots: Arc<Semaphore>,
    open: Arc<Open>,
    graceful: GracefulShutdown,
}

impl Floor {
    fn refused(&self, reason: &str) {
        self.metrics
            .inc("forgeward_connections_refused_total", &[("reason", reason)]);
    }

    /// Serves one connection, holding `slot` until it ends.
    fn start(&self, stream: tokio::net::TcpStream, slot: tokio::sync::OwnedSemaphorePermit) {
        let _ = stream.set_nodelay(true);
        let handle = self.open.add();
        let (id, busy, evicted) = handle.clone();
        let guard = Tracked {
            open: self.open.clone(),
            id,
        };
        let io = Idle::new(stream, self.limits.idle_timeout, busy.clone());
        let idle = io.timed_out.clone();
        let app = self.app.clone();
        let busy_flag = busy.clone();
        let service = hyper::service::service_fn(move |request| {
            busy.store(true, Ordering::Relaxed);
            let (app, busy) = (app.clone(), busy.clone());
            async move {
                let response = tower::ServiceExt::oneshot(app, request).await;
                busy.store(false, Ordering::Relaxed);
                response
            }
        });
        let connection = self
            .graceful
            .watch(self.builder.serve_connection(TokioIo::new(io), service));
        let metrics = self.metrics.clone();
        tokio::spawn(async move {
            tokio::pin!(connection);
            let ended = loop {
                tokio::select! {
                    ended = &mut connection => break Some(ended),
                    () = evicted.notified() => {
                        // Chosen while idle, but a request may have begun since: it is served.
                        if !busy_flag.load(Ordering::Relaxed) {
                            break None;
                        }
                        guard.open.requeue(handle.clone());
                    }
                }
            };
            let timed_out = |phase: &str| {
                metrics.inc("forgeward_connections_timed_out_total", &[("phase", phase)]);
            };
            if idle.load(Ordering::Relaxed) {
                timed_out("idle");
            } else if let Some(Err(err)) = ended {
                if err.is_timeout() {
                    timed_out("head");
                } else {
                    tracing::debug!(error = %err, "a connection ended with an error");
                }
            }
            drop(guard);
            drop(slot);
        });
    }
}

/// A connection counted open until its task ends, however it ends (a panicking handler
/// included).
struct Tracked {
    open: Arc<Open>,
    id: u64,
}

impl Drop for Tracked {
    fn drop(&mut self) {
        self.open.remove(self.id);
    }
}

/// A connection: its id, whether it is in a request now, and what closes it.
type Handle = (u64, Arc<AtomicBool>, Arc<Notify>);

/// The connections open, oldest first, each with whether it is in a request now and what
/// closes it.
#[derive(Default)]
struct Open {
    next: AtomicU64,
    connections: Mutex<VecDeque<Handle>>,
}

impl Open {
    /// A new connection: its id, its "in a request" flag, and what closes it.
    fn add(&self) -> Handle {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let handle = (id, Arc::default(), Arc::new(Notify::new()));
        self.lock().push_back(handle.clone());
        handle
    }

    /// Lists a connection chosen for eviction again, at the end: it turned out to be in a
    /// request.
    fn requeue(&self, handle: Handle) {
        self.lock().push_back(handle);
    }

    fn remove(&self, id: u64) {
        let mut connections = self.lock();
        if let Some(at) = connections.iter().position(|c| c.0 == id) {
            connections.remove(at);
        }
    }

    /// Closes the oldest connection that is not in a request; false when every one is. The
    /// connection leaves the list at once, so that the next arrival picks another.
    fn evict_one(&self) -> bool {
        let mut connections = self.lock();
        let Some(at) = connections
            .iter()
            .position(|c| !c.1.load(Ordering::Relaxed))
        else {
            return false;
        };
        if let Some((_, _, close)) = connections.remove(at) {
            // A stored permit: the close is not lost if its task is not waiting yet.
            close.notify_one();
        }
        true
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<Handle>> {
        self.connections.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A connection that ends once nothing has been read or written on it for `limit`: a
/// kept-alive connection between requests, or one a client holds open without a word.
struct Idle {
    stream: tokio::net::TcpStream,
    limit: Duration,
    sleep: std::pin::Pin<Box<tokio::time::Sleep>>,
    timed_out: Arc<AtomicBool>,
    /// In a request: the handler may take its time, and the clock waits.
    busy: Arc<AtomicBool>,
}

impl Idle {
    fn new(stream: tokio::net::TcpStream, limit: Duration, busy: Arc<AtomicBool>) -> Idle {
        Idle {
            stream,
            limit,
            sleep: Box::pin(tokio::time::sleep(limit)),
            timed_out: Arc::default(),
            busy,
        }
    }

    fn touched(&mut self) {
        self.sleep
            .as_mut()
            .reset(tokio::time::Instant::now() + self.limit);
    }

    /// An error once the limit has passed with nothing on the wire.
    fn poll_idle(&mut self, cx: &mut std::task::Context<'_>) -> std::io::Result<()> {
        if self.busy.load(Ordering::Relaxed) {
            self.touched();
            return Ok(());
        }
        if self.sleep.as_mut().poll(cx).is_ready() {
            self.timed_out.store(true, Ordering::Relaxed);
            return Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                "the connection was idle too long",
            ));
        }
        Ok(())
    }
}

impl tokio::io::AsyncRead for Idle {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        match std::pin::Pin::new(&mut self.stream).poll_read(cx, buf) {
            std::task::Poll::Ready(result) => {
                if buf.filled().len() > before {
                    self.touched();
                }
                std::task::Poll::Ready(result)
            }
            std::task::Poll::Pending => match self.poll_idle(cx) {
                Ok(()) => std::task::Poll::Pending,
                Err(err) => std::task::Poll::Ready(Err(err)),
            },
        }
    }
}

impl tokio::io::AsyncWrite for Idle {
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        data: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        let written = std::pin::Pin::new(&mut self.stream).poll_write(cx, data);
        if matches!(written, std::task::Poll::Ready(Ok(n)) if n > 0) {
            self.touched();
        }
        written
    }

    fn poll_flush(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cap_leaves_descriptors_for_the_rest_of_the_bot() {
        assert_eq!(connection_cap(4096, 1024), 1024 - RESERVED_DESCRIPTORS);
        assert_eq!(connection_cap(100, 1 << 20), 100);
        assert_eq!(connection_cap(4096, 10), 1);
        assert_eq!(connection_cap(0, 1024), 1);
    }
}
