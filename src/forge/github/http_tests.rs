use std::time::{Duration, SystemTime, UNIX_EPOCH};

use http::{HeaderMap, HeaderValue, Method};

use super::*;
use crate::forge::github::test_server::{Reply, TestServer, recording_sleeper, waits};

struct Fixture {
    api: Api,
    server: TestServer,
    waits: Arc<std::sync::Mutex<Vec<Duration>>>,
}

async fn fixture(replies: Vec<Reply>) -> Fixture {
    let server = TestServer::scripted(replies).await;
    let (sleep, waits) = recording_sleeper();
    let retry = Retry {
        policy: RetryPolicy::default(),
        sleep,
    };
    let api = Api::new(&server.url, retry).expect("api");
    Fixture { api, server, waits }
}

fn auth() -> HeaderValue {
    HeaderValue::from_static("Bearer test-token")
}

impl Fixture {
    async fn get(&self) -> Result<Answer, ForgeErrorKind> {
        self.api
            .send(Method::GET, "/repos/o/r", &auth(), None)
            .await
    }

    fn requests(&self) -> usize {
        self.server.seen().len()
    }

    fn waits(&self) -> Vec<u64> {
        waits(&self.waits)
    }
}

fn ok() -> Reply {
    Reply::new(200, r#"{"ok":true}"#)
}

#[tokio::test]
async fn server_errors_are_retried_with_doubling_backoff() {
    let f = fixture(vec![Reply::new(502, ""), Reply::new(503, ""), ok()]).await;
    let answer = f.get().await.expect("the third try succeeds");
    assert_eq!(answer.body, r#"{"ok":true}"#);
    assert_eq!(f.requests(), 3);
    assert_eq!(f.waits(), vec![1, 2]);
}

#[tokio::test]
async fn server_errors_give_up_after_four_tries() {
    let f = fixture(vec![Reply::new(500, ""); 5]).await;
    assert_eq!(
        f.get().await.expect_err("fails"),
        ForgeErrorKind::Server(500)
    );
    assert_eq!(f.requests(), 4);
    assert_eq!(f.waits(), vec![1, 2, 4]);
}

#[tokio::test]
async fn other_client_errors_are_never_retried() {
    let cases = [
        (404, r#"{"message":"Not Found"}"#, ForgeErrorKind::NotFound),
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
            409,
            r#"{"message":"Git Repository is empty."}"#,
            ForgeErrorKind::Conflict("Git Repository is empty.".to_owned()),
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
            "not json",
            ForgeErrorKind::Invalid("not json".to_owned()),
        ),
    ];
    for (status, body, kind) in cases {
        let f = fixture(vec![Reply::new(status, body), ok()]).await;
        assert_eq!(f.get().await.expect_err("fails"), kind, "{status} {body}");
        assert_eq!(f.requests(), 1, "{status} {body}");
        assert_eq!(f.waits(), Vec::<u64>::new(), "{status} {body}");
    }
}

#[tokio::test]
async fn retry_after_is_waited_exactly() {
    let f = fixture(vec![
        Reply::new(429, r#"{"message":"slow down"}"#).header("retry-after", "7"),
        ok(),
    ])
    .await;
    f.get().await.expect("succeeds after the wait");
    assert_eq!(f.waits(), vec![7]);
}

#[tokio::test]
async fn an_exhausted_primary_limit_waits_until_its_reset() {
    let reset = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("after 1970")
        .as_secs()
        + 30;
    let f = fixture(vec![
        Reply::new(
            403,
            r#"{"message":"API rate limit exceeded for installation ID 1."}"#,
        )
        .header("x-ratelimit-remaining", "0")
        .header("x-ratelimit-reset", reset.to_string()),
        ok(),
    ])
    .await;
    f.get().await.expect("succeeds after the reset");
    let waited = f.waits();
    assert_eq!(waited.len(), 1);
    assert!((30..=32).contains(&waited[0]), "{waited:?}");
}

#[tokio::test]
async fn a_secondary_limit_waits_a_minute_then_backs_off() {
    let secondary = || {
        Reply::new(
            403,
            r#"{"message":"You have exceeded a secondary rate limit. Please wait a few minutes before you try again."}"#,
        )
    };
    let f = fixture(vec![secondary(), Reply::new(429, ""), ok()]).await;
    f.get().await.expect("succeeds after two waits");
    assert_eq!(f.waits(), vec![60, 120]);
    assert_eq!(f.requests(), 3);
}

#[tokio::test]
async fn a_rate_limit_is_given_up_after_three_waits() {
    let limited = || Reply::new(429, "").header("retry-after", "5");
    let f = fixture(vec![limited(), limited(), limited(), limited(), ok()]).await;
    assert_eq!(
        f.get().await.expect_err("still limited"),
        ForgeErrorKind::RateLimited {
            retry_after: Duration::from_secs(5)
        }
    );
    assert_eq!(f.waits(), vec![5, 5, 5]);
    assert_eq!(f.requests(), 4);
}

#[tokio::test]
async fn a_wait_longer_than_the_policy_allows_is_not_slept() {
    let f = fixture(vec![
        Reply::new(403, "").header("retry-after", "3600"),
        ok(),
    ])
    .await;
    let e = f.get().await.expect_err("rate limited");
    assert_eq!(
        e,
        ForgeErrorKind::RateLimited {
            retry_after: Duration::from_secs(3600)
        }
    );
    assert_eq!(e.to_string(), "rate limited, retry after 3600s");
    assert_eq!(f.waits(), Vec::<u64>::new());
}

#[tokio::test]
async fn network_errors_are_retried_then_reported() {
    // A port nothing listens on: bound, then released.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("address"));
    drop(listener);
    let (sleep, recorded) = recording_sleeper();
    let api = Api::new(
        &url,
        Retry {
            policy: RetryPolicy::default(),
            sleep,
        },
    )
    .expect("api");
    let e = api
        .send(Method::GET, "/repos/o/r", &auth(), None)
        .await
        .expect_err("nothing listens");
    assert!(matches!(e, ForgeErrorKind::Network(_)), "{e:?}");
    assert_eq!(waits(&recorded), vec![1, 2, 4]);
}

#[tokio::test]
async fn requests_carry_the_credentials_json_and_github_media_type() {
    let f = fixture(vec![ok()]).await;
    let body = serde_json::json!({"body": "hi"});
    f.api
        .send(
            Method::POST,
            "/repos/o/r/issues/1/comments",
            &auth(),
            Some(&body),
        )
        .await
        .expect("ok");
    let seen = f.server.seen();
    assert_eq!(seen[0].method, "POST");
    assert_eq!(seen[0].uri, "/repos/o/r/issues/1/comments");
    assert_eq!(seen[0].authorization.as_deref(), Some("Bearer test-token"));
    assert_eq!(
        seen[0].accept.as_deref(),
        Some("application/vnd.github+json, application/json")
    );
    assert_eq!(seen[0].json(), body);
}

#[tokio::test]
async fn a_renamed_repository_is_followed_on_the_same_host_only() {
    let server = TestServer::start(|seen| match seen.uri.as_str() {
        "/repos/o/old" => Reply::new(301, "").header("location", "/repositories/12"),
        "/repositories/12" => ok(),
        "/repos/o/post" => Reply::new(307, "").header("location", "/repositories/12"),
        "/repos/o/away" => {
            Reply::new(301, "").header("location", "http://elsewhere.example/repositories/12")
        }
        _ => Reply::new(301, "").header("location", "/repos/o/loop"),
    })
    .await;
    let api = Api::new(&server.url, Retry::default()).expect("api");
    let token = auth();
    let get = |path: &'static str| api.send(Method::GET, path, &token, None);
    assert_eq!(
        get("/repos/o/old").await.expect("followed").body,
        r#"{"ok":true}"#
    );
    let body = serde_json::json!({"body": "x"});
    api.send(Method::POST, "/repos/o/post", &auth(), Some(&body))
        .await
        .expect("a 307 keeps the method");
    let seen = server.seen();
    assert_eq!(
        (seen[3].method.as_str(), seen[3].uri.as_str()),
        ("POST", "/repositories/12")
    );
    assert_eq!(seen[3].json(), body);
    assert_eq!(seen[3].authorization.as_deref(), Some("Bearer test-token"));
    let e = get("/repos/o/away").await.expect_err("another host");
    assert_eq!(
        e,
        ForgeErrorKind::Invalid(
            "redirected to http://elsewhere.example/repositories/12, which is not followed"
                .to_owned()
        )
    );
    let e = get("/repos/o/loop").await.expect_err("a loop");
    assert!(matches!(e, ForgeErrorKind::Invalid(_)), "{e:?}");
    // Two for each followed redirect, one for the other host, and the loop: its first request and
    // one for each redirect followed.
    assert_eq!(server.seen().len(), 2 + 2 + 1 + 1 + MAX_REDIRECTS as usize);
}

#[test]
fn the_next_page_is_read_from_the_link_header() {
    let mut headers = HeaderMap::new();
    headers.insert(
        http::header::LINK,
        HeaderValue::from_static(
            r#"<https://api.github.com/repositories/1/issues/2/comments?page=1>; rel="prev", <https://api.github.com/repositories/1/issues/2/comments?page=3>; rel="next", <https://api.github.com/repositories/1/issues/2/comments?page=9>; rel="last""#,
        ),
    );
    assert_eq!(
        next_link(&headers).as_deref(),
        Some("https://api.github.com/repositories/1/issues/2/comments?page=3")
    );
    headers.insert(
        http::header::LINK,
        HeaderValue::from_static(r#"<https://api.github.com/x?page=1>; rel="first""#),
    );
    assert_eq!(next_link(&headers), None);
    assert_eq!(next_link(&HeaderMap::new()), None);
}

#[test]
fn encoding_keeps_only_unreserved_characters() {
    assert_eq!(encode("forgeward:flagged"), "forgeward%3Aflagged");
    assert_eq!(encode("good first issue"), "good%20first%20issue");
    assert_eq!(encode("ünï/x?y&z"), "%C3%BCn%C3%AF%2Fx%3Fy%26z");
    assert_eq!(encode("a-b_c.d~e"), "a-b_c.d~e");
}

#[test]
fn long_forge_messages_are_cut_to_one_line() {
    let long = format!(r#"{{"message":"{}\nsecond line"}}"#, "x".repeat(400));
    let message = error_message(&long);
    assert!(!message.contains('\n'));
    assert_eq!(message.chars().count(), MAX_MESSAGE_LEN + 1);
    assert!(message.ends_with('…'));
    assert_eq!(error_message(""), "no message");
}
