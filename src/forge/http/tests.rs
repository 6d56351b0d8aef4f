//! The shared layer over a scripted wire: what is retried, how long each wait is, what is
//! final, which redirects are followed, and how each forge's error text reads. No socket: each
//! try takes the next answer of the script and is recorded.

use std::collections::VecDeque;
use std::sync::Mutex;

use super::*;
use crate::forge::test_server::recording_sleeper;

/// A try as the wire saw it.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Seen {
    method: Method,
    path: String,
    auth: String,
    body: Option<serde_json::Value>,
}

/// Answers from a script, in turn; a network error once it runs out.
struct Scripted {
    answers: Mutex<VecDeque<Result<Answer, String>>>,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl Wire for Scripted {
    fn send<'a>(&'a self, request: Try<'a>) -> Sending<'a> {
        self.seen.lock().expect("the log").push(Seen {
            method: request.method.clone(),
            path: request.path.to_owned(),
            auth: request
                .auth
                .map(|auth| auth.value().to_str().expect("a text header").to_owned())
                .unwrap_or_default(),
            body: request.body.cloned(),
        });
        let next = self
            .answers
            .lock()
            .expect("the script")
            .pop_front()
            .unwrap_or_else(|| Err("the script ran out".to_owned()));
        Box::pin(async move { next })
    }
}

fn answer(status: u16, body: &str) -> Result<Answer, String> {
    Ok(Answer {
        status: StatusCode::from_u16(status).expect("a status"),
        headers: HeaderMap::new(),
        body: body.as_bytes().to_vec(),
    })
}

fn with_header(
    answer: Result<Answer, String>,
    name: &'static str,
    value: &str,
) -> Result<Answer, String> {
    answer.map(|mut a| {
        a.headers
            .insert(name, value.parse().expect("a header value"));
        a
    })
}

fn ok() -> Result<Answer, String> {
    answer(200, r#"{"ok":true}"#)
}

struct Fixture {
    api: Api,
    seen: Arc<Mutex<Vec<Seen>>>,
    waits: Arc<Mutex<Vec<Duration>>>,
}

fn fixture_at(base: &str, policy: RetryPolicy, script: Vec<Result<Answer, String>>) -> Fixture {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let (sleep, waits) = recording_sleeper();
    let wire = Scripted {
        answers: Mutex::new(script.into()),
        seen: seen.clone(),
    };
    let api = Api::new(
        base.parse().expect("a base URL"),
        wire,
        Retry { policy, sleep },
    );
    Fixture { api, seen, waits }
}

fn github(script: Vec<Result<Answer, String>>) -> Fixture {
    fixture_at("https://api.github.com", RetryPolicy::github(), script)
}

fn gitlab(script: Vec<Result<Answer, String>>) -> Fixture {
    fixture_at(
        "https://gitlab.example/api/v4",
        RetryPolicy::gitlab(),
        script,
    )
}

fn auth() -> Auth {
    Auth::bearer("test-token").expect("a header value")
}

impl Fixture {
    async fn get(&self, path: &str) -> Result<Answer, ForgeErrorKind> {
        self.api.send(Method::GET, path, &auth(), None).await
    }

    fn tries(&self) -> usize {
        self.seen.lock().expect("the log").len()
    }

    fn paths(&self) -> Vec<String> {
        self.seen
            .lock()
            .expect("the log")
            .iter()
            .map(|s| s.path.clone())
            .collect()
    }

    fn waits(&self) -> Vec<u64> {
        crate::forge::test_server::waits(&self.waits)
    }
}

#[tokio::test]
async fn server_errors_are_retried_with_doubling_backoff() {
    let f = github(vec![answer(502, ""), answer(503, ""), ok()]);
    let answer = f.get("/repos/o/r").await.expect("the third try succeeds");
    assert_eq!(answer.body, br#"{"ok":true}"#);
    assert_eq!(f.tries(), 3);
    assert_eq!(f.waits(), vec![1, 2]);
}

#[tokio::test]
async fn server_errors_give_up_after_four_tries() {
    for f in [
        github(vec![answer(500, ""); 5]),
        gitlab(vec![answer(500, ""); 5]),
    ] {
        assert_eq!(
            f.get("/x").await.expect_err("fails"),
            ForgeErrorKind::Server(500)
        );
        assert_eq!(f.tries(), 4);
        assert_eq!(f.waits(), vec![1, 2, 4]);
    }
}

#[tokio::test]
async fn network_errors_are_retried_then_reported() {
    let f = gitlab(vec![Err("connection refused".to_owned()); 4]);
    assert_eq!(
        f.get("/x").await.expect_err("nothing answers"),
        ForgeErrorKind::Network("connection refused".to_owned())
    );
    assert_eq!(f.waits(), vec![1, 2, 4]);
}

#[tokio::test]
async fn other_client_errors_are_never_retried() {
    let cases = [
        (404, r#"{"message":"Not Found"}"#, ForgeErrorKind::NotFound),
        (
            404,
            r#"{"message":"404 Project Not Found"}"#,
            ForgeErrorKind::NotFound,
        ),
        (410, r#"{"message":"Gone"}"#, ForgeErrorKind::NotFound),
        (
            401,
            r#"{"message":"Bad credentials"}"#,
            ForgeErrorKind::Unauthorized,
        ),
        (
            403,
            r#"{"message":"Resource not accessible by integration"}"#,
            ForgeErrorKind::Forbidden("Resource not accessible by integration".to_owned()),
        ),
        (
            403,
            r#"{"error":"insufficient_scope","error_description":"The request requires higher privileges than provided by the access token."}"#,
            ForgeErrorKind::Forbidden(
                "insufficient_scope; The request requires higher privileges than provided by the access token."
                    .to_owned(),
            ),
        ),
        (
            409,
            r#"{"message":"Git Repository is empty."}"#,
            ForgeErrorKind::Conflict("Git Repository is empty.".to_owned()),
        ),
        (
            409,
            r#"{"message":["Another open merge request already exists for this source branch: !3"]}"#,
            ForgeErrorKind::Conflict(
                r#"["Another open merge request already exists for this source branch: !3"]"#
                    .to_owned(),
            ),
        ),
        (
            422,
            r#"{"message":"Validation Failed","errors":[{"resource":"PullRequest","code":"custom","message":"A pull request already exists for o:b."}]}"#,
            ForgeErrorKind::Conflict(
                "Validation Failed; A pull request already exists for o:b.".to_owned(),
            ),
        ),
        (
            422,
            r#"{"message":"Validation Failed","errors":[{"resource":"Label","field":"name","code":"invalid"}]}"#,
            ForgeErrorKind::Invalid("Validation Failed; name: invalid".to_owned()),
        ),
        (
            400,
            r#"{"message":{"title":["is too long (maximum is 255 characters)"]}}"#,
            ForgeErrorKind::Invalid(
                r#"{"title":["is too long (maximum is 255 characters)"]}"#.to_owned(),
            ),
        ),
        (
            400,
            "not json",
            ForgeErrorKind::Invalid("not json".to_owned()),
        ),
        (
            418,
            "",
            ForgeErrorKind::Invalid("HTTP 418: no message".to_owned()),
        ),
    ];
    for (status, body, kind) in cases {
        let f = github(vec![answer(status, body), ok()]);
        assert_eq!(
            f.get("/x").await.expect_err("fails"),
            kind,
            "{status} {body}"
        );
        assert_eq!(f.tries(), 1, "{status} {body}");
        assert_eq!(f.waits(), Vec::<u64>::new(), "{status} {body}");
    }
}

#[tokio::test]
async fn a_refusal_can_be_had_as_the_answer_it_is() {
    let f = gitlab(vec![
        answer(
            400,
            r#"{"message":"Award Emoji Name has already been taken"}"#,
        ),
        answer(503, ""),
        ok(),
    ]);
    let refused = f
        .api
        .send_any(Method::POST, "/award", &auth(), None)
        .await
        .expect("a refusal is an answer");
    assert_eq!(refused.status, StatusCode::BAD_REQUEST);
    assert!(error_message(&refused.body).contains("already been taken"));
    // A 5xx is still retried.
    let answer = f
        .api
        .send_any(Method::POST, "/award", &auth(), None)
        .await
        .expect("retried");
    assert_eq!(answer.status, StatusCode::OK);
    assert_eq!(f.waits(), vec![1]);
}

#[tokio::test]
async fn an_anonymous_call_carries_no_credentials_and_is_judged_like_any() {
    let f = github(vec![
        answer(201, r#"{"id":1}"#),
        answer(404, r#"{"message":"Not Found"}"#),
    ]);
    let made = f
        .api
        .send_anonymous(Method::POST, "/app-manifests/abc/conversions", None)
        .await
        .expect("made");
    assert_eq!(made.status, StatusCode::CREATED);
    let gone = f
        .api
        .send_anonymous(Method::POST, "/app-manifests/abc/conversions", None)
        .await
        .expect_err("a used code");
    assert_eq!(gone, ForgeErrorKind::NotFound);
    let seen = f.seen.lock().expect("the log");
    assert!(seen.iter().all(|s| s.auth.is_empty()), "no Authorization");
}

#[tokio::test]
async fn retry_after_is_waited_exactly() {
    for f in [
        github(vec![
            with_header(
                answer(429, r#"{"message":"slow down"}"#),
                "retry-after",
                "7",
            ),
            ok(),
        ]),
        gitlab(vec![with_header(answer(429, ""), "Retry-After", "7"), ok()]),
    ] {
        f.get("/x").await.expect("succeeds after the wait");
        assert_eq!(f.waits(), vec![7]);
    }
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("after 1970")
        .as_secs()
}

#[tokio::test]
async fn an_exhausted_primary_limit_waits_until_its_reset() {
    let reset = (unix_now() + 30).to_string();
    let github_limit = with_header(
        with_header(
            answer(
                403,
                r#"{"message":"API rate limit exceeded for installation ID 1."}"#,
            ),
            "x-ratelimit-remaining",
            "0",
        ),
        "x-ratelimit-reset",
        &reset,
    );
    let gitlab_limit = with_header(
        answer(429, r#"{"message":"Retry later"}"#),
        "RateLimit-Reset",
        &reset,
    );
    for f in [
        github(vec![github_limit, ok()]),
        gitlab(vec![gitlab_limit, ok()]),
    ] {
        f.get("/x").await.expect("succeeds after the reset");
        let waited = f.waits();
        assert_eq!(waited.len(), 1);
        assert!((30..=32).contains(&waited[0]), "{waited:?}");
    }
}

#[tokio::test]
async fn a_403_with_requests_left_is_a_refusal_not_a_limit() {
    let f = github(vec![with_header(
        answer(
            403,
            r#"{"message":"Must have admin rights to Repository."}"#,
        ),
        "x-ratelimit-remaining",
        "4999",
    )]);
    assert_eq!(
        f.get("/x").await.expect_err("refused"),
        ForgeErrorKind::Forbidden("Must have admin rights to Repository.".to_owned())
    );
    assert_eq!(f.waits(), Vec::<u64>::new());
}

#[tokio::test]
async fn a_limit_that_says_nothing_waits_the_forge_s_least_wait_then_backs_off() {
    let secondary = || {
        answer(
            403,
            r#"{"message":"You have exceeded a secondary rate limit. Please wait a few minutes before you try again."}"#,
        )
    };
    let f = github(vec![secondary(), answer(429, ""), ok()]);
    f.get("/x").await.expect("succeeds after two waits");
    assert_eq!(f.waits(), vec![60, 120]);
    assert_eq!(f.tries(), 3);
    let f = gitlab(vec![answer(429, ""), answer(429, ""), ok()]);
    f.get("/x").await.expect("succeeds after two waits");
    assert_eq!(f.waits(), vec![1, 2]);
}

#[tokio::test]
async fn a_rate_limit_is_given_up_after_three_waits() {
    let limited = || with_header(answer(429, ""), "retry-after", "5");
    let f = github(vec![limited(), limited(), limited(), limited(), ok()]);
    assert_eq!(
        f.get("/x").await.expect_err("still limited"),
        ForgeErrorKind::RateLimited {
            retry_after: Duration::from_secs(5)
        }
    );
    assert_eq!(f.waits(), vec![5, 5, 5]);
    assert_eq!(f.tries(), 4);
}

#[tokio::test]
async fn a_wait_longer_than_the_policy_allows_is_not_slept() {
    let f = github(vec![
        with_header(answer(403, ""), "retry-after", "3600"),
        ok(),
    ]);
    let e = f.get("/x").await.expect_err("rate limited");
    assert_eq!(
        e,
        ForgeErrorKind::RateLimited {
            retry_after: Duration::from_secs(3600)
        }
    );
    assert_eq!(e.to_string(), "rate limited, retry after 3600s");
    assert_eq!(f.waits(), Vec::<u64>::new());
    // GitLab's limits reset each minute: a longer wait is returned.
    let f = gitlab(vec![
        with_header(answer(429, ""), "retry-after", "61"),
        ok(),
    ]);
    assert!(matches!(
        f.get("/x").await,
        Err(ForgeErrorKind::RateLimited { .. })
    ));
    assert_eq!(f.tries(), 1);
}

#[tokio::test]
async fn redirects_are_followed_on_the_api_s_host_only() {
    let moved = |status, to: &str| with_header(answer(status, ""), "location", to);
    let f = github(vec![
        moved(301, "https://api.github.com/repositories/12"),
        ok(),
        moved(307, "/repositories/12"),
        ok(),
        moved(301, "http://elsewhere.example/repositories/12"),
        moved(301, "http://api.github.com/repositories/12"),
    ]);
    assert_eq!(
        f.get("/repos/o/old").await.expect("followed").body,
        br#"{"ok":true}"#
    );
    let body = serde_json::json!({"body": "x"});
    f.api
        .send(Method::POST, "/repos/o/post", &auth(), Some(&body))
        .await
        .expect("a 307 keeps the method");
    {
        let seen = f.seen.lock().expect("the log");
        assert_eq!(
            (&seen[3].method, seen[3].path.as_str()),
            (&Method::POST, "/repositories/12")
        );
        assert_eq!(seen[3].body.as_ref(), Some(&body));
        assert_eq!(seen[3].auth, "Bearer test-token");
    }
    assert_eq!(
        f.get("/repos/o/away").await.expect_err("another host"),
        ForgeErrorKind::Invalid(
            "redirected to http://elsewhere.example/repositories/12, which is not followed"
                .to_owned()
        )
    );
    assert!(
        matches!(
            f.get("/repos/o/downgraded").await,
            Err(ForgeErrorKind::Invalid(_))
        ),
        "https to http is not followed"
    );
    // A 301 on a POST is not followed: the client would have to turn it into a GET.
    let f = github(vec![moved(301, "/repositories/12")]);
    assert!(matches!(
        f.api.send(Method::POST, "/p", &auth(), None).await,
        Err(ForgeErrorKind::Invalid(_))
    ));
}

#[tokio::test]
async fn a_redirect_loop_ends() {
    let f = github(
        (0..10)
            .map(|_| with_header(answer(301, ""), "location", "/repos/o/loop"))
            .collect(),
    );
    assert!(matches!(
        f.get("/repos/o/loop").await,
        Err(ForgeErrorKind::Invalid(_))
    ));
    assert_eq!(f.tries(), 1 + MAX_REDIRECTS as usize);
}

#[tokio::test]
async fn a_redirect_under_a_base_path_keeps_to_it() {
    let f = gitlab(vec![
        with_header(
            answer(301, ""),
            "location",
            "https://gitlab.example/api/v4/projects/12",
        ),
        ok(),
        with_header(
            answer(301, ""),
            "location",
            "https://gitlab.example/other/12",
        ),
    ]);
    f.get("/projects/acme%2Fold").await.expect("followed");
    assert_eq!(f.paths(), ["/projects/acme%2Fold", "/projects/12"]);
    assert!(matches!(f.get("/x").await, Err(ForgeErrorKind::Invalid(_))));
}

#[test]
fn api_paths_stay_on_the_api() {
    let f = gitlab(vec![]);
    assert_eq!(
        f.api
            .api_path("https://gitlab.example/api/v4/projects?page=2")
            .as_deref(),
        Some("/projects?page=2")
    );
    assert_eq!(
        f.api.api_path("/projects?page=2").as_deref(),
        Some("/projects?page=2")
    );
    assert_eq!(f.api.api_path("https://gitlab.example/api/v40/x"), None);
    assert_eq!(f.api.api_path("https://evil.example/api/v4/x"), None);
    assert_eq!(f.api.api_path("http://gitlab.example/api/v4/x"), None);
}

#[test]
fn the_credentials_never_show_in_debug() {
    let auth = Auth::bearer("ghs_secret").expect("a header value");
    assert_eq!(format!("{auth:?}"), "Auth(authorization: ***)");
    assert!(auth.value().is_sensitive());
    assert!(Auth::bearer("line\nbreak").is_none());
}

#[test]
fn rate_limits_are_read_from_either_forge_s_headers() {
    let now = SystemTime::now();
    let secs = now
        .duration_since(UNIX_EPOCH)
        .expect("after 1970")
        .as_secs();
    let headers = |pairs: &[(&'static str, String)]| {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(*name, value.parse().expect("a header value"));
        }
        map
    };
    let reset = headers(&[
        ("x-ratelimit-remaining", "0".to_owned()),
        ("x-ratelimit-reset", (secs + 300).to_string()),
    ]);
    assert_eq!(
        rate_limit(StatusCode::FORBIDDEN, &reset, "", now),
        Some(Limit::For(Duration::from_secs(301)))
    );
    let gitlab = headers(&[
        ("ratelimit-remaining", "0".to_owned()),
        ("ratelimit-reset", (secs + 20).to_string()),
    ]);
    assert_eq!(
        rate_limit(StatusCode::TOO_MANY_REQUESTS, &gitlab, "", now),
        Some(Limit::For(Duration::from_secs(21)))
    );
    let long = headers(&[("retry-after", "86400".to_owned())]);
    assert_eq!(
        rate_limit(StatusCode::TOO_MANY_REQUESTS, &long, "", now),
        Some(Limit::For(Duration::from_secs(86400)))
    );
    assert_eq!(
        rate_limit(StatusCode::INTERNAL_SERVER_ERROR, &long, "", now),
        None
    );
    let forbidden = headers(&[("x-ratelimit-remaining", "4999".to_owned())]);
    assert_eq!(rate_limit(StatusCode::FORBIDDEN, &forbidden, "", now), None);
    assert_eq!(
        rate_limit(
            StatusCode::FORBIDDEN,
            &forbidden,
            "secondary rate limit",
            now
        ),
        Some(Limit::Unsaid)
    );
    assert_eq!(
        rate_limit(StatusCode::TOO_MANY_REQUESTS, &HeaderMap::new(), "", now),
        Some(Limit::Unsaid)
    );
    // A reset in the past is a second from now.
    let past = headers(&[
        ("x-ratelimit-remaining", "0".to_owned()),
        ("x-ratelimit-reset", "1".to_owned()),
    ]);
    assert_eq!(
        rate_limit(StatusCode::FORBIDDEN, &past, "", now),
        Some(Limit::For(Duration::from_secs(1)))
    );
}

#[test]
fn segments_and_queries_are_encoded_for_any_forge() {
    assert_eq!(encode("group/sub/project"), "group%2Fsub%2Fproject");
    assert_eq!(encode("a b+é.toml"), "a%20b%2B%C3%A9.toml");
    assert_eq!(encode("plain-name_1.0~x"), "plain-name_1.0~x");
    assert_eq!(encode("../x?y#z"), "..%2Fx%3Fy%23z");
    assert_eq!(encode("forgeward:flagged"), "forgeward%3Aflagged");
    assert_eq!(
        with_query(
            "/files/a",
            &[("ref", "feature/x y".to_owned()), ("n", "1".to_owned())]
        ),
        "/files/a?ref=feature%2Fx%20y&n=1"
    );
    assert_eq!(
        with_query("/notes?sort=asc", &[("page", "2".to_owned())]),
        "/notes?sort=asc&page=2"
    );
    assert_eq!(with_query("/x", &[]), "/x");
}

#[test]
fn messages_are_one_short_line() {
    assert_eq!(message_line("a\nb", 10), "a; b");
    assert_eq!(
        message_line(&"x".repeat(12), 10),
        format!("{}…", "x".repeat(10))
    );
    assert_eq!(message_line("  \n", 10), "no message");
    // Cut on a character, not a byte.
    assert_eq!(message_line("ééé", 2), "éé…");
    let long = format!(r#"{{"message":"{}\nsecond line"}}"#, "x".repeat(400));
    let message = error_message(long.as_bytes());
    assert!(!message.contains('\n'));
    assert_eq!(message.chars().count(), MAX_MESSAGE_LEN + 1);
    assert!(message.ends_with('…'));
    assert_eq!(error_message(b""), "no message");
    assert_eq!(error_message(b"{}"), "no message");
}

#[test]
fn retry_after_and_backoff() {
    let mut headers = HeaderMap::new();
    assert_eq!(retry_after(&headers), None);
    headers.insert("retry-after", " 7 ".parse().expect("a header value"));
    assert_eq!(retry_after(&headers), Some(Duration::from_secs(7)));
    headers.insert("retry-after", "soon".parse().expect("a header value"));
    assert_eq!(retry_after(&headers), None);
    assert_eq!(backoff(Duration::from_secs(1), 3), Duration::from_secs(8));
    assert_eq!(
        backoff(Duration::from_secs(1), 1000),
        Duration::from_secs(65536)
    );
}

#[test]
fn a_decode_error_names_the_path_and_never_the_value() {
    #[derive(Debug, serde::Deserialize)]
    struct Token {
        #[allow(dead_code)]
        token: u64,
    }
    let e = decode::<Token>(br#"{"token":"ghs_secret"}"#).expect_err("a string");
    assert_eq!(
        e,
        ForgeErrorKind::Decode("at token: a value of the wrong type".to_owned())
    );
    let e = decode::<Token>(b"{}").expect_err("missing");
    assert!(e.to_string().contains("at .: missing field `token`"), "{e}");
    let e = decode::<Token>(b"<html>").expect_err("not JSON");
    assert_eq!(e, ForgeErrorKind::Decode("at .: not JSON".to_owned()));
}
