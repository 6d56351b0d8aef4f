//! Forgejo's wire and its calls: one REST v1 request through reqwest with the token in
//! `Authorization: token …`, and [`Call`], which names each request as Forgejo's API
//! description does. Retries, rate limits (`Retry-After`), redirects and error text are the
//! shared layer's ([`crate::forge::http`]); this module knows how Forgejo wants to be asked.
//!
//! Nothing here puts the token anywhere but the `Authorization` header: errors name the call as
//! the API documents it (`POST /repos/{owner}/{repo}/issues/{index}/comments`) and the
//! repository, and carry Forgejo's own message at most. reqwest follows no redirect: the
//! shared layer follows redirects itself, on the instance's own host only, so the token never
//! reaches another host.

use std::time::SystemTime;

use http::{Method, StatusCode};
use serde::de::DeserializeOwned;

use crate::forge::api::{ForgeError, ForgeErrorKind, ForgeResult};
use crate::forge::http::{
    Answer, Api, Auth, ReqwestWire, Retry, decode as decode_body, error_kind, error_message,
    rate_limit, with_query,
};
use crate::forge::webhook::Secret;
use crate::forge::{Forge, RepoName};

/// One request: which documented call it is, on which repository, and what to send.
pub(super) struct Call<'a> {
    pub repo: &'a RepoName,
    pub method: Method,
    /// The call as Forgejo's API description names it, for errors:
    /// `GET /repos/{owner}/{repo}/issues/{index}`.
    pub name: &'static str,
    /// The path under `/api/v1`, its parameters filled in and encoded.
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
            forge: Forge::Forgejo,
            call: self.name.to_owned(),
            repo: self.repo.clone(),
            kind,
        }
    }
}

/// What a request that Forgejo may refuse with a server error came to.
pub(super) enum Tried {
    /// A 2xx.
    Done,
    /// Refused with one of the statuses the caller named: not tried again.
    Refused(ForgeErrorKind),
}

/// Sends calls to one instance's `/api/v1` with one token.
pub(super) struct Transport {
    api: Api,
    auth: Auth,
}

impl Transport {
    pub fn new(url: &str, token: &Secret, retry: Retry) -> Result<Transport, String> {
        let (base, wire) = ReqwestWire::new("Forgejo", url, "/api/v1")?;
        let auth = Auth::header(
            http::header::AUTHORIZATION,
            &format!("token {}", token.expose()),
        )
        .ok_or_else(|| "the Forgejo token is not a valid header value".to_owned())?;
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

    /// Sends `call` once and, when Forgejo answers one of `refusals`, returns that refusal
    /// without trying again; anything else goes the usual way (a gateway's 502, a rate limit,
    /// a dropped connection or a redirect through the shared layer's retries). For a review:
    /// Forgejo answers 500 when it cannot place a line comment, having kept the comments before
    /// it as a pending review, so sending it again would only add them twice.
    pub async fn refusable(&self, call: &Call<'_>, refusals: &[u16]) -> ForgeResult<Tried> {
        let path = with_query(&call.path, &call.query);
        let tried = self
            .api
            .send_once(&call.method, &path, &self.auth, call.body.as_ref())
            .await;
        let Ok(answer) = tried else {
            return self.success(call).await.map(|_| Tried::Done);
        };
        let status = answer.status;
        if status.is_success() {
            return Ok(Tried::Done);
        }
        let message = error_message(&answer.body);
        if refusals.contains(&status.as_u16()) {
            return Ok(Tried::Refused(refusal(status, message)));
        }
        let limited = rate_limit(status, &answer.headers, &message, SystemTime::now()).is_some();
        if status.is_client_error() && !limited {
            return Err(call.error(error_kind(status, message)));
        }
        self.success(call).await.map(|_| Tried::Done)
    }

    /// The path under `/api/v1` of `url` (a `Link` header's next page) when it is on the
    /// instance's own host; None otherwise.
    pub fn api_path(&self, url: &str) -> Option<String> {
        self.api.api_path(url)
    }
}

/// The error a refusal stands for: a 5xx is `Server`, anything else what the shared layer
/// makes of it.
fn refusal(status: StatusCode, message: String) -> ForgeErrorKind {
    if status.is_server_error() {
        ForgeErrorKind::Server(status.as_u16())
    } else {
        error_kind(status, message)
    }
}

/// Decodes a 2xx body as `T`.
pub(super) fn decode<T: DeserializeOwned>(call: &Call<'_>, answer: &Answer) -> ForgeResult<T> {
    decode_body(&answer.body).map_err(|kind| call.error(kind))
}
