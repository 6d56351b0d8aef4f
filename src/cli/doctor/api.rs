//! The forge API check, for each forge whose credentials are complete: GitHub as an App — its
//! key signs a JWT that `GET /app` accepts, and the App has the permissions and events of
//! [`manifest`] and is installed somewhere; GitHub with a token — `GET /user` accepts it (and a
//! classic token has the `repo` scope); GitLab — the token reaches `/api/v4/user`; Forgejo —
//! the token reaches `/api/v1/user`. Each call is one try (no retries, no waiting out a rate
//! limit) within [`NETWORK_TIMEOUT`], through the bot's own clients, so what they send is what
//! the bot sends. Nothing is written.

use std::future::Future;

use forgeward::config::server::Settings;
use forgeward::forge::forgejo::{self, ForgejoConfig};
use forgeward::forge::github::app::{AboutError, AppAbout, AppClient, GithubApp};
use forgeward::forge::github::permissions::{self, Shortfall};
use forgeward::forge::github::{self, GithubAuth, GithubConfig};
use forgeward::forge::gitlab::{self, GitlabConfig};
use forgeward::forge::http::{Retry, RetryPolicy};
use forgeward::forge::webhook::Secret;
use forgeward::forge::{Forge, ForgeErrorKind};

use super::{Context, Credentials, Line, NETWORK_TIMEOUT, Pending, forge_name};

pub(super) fn check(cx: &mut Context) -> Pending<'_> {
    Box::pin(async move {
        let settings = match cx.settings_or_skip("forge API") {
            Ok(settings) => settings.clone(),
            Err(skipped) => return skipped,
        };
        let mut lines = Vec::new();
        for setup in cx.forges.clone() {
            if !setup.configured {
                continue;
            }
            let subject = format!("{} API", forge_name(setup.forge));
            let Some(credentials) = setup.credentials else {
                lines.push(Line::neutral(
                    subject,
                    "not checked: its credentials are missing (see above)",
                ));
                continue;
            };
            let (found, login) = match (setup.forge, credentials) {
                (Forge::GitHub, Credentials::GithubApp { id, key }) => {
                    (github_app(&settings, id, &key).await, None)
                }
                (forge, Credentials::Token(token)) => token_user(&settings, forge, token).await,
                (_, Credentials::GithubApp { .. }) => continue,
            };
            if let Some(login) = login {
                cx.logins.insert(setup.forge, login);
            }
            lines.extend(found);
        }
        if lines.is_empty() {
            lines.push(Line::neutral(
                "forge API",
                "not checked: no forge is configured",
            ));
        }
        lines
    })
}

/// `call` within [`NETWORK_TIMEOUT`], or the line saying it did not answer.
async fn within<T>(
    subject: &str,
    api: &str,
    setting: &str,
    call: impl Future<Output = T>,
) -> Result<T, Box<Line>> {
    tokio::time::timeout(NETWORK_TIMEOUT, call)
        .await
        .map_err(|_| {
            Box::new(Line::fail(
                subject,
                format!(
                    "no answer from {api} within {} s",
                    NETWORK_TIMEOUT.as_secs()
                ),
                unreachable_fix(setting, api),
            ))
        })
}

fn unreachable_fix(setting: &str, api: &str) -> String {
    format!("check {setting} and that this machine reaches {api} (DNS, firewall, an HTTPS proxy)")
}

/// One try, no waits: the doctor reports a rate limit rather than sitting it out.
fn once() -> Retry {
    Retry::new(RetryPolicy::once())
}

async fn github_app(settings: &Settings, id: u64, key: &std::path::Path) -> Vec<Line> {
    const SUBJECT: &str = "GitHub App";
    let api = &settings.github.api_url;
    let setting = "github.api_url (FORGEWARD_GITHUB_API_URL)";
    let client = match GithubApp::load(id, key).and_then(|app| AppClient::new(api, app)) {
        Ok(client) => client,
        Err(e) => {
            return vec![Line::fail(
                SUBJECT,
                e.to_string(),
                format!(
                    "set {setting} to GitHub's API (https://api.github.com, or GitHub Enterprise Server's https://HOST/api/v3)"
                ),
            )];
        }
    };
    let about = match within(SUBJECT, api, setting, client.about()).await {
        Ok(about) => about,
        Err(line) => return vec![*line],
    };
    let about = match about {
        Ok(about) => about,
        Err(AboutError::Refused {
            path,
            status,
            message,
        }) if path == "/app" && (status == 401 || status == 404) => {
            return vec![Line::fail(
                SUBJECT,
                format!("GET /app refused the App's JWT (HTTP {status}: {message})"),
                format!(
                    "github.app_id ({id}) must be the App's \"App ID\" and {} a private key \
                     generated for that App (its settings page, \"Private keys\"); the clock of \
                     this machine must be right within a minute",
                    key.display()
                ),
            )];
        }
        Err(AboutError::Request(e)) => {
            return vec![Line::fail(
                SUBJECT,
                e.to_string(),
                unreachable_fix(setting, api),
            )];
        }
        Err(e) => {
            return vec![Line::fail(
                SUBJECT,
                e.to_string(),
                format!("check {setting}: it must be GitHub's API"),
            )];
        }
    };
    let named = about.slug.clone().unwrap_or_else(|| about.name.clone());
    let mut lines = vec![if about.installed {
        let on = match about.installations {
            Some(1) => "installed on 1 account".to_owned(),
            Some(n) => format!("installed on {n} accounts"),
            None => "installed".to_owned(),
        };
        Line::pass(
            SUBJECT,
            format!("{named} (App {id}): GET /app accepts its JWT; {on}"),
        )
    } else {
        Line::fail(
            SUBJECT,
            format!(
                "{named} (App {id}): GET /app accepts its JWT, but the App is installed nowhere, \
                 so no repository sends it a webhook"
            ),
            format!(
                "install it on the repositories the bot serves: {}/installations/new",
                about.html_url.trim_end_matches('/')
            ),
        )
    }];
    lines.push(permissions_line(&about, settings));
    lines
}

fn permissions_line(about: &AppAbout, settings: &Settings) -> Line {
    const SUBJECT: &str = "GitHub App permissions";
    let lacking: Shortfall = permissions::shortfall(&about.permissions, &about.events);
    if lacking.is_empty() {
        let needs: Vec<String> = permissions::app_permissions()
            .into_iter()
            .map(|(name, access)| format!("{name}: {}", access.as_str()))
            .collect();
        let events: Vec<&str> = permissions::EVENTS.iter().map(|(name, _)| *name).collect();
        return Line::pass(
            SUBJECT,
            format!("has {}; receives {}", needs.join(", "), events.join(", ")),
        );
    }
    let mut missing: Vec<String> = lacking
        .permissions
        .iter()
        .map(|(name, access, has)| {
            let has = has
                .as_deref()
                .map_or_else(|| "none".to_owned(), |h| h.to_owned());
            format!("{name}: {} (has {has})", access.as_str())
        })
        .collect();
    missing.extend(
        lacking
            .events
            .iter()
            .map(|(name, why)| format!("the {name} event (for {why})")),
    );
    let settings_page = match (&about.slug, &about.owner) {
        (Some(slug), Some(owner)) if about.owner_is_organization => format!(
            "{}/organizations/{owner}/settings/apps/{slug}/permissions",
            settings.github.web_url.trim_end_matches('/')
        ),
        (Some(slug), _) => format!(
            "{}/settings/apps/{slug}/permissions",
            settings.github.web_url.trim_end_matches('/')
        ),
        _ => "the App's settings, Permissions & events".to_owned(),
    };
    Line::fail(
        SUBJECT,
        format!("lacks {}", missing.join("; ")),
        format!(
            "give them on {settings_page} (repository permissions, and subscribe to the events), \
             then accept the new permissions on each installation"
        ),
    )
}

/// A token's user on GitHub, GitLab or Forgejo; the lines, and the login when it is known.
async fn token_user(
    settings: &Settings,
    forge: Forge,
    token: Secret,
) -> (Vec<Line>, Option<String>) {
    let name = forge_name(forge);
    let subject = format!("{name} API");
    let (api, setting, token_setting, call) = match forge {
        Forge::GitHub => (
            settings.github.api_url.clone(),
            "github.api_url (FORGEWARD_GITHUB_API_URL)",
            "FORGEWARD_GITHUB_TOKEN or github.token_file",
            "GET /user",
        ),
        Forge::GitLab => (
            format!("{}/api/v4", settings.gitlab.url.trim_end_matches('/')),
            "gitlab.url (FORGEWARD_GITLAB_URL)",
            "FORGEWARD_GITLAB_TOKEN or gitlab.token_file",
            "GET /api/v4/user",
        ),
        Forge::Forgejo => (
            format!("{}/api/v1", settings.forgejo.url.trim_end_matches('/')),
            "forgejo.url (FORGEWARD_FORGEJO_URL)",
            "FORGEWARD_FORGEJO_TOKEN or forgejo.token_file",
            "GET /api/v1/user",
        ),
    };
    let asked = match forge {
        Forge::GitHub => github_user(settings, token),
        Forge::GitLab => gitlab_user(settings, token),
        Forge::Forgejo => forgejo_user(settings, token),
    };
    let answer = match asked {
        Ok(call_made) => within(&subject, &api, setting, call_made).await,
        Err(reason) => {
            return (
                vec![Line::fail(
                    &subject,
                    reason,
                    format!("set {setting} to the forge's address (https://…)"),
                )],
                None,
            );
        }
    };
    let answer = match answer {
        Ok(answer) => answer,
        Err(line) => return (vec![*line], None),
    };
    match answer {
        Ok((login, scopes)) => {
            if let Some(scopes) = scopes.filter(|s| {
                !s.iter()
                    .any(|scope| scope == "repo" || scope == "public_repo")
            }) {
                let shown = if scopes.is_empty() {
                    "none".to_owned()
                } else {
                    scopes.join(", ")
                };
                return (
                    vec![Line::fail(
                        &subject,
                        format!(
                            "{call} accepts the token ({login}), but it is a classic token without \
                             the repo scope (its scopes: {shown})"
                        ),
                        format!(
                            "give the token the repo scope (or public_repo for public \
                             repositories only), or set {token_setting} to a fine-grained token"
                        ),
                    )],
                    Some(login),
                );
            }
            (
                vec![Line::pass(
                    &subject,
                    format!("{call} accepts the token: it is {login}'s"),
                )],
                Some(login),
            )
        }
        Err(ForgeErrorKind::Forbidden(message))
            if forge == Forge::Forgejo && message.contains("scope") =>
        {
            (
                vec![Line::pass(
                    &subject,
                    format!(
                        "{call} knows the token and refuses it only for a scope the bot does not \
                         need ({message})"
                    ),
                )],
                None,
            )
        }
        Err(ForgeErrorKind::Unauthorized) => (
            vec![Line::fail(
                &subject,
                format!("{call} refuses the token (401): {name} does not accept it"),
                format!(
                    "set {token_setting} to a valid token of the bot's account (not expired, \
                     not revoked{})",
                    match forge {
                        Forge::GitLab => ", with the api scope",
                        Forge::Forgejo => ", with the repository and issue scopes",
                        Forge::GitHub => "",
                    }
                ),
            )],
            None,
        ),
        Err(ForgeErrorKind::Forbidden(message)) => (
            vec![Line::fail(
                &subject,
                format!("{call} knows the token but refuses it: {message}"),
                format!(
                    "give the token of {token_setting} the scopes the bot needs{}",
                    match forge {
                        Forge::GitLab => " (api)",
                        _ => "",
                    }
                ),
            )],
            None,
        ),
        Err(ForgeErrorKind::Network(message)) => (
            vec![Line::fail(
                &subject,
                format!("cannot reach {api}: {message}"),
                unreachable_fix(setting, &api),
            )],
            None,
        ),
        Err(ForgeErrorKind::NotFound) => (
            vec![Line::fail(
                &subject,
                format!("{api} has no {call}: it is not {name}'s API"),
                format!("set {setting} to the forge's address"),
            )],
            None,
        ),
        Err(other) => (
            vec![Line::fail(
                &subject,
                format!("{call}: {other}"),
                format!("check {setting} and {token_setting}"),
            )],
            None,
        ),
    }
}

/// A token's login and, on GitHub, a classic token's scopes.
type UserAnswer = Result<(String, Option<Vec<String>>), ForgeErrorKind>;

/// Each forge's call, built (the client needs a valid URL and token) but not yet sent.
type UserCall = std::pin::Pin<Box<dyn Future<Output = UserAnswer> + Send>>;

fn github_user(settings: &Settings, token: Secret) -> Result<UserCall, String> {
    let github = &settings.github;
    let config = GithubConfig {
        api_url: github.api_url.clone(),
        web_url: github.web_url.clone(),
        git_url: github
            .git_url
            .clone()
            .unwrap_or_else(|| github.web_url.clone()),
        auth: GithubAuth::Token(token),
        flagged_conclusion: github.flagged_conclusion,
    };
    let client = github::Client::with_retry(config, once()).map_err(|e| e.to_string())?;
    Ok(Box::pin(async move {
        let user = client.token_user().await?;
        Ok((user.login, user.scopes))
    }))
}

fn gitlab_user(settings: &Settings, token: Secret) -> Result<UserCall, String> {
    let gitlab = &settings.gitlab;
    let config = GitlabConfig {
        url: gitlab.url.clone(),
        git_url: gitlab.git_url.clone().unwrap_or_else(|| gitlab.url.clone()),
        token,
    };
    let client = gitlab::Client::with_retry(config, once())?;
    Ok(Box::pin(
        async move { Ok((client.token_user().await?, None)) },
    ))
}

fn forgejo_user(settings: &Settings, token: Secret) -> Result<UserCall, String> {
    let forgejo = &settings.forgejo;
    let config = ForgejoConfig {
        url: forgejo.url.clone(),
        git_url: forgejo
            .git_url
            .clone()
            .unwrap_or_else(|| forgejo.url.clone()),
        token,
    };
    let client = forgejo::Client::with_retry(config, once())?;
    Ok(Box::pin(
        async move { Ok((client.token_user().await?, None)) },
    ))
}
