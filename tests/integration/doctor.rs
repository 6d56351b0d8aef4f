//! `forgeward doctor` through the binary: a healthy set-up against the fake forge (a GitHub
//! App, GitLab and Forgejo tokens, SQLite, bubblewrap, git over loopback HTTP and a local
//! directory) passes every check; a broken one names each failure with its fix and shows no
//! secret; a configuration that does not parse is the first line; the store's migrations on
//! PostgreSQL; the Docker sandbox; and the doctor's `GET /app` and `GET /user` against GitHub's
//! own OpenAPI description, served by Prism.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::LazyLock;

use regex::Regex;
use tempfile::TempDir;

use crate::fake_forge::{FORGEJO_TOKEN, FakeForge, GITLAB_TOKEN};
use crate::git_http::GitHttp;
use crate::github_prism::Proxy;
use crate::util::{FORGEWARD, default_path};
use crate::workers::harness::Database;

const PRIVATE_KEY: &str = "tests/data/github-app/test-only-private-key.pem";
const APP_ID: u64 = 4242;
const GITHUB_WEBHOOK_SECRET: &str = "gh-webhook-secret-a1b2c3";
const GITLAB_WEBHOOK_TOKEN: &str = "gl-webhook-token-d4e5f6";
const FORGEJO_WEBHOOK_SECRET: &str = "fj-webhook-secret-g7h8i9";

/// Everything the bot's calls need of the App.
const ALL_PERMISSIONS: &[(&str, &str)] = &[
    ("metadata", "read"),
    ("contents", "write"),
    ("issues", "write"),
    ("pull_requests", "write"),
    ("checks", "write"),
];
const ALL_EVENTS: &[&str] = &["issues", "issue_comment", "pull_request"];

/// What one run printed.
struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

impl std::fmt::Debug for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "exit code: {}\n--- stdout ---\n{}--- stderr ---\n{}",
            self.code, self.stdout, self.stderr
        )
    }
}

impl Run {
    /// The report line about `subject` (`✓ store: …`), and the fix under it if any.
    fn line(&self, subject: &str) -> (String, Option<String>) {
        let lines: Vec<&str> = self.stdout.lines().collect();
        let about = format!("{subject}: ");
        let at = lines
            .iter()
            .position(|l| {
                l.split_once(' ').is_some_and(|(mark, rest)| {
                    ["✓", "✗", "-"].contains(&mark) && rest.starts_with(&about)
                })
            })
            .unwrap_or_else(|| panic!("no line about {subject}:\n{self:?}"));
        let fix = lines
            .get(at + 1)
            .and_then(|l| l.strip_prefix("    fix: "))
            .map(str::to_owned);
        (lines[at].to_owned(), fix)
    }

    /// Fails when any secret shows in what the run printed.
    fn assert_shows_none_of(&self, secrets: &[&str]) {
        for secret in secrets {
            assert!(
                !self.stdout.contains(secret) && !self.stderr.contains(secret),
                "{secret:?} shows:\n{self:?}"
            );
        }
    }
}

/// A temporary directory for one test's files: the data directory, secret files, a
/// configuration file, a directory of local repositories.
struct Scene {
    dir: TempDir,
}

impl Scene {
    fn new() -> Scene {
        let dir = tempfile::Builder::new()
            .prefix("forgeward-doctor-it-")
            .tempdir()
            .expect("a temporary directory");
        std::fs::create_dir(dir.path().join("home")).expect("HOME");
        std::fs::create_dir(dir.path().join("remotes")).expect("remotes");
        Scene { dir }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    fn write(&self, rel: &str, text: &str) -> PathBuf {
        let path = self.path(rel);
        std::fs::write(&path, text).expect("writing a file");
        path
    }

    /// `forgeward doctor` with exactly these variables (and `PATH`, `HOME`), in the scene.
    async fn doctor(&self, args: &[&str], vars: &[(&str, String)]) -> Run {
        let mut cmd = tokio::process::Command::new(FORGEWARD);
        cmd.arg("doctor")
            .args(args)
            .current_dir(self.dir.path())
            .env_clear()
            .env("PATH", default_path())
            .env("HOME", self.path("home"))
            .env("NO_COLOR", "1")
            .stdin(Stdio::null());
        for (key, value) in vars {
            cmd.env(key, value);
        }
        let out = cmd.output().await.expect("running forgeward doctor");
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// The text with what changes from run to run (this directory, ports, times) named.
    fn normalized(&self, text: &str) -> String {
        static PORT: LazyLock<Regex> =
            LazyLock::new(|| Regex::new(r"127\.0\.0\.1:\d+").expect("regex"));
        static TIME: LazyLock<Regex> =
            LazyLock::new(|| Regex::new(r"in \d+(\.\d+)? m?s\b").expect("regex"));
        let dir = self.dir.path().display().to_string();
        let text = text
            .replace(&dir, "[DIR]")
            .replace(env!("CARGO_MANIFEST_DIR"), "[REPO]");
        let text = PORT.replace_all(&text, "127.0.0.1:[PORT]");
        let n = migrations();
        TIME.replace_all(&text, "in [TIME]").replace(
            &format!("all {n} migrations, to version {n}"),
            "all [N] migrations, to version [N]",
        )
    }
}

/// How many migrations this build embeds: the store's own files.
fn migrations() -> usize {
    std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/store/migrations/sqlite"))
        .expect("the store's migrations")
        .filter(|e| {
            e.as_ref()
                .is_ok_and(|e| e.path().extension().is_some_and(|x| x == "sql"))
        })
        .count()
}

fn var(key: &str, value: impl Into<String>) -> (&str, String) {
    (key, value.into())
}

fn key_path() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(PRIVATE_KEY)
        .display()
        .to_string()
}

/// The variables of the GitHub App the fake forge knows (its id, key, webhook secret and API
/// URL), then `more`.
fn github_app_and(
    forge: &FakeForge,
    more: impl IntoIterator<Item = (&'static str, String)>,
) -> Vec<(&'static str, String)> {
    let mut vars = vec![
        var("FORGEWARD_GITHUB_APP_ID", APP_ID.to_string()),
        var("FORGEWARD_GITHUB_PRIVATE_KEY_FILE", key_path()),
        var("FORGEWARD_GITHUB_WEBHOOK_SECRET", GITHUB_WEBHOOK_SECRET),
        var("FORGEWARD_GITHUB_API_URL", forge.url()),
    ];
    vars.extend(more);
    vars
}

/// A migrated SQLite store in the scene's data directory, as `serve` leaves it.
async fn migrated_sqlite(scene: &Scene) {
    let url = format!("sqlite://{}", scene.path("data/forgeward.db").display());
    drop(
        forgeward::store::Store::open(&url)
            .await
            .unwrap_or_else(|e| panic!("{e}")),
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_healthy_setup_passes_every_check() {
    let forge = FakeForge::start().await;
    forge.github_app(APP_ID, ALL_PERMISSIONS, ALL_EVENTS);
    forge.github_repo("acme/widgets").installation(7);
    let scene = Scene::new();
    migrated_sqlite(&scene).await;
    // Git over HTTP on loopback asks for credentials as a forge does (GitHub, Forgejo); GitLab
    // clones from a directory of this machine.
    let git = GitHttp::start(&scene.path("remotes"), &scene.path("home"));
    let gitlab_webhook = scene.write("gitlab-webhook", &format!("{GITLAB_WEBHOOK_TOKEN}\n"));
    let forgejo_token = scene.write("forgejo-token", &format!("{FORGEJO_TOKEN}\n"));
    let config = scene.write(
        "forgeward.toml",
        &format!(
            "[gitlab]\nwebhook_token_file = \"{}\"\n\n[forgejo]\ntoken_file = \"{}\"\n",
            gitlab_webhook.display(),
            forgejo_token.display()
        ),
    );
    let git_url = format!("http://127.0.0.1:{}", git.port);
    let run = scene
        .doctor(
            &["--config", &config.display().to_string()],
            &github_app_and(
                &forge,
                [
                    var(
                        "FORGEWARD_SERVER_DATA_DIR",
                        scene.path("data").display().to_string(),
                    ),
                    var("FORGEWARD_GITHUB_GIT_URL", &git_url),
                    var("FORGEWARD_GITLAB_TOKEN", GITLAB_TOKEN),
                    var("FORGEWARD_GITLAB_URL", forge.url()),
                    var(
                        "FORGEWARD_GITLAB_GIT_URL",
                        format!("file://{}", scene.path("remotes").display()),
                    ),
                    var("FORGEWARD_FORGEJO_WEBHOOK_SECRET", FORGEJO_WEBHOOK_SECRET),
                    var("FORGEWARD_FORGEJO_URL", forge.url()),
                    var("FORGEWARD_FORGEJO_GIT_URL", &git_url),
                    var("FORGEWARD_WORKER_COMMAND", r#"["my-agent", "--yes"]"#),
                    var("FORGEWARD_SANDBOX_BACKEND", "bwrap"),
                ],
            ),
        )
        .await;
    assert_eq!(run.code, 0, "{run:?}");
    let report: Vec<&str> = run.stdout.lines().take_while(|l| !l.is_empty()).collect();
    assert!(
        report.iter().all(|l| l.starts_with("✓ ")),
        "every line passes:\n{run:?}"
    );
    assert!(run.stderr.is_empty(), "{run:?}");
    insta::assert_snapshot!(scene.normalized(&run.stdout));
    run.assert_shows_none_of(&[
        GITHUB_WEBHOOK_SECRET,
        GITLAB_WEBHOOK_TOKEN,
        FORGEJO_WEBHOOK_SECRET,
        GITLAB_TOKEN,
        FORGEJO_TOKEN,
    ]);

    // The App's JWT was verified by the fake with the App's public key; each token was sent
    // to its forge's own user endpoint; git was asked for refs without credentials.
    let seen: Vec<(String, String)> = forge
        .requests()
        .into_iter()
        .map(|r| {
            let scheme = r
                .credential
                .unwrap_or_default()
                .split(' ')
                .next()
                .unwrap_or_default()
                .to_owned();
            (format!("GET {}", r.uri), scheme)
        })
        .collect();
    assert_eq!(
        seen,
        [
            ("GET /app".to_owned(), "Bearer".to_owned()),
            ("GET /api/v4/user".to_owned(), GITLAB_TOKEN.to_owned()),
            ("GET /api/v1/user".to_owned(), "token".to_owned()),
        ]
    );
    let git_seen = git.seen.lock().expect("git log").clone();
    assert_eq!(
        git_seen,
        [
            "GET /forgeward-doctor/forgeward-doctor-probe.git/info/refs?service=git-upload-pack HTTP/1.1 auth=none",
            "GET /forgeward-bot/forgeward-doctor-probe.git/info/refs?service=git-upload-pack HTTP/1.1 auth=none",
        ]
    );
    // Nothing was created or changed in the data directory but the store it found.
    let mut files: Vec<String> = std::fs::read_dir(scene.path("data"))
        .expect("data dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|name| !name.starts_with("forgeward.db"))
        .collect();
    files.sort();
    assert!(files.is_empty(), "{files:?}");
}

/// Git over HTTPS is verified against this machine's roots, which `SSL_CERT_FILE` can name:
/// with the server's CA there the probe passes; with the system's bundle alone the handshake
/// fails and the line says why. Either way the probe offers no credentials.
#[tokio::test(flavor = "multi_thread")]
async fn git_over_https_is_verified_against_this_machines_roots() {
    let forge = FakeForge::start().await;
    forge.github_app(APP_ID, ALL_PERMISSIONS, ALL_EVENTS);
    forge.github_repo("acme/widgets").installation(7);
    let scene = Scene::new();
    migrated_sqlite(&scene).await;
    let (git, ca) = GitHttp::start_tls(&scene.path("remotes"), &scene.path("home"));
    let bundle = scene.write("ca.pem", &ca);
    let git_url = format!("https://127.0.0.1:{}", git.port);
    let github = |extra: Option<(&'static str, String)>| {
        let vars = [
            var(
                "FORGEWARD_SERVER_DATA_DIR",
                scene.path("data").display().to_string(),
            ),
            var("FORGEWARD_GITHUB_GIT_URL", &git_url),
        ];
        github_app_and(&forge, vars.into_iter().chain(extra))
    };

    let run = scene
        .doctor(
            &[],
            &github(Some(var("SSL_CERT_FILE", bundle.display().to_string()))),
        )
        .await;
    assert_eq!(
        run.line("GitHub git").0,
        format!(
            "✓ GitHub git: {git_url} answers git over HTTPS (TLS verified): it asks for \
             credentials for a repository it does not show anonymously, as a forge does"
        ),
        "{run:?}"
    );

    let run = scene.doctor(&[], &github(None)).await;
    let (line, fix) = run.line("GitHub git");
    assert!(
        line.starts_with(&format!(
            "✗ GitHub git: the TLS handshake with 127.0.0.1:{} fails: ",
            git.port
        )) && line.contains("invalid peer certificate"),
        "{run:?}"
    );
    assert!(fix.is_some_and(|f| f.contains("SSL_CERT_FILE")), "{run:?}");

    let seen = git.seen.lock().unwrap().clone();
    assert!(!seen.is_empty(), "the probe reached the server over TLS");
    assert!(seen.iter().all(|r| r.ends_with("auth=none")), "{seen:#?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_broken_setup_names_each_failure_with_its_fix_and_no_secret() {
    const WRONG_GITLAB_TOKEN: &str = "glpat-not-the-right-token-0002";
    const DB_PASSWORD: &str = "pw-very-secret-0003";
    let forge = FakeForge::start().await;
    forge.github_app(
        APP_ID,
        &[
            ("metadata", "read"),
            ("contents", "write"),
            ("issues", "write"),
            ("pull_requests", "read"),
            ("checks", "write"),
        ],
        &["issues", "pull_request"],
    );
    forge.github_repo("acme/widgets").installation(7);
    let scene = Scene::new();
    // Ports nothing listens on: a store and a git server that do not answer.
    let closed = || {
        std::net::TcpListener::bind("127.0.0.1:0")
            .expect("bind")
            .local_addr()
            .expect("addr")
            .port()
    };
    let (db_port, git_port) = (closed(), closed());
    let run = scene
        .doctor(
            &[],
            &github_app_and(
                &forge,
                [
                    var(
                        "FORGEWARD_STORE_URL",
                        format!("postgres://forgeward:{DB_PASSWORD}@127.0.0.1:{db_port}/forgeward"),
                    ),
                    var(
                        "FORGEWARD_GITHUB_GIT_URL",
                        format!("http://127.0.0.1:{git_port}"),
                    ),
                    var("FORGEWARD_GITLAB_WEBHOOK_TOKEN", GITLAB_WEBHOOK_TOKEN),
                    var("FORGEWARD_GITLAB_TOKEN", WRONG_GITLAB_TOKEN),
                    var("FORGEWARD_GITLAB_URL", forge.url()),
                    var(
                        "FORGEWARD_GITLAB_GIT_URL",
                        format!("file://{}", scene.path("remotes").display()),
                    ),
                    // No FORGEWARD_FORGEJO_WEBHOOK_SECRET.
                    var("FORGEWARD_FORGEJO_TOKEN", FORGEJO_TOKEN),
                    var("FORGEWARD_FORGEJO_URL", forge.url()),
                    var(
                        "FORGEWARD_FORGEJO_GIT_URL",
                        format!("file://{}", scene.path("remotes").display()),
                    ),
                    var("FORGEWARD_WORKER_COMMAND", r#"["my-agent"]"#),
                ],
            ),
        )
        .await;
    assert_eq!(run.code, 1, "{run:?}");
    insta::assert_snapshot!(scene.normalized(&run.stdout));
    run.assert_shows_none_of(&[
        DB_PASSWORD,
        WRONG_GITLAB_TOKEN,
        GITHUB_WEBHOOK_SECRET,
        GITLAB_WEBHOOK_TOKEN,
        FORGEJO_TOKEN,
    ]);

    let (line, fix) = run.line("Forgejo webhook secret");
    assert!(line.starts_with("✗ "), "{line}");
    assert!(
        fix.as_deref()
            .is_some_and(|f| f.contains("FORGEWARD_FORGEJO_WEBHOOK_SECRET")
                && f.contains("forgejo.webhook_secret_file")),
        "{fix:?}"
    );
    let (line, fix) = run.line("store");
    assert!(
        line.starts_with(&format!(
            "✗ store: cannot open the store at postgres://forgeward:***@127.0.0.1:{db_port}/forgeward: "
        )),
        "{line}"
    );
    assert!(
        fix.as_deref().is_some_and(|f| f.contains("store.url")),
        "{fix:?}"
    );
    let (line, fix) = run.line("GitHub App permissions");
    assert!(
        line.starts_with("✗ GitHub App permissions: lacks pull_requests: write (has read)"),
        "{line}"
    );
    assert!(line.contains("the issue_comment event"), "{line}");
    assert!(
        fix.as_deref().is_some_and(|f| f
            .contains("https://github.com/organizations/acme/settings/apps/forgeward/permissions")),
        "{fix:?}"
    );
    let (line, fix) = run.line("GitLab API");
    assert!(
        line.starts_with("✗ GitLab API: GET /api/v4/user refuses the token (401)"),
        "{line}"
    );
    assert!(
        fix.as_deref()
            .is_some_and(|f| f.contains("FORGEWARD_GITLAB_TOKEN")),
        "{fix:?}"
    );
    let (line, fix) = run.line("GitHub git");
    assert!(
        line.starts_with(&format!(
            "✗ GitHub git: http://127.0.0.1:{git_port} does not answer"
        )),
        "{line}"
    );
    assert!(
        fix.as_deref().is_some_and(|f| f.contains("github.git_url")),
        "{fix:?}"
    );
    // What is fine is still said to be: the App's JWT, Forgejo's token.
    assert!(run.line("GitHub App").0.starts_with("✓ "), "{run:?}");
    assert!(run.line("Forgejo API").0.starts_with("✓ "), "{run:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_configuration_that_does_not_parse_is_the_first_line_and_fails() {
    let scene = Scene::new();
    let config = scene.write(
        "forgeward.toml",
        "[jobs]\nconcurency = 3\n[github]\nwebhook_secret_file = \"/run/secrets/x\"\n",
    );
    let path = config.display().to_string();
    let run = scene.doctor(&["--config", &path], &[]).await;
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stderr.is_empty(), "{run:?}");
    let (line, fix) = run.line("configuration");
    assert!(
        line.starts_with(&format!(
            "✗ configuration: {path}:2:1: unknown field `concurency`"
        )),
        "{line}"
    );
    assert!(
        fix.as_deref()
            .is_some_and(|f| f.starts_with(&format!("correct line 2 of {path}"))),
        "{fix:?}"
    );
    for subject in ["secrets", "store", "sandbox", "forge API", "git"] {
        assert_eq!(
            run.line(subject).0,
            format!("- {subject}: not checked: the configuration does not parse"),
            "{run:?}"
        );
    }

    // A variable is named as the place of its error; a secret in the file is refused unread.
    let run = scene
        .doctor(&[], &[var("FORGEWARD_JOBS_CONCURENCY", "3")])
        .await;
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(
        run.line("configuration"),
        (
            "✗ configuration: FORGEWARD_JOBS_CONCURENCY: [jobs] has no such setting".to_owned(),
            Some(
                "correct or unset the variable FORGEWARD_JOBS_CONCURENCY \
                 (FORGEWARD_<SECTION>_<KEY>, with a value as the key takes in the file)"
                    .to_owned()
            )
        )
    );
    let inline = scene.write(
        "inline.toml",
        "[gitlab]\ntoken = \"glpat-written-into-the-file-0004\"\n",
    );
    let run = scene
        .doctor(&["--config", &inline.display().to_string()], &[])
        .await;
    assert_eq!(run.code, 1, "{run:?}");
    let (line, _) = run.line("configuration");
    assert!(line.contains("FORGEWARD_GITLAB_TOKEN"), "{line}");
    run.assert_shows_none_of(&["glpat-written-into-the-file-0004"]);

    let missing = scene.path("nowhere.toml").display().to_string();
    let run = scene.doctor(&["--config", &missing], &[]).await;
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.line("configuration")
            .0
            .starts_with(&format!("✗ configuration: {missing}: ")),
        "{run:?}"
    );

    // A usage error is clap's, exit 2.
    let run = scene.doctor(&["--frobnicate"], &[]).await;
    assert_eq!(run.code, 2, "{run:?}");
}

/// A GitHub token on the fake forge and git in a local directory: enough for the checks around
/// the one a test is about to pass.
fn github_token_on(forge: &FakeForge, scene: &Scene) -> Vec<(&'static str, String)> {
    vec![
        var("FORGEWARD_GITHUB_WEBHOOK_SECRET", GITHUB_WEBHOOK_SECRET),
        var("FORGEWARD_GITHUB_TOKEN", crate::fake_forge::GITHUB_TOKEN),
        var("FORGEWARD_GITHUB_API_URL", forge.url()),
        var(
            "FORGEWARD_GITHUB_GIT_URL",
            format!("file://{}", scene.path("remotes").display()),
        ),
        var("FORGEWARD_WORKER_COMMAND", r#"["my-agent"]"#),
    ]
}

/// The egress gateway's inputs: each secret's variable read as a job would (its value never
/// shown), the upstream CA file parsed, and an allow entry without a port named by its line.
#[tokio::test(flavor = "multi_thread")]
async fn the_gateway_s_secrets_and_ca_are_read_as_a_job_would() {
    const MODEL_KEY: &str = "sk-model-key-shown-nowhere-31a5";
    let scene = Scene::new();
    let ca = scene.write("upstream-ca.pem", "not a certificate\n");
    let config = scene.write(
        "forgeward.toml",
        &format!(
            r#"[worker]
command = ["my-agent"]

[sandbox]
network = "allowlist"
allow = ["api.model.example:443", "search.example:443"]
upstream_ca_file = "{}"

[[worker.secrets]]
env = "MODEL_KEY"
hosts = ["api.model.example"]
header = "x-api-key"

[[worker.secrets]]
env = "SEARCH_KEY"
hosts = ["search.example"]
authorization = "Bearer"
"#,
            ca.display()
        ),
    );
    let path = config.display().to_string();
    let run = scene
        .doctor(&["--config", &path], &[var("MODEL_KEY", MODEL_KEY)])
        .await;
    assert_eq!(run.code, 1, "{run:?}");
    let (worker, _) = run.line("worker");
    assert!(
        worker.contains("the egress gateway, 2 allow entries and 2 secret(s) by placeholder"),
        "{worker}"
    );
    let (model, _) = run.line("worker secret MODEL_KEY");
    assert!(
        model.starts_with("✓ worker secret MODEL_KEY: set; ")
            && model.contains("to api.model.example only (x-api-key)"),
        "{model}"
    );
    let (search, fix) = run.line("worker secret SEARCH_KEY");
    assert!(
        search.starts_with(
            "✗ worker secret SEARCH_KEY: SEARCH_KEY is not set in the bot's environment"
        ),
        "{search}"
    );
    assert!(fix.is_some_and(|f| f.contains("export SEARCH_KEY")));
    // The sandbox's probe goes out as a job's worker would: through the forwarder, to a
    // gateway of this allow list, which refuses the host it asks for.
    let (gateway, _) = run.line("egress gateway");
    assert!(
        gateway
            .starts_with("✓ egress gateway: the worker reaches the gateway through the forwarder"),
        "{gateway}\n{run:?}"
    );
    let (network, _) = run.line("sandbox network");
    assert!(network.starts_with("✓ sandbox network: "), "{network}");
    let (ca_line, _) = run.line("sandbox.upstream_ca_file");
    assert!(
        ca_line.starts_with("✗ sandbox.upstream_ca_file: "),
        "{ca_line}"
    );
    assert!(
        !run.stdout.contains(MODEL_KEY) && !run.stderr.contains(MODEL_KEY),
        "{run:?}"
    );

    let broken = scene.write(
        "broken.toml",
        "[sandbox]\nnetwork = \"allowlist\"\nallow = [\"pypi.example.com\"]\n",
    );
    let broken_path = broken.display().to_string();
    let run = scene.doctor(&["--config", &broken_path], &[]).await;
    let (line, _) = run.line("configuration");
    assert!(
        line.starts_with(&format!(
            "✗ configuration: {broken_path}:3:10: allow entry \"pypi.example.com\" has no port"
        )),
        "{line}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_postgres_store_is_checked_for_its_migrations_and_left_as_it_is() {
    let forge = FakeForge::start().await;
    let scene = Scene::new();
    let db = Database::create().await;
    let mut vars = github_token_on(&forge, &scene);
    vars.push(var("FORGEWARD_STORE_URL", &db.url));
    let shown = forgeward_shown_url(&db.url);

    let run = scene.doctor(&[], &vars).await;
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        run.line("store").0,
        format!(
            "✓ store: PostgreSQL {shown}: reachable, nothing applied yet: `serve` applies the \
             migrations when it starts"
        )
    );

    drop(
        forgeward::store::Store::open(&db.url)
            .await
            .unwrap_or_else(|e| panic!("{e}")),
    );
    let run = scene.doctor(&[], &vars).await;
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        run.line("store").0,
        format!(
            "✓ store: PostgreSQL {shown}: reachable, migrated (all {n} migrations, to version {n})",
            n = migrations()
        )
    );

    use sqlx::Connection as _;
    let mut conn = sqlx::PgConnection::connect(&db.url).await.expect("connect");
    sqlx::query("DELETE FROM _sqlx_migrations WHERE version = 3")
        .execute(&mut conn)
        .await
        .expect("delete");
    let run = scene.doctor(&[], &vars).await;
    assert_eq!(run.code, 1, "{run:?}");
    let (line, fix) = run.line("store");
    assert_eq!(
        line,
        format!(
            "✗ store: PostgreSQL {shown}: migration 3 (base runs) not applied yet: the store was \
             last opened by an older forgeward"
        )
    );
    assert!(
        fix.as_deref()
            .is_some_and(|f| f.starts_with("start `forgeward serve`")),
        "{fix:?}"
    );
    // The doctor only read: the migration is still not applied.
    let left: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM _sqlx_migrations WHERE version = 3")
        .fetch_one(&mut conn)
        .await
        .expect("count");
    assert_eq!(left, 0);
    let _ = conn.close().await;
}

/// A PostgreSQL URL as the store shows it: the password replaced by `***`.
fn forgeward_shown_url(url: &str) -> String {
    let (scheme, rest) = url.split_once("://").expect("a URL");
    match rest.split_once('@') {
        Some((userinfo, host)) => match userinfo.split_once(':') {
            Some((user, _)) => format!("{scheme}://{user}:***@{host}"),
            None => url.to_owned(),
        },
        None => url.to_owned(),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_docker_sandbox_starts_a_worker_without_network() {
    let base = std::env::var("FORGEWARD_TEST_DOCKER_BASE").unwrap_or_else(|_| {
        panic!(
            "FORGEWARD_TEST_DOCKER_BASE is not set: run `eval \"$(bash tests/setup/docker.sh)\"`"
        )
    });
    let forge = FakeForge::start().await;
    let scene = Scene::new();
    let mut vars = github_token_on(&forge, &scene);
    vars.push(var("FORGEWARD_SANDBOX_BACKEND", "docker"));
    vars.push(var("FORGEWARD_SANDBOX_DOCKER_BASE", base));
    let run = scene.doctor(&[], &vars).await;
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.line("sandbox (docker)")
            .0
            .starts_with("✓ sandbox (docker): started a trivial worker"),
        "{run:?}"
    );
    assert!(
        run.line("sandbox network")
            .0
            .starts_with("✓ sandbox network: the worker sees no network interface but lo and cannot reach 127.0.0.1:"),
        "{run:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn get_app_and_get_user_match_githubs_description() {
    let scene = Scene::new();
    let local_git = var(
        "FORGEWARD_GITHUB_GIT_URL",
        format!("file://{}", scene.path("remotes").display()),
    );

    // As an App: GET /app with its JWT, then (GitHub's example has no installations_count)
    // one page of its installations.
    let proxy = Proxy::start().await;
    let run = scene
        .doctor(
            &[],
            &[
                var("FORGEWARD_GITHUB_APP_ID", "42"),
                var("FORGEWARD_GITHUB_PRIVATE_KEY_FILE", key_path()),
                var("FORGEWARD_GITHUB_WEBHOOK_SECRET", GITHUB_WEBHOOK_SECRET),
                var("FORGEWARD_GITHUB_API_URL", &proxy.url),
                local_git.clone(),
            ],
        )
        .await;
    proxy.assert_all_conform();
    assert_eq!(
        proxy.requests(),
        ["GET /app", "GET /app/installations?per_page=1"]
    );
    assert_eq!(
        run.line("GitHub App").0,
        "✓ GitHub App: octoapp (App 42): GET /app accepts its JWT; installed"
    );
    // The description's example App has what an App for something else would have.
    let (line, fix) = run.line("GitHub App permissions");
    assert_eq!(
        line,
        "✗ GitHub App permissions: lacks checks: write (has none); contents: write (has read); \
         pull_requests: write (has none); the issues event (for the trigger label put on an issue \
         starts a job); the issue_comment event (for `/forgeward run|retry|cancel|check` in a \
         comment)"
    );
    assert!(
        fix.as_deref()
            .is_some_and(|f| f.contains("https://github.com/settings/apps/octoapp/permissions")),
        "{fix:?}"
    );
    assert_eq!(run.code, 1, "{run:?}");

    // With a token: GET /user.
    let proxy = Proxy::start().await;
    let run = scene
        .doctor(
            &[],
            &[
                var("FORGEWARD_GITHUB_TOKEN", "ghp_prismTestToken0000000000000"),
                var("FORGEWARD_GITHUB_WEBHOOK_SECRET", GITHUB_WEBHOOK_SECRET),
                var("FORGEWARD_GITHUB_API_URL", &proxy.url),
                var("FORGEWARD_WORKER_COMMAND", r#"["my-agent"]"#),
                local_git,
            ],
        )
        .await;
    proxy.assert_all_conform();
    assert_eq!(proxy.requests(), ["GET /user"]);
    assert_eq!(
        run.line("GitHub API").0,
        "✓ GitHub API: GET /user accepts the token: it is octocat's"
    );
    assert_eq!(run.code, 0, "{run:?}");
    run.assert_shows_none_of(&["ghp_prismTestToken0000000000000", GITHUB_WEBHOOK_SECRET]);
}

#[tokio::test(flavor = "multi_thread")]
async fn odd_setups_each_get_their_own_line() {
    let forge = FakeForge::start().await;
    // An App that GET /app accepts, installed nowhere.
    forge.github_app(APP_ID, ALL_PERMISSIONS, ALL_EVENTS);
    // A Forgejo whose refusal quotes the token back: the doctor shows the message, never the
    // token (and a refusal for a scope the bot does not need is no failure).
    let echo = axum::Router::new().route(
        "/api/v1/user",
        axum::routing::get(|| async {
            (
                axum::http::StatusCode::FORBIDDEN,
                axum::Json(serde_json::json!({ "message": format!(
                    "token {FORGEJO_TOKEN} does not have at least one of required scope(s): [read:user]"
                ) })),
            )
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let echo_url = format!("http://{}", listener.local_addr().expect("addr"));
    tokio::spawn(async move { axum::serve(listener, echo).await });
    let scene = Scene::new();
    let missing_token_file = scene.path("secrets/gitlab-token").display().to_string();
    let not_a_dir = scene.write("not-a-dir", "");
    let run = scene
        .doctor(
            &[],
            &github_app_and(
                &forge,
                [
                    // A data directory that cannot be created: its parent is a file.
                    var(
                        "FORGEWARD_SERVER_DATA_DIR",
                        not_a_dir.join("data").display().to_string(),
                    ),
                    // Plain HTTP to another machine: refused before anything is sent.
                    var("FORGEWARD_GITHUB_GIT_URL", "http://git.forge.example"),
                    var("FORGEWARD_GITLAB_WEBHOOK_TOKEN", GITLAB_WEBHOOK_TOKEN),
                    var("FORGEWARD_GITLAB_TOKEN_FILE", &missing_token_file),
                    var("FORGEWARD_GITLAB_URL", forge.url()),
                    var(
                        "FORGEWARD_GITLAB_GIT_URL",
                        scene.path("no-such-dir").display().to_string(),
                    ),
                    var("FORGEWARD_FORGEJO_WEBHOOK_SECRET", FORGEJO_WEBHOOK_SECRET),
                    var("FORGEWARD_FORGEJO_TOKEN", FORGEJO_TOKEN),
                    var("FORGEWARD_FORGEJO_URL", &echo_url),
                    // HTTPS to a server that speaks plain HTTP: the TLS handshake fails.
                    var(
                        "FORGEWARD_FORGEJO_GIT_URL",
                        forge.url().replace("http://", "https://"),
                    ),
                ],
            ),
        )
        .await;
    assert_eq!(run.code, 1, "{run:?}");
    let failing = |subject: &str, starts: &str, fix_has: &str| {
        let (line, fix) = run.line(subject);
        assert!(
            line.starts_with(&format!("✗ {subject}: {starts}")),
            "{line}\n{run:?}"
        );
        assert!(
            fix.as_deref().is_some_and(|f| f.contains(fix_has)),
            "{subject}: {fix:?}"
        );
    };
    failing(
        "GitLab credentials",
        &format!("{missing_token_file}: reading a secret: "),
        "gitlab.token_file",
    );
    failing(
        "store",
        &format!(
            "SQLite {}/data/forgeward.db does not exist, and this user cannot create it",
            not_a_dir.display()
        ),
        "server.data_dir",
    );
    failing(
        "GitHub App",
        "forgeward (App 4242): GET /app accepts its JWT, but the App is installed nowhere",
        "https://github.com/apps/forgeward/installations/new",
    );
    failing(
        "GitHub git",
        "http://git.forge.example is plain HTTP",
        "github.git_url",
    );
    failing(
        "GitLab git",
        &format!("{}: ", scene.path("no-such-dir").display()),
        "gitlab.git_url",
    );
    failing(
        "Forgejo git",
        "the TLS handshake with 127.0.0.1:",
        "forgejo.git_url",
    );
    assert_eq!(
        run.line("GitLab API").0,
        "- GitLab API: not checked: its credentials are missing (see above)"
    );
    assert_eq!(
        run.line("Forgejo API").0,
        "✓ Forgejo API: GET /api/v1/user knows the token and refuses it only for a scope the bot \
         does not need (token *** does not have at least one of required scope(s): [read:user])"
    );
    run.assert_shows_none_of(&[FORGEJO_TOKEN, GITHUB_WEBHOOK_SECRET, GITLAB_WEBHOOK_TOKEN]);
    // What was misconfigured created nothing.
    assert!(!scene.path("secrets").exists() && !scene.path("no-such-dir").exists());

    // Nothing configured at all: one neutral line a forge, and the failure that says so.
    let run = scene.doctor(&[], &[]).await;
    assert_eq!(run.code, 1, "{run:?}");
    for forge in ["GitHub", "GitLab", "Forgejo"] {
        assert!(
            run.line(forge)
                .0
                .starts_with(&format!("- {forge}: not configured")),
            "{run:?}"
        );
    }
    let (line, fix) = run.line("forges");
    assert_eq!(
        line,
        "✗ forges: none is configured: the bot has nothing to serve"
    );
    assert!(
        fix.is_some_and(|f| f.contains("FORGEWARD_GITHUB_TOKEN")),
        "{run:?}"
    );
    assert_eq!(
        run.line("git").0,
        "- git: not checked: no forge is configured"
    );
    assert!(
        run.line("store").0.starts_with("✓ store: SQLite ")
            && !scene.path("forgeward-data").exists(),
        "the default SQLite file is not created:\n{run:?}"
    );
}
