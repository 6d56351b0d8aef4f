use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::Value;

use super::*;
use crate::forge::api::{
    CheckConclusion, CheckFlag, CheckResult, CheckStart, FlagLevel, ReviewFlag, StatusState,
};
use crate::forge::github::http::RetryPolicy;
use crate::forge::test_server::{Reply, Seen, TestServer, recording_sleeper};

const TOKEN: &str = "ghp_test_only_secret_value";
const PRIVATE_KEY: &str = "tests/data/github-app/test-only-private-key.pem";

fn repo() -> RepoName {
    RepoName("octo/hello".to_owned())
}

fn config(url: &str, auth: GithubAuth) -> GithubConfig {
    GithubConfig {
        api_url: url.to_owned(),
        web_url: "https://github.example/".to_owned(),
        git_url: "file:///tmp/remotes/".to_owned(),
        auth,
        flagged_conclusion: FlaggedConclusion::Failure,
    }
}

fn client(server: &TestServer) -> Client {
    client_with(server, GithubAuth::Token(Secret::new(TOKEN.to_owned())))
}

fn client_with(server: &TestServer, auth: GithubAuth) -> Client {
    let (sleep, _) = recording_sleeper();
    let retry = Retry {
        policy: RetryPolicy::github(),
        sleep,
    };
    Client::with_retry(config(&server.url, auth), retry).expect("client")
}

fn app() -> GithubAuth {
    let app = GithubApp::load(42, Path::new(PRIVATE_KEY)).unwrap_or_else(|e| panic!("{e}"));
    GithubAuth::App(Arc::new(app))
}

fn comment(id: u64, login: &str, body: &str) -> Value {
    json!({"id": id, "user": {"login": login, "id": 7}, "body": body})
}

fn pull_json(number: u64) -> Value {
    json!({
        "number": number, "title": "Fix it", "html_url": "https://github.example/octo/hello/pull/8",
        "draft": true,
        "head": {"ref": "forgeward/7", "sha": "aaa", "repo": {"full_name": "octo/hello"}},
        "base": {"ref": "main", "sha": "bbb", "repo": {"full_name": "octo/hello"}},
    })
}

#[tokio::test]
async fn urls_and_credentials_in_token_mode() {
    let server = TestServer::scripted(vec![]).await;
    let client = client(&server);
    assert_eq!(
        client.git_url(&repo()),
        "file:///tmp/remotes/octo/hello.git"
    );
    assert_eq!(client.web_url(&repo()), "https://github.example/octo/hello");
    let credentials = client.git_credentials(&repo()).await.expect("credentials");
    assert_eq!(credentials.username, "x-access-token");
    assert_eq!(credentials.password, TOKEN);
    let shown = format!(
        "{client:?} {:?}",
        config(
            &server.url,
            GithubAuth::Token(Secret::new(TOKEN.to_owned()))
        )
    );
    assert!(!shown.contains(TOKEN), "{shown}");
    assert!(server.seen().is_empty());
}

#[tokio::test]
async fn comments_follow_every_page_on_the_api_host_only() {
    let server = TestServer::start(|seen| match seen.uri.as_str() {
        "/repos/octo/hello/issues/7/comments?per_page=100&page=1" => {
            Reply::json(200, json!([comment(1, "alice", "first"), comment(2, "bob", "second")]))
                .header(
                    "link",
                    "<http://127.0.0.1:1/elsewhere>; rel=\"last\", </repositories/9/issues/7/comments?per_page=100&page=2>; rel=\"next\"",
                )
        }
        "/repositories/9/issues/7/comments?per_page=100&page=2" => {
            Reply::json(200, json!([{"id": 3, "user": null, "body": "third"}]))
                .header("link", "<http://elsewhere.example/steal?page=3>; rel=\"next\"")
        }
        _ => Reply::new(404, r#"{"message":"Not Found"}"#),
    })
    .await;
    let comments = client(&server)
        .comments(&repo(), Thread::PullRequest, Number(7))
        .await
        .expect("comments");
    let got: Vec<(u64, &str, &str)> = comments
        .iter()
        .map(|c| (c.id, c.author.as_str(), c.body.as_str()))
        .collect();
    assert_eq!(
        got,
        vec![
            (1, "alice", "first"),
            (2, "bob", "second"),
            (3, "ghost", "third")
        ]
    );
    assert_eq!(
        server.seen().len(),
        2,
        "the other host's page is not fetched"
    );
}

#[tokio::test]
async fn files_are_decoded_and_absent_ones_are_none() {
    let server = TestServer::start(|seen| match seen.uri.as_str() {
        "/repos/octo/hello/contents/.forgeward.toml?ref=main" => Reply::json(
            200,
            json!({"type": "file", "sha": "s1", "size": 12, "encoding": "base64",
                   "content": "W2NoZWNrXQpt\nb2RlID0gMQo=\n"}),
        ),
        "/repos/octo/hello/contents/docs/a%20b.md?ref=feature%2Fx" => Reply::json(
            200,
            json!({"type": "file", "sha": "big", "size": 2000000, "encoding": "none", "content": ""}),
        ),
        "/repos/octo/hello/git/blobs/big" => Reply::json(
            200,
            json!({"sha": "big", "size": 5, "encoding": "base64", "content": "aGVsbG8="}),
        ),
        "/repos/octo/hello/contents/src?ref=main" => {
            Reply::json(200, json!([{"type": "file", "name": "lib.rs"}]))
        }
        _ => Reply::new(404, r#"{"message":"Not Found"}"#),
    })
    .await;
    let client = client(&server);
    let read = |path: &'static str, rev: &'static str| {
        let client = &client;
        async move { client.read_file(&repo(), path, rev).await.expect("read") }
    };
    assert_eq!(
        read(".forgeward.toml", "main").await.as_deref(),
        Some(&b"[check]\nmode = 1\n"[..])
    );
    assert_eq!(
        read("docs/a b.md", "feature/x").await.as_deref(),
        Some(&b"hello"[..])
    );
    assert_eq!(read("src", "main").await, None);
    assert_eq!(read("missing.toml", "main").await, None);
}

#[tokio::test]
async fn permissions_read_the_role_and_unknown_people_have_none() {
    let server = TestServer::start(|seen| {
        let (permission, role) = match seen.uri.as_str() {
            "/repos/octo/hello/collaborators/mia/permission" => ("write", "maintain"),
            "/repos/octo/hello/collaborators/tri/permission" => ("read", "triage"),
            "/repos/octo/hello/collaborators/cus/permission" => ("write", "security-reviewer"),
            "/repos/octo/hello/collaborators/adm/permission" => ("admin", "admin"),
            _ => return Reply::new(404, r#"{"message":"Not Found"}"#),
        };
        Reply::json(
            200,
            json!({"permission": permission, "role_name": role, "user": null}),
        )
    })
    .await;
    let client = client(&server);
    let cases = [
        ("mia", Permission::Maintain),
        ("tri", Permission::Triage),
        ("cus", Permission::Write),
        ("adm", Permission::Admin),
        ("nobody", Permission::None),
    ];
    for (login, expected) in cases {
        let actor = Actor {
            login: login.to_owned(),
            id: 1,
        };
        assert_eq!(
            client.permission(&repo(), &actor).await.expect(login),
            expected,
            "{login}"
        );
    }
}

#[tokio::test]
async fn a_missing_label_is_not_an_error_and_names_are_encoded() {
    let server = TestServer::scripted(vec![
        Reply::new(404, r#"{"message":"Label does not exist"}"#),
        Reply::json(200, json!([])),
    ])
    .await;
    let client = client(&server);
    client
        .remove_label(&repo(), Thread::Issue, Number(7), "forgeward:flagged")
        .await
        .expect("absent is fine");
    client
        .add_labels(
            &repo(),
            Thread::Issue,
            Number(7),
            &["forgeward:flagged".to_owned()],
        )
        .await
        .expect("added");
    client
        .add_labels(&repo(), Thread::Issue, Number(7), &[])
        .await
        .expect("nothing to add");
    let seen = server.seen();
    assert_eq!(seen.len(), 2, "no request for no labels");
    assert_eq!(seen[0].method, "DELETE");
    assert_eq!(
        seen[0].uri,
        "/repos/octo/hello/issues/7/labels/forgeward%3Aflagged"
    );
    assert_eq!(seen[1].json(), json!({"labels": ["forgeward:flagged"]}));
}

#[tokio::test]
async fn a_review_holds_line_flags_and_lists_the_others_in_its_body() {
    let server = TestServer::scripted(vec![Reply::json(200, json!({"id": 80}))]).await;
    let pr = PullJson::into_domain(serde_json::from_value(pull_json(8)).expect("pull"));
    let review = Review {
        body: "forgeward found 3 signs.".to_owned(),
        flags: vec![
            ReviewFlag {
                path: "tests/test_x.py".to_owned(),
                line: Some(12),
                side: crate::forge::api::Side::New,
                body: "skip".to_owned(),
            },
            ReviewFlag {
                path: "sqlglot.py".to_owned(),
                line: None,
                side: crate::forge::api::Side::New,
                body: "shadows a package".to_owned(),
            },
            ReviewFlag {
                path: "a.py.bak".to_owned(),
                line: None,
                side: crate::forge::api::Side::New,
                body: "stray backup".to_owned(),
            },
        ],
    };
    client(&server)
        .post_review(&repo(), &pr, &review)
        .await
        .expect("posted");
    let seen = server.seen();
    assert_eq!(seen[0].uri, "/repos/octo/hello/pulls/8/reviews");
    assert_eq!(
        seen[0].json(),
        json!({
            "commit_id": "aaa",
            "body": "forgeward found 3 signs.\n\n- `sqlglot.py`: shadows a package\n- `a.py.bak`: stray backup",
            "event": "COMMENT",
            "comments": [{"path": "tests/test_x.py", "line": 12, "side": "RIGHT", "body": "skip"}],
        })
    );
}

#[tokio::test]
async fn pull_requests_are_found_created_and_conflicts_named() {
    let server = TestServer::start(|seen| match (seen.method.as_str(), seen.uri.as_str()) {
        ("GET", "/repos/octo/hello/pulls?head=octo%3Aforgeward%2F7&state=open&per_page=100") => {
            Reply::json(200, json!([pull_json(8)]))
        }
        ("GET", _) => Reply::json(200, json!([])),
        ("POST", _) => Reply::json(
            422,
            json!({"message": "Validation Failed", "errors": [{"resource": "PullRequest", "code": "custom", "message": "A pull request already exists for octo:forgeward/7."}]}),
        ),
        _ => Reply::new(500, ""),
    })
    .await;
    let client = client(&server);
    let found = client
        .find_pull_request(&repo(), "forgeward/7")
        .await
        .expect("found");
    let found = found.expect("one is open");
    assert_eq!(found.number, Number(8));
    assert_eq!(found.head_branch, "forgeward/7");
    assert_eq!(found.head_repo, repo());
    assert_eq!(
        (found.base_sha.0.as_str(), found.start_sha.0.as_str()),
        ("bbb", "bbb")
    );
    assert!(found.draft);
    assert_eq!(
        client
            .find_pull_request(&repo(), "other")
            .await
            .expect("none"),
        None
    );
    let spec = PullRequestSpec {
        head_branch: "forgeward/7".to_owned(),
        base_branch: "main".to_owned(),
        title: "Fix it".to_owned(),
        body: "Body".to_owned(),
        draft: true,
    };
    let e = client
        .create_pull_request(&repo(), &spec)
        .await
        .expect_err("exists");
    assert!(matches!(e.kind, ForgeErrorKind::Conflict(_)), "{e}");
    assert_eq!(
        e.to_string(),
        "github POST /repos/{owner}/{repo}/pulls on octo/hello: conflict: Validation Failed; A pull request already exists for octo:forgeward/7."
    );
    let posted = server
        .seen()
        .into_iter()
        .find(|s| s.method == "POST")
        .expect("posted");
    assert_eq!(
        posted.json(),
        json!({"title": "Fix it", "head": "forgeward/7", "base": "main", "body": "Body", "draft": true})
    );
}

fn thread(id: &str, resolved: bool, line: Option<u32>, original: u32, body: &str) -> Value {
    json!({
        "id": id, "isResolved": resolved, "path": "a.py", "line": line, "originalLine": original,
        "comments": {"nodes": [{"body": body}]},
    })
}

fn threads_page(nodes: Vec<Value>, next: Option<&str>) -> Reply {
    Reply::json(
        200,
        json!({"data": {"repository": {"pullRequest": {"reviewThreads": {
            "pageInfo": {"hasNextPage": next.is_some(), "endCursor": next},
            "nodes": nodes,
        }}}}}),
    )
}

#[tokio::test]
async fn posted_flags_are_review_threads_read_through_graphql_page_by_page() {
    let server = TestServer::scripted(vec![
        threads_page(
            vec![
                thread("PRRT_1", false, Some(3), 3, "one"),
                thread("PRRT_2", true, None, 9, "outdated and resolved"),
            ],
            Some("c1"),
        ),
        threads_page(vec![thread("PRRT_3", false, Some(5), 4, "three")], None),
    ])
    .await;
    let flags = client(&server)
        .review_flags(&repo(), Number(8))
        .await
        .expect("flags");
    let posted = |thread: &str, line, body: &str, resolved| PostedFlag {
        thread: thread.to_owned(),
        path: "a.py".to_owned(),
        line: Some(line),
        body: body.to_owned(),
        resolved,
    };
    assert_eq!(
        flags,
        vec![
            posted("PRRT_1", 3, "one", false),
            posted("PRRT_2", 9, "outdated and resolved", true),
            posted("PRRT_3", 5, "three", false),
        ]
    );
    let seen = server.seen();
    assert_eq!(seen.len(), 2);
    assert_eq!(
        (seen[0].method.as_str(), seen[0].uri.as_str()),
        ("POST", "/graphql")
    );
    assert_eq!(
        seen[0].authorization.as_deref(),
        Some(format!("Bearer {TOKEN}").as_str())
    );
    let variables = |s: &Seen| s.json()["variables"].clone();
    assert_eq!(
        variables(&seen[0]),
        json!({"owner": "octo", "name": "hello", "number": 8, "first": 100, "after": null})
    );
    assert_eq!(variables(&seen[1])["after"], "c1");
    assert!(
        seen[0].json()["query"]
            .as_str()
            .is_some_and(|q| q.contains("reviewThreads"))
    );
}

#[tokio::test]
async fn a_flag_is_resolved_as_its_review_thread() {
    let server = TestServer::scripted(vec![Reply::json(
        200,
        json!({"data": {"resolveReviewThread": {"thread": {"id": "PRRT_1", "isResolved": true}}}}),
    )])
    .await;
    let flag = PostedFlag {
        thread: "PRRT_1".to_owned(),
        path: "a.py".to_owned(),
        line: Some(3),
        body: "one".to_owned(),
        resolved: false,
    };
    client(&server)
        .resolve_flag(&repo(), Number(8), &flag, "no longer holds at `1a2b3c4`.")
        .await
        .expect("resolved");
    let seen = server.seen();
    assert_eq!(seen[0].uri, "/graphql");
    assert_eq!(seen[0].json()["variables"], json!({"thread": "PRRT_1"}));
    assert!(
        seen[0].json()["query"]
            .as_str()
            .is_some_and(|q| q.contains("resolveReviewThread"))
    );
}

#[tokio::test]
async fn graphql_errors_beside_a_200_are_errors() {
    let server = TestServer::scripted(vec![
        Reply::json(
            200,
            json!({"data": {"resolveReviewThread": null}, "errors": [
                {"type": "FORBIDDEN", "message": "Resource not accessible by integration"}
            ]}),
        ),
        Reply::json(
            200,
            json!({"data": {"repository": null}, "errors": [
                {"type": "NOT_FOUND", "message": "Could not resolve to a Repository"}
            ]}),
        ),
        Reply::json(200, json!({"nothing": true})),
    ])
    .await;
    let flag = PostedFlag {
        thread: "PRRT_1".to_owned(),
        path: "a.py".to_owned(),
        line: Some(3),
        body: "one".to_owned(),
        resolved: false,
    };
    let client = client(&server);
    let e = client
        .resolve_flag(&repo(), Number(8), &flag, "gone")
        .await
        .expect_err("forbidden");
    assert_eq!(
        e.to_string(),
        "github POST /graphql (resolveReviewThread) on octo/hello: forbidden: Resource not accessible by integration"
    );
    let e = client
        .review_flags(&repo(), Number(8))
        .await
        .expect_err("not found");
    assert!(matches!(e.kind, ForgeErrorKind::NotFound), "{e}");
    let e = client
        .review_flags(&repo(), Number(8))
        .await
        .expect_err("no data");
    assert!(matches!(e.kind, ForgeErrorKind::Decode(_)), "{e}");
}

#[tokio::test]
async fn a_token_sets_a_commit_status_cut_to_140_characters() {
    let server = TestServer::scripted(vec![Reply::json(201, json!({"id": 1}))]).await;
    let status = CommitStatus {
        state: StatusState::Error,
        description: "é".repeat(150),
        target_url: Some("https://bot.example/jobs/1".to_owned()),
    };
    client(&server)
        .set_commit_status(&repo(), &CommitSha("abc".to_owned()), &status)
        .await
        .expect("set");
    let seen = server.seen();
    assert_eq!(seen[0].uri, "/repos/octo/hello/statuses/abc");
    assert_eq!(
        seen[0].json(),
        json!({"state": "error", "description": "é".repeat(140), "context": "forgeward",
               "target_url": "https://bot.example/jobs/1"})
    );
}

/// A GitHub that knows one installation and hands out tokens expiring `lifetime` from now.
async fn app_server(lifetime: chrono::Duration) -> (TestServer, Arc<AtomicUsize>) {
    let tokens = Arc::new(AtomicUsize::new(0));
    let counter = tokens.clone();
    let server =
        TestServer::start(
            move |seen: &Seen| match (seen.method.as_str(), seen.uri.as_str()) {
                ("GET", "/repos/octo/hello/installation") => Reply::json(200, json!({"id": 99})),
                ("GET", "/repos/octo/other/installation") => {
                    Reply::new(404, r#"{"message":"Not Found"}"#)
                }
                ("GET", uri) if uri.contains("/check-runs?") => {
                    Reply::json(200, json!({"total_count": 0, "check_runs": []}))
                }
                ("POST", "/app/installations/99/access_tokens") => {
                    let n = counter.fetch_add(1, Ordering::SeqCst) + 1;
                    let expires = (chrono::Utc::now() + lifetime).to_rfc3339();
                    Reply::json(
                        201,
                        json!({"token": format!("ghs_installation_{n}"), "expires_at": expires}),
                    )
                }
                _ => Reply::json(201, json!({"id": 4})),
            },
        )
        .await;
    (server, tokens)
}

#[tokio::test]
async fn an_app_finds_the_installation_once_and_reuses_its_token() {
    let (server, tokens) = app_server(chrono::Duration::hours(1)).await;
    let client = client_with(&server, app());
    let name = repo();
    let (a, b) = tokio::join!(client.git_credentials(&name), client.git_credentials(&name));
    assert_eq!(a.expect("a").password, "ghs_installation_1");
    assert_eq!(b.expect("b").password, "ghs_installation_1");
    client
        .start_check(
            &repo(),
            &CommitSha("abc".to_owned()),
            &checks::started("working"),
        )
        .await
        .expect("check run");
    assert_eq!(
        tokens.load(Ordering::SeqCst),
        1,
        "one token for every caller"
    );
    let seen = server.seen();
    for s in seen.iter().filter(|s| s.uri.contains("installation")) {
        let auth = s.authorization.as_deref().unwrap_or_default();
        assert!(
            auth.starts_with("Bearer ey"),
            "the App's JWT on {}: {auth}",
            s.uri
        );
    }
    let check = seen.last().expect("the check run");
    assert_eq!(check.uri, "/repos/octo/hello/check-runs");
    assert_eq!(
        check.authorization.as_deref(),
        Some("Bearer ghs_installation_1")
    );
    assert_eq!(
        check.json(),
        json!({"name": "forgeward", "head_sha": "abc", "status": "in_progress",
               "output": {"title": "working", "summary": crate::forge::github::checks::IN_PROGRESS_SUMMARY}})
    );
    let gets = seen
        .iter()
        .filter(|s| s.uri == "/repos/octo/hello/installation")
        .count();
    assert!(gets <= 2, "the installation is remembered: {gets} lookups");
}

#[tokio::test]
async fn a_token_about_to_expire_is_renewed() {
    let (server, tokens) = app_server(chrono::Duration::minutes(4)).await;
    let client = client_with(&server, app());
    let first = client.git_credentials(&repo()).await.expect("first");
    let second = client.git_credentials(&repo()).await.expect("second");
    assert_eq!(first.password, "ghs_installation_1");
    assert_eq!(second.password, "ghs_installation_2");
    assert_eq!(tokens.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn a_repository_without_the_app_is_not_configured() {
    let (server, _) = app_server(chrono::Duration::hours(1)).await;
    let client = client_with(&server, app());
    let e = client
        .issue(&RepoName("octo/other".to_owned()), Number(1))
        .await
        .expect_err("not installed");
    assert_eq!(
        e.to_string(),
        "github GET /repos/{owner}/{repo}/installation on octo/other: not configured: the GitHub App 42 is not installed on octo/other"
    );
}

#[tokio::test]
async fn errors_name_the_call_and_never_the_token() {
    let server = TestServer::scripted(vec![
        Reply::new(401, r#"{"message":"Bad credentials"}"#),
        Reply::json(200, json!({"number": 7, "title": "T", "body": null})),
    ])
    .await;
    let client = client(&server);
    let e = client.issue(&repo(), Number(7)).await.expect_err("refused");
    let shown = format!("{e} {e:?}");
    assert_eq!(
        e.to_string(),
        "github GET /repos/{owner}/{repo}/issues/{issue_number} on octo/hello: unauthorized: the forge refused the bot's credentials"
    );
    assert!(!shown.contains(TOKEN), "{shown}");
    let e = client
        .issue(&repo(), Number(7))
        .await
        .expect_err("no html_url");
    assert_eq!(
        e.to_string(),
        "github GET /repos/{owner}/{repo}/issues/{issue_number} on octo/hello: unexpected response: at .: missing field `html_url` at line 1 column 36"
    );
}

#[test]
fn descriptions_are_cut_on_character_boundaries() {
    assert_eq!(cut_chars("abc", 140), "abc");
    assert_eq!(cut_chars("ab✓d", 3), "ab✓");
    assert_eq!(cut_chars("", 0), "");
}

/// The `forgeward` check: an App's check run, a token's commit status.
#[path = "client_checks_tests.rs"]
mod checks;
