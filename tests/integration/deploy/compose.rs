//! deploy/compose brought up with `docker compose` as an operator would, on images built here
//! (compose.local.yaml: PostgreSQL from Debian's package on the local Debian base;
//! compose.prebuilt.yaml: the bot's image around the binary under test), then a signed webhook
//! delivery, the job it records seen in PostgreSQL, both containers healthy, and a job run in a
//! Docker sandbox started from inside the bot's container; then the stack goes, whatever
//! happened (`Stack`'s `Drop`).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use serde_json::Value;
use tempfile::TempDir;

use super::{debian_base, deploy_dir, printed, require_docker, run, succeed, unique};
use crate::serve::sign;
use crate::util::FORGEWARD;

const COMPOSE_HINT: &str = "install Docker Compose v2: run tests/setup/deploy.sh";
/// The webhook secret the stack is given.
const SECRET: &str = "compose-webhook-secret";
/// The uid the bot's image runs as (docker/Dockerfile).
const BOT_UID: u32 = 10000;

/// A Compose project of this test's own: its name, files and variables, taken down with its
/// volumes and its bot image when dropped, pass or fail.
struct Stack {
    project: String,
    files: Vec<PathBuf>,
    vars: Vec<(String, String)>,
    env_file: PathBuf,
    bot_image: String,
    _dir: TempDir,
}

impl Stack {
    fn compose(&self) -> Command {
        let mut cmd = Command::new("docker");
        cmd.args(["compose", "--ansi", "never", "--progress", "plain"])
            .arg("--env-file")
            .arg(&self.env_file)
            .args(["--project-name", &self.project])
            .current_dir(deploy_dir().join("compose"));
        for file in &self.files {
            cmd.arg("--file").arg(file);
        }
        // The operator's own values (a .env, COMPOSE_FILE) must not leak into the test.
        cmd.env_remove("COMPOSE_FILE")
            .env_remove("COMPOSE_PROJECT_NAME")
            .envs(self.vars.iter().map(|(k, v)| (k, v)));
        cmd
    }

    fn logs(&self) -> String {
        let out = run(self.compose().args(["logs", "--no-color"]), COMPOSE_HINT);
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr)
    }

    /// The id of the service's container.
    fn container(&self, service: &str) -> String {
        let id = succeed(
            self.compose().args(["ps", "--quiet", service]),
            COMPOSE_HINT,
        );
        let id = id.trim().to_owned();
        assert!(!id.is_empty(), "no {service} container:\n{}", self.logs());
        id
    }
}

impl Drop for Stack {
    fn drop(&mut self) {
        let down = self
            .compose()
            .args(["down", "--volumes", "--remove-orphans", "--timeout", "10"])
            .output();
        if !matches!(&down, Ok(out) if out.status.success()) {
            // Compose could not read its files: remove what carries the project's label.
            let label = format!("label=com.docker.compose.project={}", self.project);
            let ids = Command::new("docker")
                .args(["ps", "-aq", "--filter", &label])
                .output()
                .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
                .unwrap_or_default();
            for id in ids.split_whitespace() {
                let _ = Command::new("docker").args(["rm", "-f", "-v", id]).output();
            }
            for what in ["network", "volume"] {
                let ids = Command::new("docker")
                    .args([what, "ls", "-q", "--filter", &label])
                    .output()
                    .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
                    .unwrap_or_default();
                for id in ids.split_whitespace() {
                    let _ = Command::new("docker").args([what, "rm", id]).output();
                }
            }
        }
        let _ = Command::new("docker")
            .args(["image", "rm", "--force", &self.bot_image])
            .output();
    }
}

/// Writes `text` to `dir/name`, owned by `uid`, readable by it alone.
fn secret_file(dir: &Path, name: &str, text: &str, uid: u32) {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write a secret");
    std::os::unix::fs::chown(&path, Some(uid), Some(uid)).expect("chown a secret");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o400)).expect("chmod");
}

/// Hands `path` and everything under it to `uid`.
fn chown_tree(path: &Path, uid: u32) {
    std::os::unix::fs::lchown(path, Some(uid), Some(uid)).expect("chown");
    if path.is_dir() && !path.is_symlink() {
        for entry in std::fs::read_dir(path).expect("read_dir") {
            chown_tree(&entry.expect("an entry").path(), uid);
        }
    }
}

/// The fixture's `issues.labeled` delivery, for issue 7, labelled with the default trigger.
pub(super) fn labeled_delivery() -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/webhooks/github/issues.labeled.json");
    let mut v: Value =
        serde_json::from_slice(&std::fs::read(path).expect("fixture")).expect("JSON");
    v["issue"]["number"] = 7.into();
    v["label"]["name"] = "forgeward".into();
    serde_json::to_vec(&v).expect("serialises")
}

fn git(dir: &Path, args: &[&str]) -> String {
    succeed(
        Command::new("git")
            .args([
                "-c",
                "safe.directory=*",
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@example.com",
            ])
            .args(args)
            .current_dir(dir),
        "git is needed",
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn the_compose_stack_records_a_signed_delivery_and_runs_a_docker_sandbox() {
    require_docker();
    let version = run(
        Command::new("docker").args(["compose", "version"]),
        COMPOSE_HINT,
    );
    assert!(
        version.status.success() && String::from_utf8_lossy(&version.stdout).contains(" 2."),
        "`docker compose` is not Compose v2 ({}): run tests/setup/deploy.sh",
        String::from_utf8_lossy(&version.stderr).trim()
    );
    let started = Instant::now();

    // Under the target directory, not /tmp: the bot's container has a tmpfs /tmp, and the data
    // directory is mounted at the same path inside it as here.
    let dir = tempfile::Builder::new()
        .prefix("deploy-compose-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .expect("tempdir");
    let root = dir.path().canonicalize().expect("canonical");
    let (data, secrets, binary_dir) = (root.join("data"), root.join("secrets"), root.join("bin"));
    for d in [&data, &secrets, &binary_dir] {
        std::fs::create_dir_all(d).expect("mkdir");
    }
    chown_tree(&data, BOT_UID);
    // PostgreSQL reads its password as root; the bot reads the rest as uid 10000, and its
    // PostgreSQL driver reads a pgpass file only when no one else can.
    let password = format!("pw-{}", unique("db"));
    secret_file(&secrets, "postgres-password", &format!("{password}\n"), 0);
    secret_file(
        &secrets,
        "pgpass",
        &format!("db:5432:forgeward:forgeward:{password}\n"),
        BOT_UID,
    );
    secret_file(
        &secrets,
        "github-webhook-secret",
        &format!("{SECRET}\n"),
        BOT_UID,
    );
    secret_file(&secrets, "github-token", "not-a-real-token\n", BOT_UID);
    std::fs::copy(FORGEWARD, binary_dir.join("forgeward")).expect("copy the binary");
    let env_file = root.join("empty.env");
    std::fs::write(&env_file, "").expect("write");

    let compose_dir = deploy_dir().join("compose");
    let project = unique("fwdeploy");
    let bot_image = format!("forgeward-deploy-test/bot:{project}");
    let docker_gid = {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata("/var/run/docker.sock")
            .expect("the Docker socket at /var/run/docker.sock")
            .gid()
    };
    let var = |k: &str, v: &str| (k.to_owned(), v.to_owned());
    let stack = Stack {
        files: [
            "compose.yaml",
            "compose.local.yaml",
            "compose.prebuilt.yaml",
        ]
        .iter()
        .map(|f| compose_dir.join(f))
        .collect(),
        vars: vec![
            var("DOCKER_GID", &docker_gid.to_string()),
            var("FORGEWARD_DATA_DIR", &data.display().to_string()),
            var("FORGEWARD_SECRETS_DIR", &secrets.display().to_string()),
            var("FORGEWARD_DEBIAN_BASE", &debian_base()),
            var("FORGEWARD_BINARY_DIR", &binary_dir.display().to_string()),
            var(
                "FORGEWARD_PREBUILT_DOCKERFILE",
                &compose_dir
                    .join("prebuilt.Dockerfile")
                    .display()
                    .to_string(),
            ),
            var("FORGEWARD_IMAGE", &bot_image),
            var(
                "FORGEWARD_POSTGRES_IMAGE",
                "forgeward-deploy-test/postgres:15",
            ),
            // A port of the kernel's choosing: nothing else here is disturbed.
            var("FORGEWARD_LISTEN", "127.0.0.1:0"),
        ],
        env_file,
        project,
        bot_image,
        _dir: dir,
    };

    // Every overlay reads as Compose understands it.
    for overlay in [
        "compose.gitlab.yaml",
        "compose.forgejo.yaml",
        "compose.github-app.yaml",
    ] {
        succeed(
            stack
                .compose()
                .args(["--file", overlay, "config", "--quiet"]),
            COMPOSE_HINT,
        );
    }

    let out = run(
        stack.compose().args([
            "up",
            "--detach",
            "--build",
            "--wait",
            "--wait-timeout",
            "300",
        ]),
        COMPOSE_HINT,
    );
    assert!(
        out.status.success(),
        "docker compose up:\n{}\n{}",
        printed(&out),
        stack.logs()
    );
    let up = started.elapsed();

    for service in ["db", "bot"] {
        let health = succeed(
            Command::new("docker").args([
                "inspect",
                "--format",
                "{{.State.Health.Status}}",
                &stack.container(service),
            ]),
            COMPOSE_HINT,
        );
        assert_eq!(health.trim(), "healthy", "{service}:\n{}", stack.logs());
    }
    let port = succeed(stack.compose().args(["port", "bot", "8080"]), COMPOSE_HINT);
    let url = format!("http://{}", port.trim());
    let client = reqwest::Client::new();
    for (path, body) in [("/readyz", "ready\n"), ("/healthz", "ok\n")] {
        let resp = client
            .get(format!("{url}{path}"))
            .send()
            .await
            .expect("a response");
        assert_eq!(resp.status().as_u16(), 200, "{path}");
        assert_eq!(resp.text().await.expect("a body"), body, "{path}");
    }

    // A signed delivery, with the secret the bot read from its Compose secret.
    let body = labeled_delivery();
    let post = |signature: String| {
        client
            .post(format!("{url}/webhooks/github"))
            .header("X-GitHub-Event", "issues")
            .header("X-GitHub-Delivery", "compose-delivery-1")
            .header("content-type", "application/json")
            .header("X-Hub-Signature-256", signature)
            .body(body.clone())
            .send()
    };
    let forged = post(sign("not the secret", &body))
        .await
        .expect("a response");
    assert_eq!(forged.status().as_u16(), 401);
    let resp = post(sign(SECRET, &body)).await.expect("a response");
    assert_eq!(resp.status().as_u16(), 202, "{}", stack.logs());
    let reply: Value = resp.json().await.expect("JSON");
    assert_eq!(reply, serde_json::json!({ "job": 1 }));

    // Recorded in PostgreSQL (not in a SQLite file of the container's), queued: no worker is
    // configured.
    let jobs = succeed(
        stack.compose().args([
            "exec",
            "-T",
            "db",
            "psql",
            "--username=forgeward",
            "--dbname=forgeward",
            "--no-align",
            "--tuples-only",
            "--command",
            "SELECT state, target FROM jobs ORDER BY id",
        ]),
        COMPOSE_HINT,
    );
    assert_eq!(jobs.trim(), "queued|github:Codertocat/Hello-World#7");
    let metrics = client
        .get(format!("{url}/metrics"))
        .send()
        .await
        .expect("a response");
    let metrics = metrics.text().await.expect("a body");
    assert!(
        metrics.contains("forgeward_jobs{state=\"queued\"} 1"),
        "{metrics}"
    );
    assert!(
        !std::fs::read_dir(&data)
            .expect("the data directory")
            .any(|e| e
                .expect("an entry")
                .file_name()
                .to_string_lossy()
                .starts_with("forgeward.db")),
        "the bot made a SQLite store"
    );

    // A job in a Docker sandbox, started by the bot's container through the host's socket:
    // its checkout lives under the data directory, which the host's daemon finds at the same
    // path. `forgeward run` keeps its job there too when TMPDIR says so.
    let repo = data.join("repo");
    std::fs::create_dir_all(&repo).expect("mkdir");
    std::fs::write(repo.join("calc.py"), "def add(a, b):\n    return a + b\n").expect("write");
    // No tests to run: verification is off, so the job is ready for review.
    std::fs::write(repo.join(".forgeward.toml"), "[verify]\nenabled = false\n").expect("write");
    git(&repo, &["init", "-q", "-b", "main"]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "-m", "calc"]);
    let tmp = data.join("tmp");
    std::fs::create_dir_all(&tmp).expect("mkdir");
    chown_tree(&data, BOT_UID);
    let out = run(
        stack
            .compose()
            .args(["exec", "-T", "--env"])
            .arg(format!("TMPDIR={}", tmp.display()))
            .args([
                "bot",
                "forgeward",
                "run",
                "--sandbox",
                "docker",
                "--branch",
                "from-compose",
            ])
            .arg("--repo")
            .arg(&repo)
            .args([
                "--task",
                "Say hello",
                "--worker",
                "echo hello > hello.txt; echo \"uid $(id -u)\"",
            ]),
        COMPOSE_HINT,
    );
    let text = printed(&out);
    assert!(
        out.status.success(),
        "forgeward run in the bot's container:\n{text}"
    );
    assert!(text.contains("ready for review"), "{text}");
    assert!(
        text.contains(&format!("uid {BOT_UID}")),
        "the worker's user:\n{text}"
    );
    assert_eq!(git(&repo, &["show", "from-compose:hello.txt"]), "hello\n");
    let left = succeed(
        Command::new("docker").args([
            "ps",
            "-aq",
            "--filter",
            &format!("label=com.docker.compose.project={}", stack.project),
        ]),
        COMPOSE_HINT,
    );
    assert_eq!(
        left.split_whitespace().count(),
        2,
        "only db and bot: {left}"
    );

    // Secrets never reach the log.
    let logs = stack.logs();
    for secret in [SECRET, password.as_str()] {
        assert!(!logs.contains(secret), "a secret in the logs:\n{logs}");
    }
    eprintln!(
        "deploy/compose: up (images built) in {:.1?}, whole flow in {:.1?}",
        up,
        started.elapsed()
    );
}
