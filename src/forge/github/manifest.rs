//! Creating the bot's GitHub App from a manifest, as GitHub's "App manifest" flow does it: the
//! manifest (the App's name, its webhook, its permissions and events from
//! [`permissions`](super::permissions)), the page on GitHub a browser posts it to, and the
//! conversion of the one-time code GitHub redirects back with into the App's id, private key and
//! webhook secret (`POST /app-manifests/{code}/conversions`, which takes no credentials: the
//! code is one).
//!
//! The code works once and for an hour, so the conversion is tried once: a conversion that
//! failed is started again from the form. Nothing here prints, logs or formats the key or the
//! secret; `Debug` of a [`CreatedApp`] shows its id and name only.

use std::fmt;

use http::Method;
use serde::Deserialize;
use serde_json::{Value, json};

use super::app::{AppClient, AppError, GithubApp};
use super::http::{Retry, RetryPolicy, encode};
use super::permissions::{EVENTS, app_permissions};
use crate::forge::ForgeErrorKind;
use crate::forge::http::decode;
use crate::forge::webhook::Secret;

/// GitHub refuses an App name longer than this.
pub const MAX_NAME_CHARS: usize = 34;

/// The path of the bot's GitHub webhook under its public URL.
pub const WEBHOOK_PATH: &str = "/webhooks/github";

/// What the App is to be.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AppSpec {
    /// The App's name (GitHub's form lets the person change it before creating the App).
    pub name: String,
    /// Where the bot is reachable from GitHub: `https://bot.example.com`.
    pub public_url: String,
    /// Where GitHub sends the browser back with the code.
    pub redirect_url: String,
}

/// The App's manifest: private, its webhook at `{public_url}/webhooks/github`, the permissions
/// and events the bot uses.
pub fn manifest(spec: &AppSpec) -> Value {
    let permissions: serde_json::Map<String, Value> = app_permissions()
        .into_iter()
        .map(|(permission, access)| (permission.to_owned(), json!(access.as_str())))
        .collect();
    let events: Vec<&str> = EVENTS.iter().map(|(event, _)| *event).collect();
    json!({
        "name": spec.name,
        "url": env!("CARGO_PKG_REPOSITORY"),
        "description": "forgeward: works on issues labelled for it in a sandbox, and flags changes that make the tests pass instead of making the code work.",
        "hook_attributes": {
            "url": format!("{}{WEBHOOK_PATH}", spec.public_url.trim_end_matches('/')),
            "active": true,
        },
        "redirect_url": spec.redirect_url,
        "public": false,
        "default_permissions": permissions,
        "default_events": events,
        "request_oauth_on_install": false,
    })
}

/// The page on GitHub that creates an App from a manifest: the person's own
/// (`{web_url}/settings/apps/new`) or an organization's
/// (`{web_url}/organizations/{org}/settings/apps/new`), with `state` for the way back.
pub fn new_app_url(web_url: &str, org: Option<&str>, state: &str) -> String {
    let web_url = web_url.trim_end_matches('/');
    match org {
        Some(org) => format!(
            "{web_url}/organizations/{}/settings/apps/new?state={}",
            encode(org),
            encode(state)
        ),
        None => format!("{web_url}/settings/apps/new?state={}", encode(state)),
    }
}

/// Whether `org` can be a GitHub organization's login: letters, digits and single hyphens
/// inside, at most 39 characters.
pub fn valid_org(org: &str) -> bool {
    !org.is_empty()
        && org.len() <= 39
        && org.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        && !org.starts_with('-')
        && !org.ends_with('-')
        && !org.contains("--")
}

/// The App GitHub made. `Debug` shows neither the key nor the secret.
pub struct CreatedApp {
    pub id: u64,
    pub slug: String,
    pub name: String,
    /// The App's page: `https://github.com/apps/{slug}`.
    pub html_url: String,
    /// The private key, PEM.
    pub pem: Secret,
    pub webhook_secret: Secret,
}

impl fmt::Debug for CreatedApp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CreatedApp")
            .field("id", &self.id)
            .field("slug", &self.slug)
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

#[derive(Deserialize)]
struct ConversionJson {
    id: u64,
    slug: Option<String>,
    name: String,
    html_url: String,
    pem: String,
    webhook_secret: Option<String>,
}

/// Why the App could not be had. `Display` is one line, without the code, the key or a secret.
#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    #[error(
        "GitHub does not know this code: it was used already or is more than an hour old; create the App again from the form"
    )]
    UnknownCode,
    #[error("POST /app-manifests/{{code}}/conversions: {0}")]
    Conversion(ForgeErrorKind),
    #[error("the App has no webhook secret and setting one failed: {0}")]
    Secret(String),
    #[error(transparent)]
    Client(#[from] AppError),
}

/// Exchanges the `code` GitHub redirected back with for the App, at the API at `api_url`.
/// GitHub always makes a webhook secret for an App whose manifest has a webhook; should it send
/// none, the App is given one here (`PATCH /app/hook/config`, as the App itself).
pub async fn convert(api_url: &str, code: &str) -> Result<CreatedApp, ManifestError> {
    let api = super::http::api(api_url, Retry::new(RetryPolicy::once())).map_err(AppError::from)?;
    let path = format!("/app-manifests/{}/conversions", encode(code));
    let answer = match api.send_anonymous(Method::POST, &path, None).await {
        Ok(answer) => answer,
        Err(ForgeErrorKind::NotFound) => return Err(ManifestError::UnknownCode),
        Err(kind) => return Err(ManifestError::Conversion(kind)),
    };
    let made: ConversionJson = decode(&answer.body).map_err(ManifestError::Conversion)?;
    let webhook_secret = match made.webhook_secret.filter(|s| !s.is_empty()) {
        Some(secret) => Secret::new(secret),
        None => set_webhook_secret(api_url, made.id, &made.pem).await?,
    };
    Ok(CreatedApp {
        id: made.id,
        slug: made.slug.unwrap_or_else(|| made.name.to_lowercase()),
        name: made.name,
        html_url: made.html_url,
        pem: Secret::new(made.pem),
        webhook_secret,
    })
}

/// A new random secret, set as the App's webhook secret.
async fn set_webhook_secret(api_url: &str, id: u64, pem: &str) -> Result<Secret, ManifestError> {
    let secret = random_hex(32).map_err(ManifestError::Secret)?;
    let app = GithubApp::from_pem(id, pem.as_bytes()).map_err(ManifestError::Secret)?;
    let client = AppClient::new(api_url, app)?;
    let body = json!({ "secret": secret, "content_type": "json" });
    let answer = client.patch("/app/hook/config", &body).await?;
    if !answer.status.is_success() {
        return Err(ManifestError::Secret(format!(
            "PATCH /app/hook/config answered {}",
            answer.status
        )));
    }
    Ok(Secret::new(secret))
}

/// `bytes` random bytes from the system's generator, as hex.
pub fn random_hex(bytes: usize) -> Result<String, String> {
    let mut buf = vec![0u8; bytes];
    getrandom::getrandom(&mut buf)
        .map_err(|e| format!("the system's random generator failed: {e}"))?;
    Ok(hex::encode(buf))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> AppSpec {
        AppSpec {
            name: "forgeward-acme".to_owned(),
            public_url: "https://bot.acme.dev/".to_owned(),
            redirect_url: "http://127.0.0.1:8123/redirect".to_owned(),
        }
    }

    #[test]
    fn the_manifest_is_a_private_app_with_the_bots_webhook_permissions_and_events() {
        let m = manifest(&spec());
        assert_eq!(m["name"], "forgeward-acme");
        assert_eq!(
            m["hook_attributes"],
            json!({"url": "https://bot.acme.dev/webhooks/github", "active": true})
        );
        assert_eq!(m["redirect_url"], "http://127.0.0.1:8123/redirect");
        assert_eq!(m["public"], false);
        assert_eq!(
            m["default_permissions"],
            json!({"checks": "write", "contents": "write", "issues": "write",
                   "metadata": "read", "pull_requests": "write"})
        );
        assert_eq!(
            m["default_events"],
            json!(["issues", "issue_comment", "pull_request"])
        );
        assert!(m["url"].as_str().is_some_and(|u| u.starts_with("https://")));
    }

    #[test]
    fn the_form_posts_to_the_persons_or_the_organizations_page() {
        assert_eq!(
            new_app_url("https://github.com/", None, "ab12"),
            "https://github.com/settings/apps/new?state=ab12"
        );
        assert_eq!(
            new_app_url("https://ghe.example.com", Some("acme-corp"), "ab12"),
            "https://ghe.example.com/organizations/acme-corp/settings/apps/new?state=ab12"
        );
        assert!(valid_org("acme-corp") && valid_org("a1"));
        for bad in [
            "",
            "-acme",
            "acme-",
            "ac--me",
            "acme/x",
            "acme corp",
            &"a".repeat(40),
        ] {
            assert!(!valid_org(bad), "{bad}");
        }
    }

    #[test]
    fn a_created_app_shows_neither_its_key_nor_its_secret() {
        let app = CreatedApp {
            id: 7,
            slug: "forgeward-acme".to_owned(),
            name: "forgeward-acme".to_owned(),
            html_url: "https://github.com/apps/forgeward-acme".to_owned(),
            pem: Secret::new("-----BEGIN RSA PRIVATE KEY-----".to_owned()),
            webhook_secret: Secret::new("hook-secret".to_owned()),
        };
        let shown = format!("{app:?}");
        assert!(
            !shown.contains("BEGIN") && !shown.contains("hook-secret"),
            "{shown}"
        );
    }

    #[test]
    fn random_hex_is_random_and_hex() {
        let (a, b) = (
            random_hex(32).expect("random"),
            random_hex(32).expect("random"),
        );
        assert_eq!(a.len(), 64);
        assert!(a.bytes().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }
}
