//! The first two checks: the configuration parses (the file and the `FORGEWARD_<SECTION>_<KEY>`
//! variables, with the error `serve` would give, line and column included), and each forge
//! the operator configured has every secret it needs, read the way `serve` reads them — the
//! variable, else the `*_file` — without ever showing one.

use std::path::Path;

use forgeward::config::server::{
    ForgejoSection, GithubSection, GitlabSection, SECRET_VARS, Settings, SettingsError,
    read_secret_file,
};
use forgeward::forge::Forge;
use forgeward::forge::github::app::{AppError, GithubApp};
use forgeward::forge::webhook::Secret;

use super::{Context, Credentials, ForgeSetup, Line, Pending, forge_name};

pub(super) fn configuration(cx: &mut Context) -> Pending<'_> {
    Box::pin(async move {
        let mut vars = Vec::new();
        let mut lines = Vec::new();
        for (key, value) in std::env::vars_os() {
            let Some(key) = key.to_str().filter(|k| k.starts_with("FORGEWARD_")) else {
                continue;
            };
            match value.into_string() {
                Ok(value) => vars.push((key.to_owned(), value)),
                Err(_) => lines.push(Line::fail(
                    "configuration",
                    format!("{key} is not valid UTF-8, and `serve` cannot read it"),
                    format!("set {key} again, as UTF-8 text"),
                )),
            }
        }
        match Settings::load_without_secrets(cx.config.as_deref(), vars) {
            Ok((settings, vars)) => {
                let source = match &cx.config {
                    Some(path) => format!(
                        "{} parses, with the FORGEWARD_ variables over it",
                        path.display()
                    ),
                    None => "no file (--config not given): the defaults, with the FORGEWARD_ \
                             variables over them"
                        .to_owned(),
                };
                lines.push(Line::pass("configuration", source));
                lines.push(worker_line(&settings));
                cx.settings = Some(settings);
                cx.vars = vars;
            }
            Err(e) => lines.push(Line::fail("configuration", e.to_string(), fix_for(&e))),
        }
        lines
    })
}

/// What to do about a configuration that cannot be used, by where the error is.
fn fix_for(e: &SettingsError) -> String {
    if e.place.starts_with("FORGEWARD_") {
        return format!(
            "correct or unset the variable {} (FORGEWARD_<SECTION>_<KEY>, with a value as the \
             key takes in the file)",
            e.place
        );
    }
    if e.message
        .contains("secrets are never read from the configuration file")
    {
        return format!(
            "remove that key from {}: a secret comes from its variable or its *_file only",
            e.place
        );
    }
    if let Some((file, line)) = file_line(&e.place) {
        return format!(
            "correct line {line} of {file}; every key is optional (the README's forgeward.toml \
             lists them all)"
        );
    }
    if e.place == "environment" {
        return "correct the FORGEWARD_ variables the message names".to_owned();
    }
    format!(
        "make {} readable by this user (it is what --config names), or leave --config out to \
         run on the defaults and the environment",
        e.place
    )
}

/// `forgeward.toml:3:7` → (`forgeward.toml`, 3).
fn file_line(place: &str) -> Option<(&str, u32)> {
    let (rest, column) = place.rsplit_once(':')?;
    let (file, line) = rest.rsplit_once(':')?;
    column.parse::<u32>().ok()?;
    Some((file, line.parse().ok()?))
}

fn worker_line(settings: &Settings) -> Line {
    let worker = &settings.worker;
    if worker.command.is_empty() {
        return Line::neutral(
            "worker",
            "worker.command is not set: `serve` here receives and queues jobs and runs none (as \
             it should when `forgeward worker` machines run them; otherwise set worker.command \
             or FORGEWARD_WORKER_COMMAND)",
        );
    }
    // The command's arguments are not shown: an operator may have put a key among them.
    let network = match settings.sandbox.network {
        forgeward::config::pipeline::Network::None => "no network".to_owned(),
        forgeward::config::pipeline::Network::Full => "the host's network".to_owned(),
        forgeward::config::pipeline::Network::Allowlist => format!(
            "the egress gateway, {} allow entries and {} secret(s) by placeholder",
            settings.sandbox.allow.len(),
            worker.secrets.len()
        ),
    };
    Line::pass(
        "worker",
        format!(
            "{}, run in the {} sandbox with {network}",
            worker.display_name(),
            settings.sandbox.backend.as_str()
        ),
    )
}

/// The egress gateway's own inputs, as a job would read them: each `[[worker.secrets]]` value
/// from the bot's environment (never shown), and `sandbox.upstream_ca_file`.
fn egress_lines(cx: &mut Context, settings: &Settings) -> Vec<Line> {
    let mut lines = Vec::new();
    for rule in &settings.worker.secrets {
        let subject = format!("worker secret {}", rule.env);
        match std::env::var(&rule.env) {
            Ok(value) => {
                let secret = forgeward::egress::Secret::new(rule.clone(), value.clone());
                cx.secrets.push(value);
                match secret.value_problem() {
                    Some(problem) => lines.push(Line::fail(
                        subject,
                        problem,
                        format!("set {} to the value alone, on one line", rule.env),
                    )),
                    None => lines.push(Line::pass(
                        subject,
                        format!(
                            "set; the worker holds a placeholder, and the gateway sends the value to {} only ({})",
                            rule.hosts.join(", "),
                            rule.injection
                        ),
                    )),
                }
            }
            Err(_) => lines.push(Line::fail(
                subject,
                format!("{} is not set in the bot's environment: every job would fail", rule.env),
                format!(
                    "export {} for the bot's process (systemd: an Environment= or EnvironmentFile= line of the unit)",
                    rule.env
                ),
            )),
        }
    }
    if let Some(path) = &settings.sandbox.upstream_ca_file {
        lines.push(match forgeward::jobs::egress::read_roots(path) {
            Ok((certs, _)) => Line::pass(
                "sandbox.upstream_ca_file",
                format!("{}: {} certificate(s)", path.display(), certs.len()),
            ),
            Err(e) => Line::fail(
                "sandbox.upstream_ca_file",
                e.to_string(),
                "point it at a readable PEM file of CA certificates, or remove it",
            ),
        });
    }
    lines
}

/// How one secret stands.
enum Found {
    /// Its values (one, or several while a webhook secret is rotated), and where from.
    Present(Vec<Secret>, String),
    Missing,
    /// The variable or file is there, but says nothing.
    Empty(String),
    /// The file cannot be read.
    Unreadable(String),
}

/// Reads the secret `var` (else its file key's file) as `serve` does; `many` splits a webhook
/// secret's values (commas in the variable, lines in the file).
fn read(cx: &Context, settings: &Settings, var: &str, many: bool) -> Found {
    let file_key = SECRET_VARS
        .iter()
        .find(|(v, _)| *v == var)
        .map_or("", |(_, key)| *key);
    let (raw, from) = match (cx.vars.get(var), settings.secret_file(file_key)) {
        (Some(value), _) => (value.clone(), var.to_owned()),
        (None, Some(path)) => match read_secret_file(path) {
            Ok(text) => (text, format!("{file_key} {}", path.display())),
            Err(e) => return Found::Unreadable(e.to_string()),
        },
        (None, None) => return Found::Missing,
    };
    let values: Vec<Secret> = if many {
        raw.split([',', '\n'])
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|s| Secret::new(s.to_owned()))
            .collect()
    } else {
        Some(raw.trim())
            .filter(|s| !s.is_empty())
            .map(|s| Secret::new(s.to_owned()))
            .into_iter()
            .collect()
    };
    if values.is_empty() {
        Found::Empty(from)
    } else {
        Found::Present(values, from)
    }
}

/// Whether the operator set anything of `forge`: a `FORGEWARD_<FORGE>_…` variable (a secret
/// or a setting), or its section in the file differs from the defaults.
fn configured(forge: Forge, settings: &Settings, cx: &Context) -> bool {
    let prefix = format!("FORGEWARD_{}_", forge.as_str().to_ascii_uppercase());
    if cx.vars.keys().any(|k| k.starts_with(&prefix)) {
        return true;
    }
    match forge {
        Forge::GitHub => {
            let (s, d) = (&settings.github, GithubSection::default());
            s.api_url != d.api_url
                || s.web_url != d.web_url
                || s.git_url.is_some()
                || s.app_id != 0
                || s.private_key_file.is_some()
                || s.webhook_secret_file.is_some()
                || s.token_file.is_some()
                || s.redelivery_interval != d.redelivery_interval
        }
        Forge::GitLab => {
            let (s, d) = (&settings.gitlab, GitlabSection::default());
            s.url != d.url
                || s.git_url.is_some()
                || s.webhook_token_file.is_some()
                || s.token_file.is_some()
        }
        Forge::Forgejo => {
            let (s, d) = (&settings.forgejo, ForgejoSection::default());
            s.url != d.url
                || s.git_url.is_some()
                || s.webhook_secret_file.is_some()
                || s.token_file.is_some()
        }
    }
}

/// The variables and file keys of a forge's two secrets: its webhook's, and its token's.
fn secret_names(forge: Forge) -> [(&'static str, &'static str); 2] {
    let pick = |var: &str| {
        SECRET_VARS
            .iter()
            .copied()
            .find(|(v, _)| *v == var)
            .unwrap_or(("", ""))
    };
    match forge {
        Forge::GitHub => [
            pick("FORGEWARD_GITHUB_WEBHOOK_SECRET"),
            pick("FORGEWARD_GITHUB_TOKEN"),
        ],
        Forge::GitLab => [
            pick("FORGEWARD_GITLAB_WEBHOOK_TOKEN"),
            pick("FORGEWARD_GITLAB_TOKEN"),
        ],
        Forge::Forgejo => [
            pick("FORGEWARD_FORGEJO_WEBHOOK_SECRET"),
            pick("FORGEWARD_FORGEJO_TOKEN"),
        ],
    }
}

pub(super) fn secrets(cx: &mut Context) -> Pending<'_> {
    Box::pin(async move {
        let settings = match cx.settings_or_skip("secrets") {
            Ok(settings) => settings.clone(),
            Err(skipped) => return skipped,
        };
        let mut lines = Vec::new();
        for forge in [Forge::GitHub, Forge::GitLab, Forge::Forgejo] {
            let name = forge_name(forge);
            if !configured(forge, &settings, cx) {
                let section = forge.as_str();
                lines.push(Line::neutral(
                    name,
                    format!(
                        "not configured (nothing under [{section}] nor any FORGEWARD_{}_ variable)",
                        section.to_ascii_uppercase()
                    ),
                ));
                cx.forges.push(ForgeSetup {
                    forge,
                    configured: false,
                    credentials: None,
                });
                continue;
            }
            let (found, credentials) = forge_secrets(cx, &settings, forge);
            lines.extend(found);
            cx.forges.push(ForgeSetup {
                forge,
                configured: true,
                credentials,
            });
        }
        lines.extend(egress_lines(cx, &settings));
        if cx.forges.iter().all(|f| !f.configured) {
            lines.push(Line::fail(
                "forges",
                "none is configured: the bot has nothing to serve",
                "configure at least one: FORGEWARD_GITHUB_WEBHOOK_SECRET with FORGEWARD_GITHUB_TOKEN \
                 (or github.app_id with github.private_key_file), FORGEWARD_GITLAB_WEBHOOK_TOKEN \
                 with FORGEWARD_GITLAB_TOKEN, or FORGEWARD_FORGEJO_WEBHOOK_SECRET with \
                 FORGEWARD_FORGEJO_TOKEN (each also as a *_file in its section)",
            ));
        }
        lines
    })
}

/// One configured forge's secrets: a line for all of them when they are there, a line for each
/// that is not; the credentials when they are complete.
fn forge_secrets(
    cx: &mut Context,
    settings: &Settings,
    forge: Forge,
) -> (Vec<Line>, Option<Credentials>) {
    let name = forge_name(forge);
    let [(webhook_var, webhook_file), (token_var, token_file)] = secret_names(forge);
    let mut lines = Vec::new();
    let mut found = Vec::new();

    let what = if forge == Forge::GitLab {
        "webhook token"
    } else {
        "webhook secret"
    };
    let fix = format!(
        "set {webhook_var}, or {webhook_file} to a file holding it: the secret the {name} \
         webhook is given (several, comma-separated or one a line, while rotating)"
    );
    match read(cx, settings, webhook_var, true) {
        Found::Present(values, from) => {
            let count = values.len();
            cx.secrets
                .extend(values.iter().map(|s| s.expose().to_owned()));
            found.push(if count > 1 {
                format!("{what} ({count}, while rotating; {from})")
            } else {
                format!("{what} ({from})")
            });
        }
        Found::Missing => lines.push(Line::fail(
            format!("{name} {what}"),
            format!("not set: every {name} delivery is refused"),
            fix,
        )),
        Found::Empty(from) => lines.push(Line::fail(
            format!("{name} {what}"),
            format!("{from} is empty: every {name} delivery is refused"),
            fix,
        )),
        Found::Unreadable(reason) => lines.push(Line::fail(
            format!("{name} {what}"),
            format!("{reason}: `serve` does not start"),
            fix,
        )),
    }

    let app = (forge == Forge::GitHub)
        .then(|| github_app(settings))
        .flatten();
    let token = read(cx, settings, token_var, false);
    let token_fix = match forge {
        Forge::GitHub => format!(
            "set {token_var}, or {token_file} to a file holding it (a fine-grained token with \
             contents, issues, pull requests and commit statuses read and write, or a classic one \
             with the repo scope); or, for a GitHub App, github.app_id with github.private_key_file"
        ),
        Forge::GitLab => format!(
            "set {token_var}, or {token_file} to a file holding it: an access token (personal, \
             group or project) with the api scope"
        ),
        Forge::Forgejo => format!(
            "set {token_var}, or {token_file} to a file holding it: an access token with the \
             repository and issue scopes, with write"
        ),
    };
    let credentials = match app {
        Some(Ok((id, key))) => {
            let ignored = matches!(token, Found::Present(..));
            if let Found::Present(values, _) = &token {
                cx.secrets
                    .extend(values.iter().map(|s| s.expose().to_owned()));
            }
            found.push(format!(
                "App {id}'s private key ({}){}",
                key.display(),
                if ignored {
                    "; the token is not used while the App is configured"
                } else {
                    ""
                }
            ));
            Some(Credentials::GithubApp { id, key })
        }
        Some(Err(line)) => {
            lines.push(*line);
            None
        }
        None => match token {
            Found::Present(mut values, from) => {
                cx.secrets
                    .extend(values.iter().map(|s| s.expose().to_owned()));
                found.push(format!("token ({from})"));
                values.pop().map(Credentials::Token)
            }
            Found::Missing => {
                lines.push(Line::fail(
                    format!("{name} credentials"),
                    format!("no token: the bot cannot act on {name}"),
                    token_fix,
                ));
                None
            }
            Found::Empty(from) => {
                lines.push(Line::fail(
                    format!("{name} credentials"),
                    format!("{from} is empty: the bot cannot act on {name}"),
                    token_fix,
                ));
                None
            }
            Found::Unreadable(reason) => {
                lines.push(Line::fail(
                    format!("{name} credentials"),
                    format!("{reason}: `serve` does not start"),
                    token_fix,
                ));
                None
            }
        },
    };
    if lines.is_empty() {
        lines.push(Line::pass(format!("{name} secrets"), found.join("; ")));
    }
    (lines, credentials)
}

/// The GitHub App the settings name, when they name one: its id and key file, checked to load
/// and sign; or the line saying what is wrong. None when no App is configured.
#[allow(clippy::type_complexity)] // One caller; the pair is what it destructures.
fn github_app(settings: &Settings) -> Option<Result<(u64, std::path::PathBuf), Box<Line>>> {
    let github = &settings.github;
    let subject = "GitHub App key";
    match (github.app_id, &github.private_key_file) {
        (0, None) => None,
        (0, Some(key)) => Some(Err(Box::new(Line::fail(
            subject,
            format!(
                "github.private_key_file is set ({}) but github.app_id is not",
                key.display()
            ),
            "set github.app_id (FORGEWARD_GITHUB_APP_ID) to the App's id, shown as \"App ID\" on \
             its settings page; or remove github.private_key_file to use a token",
        )))),
        (id, None) => Some(Err(Box::new(Line::fail(
            subject,
            format!("github.app_id is {id} but github.private_key_file is not set"),
            "set github.private_key_file (FORGEWARD_GITHUB_PRIVATE_KEY_FILE) to the .pem file \
             generated under \"Private keys\" on the App's settings page",
        )))),
        (id, Some(key)) => Some(match GithubApp::load(id, key) {
            Ok(_) => Ok((id, key.clone())),
            Err(e) => Err(Box::new(Line::fail(
                subject,
                e.to_string(),
                key_fix(&e, key),
            ))),
        }),
    }
}

fn key_fix(e: &AppError, key: &Path) -> String {
    match e {
        AppError::ReadKey { .. } => format!(
            "make {} readable by the bot's user, or point github.private_key_file at the App's \
             .pem file",
            key.display()
        ),
        _ => format!(
            "{} must be the private key GitHub generated for the App (\"Generate a private key\" \
             on its settings page): a PEM file beginning -----BEGIN RSA PRIVATE KEY-----",
            key.display()
        ),
    }
}
