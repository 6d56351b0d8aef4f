//! `forgeward serve` as a real process: signed deliveries in, durable jobs out; forged,
//! oversized and malformed ones refused with nothing stored; a crash loses nothing it
//! acknowledged. GitHub's, GitLab's and Forgejo's (or Gitea's) receivers alike.

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use forgeward::forge::Forge;
use forgeward::jobs::{JobContext, JobHandler, RunnerConfig, run_workers};
use forgeward::store::{Job, JobState, Outcome, Store};
use hmac::{Hmac, Mac};
use serde_json::Value;
use sha2::Sha256;
use tempfile::TempDir;

use crate::util::{FORGEWARD, eventually};

pub(crate) const SECRET: &str = "it's a secret to everybody";
const GITLAB_TOKEN: &str = "gitlab-token";
const FORGEJO_SECRET: &str = "forgejo's own secret";
/// The label on the fixture's `issues.labeled` delivery, made the trigger label.
const LABEL: &str = "bug";

fn fixture(name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/webhooks")
        .join(name);
    let text = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_slice(&text).expect("fixture is JSON")
}

/// The fixture's `issues.labeled` delivery, for issue `number`.
pub(crate) fn labeled(number: u64) -> Vec<u8> {
    let mut v = fixture("github/issues.labeled.json");
    v["issue"]["number"] = number.into();
    serde_json::to_vec(&v).expect("serialises")
}

pub(crate) fn sign(secret: &str, body: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("any key length");
    mac.update(body);
    format!("sha256={}", hex::encode(mac.finalize().into_bytes()))
}

/// A running `forgeward serve` on a port of its choosing, with its data in `data`.
pub(crate) struct Bot {
    pub(crate) child: Child,
    pub(crate) url: String,
    data: PathBuf,
    log: Arc<Mutex<String>>,
}

impl Bot {
    fn start(data: &Path) -> Bot {
        Bot::start_with(data, &[], None)
    }

    /// With more settings in the environment, and (`descriptors`) its open-file limit, soft
    /// and hard, set that low.
    pub(crate) fn start_with(data: &Path, env: &[(&str, &str)], descriptors: Option<u64>) -> Bot {
        let mut command = Command::new(FORGEWARD);
        if let Some(limit) = descriptors {
            use std::os::unix::process::CommandExt;
            // SAFETY: only setrlimit(2) runs between fork and exec.
            unsafe {
                command.pre_exec(move || {
                    let rlimit = libc::rlimit {
                        rlim_cur: limit,
                        rlim_max: limit,
                    };
                    if libc::setrlimit(libc::RLIMIT_NOFILE, &rlimit) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    Ok(())
                });
            }
        }
        let mut child = command
            .arg("serve")
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("FORGEWARD_SERVER_LISTEN", "127.0.0.1:0")
            .env("FORGEWARD_SERVER_DATA_DIR", data)
            .env(
                "FORGEWARD_GITHUB_WEBHOOK_SECRET",
                format!("old-secret,{SECRET}"),
            )
            .env("FORGEWARD_GITLAB_WEBHOOK_TOKEN", GITLAB_TOKEN)
            .env(
                "FORGEWARD_FORGEJO_WEBHOOK_SECRET",
                format!("old-forgejo-secret,{FORGEJO_SECRET}"),
            )
            .env("FORGEWARD_TRIGGER_LABEL", LABEL)
            .env("RUST_LOG", "info")
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("starting forgeward serve");
        let stderr = child.stderr.take().expect("piped stderr");
        let log = Arc::new(Mutex::new(String::new()));
        let (tx, rx) = mpsc::channel();
        let sink = Arc::clone(&log);
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(at) = line.find("listening on http://") {
                    let _ = tx.send(line[at + "listening on ".len()..].trim().to_owned());
                }
                let mut log = sink.lock().unwrap_or_else(|p| p.into_inner());
                log.push_str(&line);
                log.push('\n');
            }
        });
        let url = rx
            .recv_timeout(Duration::from_secs(60))
            .unwrap_or_else(|_| panic!("forgeward serve did not start:\n{}", log.lock().unwrap()));
        Bot {
            child,
            url,
            data: data.to_path_buf(),
            log,
        }
    }

    pub(crate) fn log(&self) -> String {
        self.log.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    pub(crate) async fn store(&self) -> Store {
        let url = format!("sqlite://{}", self.data.join("forgeward.db").display());
        Store::open(&url).await.expect("opening the bot's store")
    }

    async fn github(
        &self,
        event: &str,
        delivery: &str,
        body: &[u8],
        signature: Option<&str>,
    ) -> (u16, Value) {
        let mut req = reqwest::Client::new()
            .post(format!("{}/webhooks/github", self.url))
            .header("X-GitHub-Event", event)
            .header("X-GitHub-Delivery", delivery)
            .header("content-type", "application/json")
            .body(body.to_vec());
        if let Some(sig) = signature {
            req = req.header("X-Hub-Signature-256", sig);
        }
        let resp = req.send().await.expect("a response");
        let status = resp.status().as_u16();
        let body = resp.json().await.unwrap_or(Value::Null);
        (status, body)
    }

    pub(crate) async fn signed(&self, event: &str, delivery: &str, body: &[u8]) -> (u16, Value) {
        self.github(event, delivery, body, Some(&sign(SECRET, body)))
            .await
    }

    /// A delivery to `/webhooks/forgejo` with `headers` (a signature among them, or not).
    async fn forgejo(&self, headers: &[(&str, String)], body: &[u8]) -> (u16, Value) {
        let mut req = reqwest::Client::new()
            .post(format!("{}/webhooks/forgejo", self.url))
            .header("content-type", "application/json")
            .body(body.to_vec());
        for (name, value) in headers {
            req = req.header(*name, value);
        }
        let resp = req.send().await.expect("a response");
        let status = resp.status().as_u16();
        let body = resp.json().await.unwrap_or(Value::Null);
        (status, body)
    }

    pub(crate) async fn get(&self, path: &str) -> (u16, String) {
        let resp = reqwest::get(format!("{}{path}", self.url))
            .await
            .expect("a response");
        (
            resp.status().as_u16(),
            resp.text().await.unwrap_or_default(),
        )
    }

    /// SIGTERM, then the exit code.
    fn terminate(mut self) -> i32 {
        // SAFETY: kill(2) on our own child's pid has no memory effects.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let status = self.child.wait().expect("waiting for the bot");
        status.code().unwrap_or(-1)
    }
}

impl Drop for Bot {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_signed_labeled_issue_becomes_one_durable_job() {
    let dir = TempDir::new().expect("tempdir");
    let bot = Bot::start(dir.path());
    let body = labeled(7);

    let (status, reply) = bot.signed("issues", "delivery-1", &body).await;
    assert_eq!(status, 202, "{reply} {}", bot.log());
    assert!(reply["job"].is_i64(), "{reply}");

    // GitHub redelivers with the same delivery id: acknowledged, nothing new.
    let (status, reply) = bot.signed("issues", "delivery-1", &body).await;
    assert_eq!(
        (status, reply),
        (200, serde_json::json!({ "duplicate": true }))
    );

    let store = bot.store().await;
    let jobs = store.jobs().await.expect("jobs");
    assert_eq!(jobs.len(), 1);
    assert_eq!(jobs[0].state, JobState::Queued);
    assert_eq!(
        jobs[0].target.as_deref(),
        Some("github:Codertocat/Hello-World#7")
    );
    assert!(
        store
            .delivery_exists(Forge::GitHub, "delivery-1")
            .await
            .expect("query")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn refused_deliveries_store_nothing() {
    let dir = TempDir::new().expect("tempdir");
    let bot = Bot::start(dir.path());
    let body = labeled(8);
    let mut changed = body.clone();
    changed.extend_from_slice(b" ");

    let cases: Vec<(&str, Option<String>, Vec<u8>, u16)> = vec![
        (
            "forged",
            Some(format!("sha256={}", "0".repeat(64))),
            body.clone(),
            401,
        ),
        ("missing", None, body.clone(), 401),
        (
            "wrong-secret",
            Some(sign("not the secret", &body)),
            body.clone(),
            401,
        ),
        (
            "malformed-header",
            Some("sha1=abc".to_owned()),
            body.clone(),
            401,
        ),
        (
            "changed-after-signing",
            Some(sign(SECRET, &body)),
            changed,
            401,
        ),
    ];
    for (id, signature, payload, want) in cases {
        let (status, reply) = bot
            .github("issues", id, &payload, signature.as_deref())
            .await;
        assert_eq!(status, want, "{id}: {reply}");
        assert!(reply["error"].is_string(), "{id}: {reply}");
    }

    let malformed = br#"{"action": "labeled", "issue": {"number": "seven"}}"#;
    let (status, reply) = bot.signed("issues", "malformed", malformed).await;
    assert_eq!(status, 400, "{reply}");
    assert!(
        reply["error"].as_str().unwrap_or("").contains("issue"),
        "names the path: {reply}"
    );

    let (status, _) = bot.signed("issues", "not-json", b"<xml/>").await;
    assert_eq!(status, 400);

    let huge = vec![b' '; 26 * 1024 * 1024];
    let (status, _) = bot.signed("issues", "huge", &huge).await;
    assert_eq!(status, 413);

    let (status, reply) = bot.signed("check_run", "unknown-event", b"{}").await;
    assert_eq!(
        status, 200,
        "an event the bot does not act on is acknowledged: {reply}"
    );
    assert!(reply["ignored"].is_string(), "{reply}");

    let mut opened = fixture("github/issues.opened.json");
    opened["issue"]["number"] = 9.into();
    let (status, reply) = bot
        .signed("issues", "opened", &serde_json::to_vec(&opened).unwrap())
        .await;
    assert_eq!(
        (status, reply["ignored"].as_str()),
        (200, Some("issues.opened"))
    );

    let store = bot.store().await;
    assert!(store.jobs().await.expect("jobs").is_empty());
    for id in [
        "forged",
        "missing",
        "wrong-secret",
        "changed-after-signing",
        "malformed",
        "huge",
        "unknown-event",
        "opened",
    ] {
        assert!(
            !store
                .delivery_exists(Forge::GitHub, id)
                .await
                .expect("query"),
            "{id} was stored"
        );
    }
    assert!(
        bot.log().lines().all(|l| !l.contains(SECRET)),
        "a secret reached the log"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn gitlab_deliveries_need_the_token() {
    let dir = TempDir::new().expect("tempdir");
    let bot = Bot::start(dir.path());
    let mut body = fixture("gitlab/note.issue.json");
    body["object_attributes"]["note"] = "/forgeward run please".into();
    let body = serde_json::to_vec(&body).expect("serialises");
    let send = |token: &'static str, key: &'static str| {
        reqwest::Client::new()
            .post(format!("{}/webhooks/gitlab", bot.url))
            .header("X-Gitlab-Event", "Note Hook")
            .header("X-Gitlab-Token", token)
            .header("Idempotency-Key", key)
            .body(body.clone())
            .send()
    };
    assert_eq!(
        send("nope", "k1")
            .await
            .expect("response")
            .status()
            .as_u16(),
        401
    );
    assert_eq!(
        send(GITLAB_TOKEN, "k2")
            .await
            .expect("response")
            .status()
            .as_u16(),
        202
    );
    assert_eq!(
        send(GITLAB_TOKEN, "k2")
            .await
            .expect("response")
            .status()
            .as_u16(),
        200
    );
    let store = bot.store().await;
    assert_eq!(store.jobs().await.expect("jobs").len(), 1);
    assert!(
        !store
            .delivery_exists(Forge::GitLab, "k1")
            .await
            .expect("query")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn health_readiness_metrics_and_a_graceful_stop() {
    let dir = TempDir::new().expect("tempdir");
    let bot = Bot::start(dir.path());
    assert_eq!(bot.get("/healthz").await.0, 200);
    assert_eq!(bot.get("/readyz").await.0, 200);
    bot.signed("issues", "m-1", &labeled(11)).await;
    bot.github("issues", "m-2", &labeled(12), None).await;
    let (status, text) = bot.get("/metrics").await;
    assert_eq!(status, 200);
    for line in [
        "forgeward_webhook_deliveries_total{forge=\"github\",event=\"issues\",outcome=\"accepted\"} 1",
        "forgeward_webhook_rejections_total{forge=\"github\",reason=\"unauthorized\"} 1",
        "forgeward_jobs{state=\"queued\"} 1",
        "forgeward_queue_depth 1",
    ] {
        assert!(
            text.lines().any(|l| l == line),
            "missing `{line}` in:\n{text}"
        );
    }
    assert_eq!(bot.terminate(), 0);
}

/// Counts how often each job ran.
#[derive(Default)]
struct Counting(Mutex<HashMap<i64, u32>>);

impl JobHandler for Counting {
    async fn run(&self, job: &Job, ctx: &JobContext) -> Outcome {
        ctx.phase("working").await;
        *self.0.lock().unwrap().entry(job.id.0).or_default() += 1;
        Outcome::Succeeded
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_crash_loses_no_acknowledged_delivery_and_runs_each_job_once() {
    const CLIENTS: u64 = 8;
    const PER_CLIENT: u64 = 40;
    let dir = TempDir::new().expect("tempdir");
    let bot = Bot::start(dir.path());
    let url = bot.url.clone();
    let acked: Arc<Mutex<Vec<String>>> = Arc::default();
    let mut clients = Vec::new();
    for c in 0..CLIENTS {
        let (url, acked) = (url.clone(), Arc::clone(&acked));
        clients.push(tokio::spawn(async move {
            let client = reqwest::Client::new();
            for i in 0..PER_CLIENT {
                let n = c * PER_CLIENT + i;
                let body = labeled(1000 + n);
                let sent = client
                    .post(format!("{url}/webhooks/github"))
                    .header("X-GitHub-Event", "issues")
                    .header("X-GitHub-Delivery", format!("burst-{n}"))
                    .header("X-Hub-Signature-256", sign(SECRET, &body))
                    .body(body)
                    .timeout(Duration::from_secs(10))
                    .send()
                    .await;
                if let Ok(r) = sent
                    && r.status().as_u16() == 202
                {
                    acked.lock().unwrap().push(format!("burst-{n}"));
                }
            }
        }));
    }
    // Kill it mid-burst: once a good part, not all, has been acknowledged.
    loop {
        let n = acked.lock().unwrap().len() as u64;
        if n >= CLIENTS * PER_CLIENT / 3 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    let mut bot = bot;
    bot.child.kill().expect("SIGKILL");
    bot.child.wait().expect("reaped");
    for c in clients {
        c.await.expect("client task");
    }
    let acked = acked.lock().unwrap().clone();
    assert!(
        (acked.len() as u64) < CLIENTS * PER_CLIENT,
        "the kill came after the burst"
    );
    drop(bot);

    let bot = Bot::start(dir.path());
    let store = bot.store().await;
    for id in &acked {
        assert!(
            store
                .delivery_exists(Forge::GitHub, id)
                .await
                .expect("query"),
            "{id} acknowledged, then lost"
        );
    }
    // The forge (or the missed-delivery sweep) sends everything again: each delivery ends up
    // with exactly one job, whether or not it was acknowledged before the crash.
    for n in 0..CLIENTS * PER_CLIENT {
        let (status, reply) = bot
            .signed("issues", &format!("burst-{n}"), &labeled(1000 + n))
            .await;
        assert!(status == 202 || status == 200, "{status} {reply}");
    }
    let jobs = store.jobs().await.expect("jobs");
    assert_eq!(jobs.len() as u64, CLIENTS * PER_CLIENT);

    let handler = Arc::new(Counting::default());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let runner = tokio::spawn(run_workers(
        store.clone(),
        Arc::clone(&handler),
        RunnerConfig {
            owner: "test-runner".to_owned(),
            concurrency: 4,
            checks: 1,
            lease: Duration::from_secs(30),
            poll: Duration::from_millis(20),
            backoff_base: Duration::from_millis(10),
            metrics: None,
        },
        async move {
            let _ = stopped.await;
        },
    ));
    let within = Duration::from_secs(120);
    eventually("jobs did not finish", within, async || {
        let jobs = store.jobs().await.expect("jobs");
        if jobs.iter().all(|j| j.state == JobState::Succeeded) {
            return Ok(());
        }
        let done = jobs.iter().filter(|j| j.state == JobState::Succeeded);
        Err(format!("{} of {} succeeded", done.count(), jobs.len()))
    })
    .await;
    let _ = stop.send(());
    runner.await.expect("runner task").expect("runner");
    let runs = handler.0.lock().unwrap();
    assert_eq!(runs.len() as u64, CLIENTS * PER_CLIENT);
    assert!(runs.values().all(|&n| n == 1), "a job ran twice");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_webhook_left_sending_a_form_is_told_to_send_json() {
    let dir = TempDir::new().expect("tempdir");
    let bot = Bot::start(dir.path());
    // What GitHub sends for a webhook whose content type was left at its default.
    let json = String::from_utf8(labeled(7)).expect("UTF-8");
    let mut form = String::from("payload=");
    for byte in json.bytes() {
        if byte.is_ascii_alphanumeric() {
            form.push(byte as char);
        } else {
            form.push_str(&format!("%{byte:02X}"));
        }
    }
    let send = |signature: String| {
        reqwest::Client::new()
            .post(format!("{}/webhooks/github", bot.url))
            .header("X-GitHub-Event", "issues")
            .header("X-GitHub-Delivery", "form-1")
            .header("X-Hub-Signature-256", signature)
            .header("content-type", "application/x-www-form-urlencoded")
            .body(form.clone())
            .send()
    };
    let response = send(sign(SECRET, form.as_bytes()))
        .await
        .expect("an answer");
    assert_eq!(response.status().as_u16(), 415);
    let reply: Value = response.json().await.expect("JSON");
    let error = reply["error"].as_str().unwrap_or_default();
    assert!(
        error.contains("application/x-www-form-urlencoded")
            && error.contains("set the webhook's content type to application/json"),
        "{reply}"
    );
    // A forged one learns nothing of the kind: it is refused for its signature first.
    let forged = send(sign("not the secret", form.as_bytes()))
        .await
        .expect("an answer");
    assert_eq!(forged.status().as_u16(), 401);
    let store = bot.store().await;
    assert!(
        !store
            .delivery_exists(Forge::GitHub, "form-1")
            .await
            .expect("query")
    );
}

/// The headers Forgejo sends with a delivery (its own and Gitea's names), signed with `secret`.
fn forgejo_headers(
    event: &str,
    delivery: &str,
    secret: &str,
    body: &[u8],
) -> Vec<(&'static str, String)> {
    let signature = forgejo_signature(secret, body);
    vec![
        ("X-Forgejo-Event", event.to_owned()),
        ("X-Forgejo-Delivery", delivery.to_owned()),
        ("X-Forgejo-Signature", signature.clone()),
        ("X-Gitea-Event", event.to_owned()),
        ("X-Gitea-Delivery", delivery.to_owned()),
        ("X-Gitea-Signature", signature.clone()),
        // What Forgejo adds for GitHub's receivers: not what the bot reads here.
        ("X-Hub-Signature-256", format!("sha256={signature}")),
        ("X-GitHub-Event", event.to_owned()),
    ]
}

/// The headers Gitea sends: no `X-Forgejo-*` at all.
fn gitea_headers(
    event: &str,
    delivery: &str,
    secret: &str,
    body: &[u8],
) -> Vec<(&'static str, String)> {
    vec![
        ("X-Gitea-Event", event.to_owned()),
        ("X-Gitea-Delivery", delivery.to_owned()),
        ("X-Gitea-Signature", forgejo_signature(secret, body)),
    ]
}

/// Forgejo's signature: the bare hex HMAC-SHA256 of the body.
fn forgejo_signature(secret: &str, body: &[u8]) -> String {
    sign(secret, body).trim_start_matches("sha256=").to_owned()
}

/// A Forgejo fixture with `change` applied.
fn forgejo_fixture(name: &str, change: impl FnOnce(&mut Value)) -> Vec<u8> {
    let mut v = fixture(&format!("forgejo/{name}"));
    change(&mut v);
    serde_json::to_vec(&v).expect("serialises")
}

#[tokio::test(flavor = "multi_thread")]
async fn a_signed_forgejo_delivery_becomes_one_durable_job() {
    let dir = TempDir::new().expect("tempdir");
    let bot = Bot::start(dir.path());
    let body = forgejo_fixture("issue_comment.created.json", |_| {});

    let headers = forgejo_headers("issue_comment", "fj-1", FORGEJO_SECRET, &body);
    let (status, reply) = bot.forgejo(&headers, &body).await;
    assert_eq!(status, 202, "{reply} {}", bot.log());
    assert!(reply["job"].is_i64(), "{reply}");

    // A redelivery (Forgejo's "Replay" keeps the id): acknowledged, nothing new.
    let (status, reply) = bot.forgejo(&headers, &body).await;
    assert_eq!(
        (status, reply),
        (200, serde_json::json!({ "duplicate": true }))
    );

    // Gitea sends only its own names; the secret being rotated out still works.
    let pull = forgejo_fixture("pull_request.opened.json", |_| {});
    let headers = gitea_headers("pull_request", "gitea-1", "old-forgejo-secret", &pull);
    let (status, reply) = bot.forgejo(&headers, &pull).await;
    assert_eq!(status, 202, "{reply} {}", bot.log());

    let store = bot.store().await;
    let jobs = store.jobs().await.expect("jobs");
    let targets: Vec<_> = jobs.iter().map(|j| j.target.as_deref()).collect();
    assert_eq!(
        targets,
        [
            Some("forgejo:forgeward/demo#12"),
            Some("forgejo:forgeward/demo#13")
        ]
    );
    assert!(jobs.iter().all(|j| j.state == JobState::Queued));
    for id in ["fj-1", "gitea-1"] {
        assert!(
            store
                .delivery_exists(Forge::Forgejo, id)
                .await
                .expect("query"),
            "{id} not recorded"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_forgejo_label_starts_one_job_per_issue() {
    let dir = TempDir::new().expect("tempdir");
    let bot = Bot::start(dir.path());
    // `bug` (the trigger label here) and `forgeward` on issue 12.
    let labeled = forgejo_fixture("issues.label_updated.json", |_| {});
    let headers = forgejo_headers("issues", "label-1", FORGEJO_SECRET, &labeled);
    let (status, reply) = bot.forgejo(&headers, &labeled).await;
    assert_eq!(status, 202, "{reply} {}", bot.log());
    let first = reply["job"].as_i64().expect("a job");

    // The same delivery again is a duplicate, not a second label.
    let (status, reply) = bot.forgejo(&headers, &labeled).await;
    assert_eq!((status, reply["duplicate"].as_bool()), (200, Some(true)));

    // Someone adds `docs`: Forgejo sends the issue's labels again, `bug` among them.
    let docs = forgejo_fixture("issues.label_updated.json", |v| {
        let mut labels = v["issue"]["labels"].clone();
        let mut extra = labels[0].clone();
        extra["id"] = 11.into();
        extra["name"] = "docs".into();
        labels.as_array_mut().expect("labels").push(extra);
        v["issue"]["labels"] = labels;
    });
    let headers = forgejo_headers("issues", "label-2", FORGEJO_SECRET, &docs);
    let (status, reply) = bot.forgejo(&headers, &docs).await;
    assert_eq!(
        (status, reply),
        (
            200,
            serde_json::json!({ "ignored": "issue_labeled", "earlier_job": first })
        )
    );

    // Another issue labelled is another job.
    let other = forgejo_fixture("issues.label_updated.json", |v| {
        v["number"] = 14.into();
        v["issue"]["number"] = 14.into();
    });
    let headers = forgejo_headers("issues", "label-3", FORGEJO_SECRET, &other);
    let (status, reply) = bot.forgejo(&headers, &other).await;
    assert_eq!(status, 202, "{reply}");

    let store = bot.store().await;
    let jobs = store.jobs().await.expect("jobs");
    let targets: Vec<_> = jobs.iter().map(|j| j.target.as_deref()).collect();
    assert_eq!(
        targets,
        [
            Some("forgejo:forgeward/demo#12"),
            Some("forgejo:forgeward/demo#14")
        ]
    );
    assert!(
        !store
            .delivery_exists(Forge::Forgejo, "label-2")
            .await
            .expect("query")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn refused_forgejo_deliveries_store_nothing() {
    let dir = TempDir::new().expect("tempdir");
    let bot = Bot::start(dir.path());
    let body = forgejo_fixture("issue_comment.created.json", |_| {});
    let mut changed = body.clone();
    changed.extend_from_slice(b" ");
    let signed = forgejo_signature(FORGEJO_SECRET, &body);
    let with = |delivery: &str, signature: Option<String>| {
        let mut headers = vec![
            ("X-Forgejo-Event", "issue_comment".to_owned()),
            ("X-Forgejo-Delivery", delivery.to_owned()),
        ];
        if let Some(signature) = signature {
            headers.push(("X-Forgejo-Signature", signature));
        }
        headers
    };

    let cases: Vec<(&str, Option<String>, &[u8])> = vec![
        ("forged", Some("0".repeat(64)), &body),
        ("missing", None, &body),
        ("empty", Some(String::new()), &body),
        (
            "wrong-secret",
            Some(forgejo_signature("not the secret", &body)),
            &body,
        ),
        // GitHub's form of the signature is not Forgejo's.
        ("prefixed", Some(format!("sha256={signed}")), &body),
        ("truncated", Some(signed[..40].to_owned()), &body),
        ("changed-after-signing", Some(signed.clone()), &changed),
        // Signed with the GitHub secret, as if sent to the wrong receiver.
        (
            "github-secret",
            Some(forgejo_signature(SECRET, &body)),
            &body,
        ),
    ];
    for (id, signature, payload) in cases {
        let (status, reply) = bot.forgejo(&with(id, signature), payload).await;
        assert_eq!(status, 401, "{id}: {reply}");
        assert!(reply["error"].is_string(), "{id}: {reply}");
    }

    let malformed = br#"{"action": "created", "issue": {"number": "seven"}}"#;
    let headers = forgejo_headers("issue_comment", "malformed", FORGEJO_SECRET, malformed);
    let (status, reply) = bot.forgejo(&headers, malformed).await;
    assert_eq!(status, 400, "{reply}");
    assert!(
        reply["error"]
            .as_str()
            .unwrap_or("")
            .contains("malformed payload at issue.number"),
        "names the path: {reply}"
    );

    let (status, _) = bot
        .forgejo(
            &forgejo_headers("issue_comment", "not-json", FORGEJO_SECRET, b"<xml/>"),
            b"<xml/>",
        )
        .await;
    assert_eq!(status, 400);

    // Signed, but no event named.
    let headers = vec![
        ("X-Forgejo-Delivery", "no-event".to_owned()),
        ("X-Forgejo-Signature", signed.clone()),
    ];
    let (status, reply) = bot.forgejo(&headers, &body).await;
    assert_eq!(status, 400, "{reply}");

    // A hook left sending a form is told to send JSON, once its signature holds.
    let form = b"payload=%7B%22action%22%3A%22created%22%7D";
    let response = reqwest::Client::new()
        .post(format!("{}/webhooks/forgejo", bot.url))
        .header("content-type", "application/x-www-form-urlencoded")
        .header("X-Forgejo-Event", "issue_comment")
        .header("X-Forgejo-Delivery", "form")
        .header(
            "X-Forgejo-Signature",
            forgejo_signature(FORGEJO_SECRET, form),
        )
        .body(form.to_vec())
        .send()
        .await
        .expect("a response");
    assert_eq!(response.status().as_u16(), 415);

    let huge = vec![b' '; 26 * 1024 * 1024];
    let (status, _) = bot
        .forgejo(
            &forgejo_headers("issue_comment", "huge", FORGEJO_SECRET, &huge),
            &huge,
        )
        .await;
    assert_eq!(status, 413);

    // What the bot does not act on is acknowledged, not refused, and not stored either.
    let closed = forgejo_fixture("pull_request.closed.json", |_| {});
    let (status, reply) = bot
        .forgejo(
            &forgejo_headers("pull_request", "closed", FORGEJO_SECRET, &closed),
            &closed,
        )
        .await;
    assert_eq!(
        (status, reply["ignored"].as_str()),
        (200, Some("pull_request.closed"))
    );

    let store = bot.store().await;
    assert!(store.jobs().await.expect("jobs").is_empty());
    for id in [
        "forged",
        "missing",
        "empty",
        "wrong-secret",
        "prefixed",
        "truncated",
        "changed-after-signing",
        "github-secret",
        "malformed",
        "not-json",
        "no-event",
        "form",
        "huge",
        "closed",
    ] {
        assert!(
            !store
                .delivery_exists(Forge::Forgejo, id)
                .await
                .expect("query"),
            "{id} was stored"
        );
    }
    assert!(
        bot.log().lines().all(|l| !l.contains(FORGEJO_SECRET)),
        "a secret reached the log"
    );
}
