//! `cargo bench --bench serve`: `forgeward serve` under load. Keep-alive HTTP/1.1 connections
//! send signed `issues.labeled` deliveries (the ~13 KB fixture, each with its own
//! `X-GitHub-Delivery`, so each is a durable delivery + job insert) back to back, against the
//! SQLite store and, when it answers, PostgreSQL. It prints acknowledgements (202s) per second,
//! latency percentiles and the CPU split, checks that the store holds exactly one job per 202,
//! and reports the target met or missed; it never fails on it.
//!
//! Every run (backend × concurrency) gets a fresh server and a fresh store.
//!
//! Environment knobs (all optional):
//! - `FORGEWARD_TEST_POSTGRES_URL`: the PostgreSQL server to create a scratch database on
//!   (default `postgres://postgres:postgres@127.0.0.1:5432/postgres`).
//! - `FORGEWARD_BENCH_SECONDS`: measured seconds per run (default 10).
//! - `FORGEWARD_BENCH_WARMUP`: warm-up seconds per run, not measured (default 2).
//! - `FORGEWARD_BENCH_CONCURRENCY`: comma-separated connection counts (default `8,16,64`).
//! - `FORGEWARD_BENCH_BACKENDS`: any of `sqlite`, `postgres`, `node` (default all three).
//!   `node` is the receiver a Node user would write with the ecosystem's own pieces
//!   (`benches/node-receiver/`: `@octokit/webhooks` to verify, `better-sqlite3` in WAL with
//!   `synchronous=FULL`, the insert before the 202), its packages installed with `npm ci` on
//!   first use (better-sqlite3 built from source against the installed Node's headers); the
//!   summary puts forgeward on SQLite beside it (target: ≥ 5× its acks/s at 16 connections).
//! - `FORGEWARD_BENCH_SHOW_PID=1`: print the server's pid once the measured window starts, for
//!   `perf record -p`, `top -p`.
//!
//! The load generator runs on one thread (a current-thread tokio runtime, a hand-written
//! HTTP/1.1 client) so that the cores stay with the server.

use std::collections::{BTreeMap, HashMap};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hmac::{Hmac, Mac};
use sha2::Sha256;
use sqlx::Connection;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const FORGEWARD: &str = env!("CARGO_BIN_EXE_forgeward");
const SECRET: &str = "bench-secret";
/// The label on the fixture's delivery, made the trigger label.
const LABEL: &str = "bug";
const DEFAULT_POSTGRES_URL: &str = "postgres://postgres:postgres@127.0.0.1:5432/postgres";
/// A request with no answer by then counts as an error (and its connection is reopened).
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

// Target (SQLite).
const TARGET_ACKS_PER_SEC: f64 = 3000.0;
const TARGET_P99_MS: f64 = 20.0;
/// forgeward on SQLite against the Node receiver, at 16 connections.
const TARGET_NODE_RATIO: f64 = 5.0;

/// Other processes' CPU (% of one core), before a run or during its measured window, above
/// which the run's numbers get a warning.
const OTHERS_WARN: f64 = 20.0;

// ---------------------------------------------------------------------------------------------
// Settings.

struct Settings {
    seconds: Duration,
    warmup: Duration,
    concurrency: Vec<usize>,
    sqlite: bool,
    postgres: bool,
    node: bool,
    show_pid: bool,
}

fn env_secs(name: &str, default: f64) -> Duration {
    let secs = std::env::var(name)
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s >= 0.0)
        .unwrap_or(default);
    Duration::from_secs_f64(secs)
}

impl Settings {
    fn from_env() -> Settings {
        let concurrency = std::env::var("FORGEWARD_BENCH_CONCURRENCY")
            .ok()
            .map(|v| {
                v.split(',')
                    .filter_map(|n| n.trim().parse::<usize>().ok())
                    .filter(|&n| n > 0)
                    .collect::<Vec<_>>()
            })
            .filter(|v| !v.is_empty())
            .unwrap_or_else(|| vec![8, 16, 64]);
        let backends = std::env::var("FORGEWARD_BENCH_BACKENDS")
            .unwrap_or_else(|_| "sqlite,postgres,node".to_owned())
            .to_ascii_lowercase();
        Settings {
            seconds: env_secs("FORGEWARD_BENCH_SECONDS", 10.0).max(Duration::from_millis(100)),
            warmup: env_secs("FORGEWARD_BENCH_WARMUP", 2.0),
            concurrency,
            sqlite: backends.contains("sqlite"),
            postgres: backends.contains("postgres"),
            node: backends.contains("node"),
            show_pid: std::env::var("FORGEWARD_BENCH_SHOW_PID").is_ok_and(|v| v == "1"),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The server process.

/// A running `forgeward serve`.
struct Server {
    child: Child,
    addr: String,
    /// Its stderr (warnings and errors only, at RUST_LOG=warn), last lines kept.
    log: Arc<Mutex<Vec<String>>>,
}

impl Server {
    /// Starts the server with its data in `data_dir` and, if given, its store at `store_url`.
    fn start(data_dir: &Path, store_url: Option<&str>) -> Result<Server, String> {
        let mut cmd = Command::new(FORGEWARD);
        cmd.arg("serve")
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("FORGEWARD_SERVER_LISTEN", "127.0.0.1:0")
            .env("FORGEWARD_SERVER_DATA_DIR", data_dir)
            .env("FORGEWARD_GITHUB_WEBHOOK_SECRET", SECRET)
            .env("FORGEWARD_TRIGGER_LABEL", LABEL)
            // Warnings only — but the "listening on" line is `info` in the binary's `serve`.
            .env("RUST_LOG", "warn,forgeward::cli::serve=info")
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        if let Some(url) = store_url {
            cmd.env("FORGEWARD_STORE_URL", url);
        }
        Server::spawn(cmd, "forgeward serve")
    }

    /// Starts the Node receiver with its SQLite file at `db`.
    fn start_node(dir: &Path, db: &Path) -> Result<Server, String> {
        let mut cmd = Command::new("node");
        cmd.arg("receiver.mjs")
            .current_dir(dir)
            .env_clear()
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("PORT", "0")
            .env("DB", db)
            .env("SECRET", SECRET)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        Server::spawn(cmd, "the Node receiver")
    }

    /// Runs `cmd` and waits for its "listening on http://…" line on stderr.
    fn spawn(mut cmd: Command, what: &str) -> Result<Server, String> {
        let mut child = cmd.spawn().map_err(|e| format!("starting {what}: {e}"))?;
        let stderr = child.stderr.take().expect("piped stderr");
        let log = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&log);
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(at) = line.find("listening on http://") {
                    let _ = tx.send(line[at + "listening on http://".len()..].trim().to_owned());
                }
                let mut log = sink.lock().unwrap_or_else(|p| p.into_inner());
                if log.len() >= 50 {
                    log.remove(0);
                }
                log.push(line);
            }
        });
        let mut server = Server {
            child,
            addr: String::new(),
            log,
        };
        match rx.recv_timeout(Duration::from_secs(60)) {
            Ok(addr) => {
                server.addr = addr;
                Ok(server)
            }
            Err(_) => Err(format!("{what} did not start:\n{}", server.log_tail())),
        }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    fn log_tail(&self) -> String {
        self.log
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .join("\n")
    }

    /// Lines other than the start and stop ones: warnings and errors.
    fn complaints(&self) -> Vec<String> {
        self.log
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .filter(|l| l.contains("WARN") || l.contains("ERROR"))
            // The start-up notes about forge credentials the bench does not need.
            .filter(|l| !l.contains("not configured yet"))
            .cloned()
            .collect()
    }

    /// SIGTERM, then waits (SIGKILL after 30 s). The exit code, or None if it had to be killed.
    fn stop(mut self) -> Option<i32> {
        // SAFETY: kill(2) on our own child's pid has no memory effects.
        unsafe { libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM) };
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                return status.code();
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

// ---------------------------------------------------------------------------------------------
// CPU accounting from /proc.

/// (utime, stime) of a process, in clock ticks.
fn proc_ticks(pid: &str) -> Option<[u64; 2]> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may contain spaces: fields start after the ')'.
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // After the name: state(3) ... utime(14) stime(15), i.e. indices 11 and 12 here.
    Some([fields.get(11)?.parse().ok()?, fields.get(12)?.parse().ok()?])
}

/// The machine's CPU ticks from /proc/stat's `cpu` line: user nice system idle iowait irq
/// softirq steal.
fn system_ticks() -> Option<[u64; 8]> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let line = stat.lines().next()?;
    let mut ticks = [0u64; 8];
    for (slot, n) in ticks.iter_mut().zip(line.split_whitespace().skip(1)) {
        *slot = n.parse().ok()?;
    }
    Some(ticks)
}

/// Every other process's ticks by pid, in three groups. A process that starts inside a window
/// counts from zero; one that ends inside it is lost.
#[derive(Default)]
struct ProcTicks {
    postgres: HashMap<u32, u64>,
    kernel_threads: HashMap<u32, u64>,
    others: HashMap<u32, u64>,
}

impl ProcTicks {
    fn scan(skip: &[u32]) -> ProcTicks {
        let mut ticks = ProcTicks::default();
        let Ok(dir) = std::fs::read_dir("/proc") else {
            return ticks;
        };
        for entry in dir.flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<u32>().ok())
            else {
                continue;
            };
            if skip.contains(&pid) {
                continue;
            }
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
                continue;
            };
            let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
                continue;
            };
            let comm = &stat[open + 1..close];
            let fields: Vec<&str> = stat[close + 1..].split_whitespace().collect();
            let num = |i: usize| fields.get(i).and_then(|f| f.parse::<u64>().ok());
            let (Some(ppid), Some(utime), Some(stime)) = (num(1), num(11), num(12)) else {
                continue;
            };
            let group = if pid == 2 || ppid == 2 {
                &mut ticks.kernel_threads
            } else if comm.starts_with("postgres") {
                &mut ticks.postgres
            } else {
                &mut ticks.others
            };
            group.insert(pid, utime + stime);
        }
        ticks
    }
}

/// Ticks gained between two scans of one group.
fn gained(a: &HashMap<u32, u64>, b: &HashMap<u32, u64>) -> u64 {
    b.iter()
        .map(|(pid, t)| t.saturating_sub(a.get(pid).copied().unwrap_or(0)))
        .sum()
}

struct CpuSample {
    at: Instant,
    server: Option<[u64; 2]>,
    bench: Option<[u64; 2]>,
    system: Option<[u64; 8]>,
    procs: ProcTicks,
}

impl CpuSample {
    fn take(server_pid: u32) -> CpuSample {
        CpuSample {
            at: Instant::now(),
            server: proc_ticks(&server_pid.to_string()),
            bench: proc_ticks("self"),
            system: system_ticks(),
            procs: ProcTicks::scan(&[server_pid, std::process::id()]),
        }
    }
}

/// CPU use over a window, in percent of one core (NaN where /proc did not say).
#[derive(Clone, Copy)]
struct CpuUse {
    server_user: f64,
    server_sys: f64,
    bench: f64,
    /// Every `postgres` process: PostgreSQL's backends, WAL writer, checkpointer.
    postgres: f64,
    /// The kernel's own threads (block I/O, writeback, journalling).
    kernel_threads: f64,
    /// Any other process: another build or test sharing the machine.
    others: f64,
    /// The whole machine, everything above included.
    user: f64,
    sys: f64,
    /// Hardware and soft interrupts (loopback networking, block I/O completions).
    irq: f64,
    iowait: f64,
    steal: f64,
    idle: f64,
}

impl CpuUse {
    fn server(&self) -> f64 {
        self.server_user + self.server_sys
    }

    fn busy(&self) -> f64 {
        self.user + self.sys + self.irq + self.steal
    }
}

fn cpu_use(a: &CpuSample, b: &CpuSample) -> CpuUse {
    // SAFETY: sysconf has no memory effects.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    let hz = if hz > 0 { hz as f64 } else { 100.0 };
    let wall = b.at.duration_since(a.at).as_secs_f64().max(1e-9);
    let of_ticks = |ticks: u64| ticks as f64 / hz / wall * 100.0;
    let pct = |x: Option<[u64; 2]>, y: Option<[u64; 2]>, i: usize| match (x, y) {
        (Some(x), Some(y)) => of_ticks(y[i].saturating_sub(x[i])),
        _ => f64::NAN,
    };
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
    let (sys0, sys1) = (a.system.unwrap_or_default(), b.system.unwrap_or_default());
    let total: u64 = (0..8).map(|i| sys1[i].saturating_sub(sys0[i])).sum();
    // Shares of all the machine's ticks, scaled to percent of one core.
    let share = |idx: &[usize]| {
        if total == 0 {
            return f64::NAN;
        }
        let ticks: u64 = idx.iter().map(|&i| sys1[i].saturating_sub(sys0[i])).sum();
        ticks as f64 / total as f64 * 100.0 * cores
    };
    CpuUse {
        server_user: pct(a.server, b.server, 0),
        server_sys: pct(a.server, b.server, 1),
        bench: pct(a.bench, b.bench, 0) + pct(a.bench, b.bench, 1),
        postgres: of_ticks(gained(&a.procs.postgres, &b.procs.postgres)),
        kernel_threads: of_ticks(gained(&a.procs.kernel_threads, &b.procs.kernel_threads)),
        others: of_ticks(gained(&a.procs.others, &b.procs.others)),
        user: share(&[0, 1]),
        sys: share(&[2]),
        irq: share(&[5, 6]),
        iowait: share(&[4]),
        steal: share(&[7]),
        idle: share(&[3]),
    }
}

/// The CPU that processes other than this one, PostgreSQL and the kernel's threads take over
/// `window`, in % of one core.
async fn others_now(window: Duration) -> f64 {
    let a = CpuSample::take(std::process::id());
    tokio::time::sleep(window).await;
    cpu_use(&a, &CpuSample::take(std::process::id())).others
}

// ---------------------------------------------------------------------------------------------
// The load generator: a minimal HTTP/1.1 keep-alive client.

/// What one connection saw.
#[derive(Default)]
struct ConnStats {
    /// 202s over the whole run, warm-up included: what the store must hold.
    acks_total: u64,
    /// 202s completed inside the measured window.
    acks: u64,
    /// Latencies (µs) of the 202s completed inside the measured window.
    latencies: Vec<u32>,
    /// Other statuses, over the whole run.
    statuses: BTreeMap<u16, u64>,
    /// Failures (connect, I/O, timeout, malformed response), over the whole run.
    errors: BTreeMap<String, u64>,
}

/// The request, split around the delivery id so only that changes.
struct Template {
    head: Vec<u8>,
    tail: Vec<u8>,
}

impl Template {
    fn new(addr: &str, body: &[u8], signature: &str) -> Template {
        let head = format!(
            "POST /webhooks/github HTTP/1.1\r\n\
             Host: {addr}\r\n\
             User-Agent: GitHub-Hookshot/bench\r\n\
             Content-Type: application/json\r\n\
             Content-Length: {}\r\n\
             X-GitHub-Event: issues\r\n\
             X-Hub-Signature-256: {signature}\r\n\
             X-GitHub-Delivery: ",
            body.len()
        )
        .into_bytes();
        let mut tail = b"\r\n\r\n".to_vec();
        tail.extend_from_slice(body);
        Template { head, tail }
    }

    fn write_into(&self, buf: &mut Vec<u8>, delivery: &str) {
        buf.clear();
        buf.extend_from_slice(&self.head);
        buf.extend_from_slice(delivery.as_bytes());
        buf.extend_from_slice(&self.tail);
    }
}

enum Exchange {
    Status(u16),
    /// The connection is unusable: reopen it.
    Broken(String),
}

/// Reads one response: the status line and headers up to CRLFCRLF, then Content-Length bytes.
/// `buf` may hold bytes already read; whatever follows the response stays in it.
async fn read_response(stream: &mut TcpStream, buf: &mut Vec<u8>) -> Exchange {
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(at) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
        match stream.read(&mut chunk).await {
            Ok(0) => return Exchange::Broken("connection closed by the server".to_owned()),
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(e) => return Exchange::Broken(format!("read: {}", e.kind())),
        }
        if buf.len() > 64 * 1024 {
            return Exchange::Broken("response headers over 64 KiB".to_owned());
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|s| s.parse::<u16>().ok());
    let Some(status) = status else {
        return Exchange::Broken("malformed status line".to_owned());
    };
    let mut length = None;
    let mut close = false;
    for line in lines {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let name = name.trim();
        if name.eq_ignore_ascii_case("content-length") {
            length = value.trim().parse::<usize>().ok();
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            return Exchange::Broken("chunked response (unsupported by the bench)".to_owned());
        } else if name.eq_ignore_ascii_case("connection") && value.trim() == "close" {
            close = true;
        }
    }
    let Some(length) = length else {
        return Exchange::Broken("response without Content-Length".to_owned());
    };
    while buf.len() < head_end + length {
        match stream.read(&mut chunk).await {
            Ok(0) => return Exchange::Broken("connection closed mid-body".to_owned()),
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(e) => return Exchange::Broken(format!("read: {}", e.kind())),
        }
    }
    buf.drain(..head_end + length);
    if close {
        // Counted for its status; the next request needs a new connection.
        return Exchange::Status(status | 0x8000);
    }
    Exchange::Status(status)
}

async fn connect(addr: &str) -> std::io::Result<TcpStream> {
    let stream = TcpStream::connect(addr).await?;
    stream.set_nodelay(true)?;
    Ok(stream)
}

/// One connection: requests back to back until `end`. Requests completed in
/// `[measure_from, end)` are measured.
async fn connection(
    id: usize,
    addr: Arc<str>,
    template: Arc<Template>,
    stream: TcpStream,
    measure_from: Instant,
    end: Instant,
) -> ConnStats {
    let mut stats = ConnStats::default();
    let mut stream = Some(stream);
    let mut request = Vec::with_capacity(template.head.len() + template.tail.len() + 64);
    let mut response = Vec::with_capacity(4096);
    let mut delivery = String::with_capacity(48);
    let mut seq: u64 = 0;
    let pid = std::process::id();
    while Instant::now() < end {
        let conn = match stream.as_mut() {
            Some(s) => s,
            None => match connect(&addr).await {
                Ok(s) => {
                    response.clear();
                    stream.insert(s)
                }
                Err(e) => {
                    *stats
                        .errors
                        .entry(format!("connect: {}", e.kind()))
                        .or_default() += 1;
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        seq += 1;
        delivery.clear();
        {
            use std::fmt::Write;
            let _ = write!(delivery, "bench-{pid}-{id:04}-{seq:010}");
        }
        template.write_into(&mut request, &delivery);
        let started = Instant::now();
        let exchange = tokio::time::timeout(REQUEST_TIMEOUT, async {
            if let Err(e) = conn.write_all(&request).await {
                return Exchange::Broken(format!("write: {}", e.kind()));
            }
            read_response(conn, &mut response).await
        })
        .await
        .unwrap_or_else(|_| Exchange::Broken("timed out".to_owned()));
        let done = Instant::now();
        match exchange {
            Exchange::Status(raw) => {
                let status = raw & 0x7fff;
                if status == 202 {
                    stats.acks_total += 1;
                    if done >= measure_from && done < end {
                        stats.acks += 1;
                        let micros = done.duration_since(started).as_micros();
                        stats
                            .latencies
                            .push(u32::try_from(micros).unwrap_or(u32::MAX));
                    }
                } else {
                    *stats.statuses.entry(status).or_default() += 1;
                }
                if raw & 0x8000 != 0 {
                    stream = None;
                }
            }
            Exchange::Broken(why) => {
                *stats.errors.entry(why).or_default() += 1;
                stream = None;
            }
        }
    }
    stats
}

struct RunResult {
    backend: &'static str,
    connections: usize,
    measured: Duration,
    acks: u64,
    acks_total: u64,
    /// Sorted, µs.
    latencies: Vec<u32>,
    statuses: BTreeMap<u16, u64>,
    errors: BTreeMap<String, u64>,
    cpu: CpuUse,
    /// Jobs in the store afterwards, or why they could not be counted.
    jobs: Result<u64, String>,
    server_exit: Option<i32>,
    complaints: Vec<String>,
    /// Other processes' CPU (% of one core) just before the server started: other work sharing
    /// the cores makes every number here pessimistic.
    others_before: f64,
}

impl RunResult {
    fn acks_per_sec(&self) -> f64 {
        self.acks as f64 / self.measured.as_secs_f64()
    }

    /// Nearest-rank percentile, in ms.
    fn pct_ms(&self, p: f64) -> f64 {
        if self.latencies.is_empty() {
            return f64::NAN;
        }
        let rank = ((p / 100.0) * self.latencies.len() as f64).ceil() as usize;
        let i = rank.clamp(1, self.latencies.len()) - 1;
        f64::from(self.latencies[i]) / 1000.0
    }

    fn max_ms(&self) -> f64 {
        self.latencies
            .last()
            .map_or(f64::NAN, |&m| f64::from(m) / 1000.0)
    }
}

/// Drives `connections` connections at `addr` for warm-up + measured seconds.
async fn load(
    server: &Server,
    connections: usize,
    template: Arc<Template>,
    settings: &Settings,
) -> Result<(Vec<ConnStats>, Duration, CpuUse), String> {
    let addr: Arc<str> = Arc::from(server.addr.as_str());
    let mut streams = Vec::with_capacity(connections);
    for _ in 0..connections {
        streams.push(
            connect(&addr)
                .await
                .map_err(|e| format!("connecting to {addr}: {e}"))?,
        );
    }
    let start = Instant::now();
    let measure_from = start + settings.warmup;
    let end = measure_from + settings.seconds;
    let tasks: Vec<_> = streams
        .into_iter()
        .enumerate()
        .map(|(id, stream)| {
            tokio::spawn(connection(
                id,
                addr.clone(),
                template.clone(),
                stream,
                measure_from,
                end,
            ))
        })
        .collect();
    tokio::time::sleep_until(measure_from.into()).await;
    let before = CpuSample::take(server.pid());
    if settings.show_pid {
        eprintln!(
            "    measuring now: server pid {} for {:.1} s",
            server.pid(),
            settings.seconds.as_secs_f64()
        );
    }
    tokio::time::sleep_until(end.into()).await;
    let after = CpuSample::take(server.pid());
    let mut stats = Vec::with_capacity(connections);
    for task in tasks {
        stats.push(task.await.map_err(|e| format!("a connection task: {e}"))?);
    }
    Ok((
        stats,
        end.duration_since(measure_from),
        cpu_use(&before, &after),
    ))
}

// ---------------------------------------------------------------------------------------------
// Backends.

#[derive(Clone, Copy, PartialEq, Eq)]
enum Backend {
    Sqlite,
    Postgres,
    /// The Node receiver, on its own SQLite file.
    Node,
}

impl Backend {
    fn name(self) -> &'static str {
        match self {
            Backend::Sqlite => "SQLite",
            Backend::Postgres => "PostgreSQL",
            Backend::Node => "Node",
        }
    }
}

/// The Node receiver's directory, its packages installed (`npm ci`) when they are not yet.
fn node_receiver() -> Result<std::path::PathBuf, String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/node-receiver");
    if dir
        .join("node_modules/better-sqlite3/build/Release")
        .exists()
    {
        return Ok(dir);
    }
    // The headers of the Node that will run it: better-sqlite3's prebuilt binaries come from a
    // host this machine may not reach.
    let exec = Command::new("node")
        .args(["-p", "process.execPath"])
        .output()
        .map_err(|e| format!("node: {e}"))?;
    let exec = String::from_utf8_lossy(&exec.stdout).trim().to_owned();
    let prefix = Path::new(&exec)
        .parent()
        .and_then(Path::parent)
        .ok_or_else(|| format!("no installation prefix for {exec}"))?;
    println!("  installing the Node receiver's packages (npm ci; better-sqlite3 from source) …");
    let status = Command::new("npm")
        .args([
            "ci",
            "--no-audit",
            "--no-fund",
            "--loglevel=error",
            "--build-from-source",
        ])
        .arg(format!("--nodedir={}", prefix.display()))
        .current_dir(&dir)
        .status()
        .map_err(|e| format!("npm: {e}"))?;
    if !status.success() {
        return Err(format!("npm ci in {} failed ({status})", dir.display()));
    }
    Ok(dir)
}

/// The jobs the Node receiver stored.
async fn count_node_jobs(db: &Path) -> Result<u64, String> {
    let url = format!("sqlite://{}", db.display());
    let mut conn = sqlx::SqliteConnection::connect(&url)
        .await
        .map_err(|e| e.to_string())?;
    let (n,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM jobs")
        .fetch_one(&mut conn)
        .await
        .map_err(|e| e.to_string())?;
    Ok(n.max(0) as u64)
}

/// `url` with its database name replaced by `db`.
fn with_database(url: &str, db: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("postgres", url));
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i + 1..]),
        None => (rest, ""),
    };
    let query = path.find('?').map_or("", |i| &path[i..]);
    format!("{scheme}://{authority}/{db}{query}")
}

/// The password in a URL replaced by `***`, for printing.
fn redacted(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let Some(at) = rest.find('@') else {
        return url.to_owned();
    };
    match rest[..at].split_once(':') {
        Some((user, _)) => format!("{scheme}://{user}:***{}", &rest[at..]),
        None => url.to_owned(),
    }
}

/// A PostgreSQL server the bench may create databases on.
struct Postgres {
    admin_url: String,
    db: String,
}

impl Postgres {
    async fn exec(&self, sql: &str) -> Result<(), String> {
        let mut conn = sqlx::PgConnection::connect(&self.admin_url)
            .await
            .map_err(|e| e.to_string())?;
        sqlx::raw_sql(sql)
            .execute(&mut conn)
            .await
            .map_err(|e| e.to_string())?;
        let _ = conn.close().await;
        Ok(())
    }

    async fn fresh(&self) -> Result<String, String> {
        self.exec(&format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.db))
            .await?;
        self.exec(&format!("CREATE DATABASE {}", self.db)).await?;
        Ok(with_database(&self.admin_url, &self.db))
    }

    async fn drop_db(&self) {
        if let Err(e) = self
            .exec(&format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.db))
            .await
        {
            println!("  (could not drop the database {}: {e})", self.db);
        }
    }
}

/// Jobs in the store at `url`.
async fn count_jobs(url: &str) -> Result<u64, String> {
    let store = forgeward::store::Store::open(url)
        .await
        .map_err(|e| e.to_string())?;
    let counts = store.job_counts().await.map_err(|e| e.to_string())?;
    Ok(counts.iter().map(|(_, n)| *n).sum::<i64>().max(0) as u64)
}

async fn run(
    backend: Backend,
    connections: usize,
    pg: Option<&Postgres>,
    template_for: &dyn Fn(&str) -> Template,
    settings: &Settings,
) -> Result<RunResult, String> {
    let dir = tempfile::Builder::new()
        .prefix("forgeward-bench-serve-")
        .tempdir()
        .map_err(|e| format!("a temp dir: {e}"))?;
    let store_url = match (backend, pg) {
        (Backend::Sqlite | Backend::Node, _) => None,
        (Backend::Postgres, Some(pg)) => Some(pg.fresh().await?),
        (Backend::Postgres, None) => return Err("no PostgreSQL".to_owned()),
    };
    let others_before = others_now(Duration::from_secs(1)).await;
    let node_db = dir.path().join("node.db");
    let server = match backend {
        Backend::Node => Server::start_node(&node_receiver()?, &node_db)?,
        _ => Server::start(dir.path(), store_url.as_deref())?,
    };
    let template = Arc::new(template_for(&server.addr));
    let loaded = load(&server, connections, template, settings).await;
    let complaints = server.complaints();
    let server_exit = server.stop();
    let (stats, measured, cpu) = loaded?;

    let count_url = store_url
        .clone()
        .unwrap_or_else(|| format!("sqlite://{}", dir.path().join("forgeward.db").display()));
    let jobs = match backend {
        Backend::Node => count_node_jobs(&node_db).await,
        _ => count_jobs(&count_url).await,
    };

    let mut result = RunResult {
        backend: backend.name(),
        connections,
        measured,
        acks: 0,
        acks_total: 0,
        latencies: Vec::new(),
        statuses: BTreeMap::new(),
        errors: BTreeMap::new(),
        cpu,
        jobs,
        server_exit,
        complaints,
        others_before,
    };
    for s in stats {
        result.acks += s.acks;
        result.acks_total += s.acks_total;
        result.latencies.extend_from_slice(&s.latencies);
        for (k, v) in s.statuses {
            *result.statuses.entry(k).or_default() += v;
        }
        for (k, v) in s.errors {
            *result.errors.entry(k).or_default() += v;
        }
    }
    result.latencies.sort_unstable();
    Ok(result)
}

// ---------------------------------------------------------------------------------------------
// Output.

fn print_header() {
    println!(
        "  {:<10} {:>5} {:>9} {:>8} {:>8} {:>8} {:>8} {:>7} {:>7} {:>7} {:>7}",
        "backend",
        "conns",
        "acks/s",
        "p50 ms",
        "p90 ms",
        "p99 ms",
        "max ms",
        "srv%",
        "bench%",
        "all%",
        "other"
    );
}

fn print_row(r: &RunResult) {
    let other: u64 = r.statuses.values().sum::<u64>() + r.errors.values().sum::<u64>();
    println!(
        "  {:<10} {:>5} {:>9.0} {:>8.2} {:>8.2} {:>8.2} {:>8.2} {:>7.0} {:>7.0} {:>7.0} {:>7}",
        r.backend,
        r.connections,
        r.acks_per_sec(),
        r.pct_ms(50.0),
        r.pct_ms(90.0),
        r.pct_ms(99.0),
        r.max_ms(),
        r.cpu.server(),
        r.cpu.bench,
        r.cpu.busy(),
        other
    );
}

fn print_details(r: &RunResult) {
    for (status, n) in &r.statuses {
        println!("      status {status}: {n}");
    }
    for (why, n) in &r.errors {
        println!("      error {why}: {n}");
    }
    let c = &r.cpu;
    println!(
        "      cpu (% of one core): server {:.0} (user {:.0}, sys {:.0}), load generator {:.0}, \
         PostgreSQL {:.0}, kernel threads {:.0}, other processes {:.0}",
        c.server(),
        c.server_user,
        c.server_sys,
        c.bench,
        c.postgres,
        c.kernel_threads,
        c.others
    );
    println!(
        "      machine: user {:.0}, sys {:.0}, irq {:.0}, steal {:.0}, iowait {:.0}, idle {:.0}",
        c.user, c.sys, c.irq, c.steal, c.iowait, c.idle
    );
    if r.others_before > OTHERS_WARN {
        println!(
            "      WARNING: other processes took {:.0}% of a core just before this run: these \
             numbers are pessimistic",
            r.others_before
        );
    }
    if c.others > OTHERS_WARN {
        println!(
            "      WARNING: other processes took {:.0}% of a core during the measured window: these \
             numbers are pessimistic",
            c.others
        );
    }
    match &r.jobs {
        Ok(jobs) if *jobs == r.acks_total => println!(
            "      durability: OK — {jobs} jobs stored for {} acknowledgements (warm-up included)",
            r.acks_total
        ),
        Ok(jobs) => println!(
            "      durability: MISMATCH — {jobs} jobs stored for {} acknowledgements",
            r.acks_total
        ),
        Err(e) => println!("      durability: could not count the jobs: {e}"),
    }
    match r.server_exit {
        Some(0) => {}
        Some(code) => println!("      server exited with {code} on SIGTERM"),
        None => println!("      server did not stop within 30 s of SIGTERM (killed)"),
    }
    if !r.complaints.is_empty() {
        println!(
            "      server warnings/errors (last {}):",
            r.complaints.len()
        );
        for line in r.complaints.iter().rev().take(5).rev() {
            println!("        {line}");
        }
    }
}

fn meets_target(r: &RunResult) -> bool {
    r.acks_per_sec() >= TARGET_ACKS_PER_SEC && r.pct_ms(99.0) <= TARGET_P99_MS
}

// ---------------------------------------------------------------------------------------------

fn sign(body: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(SECRET.as_bytes()).expect("any key length");
    mac.update(body);
    format!("sha256={}", hex::encode(mac.finalize().into_bytes()))
}

fn main() {
    let settings = Settings::from_env();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/webhooks/github/issues.labeled.json");
    let body =
        std::fs::read(&fixture).unwrap_or_else(|e| panic!("reading {}: {e}", fixture.display()));
    let signature = sign(&body);
    let template_for = |addr: &str| Template::new(addr, &body, &signature);

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");

    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "forgeward serve under load: {} B signed issues.labeled deliveries, each with its own \
         X-GitHub-Delivery; {:.0} s warm-up + {:.0} s measured per run; {cores} cores",
        body.len(),
        settings.warmup.as_secs_f64(),
        settings.seconds.as_secs_f64()
    );
    println!("  binary: {FORGEWARD}");

    runtime.block_on(async {
        let mut backends = Vec::new();
        if settings.sqlite {
            backends.push(Backend::Sqlite);
        }
        let mut pg = None;
        if settings.postgres {
            let url = std::env::var("FORGEWARD_TEST_POSTGRES_URL")
                .unwrap_or_else(|_| DEFAULT_POSTGRES_URL.to_owned());
            let candidate = Postgres {
                admin_url: url.clone(),
                db: format!("forgeward_bench_{}", std::process::id()),
            };
            match tokio::time::timeout(Duration::from_secs(10), candidate.exec("SELECT 1")).await {
                Ok(Ok(())) => {
                    println!(
                        "  PostgreSQL: {} (database {})",
                        redacted(&url),
                        candidate.db
                    );
                    pg = Some(candidate);
                    backends.push(Backend::Postgres);
                }
                Ok(Err(e)) => println!(
                    "  PostgreSQL at {} is unreachable ({e}): SQLite only. Set \
                     FORGEWARD_TEST_POSTGRES_URL to bench it.",
                    redacted(&url)
                ),
                Err(_) => println!(
                    "  PostgreSQL at {} did not answer within 10 s: SQLite only. Set \
                     FORGEWARD_TEST_POSTGRES_URL to bench it.",
                    redacted(&url)
                ),
            }
        }
        if settings.node {
            match node_receiver() {
                Ok(dir) => {
                    println!("  Node receiver: {}", dir.display());
                    backends.push(Backend::Node);
                }
                Err(e) => println!("  the Node receiver cannot run here ({e}): not compared"),
            }
        }
        println!(
            "  columns: acks/s = 202s per second; latencies of 202s; srv% / bench% = CPU of the \
             server / this load generator, all% = the whole machine busy (PostgreSQL and the \
             kernel too), in % of one core"
        );
        println!();

        let mut results = Vec::new();
        for &backend in &backends {
            println!("{}:", backend.name());
            print_header();
            for &n in &settings.concurrency {
                match run(backend, n, pg.as_ref(), &template_for, &settings).await {
                    Ok(r) => {
                        print_row(&r);
                        print_details(&r);
                        results.push(r);
                    }
                    Err(e) => println!("  {:<10} {n:>5}  run failed: {e}", backend.name()),
                }
            }
            println!();
        }
        if let Some(pg) = &pg {
            pg.drop_db().await;
        }

        println!("Summary:");
        print_header();
        for r in &results {
            print_row(r);
        }
        println!();
        let target =
            format!("SQLite ≥ {TARGET_ACKS_PER_SEC:.0} acks/s with p99 ≤ {TARGET_P99_MS:.0} ms");
        let sqlite: Vec<&RunResult> = results.iter().filter(|r| r.backend == "SQLite").collect();
        for r in &sqlite {
            println!(
                "  target: {target} at {:>2} connections: {:.0} acks/s, p99 {:.2} ms — {}",
                r.connections,
                r.acks_per_sec(),
                r.pct_ms(99.0),
                if meets_target(r) { "met" } else { "missed" }
            );
        }
        for r in &sqlite {
            let node = results
                .iter()
                .find(|n| n.backend == "Node" && n.connections == r.connections);
            if let Some(node) = node {
                let ratio = r.acks_per_sec() / node.acks_per_sec().max(1.0);
                println!(
                    "  beside the Node receiver at {:>2} connections: {:.0} vs {:.0} acks/s ({ratio:.2}×), \
                     p99 {:.2} vs {:.2} ms{}",
                    r.connections,
                    r.acks_per_sec(),
                    node.acks_per_sec(),
                    r.pct_ms(99.0),
                    node.pct_ms(99.0),
                    if r.connections == 16 {
                        format!(
                            " — target ≥ {TARGET_NODE_RATIO:.0}× with p99 ≤ {TARGET_P99_MS:.0} ms: {}",
                            if ratio >= TARGET_NODE_RATIO && r.pct_ms(99.0) <= TARGET_P99_MS {
                                "met"
                            } else {
                                "missed"
                            }
                        )
                    } else {
                        String::new()
                    }
                );
            }
        }
        let met: Vec<String> = sqlite
            .iter()
            .filter(|r| meets_target(r))
            .map(|r| r.connections.to_string())
            .collect();
        if sqlite.is_empty() {
            println!("  target SQLite: not measured");
        } else if met.is_empty() {
            println!("  target: {target} — missed at every concurrency");
        } else {
            println!(
                "  target: {target} — met (at {} connections)",
                met.join(", ")
            );
        }
    });
}
