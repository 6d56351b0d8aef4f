//! The wire GitLab's and Forgejo's clients send through: reqwest, one try per request, to an
//! API under the instance's URL (`/api/v4`, `/api/v1`). It follows no redirect itself — a
//! redirect to another host would carry the token header along (reqwest strips only the headers
//! it knows to be credentials) — so the shared layer follows them, on the API's own host only.

use std::time::Duration;

use http::Uri;

use super::{Answer, MAX_MESSAGE_LEN, Sending, Try, Wire, error_chain, message_line};

/// A call that gets no answer in this long is a network error (and retried): the forges answer
/// the calls the bot makes in well under a second, so 30 s means something is stuck.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// reqwest, sending one try to `{url}{api_path}`. No `Accept` header: both APIs answer JSON
/// (and Forgejo's raw file endpoint the file's bytes) whatever the client accepts.
pub struct ReqwestWire {
    http: reqwest::Client,
    api: String,
}

impl ReqwestWire {
    /// The wire to `{url}{api_path}` and that API's base URI; `forge` names the instance in
    /// the error when `url` is not an absolute http(s) URL.
    pub fn new(forge: &str, url: &str, api_path: &str) -> Result<(Uri, ReqwestWire), String> {
        let http = reqwest::Client::builder()
            .timeout(REQUEST_TIMEOUT)
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("forgeward/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|err| format!("cannot build the HTTP client: {err}"))?;
        let api = format!("{}{api_path}", url.trim_end_matches('/'));
        let base = api
            .parse::<Uri>()
            .ok()
            .filter(|base| base.scheme().is_some() && base.authority().is_some())
            .ok_or_else(|| format!("the {forge} URL {url} is not an absolute http(s) URL"))?;
        Ok((base, ReqwestWire { http, api }))
    }
}

impl Wire for ReqwestWire {
    fn send<'a>(&'a self, request: Try<'a>) -> Sending<'a> {
        Box::pin(async move {
            let mut builder = self.http.request(
                request.method.clone(),
                format!("{}{}", self.api, request.path),
            );
            if let Some(auth) = request.auth {
                builder = builder.header(auth.name(), auth.value().clone());
            }
            if let Some(body) = request.body {
                builder = builder.json(body);
            }
            // reqwest's messages name the URL, which holds nothing secret; the call names it
            // better.
            let failed = |err: reqwest::Error| {
                message_line(&error_chain(&err.without_url()), MAX_MESSAGE_LEN)
            };
            let response = builder.send().await.map_err(failed)?;
            let status = response.status();
            let headers = response.headers().clone();
            let body = response.bytes().await.map_err(failed)?.to_vec();
            Ok(Answer {
                status,
                headers,
                body,
            })
        })
    }
}
