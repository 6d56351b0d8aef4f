//! git's smart HTTP protocol for libgit2, spoken by the bot's own HTTP client: reqwest on
//! rustls, trusting this machine's roots (read by rustls-native-certs, which honours
//! `SSL_CERT_FILE` and `SSL_CERT_DIR`). libgit2 is built without TLS of its own, so no OpenSSL
//! is linked and nothing network-related is set up before a fetch, a push or a probe needs it:
//! the roots are read by the process's first request over `https://`.
//!
//! A fetch is a `GET <url>/info/refs?service=git-upload-pack` and then `POST`s of
//! `git-upload-pack` (one per negotiation round, stateless); a push the same with
//! `git-receive-pack`. libgit2 writes a request's body into the stream and then reads the
//! answer, which arrives as it is read. No redirect is followed: one could hand the
//! credentials to another host.
//!
//! Each operation runs inside [`session`], which gives the transport what libgit2's callbacks
//! would have: the credentials, offered as git offers them (only after the server asks, with a
//! `401` and a `WWW-Authenticate` challenge, then on every later request of the operation), and
//! the socket timeouts; and it collects what happened ([`Outcome`]: a challenge, a refusal, why
//! a request failed), which libgit2's own error code cannot carry from a read.

use std::cell::RefCell;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Once, OnceLock, PoisonError};
use std::time::Duration;

use bytes::Bytes;
use git2::transport::{Service, SmartSubtransport, SmartSubtransportStream, Transport};
use git2::{ErrorClass, ErrorCode};
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, USER_AGENT, WWW_AUTHENTICATE};
use reqwest::{Method, StatusCode};

use crate::forge::api::GitCredentials;
use crate::forge::http::{error_chain, message_line};

/// How long a connection may take to open, and how long a socket may stay silent, in every
/// network operation of this process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NetworkTimeouts {
    pub connect: Duration,
    pub stall: Duration,
}

/// Connecting to a forge takes well under a second; a forge computing a large pack may say
/// nothing for a while before its first byte, so a stall is judged over two minutes.
const DEFAULT_TIMEOUTS: NetworkTimeouts = NetworkTimeouts {
    connect: Duration::from_secs(30),
    stall: Duration::from_secs(120),
};

impl Default for NetworkTimeouts {
    fn default() -> NetworkTimeouts {
        DEFAULT_TIMEOUTS
    }
}

static TIMEOUTS: Mutex<NetworkTimeouts> = Mutex::new(DEFAULT_TIMEOUTS);

/// Sets the socket timeouts of every later fetch, push and probe of this process; without it,
/// [`NetworkTimeouts::default`] applies.
pub fn set_network_timeouts(timeouts: NetworkTimeouts) {
    *TIMEOUTS.lock().unwrap_or_else(PoisonError::into_inner) = timeouts;
}

fn timeouts() -> NetworkTimeouts {
    *TIMEOUTS.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A request body (what libgit2 sends in one negotiation round or one push) larger than this is
/// refused: the bot pushes a worker's commit, and a fetch's requests are lists of object ids.
const MAX_REQUEST_BYTES: usize = 1 << 30;

/// Servers that tell git clients apart by their agent look for `git/`.
const AGENT: &str = concat!("git/2.0 (forgeward ", env!("CARGO_PKG_VERSION"), ")");

/// Why a request got no git answer. Each carries a one-line message, which never holds the
/// credentials (nor the URL's, which [`check_url`](super::mirror::check_url) refuses).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Failure {
    /// The URL is not one the bot can use.
    Url(String),
    /// The host could not be resolved or connected to.
    Connect(String),
    /// The TLS handshake failed: a certificate that is not trusted or not the host's, or no
    /// TLS at all on the other end.
    Tls(String),
    /// The connection or the answer took longer than the process's network timeouts.
    Timeout(String),
    /// An HTTP server answered with a status that is neither git's answer nor a challenge
    /// (`404`, or a redirect, which is not followed).
    Status(u16),
    /// An HTTP server answered, but not as a git server does (HTML, say).
    NotGit(String),
    /// Anything else.
    Other(String),
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Url(m) | Failure::Connect(m) | Failure::Tls(m) | Failure::Other(m) => {
                f.write_str(m)
            }
            Failure::Timeout(m) => write!(f, "timed out: {m}"),
            Failure::Status(code) => write!(f, "HTTP {code} to git's request"),
            Failure::NotGit(m) => write!(f, "not a git server's answer: {m}"),
        }
    }
}

impl Failure {
    /// The libgit2 error a transport returns for it (its code read by the caller's error).
    fn to_git2(&self) -> git2::Error {
        let (code, class) = match self {
            Failure::Timeout(_) => (ErrorCode::Timeout, ErrorClass::Net),
            Failure::Tls(_) => (ErrorCode::Certificate, ErrorClass::Ssl),
            Failure::Status(_) | Failure::NotGit(_) => (ErrorCode::GenericError, ErrorClass::Http),
            _ => (ErrorCode::GenericError, ErrorClass::Net),
        };
        git2::Error::new(code, class, self.to_string())
    }
}

/// What the transport saw during one [`session`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Outcome {
    /// A server asked for credentials (`401` with a `WWW-Authenticate` challenge).
    pub challenged: bool,
    /// It asked and none were given, or it refused the ones given.
    pub refused: bool,
    /// Why the last request that failed did.
    pub failure: Option<Failure>,
}

/// One operation's credentials and what it saw, shared by the transport libgit2 creates on
/// this thread.
struct Shared {
    credentials: Option<GitCredentials>,
    outcome: Mutex<Outcome>,
}

impl Shared {
    fn new(credentials: Option<GitCredentials>) -> Arc<Shared> {
        Arc::new(Shared {
            credentials,
            outcome: Mutex::new(Outcome::default()),
        })
    }

    fn record(&self, change: impl FnOnce(&mut Outcome)) {
        change(&mut self.outcome.lock().unwrap_or_else(PoisonError::into_inner));
    }
}

thread_local! {
    /// The session of the operation running on this thread: libgit2 calls the transport's
    /// factory on the thread that called it.
    static CURRENT: RefCell<Option<Arc<Shared>>> = const { RefCell::new(None) };
}

/// Runs `op` (one libgit2 call that may talk to a remote) with `credentials` offered to the
/// server if it asks, and returns what the transport saw beside the call's result.
pub(super) fn session<T>(
    credentials: Option<&GitCredentials>,
    op: impl FnOnce() -> T,
) -> (T, Outcome) {
    struct Restore(Option<Arc<Shared>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let previous = self.0.take();
            CURRENT.with(|current| *current.borrow_mut() = previous);
        }
    }
    register();
    let shared = Shared::new(credentials.cloned());
    let restore = Restore(CURRENT.with(|current| current.replace(Some(shared.clone()))));
    let result = op();
    drop(restore);
    let outcome = std::mem::take(
        &mut *shared
            .outcome
            .lock()
            .unwrap_or_else(PoisonError::into_inner),
    );
    (result, outcome)
}

/// Puts this transport in front of libgit2's for `http://` and `https://`, once per process.
/// The first call must come before other threads create transports: [`super::init`] makes it
/// at start, and every operation here makes it again (a no-op) for library users.
pub(super) fn register() {
    static REGISTERED: Once = Once::new();
    REGISTERED.call_once(|| {
        for scheme in ["http", "https"] {
            // SAFETY: registration happens once, under the `Once`, and before any transport is
            // created: the binary registers in `git::init`, before its threads start; a library
            // caller's network operations all pass through here first.
            let registered = unsafe { git2::transport::register(scheme, transport) };
            // Registering fails only for a scheme registered twice, which the `Once` rules out.
            debug_assert!(registered.is_ok(), "registering {scheme}: {registered:?}");
        }
    });
}

fn transport(remote: &git2::Remote<'_>) -> Result<Transport, git2::Error> {
    // A remote used outside a session (a library caller's own) gets no credentials.
    let shared = CURRENT
        .with(|current| current.borrow().clone())
        .unwrap_or_else(|| Shared::new(None));
    let conn = Conn::new(shared).map_err(|f| f.to_git2())?;
    Transport::smart(remote, true, Http(Arc::new(conn)))
}

/// The rustls configuration of every `https://` request of the process: this machine's roots.
fn tls_config() -> Result<rustls::ClientConfig, Failure> {
    static CONFIG: OnceLock<Result<rustls::ClientConfig, String>> = OnceLock::new();
    let config = CONFIG.get_or_init(|| {
        let mut roots = rustls::RootCertStore::empty();
        roots.add_parsable_certificates(rustls_native_certs::load_native_certs().certs);
        let mut config = rustls::ClientConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("setting up TLS: {e}"))?
        .with_root_certificates(roots)
        .with_no_client_auth();
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(config)
    });
    config.clone().map_err(Failure::Other)
}

/// One operation's HTTP client, on a runtime of its own that runs only while the transport
/// waits for the network.
struct Conn {
    shared: Arc<Shared>,
    client: reqwest::Client,
    runtime: tokio::runtime::Runtime,
    stall: Duration,
    /// The server asked for credentials once: every later request carries them.
    authenticate: AtomicBool,
}

impl Conn {
    fn new(shared: Arc<Shared>) -> Result<Conn, Failure> {
        let timeouts = timeouts();
        let client = reqwest::Client::builder()
            .use_preconfigured_tls(tls_config()?)
            .connect_timeout(timeouts.connect)
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .build()
            .map_err(|e| Failure::Other(format!("setting up HTTP: {}", error_chain(&e))))?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| Failure::Other(format!("setting up HTTP: {e}")))?;
        Ok(Conn {
            shared,
            client,
            runtime,
            stall: timeouts.stall,
            authenticate: AtomicBool::new(false),
        })
    }

    /// Runs `future`, a request to `endpoint` or the reading of a piece of its answer, until it
    /// completes or the stall timeout passes. (A request's sending counts as one wait: the
    /// bodies git sends are lists of object ids and a worker's commit.)
    fn wait<T>(
        &self,
        endpoint: &str,
        future: impl Future<Output = Result<T, reqwest::Error>>,
    ) -> Result<T, Failure> {
        // The timer is made inside the runtime, which it needs.
        let stall = self.stall;
        match self
            .runtime
            .block_on(async move { tokio::time::timeout(stall, future).await })
        {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(e)) => Err(classify(e, endpoint)),
            Err(_) => Err(Failure::Timeout(format!(
                "the server sent nothing for {} s",
                self.stall.as_secs()
            ))),
        }
    }

    /// Sends one request of `service` to `endpoint` and returns its answer, once it is git's:
    /// a challenge is answered with the credentials (once), anything else than a `200` of the
    /// expected content type is a failure.
    fn request(
        &self,
        endpoint: &str,
        service: Rpc,
        body: Option<Bytes>,
    ) -> Result<reqwest::Response, Failure> {
        loop {
            let authenticating = self.authenticate.load(Ordering::Relaxed);
            let mut request = self
                .client
                .request(service.method(), endpoint)
                .header(USER_AGENT, AGENT)
                .header(ACCEPT, service.answer_type());
            if let Some(body) = &body {
                request = request
                    .header(CONTENT_TYPE, service.request_type())
                    .body(body.clone());
            }
            if authenticating && let Some(c) = &self.shared.credentials {
                request = request.basic_auth(&c.username, Some(&c.password));
            }
            let response = self.wait(endpoint, request.send())?;
            let status = response.status();
            if status == StatusCode::UNAUTHORIZED && challenges(response.headers()) {
                self.shared.record(|o| o.challenged = true);
                if !authenticating && self.shared.credentials.is_some() {
                    self.authenticate.store(true, Ordering::Relaxed);
                    continue;
                }
                self.shared.record(|o| o.refused = true);
                return Err(Failure::Other(if authenticating {
                    "the server refused the credentials".to_owned()
                } else {
                    "the server asks for credentials".to_owned()
                }));
            }
            if status != StatusCode::OK {
                return Err(Failure::Status(status.as_u16()));
            }
            let content_type = response
                .headers()
                .get(CONTENT_TYPE)
                .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
                .unwrap_or_default();
            let essence = content_type.split(';').next().unwrap_or_default().trim();
            if !essence.eq_ignore_ascii_case(service.answer_type()) {
                return Err(Failure::NotGit(format!(
                    "content-type '{}' where git's is '{}'",
                    message_line(&content_type, 100),
                    service.answer_type()
                )));
            }
            return Ok(response);
        }
    }

    /// Records `failure` as the session's last and hands it back.
    fn failed(&self, failure: Failure) -> Failure {
        self.shared.record(|o| o.failure = Some(failure.clone()));
        failure
    }
}

/// Whether a `401` is git's request for credentials: it names a way to authenticate. (Any
/// scheme: git answers with a user name and password, a token as the password.)
fn challenges(headers: &HeaderMap) -> bool {
    headers.contains_key(WWW_AUTHENTICATE)
}

/// Why reqwest could not get a request to `endpoint` answered, in the words of the cause that
/// tells (reqwest's own layers only say that a request was being sent).
fn classify(e: reqwest::Error, endpoint: &str) -> Failure {
    let mut chain: Vec<&(dyn std::error::Error + 'static)> = Vec::new();
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(&e);
    while let Some(error) = cause {
        if let Some(tls) = error.downcast_ref::<rustls::Error>() {
            return Failure::Tls(tls.to_string());
        }
        chain.push(error);
        // An `io::Error`'s `source` skips the error it wraps (rustls's reaches reqwest so).
        cause = match error.downcast_ref::<io::Error>() {
            Some(io) => io
                .get_ref()
                .map(|inner| inner as &(dyn std::error::Error + 'static)),
            None => error.source(),
        };
    }
    let root = chain.last().map(|error| {
        let text = error.to_string();
        // The system's words for an `errno`, without the number.
        match text.split_once(" (os error ") {
            Some((words, _)) => words.to_owned(),
            None => text,
        }
    });
    let root = crate::text::one_line(root.as_deref().unwrap_or("no cause given"));
    if e.is_timeout() {
        Failure::Timeout(root)
    } else if e.is_connect() {
        let host = reqwest::Url::parse(endpoint)
            .ok()
            .and_then(|url| url.host_str().map(str::to_owned))
            .unwrap_or_default();
        Failure::Connect(format!("failed to connect to {host}: {root}"))
    } else {
        Failure::Other(error_chain(&e.without_url()))
    }
}

/// The two requests of each direction.
#[derive(Clone, Copy, Debug)]
enum Rpc {
    /// `GET info/refs?service=git-<name>`: the refs.
    Refs(&'static str),
    /// `POST git-<name>`: a negotiation round, or the push.
    Exchange(&'static str),
}

impl Rpc {
    fn of(service: Service) -> Rpc {
        match service {
            Service::UploadPackLs => Rpc::Refs("upload-pack"),
            Service::UploadPack => Rpc::Exchange("upload-pack"),
            Service::ReceivePackLs => Rpc::Refs("receive-pack"),
            Service::ReceivePack => Rpc::Exchange("receive-pack"),
        }
    }

    fn method(self) -> Method {
        match self {
            Rpc::Refs(_) => Method::GET,
            Rpc::Exchange(_) => Method::POST,
        }
    }

    fn endpoint(self, url: &str) -> String {
        let base = url.trim_end_matches('/');
        match self {
            Rpc::Refs(name) => format!("{base}/info/refs?service=git-{name}"),
            Rpc::Exchange(name) => format!("{base}/git-{name}"),
        }
    }

    fn request_type(self) -> &'static str {
        match self {
            Rpc::Refs(_) => "",
            Rpc::Exchange("upload-pack") => "application/x-git-upload-pack-request",
            Rpc::Exchange(_) => "application/x-git-receive-pack-request",
        }
    }

    fn answer_type(self) -> &'static str {
        match self {
            Rpc::Refs("upload-pack") => "application/x-git-upload-pack-advertisement",
            Rpc::Refs(_) => "application/x-git-receive-pack-advertisement",
            Rpc::Exchange("upload-pack") => "application/x-git-upload-pack-result",
            Rpc::Exchange(_) => "application/x-git-receive-pack-result",
        }
    }
}

struct Http(Arc<Conn>);

impl SmartSubtransport for Http {
    fn action(
        &self,
        url: &str,
        service: Service,
    ) -> Result<Box<dyn SmartSubtransportStream>, git2::Error> {
        let rpc = Rpc::of(service);
        let endpoint = rpc.endpoint(url);
        let mut stream = Stream {
            conn: self.0.clone(),
            rpc,
            endpoint,
            body: Vec::new(),
            answer: None,
            pending: Bytes::new(),
        };
        if let Rpc::Refs(_) = rpc {
            // Asked here rather than at the first read, so that libgit2 keeps the error's code.
            let answer = stream
                .conn
                .request(&stream.endpoint, rpc, None)
                .map_err(|f| self.0.failed(f).to_git2())?;
            stream.answer = Some(answer);
        }
        Ok(Box::new(stream))
    }

    fn close(&self) -> Result<(), git2::Error> {
        Ok(())
    }
}

/// One request: the body libgit2 writes, then the answer it reads.
struct Stream {
    conn: Arc<Conn>,
    rpc: Rpc,
    endpoint: String,
    body: Vec<u8>,
    answer: Option<reqwest::Response>,
    /// What arrived and has not been read yet.
    pending: Bytes,
}

impl Stream {
    fn fail(&self, failure: Failure) -> io::Error {
        io::Error::other(self.conn.failed(failure).to_string())
    }
}

impl Stream {
    /// Sends the request libgit2 wrote.
    fn send(&mut self) -> io::Result<reqwest::Response> {
        let body = Bytes::from(std::mem::take(&mut self.body));
        self.conn
            .request(&self.endpoint, self.rpc, Some(body))
            .map_err(|f| self.fail(f))
    }
}

impl io::Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let answer = match self.answer.take() {
            Some(answer) => answer,
            None => self.send()?,
        };
        let answer = self.answer.insert(answer);
        while self.pending.is_empty() {
            match self.conn.wait(&self.endpoint, answer.chunk()) {
                Ok(Some(chunk)) => self.pending = chunk,
                Ok(None) => return Ok(0),
                Err(f) => return Err(io::Error::other(self.conn.failed(f).to_string())),
            }
        }
        let n = buf.len().min(self.pending.len());
        buf[..n].copy_from_slice(&self.pending.split_to(n));
        Ok(n)
    }
}

impl io::Write for Stream {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        if self.answer.is_some() {
            return Err(io::Error::other("git wrote to a request already sent"));
        }
        if self.body.len() + data.len() > MAX_REQUEST_BYTES {
            return Err(self.fail(Failure::Other(format!(
                "a request of more than {} MiB",
                MAX_REQUEST_BYTES >> 20
            ))));
        }
        self.body.extend_from_slice(data);
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
