//! The fake forge: one in-memory HTTP server that answers GitHub's REST API (at its root, the
//! GitHub client's `api_url`), GitLab's REST v4 API (under `/api/v4`, the GitLab client's
//! `url`) and Forgejo's REST v1 API (under `/api/v1`, the Forgejo client's `url`), for exactly
//! the endpoints the bot's clients call, with the documented request and response shapes:
//! every GitHub answer reads as octocrab's model of it, GitLab's follow docs.gitlab.com/api,
//! Forgejo's its own API description. It is for flows; it does not validate every request
//! field GitHub's OpenAPI description knows (that is the Prism test's job).
//!
//! A test seeds it through the DSL in `dsl` (`forge.github_repo("acme/widgets")
//! .collaborator("alice", Write).issue(7, "title", "body")`), points a real client at
//! [`FakeForge::url`], and reads the result back (`forge.status_comment(&repo, 7)`).
//! `fail_next(n, status)` and `rate_limit_next(headers)` answer the next requests, whatever
//! they are, before any route sees them.
//!
//! The rules a test lives by:
//! - **Every write is owed an expectation.** Each accepted write (a 2xx to a POST, PUT, PATCH or
//!   DELETE that changes state) is queued under what it changed: the comments of #7, the
//!   labels of #7, the review of !8, the pull request of a branch, the statuses of a commit. A
//!   reader of that thing (`comments`, `status_comment`, `labels`, `review_flags`,
//!   `review_bodies`, `pull_request_for_branch`, `commit_status`, `check_runs`) consumes every
//!   write queued under it: reading the result is how a test says it expected those writes.
//!   `expect_write(method, path)` consumes the oldest write to that path and returns its JSON
//!   body (the path as the client sent it, so GitLab's is encoded:
//!   `/api/v4/projects/acme%2Fwidgets/issues/7`). A refused write (4xx) is not queued: the
//!   client's error is what the test sees. Minting an installation token is not a write.
//! - **Every request is for a known route.** A request no route matches answers 404, as the
//!   forge would, and is recorded as unexpected (`take_unexpected` for a test that means it).
//! - When the `FakeForge` is dropped at the end of a test that has not already failed, it
//!   panics listing every write not consumed and every unexpected request.
//!
//! Credentials: GitLab calls must carry `PRIVATE-TOKEN: `[`GITLAB_TOKEN`], Forgejo calls
//! `Authorization: token `[`FORGEJO_TOKEN`]. GitHub repository
//! calls must carry `Authorization: token|Bearer` with [`GITHUB_TOKEN`] or an installation
//! token the fake minted for that repository's installation; the App's own calls carry a
//! JWT, checked for its shape only — except by `GET /app`, which verifies it with the test
//! App's public key ([`APP_PUBLIC_KEY`]) for the App a test seeded ([`FakeForge::github_app`]).
//! `GET /user` (GitHub, GitLab, Forgejo) answers the token's user. Anything else is a 401, as
//! on the forges. Every request's credential is recorded ([`FakeForge::requests`]).

// The GitHub and GitLab clients' tests each use their share of the DSL.
#![allow(dead_code)]
// A refusal is the response itself, and a response is as large as axum makes it.
#![allow(clippy::result_large_err)]

mod dsl;
mod forgejo;
mod github;
mod github_checks;
mod github_graphql;
mod github_pulls;
mod gitlab;
mod gitlab_mr;
mod state;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};

use axum::Router;
use axum::extract::{Request, State as AxumState};
use axum::http::{HeaderMap, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

#[allow(unused_imports)] // What a test names depends on what it seeds.
pub use dsl::{
    CheckRunView, CommentView, FlagView, PullView, RepoHandle, StatusView, Target, issue, pr,
};
#[allow(unused_imports)]
pub use state::{Annotation, Seen, Write, sha_of};

use state::{Injected, State};

/// The one GitLab access token the fake accepts.
pub const GITLAB_TOKEN: &str = "glpat-fake-forge-token-0001";
/// The one Forgejo access token the fake accepts (`Authorization: token …`).
pub const FORGEJO_TOKEN: &str = "forgejo-fake-forge-token-0001";
/// A GitHub personal access token the fake accepts on every repository.
pub const GITHUB_TOKEN: &str = "ghp_fakeForgeToken0001";
/// The public half of the test App's key: `GET /app` accepts only a JWT it verifies.
pub const APP_PUBLIC_KEY: &str = "tests/data/github-app/test-only-public-key.pem";

type Shared = Arc<Mutex<State>>;

/// A running fake forge. Dropping it stops the server and checks the test consumed every write.
pub struct FakeForge {
    shared: Shared,
    addr: SocketAddr,
    server: tokio::task::JoinHandle<()>,
}

impl FakeForge {
    /// Starts the server on a free loopback port.
    pub async fn start() -> FakeForge {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind a loopback port for the fake forge");
        let addr = listener.local_addr().expect("the fake forge's address");
        let shared: Shared = Arc::new(Mutex::new(State::default()));
        lock(&shared).base_url = format!("http://{addr}");
        let app = Router::new()
            .merge(github::routes())
            .nest("/api/v4", gitlab::routes())
            .nest("/api/v1", forgejo::routes())
            .fallback(unexpected)
            .method_not_allowed_fallback(unexpected)
            .layer(axum::middleware::from_fn_with_state(
                shared.clone(),
                record_and_inject,
            ))
            .with_state(shared.clone());
        let server = tokio::spawn(async move {
            // The server ends when the test drops the fake forge (the task is aborted).
            let _ = axum::serve(listener, app).await;
        });
        FakeForge {
            shared,
            addr,
            server,
        }
    }

    /// `http://127.0.0.1:<port>`: GitHub's `api_url` and GitLab's `url`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every request so far, oldest first.
    pub fn requests(&self) -> Vec<Seen> {
        lock(&self.shared).requests.clone()
    }

    /// The next `times` requests, whatever they are, answer `status` with a forge-like body.
    pub fn fail_next(&self, times: usize, status: u16) {
        let mut state = lock(&self.shared);
        for _ in 0..times {
            state.injected.push(Injected {
                status,
                headers: Vec::new(),
            });
        }
    }

    /// The next request answers 429 with these headers (`Retry-After`, `RateLimit-Reset`, …).
    pub fn rate_limit_next(&self, headers: &[(&str, &str)]) {
        lock(&self.shared).injected.push(Injected {
            status: 429,
            headers: headers
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
        });
    }

    /// Installation tokens minted from now on live this long (GitHub's: an hour); an expired
    /// one is refused as GitHub refuses it, 401 `Bad credentials`.
    pub fn installation_token_lifetime(&self, lifetime: chrono::Duration) {
        lock(&self.shared).token_lifetime = Some(lifetime);
    }

    /// Takes the requests no route matched, so a test that provokes one can say so.
    pub fn take_unexpected(&self) -> Vec<String> {
        std::mem::take(&mut lock(&self.shared).unexpected)
    }

    /// The writes not consumed yet, without consuming them.
    pub fn pending_writes(&self) -> Vec<Write> {
        lock(&self.shared).writes.clone()
    }

    /// Consumes the oldest write `method path` (path without the query) and returns its body.
    /// Panics, listing the writes there are, when there is none.
    pub fn expect_write(&self, method: &str, path: &str) -> Value {
        let mut state = lock(&self.shared);
        let Some(at) = state
            .writes
            .iter()
            .position(|w| w.method == method && w.path == path)
        else {
            let pending: Vec<String> = state.writes.iter().map(|w| w.to_string()).collect();
            drop(state);
            panic!(
                "expected a write {method} {path}; the writes not consumed are:\n{}",
                pending.join("\n")
            );
        };
        state.writes.remove(at).body
    }

    fn state(&self) -> MutexGuard<'_, State> {
        lock(&self.shared)
    }
}

impl Drop for FakeForge {
    fn drop(&mut self) {
        self.server.abort();
        if std::thread::panicking() {
            return;
        }
        let state = lock(&self.shared);
        let mut problems: Vec<String> = state
            .writes
            .iter()
            .map(|w| format!("write not expected: {w}"))
            .collect();
        problems.extend(
            state
                .unexpected
                .iter()
                .map(|r| format!("request to an unknown route: {r}")),
        );
        if !problems.is_empty() {
            let problems = problems.join("\n");
            drop(state);
            panic!("the fake forge saw what the test did not expect:\n{problems}");
        }
    }
}

/// The state, even after a panic in another test thread poisoned the lock: the fake forge's
/// state stays consistent between statements.
fn lock(shared: &Shared) -> MutexGuard<'_, State> {
    shared
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Records every request, then answers an injected failure if one is queued.
async fn record_and_inject(
    AxumState(shared): AxumState<Shared>,
    request: Request,
    next: Next,
) -> Response {
    let injected = {
        let mut state = lock(&shared);
        let headers = request.headers();
        let credential =
            header(headers, "authorization").or_else(|| header(headers, "private-token"));
        state.requests.push(Seen {
            method: request.method().to_string(),
            uri: request.uri().to_string(),
            credential,
        });
        (!state.injected.is_empty()).then(|| state.injected.remove(0))
    };
    let Some(injected) = injected else {
        return next.run(request).await;
    };
    let status = StatusCode::from_u16(injected.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut response = error(status, status.canonical_reason().unwrap_or("error"));
    for (name, value) in injected.headers {
        if let (Ok(name), Ok(value)) = (
            axum::http::HeaderName::try_from(name),
            axum::http::HeaderValue::try_from(value),
        ) {
            response.headers_mut().insert(name, value);
        }
    }
    response
}

async fn unexpected(AxumState(shared): AxumState<Shared>, request: Request) -> Response {
    lock(&shared)
        .unexpected
        .push(format!("{} {}", request.method(), request.uri()));
    error(StatusCode::NOT_FOUND, "Not Found")
}

pub(crate) fn header(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}

/// `{"message": …}`: the error body both forges use.
pub(crate) fn error(status: StatusCode, message: &str) -> Response {
    (status, axum::Json(json!({ "message": message }))).into_response()
}

pub(crate) fn reply(status: StatusCode, body: Value) -> Response {
    (status, axum::Json(body)).into_response()
}

/// A request body as JSON; `None` when it is not (the caller answers as its forge does).
pub(crate) fn parse_body(body: &[u8]) -> Option<Value> {
    if body.is_empty() {
        return Some(json!({}));
    }
    serde_json::from_slice(body).ok()
}
