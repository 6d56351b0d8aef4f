//! One GitLab REST v4 call, sent with the token and retried the way a shared API asks: a 429
//! waits what GitLab says (`Retry-After`, else `RateLimit-Reset`), a 5xx or a network error
//! backs off exponentially, anything else is answered at once. This module knows HTTP and
//! GitLab's error bodies; it does not know what any endpoint means (that is `client`).
//!
//! A write retried after a 5xx or a dropped connection may already have been applied: the
//! bot's writes are made safe to repeat by their callers (the status comment is found again by
//! its marker, a merge request by its branch), so the retry costs at worst a duplicate note.
//!
//! Nothing here puts the token anywhere but the `PRIVATE-TOKEN` header: errors name the call as
//! the API documents it (`POST /projects/:id/merge_requests`) and the project, and carry
//! GitLab's own message at most.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use reqwest::header::HeaderMap;
use reqwest::{Method, StatusCode};
use serde::de::DeserializeOwned;

use crate::forge::api::{ForgeError, ForgeErrorKind, ForgeResult};
use crate::forge::http::{message_line, retry_after};
use crate::forge::webhook::Secret;
use crate::forge::{Forge, RepoName};

/// How hard a call tries before it gives up.
#[derive(Clone, Debug)]
pub struct RetryPolicy {
    /// Attempts in all, the first included.
    pub attempts: u32,
    /// The wait after the first failed attempt; it doubles after each one.
    pub first_backoff: Duration,
    /// The longest a rate-limited call waits in place. A longer wait is returned as
    /// `RateLimited`: the job is retried from the store, and a runner is not held meanwhile.
    pub max_rate_limit_wait: Duration,
}

/// Four attempts with 1 s, 2 s, then 4 s between them: 7 s in all, which rides out a
/// load balancer's restart or a deploy of gitlab.com without holding a job for long. A
/// GitLab that is down longer than that fails the call, and the job's own retries take over.
pub const DEFAULT_ATTEMPTS: u32 = 4;
/// See [`DEFAULT_ATTEMPTS`].
pub const DEFAULT_FIRST_BACKOFF: Duration = Duration::from_secs(1);
/// gitlab.com's rate limits reset every minute; a wait up to that long is worth sitting out.
pub const DEFAULT_MAX_RATE_LIMIT_WAIT: Duration = Duration::from_secs(60);

/// A call that gets no answer in this long is a network error (and retried): GitLab answers
/// the calls the bot makes in well under a second, so 30 s means something is stuck.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// GitLab's error messages can be long (a validation error lists every field); an error line
/// keeps this many characters of one.
const MAX_MESSAGE_LEN: usize = 200;

impl Default for RetryPolicy {
    fn default() -> RetryPolicy {
        RetryPolicy {
            attempts: DEFAULT_ATTEMPTS,
            first_backoff: DEFAULT_FIRST_BACKOFF,
            max_rate_limit_wait: DEFAULT_MAX_RATE_LIMIT_WAIT,
        }
    }
}

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

/// What GitLab answered to a call that was not retried further: any status but 429 and 5xx.
pub(super) struct Answer {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
}

impl Answer {
    /// GitLab's `message` (or `error`) from an error body, cut to one short line.
    pub fn message(&self) -> String {
        let text = match serde_json::from_slice::<serde_json::Value>(&self.body) {
            Ok(value) => match value.get("message").or_else(|| value.get("error")) {
                Some(serde_json::Value::String(message)) => message.clone(),
                Some(other) => other.to_string(),
                None => String::new(),
            },
            Err(_) => String::new(),
        };
        let text = if text.is_empty() {
            self.status.to_string()
        } else {
            text
        };
        message_line(&text, MAX_MESSAGE_LEN)
    }

    /// The error a non-2xx status stands for.
    pub fn error_kind(&self) -> ForgeErrorKind {
        match self.status.as_u16() {
            401 => ForgeErrorKind::Unauthorized,
            403 => ForgeErrorKind::Forbidden(self.message()),
            404 => ForgeErrorKind::NotFound,
            409 => ForgeErrorKind::Conflict(self.message()),
            _ => ForgeErrorKind::Invalid(self.message()),
        }
    }
}

/// Sends calls to one GitLab's `/api/v4` with one token.
pub(super) struct Transport {
    http: reqwest::Client,
    api: String,
    token: Secret,
    retry: RetryPolicy,
}

impl Transport {
    pub fn new(url: &str, token: Secret, retry: RetryPolicy) -> Result<Transport, String> {
        let http = reqwest::Client::builder()
            .timeout(REQUEST_TIMEOUT)
            .user_agent(concat!("forgeward/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|err| format!("cannot build the HTTP client: {err}"))?;
        Ok(Transport {
            http,
            api: format!("{}/api/v4", url.trim_end_matches('/')),
            token,
            retry,
        })
    }

    /// Sends `call` and expects a 2xx holding `T`.
    pub async fn json<T: DeserializeOwned>(&self, call: &Call<'_>) -> ForgeResult<T> {
        let answer = self.success(call).await?;
        decode(call, &answer)
    }

    /// Sends `call` and expects a 2xx.
    pub async fn success(&self, call: &Call<'_>) -> ForgeResult<Answer> {
        let answer = self.send(call).await?;
        if answer.status.is_success() {
            Ok(answer)
        } else {
            Err(call.error(answer.error_kind()))
        }
    }

    /// Sends `call`, retrying rate limits, 5xx and network errors; any other answer is returned
    /// as it is, for the caller to judge.
    pub async fn send(&self, call: &Call<'_>) -> ForgeResult<Answer> {
        let mut backoff = self.retry.first_backoff;
        let mut attempt = 1;
        loop {
            let last = attempt >= self.retry.attempts.max(1);
            let (kind, wait) = match self.attempt(call).await {
                Ok(answer) if answer.status == StatusCode::TOO_MANY_REQUESTS => {
                    let wait = rate_limit_wait(&answer.headers).unwrap_or(backoff);
                    let kind = ForgeErrorKind::RateLimited { retry_after: wait };
                    if wait > self.retry.max_rate_limit_wait {
                        return Err(call.error(kind));
                    }
                    (kind, wait)
                }
                Ok(answer) if answer.status.is_server_error() => {
                    (ForgeErrorKind::Server(answer.status.as_u16()), backoff)
                }
                Ok(answer) => return Ok(answer),
                Err(err) => (ForgeErrorKind::Network(err), backoff),
            };
            if last {
                return Err(call.error(kind));
            }
            tracing::debug!(call = call.name, repo = %call.repo, attempt, ?wait, "retrying a GitLab call");
            tokio::time::sleep(wait).await;
            backoff = backoff.saturating_mul(2);
            attempt += 1;
        }
    }

    async fn attempt(&self, call: &Call<'_>) -> Result<Answer, String> {
        let mut request = self
            .http
            .request(call.method.clone(), format!("{}{}", self.api, call.path))
            .header("PRIVATE-TOKEN", self.token.expose());
        if !call.query.is_empty() {
            request = request.query(&call.query);
        }
        if let Some(body) = &call.body {
            request = request.json(body);
        }
        // reqwest's messages name the URL, which holds nothing secret; the call names it better.
        let response = request
            .send()
            .await
            .map_err(|err| message_line(&err.without_url().to_string(), MAX_MESSAGE_LEN))?;
        let status = response.status();
        let headers = response.headers().clone();
        let body = response
            .bytes()
            .await
            .map_err(|err| message_line(&err.without_url().to_string(), MAX_MESSAGE_LEN))?
            .to_vec();
        Ok(Answer {
            status,
            headers,
            body,
        })
    }
}

/// Decodes a 2xx body as `T`.
pub(super) fn decode<T: DeserializeOwned>(call: &Call<'_>, answer: &Answer) -> ForgeResult<T> {
    let mut de = serde_json::Deserializer::from_slice(&answer.body);
    serde_path_to_error::deserialize(&mut de).map_err(|err| {
        // The path names the field; serde's message may quote the body, which stays out.
        let path = err.path().to_string();
        call.error(ForgeErrorKind::Decode(format!(
            "bad or missing field at {path}"
        )))
    })
}

/// How long a 429 asks to wait: `Retry-After` in seconds, else until `RateLimit-Reset` (a Unix
/// time). `None` when neither is there or readable.
fn rate_limit_wait(headers: &HeaderMap) -> Option<Duration> {
    let header = |name| headers.get(name).and_then(|v| v.to_str().ok());
    if let Some(wait) = retry_after(headers) {
        return Some(wait);
    }
    let reset = header("ratelimit-reset")?.trim().parse::<u64>().ok()?;
    let now = SystemTime::now().duration_since(UNIX_EPOCH).ok()?.as_secs();
    Some(Duration::from_secs(reset.saturating_sub(now)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_wins_over_ratelimit_reset() {
        let mut headers = HeaderMap::new();
        headers.insert("retry-after", "7".parse().expect("a header value"));
        headers.insert("ratelimit-reset", "1".parse().expect("a header value"));
        assert_eq!(rate_limit_wait(&headers), Some(Duration::from_secs(7)));
    }

    #[test]
    fn ratelimit_reset_is_a_time_to_wait_for() {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .expect("after 1970")
            .as_secs();
        let mut headers = HeaderMap::new();
        let reset = (now + 30).to_string();
        headers.insert("ratelimit-reset", reset.parse().expect("a header value"));
        let wait = rate_limit_wait(&headers).expect("a wait");
        assert!((29..=30).contains(&wait.as_secs()), "{wait:?}");
        // A reset in the past means now.
        headers.insert("ratelimit-reset", "1".parse().expect("a header value"));
        assert_eq!(rate_limit_wait(&headers), Some(Duration::ZERO));
        assert_eq!(rate_limit_wait(&HeaderMap::new()), None);
    }
}
