//! The receiver under hostile load, through the real binary on loopback: clients that hold
//! connections without a word, a body a byte at a time, a flood beyond what the store's writer
//! takes, and a soak of mixed traffic. Bounded in count and time; the soak lasts
//! `FORGEWARD_SOAK_SECS` (`tests/run` gives it ten minutes; 30 s when unset).

use std::collections::HashSet;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use forgeward::forge::Forge;
use tempfile::TempDir;

use crate::serve::{Bot, SECRET, labeled, sign};

/// `host:port` of the bot.
fn address(bot: &Bot) -> String {
    bot.url.trim_start_matches("http://").to_owned()
}

/// Lets this test process open more connections than the bot may.
fn raise_own_descriptor_limit() {
    forgeward::server::raise_descriptor_limit(65_536);
}

/// `forgeward_connections_open` as `/metrics` says.
async fn connections_open(bot: &Bot) -> u64 {
    let (_, metrics) = bot.get("/metrics").await;
    metrics
        .lines()
        .find_map(|l| l.strip_prefix("forgeward_connections_open "))
        .and_then(|v| v.trim().parse::<f64>().ok())
        .unwrap_or_else(|| panic!("no connections gauge in:\n{metrics}")) as u64
}

/// `n` connections that each send half a request line and then nothing.
fn half_open(address: &str, n: usize) -> Vec<TcpStream> {
    (0..n)
        .filter_map(|_| {
            let mut stream = TcpStream::connect(address).ok()?;
            stream.write_all(b"POST /webhooks/github HT").ok()?;
            Some(stream)
        })
        .collect()
}

/// Whether the bot has closed `stream` (end of file or a reset), waiting up to `wait`.
fn closed(stream: &mut TcpStream, wait: Duration) -> bool {
    let _ = stream.set_read_timeout(Some(wait));
    let mut buf = [0u8; 256];
    loop {
        match stream.read(&mut buf) {
            Ok(0) => return true,
            // A 408 or another answer before the close: read on to the end.
            Ok(_) => continue,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                return false;
            }
            Err(_) => return true,
        }
    }
}

/// A signed `issues` delivery on a fresh connection: its status and `Retry-After`.
async fn deliver(url: &str, id: &str, body: &[u8]) -> Result<(u16, Option<String>), String> {
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .timeout(Duration::from_secs(15))
        .build()
        .map_err(|e| e.to_string())?;
    let response = client
        .post(format!("{url}/webhooks/github"))
        .header("X-GitHub-Event", "issues")
        .header("X-GitHub-Delivery", id)
        .header("X-Hub-Signature-256", sign(SECRET, body))
        .header("content-type", "application/json")
        .body(body.to_vec())
        .send()
        .await
        .map_err(|e| e.to_string())?;
    let retry_after = response
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    Ok((response.status().as_u16(), retry_after))
}

/// The bot's resident memory, in KiB.
fn resident_kib(bot: &Bot) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{}/status", bot.child.id()))
        .expect("the bot's /proc status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS")
}

/// Every delivery in `acknowledged` is in the bot's store.
async fn all_stored<'a>(bot: &Bot, acknowledged: impl IntoIterator<Item = &'a String>) {
    let store = bot.store().await;
    for id in acknowledged {
        assert!(
            store
                .delivery_exists(Forge::GitHub, id)
                .await
                .expect("query"),
            "{id} was acknowledged but is not in the store"
        );
    }
}

fn p99(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[(times.len() * 99 / 100).min(times.len() - 1)]
}

#[tokio::test(flavor = "multi_thread")]
async fn slow_clients_beyond_the_descriptor_limit_do_not_stop_acknowledgements() {
    raise_own_descriptor_limit();
    let dir = TempDir::new().expect("tempdir");
    // 256 descriptors: room for 128 connections once the bot's own are kept back.
    let bot = Bot::start_with(
        dir.path(),
        &[("FORGEWARD_SERVER_HEAD_TIMEOUT", "3s")],
        Some(256),
    );
    let at = address(&bot);
    let attack = at.clone();
    let mut slow = tokio::task::spawn_blocking(move || half_open(&attack, 400))
        .await
        .expect("the slow clients");
    assert!(
        slow.len() > 256,
        "only {} slow clients connected",
        slow.len()
    );

    let mut times = Vec::new();
    for i in 0..30u64 {
        // The attack goes on between deliveries.
        let attack = at.clone();
        let more = tokio::task::spawn_blocking(move || half_open(&attack, 3));
        let started = Instant::now();
        let (status, _) = deliver(&bot.url, &format!("under-attack-{i}"), &labeled(100 + i))
            .await
            .unwrap_or_else(|e| panic!("delivery {i}: {e}\n{}", bot.log()));
        let took = started.elapsed();
        assert_eq!(status, 202, "delivery {i}\n{}", bot.log());
        assert!(took < Duration::from_secs(1), "delivery {i} took {took:?}");
        times.push(took);
        slow.extend(more.await.expect("more slow clients"));
    }
    let (status, body) = bot.get("/healthz").await;
    assert_eq!((status, body.as_str()), (200, "ok\n"));
    // The slow clients hold what the cap allows, and no more.
    let open = connections_open(&bot).await;
    assert!((2..=128).contains(&open), "{open} connections open");
    eprintln!(
        "under {} slow clients: 30 deliveries answered, p99 {:?}",
        slow.len(),
        p99(times)
    );

    // Every slow connection is closed: made room for, or at the head deadline.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let still_open = tokio::task::spawn_blocking(move || {
        slow.iter_mut()
            .map(|s| closed(s, Duration::from_secs(3)))
            .filter(|closed| !closed)
            .count()
    })
    .await
    .expect("checking the slow clients");
    assert_eq!(
        still_open, 0,
        "slow connections still open after the deadline"
    );
    // The metrics' own connection, and maybe one closing.
    let open = connections_open(&bot).await;
    assert!(open <= 2, "{open} connections still counted open");
    let store = bot.store().await;
    assert_eq!(store.jobs().await.expect("jobs").len(), 30);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_body_sent_a_byte_at_a_time_is_cut_off_at_the_deadline_and_nothing_is_stored() {
    let dir = TempDir::new().expect("tempdir");
    let bot = Bot::start_with(dir.path(), &[("FORGEWARD_SERVER_BODY_TIMEOUT", "2s")], None);
    let body = labeled(7);
    let head = format!(
        "POST /webhooks/github HTTP/1.1\r\nHost: {}\r\nX-GitHub-Event: issues\r\n\
         X-GitHub-Delivery: slow-body\r\nX-Hub-Signature-256: {}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        address(&bot),
        sign(SECRET, &body),
        body.len()
    );
    let started = Instant::now();
    let mut stream = TcpStream::connect(address(&bot)).expect("connecting");
    stream.write_all(head.as_bytes()).expect("the head");
    let mut writer = stream.try_clone().expect("a second handle");
    let trickle = std::thread::spawn(move || {
        for byte in body {
            if writer.write_all(&[byte]).is_err() {
                return;
            }
            std::thread::sleep(Duration::from_secs(1));
        }
    });
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("a timeout");
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    let took = started.elapsed();
    let answer = String::from_utf8_lossy(&answer);
    assert!(
        answer.starts_with("HTTP/1.1 408"),
        "{answer}\n{}",
        bot.log()
    );
    assert!(answer.contains("did not arrive within 2 s"), "{answer}");
    assert!(
        took >= Duration::from_secs(2) && took < Duration::from_secs(5),
        "answered after {took:?}"
    );
    drop(stream);
    let _ = trickle.join();
    let store = bot.store().await;
    assert!(
        !store
            .delivery_exists(Forge::GitHub, "slow-body")
            .await
            .expect("query")
    );
    let (_, metrics) = bot.get("/metrics").await;
    assert!(
        metrics.contains("forgeward_connections_timed_out_total{phase=\"body\"} 1"),
        "{metrics}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_flood_beyond_the_writer_is_shed_with_retry_after_and_every_acknowledgement_is_durable() {
    raise_own_descriptor_limit();
    let dir = TempDir::new().expect("tempdir");
    // One write may wait for the writer: a burst of hundreds overflows it.
    let bot = Bot::start_with(dir.path(), &[("FORGEWARD_STORE_QUEUE", "1")], None);
    let before = resident_kib(&bot);
    let mut burst = tokio::task::JoinSet::new();
    // All at once: each task connects, then waits for the others before it sends.
    let together = std::sync::Arc::new(tokio::sync::Barrier::new(400));
    for i in 0..400u64 {
        let (url, together) = (bot.url.clone(), together.clone());
        burst.spawn(async move {
            let id = format!("flood-{i}");
            let body = labeled(1000 + i);
            together.wait().await;
            (id.clone(), deliver(&url, &id, &body).await)
        });
    }
    let (mut acknowledged, mut shed, mut readiness) = (HashSet::new(), 0, None);
    while let Some(done) = burst.join_next().await {
        let (id, answer) = done.expect("a delivery task");
        match answer {
            Ok((202, _)) => {
                acknowledged.insert(id);
            }
            Ok((503, retry_after)) => {
                assert_eq!(retry_after.as_deref(), Some("1"), "{id}");
                shed += 1;
                if readiness.is_none() {
                    readiness = Some(bot.get("/readyz").await);
                }
            }
            other => panic!("{id}: {other:?}\n{}", bot.log()),
        }
    }
    let (ready, why) = readiness.unwrap_or_default();
    let after = resident_kib(&bot);
    eprintln!(
        "flood of 400: {} acknowledged, {shed} shed; resident {before} KiB before, {after} KiB after",
        acknowledged.len()
    );
    assert!(shed > 0, "nothing was shed\n{}", bot.log());
    assert!(!acknowledged.is_empty());
    assert_eq!(ready, 503, "{why}");
    assert!(why.contains("shedding"), "{why}");
    assert!(after < before + 64 * 1024, "{before} KiB → {after} KiB");
    let (_, metrics) = bot.get("/metrics").await;
    assert!(
        metrics.contains(&format!("forgeward_requests_shed_total {shed}")),
        "{metrics}"
    );

    // Every acknowledgement survives a SIGKILL.
    let mut bot = bot;
    bot.child.kill().expect("SIGKILL");
    let _ = bot.child.wait();
    let again = Bot::start_with(dir.path(), &[], None);
    all_stored(&again, &acknowledged).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_soak_of_mixed_traffic_keeps_memory_flat_and_every_acknowledgement() {
    raise_own_descriptor_limit();
    let seconds: u64 = std::env::var("FORGEWARD_SOAK_SECS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(30);
    let dir = TempDir::new().expect("tempdir");
    let bot = Bot::start_with(dir.path(), &[("FORGEWARD_SERVER_HEAD_TIMEOUT", "2s")], None);
    let started = Instant::now();
    let warm_up = Duration::from_secs((seconds / 10).clamp(1, 60));
    let (mut acknowledged, mut warm, mut n) = (Vec::new(), None, 0u64);
    let mut slow = Vec::new();
    while started.elapsed() < Duration::from_secs(seconds) {
        let tick = Instant::now();
        // Each second: five valid deliveries, a forged one, a malformed one, an oversized
        // one and two slow clients.
        for _ in 0..5 {
            n += 1;
            let id = format!("soak-{n}");
            match deliver(&bot.url, &id, &labeled(n)).await {
                Ok((202, _)) => acknowledged.push(id),
                other => panic!("{id}: {other:?}\n{}", bot.log()),
            }
        }
        let forged = reqwest::Client::new()
            .post(format!("{}/webhooks/github", bot.url))
            .header("X-GitHub-Event", "issues")
            .header("X-GitHub-Delivery", format!("forged-{n}"))
            .header("X-Hub-Signature-256", sign("not the secret", b"{}"))
            .body("{}")
            .send()
            .await
            .expect("an answer");
        assert_eq!(forged.status().as_u16(), 401);
        let garbage = b"{\"action\": ";
        let malformed = reqwest::Client::new()
            .post(format!("{}/webhooks/github", bot.url))
            .header("X-GitHub-Event", "issues")
            .header("X-GitHub-Delivery", format!("malformed-{n}"))
            .header("X-Hub-Signature-256", sign(SECRET, garbage))
            .body(garbage.to_vec())
            .send()
            .await
            .expect("an answer");
        assert_eq!(malformed.status().as_u16(), 400);
        let at = address(&bot);
        let oversized = tokio::task::spawn_blocking(move || {
            let mut stream = TcpStream::connect(&at).ok()?;
            let head = format!(
                "POST /webhooks/github HTTP/1.1\r\nHost: {at}\r\nX-GitHub-Event: issues\r\n\
                 X-GitHub-Delivery: big\r\nContent-Length: 30000000\r\n\r\n{{"
            );
            stream.write_all(head.as_bytes()).ok()?;
            let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
            let mut answer = [0u8; 12];
            stream.read_exact(&mut answer).ok()?;
            Some(String::from_utf8_lossy(&answer).into_owned())
        })
        .await
        .expect("the oversized request");
        assert_eq!(oversized.as_deref(), Some("HTTP/1.1 413"));
        let at = address(&bot);
        slow.extend(
            tokio::task::spawn_blocking(move || half_open(&at, 2))
                .await
                .expect("slow clients"),
        );
        // The slow clients let go after a while, as real ones would.
        if slow.len() > 40 {
            slow.drain(..20);
        }
        if warm.is_none() && started.elapsed() >= warm_up {
            warm = Some(resident_kib(&bot));
        }
        if let Some(rest) = Duration::from_secs(1).checked_sub(tick.elapsed()) {
            tokio::time::sleep(rest).await;
        }
    }
    let (start, end) = (
        warm.unwrap_or_else(|| resident_kib(&bot)),
        resident_kib(&bot),
    );
    eprintln!(
        "soak of {seconds} s: {} deliveries acknowledged; resident {start} KiB after warm-up, {end} KiB at the end",
        acknowledged.len()
    );
    assert!(
        end < start + start / 2 + 16 * 1024,
        "memory grew: {start} KiB → {end} KiB"
    );
    let log = bot.log();
    let errors: Vec<&str> = log
        .lines()
        .filter(|l| l.contains(" ERROR ") || l.contains("panicked"))
        .collect();
    assert!(
        errors.is_empty(),
        "errors in the log:\n{}",
        errors.join("\n")
    );
    all_stored(&bot, &acknowledged).await;
}
