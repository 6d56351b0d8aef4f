//! The Forgejo client against a local server that answers as Forgejo does: which request each
//! call makes, how lists are paged, labels found or created, permissions mapped, files read,
//! a refused review line put in the body, and what is retried; the token stays in its header.

use std::sync::{Arc, Mutex, PoisonError};

use serde_json::Value;

use super::*;
use crate::forge::api::StatusState;
use crate::forge::test_server::{Reply, Seen, TestServer, recording_sleeper, waits};

const TOKEN: &str = "forgejo-test-only-token";

fn repo() -> RepoName {
    RepoName("acme/widgets".to_owned())
}

fn config(url: &str) -> ForgejoConfig {
    ForgejoConfig {
        url: format!("{url}/"),
        git_url: "https://codeberg.example/".to_owned(),
        token: Secret::new(TOKEN.to_owned()),
    }
}

fn client(server: &TestServer) -> Client {
    client_waiting(server).0
}

fn client_waiting(server: &TestServer) -> (Client, Arc<Mutex<Vec<std::time::Duration>>>) {
    let (sleep, recorded) = recording_sleeper();
    let retry = Retry {
        policy: RetryPolicy::forgejo(),
        sleep,
    };
    let client = Client::with_retry(config(&server.url), retry).expect("a client");
    (client, recorded)
}

fn lines(server: &TestServer) -> Vec<String> {
    server
        .seen()
        .iter()
        .map(|s| format!("{} {}", s.method, s.uri))
        .collect()
}

fn bodies(server: &TestServer) -> Vec<Value> {
    server
        .seen()
        .iter()
        .filter(|s| !s.body.is_empty())
        .map(Seen::json)
        .collect()
}

fn not_found() -> Reply {
    Reply::json(
        404,
        json!({"errors": [], "message": "The target couldn't be found.", "url": "https://codeberg.example/api/swagger"}),
    )
}

fn comment(id: u64, login: &str, body: &str) -> Value {
    json!({"id": id, "user": {"id": 7, "login": login}, "body": body, "html_url": "https://codeberg.example/acme/widgets/issues/7#issuecomment-1"})
}

fn pull_json(number: u64, head: &str, head_repo_id: u64) -> Value {
    json!({
        "number": number, "title": "WIP: Fix the parser", "draft": true,
        "html_url": format!("https://codeberg.example/acme/widgets/pulls/{number}"),
        "merge_base": "1111111111111111111111111111111111111111",
        "head": {"ref": head, "sha": "2222222222222222222222222222222222222222", "repo_id": head_repo_id,
                 "repo": {"full_name": if head_repo_id == 1 { "acme/widgets" } else { "fork/widgets" }}},
        "base": {"ref": "main", "sha": "3333333333333333333333333333333333333333", "repo_id": 1,
                 "repo": {"full_name": "acme/widgets"}},
    })
}

fn flag(path: &str, line: Option<u32>, side: Side, body: &str) -> ReviewFlag {
    ReviewFlag {
        path: path.to_owned(),
        line,
        side,
        body: body.to_owned(),
    }
}

fn pr() -> PullRequest {
    let json = pull_json(8, "forgeward/issue-7", 1);
    serde_json::from_value::<PullJson>(json)
        .expect("a pull request")
        .into_domain()
}

#[tokio::test]
async fn git_is_given_the_token_as_password_and_nothing_shows_it() {
    let server = TestServer::scripted(vec![]).await;
    let client = client(&server);
    assert_eq!(
        client.git_url(&repo()),
        "https://codeberg.example/acme/widgets.git"
    );
    let credentials = client.git_credentials(&repo()).await.expect("credentials");
    assert_eq!(credentials.username, "forgeward");
    assert_eq!(credentials.password, TOKEN);
    let shown = format!("{client:?} {:?} {credentials:?}", config(&server.url));
    assert!(!shown.contains(TOKEN), "{shown}");
    assert!(server.seen().is_empty(), "no call is needed");
}

#[tokio::test]
async fn comments_follow_every_page_on_the_instance_only() {
    let url = Arc::new(Mutex::new(String::new()));
    let base = url.clone();
    let server = TestServer::start(move |seen| {
        let base = base.lock().unwrap_or_else(PoisonError::into_inner).clone();
        match seen.uri.as_str() {
            "/api/v1/repos/acme/widgets/issues/7/comments" => Reply::json(
                200,
                json!([comment(1, "alice", "first"), comment(2, "bob", "second")]),
            )
            .header("x-total-count", "3")
            .header(
                "link",
                format!(
                    "<{base}/api/v1/repos/acme/widgets/issues/7/comments?page=2>; rel=\"next\", \
                     <{base}/api/v1/repos/acme/widgets/issues/7/comments?page=2>; rel=\"last\""
                ),
            ),
            "/api/v1/repos/acme/widgets/issues/7/comments?page=2" => {
                Reply::json(200, json!([{"id": 3, "user": null, "body": "third"}]))
                    .header("x-total-count", "3")
                    .header(
                        "link",
                        "<http://elsewhere.example/api/v1/steal?page=3>; rel=\"next\"",
                    )
            }
            _ => not_found(),
        }
    })
    .await;
    *url.lock().unwrap_or_else(PoisonError::into_inner) = server.url.clone();
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
        [
            (1, "alice", "first"),
            (2, "bob", "second"),
            (3, "Ghost", "third")
        ]
    );
    assert_eq!(
        lines(&server),
        [
            "GET /api/v1/repos/acme/widgets/issues/7/comments",
            "GET /api/v1/repos/acme/widgets/issues/7/comments?page=2",
        ],
        "the other host's page is not fetched"
    );
    let seen = server.seen();
    assert!(
        seen.iter()
            .all(|s| s.authorization.as_deref() == Some(&format!("token {TOKEN}")[..])),
        "{seen:?}"
    );
}

#[tokio::test]
async fn labels_are_found_over_every_page_or_created_then_added_by_id() {
    let server = TestServer::start(|seen| match (seen.method.as_str(), seen.uri.as_str()) {
        ("GET", "/api/v1/repos/acme/widgets/labels?page=1&limit=50") => {
            Reply::json(200, json!([{"id": 1, "name": "bug", "color": "ee0701"}]))
                .header("x-total-count", "2")
        }
        ("GET", "/api/v1/repos/acme/widgets/labels?page=2&limit=50") => Reply::json(
            200,
            json!([{"id": 5, "name": "forgeward:flagged", "color": "e99695"}]),
        )
        .header("x-total-count", "2"),
        ("POST", "/api/v1/repos/acme/widgets/labels") => Reply::json(
            201,
            json!({"id": 9, "name": "forgeward:new", "color": "e99695"}),
        ),
        ("POST", "/api/v1/repos/acme/widgets/issues/8/labels") => {
            Reply::json(200, json!([{"id": 5, "name": "forgeward:flagged"}]))
        }
        _ => not_found(),
    })
    .await;
    client(&server)
        .add_labels(
            &repo(),
            Thread::PullRequest,
            Number(8),
            &["forgeward:flagged".to_owned(), "forgeward:new".to_owned()],
        )
        .await
        .expect("labels added");
    assert_eq!(
        lines(&server),
        [
            "GET /api/v1/repos/acme/widgets/labels?page=1&limit=50",
            "GET /api/v1/repos/acme/widgets/labels?page=2&limit=50",
            "POST /api/v1/repos/acme/widgets/labels",
            "POST /api/v1/repos/acme/widgets/issues/8/labels",
        ]
    );
    assert_eq!(
        bodies(&server),
        [
            json!({"name": "forgeward:new", "color": "#e99695"}),
            json!({"labels": [5, 9]}),
        ]
    );
}

#[tokio::test]
async fn a_label_another_job_made_meanwhile_is_found_again() {
    let listed = Arc::new(Mutex::new(0));
    let count = listed.clone();
    let server = TestServer::start(move |seen| match (seen.method.as_str(), seen.uri.as_str()) {
        ("GET", "/api/v1/repos/acme/widgets/labels?page=1&limit=50") => {
            let mut count = count.lock().unwrap_or_else(PoisonError::into_inner);
            *count += 1;
            if *count == 1 {
                Reply::json(200, json!([])).header("x-total-count", "0")
            } else {
                Reply::json(200, json!([{"id": 6, "name": "forgeward:flagged"}]))
                    .header("x-total-count", "1")
            }
        }
        ("POST", "/api/v1/repos/acme/widgets/labels") => Reply::json(
            422,
            json!({"message": "label already exists", "url": "https://codeberg.example/api/swagger"}),
        ),
        ("POST", "/api/v1/repos/acme/widgets/issues/8/labels") => Reply::json(200, json!([])),
        _ => not_found(),
    })
    .await;
    client(&server)
        .add_labels(
            &repo(),
            Thread::PullRequest,
            Number(8),
            &["forgeward:flagged".to_owned()],
        )
        .await
        .expect("added");
    assert_eq!(bodies(&server).last(), Some(&json!({"labels": [6]})));
}

#[tokio::test]
async fn a_label_is_removed_by_its_id_and_an_absent_one_is_no_error() {
    let server = TestServer::start(|seen| match (seen.method.as_str(), seen.uri.as_str()) {
        ("GET", "/api/v1/repos/acme/widgets/issues/8/labels") => Reply::json(
            200,
            json!([{"id": 1, "name": "bug"}, {"id": 5, "name": "forgeward:flagged"}]),
        ),
        ("DELETE", "/api/v1/repos/acme/widgets/issues/8/labels/5") => Reply::new(204, ""),
        ("GET", "/api/v1/repos/acme/widgets/issues/9/labels") => {
            Reply::json(200, json!([{"id": 5, "name": "forgeward:flagged"}]))
        }
        ("DELETE", "/api/v1/repos/acme/widgets/issues/9/labels/5") => Reply::json(
            422,
            json!({"message": "label does not exist [id: 5]", "url": "https://codeberg.example/api/swagger"}),
        ),
        ("GET", "/api/v1/repos/acme/widgets/issues/10/labels") => Reply::json(200, json!([])),
        _ => not_found(),
    })
    .await;
    let client = client(&server);
    for number in [8, 9, 10] {
        client
            .remove_label(
                &repo(),
                Thread::PullRequest,
                Number(number),
                "forgeward:flagged",
            )
            .await
            .unwrap_or_else(|e| panic!("#{number}: {e}"));
    }
    assert_eq!(
        lines(&server),
        [
            "GET /api/v1/repos/acme/widgets/issues/8/labels",
            "DELETE /api/v1/repos/acme/widgets/issues/8/labels/5",
            "GET /api/v1/repos/acme/widgets/issues/9/labels",
            "DELETE /api/v1/repos/acme/widgets/issues/9/labels/5",
            "GET /api/v1/repos/acme/widgets/issues/10/labels",
        ]
    );
}

#[tokio::test]
async fn permissions_map_forgejo_s_access_modes_and_a_stranger_has_none() {
    let server = TestServer::start(|seen| {
        let login = seen
            .uri
            .strip_prefix("/api/v1/repos/acme/widgets/collaborators/")
            .and_then(|rest| rest.strip_suffix("/permission"))
            .unwrap_or_default();
        let mode = |m: &str| {
            Reply::json(
                200,
                json!({"permission": m, "role_name": m, "user": {"login": login}}),
            )
        };
        match login {
            "acme" => mode("owner"),
            "admin" => mode("admin"),
            "writer" => mode("write"),
            "reader" => mode("read"),
            "outsider" => mode("none"),
            "refused" => Reply::json(
                403,
                json!({"message": "Only admins can query all permissions, repo admins can query all repo permissions, collaborators can query only their own"}),
            ),
            "j%C3%B6rg" => mode("write"),
            _ => Reply::json(
                404,
                json!({"errors": ["user redirect does not exist [name: stranger]"], "message": "The target couldn't be found."}),
            ),
        }
    })
    .await;
    let client = client(&server);
    let cases = [
        ("acme", Permission::Admin),
        ("admin", Permission::Admin),
        ("writer", Permission::Write),
        ("reader", Permission::Read),
        ("outsider", Permission::None),
        ("refused", Permission::None),
        ("stranger", Permission::None),
        ("jörg", Permission::Write),
    ];
    for (login, expected) in cases {
        let actor = Actor {
            login: login.to_owned(),
            id: 1,
        };
        let got = client
            .permission(&repo(), &actor)
            .await
            .unwrap_or_else(|e| panic!("{login}: {e}"));
        assert_eq!(got, expected, "{login}");
    }
    assert!(
        client
            .permission(
                &repo(),
                &Actor {
                    login: "writer".to_owned(),
                    id: 2
                }
            )
            .await
            .expect("write")
            .may_trigger()
    );
    assert_eq!(permission_of("something new"), Permission::None);
}

#[tokio::test]
async fn a_file_is_read_raw_with_its_slashes_kept_and_a_missing_one_is_none() {
    let server = TestServer::start(|seen| match seen.uri.as_str() {
        "/api/v1/repos/acme/widgets/raw/.forgejo/workflows/check%20it.yml?ref=feature%2Fx" => {
            Reply::new(200, "on: push\n")
        }
        _ => not_found(),
    })
    .await;
    let client = client(&server);
    let found = client
        .read_file(&repo(), ".forgejo/workflows/check it.yml", "feature/x")
        .await
        .expect("read");
    assert_eq!(found.as_deref(), Some(&b"on: push\n"[..]));
    let missing = client
        .read_file(&repo(), ".forgeward.toml", "main")
        .await
        .expect("a 404 is no error");
    assert_eq!(missing, None);
    assert_eq!(
        lines(&server)[1],
        "GET /api/v1/repos/acme/widgets/raw/.forgeward.toml?ref=main"
    );
}

#[tokio::test]
async fn a_pull_request_s_base_is_its_merge_base_and_its_draft_the_title_prefix() {
    let server = TestServer::start(|seen| match (seen.method.as_str(), seen.uri.as_str()) {
        ("GET", "/api/v1/repos/acme/widgets/pulls/8") => {
            Reply::json(200, pull_json(8, "forgeward/issue-7", 1))
        }
        ("GET", "/api/v1/repos/acme/widgets/pulls?state=open&page=1&limit=50") => Reply::json(
            200,
            json!([
                pull_json(12, "forgeward/issue-7", 2),
                pull_json(11, "other", 1),
                pull_json(8, "forgeward/issue-7", 1),
            ]),
        )
        .header("x-total-count", "3"),
        ("POST", "/api/v1/repos/acme/widgets/pulls") => {
            Reply::json(201, pull_json(13, "forgeward/issue-9", 1))
        }
        ("PATCH", "/api/v1/repos/acme/widgets/pulls/8") => {
            let mut pull = pull_json(8, "forgeward/issue-7", 1);
            pull["title"] = json!("Fix the parser");
            pull["draft"] = json!(false);
            Reply::json(201, pull)
        }
        _ => not_found(),
    })
    .await;
    let client = client(&server);
    let pr = client.pull_request(&repo(), Number(8)).await.expect("pr");
    assert_eq!(pr.head_branch, "forgeward/issue-7");
    assert_eq!(pr.head_repo, repo());
    assert_eq!(pr.head_sha.0, "2222222222222222222222222222222222222222");
    assert_eq!(pr.base_branch, "main");
    assert_eq!(pr.base_sha.0, "1111111111111111111111111111111111111111");
    assert_eq!(pr.start_sha.0, "3333333333333333333333333333333333333333");
    assert!(pr.draft);
    assert_eq!(pr.web_url, "https://codeberg.example/acme/widgets/pulls/8");

    let found = client
        .find_pull_request(&repo(), "forgeward/issue-7")
        .await
        .expect("found");
    assert_eq!(
        found.map(|p| p.number),
        Some(Number(8)),
        "the fork's branch of the same name is not it"
    );
    let none = client
        .find_pull_request(&repo(), "forgeward/issue-99")
        .await
        .expect("listed");
    assert_eq!(none, None);

    let spec = PullRequestSpec {
        head_branch: "forgeward/issue-9".to_owned(),
        base_branch: "main".to_owned(),
        title: "Fix the lexer".to_owned(),
        body: "Closes #9".to_owned(),
        draft: true,
    };
    let created = client
        .create_pull_request(&repo(), &spec)
        .await
        .expect("created");
    assert_eq!(created.number, Number(13));
    let ready = PullRequestSpec {
        title: "WIP: Fix the parser".to_owned(),
        draft: false,
        ..spec
    };
    let updated = client
        .update_pull_request(&repo(), Number(8), &ready)
        .await
        .expect("updated");
    assert!(!updated.draft);
    assert_eq!(
        bodies(&server),
        [
            json!({"head": "forgeward/issue-9", "base": "main", "title": "WIP: Fix the lexer", "body": "Closes #9"}),
            json!({"title": "Fix the parser", "body": "Closes #9"}),
        ]
    );
}

#[test]
fn a_draft_is_a_wip_prefix_given_once() {
    let spec = |title: &str, draft| PullRequestSpec {
        head_branch: "b".into(),
        base_branch: "main".into(),
        title: title.into(),
        body: String::new(),
        draft,
    };
    assert_eq!(title_of(&spec("Fix it", true)), "WIP: Fix it");
    assert_eq!(title_of(&spec("WIP: Fix it", true)), "WIP: Fix it");
    assert_eq!(title_of(&spec("[wip] Fix it", true)), "WIP: Fix it");
    assert_eq!(title_of(&spec("wip:Fix it", false)), "Fix it");
    assert_eq!(title_of(&spec("Fix it", false)), "Fix it");
    assert_eq!(title_of(&spec("Wipe the cache", false)), "Wipe the cache");
    assert_eq!(title_of(&spec("Ünïcode", true)), "WIP: Ünïcode");
}

#[tokio::test]
async fn review_flags_are_the_line_comments_of_submitted_reviews() {
    let server = TestServer::start(|seen| match seen.uri.as_str() {
        "/api/v1/repos/acme/widgets/pulls/8/reviews?page=1&limit=50" => Reply::json(
            200,
            json!([
                {"id": 1, "state": "COMMENT", "comments_count": 2},
                {"id": 2, "state": "APPROVED", "comments_count": 0},
                {"id": 3, "state": "PENDING", "comments_count": 1},
            ]),
        )
        .header("x-total-count", "3"),
        "/api/v1/repos/acme/widgets/pulls/8/reviews/1/comments" => Reply::json(
            200,
            json!([
                {"id": 10, "path": "tests/test_x.py", "body": "A skip.", "position": 12, "original_position": 0},
                {"id": 11, "path": "tests/test_y.py", "body": "Removed.", "position": 0, "original_position": 4},
                {"id": 12, "path": "a.py", "body": "Seen.", "position": 3, "resolver": {"login": "alice"}},
                {"id": 13, "path": "b.py", "body": format!("{RESOLVED_MARKER}✅ gone"), "position": 5, "resolver": null},
            ]),
        ),
        _ => not_found(),
    })
    .await;
    let flags = client(&server)
        .review_flags(&repo(), Number(8))
        .await
        .expect("flags");
    assert_eq!(
        flags,
        [
            PostedFlag {
                thread: "10".into(),
                path: "tests/test_x.py".into(),
                line: Some(12),
                body: "A skip.".into(),
                resolved: false,
            },
            PostedFlag {
                thread: "11".into(),
                path: "tests/test_y.py".into(),
                line: Some(4),
                body: "Removed.".into(),
                resolved: false,
            },
            PostedFlag {
                thread: "12".into(),
                path: "a.py".into(),
                line: Some(3),
                body: "Seen.".into(),
                resolved: true,
            },
            PostedFlag {
                thread: "13".into(),
                path: "b.py".into(),
                line: Some(5),
                body: format!("{RESOLVED_MARKER}✅ gone"),
                resolved: true,
            },
        ]
    );
    assert_eq!(server.seen().len(), 2, "{:?}", lines(&server));
}

#[tokio::test]
async fn a_flag_is_resolved_by_saying_so_in_its_comment() {
    let server = TestServer::start(|seen| match seen.uri.as_str() {
        "/api/v1/repos/acme/widgets/issues/comments/10" => Reply::json(200, json!({"id": 10})),
        _ => not_found(),
    })
    .await;
    let flag = PostedFlag {
        thread: "10".into(),
        path: "tests/test_x.py".into(),
        line: Some(12),
        body: "⚠️ **forgeward · `skip-marker`**: a skip.\n".into(),
        resolved: false,
    };
    client(&server)
        .resolve_flag(&repo(), Number(8), &flag, "no longer holds at `1a2b3c4`.")
        .await
        .expect("resolved");
    let seen = server.seen();
    assert_eq!(seen.len(), 1, "{:?}", lines(&server));
    assert_eq!(seen[0].method, "PATCH");
    let body = seen[0].json()["body"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert_eq!(
        body,
        format!(
            "{RESOLVED_MARKER}✅ **Resolved:** no longer holds at `1a2b3c4`.\n\n<details>\
             <summary>The flag</summary>\n\n⚠️ **forgeward · `skip-marker`**: a skip.\n\n</details>\n"
        )
    );

    let forged = PostedFlag {
        thread: "PRRT_1".into(),
        ..flag
    };
    let e = client(&server)
        .resolve_flag(&repo(), Number(8), &forged, "gone")
        .await
        .expect_err("not a comment id");
    assert!(matches!(e.kind, ForgeErrorKind::Invalid(_)), "{e}");
    assert_eq!(
        server.seen().len(),
        1,
        "nothing sent for a thread that is no comment id"
    );
}

#[tokio::test]
async fn a_review_posts_line_comments_on_either_side_and_lists_the_rest() {
    let server = TestServer::scripted(vec![Reply::json(200, json!({"id": 5}))]).await;
    let review = Review {
        body: "forgeward found 3 signs.\n".to_owned(),
        flags: vec![
            flag("tests/test_x.py", Some(12), Side::New, "A skip."),
            flag("tests/test_y.py", Some(4), Side::Old, "A deleted test."),
            flag("sqlglot.py", None, Side::New, "Shadows a package."),
        ],
    };
    client(&server)
        .post_review(&repo(), &pr(), &review)
        .await
        .expect("posted");
    assert_eq!(
        lines(&server),
        ["POST /api/v1/repos/acme/widgets/pulls/8/reviews"]
    );
    assert_eq!(
        bodies(&server)[0],
        json!({
            "event": "COMMENT",
            "commit_id": "2222222222222222222222222222222222222222",
            "body": "forgeward found 3 signs.\n\n- `sqlglot.py`: Shadows a package.",
            "comments": [
                {"path": "tests/test_x.py", "body": "A skip.", "new_position": 12},
                {"path": "tests/test_y.py", "body": "A deleted test.", "old_position": 4},
            ],
        })
    );
}

#[tokio::test]
async fn a_review_whose_line_is_refused_is_posted_again_with_the_flags_in_its_body() {
    let server = TestServer::start(|seen| match (seen.method.as_str(), seen.uri.as_str()) {
        ("POST", "/api/v1/repos/acme/widgets/pulls/8/reviews") => {
            let sent = seen.json();
            if sent["comments"].as_array().is_some_and(|c| !c.is_empty()) {
                // Forgejo's answer on a production instance: the message is hidden.
                Reply::json(
                    500,
                    json!({"message": "", "url": "https://codeberg.example/api/swagger"}),
                )
            } else {
                Reply::json(200, json!({"id": 6, "state": "COMMENT"}))
            }
        }
        ("GET", "/api/v1/repos/acme/widgets/pulls/8/reviews?page=1&limit=50") => Reply::json(
            200,
            json!([
                {"id": 3, "state": "PENDING", "comments_count": 1},
                {"id": 4, "state": "PENDING", "comments_count": 1},
                {"id": 2, "state": "COMMENT", "comments_count": 1},
            ]),
        )
        .header("x-total-count", "3"),
        ("GET", "/api/v1/repos/acme/widgets/pulls/8/reviews/3/comments") => Reply::json(
            200,
            json!([{"id": 30, "path": "src/lib.rs", "body": "Someone's draft.", "position": 1}]),
        ),
        ("GET", "/api/v1/repos/acme/widgets/pulls/8/reviews/4/comments") => Reply::json(
            200,
            json!([{"id": 40, "path": "tests/test_x.py", "body": "A skip.", "position": 12}]),
        ),
        ("DELETE", "/api/v1/repos/acme/widgets/pulls/8/reviews/4") => Reply::new(204, ""),
        _ => not_found(),
    })
    .await;
    let review = Review {
        body: "forgeward found 3 signs.".to_owned(),
        flags: vec![
            flag("tests/test_x.py", Some(12), Side::New, "A skip."),
            flag("tests/test_y.py", Some(4), Side::Old, "A deleted test."),
            flag("sqlglot.py", None, Side::New, "Shadows a package."),
        ],
    };
    let (client, recorded) = client_waiting(&server);
    client
        .post_review(&repo(), &pr(), &review)
        .await
        .expect("posted in the body");
    assert_eq!(
        lines(&server),
        [
            "POST /api/v1/repos/acme/widgets/pulls/8/reviews",
            "GET /api/v1/repos/acme/widgets/pulls/8/reviews?page=1&limit=50",
            "GET /api/v1/repos/acme/widgets/pulls/8/reviews/3/comments",
            "GET /api/v1/repos/acme/widgets/pulls/8/reviews/4/comments",
            "DELETE /api/v1/repos/acme/widgets/pulls/8/reviews/4",
            "POST /api/v1/repos/acme/widgets/pulls/8/reviews",
        ],
        "the refused review is not sent again as it was, and only the bot's pending review goes"
    );
    assert!(waits(&recorded).is_empty(), "no retry of the refusal");
    assert_eq!(
        bodies(&server)[1],
        json!({
            "event": "COMMENT",
            "commit_id": "2222222222222222222222222222222222222222",
            "body": "forgeward found 3 signs.\n\n- `tests/test_x.py:12`: A skip.\n- `tests/test_y.py:4`: A deleted test.\n- `sqlglot.py`: Shadows a package.",
            "comments": [],
        })
    );
}

#[tokio::test]
async fn an_empty_review_is_not_posted() {
    let server = TestServer::scripted(vec![]).await;
    let review = Review {
        body: " \n".to_owned(),
        flags: Vec::new(),
    };
    client(&server)
        .post_review(&repo(), &pr(), &review)
        .await
        .expect("nothing to post");
    assert!(server.seen().is_empty());
}

#[tokio::test]
async fn a_502_is_retried_and_a_429_waited_out_for_its_retry_after() {
    let server = TestServer::scripted(vec![
        Reply::new(502, "<html>Bad Gateway</html>"),
        Reply::json(429, json!({"message": "Too Many Requests"})).header("retry-after", "7"),
        Reply::json(
            200,
            json!({"default_branch": "main", "full_name": "acme/widgets"}),
        ),
    ])
    .await;
    let (client, recorded) = client_waiting(&server);
    let branch = client.default_branch(&repo()).await.expect("the third try");
    assert_eq!(branch, "main");
    assert_eq!(server.seen().len(), 3);
    assert_eq!(waits(&recorded), [1, 7]);
}

#[tokio::test]
async fn a_status_carries_the_bot_s_context_and_a_cut_description() {
    let server = TestServer::scripted(vec![Reply::json(201, json!({"id": 1}))]).await;
    let status = CommitStatus {
        state: StatusState::Error,
        description: "é".repeat(300),
        target_url: Some("https://forgeward.example/jobs/1".to_owned()),
    };
    client(&server)
        .set_commit_status(&repo(), &CommitSha("abc123".to_owned()), &status)
        .await
        .expect("set");
    assert_eq!(
        lines(&server),
        ["POST /api/v1/repos/acme/widgets/statuses/abc123"]
    );
    assert_eq!(
        bodies(&server)[0],
        json!({
            "state": "error",
            "context": "forgeward",
            "description": "é".repeat(MAX_DESCRIPTION_CHARS),
            "target_url": "https://forgeward.example/jobs/1",
        })
    );
}

#[tokio::test]
async fn the_simple_calls_send_what_forgejo_documents() {
    let server = TestServer::start(|seen| match (seen.method.as_str(), seen.uri.as_str()) {
        ("GET", "/api/v1/repos/acme/widgets/issues/7") => Reply::json(
            200,
            json!({"number": 7, "title": "Parser bug", "body": null, "html_url": "https://codeberg.example/acme/widgets/issues/7"}),
        ),
        ("POST", "/api/v1/repos/acme/widgets/issues/7/comments") => {
            Reply::json(201, comment(42, "forgeward-bot", "queued"))
        }
        ("PATCH", "/api/v1/repos/acme/widgets/issues/comments/42") => {
            Reply::json(200, comment(42, "forgeward-bot", "working"))
        }
        ("POST", "/api/v1/repos/acme/widgets/issues/comments/42/reactions") => {
            Reply::json(200, json!({"content": "eyes"}))
        }
        _ => not_found(),
    })
    .await;
    let client = client(&server);
    let issue = client.issue(&repo(), Number(7)).await.expect("issue");
    assert_eq!(
        (issue.number, issue.title.as_str(), issue.body.as_str()),
        (Number(7), "Parser bug", "")
    );
    let made = client
        .create_comment(&repo(), Thread::Issue, Number(7), "queued")
        .await
        .expect("created");
    assert_eq!((made.id, made.author.as_str()), (42, "forgeward-bot"));
    client
        .update_comment(&repo(), Thread::Issue, Number(7), 42, "working")
        .await
        .expect("updated");
    client
        .react_eyes(&repo(), Thread::Issue, Number(7), 42)
        .await
        .expect("already there is fine");
    assert_eq!(
        bodies(&server),
        [
            json!({"body": "queued"}),
            json!({"body": "working"}),
            json!({"content": "eyes"}),
        ]
    );
}

#[tokio::test]
async fn a_refusal_names_the_call_and_never_the_token() {
    let server = TestServer::scripted(vec![Reply::json(
        401,
        json!({"message": format!("token is required (got {TOKEN})"), "url": "https://codeberg.example/api/swagger"}),
    )])
    .await;
    let err = client(&server)
        .create_comment(&repo(), Thread::Issue, Number(7), "hello")
        .await
        .expect_err("refused");
    assert_eq!(err.kind, ForgeErrorKind::Unauthorized);
    assert_eq!(
        err.to_string(),
        "forgejo POST /repos/{owner}/{repo}/issues/{index}/comments on acme/widgets: \
         unauthorized: the forge refused the bot's credentials"
    );
    assert!(!format!("{err} {err:?}").contains(TOKEN));
}

#[tokio::test]
async fn a_redirect_to_another_host_is_not_followed_with_the_token() {
    let elsewhere =
        TestServer::scripted(vec![Reply::json(200, json!({"default_branch": "main"}))]).await;
    let location = format!("{}/api/v1/repos/acme/widgets", elsewhere.url);
    let server = TestServer::scripted(vec![Reply::new(301, "").header("location", location)]).await;
    let err = client(&server)
        .default_branch(&repo())
        .await
        .expect_err("not followed");
    assert!(matches!(err.kind, ForgeErrorKind::Invalid(_)), "{err}");
    assert!(!err.to_string().contains(TOKEN), "{err}");
    assert!(elsewhere.seen().is_empty(), "the other host saw a request");
}

#[tokio::test]
async fn a_redirect_on_the_same_host_is_followed() {
    let url = Arc::new(Mutex::new(String::new()));
    let base = url.clone();
    let server = TestServer::start(move |seen| match seen.uri.as_str() {
        "/api/v1/repos/acme/widgets" => {
            let base = base.lock().unwrap_or_else(PoisonError::into_inner).clone();
            Reply::new(301, "").header("location", format!("{base}/api/v1/repos/acme/gadgets"))
        }
        "/api/v1/repos/acme/gadgets" => Reply::json(200, json!({"default_branch": "trunk"})),
        _ => not_found(),
    })
    .await;
    *url.lock().unwrap_or_else(PoisonError::into_inner) = server.url.clone();
    let branch = client(&server)
        .default_branch(&repo())
        .await
        .expect("followed");
    assert_eq!(branch, "trunk");
    assert!(
        server
            .seen()
            .iter()
            .all(|s| s.authorization.as_deref() == Some(&format!("token {TOKEN}")[..]))
    );
}

#[test]
fn a_url_that_is_not_absolute_is_refused() {
    let err = Client::new(ForgejoConfig {
        url: "codeberg.org".to_owned(),
        git_url: "codeberg.org".to_owned(),
        token: Secret::new(TOKEN.to_owned()),
    })
    .expect_err("refused");
    assert!(err.contains("not an absolute http(s) URL"), "{err}");
    assert!(!err.contains(TOKEN));
}
