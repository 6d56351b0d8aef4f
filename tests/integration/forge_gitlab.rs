//! The GitLab client against the fake forge: every call it makes, with the request bodies of
//! GitLab's API documentation, and how it fails — missing things, refused credentials, a
//! GitLab that errs, rate limits — without ever showing its token.

use std::time::{Duration, Instant};

use forgeward::forge::api::{
    CommitStatus, ForgeApi, ForgeError, ForgeErrorKind, Permission, PullRequestSpec, Review,
    ReviewFlag, StatusState,
};
use forgeward::forge::gitlab::{Client, GitlabConfig, Retry, RetryPolicy};
use forgeward::forge::webhook::Secret;
use forgeward::forge::{CommitSha, Number, RepoName, Thread};
use serde_json::json;

use crate::fake_forge::{FakeForge, GITLAB_TOKEN, RepoHandle, issue, pr, sha_of};

/// A project in a subgroup, so that every path shows the id is encoded.
const PROJECT: &str = "acme/platform/widgets";
/// The project as GitLab wants it in a path.
const ENCODED: &str = "acme%2Fplatform%2Fwidgets";

/// Retries with waits short enough for a test, the same in kind as the defaults.
fn quick_retry() -> Retry {
    Retry::new(RetryPolicy {
        backoff: Duration::from_millis(10),
        unsaid_wait: Duration::from_millis(10),
        max_wait: Duration::from_secs(5),
        ..RetryPolicy::gitlab()
    })
}

fn client_with_token(forge: &FakeForge, token: &str) -> Client {
    Client::with_retry(
        GitlabConfig {
            url: forge.url(),
            git_url: "file:///srv/git".to_owned(),
            token: Secret::new(token.to_owned()),
        },
        quick_retry(),
    )
    .expect("a client")
}

async fn setup() -> (FakeForge, RepoHandle, Client) {
    let forge = FakeForge::start().await;
    let project = forge.gitlab_project(PROJECT);
    let client = client_with_token(&forge, GITLAB_TOKEN);
    (forge, project, client)
}

fn name() -> RepoName {
    RepoName(PROJECT.to_owned())
}

fn api(path: &str) -> String {
    format!("/api/v4/projects/{ENCODED}{path}")
}

#[tokio::test]
async fn reads_the_default_branch_and_an_issue() {
    let (forge, project, client) = setup().await;
    project
        .default_branch("trunk")
        .issue(7, "Parser drops a line", "Expected two lines.");
    assert_eq!(
        client.default_branch(&name()).await.expect("the project"),
        "trunk"
    );
    let issue = client.issue(&name(), Number(7)).await.expect("issue 7");
    assert_eq!(issue.number, Number(7));
    assert_eq!(issue.title, "Parser drops a line");
    assert_eq!(issue.body, "Expected two lines.");
    assert!(
        issue.web_url.ends_with("/acme/platform/widgets/-/issues/7"),
        "{}",
        issue.web_url
    );
    assert!(forge.requests().iter().all(|r| r.uri.starts_with(&api(""))));
}

#[tokio::test]
async fn a_missing_project_or_issue_is_not_found_naming_the_call() {
    let (_forge, _project, client) = setup().await;
    let err = client
        .issue(&name(), Number(9))
        .await
        .expect_err("no issue 9");
    assert_eq!(err.kind, ForgeErrorKind::NotFound);
    assert_eq!(
        err.to_string(),
        "gitlab GET /projects/:id/issues/:iid on acme/platform/widgets: not found"
    );
    let other = RepoName("acme/nothing".to_owned());
    let err = client.default_branch(&other).await.expect_err("no project");
    assert_eq!(
        err.to_string(),
        "gitlab GET /projects/:id on acme/nothing: not found"
    );
}

#[tokio::test]
async fn comments_are_read_from_every_page_oldest_first_without_system_notes() {
    let (forge, project, client) = setup().await;
    project.issue(7, "t", "b");
    let ids: Vec<u64> = (0..230)
        .map(|i| project.comment(issue(7), "alice", &format!("comment {i}")))
        .collect();
    project.system_note(issue(7), "added ~bug label");
    let comments = client
        .comments(&name(), Thread::Issue, Number(7))
        .await
        .expect("the comments");
    assert_eq!(comments.len(), 230);
    assert_eq!(comments.iter().map(|c| c.id).collect::<Vec<_>>(), ids);
    assert_eq!(comments[229].body, "comment 229");
    assert_eq!(comments[0].author, "alice");
    let pages: Vec<String> = forge.requests().into_iter().map(|r| r.uri).collect();
    let first = api("/issues/7/notes?sort=asc&order_by=created_at&per_page=100&page=1");
    assert_eq!(pages.first(), Some(&first));
    assert_eq!(pages.len(), 3, "{pages:#?}");
}

#[tokio::test]
async fn a_comment_goes_to_the_thread_it_is_for() {
    let (forge, project, client) = setup().await;
    // Issue 7 and merge request 7 are different things on GitLab.
    project.issue(7, "t", "b").pull(7, "feature", "main");
    let made = client
        .create_comment(
            &name(),
            Thread::PullRequest,
            Number(7),
            "<!-- forgeward:status 1 -->\nQueued",
        )
        .await
        .expect("a note");
    assert_eq!(made.author, "forgeward-bot");
    assert_eq!(
        forge.expect_write("POST", &api("/merge_requests/7/notes")),
        json!({ "body": "<!-- forgeward:status 1 -->\nQueued" })
    );
    client
        .update_comment(
            &name(),
            Thread::PullRequest,
            Number(7),
            made.id,
            "<!-- forgeward:status 1 -->\nDone",
        )
        .await
        .expect("the note edited");
    let status = forge
        .status_comment(&project, pr(7))
        .expect("the status comment");
    assert_eq!(status.id, made.id);
    assert!(status.body.ends_with("Done"));
    assert!(forge.comments(&project, issue(7)).is_empty());
}

#[tokio::test]
async fn eyes_once_however_often_asked() {
    let (forge, project, client) = setup().await;
    project.issue(7, "t", "b");
    let note = project.comment(issue(7), "alice", "/forgeward run");
    for _ in 0..2 {
        client
            .react_eyes(&name(), Thread::Issue, Number(7), note)
            .await
            .expect("eyes on the note");
    }
    assert_eq!(
        forge.expect_write("POST", &api(&format!("/issues/7/notes/{note}/award_emoji"))),
        json!({ "name": "eyes" })
    );
    assert_eq!(forge.comments(&project, 7)[0].reactions, ["eyes"]);
}

#[tokio::test]
async fn labels_are_added_and_removed() {
    let (forge, project, client) = setup().await;
    project.issue(7, "t", "b").pull(8, "feature", "main");
    let labels = ["forgeward".to_owned(), "forgeward:flagged".to_owned()];
    client
        .add_labels(&name(), Thread::Issue, Number(7), &labels)
        .await
        .expect("labels added");
    assert_eq!(
        forge.expect_write("PUT", &api("/issues/7")),
        json!({ "add_labels": "forgeward,forgeward:flagged" })
    );
    client
        .remove_label(&name(), Thread::Issue, Number(7), "forgeward")
        .await
        .expect("label removed");
    // Removing a label that is not there is not an error.
    client
        .remove_label(&name(), Thread::Issue, Number(7), "forgeward")
        .await
        .expect("absent label removed");
    assert_eq!(forge.labels(&project, 7), ["forgeward:flagged"]);
    client
        .add_labels(&name(), Thread::PullRequest, Number(8), &labels[1..])
        .await
        .expect("label on the merge request");
    assert_eq!(forge.labels(&project, 8), ["forgeward:flagged"]);
    // Nothing to add sends nothing.
    client
        .add_labels(&name(), Thread::Issue, Number(7), &[])
        .await
        .expect("no labels");
    assert!(forge.pending_writes().is_empty());
}

#[tokio::test]
async fn permissions_follow_access_levels() {
    let (_forge, project, client) = setup().await;
    let roles = [
        ("gus", Permission::Read),
        ("rita", Permission::Triage),
        ("dev", Permission::Write),
        ("max", Permission::Maintain),
        ("olga", Permission::Admin),
    ];
    for (login, role) in roles {
        project.collaborator(login, role);
    }
    for (login, role) in roles {
        let got = client
            .permission(&name(), &project.actor(login))
            .await
            .expect("a member");
        assert_eq!(got, role, "{login}");
    }
    let stranger = forgeward::forge::Actor {
        login: "stranger".to_owned(),
        id: 99,
    };
    assert_eq!(
        client
            .permission(&name(), &stranger)
            .await
            .expect("no member"),
        Permission::None
    );
}

#[tokio::test]
async fn files_are_read_at_a_revision() {
    let (forge, project, client) = setup().await;
    let binary: Vec<u8> = (0..=255).collect();
    project
        .file("main", "config/.forgeward.toml", "label = \"bot\"\n")
        .file(&sha_of("v1"), "data.bin", &binary);
    let toml = client
        .read_file(&name(), "config/.forgeward.toml", "main")
        .await
        .expect("a file");
    assert_eq!(toml.as_deref(), Some(&b"label = \"bot\"\n"[..]));
    let got = client
        .read_file(&name(), "data.bin", &sha_of("v1"))
        .await
        .expect("a file");
    assert_eq!(got, Some(binary));
    let none = client
        .read_file(&name(), ".forgeward.toml", "main")
        .await
        .expect("an answer");
    assert_eq!(none, None);
    let asked = &forge.requests()[0].uri;
    assert_eq!(
        *asked,
        api("/repository/files/config%2F.forgeward.toml?ref=main")
    );
}

#[tokio::test]
async fn a_merge_request_as_the_bot_sees_it() {
    let (forge, project, client) = setup().await;
    forge.gitlab_project("ravi/widgets");
    project
        .branch("main", &sha_of("base"))
        .pull(3, "feature", "main")
        .fork_pull(4, "ravi/widgets", "fix", "main");
    let mr = client.pull_request(&name(), Number(3)).await.expect("!3");
    assert_eq!(mr.number, Number(3));
    assert_eq!(mr.head_branch, "feature");
    assert_eq!(mr.head_sha, CommitSha(sha_of("feature")));
    assert_eq!(mr.base_branch, "main");
    assert_eq!(mr.base_sha, CommitSha(sha_of("base")));
    assert_eq!(mr.start_sha, CommitSha(sha_of("base")));
    assert_eq!(mr.head_repo, name());
    assert!(!mr.draft);
    assert!(mr.web_url.ends_with("/-/merge_requests/3"));
    let fork = client.pull_request(&name(), Number(4)).await.expect("!4");
    assert_eq!(fork.head_repo, RepoName("ravi/widgets".to_owned()));
}

#[tokio::test]
async fn the_merge_request_of_a_branch_is_found_with_its_diff_refs() {
    let (forge, project, client) = setup().await;
    forge.gitlab_project("ravi/widgets");
    assert_eq!(
        client
            .find_pull_request(&name(), "forgeward/issue-7")
            .await
            .expect("an answer"),
        None
    );
    // A fork's branch of the same name is not the bot's.
    project.fork_pull(2, "ravi/widgets", "forgeward/issue-7", "main");
    assert_eq!(
        client
            .find_pull_request(&name(), "forgeward/issue-7")
            .await
            .expect("an answer"),
        None
    );
    project.pull(5, "forgeward/issue-7", "main");
    let found = client
        .find_pull_request(&name(), "forgeward/issue-7")
        .await
        .expect("an answer")
        .expect("!5");
    assert_eq!(found.number, Number(5));
    assert_eq!(found.base_sha, CommitSha(sha_of("main")));
}

fn spec(draft: bool) -> PullRequestSpec {
    PullRequestSpec {
        head_branch: "forgeward/issue-7".to_owned(),
        base_branch: "main".to_owned(),
        title: "Fix the parser".to_owned(),
        body: "Closes #7".to_owned(),
        draft,
    }
}

#[tokio::test]
async fn merge_requests_are_opened_once_and_updated() {
    let (forge, project, client) = setup().await;
    project.branch("forgeward/issue-7", &sha_of("work"));
    let made = client
        .create_pull_request(&name(), &spec(true))
        .await
        .expect("a merge request");
    assert!(made.draft);
    assert_eq!(
        forge.expect_write("POST", &api("/merge_requests")),
        json!({ "source_branch": "forgeward/issue-7", "target_branch": "main",
                "title": "Draft: Fix the parser", "description": "Closes #7" })
    );
    let err = client
        .create_pull_request(&name(), &spec(true))
        .await
        .expect_err("one merge request per branch");
    assert!(matches!(err.kind, ForgeErrorKind::Conflict(_)), "{err}");
    assert!(
        err.to_string().starts_with(
            "gitlab POST /projects/:id/merge_requests on acme/platform/widgets: conflict: "
        ),
        "{err}"
    );
    let updated = client
        .update_pull_request(&name(), made.number, &spec(false))
        .await
        .expect("updated");
    assert!(!updated.draft);
    let seen = forge
        .pull_request_for_branch(&project, "forgeward/issue-7")
        .expect("the merge request");
    assert_eq!(
        (seen.title.as_str(), seen.body.as_str(), seen.draft),
        ("Fix the parser", "Closes #7", false)
    );
}

#[tokio::test]
async fn review_flags_are_the_line_notes() {
    let (_forge, project, client) = setup().await;
    project.pull(8, "feature", "main");
    project.comment(pr(8), "alice", "Looks fine");
    project.line_comment(8, "forgeward-bot", "tests/test_x.py", 12, "A skip marker");
    let flags = client
        .review_flags(&name(), Number(8))
        .await
        .expect("the flags");
    assert_eq!(flags.len(), 1);
    assert_eq!(flags[0].path, "tests/test_x.py");
    assert_eq!(flags[0].line, Some(12));
    assert_eq!(flags[0].body, "A skip marker");
    assert!(!flags[0].resolved);
}

#[tokio::test]
async fn a_flag_is_resolved_as_its_discussion() {
    let (forge, project, client) = setup().await;
    project.pull(8, "feature", "main");
    project.line_comment(8, "forgeward-bot", "tests/test_x.py", 12, "A skip marker");
    let flags = client
        .review_flags(&name(), Number(8))
        .await
        .expect("the flags");
    client
        .resolve_flag(
            &name(),
            Number(8),
            &flags[0],
            "no longer holds at `1a2b3c4`.",
        )
        .await
        .expect("resolved");
    let put = forge.expect_write(
        "PUT",
        &api(&format!(
            "/merge_requests/8/discussions/{}",
            flags[0].thread
        )),
    );
    assert_eq!(put, json!({ "resolved": true }));
    let again = client
        .review_flags(&name(), Number(8))
        .await
        .expect("the flags");
    assert!(again[0].resolved, "{again:?}");
    assert!(forge.review_flags(&project, 8)[0].resolved);

    let unknown = forgeward::forge::api::PostedFlag {
        thread: "0000".to_owned(),
        ..flags[0].clone()
    };
    let e = client
        .resolve_flag(&name(), Number(8), &unknown, "gone")
        .await
        .expect_err("no such discussion");
    assert!(matches!(e.kind, ForgeErrorKind::NotFound), "{e}");
}

#[tokio::test]
async fn a_review_is_discussions_and_one_note() {
    let (forge, project, client) = setup().await;
    project
        .pull(8, "feature", "main")
        .commentable(8, &[("tests/test_x.py", 12)]);
    let pr8 = client.pull_request(&name(), Number(8)).await.expect("!8");
    let flag = |path: &str, line: Option<u32>, body: &str| ReviewFlag {
        path: path.to_owned(),
        line,
        side: forgeward::forge::api::Side::New,
        body: body.to_owned(),
    };
    let review = Review {
        body: "forgeward found 3 flags.".to_owned(),
        flags: vec![
            flag("tests/test_x.py", Some(12), "A skip marker"),
            flag("src/lib.py", Some(40), "Off the diff"),
            flag("conftest.py", None, "A shadowing module"),
        ],
    };
    client
        .post_review(&name(), &pr8, &review)
        .await
        .expect("the review");
    let first = forge.expect_write("POST", &api("/merge_requests/8/discussions"));
    assert_eq!(
        first,
        json!({ "body": "A skip marker", "position": {
            "position_type": "text", "base_sha": sha_of("main"), "start_sha": sha_of("main"),
            "head_sha": sha_of("feature"), "old_path": "tests/test_x.py",
            "new_path": "tests/test_x.py", "new_line": 12 } })
    );
    assert_eq!(
        forge.review_flags(&project, 8),
        [crate::fake_forge::FlagView {
            path: "tests/test_x.py".to_owned(),
            line: Some(12),
            body: "A skip marker".to_owned(),
            resolved: false,
        }]
    );
    let notes = forge.comments(&project, pr(8));
    let bodies: Vec<&str> = notes.iter().map(|n| n.body.as_str()).collect();
    // The discussion is a line comment; the one note is the review's body.
    assert_eq!(bodies.len(), 1, "{bodies:#?}");
    let note = bodies[0];
    assert!(note.starts_with("forgeward found 3 flags."), "{note}");
    assert!(note.contains("**`src/lib.py`**\n\nOff the diff"), "{note}");
    assert!(
        note.contains("**`conftest.py`**\n\nA shadowing module"),
        "{note}"
    );
}

#[tokio::test]
async fn the_commit_status_follows_the_job() {
    let (forge, project, client) = setup().await;
    let sha = CommitSha(sha_of("head"));
    let status = |state, description: &str| CommitStatus {
        state,
        description: description.to_owned(),
        target_url: Some("https://bot.example/jobs/1".to_owned()),
    };
    client
        .set_commit_status(&name(), &sha, &status(StatusState::Pending, "Queued"))
        .await
        .expect("pending");
    assert_eq!(
        forge.expect_write("POST", &api(&format!("/statuses/{}", sha.0))),
        json!({ "state": "pending", "name": "forgeward", "description": "Queued",
                "target_url": "https://bot.example/jobs/1" })
    );
    // GitLab refuses a status already in that state; the commit says what the bot wants.
    client
        .set_commit_status(&name(), &sha, &status(StatusState::Pending, "Still queued"))
        .await
        .expect("pending again");
    let long = "x".repeat(400);
    client
        .set_commit_status(&name(), &sha, &status(StatusState::Failure, &long))
        .await
        .expect("failed");
    let now = forge.commit_status(&project, &sha.0).expect("a status");
    assert_eq!(now.state, "failed");
    assert_eq!(now.description.len(), 255);
}

#[tokio::test]
async fn git_authenticates_as_oauth2_with_the_token() {
    let (_forge, _project, client) = setup().await;
    assert_eq!(
        client.git_url(&name()),
        "file:///srv/git/acme/platform/widgets.git"
    );
    let credentials = client.git_credentials(&name()).await.expect("credentials");
    assert_eq!(credentials.username, "oauth2");
    assert_eq!(credentials.password, GITLAB_TOKEN);
    assert!(!format!("{credentials:?}").contains(GITLAB_TOKEN));
}

fn assert_no_token(err: &ForgeError, token: &str) {
    assert!(!err.to_string().contains(token), "{err}");
    assert!(!format!("{err:?}").contains(token), "{err:?}");
}

#[tokio::test]
async fn a_refused_token_is_unauthorized_and_never_shown() {
    let forge = FakeForge::start().await;
    forge.gitlab_project(PROJECT);
    let token = "glpat-wrong-secret";
    let client = client_with_token(&forge, token);
    let err = client.default_branch(&name()).await.expect_err("refused");
    assert_eq!(err.kind, ForgeErrorKind::Unauthorized);
    assert_no_token(&err, token);
    assert_eq!(forge.requests().len(), 1, "a 401 is not retried");
    assert_eq!(forge.requests()[0].credential.as_deref(), Some(token));
}

#[tokio::test]
async fn server_errors_are_retried_until_gitlab_answers() {
    let (forge, _project, client) = setup().await;
    forge.fail_next(2, 503);
    assert_eq!(
        client.default_branch(&name()).await.expect("third time"),
        "main"
    );
    assert_eq!(forge.requests().len(), 3);
}

#[tokio::test]
async fn server_errors_that_last_fail_after_four_attempts() {
    let (forge, _project, client) = setup().await;
    forge.fail_next(5, 500);
    let err = client
        .default_branch(&name())
        .await
        .expect_err("GitLab is down");
    assert_eq!(err.kind, ForgeErrorKind::Server(500));
    assert_eq!(forge.requests().len(), 4);
    assert_no_token(&err, GITLAB_TOKEN);
}

#[tokio::test]
async fn other_refusals_are_answered_at_once_with_gitlab_s_message() {
    let (forge, project, client) = setup().await;
    project.issue(7, "t", "b");
    forge.fail_next(1, 403);
    let err = client
        .issue(&name(), Number(7))
        .await
        .expect_err("forbidden");
    assert_eq!(err.kind, ForgeErrorKind::Forbidden("Forbidden".to_owned()));
    forge.fail_next(1, 422);
    let err = client.issue(&name(), Number(7)).await.expect_err("refused");
    assert_eq!(
        err.kind,
        ForgeErrorKind::Invalid("Unprocessable Entity".to_owned())
    );
    assert_eq!(forge.requests().len(), 2, "neither is retried");
}

#[tokio::test]
async fn a_rate_limit_waits_as_long_as_gitlab_says() {
    let (forge, _project, client) = setup().await;
    forge.rate_limit_next(&[("Retry-After", "1")]);
    let started = Instant::now();
    assert_eq!(
        client
            .default_branch(&name())
            .await
            .expect("after the wait"),
        "main"
    );
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(forge.requests().len(), 2);
}

#[tokio::test]
async fn a_long_rate_limit_is_returned_not_waited() {
    let (forge, _project, client) = setup().await;
    let reset = (chrono::Utc::now().timestamp() + 600).to_string();
    forge.rate_limit_next(&[("RateLimit-Reset", reset.as_str())]);
    let started = Instant::now();
    let err = client
        .default_branch(&name())
        .await
        .expect_err("rate limited");
    let ForgeErrorKind::RateLimited { retry_after } = err.kind else {
        panic!("not a rate limit: {err}");
    };
    assert!(
        // The reset, and a second for the clocks' disagreement.
        (599..=601).contains(&retry_after.as_secs()),
        "{retry_after:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(1));
    assert_eq!(forge.requests().len(), 1);
}

#[tokio::test]
async fn an_unreachable_gitlab_is_a_network_error() {
    // A port that was free a moment ago, with nothing listening on it now.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
    let url = format!("http://{}", listener.local_addr().expect("its address"));
    drop(listener);
    let client = Client::with_retry(
        GitlabConfig {
            url,
            git_url: String::new(),
            token: Secret::new(GITLAB_TOKEN.to_owned()),
        },
        quick_retry(),
    )
    .expect("a client");
    let err = client
        .default_branch(&name())
        .await
        .expect_err("nothing listens");
    assert!(matches!(err.kind, ForgeErrorKind::Network(_)), "{err}");
    assert_no_token(&err, GITLAB_TOKEN);
}

#[tokio::test]
async fn a_review_made_for_an_older_head_lists_its_flags_in_the_note() {
    let (forge, project, client) = setup().await;
    project.pull(8, "feature", "main");
    let seen = client.pull_request(&name(), Number(8)).await.expect("!8");
    // A push lands between reading the merge request and posting the review.
    project.push(8, &sha_of("newer"));
    let review = Review {
        body: "One flag.".to_owned(),
        flags: vec![ReviewFlag {
            path: "a.py".to_owned(),
            line: Some(3),
            side: forgeward::forge::api::Side::New,
            body: "A skip marker".to_owned(),
        }],
    };
    client
        .post_review(&name(), &seen, &review)
        .await
        .expect("the review");
    assert!(forge.review_flags(&project, 8).is_empty());
    let notes = forge.comments(&project, pr(8));
    assert_eq!(notes.len(), 1);
    assert_eq!(notes[0].body, "One flag.\n\n**`a.py`**\n\nA skip marker");
}

#[tokio::test]
async fn an_empty_review_posts_nothing() {
    let (forge, project, client) = setup().await;
    project.pull(8, "feature", "main");
    let pr8 = client.pull_request(&name(), Number(8)).await.expect("!8");
    let empty = Review {
        body: String::new(),
        flags: Vec::new(),
    };
    client
        .post_review(&name(), &pr8, &empty)
        .await
        .expect("nothing to post");
    assert!(forge.pending_writes().is_empty());
}
