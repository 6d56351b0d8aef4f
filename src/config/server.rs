//! The bot's configuration, `forgeward.toml`, and its environment overrides.
//!
//! Every key is optional: with no file at all, `forgeward serve` listens on 127.0.0.1:8080 with
//! an embedded SQLite store under `./forgeward-data/`. Every key can be set by an environment
//! variable `FORGEWARD_<SECTION>_<KEY>`, which wins over the file. Secrets are read from the
//! environment or from a `*_file` path only: a secret written into the file itself is refused,
//! since configuration files end up in repositories and images.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

pub use super::duration::{HumanDuration, parse_duration};
pub use super::pipeline::{
    Backend, ByteSize, EnvironmentSection, GitSection, Network, ReviewSection, ReviewVerify,
    SandboxSection, VerifySection, WorkerSection,
};
use crate::forge::github::FlaggedConclusion;
use crate::forge::webhook::Secret;
use crate::text::line_column;

/// The sections and keys a file or the environment may set. Environment variables are matched
/// against it, so a misspelt `FORGEWARD_JOBS_CONCURENCY` is an error rather than ignored.
const KEYS: &[(&str, &[&str])] = &[
    (
        "server",
        &[
            "listen",
            "data_dir",
            "head_timeout",
            "body_timeout",
            "idle_timeout",
            "max_connections",
            "public_url",
            "job_link_ttl",
            "job_link_key_file",
        ],
    ),
    ("store", &["url", "queue"]),
    (
        "github",
        &[
            "api_url",
            "web_url",
            "git_url",
            "app_id",
            "private_key_file",
            "webhook_secret_file",
            "token_file",
            "redelivery_interval",
            "flagged_conclusion",
        ],
    ),
    (
        "gitlab",
        &["url", "git_url", "webhook_token_file", "token_file"],
    ),
    (
        "forgejo",
        &["url", "git_url", "webhook_secret_file", "token_file"],
    ),
    ("trigger", &["label", "command", "reply_to_unauthorized"]),
    ("jobs", &["concurrency", "max_attempts", "lease"]),
    (
        "sandbox",
        &[
            "backend",
            "timeout",
            "cpu",
            "memory",
            "pids",
            "file_size",
            "disk",
            "network",
            "allow",
            "upstream_ca_file",
            "docker_base",
        ],
    ),
    (
        "worker",
        &["command", "image", "env", "name", "tests", "secrets"],
    ),
    ("verify", &["enabled", "timeout"]),
    (
        "review",
        &[
            "verify",
            "concurrency",
            "agent_logins",
            "agent_emails",
            "agent_branch_prefixes",
        ],
    ),
    (
        "environment",
        &["enabled", "allow", "env", "timeout", "keep_for", "max_size"],
    ),
    ("git", &["author_name", "author_email", "branch_prefix"]),
];

/// Environment variables that carry secrets themselves, with the file key that is the other
/// way to give them.
pub const SECRET_VARS: &[(&str, &str)] = &[
    (
        "FORGEWARD_GITHUB_WEBHOOK_SECRET",
        "github.webhook_secret_file",
    ),
    ("FORGEWARD_GITHUB_TOKEN", "github.token_file"),
    (
        "FORGEWARD_GITLAB_WEBHOOK_TOKEN",
        "gitlab.webhook_token_file",
    ),
    ("FORGEWARD_GITLAB_TOKEN", "gitlab.token_file"),
    (
        "FORGEWARD_FORGEJO_WEBHOOK_SECRET",
        "forgejo.webhook_secret_file",
    ),
    ("FORGEWARD_FORGEJO_TOKEN", "forgejo.token_file"),
];

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Settings {
    pub server: ServerSection,
    pub store: StoreSection,
    pub github: GithubSection,
    pub gitlab: GitlabSection,
    pub forgejo: ForgejoSection,
    pub trigger: TriggerSection,
    pub jobs: JobsSection,
    pub sandbox: SandboxSection,
    pub worker: WorkerSection,
    pub git: GitSection,
    pub verify: VerifySection,
    pub review: ReviewSection,
    pub environment: EnvironmentSection,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ServerSection {
    pub listen: String,
    /// The SQLite store, mirrors and logs live here.
    pub data_dir: PathBuf,
    /// How long a connection may take to send a request's head (line and headers); a forge
    /// sends it at once.
    pub head_timeout: HumanDuration,
    /// How long a request's body may take to arrive whole (GitHub itself gives up after 10 s).
    pub body_timeout: HumanDuration,
    /// How long a connection not in a request (new, or kept alive after one) may stay silent.
    pub idle_timeout: HumanDuration,
    /// Connections open at once; the ones over it are closed as they arrive. Capped at what the
    /// process's descriptor limit leaves room for.
    pub max_connections: usize,
    /// Where people reach the bot (`https://forgeward.example.com`): with it, each status
    /// comment links to its job's page.
    pub public_url: Option<String>,
    /// How long a link to a job page stays good after it was made.
    pub job_link_ttl: HumanDuration,
    /// The key job links are signed with; by default `job-link.key` in the data directory,
    /// created on first start.
    pub job_link_key_file: Option<PathBuf>,
}

impl Default for ServerSection {
    fn default() -> Self {
        ServerSection {
            listen: "127.0.0.1:8080".to_owned(),
            data_dir: PathBuf::from("forgeward-data"),
            head_timeout: HumanDuration(Duration::from_secs(10)),
            body_timeout: HumanDuration(Duration::from_secs(10)),
            idle_timeout: HumanDuration(Duration::from_secs(10)),
            max_connections: 4096,
            public_url: None,
            job_link_ttl: HumanDuration(crate::links::DEFAULT_TTL),
            job_link_key_file: None,
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct StoreSection {
    /// `sqlite://path` or `postgres://…`; by default a SQLite file in the data directory.
    pub url: Option<String>,
    /// Writes that may wait for the store's writer; a delivery that finds them all taken is
    /// answered 503 with `Retry-After` at once.
    pub queue: usize,
}

impl Default for StoreSection {
    fn default() -> Self {
        StoreSection {
            url: None,
            queue: crate::store::DEFAULT_QUEUE,
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GithubSection {
    /// GitHub Enterprise Server users point this at their own API.
    pub api_url: String,
    /// Where people read repositories: the base of links in comments.
    pub web_url: String,
    /// The base of the URLs git clones and pushes with (`{git_url}/{owner}/{name}.git`); by
    /// default `web_url`.
    pub git_url: Option<String>,
    /// A GitHub App's id; 0 when the bot authenticates with a token instead.
    pub app_id: u64,
    pub private_key_file: Option<PathBuf>,
    /// One secret a line; several while a secret is being rotated.
    pub webhook_secret_file: Option<PathBuf>,
    pub token_file: Option<PathBuf>,
    /// How often a GitHub App's recent deliveries are checked for ones the bot missed, which
    /// GitHub is then asked to send again; `0s` turns the sweep off (on all but one of several
    /// `serve` processes, say).
    pub redelivery_interval: HumanDuration,
    /// What a GitHub App's check run concludes on flags at or above a repository's `fail_on`:
    /// `failure` (the default, as the commit status says without an App) or `action_required`.
    pub flagged_conclusion: FlaggedConclusion,
}

impl Default for GithubSection {
    fn default() -> Self {
        GithubSection {
            api_url: "https://api.github.com".to_owned(),
            web_url: "https://github.com".to_owned(),
            git_url: None,
            app_id: 0,
            private_key_file: None,
            webhook_secret_file: None,
            token_file: None,
            redelivery_interval: HumanDuration(Duration::from_secs(5 * 60)),
            flagged_conclusion: FlaggedConclusion::default(),
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GitlabSection {
    /// The GitLab instance: its API is at `{url}/api/v4`, its projects at `{url}/{path}`.
    pub url: String,
    /// The base of the URLs git clones and pushes with (`{git_url}/{path}.git`); by default `url`.
    pub git_url: Option<String>,
    pub webhook_token_file: Option<PathBuf>,
    pub token_file: Option<PathBuf>,
}

/// A Forgejo or Gitea instance (Codeberg by default).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ForgejoSection {
    /// The instance: its API is at `{url}/api/v1`, its repositories at `{url}/{owner}/{name}`.
    pub url: String,
    /// The base of the URLs git clones and pushes with (`{git_url}/{owner}/{name}.git`); by
    /// default `url`.
    pub git_url: Option<String>,
    /// The webhook's secret (one a line while rotating); or `FORGEWARD_FORGEJO_WEBHOOK_SECRET`.
    pub webhook_secret_file: Option<PathBuf>,
    /// An access token with the repository and issue scopes; or `FORGEWARD_FORGEJO_TOKEN`.
    pub token_file: Option<PathBuf>,
}

impl Default for ForgejoSection {
    fn default() -> Self {
        ForgejoSection {
            url: "https://codeberg.org".to_owned(),
            git_url: None,
            webhook_secret_file: None,
            token_file: None,
        }
    }
}

impl Default for GitlabSection {
    fn default() -> Self {
        GitlabSection {
            url: "https://gitlab.com".to_owned(),
            git_url: None,
            webhook_token_file: None,
            token_file: None,
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TriggerSection {
    /// The issue label that starts a job.
    pub label: String,
    /// The comment command: `/forgeward run`, `/forgeward retry`, …
    pub command: String,
    /// Whether someone without write access who asks in a comment gets a short reply saying
    /// why nothing happens (else the bot stays silent).
    pub reply_to_unauthorized: bool,
}

impl Default for TriggerSection {
    fn default() -> Self {
        TriggerSection {
            label: "forgeward".to_owned(),
            command: "/forgeward".to_owned(),
            reply_to_unauthorized: true,
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct JobsSection {
    /// Jobs one runner process works on at once.
    pub concurrency: usize,
    /// Attempts before a job is `dead`.
    pub max_attempts: u32,
    /// How long a claimed job stays claimed without a heartbeat.
    pub lease: HumanDuration,
}

impl Default for JobsSection {
    fn default() -> Self {
        JobsSection {
            concurrency: 2,
            max_attempts: 3,
            lease: HumanDuration(Duration::from_secs(5 * 60)),
        }
    }
}

/// The secrets the bot holds, each from the environment or a file.
#[derive(Clone, Default)]
pub struct Secrets {
    pub github_webhook: Vec<Secret>,
    pub github_token: Option<Secret>,
    pub gitlab_webhook: Vec<Secret>,
    pub gitlab_token: Option<Secret>,
    pub forgejo_webhook: Vec<Secret>,
    pub forgejo_token: Option<Secret>,
}

impl fmt::Debug for Secrets {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Secrets")
            .field("github_webhook", &self.github_webhook.len())
            .field("github_token", &self.github_token.is_some())
            .field("gitlab_webhook", &self.gitlab_webhook.len())
            .field("gitlab_token", &self.gitlab_token.is_some())
            .field("forgejo_webhook", &self.forgejo_webhook.len())
            .field("forgejo_token", &self.forgejo_token.is_some())
            .finish()
    }
}

/// A configuration that cannot be used: where, and why, in one line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{place}: {message}")]
pub struct SettingsError {
    /// `forgeward.toml:3:1`, or the environment variable's name.
    pub place: String,
    pub message: String,
}

impl Settings {
    /// Reads `path` (if given) and the environment `vars` (all of the process's, in `serve`).
    pub fn load(
        path: Option<&Path>,
        vars: impl IntoIterator<Item = (String, String)>,
    ) -> Result<(Settings, Secrets), SettingsError> {
        let (settings, vars) = Settings::load_without_secrets(path, vars)?;
        let secrets = settings.secrets(&vars)?;
        Ok((settings, secrets))
    }

    /// [`Settings::load`] without reading any secret: the settings, and the `FORGEWARD_`
    /// variables they were read with. For `forgeward doctor`, which reads each secret itself
    /// so as to say which one is missing.
    pub fn load_without_secrets(
        path: Option<&Path>,
        vars: impl IntoIterator<Item = (String, String)>,
    ) -> Result<(Settings, BTreeMap<String, String>), SettingsError> {
        let (file_name, text) = match path {
            Some(p) => {
                let text = std::fs::read_to_string(p).map_err(|e| SettingsError {
                    place: p.display().to_string(),
                    message: e.to_string(),
                })?;
                (p.display().to_string(), text)
            }
            None => ("forgeward.toml".to_owned(), String::new()),
        };
        let vars: BTreeMap<String, String> = vars
            .into_iter()
            .filter(|(k, _)| k.starts_with("FORGEWARD_"))
            .collect();
        let settings = Settings::parse(&file_name, &text, &vars)?;
        Ok((settings, vars))
    }

    /// The path a secret's file key of [`SECRET_VARS`] (`github.token_file`) is set to.
    pub fn secret_file(&self, file_key: &str) -> Option<&Path> {
        match file_key {
            "github.webhook_secret_file" => self.github.webhook_secret_file.as_deref(),
            "github.token_file" => self.github.token_file.as_deref(),
            "gitlab.webhook_token_file" => self.gitlab.webhook_token_file.as_deref(),
            "gitlab.token_file" => self.gitlab.token_file.as_deref(),
            "forgejo.webhook_secret_file" => self.forgejo.webhook_secret_file.as_deref(),
            "forgejo.token_file" => self.forgejo.token_file.as_deref(),
            _ => None,
        }
    }

    /// The file's text with the environment laid over it.
    fn parse(
        file_name: &str,
        text: &str,
        vars: &BTreeMap<String, String>,
    ) -> Result<Settings, SettingsError> {
        let at = |span: Option<std::ops::Range<usize>>, message: String| {
            let (line, column) = line_column(text, span.map_or(0, |s| s.start));
            SettingsError {
                place: format!("{file_name}:{line}:{column}"),
                message,
            }
        };
        let mut table: toml::Table =
            toml::from_str(text).map_err(|e| at(e.span(), crate::text::one_line(e.message())))?;
        refuse_inline_secrets(&table, file_name)?;
        let places = super::egress::check_entries(text).map_err(|(span, m)| at(span, m))?;
        // Errors in the file are reported against it before any variable is laid over it.
        Settings::deserialize(toml::Value::Table(table.clone()))
            .map_err(|e| at(span_of(text, &e), crate::text::one_line(e.message())))?;
        for (var, value) in vars {
            if SECRET_VARS.iter().any(|(v, _)| v == var) {
                continue;
            }
            let Some((section, key)) = setting_of(var) else {
                if let Some(section) = known_section(var) {
                    return Err(SettingsError {
                        place: var.clone(),
                        message: format!("[{section}] has no such setting"),
                    });
                }
                continue; // Not ours: FORGEWARD_TEST_…, for instance.
            };
            let section_table = table
                .entry(section)
                .or_insert_with(|| toml::Value::Table(toml::Table::new()));
            let toml::Value::Table(section_table) = section_table else {
                return Err(SettingsError {
                    place: file_name.to_owned(),
                    message: format!("[{section}] is not a table"),
                });
            };
            section_table.insert(key.to_owned(), env_value(value));
            // Checked one variable at a time, so an error names the variable that caused it.
            Settings::deserialize(toml::Value::Table(table.clone())).map_err(|e| {
                SettingsError {
                    place: var.clone(),
                    message: crate::text::one_line(e.message()),
                }
            })?;
        }
        let settings =
            Settings::deserialize(toml::Value::Table(table)).map_err(|e| SettingsError {
                place: "environment".to_owned(),
                message: crate::text::one_line(e.message()),
            })?;
        super::egress::check_together(&settings.sandbox, &settings.worker, &places).map_err(
            |(span, message)| match span {
                Some(span) => at(Some(span), message),
                // Nothing in the file to point at: the environment set it.
                None => SettingsError {
                    place: if vars.is_empty() {
                        file_name.to_owned()
                    } else {
                        "environment".to_owned()
                    },
                    message,
                },
            },
        )?;
        Ok(settings)
    }

    /// The store's URL: the configured one, or the SQLite file in the data directory.
    pub fn store_url(&self) -> String {
        match &self.store.url {
            Some(url) => url.clone(),
            None => format!(
                "sqlite://{}",
                self.server.data_dir.join("forgeward.db").display()
            ),
        }
    }

    fn secrets(&self, vars: &BTreeMap<String, String>) -> Result<Secrets, SettingsError> {
        let many = |var: &str, file: &Option<PathBuf>| -> Result<Vec<Secret>, SettingsError> {
            let raw = match (vars.get(var), file) {
                (Some(v), _) => v.split(',').map(str::to_owned).collect::<Vec<_>>(),
                (None, Some(path)) => read_secret_file(path)?.lines().map(str::to_owned).collect(),
                (None, None) => Vec::new(),
            };
            Ok(raw
                .into_iter()
                .map(|s| s.trim().to_owned())
                .filter(|s| !s.is_empty())
                .map(Secret::new)
                .collect())
        };
        let one = |var: &str, file: &Option<PathBuf>| -> Result<Option<Secret>, SettingsError> {
            let raw = match (vars.get(var), file) {
                (Some(v), _) => Some(v.trim().to_owned()),
                (None, Some(path)) => Some(read_secret_file(path)?.trim().to_owned()),
                (None, None) => None,
            };
            Ok(raw.filter(|s| !s.is_empty()).map(Secret::new))
        };
        Ok(Secrets {
            github_webhook: many(
                "FORGEWARD_GITHUB_WEBHOOK_SECRET",
                &self.github.webhook_secret_file,
            )?,
            github_token: one("FORGEWARD_GITHUB_TOKEN", &self.github.token_file)?,
            gitlab_webhook: many(
                "FORGEWARD_GITLAB_WEBHOOK_TOKEN",
                &self.gitlab.webhook_token_file,
            )?,
            gitlab_token: one("FORGEWARD_GITLAB_TOKEN", &self.gitlab.token_file)?,
            forgejo_webhook: many(
                "FORGEWARD_FORGEJO_WEBHOOK_SECRET",
                &self.forgejo.webhook_secret_file,
            )?,
            forgejo_token: one("FORGEWARD_FORGEJO_TOKEN", &self.forgejo.token_file)?,
        })
    }

    /// What is not configured yet, one line each, for a log line at start.
    pub fn missing(&self, secrets: &Secrets) -> Vec<&'static str> {
        let mut out = Vec::new();
        if secrets.github_webhook.is_empty() {
            out.push("GitHub webhook secret (FORGEWARD_GITHUB_WEBHOOK_SECRET or github.webhook_secret_file): GitHub deliveries are refused");
        }
        if self.github.app_id == 0 && secrets.github_token.is_none() {
            out.push("GitHub credentials (github.app_id with github.private_key_file, or FORGEWARD_GITHUB_TOKEN): the bot cannot write to GitHub");
        }
        if self.github.app_id != 0 && self.github.private_key_file.is_none() {
            out.push("GitHub App private key (github.private_key_file): github.app_id is set but the bot cannot authenticate as the App, and missed deliveries are not asked for again");
        }
        if secrets.gitlab_webhook.is_empty() {
            out.push("GitLab webhook token (FORGEWARD_GITLAB_WEBHOOK_TOKEN or gitlab.webhook_token_file): GitLab deliveries are refused");
        }
        if secrets.gitlab_token.is_none() {
            out.push("GitLab token (FORGEWARD_GITLAB_TOKEN or gitlab.token_file): the bot cannot write to GitLab");
        }
        if secrets.forgejo_webhook.is_empty() {
            out.push("Forgejo webhook secret (FORGEWARD_FORGEJO_WEBHOOK_SECRET or forgejo.webhook_secret_file): Forgejo and Gitea deliveries are refused");
        }
        if secrets.forgejo_token.is_none() {
            out.push("Forgejo token (FORGEWARD_FORGEJO_TOKEN or forgejo.token_file): the bot cannot write to Forgejo or Gitea");
        }
        if self.worker.command.is_empty() {
            out.push("the worker (worker.command, FORGEWARD_WORKER_COMMAND): jobs are queued but not run here");
        }
        out
    }
}

/// `FORGEWARD_JOBS_MAX_ATTEMPTS` → `("jobs", "max_attempts")`, for known settings only.
fn setting_of(var: &str) -> Option<(&'static str, &'static str)> {
    let rest = var.strip_prefix("FORGEWARD_")?.to_ascii_lowercase();
    KEYS.iter().find_map(|(section, keys)| {
        let key = rest.strip_prefix(section)?.strip_prefix('_')?;
        keys.iter().find(|k| **k == key).map(|k| (*section, *k))
    })
}

/// The known section a variable names, whatever its key.
fn known_section(var: &str) -> Option<&'static str> {
    let rest = var.strip_prefix("FORGEWARD_")?.to_ascii_lowercase();
    KEYS.iter().map(|(section, _)| *section).find(|section| {
        rest.strip_prefix(section)
            .is_some_and(|r| r.starts_with('_'))
    })
}

/// A variable's text as a TOML value: numbers, booleans and `[…]` arrays as such, anything
/// else as a string (`0.0.0.0:8080`, `postgres://…`).
fn env_value(value: &str) -> toml::Value {
    let v = value.trim();
    let typed = v.starts_with('[') || v == "true" || v == "false" || v.parse::<i64>().is_ok();
    if typed
        && let Ok(mut t) = toml::from_str::<toml::Table>(&format!("v = {v}"))
        && let Some(value) = t.remove("v")
    {
        return value;
    }
    toml::Value::String(value.to_owned())
}

/// A deserialisation error of the whole table has no span; find the key it names in the text.
fn span_of(text: &str, e: &toml::de::Error) -> Option<std::ops::Range<usize>> {
    if let Some(span) = e.span() {
        return Some(span);
    }
    let message = e.message();
    let quoted = message.split('`').nth(1)?;
    let at = text
        .match_indices(quoted)
        .map(|(i, _)| i)
        .find(|&i| text[..i].ends_with(['\n', ' ', '\t']) || i == 0)?;
    Some(at..at + quoted.len())
}

/// Keys that would hold a secret in the file itself.
fn refuse_inline_secrets(table: &toml::Table, file_name: &str) -> Result<(), SettingsError> {
    for (var, file_key) in SECRET_VARS {
        let (section, key) = file_key
            .trim_end_matches("_file")
            .split_once('.')
            .unwrap_or(("", ""));
        let present = table
            .get(section)
            .and_then(|s| s.as_table())
            .is_some_and(|s| s.contains_key(key));
        if present {
            return Err(SettingsError {
                place: file_name.to_owned(),
                message: format!(
                    "{section}.{key}: secrets are never read from the configuration file; set {var} or {file_key}"
                ),
            });
        }
    }
    Ok(())
}

/// A secret's file, whole; the error names the file, never its contents.
pub fn read_secret_file(path: &Path) -> Result<String, SettingsError> {
    std::fs::read_to_string(path).map_err(|e| SettingsError {
        place: path.display().to_string(),
        message: format!("reading a secret: {e}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(text: &str, vars: &[(&str, &str)]) -> Result<(Settings, Secrets), SettingsError> {
        let vars: BTreeMap<String, String> = vars
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        let settings = Settings::parse("forgeward.toml", text, &vars)?;
        let secrets = settings.secrets(&vars)?;
        Ok((settings, secrets))
    }

    #[test]
    fn no_file_no_variables_gives_the_defaults() {
        let (s, secrets) = load("", &[]).expect("defaults");
        assert_eq!(s.server.listen, "127.0.0.1:8080");
        assert_eq!(s.store_url(), "sqlite://forgeward-data/forgeward.db");
        assert_eq!(s.trigger.label, "forgeward");
        assert_eq!(s.jobs.lease.0, Duration::from_secs(300));
        assert_eq!(s.github.redelivery_interval.0, Duration::from_secs(300));
        assert_eq!(s.missing(&secrets).len(), 7);
    }

    #[test]
    fn the_environment_wins_over_the_file() {
        let text = "[server]\nlisten = \"0.0.0.0:80\"\n[jobs]\nconcurrency = 8\n";
        let (s, _) = load(
            text,
            &[
                ("FORGEWARD_SERVER_LISTEN", "127.0.0.1:9000"),
                ("FORGEWARD_JOBS_MAX_ATTEMPTS", "5"),
                ("FORGEWARD_JOBS_LEASE", "90s"),
                ("FORGEWARD_STORE_URL", "postgres://u@db/forgeward"),
                ("FORGEWARD_TEST_SOMETHING", "not a setting of ours"),
            ],
        )
        .expect("valid");
        assert_eq!(s.server.listen, "127.0.0.1:9000");
        assert_eq!(s.jobs.concurrency, 8);
        assert_eq!(s.jobs.max_attempts, 5);
        assert_eq!(s.jobs.lease.0, Duration::from_secs(90));
        assert_eq!(s.store_url(), "postgres://u@db/forgeward");
    }

    #[test]
    fn review_verifies_agents_by_default_and_a_repository_only_narrows_it() {
        let (s, _) = load("", &[]).expect("defaults");
        assert_eq!(
            (s.review.verify, s.review.concurrency),
            (ReviewVerify::Agents, 1)
        );
        let (s, _) = load(
            "[review]\nverify = \"all\"\nagent_logins = [\"our-agent\"]\n",
            &[("FORGEWARD_REVIEW_AGENT_BRANCH_PREFIXES", "[\"ai/\"]")],
        )
        .expect("loads");
        assert_eq!(s.review.verify, ReviewVerify::All);
        let agents = s.review.agents();
        assert_eq!(
            (agents.logins, agents.branch_prefixes),
            (vec!["our-agent".to_owned()], vec!["ai/".to_owned()])
        );
        assert_eq!(
            ReviewVerify::All.narrowed(Some(ReviewVerify::Off)),
            ReviewVerify::Off
        );
        assert_eq!(
            ReviewVerify::Agents.narrowed(Some(ReviewVerify::All)),
            ReviewVerify::Agents
        );
        assert_eq!(ReviewVerify::Off.narrowed(None), ReviewVerify::Off);
        let e = load("[review]\nverify = \"some\"\n", &[]).expect_err("unknown mode");
        assert!(e.to_string().contains("unknown variant `some`"), "{e}");
    }

    #[test]
    fn every_known_key_can_come_from_the_environment() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("secret");
        std::fs::write(&file, "s3cret\n").expect("write");
        let file = file.display().to_string();
        for (section, keys) in KEYS {
            for key in *keys {
                let var = format!("FORGEWARD_{}_{}", section, key).to_ascii_uppercase();
                let value = match (*section, *key) {
                    ("worker", "command" | "env") => "[\"x\"]",
                    ("sandbox" | "environment", "allow") => "[]",
                    ("environment", "env") => "[\"x\"]",
                    ("environment", "max_size") => "1G",
                    ("environment", "keep_for") => "1m",
                    ("worker", "secrets") => "[]",
                    ("review", "verify") => "all",
                    ("review", k) if k.starts_with("agent_") => "[\"x\"]",
                    (_, key) => match key {
                        "app_id" | "concurrency" | "max_attempts" | "pids" | "max_connections"
                        | "queue" => "3",
                        "lease"
                        | "redelivery_interval"
                        | "timeout"
                        | "cpu"
                        | "head_timeout"
                        | "body_timeout"
                        | "idle_timeout"
                        | "job_link_ttl" => "1m",
                        "memory" | "file_size" | "disk" => "1G",
                        "backend" => "docker",
                        "network" => "full",
                        "reply_to_unauthorized" | "enabled" => "false",
                        "tests" => "read-only",
                        "flagged_conclusion" => "action_required",
                        k if k.ends_with("_file") => &file,
                        _ => "x",
                    },
                };
                let mut vars = vec![(var.as_str(), value)];
                if key.contains("ca_file") {
                    // Read only with the allow list.
                    vars.push(("FORGEWARD_SANDBOX_NETWORK", "allowlist"));
                }
                load("", &vars).unwrap_or_else(|e| panic!("{var}: {e}"));
            }
        }
    }

    #[test]
    fn secrets_come_from_the_environment_or_files() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("secret");
        std::fs::write(&file, "new-secret\nold-secret\n").expect("write");
        let text = format!("[github]\nwebhook_secret_file = \"{}\"\n", file.display());
        let (_, secrets) = load(&text, &[("FORGEWARD_GITLAB_WEBHOOK_TOKEN", "a, b")]).expect("ok");
        let exposed = |v: &[Secret]| v.iter().map(|s| s.expose().to_owned()).collect::<Vec<_>>();
        assert_eq!(
            exposed(&secrets.github_webhook),
            ["new-secret", "old-secret"]
        );
        assert_eq!(exposed(&secrets.gitlab_webhook), ["a", "b"]);
        assert!(!format!("{secrets:?}").contains("secret\""), "{secrets:?}");
    }

    #[test]
    fn every_secret_file_key_names_its_setting() {
        let text = "[github]\nwebhook_secret_file = \"/a\"\ntoken_file = \"/b\"\n\
                    [gitlab]\nwebhook_token_file = \"/c\"\ntoken_file = \"/d\"\n\
                    [forgejo]\nwebhook_secret_file = \"/e\"\ntoken_file = \"/f\"\n";
        let (s, _) = Settings::load_without_secrets(None, []).expect("defaults");
        assert!(
            SECRET_VARS
                .iter()
                .all(|(_, key)| s.secret_file(key).is_none())
        );
        let s = Settings::parse("forgeward.toml", text, &BTreeMap::new()).expect("valid");
        let files: Vec<String> = SECRET_VARS
            .iter()
            .map(|(_, key)| {
                s.secret_file(key)
                    .unwrap_or_else(|| panic!("{key}"))
                    .display()
                    .to_string()
            })
            .collect();
        assert_eq!(files, ["/a", "/b", "/c", "/d", "/e", "/f"]);
    }

    #[test]
    fn a_secret_in_the_file_is_refused() {
        let e = load("[github]\nwebhook_secret = \"hunter2\"\n", &[]).expect_err("refused");
        assert!(
            e.to_string().contains("FORGEWARD_GITHUB_WEBHOOK_SECRET"),
            "{e}"
        );
        assert!(!e.to_string().contains("hunter2"), "{e}");
    }

    #[test]
    fn errors_name_the_place() {
        let e = load("[jobs]\nconcurency = 3\n", &[]).expect_err("unknown key");
        assert!(
            e.to_string()
                .starts_with("forgeward.toml:2:1: unknown field `concurency`"),
            "{e}"
        );
        let e = load("[jobs]\nlease = \"soon\"\n", &[]).expect_err("bad duration");
        assert!(e.to_string().contains("invalid duration 'soon'"), "{e}");
        let e = load("", &[("FORGEWARD_JOBS_CONCURENCY", "3")]).expect_err("misspelt");
        assert_eq!(
            e.to_string(),
            "FORGEWARD_JOBS_CONCURENCY: [jobs] has no such setting"
        );
        let e = load("", &[("FORGEWARD_JOBS_CONCURRENCY", "many")]).expect_err("bad value");
        assert!(
            e.to_string().starts_with("FORGEWARD_JOBS_CONCURRENCY: "),
            "{e}"
        );
    }

    #[test]
    fn the_readme_example_is_a_valid_configuration() {
        let readme = include_str!("../../README.md");
        let example = readme
            .split("```toml\n")
            .filter_map(|block| block.split("```").next())
            .find(|block| block.contains("[server]"))
            .expect("the README shows a forgeward.toml");
        let settings = Settings::parse("README.md", example, &BTreeMap::new())
            .unwrap_or_else(|e| panic!("the README's example: {e}"));
        assert_eq!(settings.jobs.lease.0, Duration::from_secs(300));
    }

    #[test]
    fn a_flagged_check_run_concludes_failure_unless_told_action_required() {
        let (s, _) = load("", &[]).expect("defaults");
        assert_eq!(s.github.flagged_conclusion, FlaggedConclusion::Failure);
        let (s, _) =
            load("[github]\nflagged_conclusion = \"action_required\"\n", &[]).expect("valid");
        assert_eq!(
            s.github.flagged_conclusion,
            FlaggedConclusion::ActionRequired
        );
        let e = load("", &[("FORGEWARD_GITHUB_FLAGGED_CONCLUSION", "neutral")])
            .expect_err("not a conclusion for flags");
        assert!(
            e.to_string()
                .starts_with("FORGEWARD_GITHUB_FLAGGED_CONCLUSION: unknown variant `neutral`"),
            "{e}"
        );
    }

    #[test]
    fn an_app_id_without_its_key_is_reported_missing() {
        let (s, secrets) = load(
            "[github]\napp_id = 12345\nredelivery_interval = \"0s\"\n",
            &[],
        )
        .expect("valid");
        assert_eq!(s.github.redelivery_interval.0, Duration::ZERO);
        assert!(
            s.missing(&secrets)
                .iter()
                .any(|m| m.starts_with("GitHub App private key (github.private_key_file)")),
            "{:?}",
            s.missing(&secrets)
        );
    }
}
