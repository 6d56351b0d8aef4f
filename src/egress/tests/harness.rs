//! Upstreams, gateways and clients for the gateway's tests.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, ServerName};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

use crate::egress::{
    AllowEntry, Connection, EgressLog, Gateway, GatewayConfig, Injection, JobCa, Policy, Secret,
    SecretRule,
};

pub(super) type Body = BoxBody<Bytes, Infallible>;

pub(super) fn full(bytes: impl Into<Bytes>) -> Body {
    Full::new(bytes.into()).boxed()
}

/// The gateway's lines, kept.
#[derive(Default)]
pub(super) struct Capture {
    lines: Mutex<Vec<Connection>>,
}

impl EgressLog for Capture {
    fn connection(&self, event: &Connection) {
        self.lines.lock().unwrap().push(event.clone());
    }
}

impl Capture {
    pub(super) fn lines(&self) -> Vec<Connection> {
        self.lines.lock().unwrap().clone()
    }

    /// Waits until `n` lines are in (connections log when they end).
    pub(super) async fn wait_for(&self, n: usize) -> Vec<Connection> {
        for _ in 0..500 {
            let lines = self.lines();
            if lines.len() >= n {
                return lines;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("expected {n} log lines, got {:#?}", self.lines());
    }
}

/// A CA of the tests' own and a leaf it signed for `localhost` and `127.0.0.1`.
pub(super) struct TestPki {
    pub(super) ca: CertificateDer<'static>,
    pub(super) server: Arc<rustls::ServerConfig>,
}

pub(super) fn test_pki() -> TestPki {
    let ca_key = KeyPair::generate().unwrap();
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "egress test upstream CA");
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params.key_usages = vec![
        rcgen::KeyUsagePurpose::KeyCertSign,
        rcgen::KeyUsagePurpose::DigitalSignature,
    ];
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let issuer = Issuer::new(ca_params, ca_key);
    let leaf_key = KeyPair::generate().unwrap();
    let leaf_params =
        CertificateParams::new(vec!["localhost".to_owned(), "127.0.0.1".to_owned()]).unwrap();
    let leaf = leaf_params.signed_by(&leaf_key, &issuer).unwrap();
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(leaf_key.serialize_der()));
    let mut server = rustls::ServerConfig::builder_with_provider(crate::egress::tls::provider())
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![leaf.der().clone()], key)
        .unwrap();
    server.alpn_protocols = vec![b"http/1.1".to_vec()];
    TestPki {
        ca: ca.der().clone(),
        server: Arc::new(server),
    }
}

/// A request as the upstream saw it.
#[derive(Debug, Clone)]
pub(super) struct Seen {
    pub(super) method: String,
    pub(super) uri: String,
    pub(super) headers: Vec<(String, String)>,
    pub(super) body: Vec<u8>,
}

impl Seen {
    pub(super) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// A loopback upstream served by hyper that records every request.
pub(super) struct Upstream {
    pub(super) port: u16,
    pub(super) seen: Arc<Mutex<Vec<Seen>>>,
    /// Connections accepted.
    pub(super) connections: Arc<AtomicUsize>,
    /// Bytes of `/upload` bodies received so far (the upload's progress).
    pub(super) upload_progress: watch::Receiver<usize>,
    /// `/stream`'s second half waits for this.
    pub(super) release: Arc<tokio::sync::Notify>,
}

impl Upstream {
    pub(super) fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

pub(super) async fn http_upstream() -> Upstream {
    upstream(None).await
}

pub(super) async fn https_upstream(pki: &TestPki) -> Upstream {
    upstream(Some(pki.server.clone())).await
}

async fn upstream(tls: Option<Arc<rustls::ServerConfig>>) -> Upstream {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let connections = Arc::new(AtomicUsize::new(0));
    let (progress_tx, upload_progress) = watch::channel(0usize);
    let progress_tx = Arc::new(progress_tx);
    let release = Arc::new(tokio::sync::Notify::new());
    let state = (seen.clone(), progress_tx, release.clone());
    let counter = connections.clone();
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            counter.fetch_add(1, Ordering::SeqCst);
            let state = state.clone();
            let tls = tls.clone();
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |req| {
                    let state = state.clone();
                    async move { Ok::<_, Infallible>(respond(req, state).await) }
                });
                let builder = hyper::server::conn::http1::Builder::new();
                match tls {
                    None => {
                        let _ = builder
                            .serve_connection(TokioIo::new(stream), service)
                            .await;
                    }
                    Some(config) => {
                        let Ok(tls) = tokio_rustls::TlsAcceptor::from(config).accept(stream).await
                        else {
                            return;
                        };
                        let _ = builder.serve_connection(TokioIo::new(tls), service).await;
                    }
                }
            });
        }
    });
    Upstream {
        port,
        seen,
        connections,
        upload_progress,
        release,
    }
}

type State = (
    Arc<Mutex<Vec<Seen>>>,
    Arc<watch::Sender<usize>>,
    Arc<tokio::sync::Notify>,
);

/// `/big/N`: N bytes; `/stream`: a chunked body in two halves, the second once released;
/// `/upload`: the body read frame by frame with its progress published; anything else:
/// `ok METHOD URI`.
async fn respond(req: Request<Incoming>, (seen, progress, release): State) -> Response<Body> {
    let method = req.method().to_string();
    let uri = req.uri().to_string();
    let headers = req
        .headers()
        .iter()
        .map(|(n, v)| {
            (
                n.to_string(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect();
    let path = req.uri().path().to_owned();
    let mut body = Vec::new();
    let mut incoming = req.into_body();
    while let Some(frame) = incoming.frame().await {
        let Ok(frame) = frame else { break };
        if let Ok(data) = frame.into_data() {
            body.extend_from_slice(&data);
            if path == "/upload" {
                progress.send_replace(body.len());
            }
        }
    }
    let len = body.len();
    seen.lock().unwrap().push(Seen {
        method: method.clone(),
        uri: uri.clone(),
        headers,
        body,
    });
    let response = Response::builder().header("x-upstream", "yes");
    if let Some(n) = path.strip_prefix("/big/") {
        let n: usize = n.parse().unwrap();
        return response.body(full(vec![b'x'; n])).unwrap();
    }
    if path == "/stream" {
        let (mut tx, body) = http_body_util::channel::Channel::<Bytes, Infallible>::new(2);
        tokio::spawn(async move {
            let _ = tx.send_data(Bytes::from_static(b"first half;")).await;
            release.notified().await;
            let _ = tx.send_data(Bytes::from_static(b"second half")).await;
        });
        return response.body(body.boxed()).unwrap();
    }
    if path == "/echo-key" {
        // An upstream that sends the credential back, in a header and (chunked) in the body.
        let key = seen
            .lock()
            .unwrap()
            .last()
            .and_then(|r| r.header("x-api-key").map(str::to_owned));
        let key = key.unwrap_or_default();
        let (mut tx, body) = http_body_util::channel::Channel::<Bytes, Infallible>::new(4);
        let echoed = format!("{{\"error\": \"invalid key {key}\"}}");
        tokio::spawn(async move {
            // Split inside the value, across two chunks.
            let (a, b) = echoed.split_at(echoed.len() - 8);
            let _ = tx.send_data(Bytes::from(a.to_owned())).await;
            let _ = tx.send_data(Bytes::from(b.to_owned())).await;
        });
        return response.header("x-echo", key).body(body.boxed()).unwrap();
    }
    if path == "/upload" {
        return response.body(full(format!("got {len}"))).unwrap();
    }
    response.body(full(format!("ok {method} {uri}"))).unwrap()
}

/// A running gateway on loopback TCP, and its log.
pub(super) struct Harness {
    pub(super) gateway: Option<Gateway>,
    pub(super) addr: SocketAddr,
    pub(super) log: Arc<Capture>,
    pub(super) ca: Arc<JobCa>,
    pub(super) secrets: Vec<Secret>,
}

pub(super) fn entries(list: &[String]) -> Vec<AllowEntry> {
    list.iter().map(|e| e.parse().unwrap()).collect()
}

pub(super) fn secret(env: &str, hosts: &[&str], injection: Injection, value: &str) -> Secret {
    Secret::new(
        SecretRule {
            env: env.to_owned(),
            hosts: hosts.iter().map(|h| h.to_string()).collect(),
            injection,
        },
        value.to_owned(),
    )
}

pub(super) struct Options {
    pub(super) secrets: Vec<Secret>,
    pub(super) extra_roots: Vec<CertificateDer<'static>>,
    pub(super) head_timeout: Duration,
    pub(super) idle_timeout: Duration,
    pub(super) max_connections: usize,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            secrets: Vec::new(),
            extra_roots: Vec::new(),
            head_timeout: Duration::from_secs(5),
            idle_timeout: Duration::from_secs(30),
            max_connections: crate::egress::DEFAULT_MAX_CONNECTIONS,
        }
    }
}

pub(super) async fn gateway(allow: &[String], options: Options) -> Harness {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let log = Arc::new(Capture::default());
    let ca = Arc::new(JobCa::generate().unwrap());
    let mut config = GatewayConfig::new(
        Arc::new(Policy::new(entries(allow))),
        options.secrets.clone(),
        ca.clone(),
        log.clone(),
    );
    config.extra_roots = options.extra_roots;
    config.head_timeout = options.head_timeout;
    config.idle_timeout = options.idle_timeout;
    config.max_connections = options.max_connections;
    Harness {
        gateway: Some(Gateway::start_tcp(listener, config)),
        addr,
        log,
        ca,
        secrets: options.secrets,
    }
}

impl Harness {
    /// Every line so far, each checked for every secret's real value.
    pub(super) fn lines(&self) -> Vec<String> {
        let lines: Vec<String> = self.log.lines().iter().map(|l| l.to_string()).collect();
        for line in &lines {
            self.assert_clean(line.as_bytes(), "a log line");
        }
        lines
    }

    pub(super) async fn wait_lines(&self, n: usize) -> Vec<String> {
        self.log.wait_for(n).await;
        self.lines()
    }

    /// Fails when `bytes` hold any secret's real value.
    pub(super) fn assert_clean(&self, bytes: &[u8], what: &str) {
        for s in &self.secrets {
            assert!(
                memchr::memmem::find(bytes, s.value.as_bytes()).is_none(),
                "{what} holds the value of {}: {}",
                s.rule.env,
                String::from_utf8_lossy(bytes)
            );
        }
    }

    pub(super) async fn shutdown(&mut self) -> crate::egress::Totals {
        self.gateway.take().unwrap().shutdown().await
    }

    /// A CONNECT to `authority`; the gateway's answer head (status line and headers) and the
    /// stream, for the tunnel.
    pub(super) async fn connect(&self, authority: &str) -> (String, TcpStream) {
        let mut stream = TcpStream::connect(self.addr).await.unwrap();
        stream
            .write_all(
                format!("CONNECT {authority} HTTP/1.1\r\nHost: {authority}\r\n\r\n").as_bytes(),
            )
            .await
            .unwrap();
        let head = read_head(&mut stream).await;
        (head, stream)
    }

    /// Sends `bytes` on a new connection and reads everything the gateway answers.
    pub(super) async fn raw(&self, bytes: &[u8]) -> String {
        let mut stream = TcpStream::connect(self.addr).await.unwrap();
        stream.write_all(bytes).await.unwrap();
        let mut out = Vec::new();
        tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut out))
            .await
            .expect("the gateway did not close the connection")
            .unwrap_or(0);
        self.assert_clean(&out, "a response");
        String::from_utf8_lossy(&out).into_owned()
    }
}

/// Reads a response head byte by byte (what follows stays in the stream).
pub(super) async fn read_head<S: AsyncRead + Unpin>(stream: &mut S) -> String {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match tokio::time::timeout(Duration::from_secs(10), stream.read(&mut byte)).await {
            Ok(Ok(1)) => head.push(byte[0]),
            _ => break,
        }
    }
    String::from_utf8_lossy(&head).into_owned()
}

/// A rustls client trusting `roots`, ALPN http/1.1.
pub(super) fn tls_client(roots: &[CertificateDer<'static>]) -> tokio_rustls::TlsConnector {
    let mut store = rustls::RootCertStore::empty();
    for root in roots {
        store.add(root.clone()).unwrap();
    }
    let mut config = rustls::ClientConfig::builder_with_provider(crate::egress::tls::provider())
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(store)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    tokio_rustls::TlsConnector::from(Arc::new(config))
}

pub(super) async fn tls<S: AsyncRead + AsyncWrite + Unpin>(
    stream: S,
    roots: &[CertificateDer<'static>],
    name: &str,
) -> std::io::Result<tokio_rustls::client::TlsStream<S>> {
    let name = ServerName::try_from(name.to_owned()).unwrap();
    tls_client(roots).connect(name, stream).await
}

/// hyper's HTTP/1.1 client on one connection.
pub(super) struct Client(hyper::client::conn::http1::SendRequest<Body>);

impl Client {
    /// Sends once the connection is ready for the next request.
    pub(super) async fn send(&mut self, req: Request<Body>) -> hyper::Result<Response<Incoming>> {
        self.0.ready().await?;
        self.0.send_request(req).await
    }
}

/// An HTTP/1.1 client (hyper) over `stream`.
pub(super) async fn http1<S>(stream: S) -> Client
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (send, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .unwrap();
    tokio::spawn(conn);
    Client(send)
}

/// A response's status, headers as text, and body.
pub(super) async fn read_response(res: Response<Incoming>) -> (u16, String, Vec<u8>) {
    let status = res.status().as_u16();
    let headers = format!("{:?}", res.headers());
    let body = res.into_body().collect().await.unwrap().to_bytes().to_vec();
    (status, headers, body)
}
