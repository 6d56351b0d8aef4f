//! `cargo bench --bench egress`: what the egress gateway costs a worker. A keep-alive HTTPS
//! client (hyper over rustls) talks to a loopback HTTPS upstream (hyper over rustls, its own
//! test CA) three ways: (a) direct, (b) through the gateway's `CONNECT` tunnel, (c) through the
//! gateway with secret injection (TLS ended at the gateway with the job's CA, the placeholder
//! swapped in each request, TLS again to the upstream). The gateway listens on a Unix socket,
//! as it does for a sandbox.
//!
//! Per way, medians over rounds: the latency of a small GET, the download and upload
//! throughput of a large body, and the CPU time the whole process (client, gateway and
//! upstream together) spends per request and per MiB: on a machine with few cores the
//! gateway's share of the CPU is what throughput loss is made of. It prints the added latency
//! and the throughput ratios against direct, and the target met or missed; it never fails on
//! it.
//!
//! Environment knobs (all optional):
//! - `FORGEWARD_BENCH_ROUNDS`: rounds per measurement (default 5).
//! - `FORGEWARD_BENCH_REQUESTS`: small GETs per round (default 2000).
//! - `FORGEWARD_BENCH_MIB`: MiB per large body (default 64).
//! - `FORGEWARD_BENCH_WAYS`: any of `direct`, `tunnel`, `injection` (default all three; the
//!   ratios need `direct`).

mod common;

use std::convert::Infallible;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{env_or, median};
use forgeward::egress::{
    AllowEntry, Connection, EgressLog, Gateway, GatewayConfig, Injection, JobCa, Policy, Secret,
    SecretRule,
};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::client::conn::http1::SendRequest;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, ServerName};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream, UnixListener, UnixStream};

type Body = BoxBody<Bytes, Infallible>;

/// Target: at most this much added per request…
const TARGET_ADDED: Duration = Duration::from_millis(1);
/// …and at least this share of the direct throughput, on a keep-alive connection.
const TARGET_RATIO: f64 = 0.90;

const SMALL: &[u8] = b"hello, world\n";

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// The upstream's CA and its server config for `localhost`.
fn upstream_pki() -> (CertificateDer<'static>, Arc<rustls::ServerConfig>) {
    let ca_key = rcgen::KeyPair::generate().expect("a key");
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("params");
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca_params.key_usages = vec![
        rcgen::KeyUsagePurpose::KeyCertSign,
        rcgen::KeyUsagePurpose::DigitalSignature,
    ];
    let ca = ca_params.self_signed(&ca_key).expect("the CA");
    let issuer = rcgen::Issuer::new(ca_params, ca_key);
    let key = rcgen::KeyPair::generate().expect("a key");
    let leaf = rcgen::CertificateParams::new(vec!["localhost".to_owned()])
        .expect("params")
        .signed_by(&key, &issuer)
        .expect("the leaf");
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()));
    let mut config = rustls::ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .expect("TLS versions")
        .with_no_client_auth()
        .with_single_cert(vec![leaf.der().clone()], key)
        .expect("the server config");
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    (ca.der().clone(), Arc::new(config))
}

/// `/small`: 13 bytes; `/big`: the large body; `/sink`: reads the body, answers its length.
async fn serve(req: Request<Incoming>, big: Bytes) -> Response<Body> {
    match req.uri().path() {
        "/big" => Response::new(Full::new(big).boxed()),
        "/sink" => {
            let mut n = 0usize;
            let mut body = req.into_body();
            while let Some(Ok(frame)) = body.frame().await {
                if let Ok(data) = frame.into_data() {
                    n += data.len();
                }
            }
            Response::new(Full::new(Bytes::from(n.to_string())).boxed())
        }
        _ => Response::new(Full::new(Bytes::from_static(SMALL)).boxed()),
    }
}

async fn start_upstream(config: Arc<rustls::ServerConfig>, big: Bytes) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("binding");
    let port = listener.local_addr().expect("an address").port();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let _ = tcp.set_nodelay(true);
            let acceptor = tokio_rustls::TlsAcceptor::from(config.clone());
            let big = big.clone();
            tokio::spawn(async move {
                let Ok(tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let service = hyper::service::service_fn(move |req| {
                    let big = big.clone();
                    async move { Ok::<_, Infallible>(serve(req, big).await) }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(tls), service)
                    .await;
            });
        }
    });
    port
}

struct Quiet;

impl EgressLog for Quiet {
    fn connection(&self, _: &Connection) {}
}

fn tls_connector(root: &CertificateDer<'static>) -> tokio_rustls::TlsConnector {
    let mut roots = rustls::RootCertStore::empty();
    roots.add(root.clone()).expect("a root");
    let mut config = rustls::ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .expect("TLS versions")
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    tokio_rustls::TlsConnector::from(Arc::new(config))
}

async fn http1<S>(stream: S) -> SendRequest<Body>
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (send, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .expect("the HTTP handshake");
    tokio::spawn(conn);
    send
}

/// How the client reaches the upstream.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Way {
    Direct,
    Tunnel,
    Injected,
}

impl Way {
    fn label(self) -> &'static str {
        match self {
            Way::Direct => "direct",
            Way::Tunnel => "CONNECT tunnel",
            Way::Injected => "secret injection",
        }
    }
}

struct Setup {
    port: u16,
    upstream_ca: CertificateDer<'static>,
    /// The gateway without secrets (tunnels) and with one (injection).
    tunnel_socket: std::path::PathBuf,
    inject_socket: std::path::PathBuf,
    job_ca: CertificateDer<'static>,
    placeholder: String,
}

/// A keep-alive client the given way.
async fn client(setup: &Setup, way: Way) -> SendRequest<Body> {
    let name = ServerName::try_from("localhost").expect("a name");
    match way {
        Way::Direct => {
            let tcp = TcpStream::connect(("127.0.0.1", setup.port))
                .await
                .expect("connecting");
            tcp.set_nodelay(true).expect("nodelay");
            let tls = tls_connector(&setup.upstream_ca)
                .connect(name, tcp)
                .await
                .expect("TLS");
            http1(tls).await
        }
        Way::Tunnel | Way::Injected => {
            let (socket, root) = if way == Way::Tunnel {
                (&setup.tunnel_socket, &setup.upstream_ca)
            } else {
                (&setup.inject_socket, &setup.job_ca)
            };
            let mut unix = UnixStream::connect(socket).await.expect("the gateway");
            unix.write_all(format!("CONNECT localhost:{} HTTP/1.1\r\n\r\n", setup.port).as_bytes())
                .await
                .expect("CONNECT");
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") {
                unix.read_exact(&mut byte)
                    .await
                    .expect("the CONNECT answer");
                head.push(byte[0]);
            }
            assert!(
                head.starts_with(b"HTTP/1.1 200"),
                "{}",
                String::from_utf8_lossy(&head)
            );
            let tls = tls_connector(root)
                .connect(name, unix)
                .await
                .expect("TLS through the gateway");
            http1(tls).await
        }
    }
}

fn request(setup: &Setup, way: Way, method: &str, path: &str, body: Body) -> Request<Body> {
    let mut req = Request::builder()
        .method(method)
        .uri(path)
        .header("host", format!("localhost:{}", setup.port));
    if way == Way::Injected {
        req = req.header("x-api-key", &setup.placeholder);
    }
    req.body(body).expect("a request")
}

/// The calling thread's CPU time.
fn thread_cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes a timespec into the pointer it is given.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

enum Command {
    Cpu(tokio::sync::oneshot::Sender<Duration>),
    Shutdown(tokio::sync::oneshot::Sender<Vec<String>>),
}

/// Both gateways on a thread and a current-thread runtime of their own, so that their CPU
/// time is that thread's.
struct GatewayThread {
    commands: tokio::sync::mpsc::UnboundedSender<Command>,
    thread: std::thread::JoinHandle<()>,
}

impl GatewayThread {
    fn start(configs: Vec<(std::path::PathBuf, GatewayConfig)>) -> GatewayThread {
        let (commands, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("the gateway's runtime");
            runtime.block_on(async move {
                let mut gateways = Vec::new();
                for (path, config) in configs {
                    let listener = UnixListener::bind(&path).expect("binding the socket");
                    gateways.push(Gateway::start(listener, config));
                }
                ready_tx.send(()).expect("the main thread");
                while let Some(command) = rx.recv().await {
                    match command {
                        Command::Cpu(reply) => {
                            let _ = reply.send(thread_cpu());
                        }
                        Command::Shutdown(reply) => {
                            let mut totals = Vec::new();
                            for gateway in gateways.drain(..) {
                                totals.push(gateway.shutdown().await.to_string());
                            }
                            let _ = reply.send(totals);
                            return;
                        }
                    }
                }
            });
        });
        ready_rx.recv().expect("the gateways started");
        GatewayThread { commands, thread }
    }

    async fn cpu(&self) -> Duration {
        let (tx, rx) = tokio::sync::oneshot::channel();
        self.commands
            .send(Command::Cpu(tx))
            .expect("the gateway thread");
        rx.await.expect("the gateway thread's CPU time")
    }

    async fn shutdown(self) -> Vec<String> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        self.commands
            .send(Command::Shutdown(tx))
            .expect("the gateway thread");
        let totals = rx.await.expect("the totals");
        self.thread.join().expect("the gateway thread ended");
        totals
    }
}

#[derive(Default)]
struct Figures {
    latency: Vec<Duration>,
    download: Vec<f64>,
    upload: Vec<f64>,
    /// The gateway thread's CPU per small request and per MiB moved.
    cpu_per_request: Vec<Duration>,
    cpu_per_mib: Vec<Duration>,
}

fn median_f64(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn mb_per_s(mib: usize, elapsed: Duration) -> f64 {
    (mib << 20) as f64 / 1e6 / elapsed.as_secs_f64()
}

async fn measure(
    setup: &Setup,
    gateway: &GatewayThread,
    way: Way,
    rounds: usize,
    requests: usize,
    mib: usize,
) -> Figures {
    let mut figures = Figures::default();
    let mut send = client(setup, way).await;
    // Warm-up: the handshakes, the leaf certificate, the upstream connection.
    for _ in 0..50 {
        send.ready().await.expect("the connection");
        let res = send
            .send_request(request(
                setup,
                way,
                "GET",
                "/small",
                Full::new(Bytes::new()).boxed(),
            ))
            .await
            .expect("a warm-up request");
        res.into_body().collect().await.expect("a body");
    }
    let upload = Bytes::from(vec![b'u'; mib << 20]);
    for _ in 0..rounds {
        let (t, c) = (Instant::now(), gateway.cpu().await);
        for _ in 0..requests {
            send.ready().await.expect("the connection");
            let res = send
                .send_request(request(
                    setup,
                    way,
                    "GET",
                    "/small",
                    Full::new(Bytes::new()).boxed(),
                ))
                .await
                .expect("a small request");
            let body = res.into_body().collect().await.expect("a body").to_bytes();
            assert_eq!(&body[..], SMALL);
        }
        figures.latency.push(t.elapsed() / requests as u32);
        figures
            .cpu_per_request
            .push((gateway.cpu().await - c) / requests as u32);

        let (t, c) = (Instant::now(), gateway.cpu().await);
        send.ready().await.expect("the connection");
        let res = send
            .send_request(request(
                setup,
                way,
                "GET",
                "/big",
                Full::new(Bytes::new()).boxed(),
            ))
            .await
            .expect("a large download");
        let mut body = res.into_body();
        let mut n = 0usize;
        while let Some(frame) = body.frame().await {
            if let Ok(data) = frame.expect("a frame").into_data() {
                n += data.len();
            }
        }
        assert_eq!(n, mib << 20);
        figures.download.push(mb_per_s(mib, t.elapsed()));

        let t = Instant::now();
        send.ready().await.expect("the connection");
        let res = send
            .send_request(request(
                setup,
                way,
                "POST",
                "/sink",
                Full::new(upload.clone()).boxed(),
            ))
            .await
            .expect("a large upload");
        let got = res.into_body().collect().await.expect("a body").to_bytes();
        assert_eq!(got, (mib << 20).to_string());
        figures.upload.push(mb_per_s(mib, t.elapsed()));
        figures
            .cpu_per_mib
            .push((gateway.cpu().await - c) / (2 * mib) as u32);
    }
    figures
}

fn main() {
    let rounds = env_or("FORGEWARD_BENCH_ROUNDS", 5).max(1);
    let requests = env_or("FORGEWARD_BENCH_REQUESTS", 2000).max(1);
    let mib = env_or("FORGEWARD_BENCH_MIB", 64).max(1);
    let ways = std::env::var("FORGEWARD_BENCH_WAYS")
        .unwrap_or_else(|_| "direct,tunnel,injection".to_owned());
    // The client and the upstream; the gateways get a thread of their own.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let started = Instant::now();
    let dir = tempfile::tempdir().expect("a temporary directory");
    let (upstream_ca, server) = upstream_pki();
    let port = runtime.block_on(start_upstream(server, Bytes::from(vec![b'd'; mib << 20])));
    let policy = Arc::new(Policy::new(
        [format!("localhost:{port}"), format!("127.0.0.1:{port}")]
            .iter()
            .map(|e| e.parse::<AllowEntry>().expect("an entry"))
            .collect(),
    ));
    let ca = Arc::new(JobCa::generate().expect("the job CA"));
    let secret = Secret::new(
        SecretRule {
            env: "BENCH_API_KEY".to_owned(),
            hosts: vec!["localhost".to_owned()],
            injection: Injection::Header("x-api-key".to_owned()),
        },
        "sk-bench-real-value-0123456789".to_owned(),
    );
    let setup = Setup {
        port,
        upstream_ca: upstream_ca.clone(),
        tunnel_socket: dir.path().join("tunnel.sock"),
        inject_socket: dir.path().join("inject.sock"),
        job_ca: ca.cert_der().clone(),
        placeholder: secret.placeholder.clone(),
    };
    let mut configs = Vec::new();
    for (path, secrets) in [
        (setup.tunnel_socket.clone(), Vec::new()),
        (setup.inject_socket.clone(), vec![secret]),
    ] {
        let mut config = GatewayConfig::new(policy.clone(), secrets, ca.clone(), Arc::new(Quiet));
        config.extra_roots = vec![upstream_ca.clone()];
        configs.push((path, config));
    }
    let gateway = GatewayThread::start(configs);

    runtime.block_on(async {
        println!(
            "egress gateway: keep-alive HTTPS to a loopback upstream, medians of {rounds} rounds \
             ({requests} small GETs, {mib} MiB down and up, per round; {} cores)\n",
            std::thread::available_parallelism().map_or(1, |n| n.get())
        );
        println!(
            "{:<18} {:>12} {:>10} {:>10} {:>7} {:>10} {:>7} {:>13} {:>13}",
            "",
            "latency/req",
            "added",
            "down MB/s",
            "ratio",
            "up MB/s",
            "ratio",
            "gateway CPU/",
            "gateway CPU/"
        );
        println!("{:>94} {:>13}", "request", "MiB");
        let mut direct: Option<(Duration, f64, f64)> = None;
        let mut latency_met = true;
        let mut ratio_met = true;
        let mut cpu_lines = Vec::new();
        let chosen = [
            (Way::Direct, "direct"),
            (Way::Tunnel, "tunnel"),
            (Way::Injected, "injection"),
        ]
        .into_iter()
        .filter(|(_, name)| ways.contains(name))
        .map(|(way, _)| way);
        for way in chosen {
            let f = measure(&setup, &gateway, way, rounds, requests, mib).await;
            let latency = median(f.latency);
            let down = median_f64(f.download);
            let up = median_f64(f.upload);
            let cpu_request = median(f.cpu_per_request);
            let cpu_mib = median(f.cpu_per_mib);
            let (added, down_ratio, up_ratio) = match direct {
                None if way == Way::Direct => {
                    direct = Some((latency, down, up));
                    ("-".to_owned(), "-".to_owned(), "-".to_owned())
                }
                None => ("?".to_owned(), "?".to_owned(), "?".to_owned()),
                Some((l0, d0, u0)) => {
                    let added = latency.saturating_sub(l0);
                    latency_met &= added < TARGET_ADDED;
                    ratio_met &= down / d0 >= TARGET_RATIO && up / u0 >= TARGET_RATIO;
                    (
                        format!("+{:.0} µs", added.as_secs_f64() * 1e6),
                        format!("{:.2}", down / d0),
                        format!("{:.2}", up / u0),
                    )
                }
            };
            let (cpu_req_text, cpu_mib_text) = if way == Way::Direct {
                ("-".to_owned(), "-".to_owned())
            } else {
                cpu_lines.push(format!(
                    "{}: one core of gateway moves {:.0} MB/s, serves {:.0} small requests/s",
                    way.label(),
                    1.048_576 / cpu_mib.as_secs_f64(),
                    1.0 / cpu_request.as_secs_f64()
                ));
                (
                    format!("{:.0} µs", cpu_request.as_secs_f64() * 1e6),
                    format!("{:.2} ms", cpu_mib.as_secs_f64() * 1e3),
                )
            };
            println!(
                "{:<18} {:>9.0} µs {:>10} {:>10.0} {:>7} {:>10.0} {:>7} {:>13} {:>13}",
                way.label(),
                latency.as_secs_f64() * 1e6,
                added,
                down,
                down_ratio,
                up,
                up_ratio,
                cpu_req_text,
                cpu_mib_text,
            );
        }
        println!();
        for line in cpu_lines {
            println!("{line}");
        }
        let verdict = |met: bool| if met { "met" } else { "missed" };
        println!(
            "target: < {} ms added per request: {}; < {:.0} % throughput loss: {} (client, \
             upstream and gateway share this machine's cores: a loss here is the gateway's CPU \
             taken from the other two)",
            TARGET_ADDED.as_millis(),
            verdict(latency_met),
            (1.0 - TARGET_RATIO) * 100.0,
            verdict(ratio_met),
        );
        for totals in gateway.shutdown().await {
            println!("{totals}");
        }
    });
    println!("({:.1} s in all)", started.elapsed().as_secs_f64());
}
