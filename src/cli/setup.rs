//! `forgeward setup github`: the bot's GitHub App made from a manifest instead of a page of
//! clicking. The command serves one page on loopback (or `--listen`) whose form posts the App's
//! manifest to GitHub; GitHub shows the App's settings, creates it, and sends the browser back
//! here with a one-time code (and the form's `state`, which must match: another page cannot
//! send an answer of its own); the code becomes the App's id, private key and webhook secret,
//! written to files only this user can read, and the lines `forgeward.toml` needs are printed.
//! One App made, the command exits.
//!
//! The page answers only to a `Host` that is `localhost` or an IP address, so a web page whose
//! name was pointed at this machine (DNS rebinding) cannot read the form's state. The secret
//! files are created with mode 0600 and never overwritten, unless `--force`, which replaces
//! each through a new 0600 file renamed over it: no file is ever readable by others, even for
//! a moment. Nothing here prints the key or the secret.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::fs::{DirBuilder, OpenOptions};
use std::io::Write as _;
use std::net::{IpAddr, SocketAddr};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex, PoisonError};

use anyhow::{Context, bail};
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use forgeward::config::server::Settings;
use forgeward::forge::github::manifest::{
    self, AppSpec, CreatedApp, MAX_NAME_CHARS, new_app_url, random_hex, valid_org,
};
use forgeward::forge::github::permissions::{EVENTS, USES, app_permissions};
use tokio::sync::{mpsc, oneshot};

/// The path GitHub sends the browser back to.
const REDIRECT_PATH: &str = "/redirect";

/// A code longer than this is not GitHub's.
const MAX_CODE_LEN: usize = 256;

/// The files, in the order they are written: the key first, since it is what matters most.
const KEY_FILE: &str = "github-app.pem";
const SECRET_FILE: &str = "github-webhook-secret";
const ID_FILE: &str = "github-app-id";

/// GitHub's defaults: lines for them need not be printed.
const DEFAULT_API_URL: &str = "https://api.github.com";
const DEFAULT_WEB_URL: &str = "https://github.com";

#[derive(clap::Args)]
pub struct GithubArgs {
    /// Create the App for this organization (you must own it) [default: your own account].
    #[arg(long, value_name = "ORG")]
    org: Option<String>,
    /// Where GitHub reaches the bot: the App's webhook is URL/webhooks/github.
    #[arg(long, value_name = "URL", required = true)]
    public_url: String,
    /// Where the App's id, private key and webhook secret are written (made, mode 0700, if
    /// missing).
    #[arg(long, value_name = "DIR", default_value = ".")]
    out: PathBuf,
    /// Where this command's page is served.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:0")]
    listen: SocketAddr,
    /// The App's name, which GitHub's form lets you change [default: forgeward-ORG, or
    /// forgeward- and the public URL's first label].
    #[arg(long, value_name = "NAME")]
    name: Option<String>,
    /// Replace files already in DIR.
    #[arg(long)]
    force: bool,
    /// The bot's configuration, for github.api_url and github.web_url (GitHub Enterprise
    /// Server) [default: none; FORGEWARD_GITHUB_* variables are read too].
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
}

/// Where the App's files go.
struct Files {
    dir: PathBuf,
    force: bool,
}

impl Files {
    fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// `name`'s bytes written, readable and writable by this user only.
    fn write(&self, name: &str, bytes: &[u8]) -> std::io::Result<()> {
        let path = self.path(name);
        if !self.force {
            let mut file = OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&path)?;
            file.write_all(bytes)?;
            return file.sync_all();
        }
        let temporary = self.dir.join(format!(
            ".{name}.{}",
            random_hex(8).map_err(std::io::Error::other)?
        ));
        let written = (|| {
            let mut file = OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&temporary)?;
            file.write_all(bytes)?;
            file.sync_all()?;
            std::fs::rename(&temporary, &path)
        })();
        if written.is_err() {
            let _ = std::fs::remove_file(&temporary);
        }
        written
    }
}

/// One run's flow: what the page offers and where the answer goes.
struct Flow {
    state: String,
    api_url: String,
    web_url: String,
    org: Option<String>,
    name: String,
    public_url: String,
    files: Files,
    listen: SocketAddr,
    /// Whether an App was made (later answers are refused), held while a code is converted so
    /// that two answers cannot both make use of it.
    made: tokio::sync::Mutex<bool>,
    done: Mutex<Option<oneshot::Sender<Result<String, String>>>>,
    /// Lines for the terminal as the flow goes (refused answers, failed conversions).
    notes: mpsc::UnboundedSender<String>,
}

pub fn github(args: GithubArgs) -> anyhow::Result<ExitCode> {
    if let Some(org) = &args.org
        && !valid_org(org)
    {
        bail!("--org {org:?} is not a GitHub organization's name");
    }
    let public_url = public_url(&args.public_url)?;
    let name = match &args.name {
        Some(name) if name.trim().is_empty() => bail!("--name is empty"),
        Some(name) if name.chars().count() > MAX_NAME_CHARS => {
            bail!("--name is longer than GitHub's {MAX_NAME_CHARS} characters")
        }
        Some(name) => name.trim().to_owned(),
        None => default_name(args.org.as_deref(), &public_url),
    };
    let (settings, _) = Settings::load_without_secrets(args.config.as_deref(), std::env::vars())?;
    let files = prepare(&args.out, args.force)?;
    let state = random_hex(32).map_err(anyhow::Error::msg)?;

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("starting the runtime")?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(args.listen)
            .await
            .with_context(|| format!("listening on {}", args.listen))?;
        let listen = listener.local_addr().context("reading the listening address")?;
        let (done_tx, done_rx) = oneshot::channel();
        let (notes_tx, mut notes_rx) = mpsc::unbounded_channel();
        let flow = Arc::new(Flow {
            state,
            api_url: settings.github.api_url.clone(),
            web_url: settings.github.web_url.clone(),
            org: args.org.clone(),
            name,
            public_url,
            files,
            listen,
            made: tokio::sync::Mutex::new(false),
            done: Mutex::new(Some(done_tx)),
            notes: notes_tx,
        });
        let app = axum::Router::new()
            .route("/", get(form))
            .route(REDIRECT_PATH, get(redirect))
            .with_state(flow.clone());
        let shown = if listen.ip().is_unspecified() {
            format!("http://<this machine's address>:{}/", listen.port())
        } else {
            format!("http://{listen}/")
        };
        let whose = match &args.org {
            Some(org) => format!("an owner of {org}"),
            None => "you".to_owned(),
        };
        eprintln!(
            "forgeward: open {shown} in a browser signed in to GitHub as {whose}, and create the App there"
        );
        let (stop_tx, stop_rx) = oneshot::channel::<()>();
        let server = tokio::spawn(async move {
            axum::serve(listener, app)
                .with_graceful_shutdown(async {
                    let _ = stop_rx.await;
                })
                .await
        });
        let result = {
            let mut done_rx = done_rx;
            loop {
                tokio::select! {
                    note = notes_rx.recv() => if let Some(note) = note {
                        eprintln!("forgeward: {note}");
                    },
                    done = &mut done_rx => break done.ok(),
                    _ = tokio::signal::ctrl_c() => break None,
                }
            }
        };
        let _ = stop_tx.send(());
        let _ = server.await;
        while let Ok(note) = notes_rx.try_recv() {
            eprintln!("forgeward: {note}");
        }
        match result {
            Some(Ok(report)) => {
                print!("{report}");
                Ok(ExitCode::SUCCESS)
            }
            Some(Err(message)) => bail!("{message}"),
            None => bail!("stopped before GitHub sent the App back; nothing was written"),
        }
    })
}

/// `--public-url`, checked: an absolute http(s) URL without query or fragment, no trailing
/// slash.
fn public_url(text: &str) -> anyhow::Result<String> {
    let uri: http::Uri = text
        .parse()
        .map_err(|e| anyhow::anyhow!("--public-url {text:?} is not a URL: {e}"))?;
    let scheme_ok = matches!(uri.scheme_str(), Some("https" | "http"));
    if !scheme_ok || uri.authority().is_none() || uri.query().is_some() || text.contains('#') {
        bail!(
            "--public-url {text:?} is not an absolute http(s) URL without a query, such as https://bot.example.com"
        );
    }
    Ok(text.trim_end_matches('/').to_owned())
}

/// `forgeward-<org>`, or `forgeward-` and the first label of the public URL's host, within
/// GitHub's length.
fn default_name(org: Option<&str>, public_url: &str) -> String {
    let host = public_url
        .split("://")
        .nth(1)
        .and_then(|rest| rest.split(['/', ':', '.']).next())
        .unwrap_or("bot");
    let name = format!("forgeward-{}", org.unwrap_or(host));
    name.chars().take(MAX_NAME_CHARS).collect()
}

/// The output directory, made private if it is new, with none of the files in it (unless
/// `force`) and room to write them: found now, before an App is made whose key would have
/// nowhere to go.
fn prepare(out: &Path, force: bool) -> anyhow::Result<Files> {
    if !out.exists() {
        DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(out)
            .with_context(|| format!("creating {}", out.display()))?;
    }
    let dir = out
        .canonicalize()
        .with_context(|| format!("reading {}", out.display()))?;
    if dir.to_str().is_none() {
        bail!(
            "{}: the path is not UTF-8, which forgeward.toml cannot name",
            dir.display()
        );
    }
    let files = Files { dir, force };
    for name in [KEY_FILE, SECRET_FILE, ID_FILE] {
        let path = files.path(name);
        if !force && std::fs::symlink_metadata(&path).is_ok() {
            bail!(
                "{} exists: refusing to overwrite it (--force replaces it)",
                path.display()
            );
        }
    }
    let probe = files.dir.join(format!(
        ".forgeward-setup-{}",
        random_hex(8).map_err(anyhow::Error::msg)?
    ));
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&probe)
        .with_context(|| format!("{}: cannot write the App's files here", files.dir.display()))?;
    let _ = std::fs::remove_file(&probe);
    Ok(files)
}

/// The base URL the browser reached this page at, when its `Host` is `localhost` or an IP
/// address (else a page on another name could be reading it).
fn base_url(headers: &HeaderMap, listen: SocketAddr) -> Option<String> {
    let host = headers.get(header::HOST)?.to_str().ok()?;
    let name = match host.strip_prefix('[') {
        Some(rest) => rest.split(']').next()?,
        None => host.rsplit_once(':').map_or(host, |(name, _)| name),
    };
    let local = name.eq_ignore_ascii_case("localhost") || name.parse::<IpAddr>().is_ok();
    let port_ok = match host.rsplit_once(':') {
        Some((_, port)) if !host.ends_with(']') => port.parse::<u16>().ok() == Some(listen.port()),
        _ => listen.port() == 80,
    };
    (local && port_ok).then(|| format!("http://{host}"))
}

async fn form(State(flow): State<Arc<Flow>>, headers: HeaderMap) -> Response {
    let Some(base) = base_url(&headers, flow.listen) else {
        return misdirected(flow.listen);
    };
    let spec = AppSpec {
        name: flow.name.clone(),
        public_url: flow.public_url.clone(),
        redirect_url: format!("{base}{REDIRECT_PATH}"),
    };
    let manifest = manifest::manifest(&spec);
    let action = new_app_url(&flow.web_url, flow.org.as_deref(), &flow.state);
    let account = match &flow.org {
        Some(org) => format!("the organization <b>{}</b>", escape(org)),
        None => "your account".to_owned(),
    };
    let mut body = format!(
        "<h1>Create forgeward's GitHub App</h1>\n\
         <p>This makes a private GitHub App named <b>{name}</b> for {account}, which sends its \
         webhooks to <code>{hook}</code>. GitHub shows its settings before it makes anything \
         (the name can be changed there), then sends you back here, and this command writes \
         the App's id, private key and webhook secret to <code>{dir}</code>.</p>\n\
         <form action=\"{action}\" method=\"post\">\n\
         <input type=\"hidden\" name=\"manifest\" value=\"{manifest_attr}\">\n\
         <button type=\"submit\">Create the App on GitHub</button>\n</form>\n",
        name = escape(&flow.name),
        hook = escape(
            manifest["hook_attributes"]["url"]
                .as_str()
                .unwrap_or_default()
        ),
        dir = escape(&flow.files.dir.display().to_string()),
        action = escape(&action),
        manifest_attr = escape(&manifest.to_string()),
    );
    body.push_str("<h2>What the App may do</h2>\n<table>\n<tr><th>permission</th><th>access</th><th>for</th></tr>\n");
    for (permission, access) in app_permissions() {
        let uses: Vec<String> = USES
            .iter()
            .filter(|u| u.permission == Some(permission))
            .map(|u| format!("<code>{}</code>", escape(u.call)))
            .collect();
        let _ = writeln!(
            body,
            "<tr><td>{permission}</td><td>{}</td><td>{}</td></tr>",
            access.as_str(),
            uses.join("<br>")
        );
    }
    body.push_str("</table>\n<h2>The events it receives</h2>\n<ul>\n");
    for (event, why) in EVENTS {
        let _ = writeln!(body, "<li><code>{event}</code>: {}</li>", escape(why));
    }
    let pretty = serde_json::to_string_pretty(&manifest).unwrap_or_default();
    let _ = write!(
        body,
        "</ul>\n<h2>The manifest</h2>\n<pre>{}</pre>\n",
        escape(&pretty)
    );
    page(
        StatusCode::OK,
        "Create forgeward's GitHub App",
        &body,
        &flow.web_url,
    )
}

async fn redirect(
    State(flow): State<Arc<Flow>>,
    headers: HeaderMap,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    if base_url(&headers, flow.listen).is_none() {
        return misdirected(flow.listen);
    }
    let given = query.get("state").map(String::as_str).unwrap_or_default();
    if !same(given, &flow.state) {
        let _ = flow.notes.send(
            "refused an answer whose state is not this form's (nothing was made here)".to_owned(),
        );
        return message(
            StatusCode::FORBIDDEN,
            "Not this form's answer",
            "This answer does not carry the state of the form this command served, so it is \
             refused. Start again from the form.",
            &flow.web_url,
        );
    }
    let Some(code) = query.get("code").filter(|c| {
        !c.is_empty() && c.len() <= MAX_CODE_LEN && c.bytes().all(|b| b.is_ascii_graphic())
    }) else {
        return message(
            StatusCode::BAD_REQUEST,
            "No code",
            "GitHub's answer has no code in it.",
            &flow.web_url,
        );
    };
    let mut made = flow.made.lock().await;
    if *made {
        return message(
            StatusCode::GONE,
            "Already made",
            "This command has made its App already; the files are written.",
            &flow.web_url,
        );
    }
    let app = match manifest::convert(&flow.api_url, code).await {
        Ok(app) => app,
        Err(e) => {
            let _ = flow
                .notes
                .send(format!("GitHub did not hand the App over: {e}"));
            return message(
                StatusCode::BAD_GATEWAY,
                "GitHub did not hand the App over",
                &format!("{e}."),
                &flow.web_url,
            );
        }
    };
    *made = true;
    let (status, title, text, result) = match save(&flow.files, &app) {
        Ok(()) => (
            StatusCode::OK,
            "The App is made",
            format!(
                "GitHub made the App {} (id {}). Its id, private key and webhook secret are in \
                 {}; the lines to add to forgeward.toml are in the terminal. Install the App on \
                 the repositories forgeward should work on: {}/installations/new",
                app.name,
                app.id,
                flow.files.dir.display(),
                app.html_url
            ),
            Ok(report(&flow, &app)),
        ),
        Err(e) => {
            let why = format!(
                "GitHub made the App {} (id {}), but its files could not be written: {e}. \
                 Generate a new private key on {} and write it yourself.",
                app.name, app.id, app.html_url
            );
            (
                StatusCode::INTERNAL_SERVER_ERROR,
                "The App's files could not be written",
                why.clone(),
                Err(why),
            )
        }
    };
    if let Some(done) = flow
        .done
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .take()
    {
        let _ = done.send(result);
    }
    message(status, title, &text, &flow.web_url)
}

/// Writes the key, the secret and the id.
fn save(files: &Files, app: &CreatedApp) -> std::io::Result<()> {
    let mut pem = app.pem.expose().to_owned();
    if !pem.ends_with('\n') {
        pem.push('\n');
    }
    files.write(KEY_FILE, pem.as_bytes())?;
    files.write(
        SECRET_FILE,
        format!("{}\n", app.webhook_secret.expose()).as_bytes(),
    )?;
    files.write(ID_FILE, format!("{}\n", app.id).as_bytes())
}

/// What the terminal is told once the App is made: the files and the configuration's lines.
fn report(flow: &Flow, app: &CreatedApp) -> String {
    let quoted =
        |name: &str| toml::Value::String(flow.files.path(name).display().to_string()).to_string();
    let mut out = format!(
        "Created the GitHub App {} (id {}): {}\n\nWrote, readable by this user only:\n",
        app.name, app.id, app.html_url
    );
    for name in [ID_FILE, KEY_FILE, SECRET_FILE] {
        let _ = writeln!(out, "  {}", flow.files.path(name).display());
    }
    out.push_str("\nAdd to forgeward.toml:\n\n[github]\n");
    if flow.api_url.trim_end_matches('/') != DEFAULT_API_URL {
        let _ = writeln!(
            out,
            "api_url = {}",
            toml::Value::String(flow.api_url.clone())
        );
    }
    if flow.web_url.trim_end_matches('/') != DEFAULT_WEB_URL {
        let _ = writeln!(
            out,
            "web_url = {}",
            toml::Value::String(flow.web_url.clone())
        );
    }
    let _ = writeln!(out, "app_id = {}", app.id);
    let _ = writeln!(out, "private_key_file = {}", quoted(KEY_FILE));
    let _ = writeln!(out, "webhook_secret_file = {}", quoted(SECRET_FILE));
    let _ = writeln!(
        out,
        "\nThen install the App on the repositories forgeward should work on: {}/installations/new",
        app.html_url
    );
    out
}

/// Whether `given` is `expected`, in time that does not depend on where they differ.
fn same(given: &str, expected: &str) -> bool {
    use sha2::{Digest, Sha256};
    use subtle::ConstantTimeEq;
    let (a, b) = (
        Sha256::digest(given.as_bytes()),
        Sha256::digest(expected.as_bytes()),
    );
    bool::from(a.ct_eq(&b))
}

fn misdirected(listen: SocketAddr) -> Response {
    let text = format!(
        "This page answers only at an IP address or localhost (port {}), so that no other web \
         site can read it: open it as http://127.0.0.1:{}/ (over an SSH tunnel from another \
         machine), or at this machine's IP address.",
        listen.port(),
        listen.port()
    );
    let mut response = (StatusCode::MISDIRECTED_REQUEST, text).into_response();
    response.headers_mut().insert(
        header::CACHE_CONTROL,
        header::HeaderValue::from_static("no-store"),
    );
    response
}

fn message(status: StatusCode, title: &str, text: &str, web_url: &str) -> Response {
    let body = format!("<h1>{}</h1>\n<p>{}</p>\n", escape(title), escape(text));
    page(status, title, &body, web_url)
}

/// An HTML page that loads nothing, may post its form to GitHub only, is never cached and
/// never framed, and sends no referrer (the answer's URL holds the code).
fn page(status: StatusCode, title: &str, body: &str, web_url: &str) -> Response {
    let html = format!(
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <title>{}</title>\n<style>body{{font:16px/1.5 system-ui,sans-serif;max-width:48rem;\
         margin:2rem auto;padding:0 1rem}}pre{{background:#f4f4f4;padding:1rem;overflow:auto}}\
         td,th{{text-align:left;vertical-align:top;padding:.2rem .6rem}}</style>\n</head>\n\
         <body>\n{body}</body>\n</html>\n",
        escape(title)
    );
    let origin = web_url.trim_end_matches('/');
    let policy = format!(
        "default-src 'none'; style-src 'unsafe-inline'; form-action {origin}; frame-ancestors 'none'; base-uri 'none'"
    );
    let mut response = (status, html).into_response();
    let headers = response.headers_mut();
    let set = |headers: &mut HeaderMap, name: header::HeaderName, value: &str| {
        if let Ok(value) = header::HeaderValue::from_str(value) {
            headers.insert(name, value);
        }
    };
    set(headers, header::CONTENT_TYPE, "text/html; charset=utf-8");
    set(headers, header::CACHE_CONTROL, "no-store");
    set(headers, header::REFERRER_POLICY, "no-referrer");
    set(headers, header::X_FRAME_OPTIONS, "DENY");
    set(headers, header::CONTENT_SECURITY_POLICY, &policy);
    response
}

/// `text` for HTML, in an element or a quoted attribute.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(header::HOST, value.parse().expect("a header"));
        headers
    }

    #[test]
    fn the_page_answers_at_an_ip_address_or_localhost_on_its_port_only() {
        let listen: SocketAddr = "127.0.0.1:8123".parse().expect("an address");
        assert_eq!(
            base_url(&host("127.0.0.1:8123"), listen).as_deref(),
            Some("http://127.0.0.1:8123")
        );
        assert_eq!(
            base_url(&host("localhost:8123"), listen).as_deref(),
            Some("http://localhost:8123")
        );
        assert_eq!(
            base_url(&host("[::1]:8123"), listen).as_deref(),
            Some("http://[::1]:8123")
        );
        for refused in ["evil.example:8123", "127.0.0.1:9999", "127.0.0.1", "[::1]"] {
            assert_eq!(base_url(&host(refused), listen), None, "{refused}");
        }
        assert_eq!(base_url(&HeaderMap::new(), listen), None);
    }

    #[test]
    fn names_and_urls() {
        assert_eq!(
            default_name(Some("acme"), "https://bot.acme.dev"),
            "forgeward-acme"
        );
        assert_eq!(
            default_name(None, "https://bot.acme.dev:8443/x"),
            "forgeward-bot"
        );
        assert_eq!(
            default_name(Some(&"a".repeat(39)), "https://x")
                .chars()
                .count(),
            34
        );
        assert_eq!(
            public_url("https://bot.acme.dev/").expect("a URL"),
            "https://bot.acme.dev"
        );
        for bad in [
            "bot.acme.dev",
            "ftp://bot",
            "https://bot/?x=1",
            "https://bot/#x",
            "/x",
        ] {
            assert!(public_url(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn escaping_and_comparing() {
        assert_eq!(
            escape(r#"<a href="x">'&'</a>"#),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
        );
        assert!(same("abc", "abc"));
        assert!(!same("abd", "abc") && !same("", "abc"));
    }

    #[test]
    fn files_are_made_private_and_not_overwritten_unless_forced() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("a directory");
        let files = prepare(&dir.path().join("new/secrets"), false).expect("prepared");
        let mode =
            |path: &Path| std::fs::metadata(path).expect("there").permissions().mode() & 0o777;
        assert_eq!(mode(&files.dir), 0o700);
        files.write(KEY_FILE, b"key\n").expect("written");
        assert_eq!(mode(&files.path(KEY_FILE)), 0o600);
        let again = files
            .write(KEY_FILE, b"other\n")
            .expect_err("not overwritten");
        assert_eq!(again.kind(), std::io::ErrorKind::AlreadyExists);
        let e = prepare(&files.dir, false)
            .err()
            .expect("refused")
            .to_string();
        assert!(
            e.ends_with("github-app.pem exists: refusing to overwrite it (--force replaces it)"),
            "{e}"
        );
        let forced = prepare(&files.dir, true).expect("prepared");
        forced.write(KEY_FILE, b"other\n").expect("replaced");
        assert_eq!(
            std::fs::read(forced.path(KEY_FILE)).expect("read"),
            b"other\n"
        );
        assert_eq!(mode(&forced.path(KEY_FILE)), 0o600);
        let left: Vec<_> = std::fs::read_dir(&forced.dir)
            .expect("listed")
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(
            left,
            [std::ffi::OsString::from(KEY_FILE)],
            "no temporary file left"
        );
    }
}
