//! GitLab's wire against a real socket: the token in `PRIVATE-TOKEN` only, queries encoded, and
//! no redirect followed by reqwest itself, so the token never reaches another host.

use super::*;
use crate::forge::http::RetryPolicy;
use crate::forge::test_server::{Reply, TestServer, recording_sleeper};

const TOKEN: &str = "glpat-test-only";

fn transport(url: &str) -> Transport {
    let (sleep, _) = recording_sleeper();
    let retry = Retry {
        policy: RetryPolicy::gitlab(),
        sleep,
    };
    Transport::new(url, &Secret::new(TOKEN.to_owned()), retry).expect("a transport")
}

fn repo() -> RepoName {
    RepoName("acme/widgets".to_owned())
}

#[tokio::test]
async fn the_token_goes_in_private_token_and_the_query_is_encoded() {
    let server = TestServer::scripted(vec![Reply::new(200, r#"{"ok":true}"#)]).await;
    let repo = repo();
    let call = Call::new(
        &repo,
        Method::GET,
        "GET /projects/:id/repository/files/:file_path",
        "/projects/acme%2Fwidgets/repository/files/a%2Fb.toml".to_owned(),
    )
    .query("ref", "feature/a b");
    transport(&server.url)
        .success(&call)
        .await
        .expect("answered");
    let seen = server.seen();
    assert_eq!(
        seen[0].uri,
        "/api/v4/projects/acme%2Fwidgets/repository/files/a%2Fb.toml?ref=feature%2Fa%20b"
    );
    assert_eq!(seen[0].private_token.as_deref(), Some(TOKEN));
    assert_eq!(seen[0].authorization, None);
}

#[tokio::test]
async fn a_redirect_to_another_host_is_not_followed_with_the_token() {
    let elsewhere = TestServer::scripted(vec![Reply::new(200, "{}")]).await;
    let location = format!("{}/api/v4/projects/1", elsewhere.url);
    let server = TestServer::scripted(vec![Reply::new(301, "").header("location", location)]).await;
    let repo = repo();
    let call = Call::new(
        &repo,
        Method::GET,
        "GET /projects/:id",
        "/projects/acme%2Fwidgets".to_owned(),
    );
    let err = transport(&server.url)
        .success(&call)
        .await
        .expect_err("not followed");
    assert!(matches!(err.kind, ForgeErrorKind::Invalid(_)), "{err}");
    assert!(!err.to_string().contains(TOKEN), "{err}");
    assert!(elsewhere.seen().is_empty(), "the other host saw a request");
}

#[tokio::test]
async fn a_refusal_is_an_error_naming_the_call_with_gitlab_s_message() {
    let server = TestServer::scripted(vec![Reply::json(
        403,
        serde_json::json!({"message": "403 Forbidden - You are not allowed to push"}),
    )])
    .await;
    let repo = repo();
    let call = Call::new(
        &repo,
        Method::POST,
        "POST /projects/:id/merge_requests",
        "/projects/acme%2Fwidgets/merge_requests".to_owned(),
    );
    let err = transport(&server.url)
        .success(&call)
        .await
        .expect_err("refused");
    assert_eq!(
        err.to_string(),
        "gitlab POST /projects/:id/merge_requests on acme/widgets: forbidden: 403 Forbidden - You are not allowed to push"
    );
}

#[test]
fn a_url_that_is_not_absolute_is_refused() {
    let (sleep, _) = recording_sleeper();
    let retry = Retry {
        policy: RetryPolicy::gitlab(),
        sleep,
    };
    let err = Transport::new("gitlab.example", &Secret::new(TOKEN.to_owned()), retry)
        .err()
        .expect("refused");
    assert!(err.contains("not an absolute http(s) URL"), "{err}");
}
