//! GitLab deliveries: real example payloads, signatures and tokens, and malformed input.

use super::*;
use crate::forge::webhook::testing;

macro_rules! fixture {
    ($name:literal) => {
        include_bytes!(concat!("../../../tests/data/webhooks/gitlab/", $name))
    };
}

fn demo() -> Repo {
    Repo {
        forge: Forge::GitLab,
        name: RepoName("forgeward/demo".to_owned()),
        id: 27,
    }
}

fn maya() -> Actor {
    Actor {
        login: "maya".to_owned(),
        id: 4,
    }
}

fn ravi() -> Actor {
    Actor {
        login: "ravi".to_owned(),
        id: 9,
    }
}

fn event(name: &str, body: &[u8]) -> Event {
    testing::event(name, parse(name, body))
}

fn ignored_as(name: &str, body: &[u8]) -> String {
    testing::ignored(name, parse(name, body))
}

fn malformed_at(name: &str, body: &[u8]) -> String {
    testing::malformed_at(name, parse(name, body))
}

/// `fixture` with `change` applied to its JSON.
fn edited(fixture: &[u8], change: impl FnOnce(&mut serde_json::Value)) -> Vec<u8> {
    let mut payload: serde_json::Value = serde_json::from_slice(fixture).expect("fixture is JSON");
    change(&mut payload);
    serde_json::to_vec(&payload).expect("serializes")
}

fn labels(titles: &[&str]) -> serde_json::Value {
    titles
        .iter()
        .map(|title| serde_json::json!({"id": 1, "title": title}))
        .collect()
}

fn tokens(values: &[&str]) -> Vec<Secret> {
    values
        .iter()
        .map(|v| Secret::new((*v).to_owned()))
        .collect()
}

fn refusal(result: Result<(), WebhookError>) -> &'static str {
    match result {
        Err(WebhookError::Unauthorized { reason }) => reason,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

// Verification.

#[test]
fn the_configured_token_is_accepted() {
    verify(&tokens(&["t0ken"]), Some("t0ken")).expect("the token");
}

#[test]
fn any_of_several_tokens_is_accepted() {
    let both = tokens(&["old", "new"]);
    verify(&both, Some("old")).expect("old token still configured");
    verify(&both, Some("new")).expect("new token configured");
}

#[test]
fn a_wrong_token_is_refused() {
    let both = tokens(&["old", "new"]);
    for token in ["ol", "newer", "NEW", " new"] {
        assert_eq!(
            refusal(verify(&both, Some(token))),
            "X-Gitlab-Token does not match",
            "{token:?}"
        );
    }
}

#[test]
fn a_missing_token_is_refused() {
    assert_eq!(
        refusal(verify(&tokens(&["t0ken"]), None)),
        "missing X-Gitlab-Token"
    );
    assert_eq!(
        refusal(verify(&tokens(&["t0ken"]), Some(""))),
        "missing X-Gitlab-Token"
    );
}

#[test]
fn nothing_is_accepted_without_a_configured_token() {
    assert_eq!(
        refusal(verify(&[], Some("t0ken"))),
        "no webhook token is configured"
    );
    assert_eq!(refusal(verify(&[], None)), "no webhook token is configured");
}

// Issues.

fn issue_12_labeled(labels: &[&str]) -> Event {
    Event::IssueLabeled {
        repo: demo(),
        number: Number(12),
        labels: labels.iter().map(|l| (*l).to_owned()).collect(),
        actor: maya(),
        title: "Parser drops the last line without a newline".to_owned(),
        body: "`parse(\"a\\nb\")` returns one line.\n\nExpected two.".to_owned(),
    }
}

#[test]
fn issue_labeled() {
    assert_eq!(
        event("Issue Hook", fixture!("issue.labeled.json")),
        issue_12_labeled(&["forgeward"])
    );
}

#[test]
fn a_confidential_issue_is_parsed_the_same() {
    assert_eq!(
        event("Confidential Issue Hook", fixture!("issue.labeled.json")),
        issue_12_labeled(&["forgeward"])
    );
}

#[test]
fn every_label_added_at_once_is_reported() {
    let body = edited(fixture!("issue.labeled.json"), |payload| {
        payload["changes"]["labels"]["previous"] = labels(&["bug"]);
        payload["changes"]["labels"]["current"] = labels(&["docs", "bug", "forgeward"]);
    });
    assert_eq!(
        event("Issue Hook", &body),
        issue_12_labeled(&["docs", "forgeward"])
    );
}

#[test]
fn a_label_removed_is_not_a_label_added() {
    let body = edited(fixture!("issue.labeled.json"), |payload| {
        payload["changes"]["labels"]["previous"] = labels(&["bug", "forgeward"]);
        payload["changes"]["labels"]["current"] = labels(&["bug"]);
    });
    assert_eq!(ignored_as("Issue Hook", &body), "issue.update");
}

#[test]
fn an_update_without_a_label_change_is_ignored() {
    let body = edited(fixture!("issue.labeled.json"), |payload| {
        payload["changes"]
            .as_object_mut()
            .expect("changes is an object")
            .remove("labels");
    });
    assert_eq!(ignored_as("Issue Hook", &body), "issue.update");
}

#[test]
fn an_issue_opened_without_labels_is_ignored() {
    assert_eq!(
        ignored_as("Issue Hook", fixture!("issue.opened.json")),
        "issue.open"
    );
}

#[test]
fn an_issue_opened_with_labels_was_labeled() {
    let body = edited(fixture!("issue.opened.json"), |payload| {
        payload["labels"] = labels(&["forgeward", "bug"]);
    });
    assert_eq!(
        event("Issue Hook", &body),
        issue_12_labeled(&["forgeward", "bug"])
    );
}

#[test]
fn a_null_description_is_an_empty_body() {
    let body = edited(fixture!("issue.labeled.json"), |payload| {
        payload["object_attributes"]["description"] = serde_json::Value::Null;
    });
    let Event::IssueLabeled { body, .. } = event("Issue Hook", &body) else {
        panic!("not an IssueLabeled");
    };
    assert_eq!(body, "");
}

#[test]
fn other_work_items_are_ignored() {
    let body = edited(fixture!("issue.labeled.json"), |payload| {
        payload["object_kind"] = "work_item".into();
    });
    assert_eq!(ignored_as("Issue Hook", &body), "work_item");
}

// Comments.

#[test]
fn comment_on_an_issue() {
    assert_eq!(
        event("Note Hook", fixture!("note.issue.json")),
        Event::Comment {
            repo: demo(),
            number: Number(12),
            thread: Thread::Issue,
            comment_id: 1301,
            author: maya(),
            body: "/forgeward run".to_owned(),
        }
    );
}

#[test]
fn comment_on_a_merge_request() {
    let expected = Event::Comment {
        repo: demo(),
        number: Number(3),
        thread: Thread::PullRequest,
        comment_id: 1302,
        author: maya(),
        body: "/forgeward run".to_owned(),
    };
    let body = fixture!("note.merge_request.json");
    assert_eq!(event("Note Hook", body), expected);
    assert_eq!(event("Confidential Note Hook", body), expected);
}

#[test]
fn a_comment_without_an_action_is_new() {
    // GitLab before 16.11 sent no `action`, and only for new comments.
    let body = edited(fixture!("note.issue.json"), |payload| {
        payload["object_attributes"]
            .as_object_mut()
            .expect("object_attributes is an object")
            .remove("action");
    });
    assert!(matches!(event("Note Hook", &body), Event::Comment { .. }));
}

#[test]
fn edited_and_system_comments_are_ignored() {
    let body = edited(fixture!("note.issue.json"), |payload| {
        payload["object_attributes"]["action"] = "update".into();
    });
    assert_eq!(ignored_as("Note Hook", &body), "note.update");
    let body = edited(fixture!("note.merge_request.json"), |payload| {
        payload["object_attributes"]["system"] = true.into();
    });
    assert_eq!(ignored_as("Note Hook", &body), "note.system");
}

#[test]
fn comments_on_commits_and_snippets_are_ignored() {
    for (noteable_type, label) in [("Commit", "note.commit"), ("Snippet", "note.snippet")] {
        let body = edited(fixture!("note.issue.json"), |payload| {
            payload["object_attributes"]["noteable_type"] = noteable_type.into();
            payload.as_object_mut().expect("an object").remove("issue");
        });
        assert_eq!(ignored_as("Note Hook", &body), label);
    }
}

#[test]
fn a_comment_on_an_issue_without_the_issue_is_malformed() {
    let body = edited(fixture!("note.issue.json"), |payload| {
        payload.as_object_mut().expect("an object").remove("issue");
    });
    assert_eq!(malformed_at("Note Hook", &body), "issue");
}

// Merge requests.

fn merge_request_3(action: PullRequestAction, head: &str) -> Event {
    Event::PullRequest {
        repo: demo(),
        number: Number(3),
        action,
        base_sha: CommitSha(String::new()),
        head_sha: CommitSha(head.to_owned()),
        head_repo: RepoName("ravi/demo".to_owned()),
        is_fork: true,
        author: ravi(),
    }
}

const FIRST_HEAD: &str = "8c1f3e0d2b5a4c6e9f7a1b3d5c7e9f0a2b4c6d8e";

#[test]
fn merge_request_opened_from_a_fork() {
    assert_eq!(
        event("Merge Request Hook", fixture!("merge_request.open.json")),
        merge_request_3(PullRequestAction::Opened, FIRST_HEAD)
    );
}

#[test]
fn merge_request_given_new_commits() {
    assert_eq!(
        event(
            "Merge Request Hook",
            fixture!("merge_request.update_commits.json")
        ),
        merge_request_3(
            PullRequestAction::Synchronized,
            "e4d7c2b19a0f8e6d5c4b3a29181706f5e4d3c2b1"
        )
    );
}

#[test]
fn merge_request_reopened() {
    assert_eq!(
        event("Merge Request Hook", fixture!("merge_request.reopen.json")),
        merge_request_3(PullRequestAction::Reopened, FIRST_HEAD)
    );
}

#[test]
fn merge_request_from_the_same_project() {
    let body = edited(fixture!("merge_request.open.json"), |payload| {
        payload["object_attributes"]["source_project_id"] = 27.into();
        payload["object_attributes"]["source"]["path_with_namespace"] = "forgeward/demo".into();
    });
    let Event::PullRequest {
        head_repo, is_fork, ..
    } = event("Merge Request Hook", &body)
    else {
        panic!("not a PullRequest");
    };
    assert_eq!(head_repo, RepoName("forgeward/demo".to_owned()));
    assert!(!is_fork);
}

#[test]
fn merge_request_from_a_deleted_project() {
    let body = edited(fixture!("merge_request.update_commits.json"), |payload| {
        payload["object_attributes"]["source_project_id"] = serde_json::Value::Null;
        payload["object_attributes"]["source"] = serde_json::Value::Null;
    });
    let Event::PullRequest {
        head_repo, is_fork, ..
    } = event("Merge Request Hook", &body)
    else {
        panic!("not a PullRequest");
    };
    assert_eq!(head_repo, RepoName(String::new()));
    assert!(is_fork);
}

#[test]
fn an_update_without_new_commits_is_ignored() {
    assert_eq!(
        ignored_as(
            "Merge Request Hook",
            fixture!("merge_request.update_title.json")
        ),
        "merge_request.update"
    );
}

#[test]
fn other_merge_request_actions_are_ignored() {
    for action in ["close", "merge", "approved", "unapproval"] {
        let body = edited(fixture!("merge_request.reopen.json"), |payload| {
            payload["object_attributes"]["action"] = action.into();
        });
        assert_eq!(
            ignored_as("Merge Request Hook", &body),
            format!("merge_request.{action}")
        );
    }
}

#[test]
fn a_merge_request_without_commits_is_ignored() {
    let body = edited(fixture!("merge_request.open.json"), |payload| {
        payload["object_attributes"]["last_commit"] = serde_json::Value::Null;
    });
    assert_eq!(
        ignored_as("Merge Request Hook", &body),
        "merge_request.no_commits"
    );
}

// Everything else.

#[test]
fn other_hooks_are_ignored() {
    assert_eq!(ignored_as("Push Hook", b"{}"), "push");
    assert_eq!(ignored_as("Tag Push Hook", b"not json"), "tag_push");
    assert_eq!(ignored_as("Pipeline Hook", b""), "pipeline");
    // A system hook's merge request event is not a project's.
    assert_eq!(
        ignored_as("System Hook", fixture!("merge_request.open.json")),
        "system"
    );
}

#[test]
fn an_empty_event_name_is_a_bad_header() {
    let err = parse("", fixture!("note.issue.json")).expect_err("no event name");
    assert!(
        matches!(
            err,
            WebhookError::BadHeader {
                header: "X-Gitlab-Event",
                ..
            }
        ),
        "{err:?}"
    );
}

#[test]
fn a_bad_field_is_named_by_its_path() {
    let body = edited(fixture!("issue.labeled.json"), |payload| {
        payload["object_attributes"]["iid"] = "seven".into();
    });
    assert_eq!(malformed_at("Issue Hook", &body), "object_attributes.iid");
    let body = edited(fixture!("note.merge_request.json"), |payload| {
        payload["user"]["id"] = serde_json::Value::Null;
    });
    assert_eq!(malformed_at("Note Hook", &body), "user.id");
    let body = edited(fixture!("merge_request.open.json"), |payload| {
        payload["object_attributes"]["last_commit"]["id"] = 7.into();
    });
    assert_eq!(
        malformed_at("Merge Request Hook", &body),
        "object_attributes.last_commit.id"
    );
    let body = edited(fixture!("issue.labeled.json"), |payload| {
        payload["changes"]["labels"]["current"][0]["title"] = serde_json::Value::Null;
    });
    assert_eq!(
        malformed_at("Issue Hook", &body),
        "changes.labels.current[0].title"
    );
}

#[test]
fn an_ignored_action_with_an_odd_shape_is_still_ignored() {
    let body = br#"{"object_attributes": {"action": "close", "iid": "seven"}}"#;
    assert_eq!(
        ignored_as("Merge Request Hook", body),
        "merge_request.close"
    );
    let body = br#"{"object_attributes": {"noteable_type": "Commit", "id": []}}"#;
    assert_eq!(ignored_as("Note Hook", body), "note.commit");
}

#[test]
fn a_body_that_is_not_json_is_malformed() {
    for name in ["Issue Hook", "Note Hook", "Merge Request Hook"] {
        assert_eq!(malformed_at(name, b"<html>"), ".", "{name}");
        assert_eq!(malformed_at(name, b""), ".", "{name}");
    }
}
