//! `forgeward setup github` through the real binary, an HTTP client playing the browser and
//! GitHub's half played by Prism serving GitHub's OpenAPI description (through the conformance
//! proxy of `github_prism`): the form and the manifest in it, the answer GitHub redirects back
//! with, the App's files and the lines for `forgeward.toml`; an answer with another state
//! refused, a page asked for under another name refused, files already there never
//! overwritten (unless `--force`), and an App GitHub made without a webhook secret given one.

use std::io::{BufRead, BufReader, Read};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::github_prism::{CODE_WITHOUT_SECRET, Proxy};

const FORGEWARD: &str = env!("CARGO_BIN_EXE_forgeward");

/// The description's example App (`integration-from-manifest`).
const EXAMPLE_ID: u64 = 1;
const EXAMPLE_SECRET: &str = "e340154128314309424b7c8e90325147d99fdafa";

/// `forgeward setup github` running, its stderr read as it comes.
struct Setup {
    child: Child,
    stderr: mpsc::Receiver<String>,
    said: String,
}

impl Setup {
    fn start(proxy: &Proxy, out: &Path, more: &[&str]) -> Setup {
        let mut child = Command::new(FORGEWARD)
            .args([
                "setup",
                "github",
                "--org",
                "acme",
                "--public-url",
                "https://bot.acme.dev/",
            ])
            .arg("--out")
            .arg(out)
            .args(more)
            .env_clear()
            .env("PATH", "/usr/sbin:/usr/bin:/sbin:/bin")
            .env("FORGEWARD_GITHUB_API_URL", &proxy.url)
            .env("FORGEWARD_GITHUB_WEB_URL", "https://github.example")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("starting forgeward setup github");
        let stderr = child.stderr.take().expect("piped stderr");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Setup {
            child,
            stderr: rx,
            said: String::new(),
        }
    }

    /// The page's URL, as the command prints it.
    fn page_url(&mut self) -> String {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = self
                .stderr
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("no page URL; the command said:\n{}", self.said));
            self.said.push_str(&line);
            self.said.push('\n');
            if let Some(at) = line.find("open http://") {
                let rest = &line[at + "open ".len()..];
                return rest.split(' ').next().unwrap_or_default().to_owned();
            }
        }
    }

    /// Waits for the command to exit: its status, stdout and everything it said on stderr.
    fn finish(mut self) -> (i32, String, String) {
        let deadline = Instant::now() + Duration::from_secs(20);
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("waiting") {
                break status;
            }
            assert!(Instant::now() < deadline, "still running:\n{}", self.said);
            std::thread::sleep(Duration::from_millis(20));
        };
        let mut stdout = String::new();
        if let Some(mut out) = self.child.stdout.take() {
            out.read_to_string(&mut stdout).expect("stdout");
        }
        // The reader thread ends with the process.
        let until = Instant::now() + Duration::from_secs(5);
        while let Ok(line) = self
            .stderr
            .recv_timeout(until.saturating_duration_since(Instant::now()))
        {
            self.said.push_str(&line);
            self.said.push('\n');
        }
        (
            status.code().unwrap_or(-1),
            stdout,
            std::mem::take(&mut self.said),
        )
    }

    fn running(&mut self) -> bool {
        self.child.try_wait().expect("waiting").is_none()
    }
}

impl Drop for Setup {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What a quoted attribute holds, unescaped: `name="value"` after `marker`.
fn attribute(html: &str, marker: &str, name: &str) -> String {
    let at = html
        .find(marker)
        .unwrap_or_else(|| panic!("no {marker} in\n{html}"));
    let rest = &html[at..];
    let start = rest.find(&format!("{name}=\"")).expect("the attribute") + name.len() + 2;
    let value = &rest[start..start + rest[start..].find('"').expect("its end")];
    value
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .permissions()
        .mode()
        & 0o777
}

async fn get(url: &str, host: Option<&str>) -> (u16, String) {
    let mut request = reqwest::Client::new().get(url);
    if let Some(host) = host {
        request = request.header("host", host);
    }
    let response = request.send().await.expect("the page answers");
    let status = response.status().as_u16();
    (status, response.text().await.expect("a body"))
}

#[tokio::test]
async fn setup_github_makes_the_app_from_its_manifest_and_writes_its_files() {
    let proxy = Proxy::start().await;
    let dir = tempfile::tempdir().expect("a directory");
    let out = dir.path().join("secrets");
    let mut setup = Setup::start(&proxy, &out, &[]);
    let page = setup.page_url();
    assert!(page.starts_with("http://127.0.0.1:"), "{page}");

    // The form: posted to the organization's page on GitHub, with the state, and the manifest.
    let response = reqwest::get(&page).await.expect("the form");
    assert_eq!(response.status().as_u16(), 200);
    let csp = response.headers()["content-security-policy"]
        .to_str()
        .expect("text")
        .to_owned();
    assert!(csp.contains("form-action https://github.example"), "{csp}");
    assert_eq!(response.headers()["referrer-policy"], "no-referrer");
    let html = response.text().await.expect("a page");
    let action = attribute(&html, "<form", "action");
    let state = action
        .strip_prefix("https://github.example/organizations/acme/settings/apps/new?state=")
        .unwrap_or_else(|| panic!("{action}"))
        .to_owned();
    assert_eq!(state.len(), 64, "{state}");
    let manifest: Value = serde_json::from_str(&attribute(&html, "name=\"manifest\"", "value"))
        .expect("the manifest is JSON");
    let redirect = manifest["redirect_url"]
        .as_str()
        .expect("a redirect URL")
        .to_owned();
    assert_eq!(redirect, format!("{}redirect", page));
    assert_eq!(manifest["name"], "forgeward-acme");
    assert_eq!(
        manifest["hook_attributes"],
        json!({ "url": "https://bot.acme.dev/webhooks/github", "active": true })
    );
    assert_eq!(manifest["public"], false);
    assert_eq!(
        manifest["default_permissions"],
        json!({ "checks": "write", "contents": "write", "issues": "write",
                "metadata": "read", "pull_requests": "write" })
    );
    assert_eq!(
        manifest["default_events"],
        json!(["issues", "issue_comment", "pull_request"])
    );
    // Asked for under another name (a page that rebound its name to this machine): refused.
    let (status, _) = get(&page, Some("evil.example")).await;
    assert_eq!(status, 421);

    // An answer with another state is refused, and the command waits on.
    let (status, _) = get(
        &format!("{redirect}?code=abc123&state={}", "0".repeat(64)),
        None,
    )
    .await;
    assert_eq!(status, 403);
    assert!(setup.running());
    assert!(!out.join("github-app.pem").exists());

    // GitHub's answer: the App is had for the code, its files written, the lines printed.
    let (status, body) = get(&format!("{redirect}?code=abc123&state={state}"), None).await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("The App is made"), "{body}");
    assert!(
        !body.contains(EXAMPLE_SECRET) && !body.contains("PRIVATE KEY"),
        "{body}"
    );
    let (code, stdout, said) = setup.finish();
    assert_eq!(code, 0, "{said}\n{stdout}");
    assert!(
        said.contains("refused an answer whose state is not this form's"),
        "{said}"
    );
    proxy.assert_all_conform();
    let conversions: Vec<String> = proxy
        .requests()
        .into_iter()
        .filter(|r| r.contains("/app-manifests/"))
        .collect();
    assert_eq!(conversions, ["POST /app-manifests/abc123/conversions"]);

    let out = out.canonicalize().expect("the directory");
    assert_eq!(mode(&out), 0o700);
    for name in ["github-app-id", "github-app.pem", "github-webhook-secret"] {
        assert_eq!(mode(&out.join(name)), 0o600, "{name}");
    }
    let read = |name: &str| std::fs::read_to_string(out.join(name)).expect("written");
    assert_eq!(read("github-app-id"), format!("{EXAMPLE_ID}\n"));
    assert_eq!(read("github-webhook-secret"), format!("{EXAMPLE_SECRET}\n"));
    assert!(read("github-app.pem").starts_with("-----BEGIN RSA PRIVATE KEY-----\n"));
    let key = out.join("github-app.pem").display().to_string();
    let secret = out.join("github-webhook-secret").display().to_string();
    let lines = format!(
        "[github]\napi_url = \"{}\"\nweb_url = \"https://github.example\"\napp_id = 1\nprivate_key_file = \"{key}\"\nwebhook_secret_file = \"{secret}\"\n",
        proxy.url
    );
    assert!(stdout.contains(&lines), "{stdout}");
    assert!(
        stdout
            .contains("Created the GitHub App Octocat App (id 1): https://github.com/apps/octoapp"),
        "{stdout}"
    );
    assert!(
        stdout.contains("https://github.com/apps/octoapp/installations/new"),
        "{stdout}"
    );
    assert!(!stdout.contains(EXAMPLE_SECRET) && !said.contains(EXAMPLE_SECRET));

    // The lines make a configuration the bot reads.
    let config = dir.path().join("forgeward.toml");
    std::fs::write(&config, &lines).expect("written");
    let (settings, secrets) =
        forgeward::config::server::Settings::load(Some(&config), Vec::new()).expect("valid");
    assert_eq!(settings.github.app_id, 1);
    assert_eq!(secrets.github_webhook[0].expose(), EXAMPLE_SECRET);

    // Run again: the files are there, so it refuses at once, before any App is made.
    let before = read("github-app.pem");
    let again = Setup::start(&proxy, &out, &[]);
    let (code, _, said) = again.finish();
    assert_eq!(code, 2, "{said}");
    assert!(
        said.contains("github-app.pem exists: refusing to overwrite it (--force replaces it)"),
        "{said}"
    );
    assert_eq!(read("github-app.pem"), before);
}

#[tokio::test]
async fn setup_github_with_force_replaces_the_files_and_gives_an_app_without_a_secret_one() {
    let proxy = Proxy::start().await;
    let dir = tempfile::tempdir().expect("a directory");
    let out = dir.path().to_path_buf();
    std::fs::write(out.join("github-app.pem"), "an old key\n").expect("written");
    std::fs::set_permissions(
        out.join("github-app.pem"),
        std::fs::Permissions::from_mode(0o644),
    )
    .expect("chmod");
    let mut setup = Setup::start(&proxy, &out, &["--force", "--name", "our-bot"]);
    let page = setup.page_url();
    let html = reqwest::get(&page)
        .await
        .expect("the form")
        .text()
        .await
        .expect("a page");
    let manifest: Value = serde_json::from_str(&attribute(&html, "name=\"manifest\"", "value"))
        .expect("the manifest is JSON");
    assert_eq!(manifest["name"], "our-bot");
    let state = attribute(&html, "<form", "action")
        .rsplit("state=")
        .next()
        .expect("a state")
        .to_owned();
    let redirect = manifest["redirect_url"].as_str().expect("a redirect URL");
    let (status, body) = get(
        &format!("{redirect}?code={CODE_WITHOUT_SECRET}&state={state}"),
        None,
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let (code, stdout, said) = setup.finish();
    assert_eq!(code, 0, "{said}\n{stdout}");
    proxy.assert_all_conform();
    let calls: Vec<String> = proxy
        .requests()
        .into_iter()
        .filter(|r| !r.ends_with("/zen"))
        .collect();
    assert_eq!(
        calls,
        [
            format!("POST /app-manifests/{CODE_WITHOUT_SECRET}/conversions"),
            "PATCH /app/hook/config".to_owned(),
        ]
    );
    let secret = std::fs::read_to_string(out.join("github-webhook-secret")).expect("written");
    assert_eq!(secret.trim().len(), 64, "a new secret: {secret}");
    assert_eq!(
        mode(&out.join("github-app.pem")),
        0o600,
        "replaced, private"
    );
    let key = std::fs::read_to_string(out.join("github-app.pem")).expect("written");
    assert!(key.contains("PRIVATE KEY"), "replaced: {key}");
}
