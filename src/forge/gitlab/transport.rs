//! GitLab's wire and its calls: one REST v4 request through reqwest with the token in
//! `PRIVATE-TOKEN`, and [`Call`], which names each request as GitLab's API documentation does.
//! Retries, rate limits (`Retry-After`, `RateLimit-Reset`), redirects and error text are the
//! shared layer's ([`crate::forge::http`]); this module knows how GitLab wants to be asked.
//!
//! Nothing here puts the token anywhere but the `PRIVATE-TOKEN` header: errors name the call as
//! the API documents it (`POST /projects/:id/merge_requests`) and the project, and carry
//! GitLab's own message at most. reqwest follows no redirect: a redirect to another host would
//! carry `PRIVATE-TOKEN` along (reqwest strips only the headers it knows to be credentials), so
//! the shared layer follows redirects itself, on GitLab's own host only.

use http::{HeaderName, Method};
use serde::de::DeserializeOwned;

use crate::forge::api::{ForgeError, ForgeErrorKind, ForgeResult};
use crate::forge::http::{
    Answer, Api, Auth, ReqwestWire, Retry, decode as decode_body, error_kind, error_message,
    with_query,
};
use crate::forge::webhook::Secret;
use crate::forge::{Forge, RepoName};

/// The header GitLab reads a personal, project or group access token from.
const PRIVATE_TOKEN: HeaderName = HeaderName::from_static("private-token");

/// One request: which documented call it is, on which project, and what to send.
pub(super) struct Call<'a> {
    pub repo: &'a RepoName,
    pub method: Method,
    /// The call as GitLab documents it, for errors: `GET /projects/:id/issues/:iid`.
    pub name: &'static str,
    /// The path under `/api/v4`, ids filled in and encoded.
    pub path: String,
    pub query: Vec<(&'static str, String)>,
    pub body: Option<serde_json::Value>,
}

impl<'a> Call<'a> {
    pub fn new(repo: &'a RepoName, method: Method, name: &'static str, path: String) -> Self {
        Call {
            repo,
            method,
            name,
            path,
            query: Vec::new(),
            body: None,
        }
    }

    pub fn query(mut self, key: &'static str, value: impl Into<String>) -> Self {
        self.query.push((key, value.into()));
        self
    }

    pub fn json(mut self, body: serde_json::Value) -> Self {
        self.body = Some(body);
        self
    }

    pub fn error(&self, kind: ForgeErrorKind) -> ForgeError {
        ForgeError {
            forge: Forge::GitLab,
            call: self.name.to_owned(),
            repo: self.repo.clone(),
            kind,
        }
    }
}

/// Sends calls to one GitLab's `/api/v4` with one token.
pub(super) struct Transport {
    api: Api,
    auth: Auth,
}

impl Transport {
    pub fn new(url: &str, token: &Secret, retry: Retry) -> Result<Transport, String> {
        let (base, wire) = ReqwestWire::new("GitLab", url, "/api/v4")?;
        let auth = Auth::header(PRIVATE_TOKEN, token.expose())
            .ok_or_else(|| "the GitLab token is not a valid header value".to_owned())?;
        Ok(Transport {
            api: Api::new(base, wire, retry),
            auth,
        })
    }

    /// Sends `call` and expects a 2xx holding `T`.
    pub async fn json<T: DeserializeOwned>(&self, call: &Call<'_>) -> ForgeResult<T> {
        let answer = self.success(call).await?;
        decode(call, &answer)
    }

    /// Sends `call`, retrying rate limits, 5xx and network errors; a 2xx answer, or the error
    /// the call came to.
    pub async fn success(&self, call: &Call<'_>) -> ForgeResult<Answer> {
        let path = with_query(&call.path, &call.query);
        self.api
            .send(call.method.clone(), &path, &self.auth, call.body.as_ref())
            .await
            .map_err(|kind| call.error(kind))
    }

    /// Sends `call` for its effect: a refusal whose message holds `done` means the effect is
    /// already there (GitLab refuses to award an emoji twice or to repeat a commit status's
    /// state), and is no error.
    pub async fn effect(&self, call: &Call<'_>, done: &str) -> ForgeResult<()> {
        let path = with_query(&call.path, &call.query);
        let answer = self
            .api
            .send_any(call.method.clone(), &path, &self.auth, call.body.as_ref())
            .await
            .map_err(|kind| call.error(kind))?;
        if answer.status.is_success() {
            return Ok(());
        }
        let message = error_message(&answer.body);
        if message.contains(done) {
            Ok(())
        } else {
            Err(call.error(error_kind(answer.status, message)))
        }
    }
}

/// Decodes a 2xx body as `T`.
pub(super) fn decode<T: DeserializeOwned>(call: &Call<'_>, answer: &Answer) -> ForgeResult<T> {
    decode_body(&answer.body).map_err(|kind| call.error(kind))
}

#[cfg(test)]
#[path = "transport_tests.rs"]
mod tests;
