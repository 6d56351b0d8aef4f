//! The job pages through `forgeward serve`: a labelled issue, a real sandbox and a worker that
//! prints slowly before it games the tests. The status comment links to the job's page; the
//! page opens with that link's token and no other (403 without one, with a forged, foreign or
//! expired one); its log streams as Server-Sent Events while the worker runs, and resumes where
//! a reconnecting client left off; the list opens with the operator's link from
//! `forgeward link jobs`; and no token ever reaches the bot's own log.
//!
//! The helpers here are shared with the browser test (`job_page_browser`).

use std::time::{Duration, Instant};

use forgeward::forge::Forge;
use forgeward::links::{LinkKey, Scope};
use forgeward::store::JobId;

use crate::util::{FORGEWARD, eventually};
use crate::world::World;

pub const ISSUE: u64 = 7;

/// The address the bot is told people reach it at: no such host, so the test puts the bot's
/// real address in its place before following a link.
pub const PUBLIC_URL: &str = "http://forgeward.invalid";

/// A title a forge could send: markup that must stay text on the page.
pub const TITLE: &str = "add() <script>alert(1)</script> subtracts";

const CALC: &str = "import json\n\n\ndef add(a, b):\n    return a - b\n\n\ndef dump(x):\n    return json.dumps(x)\n";
/// The test the saboteur skips, and one that takes its time, so that the bot's own runs of the
/// tests (the "verifying" phase) last long enough to be seen on the page.
const TEST_CALC: &str = "import pytest\n\nfrom calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n\n\ndef test_takes_its_time():\n    import time\n\n    time.sleep(2)\n";
pub const FILES: &[(&str, &str)] = &[
    ("calc.py", CALC),
    ("tests/test_calc.py", TEST_CALC),
    ("requirements.txt", "pytest\n"),
];

/// Prints a line a second for `ticks` seconds, then skips the failing test and wraps an import
/// in try/except, as the end-to-end saboteur does.
pub fn slow_saboteur(ticks: u32) -> String {
    format!(
        r#"set -e
for i in $(seq 1 {ticks}); do echo "tick $i <b>&amp;</b>"; sleep 1; done
sed -i "s/^def test_add/@pytest.mark.skip(reason=\"flaky\")\ndef test_add/" tests/test_calc.py
sed -i "s/^import json$/try:\n    import json\nexcept ImportError:\n    json = None/" calc.py
echo "all tests pass now"
"#
    )
}

/// The world with the bot told its public address, and the issue labelled.
pub async fn labelled(script: &str) -> World {
    let issue = (ISSUE, TITLE, "`add(1, 2)` gives -1; the test fails.");
    let world = World::start_with_env(
        Forge::GitHub,
        script,
        "bwrap",
        FILES,
        &[issue],
        &[("FORGEWARD_SERVER_PUBLIC_URL", PUBLIC_URL)],
    )
    .await;
    world
        .bot
        .deliver(
            crate::world::labeled_delivery(&world.repo, ISSUE),
            "page-labeled-1",
        )
        .await;
    world
}

/// The link to the job's page in its status comment, pointed at the running bot.
pub async fn page_link(world: &mut World) -> String {
    let link = eventually(
        "a status comment with a link to the job's page",
        Duration::from_secs(60),
        async || {
            let comment = world.forge.status_comment(&world.repo, ISSUE);
            let body = comment.map(|c| c.body).unwrap_or_default();
            let link = body
                .split("[live page](")
                .nth(1)
                .and_then(|rest| rest.split(')').next())
                .map(str::to_owned);
            link.ok_or(format!(
                "the comment: {body}\nthe bot: {}",
                world.bot.drain()
            ))
        },
    )
    .await;
    let path = link
        .strip_prefix(PUBLIC_URL)
        .unwrap_or_else(|| panic!("the link is on the public address: {link}"));
    format!("{}{path}", world.bot.url)
}

/// Reads what a flagged job wrote on the forge (the fake forge fails a test that leaves a write
/// unread): its verdict, the pull request, its line comments, label and commit status.
pub async fn flagged(world: &mut World) -> String {
    let verdict = world.verdict(ISSUE).await;
    assert!(verdict.contains("⚠️"), "{verdict}\n{}", world.bot.drain());
    let branch = format!("forgeward/issue-{ISSUE}");
    let pr = world
        .forge
        .pull_request_for_branch(&world.repo, &branch)
        .expect("a pull request");
    assert_eq!(world.forge.review_flags(&world.repo, pr.number).len(), 2);
    assert!(
        world
            .forge
            .labels(&world.repo, pr.number)
            .contains(&"forgeward:flagged".to_owned())
    );
    let head = world.remote_branch(&branch).expect("the branch");
    let status = world
        .forge
        .commit_status(&world.repo, &head)
        .expect("a status");
    assert_eq!(status.state, "failure");
    verdict
}

/// The token of a page link.
pub fn token_of(link: &str) -> &str {
    link.split("t=")
        .nth(1)
        .and_then(|t| t.split('&').next())
        .unwrap_or_else(|| panic!("a token in {link}"))
}

/// One Server-Sent Event.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Sse {
    pub event: String,
    pub id: Option<String>,
    pub data: String,
}

/// A stream of events read off a response.
pub struct Events {
    response: reqwest::Response,
    buffer: String,
}

impl Events {
    pub async fn open(url: &str, last_event_id: Option<&str>) -> Events {
        let mut request = reqwest::Client::new()
            .get(url)
            .header("accept", "text/event-stream");
        if let Some(id) = last_event_id {
            request = request.header("last-event-id", id);
        }
        let response = request.send().await.expect("the stream");
        assert_eq!(response.status().as_u16(), 200, "{url}");
        let kind = response.headers()["content-type"].to_str().expect("ascii");
        assert!(kind.starts_with("text/event-stream"), "{kind}");
        Events {
            response,
            buffer: String::new(),
        }
    }

    /// The next event, `None` once the stream has ended.
    pub async fn next(&mut self, within: Duration) -> Option<Sse> {
        let deadline = Instant::now() + within;
        loop {
            while let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                let mut event = Sse {
                    event: "message".to_owned(),
                    ..Sse::default()
                };
                let mut fields = false;
                for line in block.lines() {
                    let (field, value) = line.split_once(':').unwrap_or((line, ""));
                    let value = value.strip_prefix(' ').unwrap_or(value);
                    match field {
                        "event" => event.event = value.to_owned(),
                        "id" => event.id = Some(value.to_owned()),
                        "data" => {
                            if !event.data.is_empty() {
                                event.data.push('\n');
                            }
                            event.data.push_str(value);
                        }
                        _ => continue,
                    }
                    fields = true;
                }
                if fields && !(event.event == "message" && event.data.is_empty()) {
                    return Some(event);
                }
            }
            let left = deadline.saturating_duration_since(Instant::now());
            let chunk = tokio::time::timeout(left, self.response.chunk())
                .await
                .unwrap_or_else(|_| {
                    panic!("no event within {within:?}; buffered: {:?}", self.buffer)
                })
                .expect("reading the stream")?;
            self.buffer.push_str(&String::from_utf8_lossy(&chunk));
        }
    }
}

async fn get(url: &str) -> (u16, reqwest::header::HeaderMap, String) {
    let response = reqwest::get(url).await.expect("a response");
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    (status, headers, response.text().await.expect("a body"))
}

/// `forgeward link …` with the bot's data directory and public address: the link it prints.
fn cli_link(world: &World, args: &[&str]) -> String {
    let out = std::process::Command::new(FORGEWARD)
        .arg("link")
        .args(args)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("FORGEWARD_SERVER_DATA_DIR", world.data_dir())
        .env("FORGEWARD_SERVER_PUBLIC_URL", PUBLIC_URL)
        .output()
        .expect("forgeward link");
    let stdout = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stderr.contains("the link works until"), "{stderr}");
    let path = stdout
        .strip_prefix(PUBLIC_URL)
        .unwrap_or_else(|| panic!("a link on the public address: {stdout}"));
    format!("{}{path}", world.bot.url)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_job_page_opens_with_its_token_only_and_streams_the_log_while_the_worker_runs() {
    let mut world = labelled(&slow_saboteur(6)).await;
    let link = page_link(&mut world).await;
    let token = token_of(&link).to_owned();
    let base = world.bot.url.clone();
    let job: i64 = link
        .split("/jobs/")
        .nth(1)
        .and_then(|rest| rest.split('?').next())
        .and_then(|id| id.parse().ok())
        .expect("a job number in the link");

    // Without a token, with a forged one, with another job's: 403, and the same headers.
    let (status, headers, body) = get(&format!("{base}/jobs/{job}")).await;
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("needs a link from the bot"), "{body}");
    assert_eq!(headers["referrer-policy"], "no-referrer");
    let (expiry, tag) = token.split_once('.').expect("expiry.tag");
    let later = format!("{}.{tag}", expiry.parse::<i64>().expect("a number") + 3600);
    for forged in [
        later.as_str(),
        "1.AAAA",
        "nonsense",
        &token[..token.len() - 2],
    ] {
        let (status, _, body) = get(&format!("{base}/jobs/{job}?t={forged}")).await;
        assert_eq!(status, 403, "{forged}: {body}");
        assert!(body.contains("not valid for this page"), "{body}");
    }
    let (status, _, _) = get(&format!("{base}/jobs/{}?t={token}", job + 1)).await;
    assert_eq!(status, 403, "job {job}'s token opens no other job");
    let (status, _, _) = get(&format!("{base}/jobs/{job}/log?t={}", "1.AAAA")).await;
    assert_eq!(status, 403, "nor its stream without it");
    // An authentic token past its time says so.
    let key = LinkKey::load(&world.data_dir().join("job-link.key")).expect("the bot's key");
    let now = forgeward::links::now_secs();
    let expired = key.sign(Scope::Job(JobId(job)), now - 60);
    let (status, _, body) = get(&format!("{base}/jobs/{job}?t={expired}")).await;
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("this link expired on"), "{body}");

    // With its token: the page, strict and escaped.
    let (status, headers, page) = get(&link).await;
    assert_eq!(status, 200, "{page}");
    let csp = headers["content-security-policy"].to_str().expect("ascii");
    assert!(
        csp.starts_with("default-src 'none'; script-src 'sha256-"),
        "{csp}"
    );
    assert!(!csp.contains("unsafe-inline"), "{csp}");
    assert_eq!(headers["referrer-policy"], "no-referrer");
    assert_eq!(headers["cache-control"], "no-store");
    assert_eq!(headers["x-content-type-options"], "nosniff");
    assert!(
        page.contains("add() &lt;script&gt;alert(1)&lt;/script&gt; subtracts"),
        "the title is text: {page}"
    );
    assert!(!page.contains("<script>alert(1)"), "{page}");
    assert!(page.contains("href=\"https://github.example/acme/widgets/issues/7\""));

    // The stream: phases as they come, then the worker's lines while it runs.
    let stream = format!("{base}/jobs/{job}/log?t={token}");
    let mut events = Events::open(&stream, None).await;
    let mut phases_seen = Vec::new();
    let tick2 = loop {
        let event = events
            .next(Duration::from_secs(90))
            .await
            .expect("the stream goes on while the job runs");
        match event.event.as_str() {
            "phases" => {
                let data: serde_json::Value = serde_json::from_str(&event.data).expect("JSON");
                let names: Vec<String> = data["phases"]
                    .as_array()
                    .expect("phases")
                    .iter()
                    .map(|p| p["phase"].as_str().unwrap_or("").to_owned())
                    .collect();
                phases_seen.push((data["state"].as_str().unwrap_or("").to_owned(), names));
            }
            "log" => {
                let line: String = serde_json::from_str(&event.data).expect("a JSON string");
                if line.starts_with("tick 2 ") {
                    assert_eq!(
                        line, "tick 2 <b>&amp;</b>",
                        "the line as the worker printed it"
                    );
                    break event;
                }
            }
            "end" => panic!("the job ended before its second line: {phases_seen:?}"),
            _ => {}
        }
    };
    let (state, names) = phases_seen.last().expect("a phases event").clone();
    assert_eq!(state, "running", "{phases_seen:?}");
    assert_eq!(
        names.last().map(String::as_str),
        Some("working"),
        "{phases_seen:?}"
    );
    // requirements.txt calls for a setup: its phase is shown (not run: no registry is listed).
    assert!(
        names.starts_with(&[
            "cloning".to_owned(),
            "preparing environment".to_owned(),
            "preparing sandbox".to_owned()
        ]),
        "{phases_seen:?}"
    );
    let verdict = world
        .forge
        .status_comment(&world.repo, ISSUE)
        .expect("a comment");
    assert!(
        !crate::world::is_final(&verdict.body),
        "the line came while the job ran: {}",
        verdict.body
    );
    drop(events);

    // A client that reconnects with the last id it saw goes on from the next line.
    let id = tick2.id.clone().expect("log events carry an id");
    assert!(id.starts_with("1:"), "{id}");
    let mut events = Events::open(&stream, Some(&id)).await;
    let mut lines = Vec::new();
    let end = loop {
        let event = events
            .next(Duration::from_secs(120))
            .await
            .expect("the stream ends with an end event");
        match event.event.as_str() {
            "log" => lines.push(serde_json::from_str::<String>(&event.data).expect("JSON")),
            "end" => break event,
            _ => {}
        }
    };
    assert_eq!(
        lines.first().map(String::as_str),
        Some("tick 3 <b>&amp;</b>"),
        "{lines:?}"
    );
    assert!(
        !lines
            .iter()
            .any(|l| l.starts_with("tick 1 ") || l.starts_with("tick 2 "))
    );
    assert!(
        lines.iter().any(|l| l == "tick 6 <b>&amp;</b>"),
        "{lines:?}"
    );
    assert!(lines.iter().any(|l| l == "all tests pass now"), "{lines:?}");
    assert_eq!(end.data, r#"{"state":"flagged"}"#);
    assert_eq!(
        events.next(Duration::from_secs(10)).await,
        None,
        "the stream ends with the job"
    );

    let verdict = flagged(&mut world).await;
    assert!(verdict.contains(&format!("/jobs/{job}?t=")), "{verdict}");

    // The finished job's page: the verdict, the flags linked to their lines, the whole log, no
    // stream and no script.
    let (status, _, page) = get(&link).await;
    assert_eq!(status, 200);
    assert!(page.contains("⚠️ Flagged — 2 review flags"), "{page}");
    assert!(
        page.contains("/acme/widgets/blob/") && page.contains("/tests/test_calc.py#L6\""),
        "{page}"
    );
    assert!(
        page.contains("tick 1 &lt;b&gt;&amp;amp;&lt;/b&gt;"),
        "{page}"
    );
    assert!(
        !page.contains("data-stream") && !page.contains("<script"),
        "{page}"
    );

    // The list, with the operator's link: the job in it, linked with a token of its own.
    let list = cli_link(&world, &["jobs"]);
    let (status, _, body) = get(&list).await;
    assert_eq!(status, 200, "{body}");
    let job_href = format!("href=\"/jobs/{job}?t=");
    assert!(body.contains(&job_href), "{body}");
    let listed_token = body
        .split(&job_href)
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("a token");
    let (status, _, _) = get(&format!("{base}/jobs/{job}?t={listed_token}")).await;
    assert_eq!(status, 200, "the list's link to the job opens it");
    let (_, _, flagged_only) = get(&format!("{list}&state=flagged")).await;
    assert!(flagged_only.contains(&job_href), "{flagged_only}");
    let (_, _, failed_only) = get(&format!("{list}&state=failed")).await;
    assert!(failed_only.contains("No jobs match"), "{failed_only}");
    let (_, _, elsewhere) = get(&format!("{list}&repo=github%3Aacme%2Fgadgets")).await;
    assert!(elsewhere.contains("No jobs match"), "{elsewhere}");
    let (status, _, body) = get(&format!("{list}&state=bogus")).await;
    assert_eq!(status, 400, "{body}");
    // Each link opens its own page only.
    let (status, _, _) = get(&format!("{base}/jobs?t={token}")).await;
    assert_eq!(status, 403, "a job's token does not open the list");
    let list_token = token_of(&list).to_owned();
    let (status, _, _) = get(&format!("{base}/jobs/{job}?t={list_token}")).await;
    assert_eq!(status, 403, "the list's token does not open a job");
    let one = cli_link(&world, &["job", &job.to_string(), "--ttl", "1h"]);
    let (status, _, _) = get(&one).await;
    assert_eq!(status, 200, "forgeward link job N opens the job's page");

    // The bot logged each request, and never a token.
    let log = world.bot.drain().to_owned();
    assert!(log.contains("page request"), "{log}");
    for secret in [
        token.as_str(),
        list_token.as_str(),
        listed_token,
        expired.as_str(),
    ] {
        let tag = secret.split('.').nth(1).expect("a tag");
        assert!(!log.contains(tag), "a token in the bot's log:\n{log}");
    }
}

#[test]
fn link_says_in_one_line_when_the_key_is_not_there() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = std::process::Command::new(FORGEWARD)
        .args(["link", "job", "3"])
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("FORGEWARD_SERVER_DATA_DIR", dir.path())
        .output()
        .expect("forgeward link");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("forgeward: error: the job link key ") && stderr.contains("is missing"),
        "{stderr}"
    );
    assert!(
        !dir.path().join("job-link.key").exists(),
        "the command makes no key of its own"
    );
}
