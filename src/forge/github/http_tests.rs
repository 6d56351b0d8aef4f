//! GitHub's wire against a real socket: what a request carries, a network error, and that
//! octocrab follows no redirect itself (the shared layer does, on the API's host only). The
//! retry and rate-limit rules are the shared layer's, tested in `forge::http`.

use std::sync::Arc;
use std::time::Duration;

use http::{HeaderMap, HeaderValue, Method};

use super::*;
use crate::forge::api::ForgeErrorKind;
use crate::forge::http::MAX_REDIRECTS;
use crate::forge::test_server::{Reply, TestServer, recording_sleeper, waits};

fn auth() -> Auth {
    Auth::bearer("test-token").expect("a header value")
}

fn ok() -> Reply {
    Reply::new(200, r#"{"ok":true}"#)
}

fn retry() -> (Retry, Arc<std::sync::Mutex<Vec<Duration>>>) {
    let (sleep, waits) = recording_sleeper();
    (
        Retry {
            policy: RetryPolicy::github(),
            sleep,
        },
        waits,
    )
}

#[tokio::test]
async fn network_errors_are_retried_then_reported() {
    // A port nothing listens on: bound, then released.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("address"));
    drop(listener);
    let (retry, recorded) = retry();
    let api = api(&url, retry).expect("api");
    let e = api
        .send(Method::GET, "/repos/o/r", &auth(), None)
        .await
        .expect_err("nothing listens");
    assert!(matches!(e, ForgeErrorKind::Network(_)), "{e:?}");
    assert_eq!(waits(&recorded), vec![1, 2, 4]);
}

#[tokio::test]
async fn requests_carry_the_credentials_json_and_github_media_type() {
    let server = TestServer::scripted(vec![ok()]).await;
    let api = api(&server.url, retry().0).expect("api");
    let body = serde_json::json!({"body": "hi"});
    api.send(
        Method::POST,
        "/repos/o/r/issues/1/comments",
        &auth(),
        Some(&body),
    )
    .await
    .expect("ok");
    let seen = server.seen();
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
    let api = api(&server.url, retry().0).expect("api");
    let token = auth();
    let get = |path: &'static str| api.send(Method::GET, path, &token, None);
    assert_eq!(
        get("/repos/o/old").await.expect("followed").body,
        br#"{"ok":true}"#
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
fn graphql_lives_beside_the_rest_api() {
    assert_eq!(
        graphql_url("https://api.github.com"),
        "https://api.github.com"
    );
    assert_eq!(
        graphql_url("https://ghe.example/api/v3/"),
        "https://ghe.example/api"
    );
    assert_eq!(graphql_url("http://127.0.0.1:9/"), "http://127.0.0.1:9");
}
