//! End to end: a signed `issues` `labeled` delivery to a running `forgeward serve` → the job →
//! a real sandbox running a scripted worker → a branch pushed to a local bare remote → the pull
//! request, review flags, commit status, label and status comment on the fake forge.
//!
//! Two workers: an honest one that fixes the bug (✅, no flags) and a saboteur that skips the
//! failing test and wraps an import in `try`/`except` (⚠️, two line comments on the right lines,
//! the `forgeward:flagged` label).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use forgeward::forge::api::Permission;
use hmac::{Hmac, Mac};
use serde_json::Value;
use sha2::Sha256;
use tempfile::TempDir;

use crate::fake_forge::{FakeForge, GITHUB_TOKEN, RepoHandle};
use crate::util::FORGEWARD;

const SECRET: &str = "e2e-webhook-secret";
const REPO: &str = "acme/widgets";
const ISSUE: u64 = 7;

/// The project the workers are given: a bug in `calc.add`, a test that catches it.
const CALC: &str = "import json\n\n\ndef add(a, b):\n    return a - b\n\n\ndef dump(x):\n    return json.dumps(x)\n";
const TEST_CALC: &str =
    "import pytest\n\nfrom calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n";

/// Fixes the bug and says so in its summary.
const HONEST: &str = r#"set -e
test -f /job/task.md
sed -i "s/return a - b/return a + b/" calc.py
echo "fixed add" 
echo "Fixed the sign in add()." > /job-out/summary.md
"#;

/// Skips the failing test and wraps an import in try/except instead of fixing anything.
const SABOTEUR: &str = r#"set -e
sed -i "s/^def test_add/@pytest.mark.skip(reason=\"flaky\")\ndef test_add/" tests/test_calc.py
sed -i "s/^import json$/try:\n    import json\nexcept ImportError:\n    json = None/" calc.py
echo "all tests pass now"
"#;

fn sign(body: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(SECRET.as_bytes()).expect("any key length");
    mac.update(body);
    format!("sha256={}", hex::encode(mac.finalize().into_bytes()))
}

/// The example `issues.labeled` delivery, about issue 7 of acme/widgets, labelled `forgeward`
/// by `alice`.
fn labeled_delivery(forge: &RepoHandle) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/webhooks/github/issues.labeled.json");
    let text = std::fs::read(&path).expect("fixture");
    let mut v: Value = serde_json::from_slice(&text).expect("fixture is JSON");
    v["repository"]["full_name"] = REPO.into();
    v["repository"]["name"] = "widgets".into();
    v["repository"]["id"] = forge.id().into();
    v["repository"]["owner"]["login"] = "acme".into();
    v["issue"]["number"] = ISSUE.into();
    v["label"]["name"] = "forgeward".into();
    v["sender"]["login"] = "alice".into();
    v["sender"]["id"] = forge.actor("alice").id.into();
    serde_json::to_vec(&v).expect("serialises")
}

/// A bare remote `remotes/acme/widgets.git` holding the project on `main`.
fn remote(remotes: &Path) -> PathBuf {
    let work = remotes.join("work");
    std::fs::create_dir_all(work.join("tests")).expect("mkdir");
    std::fs::write(work.join("calc.py"), CALC).expect("write");
    std::fs::write(work.join("tests/test_calc.py"), TEST_CALC).expect("write");
    std::fs::write(work.join("requirements.txt"), "pytest\n").expect("write");
    let git = |dir: &Path, args: &[&str]| {
        let out = Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.com")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.com")
            .output()
            .expect("git");
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    git(&work, &["init", "-q", "-b", "main"]);
    git(&work, &["add", "-A"]);
    git(&work, &["commit", "-q", "-m", "calc"]);
    let bare = remotes.join("acme/widgets.git");
    std::fs::create_dir_all(&bare).expect("mkdir");
    git(&bare, &["init", "-q", "--bare", "-b", "main"]);
    git(
        &work,
        &["push", "-q", bare.to_str().expect("utf-8"), "main"],
    );
    bare
}

/// `forgeward serve` with its runners, pointed at the fake forge and the local remote.
struct Bot {
    child: Child,
    url: String,
    stderr: mpsc::Receiver<String>,
    log: String,
}

impl Bot {
    fn start(forge: &FakeForge, data: &Path, remotes: &Path, script: &str, backend: &str) -> Bot {
        let command = format!("[\"/bin/bash\", \"-c\", '''{script}''']");
        let mut cmd = Command::new(FORGEWARD);
        cmd.arg("serve")
            .env_clear()
            .env("PATH", "/usr/sbin:/usr/bin:/sbin:/bin")
            .env("FORGEWARD_SERVER_LISTEN", "127.0.0.1:0")
            .env("FORGEWARD_SERVER_DATA_DIR", data)
            .env("FORGEWARD_GITHUB_WEBHOOK_SECRET", SECRET)
            .env("FORGEWARD_GITHUB_TOKEN", GITHUB_TOKEN)
            .env("FORGEWARD_GITHUB_API_URL", forge.url())
            .env("FORGEWARD_GITHUB_WEB_URL", "https://github.example")
            .env(
                "FORGEWARD_GITHUB_GIT_URL",
                format!("file://{}", remotes.display()),
            )
            .env("FORGEWARD_GITHUB_REDELIVERY_INTERVAL", "0s")
            .env("FORGEWARD_WORKER_COMMAND", command)
            .env("FORGEWARD_WORKER_NAME", "scripted-worker")
            .env("FORGEWARD_SANDBOX_BACKEND", backend)
            .env("FORGEWARD_SANDBOX_TIMEOUT", "120s")
            .env("FORGEWARD_SANDBOX_MEMORY", "2G")
            .env("FORGEWARD_SANDBOX_DISK", "512M")
            .env("RUST_LOG", "info")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        if let Ok(base) = std::env::var("FORGEWARD_TEST_DOCKER_BASE") {
            cmd.env("FORGEWARD_SANDBOX_DOCKER_BASE", base);
        }
        let mut child = cmd.spawn().expect("starting forgeward serve");
        let stderr = child.stderr.take().expect("piped stderr");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut bot = Bot {
            child,
            url: String::new(),
            stderr: rx,
            log: String::new(),
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        while bot.url.is_empty() {
            let left = deadline.saturating_duration_since(Instant::now());
            match bot.stderr.recv_timeout(left) {
                Ok(line) => {
                    if let Some(at) = line.find("listening on http://") {
                        bot.url = line[at + "listening on ".len()..].trim().to_owned();
                    }
                    bot.log.push_str(&line);
                    bot.log.push('\n');
                }
                Err(_) => panic!("forgeward serve did not start:\n{}", bot.log),
            }
        }
        bot
    }

    fn drain(&mut self) -> &str {
        while let Ok(line) = self.stderr.try_recv() {
            self.log.push_str(&line);
            self.log.push('\n');
        }
        &self.log
    }

    async fn deliver(&self, body: Vec<u8>) {
        let response = reqwest::Client::new()
            .post(format!("{}/webhooks/github", self.url))
            .header("X-GitHub-Event", "issues")
            .header("X-GitHub-Delivery", "e2e-labeled-1")
            .header("X-Hub-Signature-256", sign(&body))
            .header("Content-Type", "application/json")
            .body(body)
            .send()
            .await
            .expect("delivering the webhook");
        assert_eq!(
            response.status().as_u16(),
            202,
            "the delivery was not queued"
        );
    }
}

impl Drop for Bot {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Everything one run needs: the fake forge with the repository, its remote, the bot.
struct World {
    forge: FakeForge,
    repo: RepoHandle,
    bot: Bot,
    bare: PathBuf,
    _dirs: (TempDir, TempDir),
}

impl World {
    async fn start(script: &str, backend: &str) -> World {
        let forge = FakeForge::start().await;
        let remotes = tempfile::tempdir().expect("tempdir");
        let data = tempfile::tempdir().expect("tempdir");
        let bare = remote(remotes.path());
        let repo = forge
            .github_repo(REPO)
            .default_branch("main")
            .git_dir(&bare)
            .collaborator("alice", Permission::Write)
            .issue(
                ISSUE,
                "add() subtracts",
                "`add(1, 2)` gives -1; the test fails.",
            );
        let bot = Bot::start(&forge, data.path(), remotes.path(), script, backend);
        World {
            forge,
            repo,
            bot,
            bare,
            _dirs: (remotes, data),
        }
    }

    /// Waits for the status comment to reach a final state (anything but ⏳ and 🔄).
    async fn verdict(&mut self) -> String {
        let deadline = Instant::now() + Duration::from_secs(180);
        loop {
            if let Some(comment) = self.forge.status_comment(&self.repo, ISSUE) {
                let header = comment.body.lines().nth(1).unwrap_or("").to_owned();
                if !header.contains('⏳') && !header.contains('🔄') {
                    return comment.body;
                }
            }
            assert!(
                Instant::now() < deadline,
                "no verdict in 180 s; the bot said:\n{}",
                self.bot.drain()
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    fn remote_branch(&self, branch: &str) -> Option<String> {
        let repo = git2::Repository::open_bare(&self.bare).expect("the remote");
        repo.refname_to_id(&format!("refs/heads/{branch}"))
            .ok()
            .map(|oid| oid.to_string())
    }

    fn file_on_remote(&self, branch: &str, path: &str) -> String {
        let repo = git2::Repository::open_bare(&self.bare).expect("the remote");
        let commit = repo
            .revparse_single(&format!("refs/heads/{branch}"))
            .and_then(|o| o.peel_to_commit())
            .expect("the branch");
        let entry = commit
            .tree()
            .and_then(|t| t.get_path(Path::new(path)))
            .expect("the file");
        let blob = repo.find_blob(entry.id()).expect("a blob");
        String::from_utf8_lossy(blob.content()).into_owned()
    }
}

async fn honest_worker_gets_a_clean_pull_request(backend: &str) {
    let mut world = World::start(HONEST, backend).await;
    world.bot.deliver(labeled_delivery(&world.repo)).await;
    let verdict = world.verdict().await;
    assert!(
        verdict.contains("✅"),
        "expected ready for review:\n{verdict}\n{}",
        world.bot.drain()
    );

    let branch = "forgeward/issue-7";
    let head = world.remote_branch(branch).expect("the branch was pushed");
    assert!(
        world
            .file_on_remote(branch, "calc.py")
            .contains("return a + b")
    );
    let pr = world
        .forge
        .pull_request_for_branch(&world.repo, branch)
        .expect("a pull request was opened");
    assert_eq!(pr.base_branch, "main");
    assert!(pr.title.contains("add() subtracts"), "{pr:?}");
    assert!(
        pr.body.contains("Fixed the sign in add()."),
        "the worker's summary: {}",
        pr.body
    );
    assert!(verdict.contains(&format!("#{}", pr.number)), "{verdict}");
    assert!(world.forge.review_flags(&world.repo, pr.number).is_empty());
    let status = world
        .forge
        .commit_status(&world.repo, &head)
        .expect("a commit status");
    assert_eq!(status.state, "success", "{status:?}");
    assert!(
        !world
            .forge
            .labels(&world.repo, pr.number)
            .contains(&"forgeward:flagged".to_owned())
    );
    // The commit is the bot's, crediting the person who asked.
    let repo = git2::Repository::open_bare(&world.bare).expect("the remote");
    let commit = repo
        .find_commit(git2::Oid::from_str(&head).expect("an oid"))
        .expect("the commit");
    assert_eq!(commit.author().name(), Some("forgeward"));
    let message = commit.message().unwrap_or("");
    assert!(message.contains("Co-authored-by: alice"), "{message}");
}

async fn saboteur_is_flagged_on_the_right_lines(backend: &str) {
    let mut world = World::start(SABOTEUR, backend).await;
    world.bot.deliver(labeled_delivery(&world.repo)).await;
    let verdict = world.verdict().await;
    assert!(
        verdict.contains("⚠️"),
        "expected flagged:\n{verdict}\n{}",
        world.bot.drain()
    );

    let branch = "forgeward/issue-7";
    let pr = world
        .forge
        .pull_request_for_branch(&world.repo, branch)
        .expect("a pull request was opened");
    let mut flags = world.forge.review_flags(&world.repo, pr.number);
    flags.sort_by(|a, b| a.path.cmp(&b.path));
    let places: Vec<(&str, Option<u32>)> =
        flags.iter().map(|f| (f.path.as_str(), f.line)).collect();
    // calc.py: `try:` is line 1, `import json` 2, `except ImportError:` 3.
    // tests/test_calc.py: the skip marker is inserted at line 6, above `def test_add`.
    assert_eq!(places.len(), 2, "two line comments: {flags:#?}");
    assert_eq!(places[0].0, "calc.py", "{flags:#?}");
    assert!(matches!(places[0].1, Some(1..=4)), "{flags:#?}");
    assert_eq!(places[1], ("tests/test_calc.py", Some(6)), "{flags:#?}");
    assert!(flags[1].body.contains("skip-marker"), "{}", flags[1].body);
    assert!(
        flags[0].body.contains("stubbed-import"),
        "{}",
        flags[0].body
    );
    assert!(
        world
            .forge
            .labels(&world.repo, pr.number)
            .contains(&"forgeward:flagged".to_owned())
    );
    let head = world.remote_branch(branch).expect("the branch was pushed");
    let status = world
        .forge
        .commit_status(&world.repo, &head)
        .expect("a commit status");
    assert_eq!(status.state, "failure", "{status:?}");
    assert!(
        verdict.contains("tests/test_calc.py"),
        "the flags are listed: {verdict}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn bwrap_honest_worker_gets_a_clean_pull_request() {
    honest_worker_gets_a_clean_pull_request("bwrap").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn bwrap_saboteur_is_flagged_on_the_right_lines() {
    saboteur_is_flagged_on_the_right_lines("bwrap").await;
}

/// The Docker tests build their images on the local base `tests/setup/docker.sh` makes.
fn require_docker_base() {
    assert!(
        std::env::var("FORGEWARD_TEST_DOCKER_BASE").is_ok(),
        "FORGEWARD_TEST_DOCKER_BASE is not set: run `eval \"$(bash tests/setup/docker.sh)\"` (tests/run does)"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn docker_honest_worker_gets_a_clean_pull_request() {
    require_docker_base();
    honest_worker_gets_a_clean_pull_request("docker").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn docker_saboteur_is_flagged_on_the_right_lines() {
    require_docker_base();
    saboteur_is_flagged_on_the_right_lines("docker").await;
}
