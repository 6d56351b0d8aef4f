//! The egress gateway: the only way out of a sandbox with `sandbox.network = "allowlist"`. An
//! HTTP proxy run by the bot for one job, in its own process, reached from inside through a
//! Unix socket; it speaks `CONNECT` and plain-HTTP proxying, resolves names itself, connects
//! only where the operator's allow list ([`Policy`]) says, and logs every connection
//! ([`EgressLog`]).
//!
//! Secrets go out by placeholder: the worker's environment holds a random [`Secret::placeholder`];
//! a `CONNECT` to one of the secret's hosts is ended at the gateway with a certificate from
//! the job's own CA ([`JobCa`], which the sandbox trusts), each request's configured header has
//! the placeholder replaced by the real value, and the request goes on over TLS verified
//! against the system's roots (plus the operator's). A placeholder bound for any other host,
//! or sent in plain HTTP, is refused. The real value is written into that one header and
//! nowhere else: not into a log line, an error page, or anything the worker reads.
//!
//! This module owns the gateway's sockets, TLS and HTTP; it does not build the sandbox, bind
//! the socket into it, or read configuration files (its types deserialize, the caller reads).

mod allow;
mod body;
mod exchange;
mod http;
mod log;
mod mitm;
mod plain;
mod secrets;
mod server;
mod stream;
mod tls;
mod tunnel;

#[cfg(test)]
mod tests;

use std::future::Future;
use std::io;
use std::sync::Arc;
use std::time::Duration;

use rustls::pki_types::CertificateDer;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, UnixListener};
use tokio::sync::Semaphore;
use tokio::task::{JoinHandle, JoinSet};
use tokio_util::sync::CancellationToken;

pub use allow::{AllowEntry, HostPattern, Policy, Refusal, Target, canonical, special_range};
pub use log::{Connection, Discard, EgressLog, Injected, Method, Outcome, Size, Totals};
pub use secrets::{Injection, PLACEHOLDER_PREFIX, Secret, SecretRule};
pub use tls::{JobCa, parse_pem_certs, system_bundle_pem};

/// Reads `bytes` as each thing the gateway reads from a worker or an upstream before it
/// decides: a request head with its framing, a response head, a TLS ClientHello's server
/// name, an allow entry and a target host. For the fuzz target (`tests/fuzz`): any input may be
/// refused, none may panic.
#[doc(hidden)]
pub fn parse_untrusted(bytes: &[u8]) {
    if let Ok(http::Parsed::Complete(head, _)) = http::parse_request(bytes) {
        let _ = http::request_framing(&head);
    }
    if let Ok(http::Parsed::Complete(head, _)) = http::parse_response(bytes) {
        let _ = http::response_framing("GET", &head);
        let _ = http::response_framing("HEAD", &head);
    }
    let _ = tunnel::client_hello_sni(bytes);
    let text = String::from_utf8_lossy(bytes);
    let _ = text.parse::<AllowEntry>();
    if let Ok(target) = Target::parse(&text) {
        let policy = Policy::new(Vec::new());
        let _ = policy.check_target(&target, 443);
    }
}

/// A request head must arrive whole within this of its first byte.
pub const DEFAULT_HEAD_TIMEOUT: Duration = Duration::from_secs(30);
/// A tunnel with no byte either way, a kept-alive connection with no next request, or an
/// upstream that has not begun its answer is closed after this: long enough for a model's
/// API to think, short enough that a worker cannot hold the gateway forever.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(10 * 60);
/// Each address of a host gets this long to accept the connection (and TLS to complete).
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Connections served at once; more wait in the listener's backlog. A worker's package
/// manager opens tens in parallel, not hundreds.
pub const DEFAULT_MAX_CONNECTIONS: usize = 256;

#[derive(Debug, thiserror::Error)]
pub enum EgressError {
    #[error("the job's certificate could not be made: {0}")]
    Certificate(String),
    #[error("TLS: {0}")]
    Tls(String),
}

/// Everything one job's gateway needs.
pub struct GatewayConfig {
    pub policy: Arc<Policy>,
    pub secrets: Vec<Secret>,
    pub ca: Arc<JobCa>,
    /// Roots trusted for upstreams besides the system's (an operator's internal CA).
    pub extra_roots: Vec<CertificateDer<'static>>,
    pub log: Arc<dyn EgressLog>,
    pub head_timeout: Duration,
    pub idle_timeout: Duration,
    pub connect_timeout: Duration,
    pub max_connections: usize,
}

impl GatewayConfig {
    /// A config with the default timeouts and limits and no extra roots.
    pub fn new(
        policy: Arc<Policy>,
        secrets: Vec<Secret>,
        ca: Arc<JobCa>,
        log: Arc<dyn EgressLog>,
    ) -> GatewayConfig {
        GatewayConfig {
            policy,
            secrets,
            ca,
            extra_roots: Vec::new(),
            log,
            head_timeout: DEFAULT_HEAD_TIMEOUT,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            max_connections: DEFAULT_MAX_CONNECTIONS,
        }
    }
}

/// What every connection of one gateway reads.
pub(crate) struct Shared {
    pub(crate) policy: Arc<Policy>,
    pub(crate) secrets: Vec<Secret>,
    pub(crate) ca: Arc<JobCa>,
    /// The client side towards secret hosts, or why it could not be built.
    pub(crate) upstream_tls: Result<Arc<rustls::ClientConfig>, String>,
    pub(crate) ledger: Arc<log::Ledger>,
    pub(crate) head_timeout: Duration,
    pub(crate) idle_timeout: Duration,
    pub(crate) connect_timeout: Duration,
}

/// A running gateway. Dropped without [`Gateway::shutdown`], it still stops: its connections
/// end (and log) on their own tasks.
pub struct Gateway {
    cancel: CancellationToken,
    task: Option<JoinHandle<()>>,
    shared: Arc<Shared>,
}

impl Drop for Gateway {
    fn drop(&mut self) {
        self.cancel.cancel();
    }
}

trait Listener: Send + 'static {
    type Stream: AsyncRead + AsyncWrite + Unpin + Send + 'static;
    fn accept(&self) -> impl Future<Output = io::Result<Self::Stream>> + Send;
}

impl Listener for UnixListener {
    type Stream = tokio::net::UnixStream;

    async fn accept(&self) -> io::Result<Self::Stream> {
        UnixListener::accept(self).await.map(|(s, _)| s)
    }
}

impl Listener for TcpListener {
    type Stream = tokio::net::TcpStream;

    async fn accept(&self) -> io::Result<Self::Stream> {
        let (stream, _) = TcpListener::accept(self).await?;
        let _ = stream.set_nodelay(true);
        Ok(stream)
    }
}

impl Gateway {
    /// Serves connections accepted on `listener` until [`Gateway::shutdown`]; spawns its own
    /// tasks on the current tokio runtime.
    pub fn start(listener: UnixListener, config: GatewayConfig) -> Gateway {
        Gateway::spawn(listener, config)
    }

    /// [`Gateway::start`] on a socket bound outside the runtime (a sandbox's gateway directory
    /// binds it while the job is set up).
    pub fn start_std(
        listener: std::os::unix::net::UnixListener,
        config: GatewayConfig,
    ) -> io::Result<Gateway> {
        listener.set_nonblocking(true)?;
        Ok(Gateway::start(UnixListener::from_std(listener)?, config))
    }

    /// [`Gateway::start`] on a TCP listener (tests, benchmarks, a forwarder on loopback).
    pub fn start_tcp(listener: TcpListener, config: GatewayConfig) -> Gateway {
        Gateway::spawn(listener, config)
    }

    fn spawn<L: Listener>(listener: L, config: GatewayConfig) -> Gateway {
        let upstream_tls = if config.secrets.is_empty() {
            Err("no secret host is configured".to_owned())
        } else {
            tls::upstream_config(&config.extra_roots).map_err(|e| e.to_string())
        };
        let shared = Arc::new(Shared {
            policy: config.policy,
            secrets: config.secrets,
            ca: config.ca,
            upstream_tls,
            ledger: Arc::new(log::Ledger::new(config.log)),
            head_timeout: config.head_timeout,
            idle_timeout: config.idle_timeout,
            connect_timeout: config.connect_timeout,
        });
        let cancel = CancellationToken::new();
        let task = tokio::spawn(accept_loop(
            listener,
            shared.clone(),
            cancel.clone(),
            config.max_connections.max(1),
        ));
        Gateway {
            cancel,
            task: Some(task),
            shared,
        }
    }

    /// The totals so far.
    pub fn totals(&self) -> Totals {
        self.shared.ledger.totals()
    }

    /// Stops accepting, ends every open connection (each still logs its line), and returns
    /// the totals.
    pub async fn shutdown(mut self) -> Totals {
        self.cancel.cancel();
        if let Some(task) = self.task.take()
            && let Err(e) = task.await
        {
            tracing::warn!("the egress gateway's accept loop ended badly: {e}");
        }
        self.shared.ledger.totals()
    }
}

/// How long to wait after an accept error (out of descriptors) before accepting again.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);

async fn accept_loop<L: Listener>(
    listener: L,
    shared: Arc<Shared>,
    cancel: CancellationToken,
    max_connections: usize,
) {
    let permits = Arc::new(Semaphore::new(max_connections));
    let mut tasks = JoinSet::new();
    loop {
        while tasks.try_join_next().is_some() {}
        let permit = tokio::select! {
            _ = cancel.cancelled() => break,
            permit = permits.clone().acquire_owned() => match permit {
                Ok(permit) => permit,
                Err(_) => break,
            },
        };
        let accepted = tokio::select! {
            _ = cancel.cancelled() => break,
            accepted = listener.accept() => accepted,
        };
        match accepted {
            Ok(stream) => {
                let shared = shared.clone();
                let cancel = cancel.clone();
                tasks.spawn(async move {
                    tokio::select! {
                        _ = server::serve(stream, &shared) => {}
                        _ = cancel.cancelled() => {}
                    }
                    drop(permit);
                });
            }
            Err(e) => {
                tracing::warn!("the egress gateway could not accept a connection: {e}");
                tokio::time::sleep(ACCEPT_BACKOFF).await;
            }
        }
    }
    drop(listener);
    while let Some(done) = tasks.join_next().await {
        if let Err(e) = done {
            tracing::warn!("an egress connection ended badly: {e}");
        }
    }
}
