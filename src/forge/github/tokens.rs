//! Installation tokens: what a GitHub App acts on a repository with.
//!
//! The App finds the installation that covers a repository (`GET /repos/{owner}/{repo}/installation`,
//! remembered), and asks for that installation's token (`POST /app/installations/{id}/access_tokens`),
//! both authenticated with the App's JWT. A token lives an hour; it is kept per installation and
//! renewed [`RENEW_BEFORE`] before it expires. Callers that need a token while it is being
//! renewed wait for that one renewal instead of each asking GitHub for another.
//!
//! Tokens never appear in an error, a log line or `Debug` output.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use chrono::{DateTime, Utc};
use http::Method;

use super::app::GithubApp;
use super::http::{Api, Auth};
use crate::forge::api::{ForgeError, ForgeErrorKind, ForgeResult};
use crate::forge::http::{decode, repo_path};
use crate::forge::{Forge, RepoName};

/// A token is renewed this long before GitHub says it expires: a job's push or a review can be
/// minutes after the token was handed out, and must not meet an expired one.
pub const RENEW_BEFORE: Duration = Duration::from_secs(5 * 60);

/// An installation token and when it expires.
#[derive(Clone)]
pub struct InstallationToken {
    token: String,
    expires_at: DateTime<Utc>,
}

impl InstallationToken {
    /// The token, for the one place that needs it: a header or git's credential callback.
    pub fn expose(&self) -> &str {
        &self.token
    }

    pub fn expires_at(&self) -> DateTime<Utc> {
        self.expires_at
    }

    fn fresh_at(&self, now: DateTime<Utc>) -> bool {
        let renew = chrono::Duration::from_std(RENEW_BEFORE).unwrap_or(chrono::Duration::zero());
        self.expires_at - renew > now
    }
}

impl fmt::Debug for InstallationToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InstallationToken")
            .field("token", &"***")
            .field("expires_at", &self.expires_at)
            .finish()
    }
}

/// One installation's token, behind a lock held across its renewal.
type Slot = Arc<tokio::sync::Mutex<Option<InstallationToken>>>;

/// The App's installations and their tokens.
pub struct Installations {
    app: Arc<GithubApp>,
    by_repo: Mutex<HashMap<RepoName, u64>>,
    tokens: Mutex<HashMap<u64, Slot>>,
}

impl fmt::Debug for Installations {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Installations")
            .field("app", &self.app)
            .finish_non_exhaustive()
    }
}

const INSTALLATION_CALL: &str = "GET /repos/{owner}/{repo}/installation";
const TOKEN_CALL: &str = "POST /app/installations/{installation_id}/access_tokens";

impl Installations {
    pub fn new(app: Arc<GithubApp>) -> Installations {
        Installations {
            app,
            by_repo: Mutex::new(HashMap::new()),
            tokens: Mutex::new(HashMap::new()),
        }
    }

    pub fn app(&self) -> &GithubApp {
        &self.app
    }

    /// A token that acts on `repo`, fresh for at least [`RENEW_BEFORE`].
    pub async fn token(&self, api: &Api, repo: &RepoName) -> ForgeResult<InstallationToken> {
        let id = self.installation(api, repo).await?;
        let slot = {
            let mut tokens = self.tokens.lock().unwrap_or_else(PoisonError::into_inner);
            tokens.entry(id).or_default().clone()
        };
        let mut cached = slot.lock().await;
        if let Some(token) = cached.as_ref()
            && token.fresh_at(Utc::now())
        {
            return Ok(token.clone());
        }
        match self.create_token(api, repo, id).await {
            Ok(token) => {
                *cached = Some(token.clone());
                Ok(token)
            }
            Err(e) => {
                // The App may have been uninstalled and installed again under a new id.
                if e.kind == ForgeErrorKind::NotFound {
                    self.by_repo
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .remove(repo);
                }
                Err(e)
            }
        }
    }

    /// The installation that covers `repo`, asked once and remembered.
    async fn installation(&self, api: &Api, repo: &RepoName) -> ForgeResult<u64> {
        let known = self
            .by_repo
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(repo)
            .copied();
        if let Some(id) = known {
            return Ok(id);
        }
        let failed = |kind| ForgeError {
            forge: Forge::GitHub,
            call: INSTALLATION_CALL.to_owned(),
            repo: repo.clone(),
            kind,
        };
        let path = format!("/repos/{}/installation", repo_path(repo));
        let answer = api
            .send(Method::GET, &path, &self.jwt_header(repo)?, None)
            .await
            .map_err(|kind| match kind {
                ForgeErrorKind::NotFound => failed(ForgeErrorKind::NotConfigured(format!(
                    "the GitHub App {} is not installed on {repo}",
                    self.app.id()
                ))),
                kind => failed(kind),
            })?;
        #[derive(serde::Deserialize)]
        struct Installation {
            id: u64,
        }
        let installation: Installation = decode(&answer.body).map_err(failed)?;
        self.by_repo
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(repo.clone(), installation.id);
        Ok(installation.id)
    }

    async fn create_token(
        &self,
        api: &Api,
        repo: &RepoName,
        id: u64,
    ) -> ForgeResult<InstallationToken> {
        let failed = |kind| ForgeError {
            forge: Forge::GitHub,
            call: TOKEN_CALL.to_owned(),
            repo: repo.clone(),
            kind,
        };
        let path = format!("/app/installations/{id}/access_tokens");
        let answer = api
            .send(Method::POST, &path, &self.jwt_header(repo)?, None)
            .await
            .map_err(failed)?;
        #[derive(serde::Deserialize)]
        struct AccessToken {
            token: String,
            expires_at: DateTime<Utc>,
        }
        let created: AccessToken = decode(&answer.body).map_err(failed)?;
        Ok(InstallationToken {
            token: created.token,
            expires_at: created.expires_at,
        })
    }

    /// `Bearer <the App's JWT>`.
    fn jwt_header(&self, repo: &RepoName) -> ForgeResult<Auth> {
        let failed = |reason: String| ForgeError {
            forge: Forge::GitHub,
            call: TOKEN_CALL.to_owned(),
            repo: repo.clone(),
            kind: ForgeErrorKind::NotConfigured(reason),
        };
        let jwt = self.app.jwt().map_err(|e| failed(e.to_string()))?;
        Auth::bearer(jwt.expose())
            .ok_or_else(|| failed("the App's JWT is not a valid header value".to_owned()))
    }
}
