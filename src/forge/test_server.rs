//! A tiny HTTP server on 127.0.0.1 for the forge clients' unit tests: it answers each request with
//! what the test's handler returns, and remembers every request it saw.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use axum::body::{Body, to_bytes};
use axum::extract::Request;
use axum::response::Response;

use super::http::Sleeper;

/// A request as the server saw it.
#[derive(Clone, Debug)]
pub struct Seen {
    pub method: String,
    /// Path and query.
    pub uri: String,
    pub authorization: Option<String>,
    pub private_token: Option<String>,
    pub accept: Option<String>,
    pub body: String,
}

impl Seen {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {}", self.body))
    }
}

/// What the server answers.
#[derive(Clone, Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Reply {
    pub fn new(status: u16, body: impl Into<String>) -> Reply {
        Reply {
            status,
            headers: Vec::new(),
            body: body.into(),
        }
    }

    pub fn json(status: u16, body: serde_json::Value) -> Reply {
        Reply::new(status, body.to_string())
    }

    pub fn header(mut self, name: &str, value: impl Into<String>) -> Reply {
        self.headers.push((name.to_owned(), value.into()));
        self
    }
}

type Handler = Arc<dyn Fn(&Seen) -> Reply + Send + Sync>;

pub struct TestServer {
    pub url: String,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl TestServer {
    /// A server answering every request with `handler`.
    pub async fn start(handler: impl Fn(&Seen) -> Reply + Send + Sync + 'static) -> TestServer {
        let handler: Handler = Arc::new(handler);
        let seen = Arc::new(Mutex::new(Vec::new()));
        let recorded = seen.clone();
        let app = axum::Router::new().fallback(move |request: Request| {
            let handler = handler.clone();
            let recorded = recorded.clone();
            async move {
                let (parts, body) = request.into_parts();
                let body = to_bytes(body, usize::MAX).await.unwrap_or_default();
                let header = |name: &str| {
                    parts
                        .headers
                        .get(name)
                        .and_then(|v| v.to_str().ok())
                        .map(str::to_owned)
                };
                let seen = Seen {
                    method: parts.method.to_string(),
                    uri: parts
                        .uri
                        .path_and_query()
                        .map(|pq| pq.as_str().to_owned())
                        .unwrap_or_default(),
                    authorization: header("authorization"),
                    private_token: header("private-token"),
                    accept: header("accept"),
                    body: String::from_utf8_lossy(&body).into_owned(),
                };
                let reply = handler(&seen);
                recorded
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push(seen);
                let mut response = Response::builder().status(reply.status);
                for (name, value) in &reply.headers {
                    response = response.header(name, value);
                }
                response
                    .header("content-type", "application/json")
                    .body(Body::from(reply.body))
                    .expect("a valid response")
            }
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1:0");
        let url = format!("http://{}", listener.local_addr().expect("local address"));
        tokio::spawn(async move { axum::serve(listener, app).await });
        TestServer { url, seen }
    }

    /// A server answering with `replies` in turn (and 599 once they run out).
    pub async fn scripted(replies: Vec<Reply>) -> TestServer {
        let replies = Mutex::new(VecDeque::from(replies));
        TestServer::start(move |_| {
            replies
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .pop_front()
                .unwrap_or_else(|| Reply::new(599, "the script ran out"))
        })
        .await
    }

    pub fn seen(&self) -> Vec<Seen> {
        self.seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

/// A sleeper that returns at once and records what it was asked to wait.
pub fn recording_sleeper() -> (Sleeper, Arc<Mutex<Vec<Duration>>>) {
    let waits = Arc::new(Mutex::new(Vec::new()));
    let recorded = waits.clone();
    let sleeper: Sleeper = Arc::new(move |duration| {
        recorded
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(duration);
        Box::pin(async {})
    });
    (sleeper, waits)
}

pub fn waits(recorded: &Arc<Mutex<Vec<Duration>>>) -> Vec<u64> {
    recorded
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .iter()
        .map(Duration::as_secs)
        .collect()
}
