//! The sweep against a fake GitHub: an axum server on 127.0.0.1 that checks the App's JWT with
//! the test key pair's public half, serves the listing in pages linked by `Link` cursors, records
//! the redeliveries asked for, and (as GitHub would, once the bot took the redelivery) lists each
//! one as a new successful attempt of the same guid.

use std::collections::{BTreeMap, VecDeque};
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{SystemTime, UNIX_EPOCH};

use axum::Router;
use axum::extract::{Path as UrlPath, Query, State};
use axum::http::{HeaderMap as AxumHeaders, StatusCode as AxumStatus, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::{Value, json};
use tracing::instrument::WithSubscriber;

use super::*;
use crate::forge::Forge;
use crate::forge::github::app::{AppClient, Claims, GithubApp};
use crate::store::{NewDelivery, Recorded, Store, now_ms};

const APP_ID: u64 = 12345;
const PRIVATE_KEY: &str = "tests/data/github-app/test-only-private-key.pem";
const PUBLIC_KEY: &str = "tests/data/github-app/test-only-public-key.pem";

const MINUTE: Duration = Duration::from_secs(60);
const HOUR: Duration = Duration::from_secs(60 * 60);
const DAY: Duration = Duration::from_secs(24 * 60 * 60);

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A guid as GitHub writes them, numbered.
fn guid(n: u32) -> String {
    format!("0b989ba4-242f-11e5-81e1-c7b6966d{n:04x}")
}

/// One entry of "List deliveries for an app webhook", as GitHub's REST documentation shows it,
/// delivered `ago`.
fn delivery(id: u64, guid: &str, ago: Duration, redelivery: bool, status_code: u16) -> Value {
    let at = Utc::now() - TimeDelta::from_std(ago).expect("a short duration");
    let status = match status_code {
        200..=299 => "OK".to_owned(),
        0 => "timed out".to_owned(),
        code => format!("Invalid HTTP Response: {code}"),
    };
    json!({
        "id": id,
        "guid": guid,
        "delivered_at": at.format("%Y-%m-%dT%H:%M:%SZ").to_string(),
        "redelivery": redelivery,
        "duration": 0.27,
        "status": status,
        "status_code": status_code,
        "event": "issues",
        "action": "labeled",
        "installation_id": 123,
        "repository_id": 456,
        "throttled_at": null
    })
}

/// A scripted answer: status, extra headers, body.
type Answer = (AxumStatus, Vec<(&'static str, String)>, Value);

/// The state of the fake GitHub.
struct Fake {
    base_url: String,
    public_key: DecodingKey,
    /// The listing, newest first, page by page.
    pages: Mutex<Vec<Vec<Value>>>,
    /// Answers the listing gives before the real pages, one per request.
    list_answers: Mutex<VecDeque<Answer>>,
    /// Answers to a redelivery request, by delivery id, instead of accepting it.
    redeliver_answers: Mutex<BTreeMap<u64, Answer>>,
    /// The delivery ids GitHub accepted a redelivery of, in order.
    attempts: Mutex<Vec<u64>>,
    /// Every request: method, path and query.
    requests: Mutex<Vec<String>>,
    /// The claims of every JWT presented.
    claims: Mutex<Vec<Claims>>,
    next_id: Mutex<u64>,
}

impl Fake {
    /// Checks the JWT and records its claims; Err: GitHub's message for the 401.
    fn authenticate(&self, headers: &AxumHeaders) -> Result<(), &'static str> {
        let token = headers
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .ok_or("Requires authentication")?;
        let mut validation = Validation::new(Algorithm::RS256);
        validation.set_issuer(&[APP_ID.to_string()]);
        validation.set_required_spec_claims(&["iss", "iat", "exp"]);
        let data = jsonwebtoken::decode::<Claims>(token, &self.public_key, &validation)
            .map_err(|_| "A JSON web token could not be decoded")?;
        lock(&self.claims).push(data.claims);
        Ok(())
    }

    fn guid_of(&self, id: u64) -> Option<String> {
        lock(&self.pages)
            .iter()
            .flatten()
            .find(|d| d["id"] == json!(id))
            .and_then(|d| d["guid"].as_str().map(str::to_owned))
    }
}

fn unauthorized(message: &str) -> Response {
    let body = json!({
        "message": message,
        "documentation_url": "https://docs.github.com/rest",
        "status": "401"
    });
    (AxumStatus::UNAUTHORIZED, axum::Json(body)).into_response()
}

fn answer((status, headers, body): Answer) -> Response {
    let mut response = (status, axum::Json(body)).into_response();
    for (name, value) in headers {
        if let Ok(value) = value.parse() {
            response.headers_mut().insert(name, value);
        }
    }
    response
}

/// `GET /app/hook/deliveries?per_page=…&cursor=v1_<page>`.
async fn list_deliveries(
    State(fake): State<Arc<Fake>>,
    headers: AxumHeaders,
    uri: Uri,
    Query(query): Query<BTreeMap<String, String>>,
) -> Response {
    lock(&fake.requests).push(format!("GET {uri}"));
    if let Err(message) = fake.authenticate(&headers) {
        return unauthorized(message);
    }
    if let Some(scripted) = lock(&fake.list_answers).pop_front() {
        return answer(scripted);
    }
    let page = match query.get("cursor") {
        None => 0,
        Some(cursor) => match cursor.strip_prefix("v1_").and_then(|n| n.parse().ok()) {
            Some(n) => n,
            None => return (AxumStatus::BAD_REQUEST, "bad cursor").into_response(),
        },
    };
    let per_page = query.get("per_page").cloned().unwrap_or_default();
    let pages = lock(&fake.pages);
    let body = pages.get(page).cloned().unwrap_or_default();
    let mut response = axum::Json(Value::Array(body)).into_response();
    if page + 1 < pages.len() {
        let link = format!(
            "<{}/app/hook/deliveries?per_page={per_page}&cursor=v1_{}>; rel=\"next\"",
            fake.base_url,
            page + 1
        );
        if let Ok(value) = link.parse() {
            response.headers_mut().insert("link", value);
        }
    }
    response
}

/// `POST /app/hook/deliveries/{id}/attempts`.
async fn redeliver_delivery(
    State(fake): State<Arc<Fake>>,
    headers: AxumHeaders,
    uri: Uri,
    UrlPath(id): UrlPath<u64>,
) -> Response {
    lock(&fake.requests).push(format!("POST {uri}"));
    if let Err(message) = fake.authenticate(&headers) {
        return unauthorized(message);
    }
    if let Some(scripted) = lock(&fake.redeliver_answers).remove(&id) {
        return answer(scripted);
    }
    let Some(guid) = fake.guid_of(id) else {
        return (
            AxumStatus::NOT_FOUND,
            axum::Json(json!({"message": "Not Found"})),
        )
            .into_response();
    };
    lock(&fake.attempts).push(id);
    // GitHub sends it again at once, and the bot takes it: a new, successful attempt.
    let new_id = {
        let mut next = lock(&fake.next_id);
        *next += 1;
        *next
    };
    lock(&fake.pages)[0].insert(0, delivery(new_id, &guid, Duration::ZERO, true, 202));
    (AxumStatus::ACCEPTED, axum::Json(json!({}))).into_response()
}

/// A fake GitHub serving `pages`, a temporary SQLite store, and a client of the App.
struct Harness {
    fake: Arc<Fake>,
    client: AppClient,
    store: Store,
    _dir: tempfile::TempDir,
}

impl Harness {
    async fn new(pages: Vec<Vec<Value>>) -> Harness {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("binding the fake GitHub");
        let addr = listener.local_addr().expect("its address");
        let public = std::fs::read(PUBLIC_KEY).unwrap_or_else(|e| panic!("{PUBLIC_KEY}: {e}"));
        let fake = Arc::new(Fake {
            base_url: format!("http://{addr}"),
            public_key: DecodingKey::from_rsa_pem(&public).expect("the test public key"),
            pages: Mutex::new(pages),
            list_answers: Mutex::new(VecDeque::new()),
            redeliver_answers: Mutex::new(BTreeMap::new()),
            attempts: Mutex::new(Vec::new()),
            requests: Mutex::new(Vec::new()),
            claims: Mutex::new(Vec::new()),
            next_id: Mutex::new(1_000_000),
        });
        let router = Router::new()
            .route("/app/hook/deliveries", get(list_deliveries))
            .route(
                "/app/hook/deliveries/{id}/attempts",
                post(redeliver_delivery),
            )
            .with_state(fake.clone());
        tokio::spawn(async move {
            let _ = axum::serve(listener, router).await;
        });
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Store::open(&format!(
            "sqlite://{}",
            dir.path().join("forgeward.db").display()
        ))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
        let client = client_for(&fake.base_url, APP_ID);
        Harness {
            fake,
            client,
            store,
            _dir: dir,
        }
    }

    /// Records `guid` as the bot does when it takes a delivery.
    async fn store_delivery(&self, guid: &str) {
        let delivery = NewDelivery {
            forge: Forge::GitHub,
            id: guid.to_owned(),
            event: "issues".to_owned(),
            headers: json!({ "x-github-event": "issues", "x-github-delivery": guid }),
            body: b"{}".to_vec(),
            received_at_ms: now_ms(),
        };
        let recorded = self.store.record(delivery, None, 3).await;
        assert!(matches!(recorded, Ok(Recorded::New { .. })), "{recorded:?}");
    }

    async fn sweep(&self, window: Duration, max: usize) -> Result<SweepReport, SweepError> {
        sweep(&self.client, &self.store, window, max).await
    }

    fn attempts(&self) -> Vec<u64> {
        lock(&self.fake.attempts).clone()
    }

    fn requests(&self) -> Vec<String> {
        lock(&self.fake.requests).clone()
    }

    fn script_list(&self, status: AxumStatus, headers: Vec<(&'static str, String)>, body: Value) {
        lock(&self.fake.list_answers).push_back((status, headers, body));
    }
}

fn client_for(base_url: &str, app_id: u64) -> AppClient {
    let app = GithubApp::load(app_id, Path::new(PRIVATE_KEY)).unwrap_or_else(|e| panic!("{e}"));
    AppClient::new(base_url, app).unwrap_or_else(|e| panic!("{e}"))
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("after 1970")
        .as_secs()
}

#[tokio::test]
async fn only_failed_unstored_deliveries_are_redelivered_once_each() {
    let (ok, failed, stored, later_ok, twice_failed, refused_401, too_old, older) = (
        guid(1),
        guid(2),
        guid(3),
        guid(4),
        guid(5),
        guid(6),
        guid(7),
        guid(8),
    );
    let h = Harness::new(vec![
        vec![
            delivery(110, &twice_failed, MINUTE, true, 503),
            delivery(109, &later_ok, 2 * MINUTE, true, 200),
            delivery(108, &ok, 10 * MINUTE, false, 200),
            delivery(107, &failed, 20 * MINUTE, false, 500),
        ],
        vec![
            delivery(106, &stored, HOUR, false, 0),
            delivery(105, &refused_401, 2 * HOUR, false, 401),
            delivery(104, &later_ok, 5 * HOUR, false, 502),
            delivery(103, &twice_failed, DAY, false, 500),
            delivery(102, &too_old, 4 * DAY, false, 500),
        ],
        vec![delivery(101, &older, 5 * DAY, false, 500)],
    ])
    .await;
    h.store_delivery(&stored).await;

    let report = h
        .sweep(RETENTION, MAX_REDELIVERIES_PER_SWEEP)
        .await
        .unwrap_or_else(|e| panic!("{e}"));

    // Oldest first, each by its newest attempt; the one older than the window is not asked for.
    assert_eq!(h.attempts(), [110, 105, 107]);
    assert_eq!(
        (
            report.listed,
            report.pages,
            report.failed,
            report.already_stored,
            report.redelivered,
            report.refused,
            report.deferred,
            report.truncated,
        ),
        (8, 2, 4, 1, 3, 0, 0, false),
        "{report}"
    );
    // Paging stopped at the first delivery older than the window.
    assert_eq!(
        h.requests(),
        [
            "GET /app/hook/deliveries?per_page=100",
            "GET /app/hook/deliveries?per_page=100&cursor=v1_1",
            "POST /app/hook/deliveries/110/attempts",
            "POST /app/hook/deliveries/105/attempts",
            "POST /app/hook/deliveries/107/attempts",
        ]
    );
    assert_eq!(
        report.to_string(),
        "8 deliveries listed (2 pages); 4 failed: 1 already stored, 3 redelivered, \
         0 refused by GitHub, 0 left for the next sweep"
    );

    // The redeliveries now show as successful attempts: the next sweep asks for nothing.
    let again = h
        .sweep(RETENTION, MAX_REDELIVERIES_PER_SWEEP)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(h.attempts(), [110, 105, 107]);
    assert_eq!(
        (again.failed, again.already_stored, again.redelivered),
        (1, 1, 0)
    );
}

#[tokio::test]
async fn every_request_carries_the_apps_jwt() {
    let h = Harness::new(vec![vec![delivery(7, &guid(1), MINUTE, false, 500)]]).await;
    h.sweep(RETENTION, MAX_REDELIVERIES_PER_SWEEP)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let now = unix_now();
    let claims = lock(&h.fake.claims).clone();
    assert_eq!(claims.len(), 2, "the listing and the redelivery");
    for c in claims {
        assert_eq!(c.iss, "12345");
        assert!(
            c.iat + 60 <= now + 1 && c.iat + 60 + 10 >= now,
            "iat {} is not about now - 60 ({now})",
            c.iat
        );
        assert!(c.exp > now, "{c:?}");
        assert!(c.exp - c.iat <= 600, "{c:?}");
    }
}

#[tokio::test]
async fn the_window_bounds_the_listing() {
    let h = Harness::new(vec![
        vec![
            delivery(3, &guid(3), 10 * MINUTE, false, 500),
            delivery(2, &guid(2), 2 * HOUR, false, 500),
        ],
        vec![delivery(1, &guid(1), 3 * HOUR, false, 500)],
    ])
    .await;
    let report = h
        .sweep(HOUR, MAX_REDELIVERIES_PER_SWEEP)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(h.attempts(), [3]);
    assert_eq!((report.listed, report.pages, report.failed), (1, 1, 1));
}

#[tokio::test]
async fn at_most_max_redeliveries_a_sweep_oldest_first() {
    let h = Harness::new(vec![
        (1..=5)
            .rev()
            .map(|n| {
                delivery(
                    n,
                    &guid(n as u32),
                    (60 - 10 * n as u32) * MINUTE,
                    false,
                    500,
                )
            })
            .collect(),
    ])
    .await;

    let first = h
        .sweep(RETENTION, 2)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(h.attempts(), [1, 2]);
    assert_eq!((first.failed, first.redelivered, first.deferred), (5, 2, 3));
    // The next sweep must reach back to the oldest delivery left over (30 minutes ago).
    let left_over = Utc::now() - TimeDelta::minutes(30);
    assert!(
        (first.settled_before - left_over).num_seconds().abs() <= 5,
        "{} vs {left_over}",
        first.settled_before
    );

    let second = h
        .sweep(RETENTION, 2)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(h.attempts(), [1, 2, 3, 4]);
    assert_eq!((second.redelivered, second.deferred), (2, 1));

    let third = h
        .sweep(RETENTION, 2)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(h.attempts(), [1, 2, 3, 4, 5]);
    assert_eq!((third.redelivered, third.deferred), (1, 0));
    assert!(third.settled_before > first.settled_before);
}

#[tokio::test]
async fn max_zero_asks_for_nothing() {
    let h = Harness::new(vec![vec![delivery(1, &guid(1), MINUTE, false, 500)]]).await;
    let report = h
        .sweep(RETENTION, 0)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(h.attempts().is_empty());
    assert_eq!((report.failed, report.deferred), (1, 1));
}

#[tokio::test]
async fn a_server_error_from_github_ends_the_sweep() {
    let h = Harness::new(vec![vec![delivery(1, &guid(1), MINUTE, false, 500)]]).await;
    h.script_list(
        AxumStatus::INTERNAL_SERVER_ERROR,
        vec![],
        json!({ "message": "Server Error" }),
    );
    let e = h
        .sweep(RETENTION, MAX_REDELIVERIES_PER_SWEEP)
        .await
        .expect_err("a 500");
    assert!(
        matches!(&e, SweepError::Status { status, .. } if status.as_u16() == 500),
        "{e:?}"
    );
    assert_eq!(
        e.to_string(),
        "listing the GitHub App's webhook deliveries: GitHub answered 500 Internal Server Error: \
         Server Error"
    );
    assert!(h.attempts().is_empty());
}

#[tokio::test]
async fn a_jwt_github_refuses_is_an_error() {
    let h = Harness::new(vec![vec![delivery(1, &guid(1), MINUTE, false, 500)]]).await;
    let stranger = client_for(&h.fake.base_url, 999);
    let e = sweep(&stranger, &h.store, RETENTION, MAX_REDELIVERIES_PER_SWEEP)
        .await
        .expect_err("a 401");
    assert_eq!(
        e.to_string(),
        "listing the GitHub App's webhook deliveries: GitHub answered 401 Unauthorized: \
         A JSON web token could not be decoded"
    );
    assert!(h.attempts().is_empty());
}

#[tokio::test]
async fn a_failed_redelivery_request_ends_the_sweep() {
    let h = Harness::new(vec![vec![
        delivery(2, &guid(2), MINUTE, false, 500),
        delivery(1, &guid(1), 2 * MINUTE, false, 500),
    ]])
    .await;
    lock(&h.fake.redeliver_answers).insert(
        1,
        (
            AxumStatus::BAD_GATEWAY,
            vec![],
            json!({ "message": "Bad Gateway" }),
        ),
    );
    let e = h
        .sweep(RETENTION, MAX_REDELIVERIES_PER_SWEEP)
        .await
        .expect_err("a 502");
    assert!(
        e.to_string().starts_with(&format!(
            "asking GitHub to redeliver delivery 1 (issues {}): GitHub answered 502 Bad Gateway",
            guid(1)
        )),
        "{e}"
    );
    assert!(h.attempts().is_empty(), "the sweep stopped at the first");
}

#[tokio::test]
async fn a_delivery_github_will_not_redeliver_is_counted_and_skipped() {
    let h = Harness::new(vec![vec![
        delivery(2, &guid(2), MINUTE, false, 500),
        delivery(1, &guid(1), 2 * MINUTE, false, 500),
    ]])
    .await;
    lock(&h.fake.redeliver_answers).insert(
        1,
        (
            AxumStatus::UNPROCESSABLE_ENTITY,
            vec![],
            json!({ "message": "Validation Failed" }),
        ),
    );
    let report = h
        .sweep(RETENTION, MAX_REDELIVERIES_PER_SWEEP)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(h.attempts(), [2]);
    assert_eq!((report.redelivered, report.refused), (1, 1));
}

#[tokio::test]
async fn a_rate_limit_says_how_long_to_wait() {
    let h = Harness::new(vec![vec![]]).await;
    h.script_list(
        AxumStatus::TOO_MANY_REQUESTS,
        vec![("retry-after", "120".to_owned())],
        json!({ "message": "API rate limit exceeded" }),
    );
    let e = h.sweep(RETENTION, 1).await.expect_err("a 429");
    assert_eq!(e.retry_after(), Some(Duration::from_secs(120)));
}

#[tokio::test]
async fn a_listing_that_is_not_githubs_names_the_json_path() {
    let h = Harness::new(vec![vec![]]).await;
    let mut bad = delivery(2, &guid(2), MINUTE, false, 500);
    if let Some(object) = bad.as_object_mut() {
        object.remove("guid");
    }
    h.script_list(
        AxumStatus::OK,
        vec![],
        json!([delivery(3, &guid(3), MINUTE, false, 200), bad]),
    );
    let e = h.sweep(RETENTION, 1).await.expect_err("malformed");
    assert!(
        e.to_string().starts_with(
            "listing the GitHub App's webhook deliveries: unexpected answer: at [1]: missing field `guid`"
        ),
        "{e}"
    );
}

#[test]
fn the_next_page_comes_from_the_link_header() {
    let mut headers = http::HeaderMap::new();
    headers.insert(
        http::header::LINK,
        "<https://api.github.com/app/hook/deliveries?per_page=2&cursor=v1_1>; rel=\"prev\", \
         <https://api.github.com/app/hook/deliveries?per_page=2&cursor=v1_3>; rel=\"next\""
            .parse()
            .expect("a header value"),
    );
    assert_eq!(
        next_link(&headers).as_deref(),
        Some("https://api.github.com/app/hook/deliveries?per_page=2&cursor=v1_3")
    );
    headers.insert(
        http::header::LINK,
        "<https://api.github.com/app/hook/deliveries?per_page=2&cursor=v1_1>; rel=\"prev\""
            .parse()
            .expect("a header value"),
    );
    assert_eq!(next_link(&headers), None);
    assert_eq!(next_link(&http::HeaderMap::new()), None);
}

/// Log lines, captured.
#[derive(Clone, Default)]
struct Logs(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Logs {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        lock(&self.0).extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for Logs {
    type Writer = Logs;

    fn make_writer(&'a self) -> Logs {
        self.clone()
    }
}

impl Logs {
    fn text(&self) -> String {
        String::from_utf8_lossy(&lock(&self.0)).into_owned()
    }
}

#[tokio::test]
async fn the_loop_logs_github_errors_and_sweeps_again() {
    let h = Harness::new(vec![vec![delivery(1, &guid(1), MINUTE, false, 500)]]).await;
    h.script_list(
        AxumStatus::UNAUTHORIZED,
        vec![],
        json!({ "message": "Bad credentials" }),
    );
    h.script_list(
        AxumStatus::INTERNAL_SERVER_ERROR,
        vec![],
        json!({ "message": "Server Error" }),
    );
    let logs = Logs::default();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(logs.clone())
        .with_ansi(false)
        .with_max_level(tracing::Level::DEBUG)
        .finish();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let client = client_for(&h.fake.base_url, APP_ID);
    let sweeps = tokio::spawn(
        run_sweeps(client, h.store.clone(), Duration::from_millis(20), async {
            let _ = stopped.await;
        })
        .with_subscriber(subscriber),
    );

    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while h.attempts().is_empty() && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // A few more sweeps, which find nothing left to do.
    tokio::time::sleep(Duration::from_millis(100)).await;
    let _ = stop.send(());
    tokio::time::timeout(Duration::from_secs(10), sweeps)
        .await
        .expect("the loop stops on shutdown")
        .expect("the loop does not panic");

    assert_eq!(
        h.attempts(),
        [1],
        "redelivered once, after two failed sweeps"
    );
    let text = logs.text();
    assert!(
        text.contains("missed-delivery sweep failed, next in 20ms: listing the GitHub App's webhook deliveries: GitHub answered 401 Unauthorized: Bad credentials"),
        "{text}"
    );
    assert!(
        text.contains("GitHub answered 500 Internal Server Error: Server Error"),
        "{text}"
    );
    assert!(
        text.contains("1 delivery listed (1 page); 1 failed: 0 already stored, 1 redelivered"),
        "{text}"
    );
    assert!(text.contains("missed-delivery sweeps stopped"), "{text}");
    let key = std::fs::read_to_string(PRIVATE_KEY).expect("the test key");
    let key_body = key.lines().nth(1).expect("a line of the key");
    assert!(!text.contains(key_body), "the key is logged: {text}");
    assert!(!text.contains("eyJ"), "a JWT is logged: {text}");
}
