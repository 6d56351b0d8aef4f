//! The world an end-to-end run lives in: the fake forge holding acme/widgets, a local bare
//! remote the bot pushes to, and `forgeward serve` as a process pointed at both, with a
//! scripted worker. Shared by the end-to-end tests and the pipeline benchmark.

// Each user takes what it needs.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime};

use forgeward::forge::api::Permission;
use hmac::{Hmac, Mac};
use serde_json::Value;
use sha2::Sha256;
use tempfile::TempDir;

use forgeward::forge::Forge;

use crate::fake_forge::{
    FORGEJO_TOKEN, FakeForge, GITHUB_TOKEN, GITLAB_TOKEN, PullView, RepoHandle, pr,
};
use crate::util::eventually;

const FORGEWARD: &str = env!("CARGO_BIN_EXE_forgeward");
pub const SECRET: &str = "e2e-webhook-secret";
pub const REPO: &str = "acme/widgets";

/// Whether a status comment tells a final state: its header (the line after the marker) shows
/// neither ⏳ nor 🔄.
pub fn is_final(status_comment: &str) -> bool {
    let header = status_comment.lines().nth(1).unwrap_or("");
    !header.contains('⏳') && !header.contains('🔄')
}

pub fn sign(body: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(SECRET.as_bytes()).expect("any key length");
    mac.update(body);
    format!("sha256={}", hex::encode(mac.finalize().into_bytes()))
}

/// A GitHub example payload from `tests/data/webhooks/github`.
fn fixture(name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/webhooks/github")
        .join(name);
    let text = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_slice(&text).expect("fixture is JSON")
}

/// Makes a payload's `repository` object acme/widgets as the fake forge has it.
fn acme_widgets(repository: &mut Value, forge: &RepoHandle) {
    repository["full_name"] = REPO.into();
    repository["name"] = "widgets".into();
    repository["id"] = forge.id().into();
    repository["owner"]["login"] = "acme".into();
}

/// The example `issues.labeled` delivery, about `issue` of acme/widgets, labelled `forgeward`
/// by `alice`.
pub fn labeled_delivery(forge: &RepoHandle, issue: u64) -> Vec<u8> {
    let mut v = fixture("issues.labeled.json");
    acme_widgets(&mut v["repository"], forge);
    v["issue"]["number"] = issue.into();
    v["label"]["name"] = "forgeward".into();
    v["sender"]["login"] = "alice".into();
    v["sender"]["id"] = forge.actor("alice").id.into();
    serde_json::to_vec(&v).expect("serialises")
}

/// The example `issue_comment` `created` delivery: `body` by `alice` on `issue` of acme/widgets,
/// as comment `comment_id`.
pub fn comment_delivery(forge: &RepoHandle, issue: u64, comment_id: u64, body: &str) -> Vec<u8> {
    comment_delivery_by(forge, "alice", 1001, issue, comment_id, body)
}

/// The same, by `login` (user id `id` when the forge does not know them).
pub fn comment_delivery_by(
    forge: &RepoHandle,
    login: &str,
    id: u64,
    issue: u64,
    comment_id: u64,
    body: &str,
) -> Vec<u8> {
    let mut v = fixture("issue_comment.created.json");
    acme_widgets(&mut v["repository"], forge);
    v["issue"]["number"] = issue.into();
    v["comment"]["id"] = comment_id.into();
    v["comment"]["body"] = body.into();
    let id = if login == "alice" {
        forge.actor("alice").id
    } else {
        id
    };
    v["comment"]["user"]["login"] = login.into();
    v["comment"]["user"]["id"] = id.into();
    v["sender"]["login"] = login.into();
    v["sender"]["id"] = id.into();
    serde_json::to_vec(&v).expect("serialises")
}

/// The example `pull_request` delivery (`action`: opened, synchronize, …) for pull request
/// `number` of acme/widgets from its own branch `head` at `head_sha` into `main` at `base_sha`.
pub fn pull_request_delivery(
    forge: &RepoHandle,
    action: &str,
    number: u64,
    head: &str,
    head_sha: &str,
    base_sha: &str,
) -> Vec<u8> {
    let mut v = fixture("pull_request.opened.json");
    v["action"] = action.into();
    v["number"] = number.into();
    for path in [
        &["repository"][..],
        &["pull_request", "head", "repo"],
        &["pull_request", "base", "repo"],
    ] {
        acme_widgets(path.iter().fold(&mut v, |v, key| &mut v[*key]), forge);
    }
    v["pull_request"]["number"] = number.into();
    v["pull_request"]["head"]["ref"] = head.into();
    v["pull_request"]["head"]["sha"] = head_sha.into();
    v["pull_request"]["base"]["ref"] = "main".into();
    v["pull_request"]["base"]["sha"] = base_sha.into();
    serde_json::to_vec(&v).expect("serialises")
}

/// GitLab's documented Issue Hook for `issue` of the project acme/widgets, the `forgeward`
/// label added by `alice`.
pub fn gitlab_labeled_delivery(forge: &RepoHandle, issue: u64) -> Vec<u8> {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/webhooks/gitlab/issue.labeled.json");
    let text = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut v: Value = serde_json::from_slice(&text).expect("fixture is JSON");
    v["project"]["path_with_namespace"] = REPO.into();
    v["project"]["id"] = forge.id().into();
    v["object_attributes"]["iid"] = issue.into();
    v["user"]["username"] = "alice".into();
    v["user"]["id"] = forge.actor("alice").id.into();
    serde_json::to_vec(&v).expect("serialises")
}

/// GitLab's documented Note Hook: `body` by `alice` on `issue` of the project acme/widgets, as
/// note `note_id`.
pub fn gitlab_comment_delivery(
    forge: &RepoHandle,
    issue: u64,
    note_id: u64,
    body: &str,
) -> Vec<u8> {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/webhooks/gitlab/note.issue.json");
    let text = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut v: Value = serde_json::from_slice(&text).expect("fixture is JSON");
    v["project"]["path_with_namespace"] = REPO.into();
    v["project"]["id"] = forge.id().into();
    v["project_id"] = forge.id().into();
    v["issue"]["iid"] = issue.into();
    v["object_attributes"]["id"] = note_id.into();
    v["object_attributes"]["note"] = body.into();
    v["user"]["username"] = "alice".into();
    v["user"]["id"] = forge.actor("alice").id.into();
    serde_json::to_vec(&v).expect("serialises")
}

/// GitLab's documented Merge Request Hook: merge request `number` of acme/widgets opened from
/// its own `head` branch at `head_sha`.
pub fn gitlab_merge_request_delivery(
    forge: &RepoHandle,
    number: u64,
    head: &str,
    head_sha: &str,
) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/webhooks/gitlab/merge_request.open.json");
    let text = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut v: Value = serde_json::from_slice(&text).expect("fixture is JSON");
    v["project"]["path_with_namespace"] = REPO.into();
    v["project"]["id"] = forge.id().into();
    let mr = &mut v["object_attributes"];
    mr["iid"] = number.into();
    mr["source_branch"] = head.into();
    mr["target_branch"] = "main".into();
    mr["source_project_id"] = forge.id().into();
    mr["target_project_id"] = forge.id().into();
    mr["source"]["path_with_namespace"] = REPO.into();
    mr["target"]["path_with_namespace"] = REPO.into();
    mr["last_commit"]["id"] = head_sha.into();
    v["user"]["username"] = "alice".into();
    v["user"]["id"] = forge.actor("alice").id.into();
    serde_json::to_vec(&v).expect("serialises")
}

/// GitLab's Merge Request Hook for a push to merge request `number`: its head moved from
/// `oldrev` to `head_sha` (an `update` that pushed commits).
pub fn gitlab_merge_request_update(
    forge: &RepoHandle,
    number: u64,
    head: &str,
    head_sha: &str,
    oldrev: &str,
) -> Vec<u8> {
    let body = gitlab_merge_request_delivery(forge, number, head, head_sha);
    let mut v: Value = serde_json::from_slice(&body).expect("JSON");
    v["object_attributes"]["action"] = "update".into();
    v["object_attributes"]["oldrev"] = oldrev.into();
    serde_json::to_vec(&v).expect("serialises")
}

/// A Forgejo fixture from `tests/data/webhooks/forgejo`.
fn forgejo_fixture(name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/webhooks/forgejo")
        .join(name);
    let text = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_slice(&text).expect("fixture is JSON")
}

/// Makes a Forgejo payload's `repository` object acme/widgets as the fake forge has it.
fn forgejo_acme_widgets(repository: &mut Value, forge: &RepoHandle) {
    repository["full_name"] = REPO.into();
    repository["name"] = "widgets".into();
    repository["id"] = forge.id().into();
    repository["owner"]["login"] = "acme".into();
    repository["default_branch"] = "main".into();
}

fn forgejo_sender(v: &mut Value, login: &str, id: u64) {
    v["sender"]["login"] = login.into();
    v["sender"]["id"] = id.into();
}

/// Forgejo's `issues` `label_updated` delivery for `issue` of acme/widgets by `alice`: the
/// issue with the labels the fake forge has on it now.
pub fn forgejo_labeled_delivery(forge: &RepoHandle, issue: u64) -> Vec<u8> {
    let mut v = forgejo_fixture("issues.label_updated.json");
    forgejo_acme_widgets(&mut v["repository"], forge);
    v["number"] = issue.into();
    v["issue"]["number"] = issue.into();
    let template = v["issue"]["labels"][0].clone();
    let labels: Vec<Value> = forge
        .labels_of(issue)
        .into_iter()
        .enumerate()
        .map(|(i, name)| {
            let mut label = template.clone();
            label["id"] = (900 + i).into();
            label["name"] = name.into();
            label
        })
        .collect();
    v["issue"]["labels"] = Value::Array(labels);
    forgejo_sender(&mut v, "alice", forge.actor("alice").id);
    serde_json::to_vec(&v).expect("serialises")
}

/// Forgejo's `issue_comment` `created` delivery: `body` by `login` (user id `id` when the forge
/// does not know them) on `issue` of acme/widgets, as comment `comment_id`.
pub fn forgejo_comment_delivery_by(
    forge: &RepoHandle,
    login: &str,
    id: u64,
    issue: u64,
    comment_id: u64,
    body: &str,
) -> Vec<u8> {
    let mut v = forgejo_fixture("issue_comment.created.json");
    forgejo_acme_widgets(&mut v["repository"], forge);
    v["issue"]["number"] = issue.into();
    v["comment"]["id"] = comment_id.into();
    v["comment"]["body"] = body.into();
    let id = if login == "alice" {
        forge.actor("alice").id
    } else {
        id
    };
    v["comment"]["user"]["login"] = login.into();
    v["comment"]["user"]["id"] = id.into();
    forgejo_sender(&mut v, login, id);
    serde_json::to_vec(&v).expect("serialises")
}

/// Forgejo's `pull_request` delivery (`action`: opened, synchronized, reopened) for pull
/// request `number` of acme/widgets from its own branch `head` at `head_sha` into `main` at
/// `base_sha`, opened by `alice`.
pub fn forgejo_pull_request_delivery(
    forge: &RepoHandle,
    action: &str,
    number: u64,
    head: &str,
    head_sha: &str,
    base_sha: &str,
) -> Vec<u8> {
    let mut v = forgejo_fixture("pull_request.opened.json");
    v["action"] = action.into();
    v["number"] = number.into();
    for path in [
        &["repository"][..],
        &["pull_request", "head", "repo"],
        &["pull_request", "base", "repo"],
    ] {
        forgejo_acme_widgets(path.iter().fold(&mut v, |v, key| &mut v[*key]), forge);
    }
    v["pull_request"]["number"] = number.into();
    v["pull_request"]["head"]["ref"] = head.into();
    v["pull_request"]["head"]["label"] = head.into();
    v["pull_request"]["head"]["sha"] = head_sha.into();
    v["pull_request"]["head"]["repo_id"] = forge.id().into();
    v["pull_request"]["base"]["ref"] = "main".into();
    v["pull_request"]["base"]["label"] = "main".into();
    v["pull_request"]["base"]["sha"] = base_sha.into();
    v["pull_request"]["base"]["repo_id"] = forge.id().into();
    v["pull_request"]["merge_base"] = base_sha.into();
    let alice = forge.actor("alice").id;
    v["pull_request"]["user"]["login"] = "alice".into();
    v["pull_request"]["user"]["id"] = alice.into();
    forgejo_sender(&mut v, "alice", alice);
    serde_json::to_vec(&v).expect("serialises")
}

/// The end-to-end tests' project: `add` subtracts, and its one test fails.
pub const CALC: &str = "import json\n\n\ndef add(a, b):\n    return a - b\n\n\ndef dump(x):\n    return json.dumps(x)\n";
pub const TEST_CALC: &str =
    "import pytest\n\nfrom calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n";
pub const CALC_FILES: &[(&str, &str)] = &[
    ("calc.py", CALC),
    ("tests/test_calc.py", TEST_CALC),
    ("requirements.txt", "pytest\n"),
];

/// A bare remote `remotes/acme/widgets.git` holding `files` on `main`.
pub fn remote(remotes: &Path, files: &[(&str, &str)]) -> PathBuf {
    let work = remotes.join("work");
    for (path, content) in files {
        let path = work.join(path);
        std::fs::create_dir_all(path.parent().expect("a file in a directory")).expect("mkdir");
        std::fs::write(path, content).expect("write");
    }
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
    // A branch no job starts from: a job fetches only what it needs, never this.
    git(&work, &["checkout", "-q", "-b", EXPERIMENT]);
    std::fs::write(work.join("experiment.txt"), EXPERIMENT_CONTENT).expect("write");
    git(&work, &["add", "-A"]);
    git(&work, &["commit", "-q", "-m", "an experiment"]);
    git(
        &work,
        &["push", "-q", bare.to_str().expect("utf-8"), EXPERIMENT],
    );
    git(&work, &["checkout", "-q", "main"]);
    bare
}

/// The remote's branch that no job needs, and what only it holds.
pub const EXPERIMENT: &str = "experiment";
const EXPERIMENT_CONTENT: &str = "an experiment no job needs\n";

/// How the bot authenticates to the fake GitHub.
#[derive(Clone, Debug)]
pub enum GithubAs {
    /// With the personal token the fake accepts everywhere: commit statuses.
    Token,
    /// As the GitHub App (id 1, the test-only key; the repository must have its installation),
    /// with these more settings (`FORGEWARD_GITHUB_FLAGGED_CONCLUSION`, …): check runs.
    App(Vec<(&'static str, &'static str)>),
}

/// The installation of the App on acme/widgets in the App worlds.
pub const INSTALLATION: u64 = 42;

/// `forgeward serve` with its runners, pointed at the fake forge and the local remote.
pub struct Bot {
    child: Child,
    pub url: String,
    stderr: mpsc::Receiver<String>,
    log: String,
}

impl Bot {
    pub fn start(
        forge: &FakeForge,
        data: &Path,
        remotes: &Path,
        script: &str,
        backend: &str,
    ) -> Bot {
        Bot::start_as(forge, data, remotes, script, backend, &GithubAs::Token, &[])
    }

    /// The same, with more variables (`FORGEWARD_SERVER_PUBLIC_URL`, say) in its environment.
    pub fn start_with_env(
        forge: &FakeForge,
        data: &Path,
        remotes: &Path,
        script: &str,
        backend: &str,
        env: &[(&str, &str)],
    ) -> Bot {
        Bot::start_as(forge, data, remotes, script, backend, &GithubAs::Token, env)
    }

    /// The same, authenticating to GitHub as `github` says, with `env` added.
    pub fn start_as(
        forge: &FakeForge,
        data: &Path,
        remotes: &Path,
        script: &str,
        backend: &str,
        github: &GithubAs,
        env: &[(&str, &str)],
    ) -> Bot {
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
            .env("FORGEWARD_GITLAB_WEBHOOK_TOKEN", SECRET)
            .env("FORGEWARD_GITLAB_TOKEN", GITLAB_TOKEN)
            .env("FORGEWARD_GITLAB_URL", forge.url())
            .env(
                "FORGEWARD_GITLAB_GIT_URL",
                format!("file://{}", remotes.display()),
            )
            .env("FORGEWARD_FORGEJO_WEBHOOK_SECRET", SECRET)
            .env("FORGEWARD_FORGEJO_TOKEN", FORGEJO_TOKEN)
            .env("FORGEWARD_FORGEJO_URL", forge.url())
            .env(
                "FORGEWARD_FORGEJO_GIT_URL",
                format!("file://{}", remotes.display()),
            )
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
        if let GithubAs::App(settings) = github {
            let key = Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/data/github-app/test-only-private-key.pem");
            cmd.env_remove("FORGEWARD_GITHUB_TOKEN")
                .env("FORGEWARD_GITHUB_APP_ID", "1")
                .env("FORGEWARD_GITHUB_PRIVATE_KEY_FILE", key);
            for (name, value) in settings {
                cmd.env(name, value);
            }
        }
        cmd.envs(env.iter().copied());
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

    pub fn drain(&mut self) -> &str {
        while let Ok(line) = self.stderr.try_recv() {
            self.log.push_str(&line);
            self.log.push('\n');
        }
        &self.log
    }

    /// Sends a signed `issues` delivery; returns when the bot acknowledged it.
    pub async fn deliver(&self, body: Vec<u8>, delivery: &str) -> SystemTime {
        self.deliver_event("issues", body, delivery).await
    }

    /// Sends a GitLab delivery of `event` (`Issue Hook`, …) with the webhook token.
    pub async fn deliver_gitlab(&self, event: &str, body: Vec<u8>, uuid: &str) -> SystemTime {
        let response = reqwest::Client::new()
            .post(format!("{}/webhooks/gitlab", self.url))
            .header("X-Gitlab-Event", event)
            .header("X-Gitlab-Token", SECRET)
            .header("X-Gitlab-Webhook-UUID", uuid)
            .header("Content-Type", "application/json")
            .body(body)
            .send()
            .await
            .expect("delivering the webhook");
        let acked = SystemTime::now();
        assert_eq!(
            response.status().as_u16(),
            202,
            "the delivery was not queued"
        );
        acked
    }

    /// Sends a Forgejo delivery of `event` (`issues`, `issue_comment`, `pull_request`), signed
    /// as Forgejo signs (the hex HMAC-SHA256 of the body, no prefix); returns when the bot
    /// acknowledged it.
    pub async fn deliver_forgejo(&self, event: &str, body: Vec<u8>, delivery: &str) -> SystemTime {
        let signature = sign(&body);
        let signature = signature.trim_start_matches("sha256=");
        let response = reqwest::Client::new()
            .post(format!("{}/webhooks/forgejo", self.url))
            .header("X-Forgejo-Event", event)
            .header("X-Forgejo-Delivery", delivery)
            .header("X-Forgejo-Signature", signature)
            .header("Content-Type", "application/json")
            .body(body)
            .send()
            .await
            .expect("delivering the webhook");
        let acked = SystemTime::now();
        assert_eq!(
            response.status().as_u16(),
            202,
            "the delivery was not queued"
        );
        acked
    }

    /// Sends a signed delivery of `event`; returns when the bot acknowledged it.
    pub async fn deliver_event(&self, event: &str, body: Vec<u8>, delivery: &str) -> SystemTime {
        let response = reqwest::Client::new()
            .post(format!("{}/webhooks/github", self.url))
            .header("X-GitHub-Event", event)
            .header("X-GitHub-Delivery", delivery)
            .header("X-Hub-Signature-256", sign(&body))
            .header("Content-Type", "application/json")
            .body(body)
            .send()
            .await
            .expect("delivering the webhook");
        let acked = SystemTime::now();
        assert_eq!(
            response.status().as_u16(),
            202,
            "the delivery was not queued"
        );
        acked
    }
}

impl Drop for Bot {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Everything one run needs: the fake forge with the repository, its remote, the bot.
pub struct World {
    pub forge: FakeForge,
    pub repo: RepoHandle,
    pub bot: Bot,
    pub bare: PathBuf,
    _dirs: (TempDir, TempDir),
}

impl World {
    /// The fake forge with acme/widgets (`files` on `main`, alice a collaborator, the `issues`),
    /// and a bot running `script` in `backend`.
    pub async fn start(
        script: &str,
        backend: &str,
        files: &[(&str, &str)],
        issues: &[(u64, &str, &str)],
    ) -> World {
        World::start_on(Forge::GitHub, script, backend, files, issues).await
    }

    /// The same, with the repository on `on` (GitHub's acme/widgets or GitLab's project).
    pub async fn start_on(
        on: Forge,
        script: &str,
        backend: &str,
        files: &[(&str, &str)],
        issues: &[(u64, &str, &str)],
    ) -> World {
        World::start_with(on, &GithubAs::Token, script, backend, files, issues, &[]).await
    }

    /// The same, with more variables in the bot's environment.
    pub async fn start_with_env(
        on: Forge,
        script: &str,
        backend: &str,
        files: &[(&str, &str)],
        issues: &[(u64, &str, &str)],
        env: &[(&str, &str)],
    ) -> World {
        World::start_with(on, &GithubAs::Token, script, backend, files, issues, env).await
    }

    /// GitHub's acme/widgets with the App installed on it, and a bot that is the App.
    pub async fn start_as_app(
        settings: &[(&'static str, &'static str)],
        script: &str,
        backend: &str,
        files: &[(&str, &str)],
        issues: &[(u64, &str, &str)],
    ) -> World {
        let github = GithubAs::App(settings.to_vec());
        World::start_with(Forge::GitHub, &github, script, backend, files, issues, &[]).await
    }

    async fn start_with(
        on: Forge,
        github: &GithubAs,
        script: &str,
        backend: &str,
        files: &[(&str, &str)],
        issues: &[(u64, &str, &str)],
        env: &[(&str, &str)],
    ) -> World {
        let forge = FakeForge::start().await;
        let remotes = tempfile::tempdir().expect("tempdir");
        let data = tempfile::tempdir().expect("tempdir");
        let bare = remote(remotes.path(), files);
        let repo = match on {
            Forge::GitHub => forge.github_repo(REPO),
            Forge::GitLab => forge.gitlab_project(REPO),
            Forge::Forgejo => forge.forgejo_repo(REPO),
        };
        let mut repo = repo
            .default_branch("main")
            .git_dir(&bare)
            .collaborator("alice", Permission::Write);
        for (number, title, body) in issues {
            repo = repo.issue(*number, title, body);
        }
        if let GithubAs::App(_) = github {
            repo = repo.installation(INSTALLATION);
        }
        let bot = Bot::start_as(
            &forge,
            data.path(),
            remotes.path(),
            script,
            backend,
            github,
            env,
        );
        World {
            forge,
            repo,
            bot,
            bare,
            _dirs: (remotes, data),
        }
    }

    /// Waits for the status comment on `issue` to reach a final state (anything but ⏳ and 🔄).
    pub async fn verdict(&mut self, issue: u64) -> String {
        eventually("no verdict", Duration::from_secs(180), async || {
            if let Some(comment) = self.forge.status_comment(&self.repo, issue)
                && is_final(&comment.body)
            {
                return Ok(comment.body);
            }
            Err(format!("the bot said:\n{}", self.bot.drain()))
        })
        .await
    }

    /// Waits for the `forgeward` status on `sha` to be final (neither pending nor running, as
    /// GitLab says of a check in progress) once `jobs` jobs have finished; its state.
    pub async fn final_status(&mut self, sha: &str, jobs: usize) -> String {
        let what = format!("no final status on {sha} with {jobs} job(s) finished");
        eventually(&what, Duration::from_secs(90), async || {
            let finished = self.bot.drain().matches("job finished").count();
            if let Some(status) = self.forge.commit_status(&self.repo, sha)
                && !["pending", "running"].contains(&status.state.as_str())
                && finished >= jobs
            {
                return Ok(status.state);
            }
            Err(self.bot.drain().to_owned())
        })
        .await
    }

    /// Commits `files` on top of `from` in the remote, as `branch` and as the forges' refs for
    /// pull request `number` (`refs/pull/<n>/head`, `refs/merge-requests/<n>/head`); returns
    /// the commit's sha.
    pub fn push_pull_request(
        &self,
        number: u64,
        from: &str,
        branch: &str,
        files: &[(&str, &str)],
    ) -> String {
        let repo = git2::Repository::open_bare(&self.bare).expect("the remote");
        let parent = repo
            .revparse_single(from)
            .and_then(|o| o.peel_to_commit())
            .expect("the parent commit");
        let mut update = git2::build::TreeUpdateBuilder::new();
        for (path, content) in files {
            let blob = repo.blob(content.as_bytes()).expect("a blob");
            update.upsert(*path, blob, git2::FileMode::Blob);
        }
        let tree = update
            .create_updated(&repo, &parent.tree().expect("the parent's tree"))
            .and_then(|id| repo.find_tree(id))
            .expect("the new tree");
        let who = git2::Signature::now("bob", "bob@example.com").expect("a signature");
        let commit = repo
            .commit(None, &who, &who, "a change", &tree, &[&parent])
            .expect("a commit");
        repo.reference(&format!("refs/heads/{branch}"), commit, true, "push")
            .expect("the branch");
        // Each forge's name for it: GitHub's and Forgejo's, and GitLab's.
        for name in [
            format!("refs/pull/{number}/head"),
            format!("refs/merge-requests/{number}/head"),
        ] {
            repo.reference(&name, commit, true, "push")
                .expect("the pull request's ref");
        }
        commit.to_string()
    }

    /// The bot's data directory (mirrors, job directories, logs).
    pub fn data_dir(&self) -> &Path {
        self._dirs.1.path()
    }

    pub fn remote_branch(&self, branch: &str) -> Option<String> {
        let repo = git2::Repository::open_bare(&self.bare).expect("the remote");
        repo.refname_to_id(&format!("refs/heads/{branch}"))
            .ok()
            .map(|oid| oid.to_string())
    }

    /// The pull or merge request for `branch`, checked clean: the honest worker's fix on the
    /// branch, its `summary` in the body, no review flags, a passing status on the branch's
    /// head and no `forgeward:flagged` label. Returns it and that head.
    pub fn clean_pull_request(&self, branch: &str, summary: &str) -> (PullView, String) {
        let head = self.remote_branch(branch).expect("the branch was pushed");
        assert!(
            self.file_on_remote(branch, "calc.py")
                .contains("return a + b")
        );
        let pull = self
            .forge
            .pull_request_for_branch(&self.repo, branch)
            .expect("a pull or merge request was opened");
        assert!(
            pull.body.contains(summary),
            "the worker's summary: {}",
            pull.body
        );
        // Ready for review: merging it closes the issue.
        assert!(pull.body.starts_with("Closes #"), "{}", pull.body);
        assert!(self.forge.review_flags(&self.repo, pull.number).is_empty());
        let status = self
            .forge
            .commit_status(&self.repo, &head)
            .expect("a commit status");
        assert_eq!(status.state, "success", "{status:?}");
        assert!(
            !self
                .forge
                .labels(&self.repo, pr(pull.number))
                .contains(&"forgeward:flagged".to_owned())
        );
        (pull, head)
    }

    pub fn file_on_remote(&self, branch: &str, path: &str) -> String {
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
