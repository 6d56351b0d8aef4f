//! The GitHub App's identity, and requests made as the App itself.
//!
//! A GitHub App proves who it is with a short-lived JWT (RS256) signed by its private key; GitHub
//! accepts it on the App-level endpoints (`/app/…`): its webhook deliveries, its installations,
//! and the installation tokens that act on repositories. [`GithubApp`] holds the id and the key
//! and makes the JWT; [`AppClient`] sends requests as the App through octocrab's HTTP stack
//! (hyper, rustls on ring), with the JWT it makes itself.
//!
//! Why not octocrab's own App authentication: it writes `iss` as a JSON number, where RFC 7519
//! and GitHub's documentation say a string, and it signs a new JWT for every request. Octocrab
//! is used as the transport; installation tokens belong here when the bot starts writing.
//!
//! Nothing here logs or formats the key or a token: errors are one line, and `Debug` shows the
//! App's id only.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use http::Method;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde::{Deserialize, Serialize};

use super::http::ClientError;
use crate::forge::http::{Answer, Api, Auth, Retry, RetryPolicy};
use crate::text::one_line;

/// How far in the past a JWT says it was issued: GitHub recommends 60 seconds, so that a clock
/// a little ahead of GitHub's does not make the token "issued in the future".
pub const JWT_BACKDATE: Duration = Duration::from_secs(60);

/// How long a JWT is valid from now. GitHub refuses one that expires more than 10 minutes after
/// it is presented; 9 leaves a minute for a clock that runs behind.
pub const JWT_LIFETIME: Duration = Duration::from_secs(9 * 60);

/// A cached JWT is replaced this long before it expires, so no request carries a token that
/// expires while the request is in flight.
const JWT_RENEW_BEFORE: Duration = Duration::from_secs(60);

/// Why the App cannot authenticate or a request could not be made. `Display` is one line and
/// never holds the key or a token.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AppError {
    #[error("cannot read the GitHub App's private key {}: {error}", path.display())]
    ReadKey {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("the GitHub App's private key {} is not an RSA private key in PEM form: {reason}", path.display())]
    BadKey { path: PathBuf, reason: String },
    #[error("cannot sign the GitHub App's JWT: {0}")]
    Sign(String),
    #[error(transparent)]
    Client(#[from] ClientError),
    #[error("{method} {path}: {reason}")]
    Request {
        method: Method,
        path: String,
        reason: String,
    },
}

/// The App as GitHub describes it to itself: who owns it, what it may do, what it hears.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AppAbout {
    /// Its URL name (`forgeward`): the bot writes as `<slug>[bot]`.
    pub slug: Option<String>,
    pub name: String,
    /// Its public page (`https://github.com/apps/<slug>`).
    pub html_url: String,
    /// The user or organization that owns it (none for an enterprise's App).
    pub owner: Option<String>,
    pub owner_is_organization: bool,
    /// Permission name → `read`, `write` or `admin`.
    pub permissions: BTreeMap<String, String>,
    /// The webhook events it is subscribed to.
    pub events: Vec<String>,
    /// How many accounts installed it, when GitHub says (`installations_count`).
    pub installations: Option<u64>,
    /// Whether it is installed anywhere at all.
    pub installed: bool,
}

/// Why [`AppClient::about`] could not say.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AboutError {
    /// The request could not be made (the key, the network); one line.
    #[error(transparent)]
    Request(#[from] AppError),
    /// GitHub answered with a refusal: its status and its message, on one short line.
    #[error("GET {path}: HTTP {status}: {message}")]
    Refused {
        path: &'static str,
        status: u16,
        message: String,
    },
    #[error("GET {path}: unexpected response: {reason}")]
    Decode { path: &'static str, reason: String },
}

/// A GitHub App: its id and its private key.
pub struct GithubApp {
    id: u64,
    key: EncodingKey,
}

impl fmt::Debug for GithubApp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GithubApp")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

/// What the App's JWT claims. Public so that tests (and a fake GitHub) can decode it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Claims {
    /// The App's id, as a string.
    pub iss: String,
    /// Issued at, in seconds since the epoch: [`JWT_BACKDATE`] before the token was made.
    pub iat: u64,
    /// Expires at, in seconds since the epoch: [`JWT_LIFETIME`] after the token was made.
    pub exp: u64,
}

/// A signed JWT. `Debug` does not show it.
#[derive(Clone)]
pub struct AppJwt {
    token: String,
    expires_at: SystemTime,
}

impl AppJwt {
    /// The token, for the one place that needs it: the `Authorization` header.
    pub fn expose(&self) -> &str {
        &self.token
    }

    pub fn expires_at(&self) -> SystemTime {
        self.expires_at
    }
}

impl fmt::Debug for AppJwt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("AppJwt(***)")
    }
}

impl GithubApp {
    /// The App `id` with its private key read from `path`: the PEM file GitHub lets an App's
    /// owner download (PKCS#1 `RSA PRIVATE KEY`; PKCS#8 `PRIVATE KEY` is accepted too).
    pub fn load(id: u64, path: &Path) -> Result<GithubApp, AppError> {
        let pem = std::fs::read(path).map_err(|error| AppError::ReadKey {
            path: path.to_owned(),
            error,
        })?;
        GithubApp::from_pem(id, &pem).map_err(|reason| AppError::BadKey {
            path: path.to_owned(),
            reason,
        })
    }

    /// The App `id` with the private key in `pem`. The error is the parser's or the signer's
    /// reason, without the key's text.
    pub fn from_pem(id: u64, pem: &[u8]) -> Result<GithubApp, String> {
        let key = EncodingKey::from_rsa_pem(pem).map_err(|e| one_line(&e.to_string()))?;
        let app = GithubApp { id, key };
        // The parser takes any RSA PEM, a public key too: only signing shows the key is usable,
        // and that is better found at start than at the first request.
        app.jwt_at(SystemTime::now()).map_err(|e| match e {
            AppError::Sign(reason) => reason,
            other => other.to_string(),
        })?;
        Ok(app)
    }

    pub fn id(&self) -> u64 {
        self.id
    }

    /// A new JWT, valid from [`JWT_BACKDATE`] ago for [`JWT_LIFETIME`].
    pub fn jwt(&self) -> Result<AppJwt, AppError> {
        self.jwt_at(SystemTime::now())
    }

    /// The JWT as made at `now`.
    pub fn jwt_at(&self, now: SystemTime) -> Result<AppJwt, AppError> {
        let seconds = now
            .duration_since(UNIX_EPOCH)
            .map_err(|_| AppError::Sign("the system clock is before 1970".to_owned()))?
            .as_secs();
        let claims = Claims {
            iss: self.id.to_string(),
            iat: seconds.saturating_sub(JWT_BACKDATE.as_secs()),
            exp: seconds.saturating_add(JWT_LIFETIME.as_secs()),
        };
        let token = jsonwebtoken::encode(&Header::new(Algorithm::RS256), &claims, &self.key)
            .map_err(|e| AppError::Sign(one_line(&e.to_string())))?;
        Ok(AppJwt {
            token,
            expires_at: now + JWT_LIFETIME,
        })
    }
}

/// Requests to the GitHub API authenticated as the App, each with a JWT that is reused while it
/// has more than a minute left. Each request is one try, its answer returned whatever its
/// status: the sweep that uses it judges statuses itself and reports a rate limit's wait to its
/// scheduler instead of sleeping on it.
pub struct AppClient {
    api: Api,
    app: GithubApp,
    jwt: Mutex<Option<AppJwt>>,
}

impl fmt::Debug for AppClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AppClient")
            .field("app", &self.app)
            .field("api", &self.api)
            .finish_non_exhaustive()
    }
}

impl AppClient {
    /// A client for the API at `api_url` (`https://api.github.com`, GitHub Enterprise Server's
    /// `https://host/api/v3`, or a test's `http://127.0.0.1:port`). Must be called inside a
    /// tokio runtime: the client's connection pool runs on it.
    pub fn new(api_url: &str, app: GithubApp) -> Result<AppClient, AppError> {
        let api = super::http::api(api_url, Retry::new(RetryPolicy::once()))?;
        Ok(AppClient {
            api,
            app,
            jwt: Mutex::new(None),
        })
    }

    pub fn app(&self) -> &GithubApp {
        &self.app
    }

    /// `GET path` (a path and query, relative to the API's URL).
    pub async fn get(&self, path: &str) -> Result<Answer, AppError> {
        self.send(Method::GET, path).await
    }

    /// `POST path` with no body.
    pub async fn post(&self, path: &str) -> Result<Answer, AppError> {
        self.send(Method::POST, path).await
    }

    /// The App as GitHub sees it (`GET /app`, accepted only with a JWT its key signed), and
    /// whether it is installed anywhere (`installations_count`, else one page of
    /// `GET /app/installations`). For `forgeward doctor`.
    pub async fn about(&self) -> Result<AppAbout, AboutError> {
        const APP: &str = "/app";
        const INSTALLATIONS: &str = "/app/installations";
        let app: super::models::AppJson = self.fetch(APP, APP).await?;
        let installed = match app.installations_count {
            Some(count) => count > 0,
            None => {
                let listed: Vec<serde_json::Value> = self
                    .fetch(INSTALLATIONS, "/app/installations?per_page=1")
                    .await?;
                !listed.is_empty()
            }
        };
        let owner = app.owner.as_ref().and_then(|o| o.login.clone());
        let owner_is_organization = app
            .owner
            .as_ref()
            .is_some_and(|o| o.kind.as_deref() == Some("Organization"));
        Ok(AppAbout {
            slug: app.slug,
            name: app.name,
            html_url: app.html_url,
            owner,
            owner_is_organization,
            permissions: app.permissions,
            events: app.events,
            installations: app.installations_count,
            installed,
        })
    }

    /// `GET path_and_query`, a 2xx decoded as `T`; `path` names the call in errors.
    async fn fetch<T: serde::de::DeserializeOwned>(
        &self,
        path: &'static str,
        path_and_query: &str,
    ) -> Result<T, AboutError> {
        let answer = self.get(path_and_query).await?;
        if !answer.status.is_success() {
            return Err(AboutError::Refused {
                path,
                status: answer.status.as_u16(),
                message: crate::forge::http::error_message(&answer.body),
            });
        }
        crate::forge::http::decode(&answer.body).map_err(|kind| AboutError::Decode {
            path,
            reason: match kind {
                crate::forge::ForgeErrorKind::Decode(reason) => reason,
                other => other.to_string(),
            },
        })
    }

    /// `PATCH path` with `body` as JSON.
    pub async fn patch(&self, path: &str, body: &serde_json::Value) -> Result<Answer, AppError> {
        self.send_json(Method::PATCH, path, Some(body)).await
    }

    /// The path and query of `url`, relative to the API's URL, when it is on the API's host (a
    /// `Link` header's next page, say); None for another host, which must never see the App's
    /// JWT.
    pub fn api_path(&self, url: &str) -> Option<String> {
        self.api.api_path(url)
    }

    async fn send(&self, method: Method, path: &str) -> Result<Answer, AppError> {
        self.send_json(method, path, None).await
    }

    async fn send_json(
        &self,
        method: Method,
        path: &str,
        body: Option<&serde_json::Value>,
    ) -> Result<Answer, AppError> {
        let auth = self.bearer()?;
        self.api
            .send_once(&method, path, &auth, body)
            .await
            .map_err(|reason| AppError::Request {
                method,
                path: path.to_owned(),
                reason,
            })
    }

    /// `Bearer <jwt>`, marked sensitive so that no HTTP layer logs it.
    fn bearer(&self) -> Result<Auth, AppError> {
        let now = SystemTime::now();
        let jwt = {
            let mut cached = self.jwt.lock().unwrap_or_else(PoisonError::into_inner);
            match cached.as_ref() {
                Some(jwt) if jwt.expires_at > now + JWT_RENEW_BEFORE => jwt.clone(),
                _ => {
                    let jwt = self.app.jwt_at(now)?;
                    *cached = Some(jwt.clone());
                    jwt
                }
            }
        };
        Auth::bearer(jwt.expose())
            .ok_or_else(|| AppError::Sign("the JWT is not a valid header value".to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use jsonwebtoken::{DecodingKey, Validation};

    const PRIVATE_KEY: &str = "tests/data/github-app/test-only-private-key.pem";
    const PUBLIC_KEY: &str = "tests/data/github-app/test-only-public-key.pem";

    fn app() -> GithubApp {
        GithubApp::load(12345, Path::new(PRIVATE_KEY)).unwrap_or_else(|e| panic!("{e}"))
    }

    fn decode(token: &str) -> Claims {
        let public = std::fs::read(PUBLIC_KEY).unwrap_or_else(|e| panic!("{PUBLIC_KEY}: {e}"));
        let key = DecodingKey::from_rsa_pem(&public).unwrap_or_else(|e| panic!("{e}"));
        let mut validation = Validation::new(Algorithm::RS256);
        validation.set_issuer(&["12345"]);
        validation.set_required_spec_claims(&["iss", "iat", "exp"]);
        jsonwebtoken::decode::<Claims>(token, &key, &validation)
            .unwrap_or_else(|e| panic!("decoding the JWT: {e}"))
            .claims
    }

    #[test]
    fn the_jwt_is_backdated_a_minute_and_lives_nine() {
        let now = SystemTime::now();
        let jwt = app().jwt_at(now).unwrap_or_else(|e| panic!("{e}"));
        let claims = decode(jwt.expose());
        let seconds = now
            .duration_since(UNIX_EPOCH)
            .expect("after 1970")
            .as_secs();
        assert_eq!(claims.iss, "12345");
        assert_eq!(claims.iat, seconds - 60);
        assert_eq!(claims.exp, seconds + 9 * 60);
        assert!(claims.exp - claims.iat <= 600, "{claims:?}");
        assert_eq!(jwt.expires_at(), now + JWT_LIFETIME);
        assert_eq!(format!("{jwt:?}"), "AppJwt(***)");
    }

    #[test]
    fn debug_shows_the_id_and_not_the_key() {
        let shown = format!("{:?}", app());
        assert_eq!(shown, "GithubApp { id: 12345, .. }");
    }

    #[test]
    fn a_missing_key_file_is_one_line_naming_it() {
        let e = GithubApp::load(1, Path::new("/nonexistent/app.pem")).expect_err("missing");
        let text = e.to_string();
        assert!(
            text.starts_with("cannot read the GitHub App's private key /nonexistent/app.pem: "),
            "{text}"
        );
        assert!(!text.contains('\n'), "{text}");
    }

    #[test]
    fn a_file_that_is_not_a_key_is_refused_without_echoing_it() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("app.pem");
        let text = "-----BEGIN RSA PRIVATE KEY-----\nc3VwZXItc2VjcmV0LWdhcmJhZ2U=\n-----END RSA PRIVATE KEY-----\n";
        std::fs::write(&path, text).expect("write");
        let e = GithubApp::load(1, &path).expect_err("not a key");
        let shown = e.to_string();
        assert!(
            shown.contains("is not an RSA private key in PEM form"),
            "{shown}"
        );
        assert!(!shown.contains("c3VwZXIt"), "{shown}");
        assert!(!shown.contains('\n'), "{shown}");
    }

    #[test]
    fn a_public_key_is_not_a_private_key() {
        let public = std::fs::read(PUBLIC_KEY).expect("public key");
        assert!(GithubApp::from_pem(1, &public).is_err());
    }

    #[tokio::test]
    async fn next_pages_on_another_host_are_not_followed() {
        let client = AppClient::new("https://ghe.example.com/api/v3", app()).expect("client");
        assert_eq!(
            client
                .api_path("https://ghe.example.com/api/v3/app/hook/deliveries?cursor=v1_2")
                .as_deref(),
            Some("/app/hook/deliveries?cursor=v1_2")
        );
        assert_eq!(
            client
                .api_path("/app/hook/deliveries?cursor=v1_2")
                .as_deref(),
            Some("/app/hook/deliveries?cursor=v1_2")
        );
        assert_eq!(
            client.api_path("https://elsewhere.example/app/hook/deliveries?cursor=v1_2"),
            None
        );
    }

    #[tokio::test]
    async fn the_api_url_must_be_absolute() {
        let e = AppClient::new("api.github.com", app()).expect_err("relative");
        assert!(
            e.to_string().contains("expected an absolute http(s) URL"),
            "{e}"
        );
    }
}
