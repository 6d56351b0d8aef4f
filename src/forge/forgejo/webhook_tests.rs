//! Forgejo and Gitea deliveries: payloads shaped as the instance sends them, signatures, and
//! malformed input.

use hmac::{Hmac, Mac};
use sha2::Sha256;

use super::*;
use crate::config::server::TriggerSection;
use crate::forge::webhook::testing;
use crate::trigger::{labels_once, wants_job};

macro_rules! fixture {
    ($name:literal) => {
        include_bytes!(concat!("../../../tests/data/webhooks/forgejo/", $name))
    };
}

fn demo() -> Repo {
    Repo {
        forge: Forge::Forgejo,
        name: RepoName("forgeward/demo".to_owned()),
        id: 42,
    }
}

fn maya() -> Actor {
    Actor {
        login: "maya".to_owned(),
        id: 7,
    }
}

fn ravi() -> Actor {
    Actor {
        login: "ravi".to_owned(),
        id: 12,
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

fn labels(names: &[&str]) -> serde_json::Value {
    names
        .iter()
        .enumerate()
        .map(|(id, name)| serde_json::json!({"id": id + 1, "name": name, "color": "ee0701"}))
        .collect()
}

/// The default trigger: the `forgeward` label, the `/forgeward` command.
fn trigger() -> TriggerSection {
    TriggerSection::default()
}

/// `body` as Forgejo signs it with `secret`: the bare hex of the HMAC.
fn sign(secret: &str, body: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("any key length");
    mac.update(body);
    hex::encode(mac.finalize().into_bytes())
}

fn secrets(values: &[&str]) -> Vec<Secret> {
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
fn a_correct_signature_is_accepted() {
    let body = fixture!("issues.label_updated.json");
    let signature = sign("s3cret", body);
    verify(&secrets(&["s3cret"]), Some(&signature), body).expect("signed with the secret");
}

#[test]
fn a_known_hmac_is_accepted() {
    // RFC 4231, test case 2: key "Jefe", data "what do ya want for nothing?".
    let signature = "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843";
    verify(
        &secrets(&["Jefe"]),
        Some(signature),
        b"what do ya want for nothing?",
    )
    .expect("the RFC's HMAC-SHA256");
}

#[test]
fn a_signature_with_another_secret_is_refused() {
    let body = fixture!("push.json");
    let signature = sign("not the secret", body);
    let result = verify(&secrets(&["the secret"]), Some(&signature), body);
    assert_eq!(refusal(result), "signature does not match");
}

#[test]
fn a_body_changed_after_signing_is_refused() {
    let body = fixture!("issue_comment.created.json");
    let signature = sign("s3cret", body);
    let mut changed = body.to_vec();
    let at = changed.len() / 2;
    changed[at] ^= 1;
    let result = verify(&secrets(&["s3cret"]), Some(&signature), &changed);
    assert_eq!(refusal(result), "signature does not match");
}

#[test]
fn any_of_the_rotated_secrets_is_accepted() {
    let body = fixture!("pull_request.opened.json");
    let both = secrets(&["old", "new"]);
    verify(&both, Some(&sign("old", body)), body).expect("old secret still configured");
    verify(&both, Some(&sign("new", body)), body).expect("new secret configured");
    let result = verify(&both, Some(&sign("older", body)), body);
    assert_eq!(refusal(result), "signature does not match");
}

#[test]
fn a_missing_or_empty_signature_is_refused() {
    // A hook saved without a secret sends the header empty.
    for signature in [None, Some("")] {
        let result = verify(&secrets(&["s3cret"]), signature, b"{}");
        assert_eq!(
            refusal(result),
            "missing X-Forgejo-Signature (is the webhook's secret set?)",
            "{signature:?}"
        );
    }
}

#[test]
fn a_malformed_signature_is_refused() {
    let digits = sign("s3cret", b"{}");
    for signature in [
        // GitHub's form: Forgejo puts it only in X-Hub-Signature-256, never in this header.
        format!("sha256={digits}"),
        digits[..62].to_owned(),
        digits[..63].to_owned(),
        format!("{digits}00"),
        format!("{}zz", &digits[..62]),
        format!(" {digits}"),
        "not hex at all".to_owned(),
    ] {
        let result = verify(&secrets(&["s3cret"]), Some(&signature), b"{}");
        assert_eq!(
            refusal(result),
            "malformed X-Forgejo-Signature",
            "{signature:?}"
        );
    }
}

#[test]
fn upper_case_hex_is_still_the_same_signature() {
    let signature = sign("s3cret", b"{}").to_uppercase();
    verify(&secrets(&["s3cret"]), Some(&signature), b"{}").expect("hex is case-blind");
}

#[test]
fn nothing_is_accepted_without_a_configured_secret() {
    let signature = sign("", b"{}");
    let result = verify(&[], Some(&signature), b"{}");
    assert_eq!(refusal(result), "no webhook secret is configured");
    let result = verify(&[], None, b"{}");
    assert_eq!(refusal(result), "no webhook secret is configured");
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
fn labels_updated_lists_every_label_the_issue_has() {
    let labeled = event("issues", fixture!("issues.label_updated.json"));
    assert_eq!(labeled, issue_12_labeled(&["bug", "forgeward"]));
    assert!(wants_job(&labeled, &trigger()));
    // The payload cannot tell whether `forgeward` was just put on: the event is one that only
    // the issue's first label job may come from.
    assert!(labels_once(&labeled));
}

#[test]
fn another_label_changed_later_looks_the_same() {
    // `docs` added to an issue that had `forgeward` already: the same kind of delivery, with
    // the trigger label in it. Only the bot's memory of an earlier label job tells it apart
    // (the server's, tested in tests/integration/serve.rs).
    let body = edited(fixture!("issues.label_updated.json"), |payload| {
        payload["issue"]["labels"] = labels(&["bug", "forgeward", "docs"]);
    });
    let labeled = event("issues", &body);
    assert_eq!(labeled, issue_12_labeled(&["bug", "forgeward", "docs"]));
    assert!(labels_once(&labeled));
}

#[test]
fn the_label_a_payload_names_is_the_one_put_on() {
    // Forgejo's IssuePayload has a `label` (filled today only for Forgejo Actions): when a
    // delivery carries it, it says which label changed.
    let body = edited(fixture!("issues.label_updated.json"), |payload| {
        payload["issue"]["labels"] = labels(&["bug", "forgeward", "docs"]);
        payload["label"] = serde_json::json!({"id": 11, "name": "docs", "color": "0075ca"});
    });
    let labeled = event("issues", &body);
    assert_eq!(labeled, issue_12_labeled(&["docs"]));
    assert!(!wants_job(&labeled, &trigger()));
}

#[test]
fn a_label_removed_is_no_job() {
    // `forgeward` taken off, `bug` left: still `label_updated`, without the trigger label.
    let body = edited(fixture!("issues.label_updated.json"), |payload| {
        payload["issue"]["labels"] = labels(&["bug"]);
    });
    let labeled = event("issues", &body);
    assert_eq!(labeled, issue_12_labeled(&["bug"]));
    assert!(!wants_job(&labeled, &trigger()));

    // The last label taken off one by one, or all at once.
    let body = edited(fixture!("issues.label_updated.json"), |payload| {
        payload["issue"]["labels"] = labels(&[]);
    });
    assert_eq!(ignored_as("issues", &body), "issues.label_updated");
    let body = edited(fixture!("issues.label_updated.json"), |payload| {
        payload["issue"]["labels"] = serde_json::Value::Null;
    });
    assert_eq!(ignored_as("issues", &body), "issues.label_updated");
    assert_eq!(
        ignored_as("issues", fixture!("issues.label_cleared.json")),
        "issues.label_cleared"
    );
}

#[test]
fn an_issue_opened_without_labels_is_ignored() {
    assert_eq!(
        ignored_as("issues", fixture!("issues.opened.json")),
        "issues.opened"
    );
}

#[test]
fn an_issue_opened_with_labels_was_labeled() {
    let body = edited(fixture!("issues.opened.json"), |payload| {
        payload["issue"]["labels"] = labels(&["forgeward", "bug"]);
    });
    let labeled = event("issues", &body);
    assert_eq!(labeled, issue_12_labeled(&["forgeward", "bug"]));
    assert!(wants_job(&labeled, &trigger()));

    let body = edited(fixture!("issues.opened.json"), |payload| {
        payload["issue"]["labels"] = labels(&["bug"]);
    });
    assert!(!wants_job(&event("issues", &body), &trigger()));
}

#[test]
fn a_null_body_is_an_empty_one() {
    let body = edited(fixture!("issues.label_updated.json"), |payload| {
        payload["issue"]["body"] = serde_json::Value::Null;
    });
    let Event::IssueLabeled { body, .. } = event("issues", &body) else {
        panic!("not an IssueLabeled");
    };
    assert_eq!(body, "");
}

#[test]
fn other_issue_actions_are_ignored() {
    for action in [
        "closed",
        "reopened",
        "edited",
        "assigned",
        "milestoned",
        "label_cleared",
    ] {
        let body = edited(fixture!("issues.label_updated.json"), |payload| {
            payload["action"] = action.into();
        });
        assert_eq!(ignored_as("issues", &body), format!("issues.{action}"));
    }
}

// Comments.

#[test]
fn comment_on_an_issue() {
    let comment = event("issue_comment", fixture!("issue_comment.created.json"));
    assert_eq!(
        comment,
        Event::Comment {
            repo: demo(),
            number: Number(12),
            thread: Thread::Issue,
            comment_id: 1301,
            author: maya(),
            body: "/forgeward run".to_owned(),
        }
    );
    assert!(wants_job(&comment, &trigger()));
    assert!(!labels_once(&comment));
}

#[test]
fn comment_on_a_pull_request() {
    // Sent as `issue_comment` (event type `pull_request_comment`) with `is_pull`.
    assert_eq!(
        event(
            "issue_comment",
            fixture!("issue_comment.created.pull_request.json")
        ),
        Event::Comment {
            repo: demo(),
            number: Number(13),
            thread: Thread::PullRequest,
            comment_id: 1302,
            author: maya(),
            body: "/forgeward check".to_owned(),
        }
    );
}

#[test]
fn a_pull_request_comment_is_known_by_is_pull_or_the_issue() {
    // Without `is_pull` (an older Gitea), the issue's `pull_request` still says so.
    let body = edited(
        fixture!("issue_comment.created.pull_request.json"),
        |payload| {
            payload
                .as_object_mut()
                .expect("an object")
                .remove("is_pull");
        },
    );
    let Event::Comment { thread, .. } = event("issue_comment", &body) else {
        panic!("not a Comment");
    };
    assert_eq!(thread, Thread::PullRequest);

    let body = edited(
        fixture!("issue_comment.created.pull_request.json"),
        |payload| {
            payload["issue"]["pull_request"] = serde_json::Value::Null;
        },
    );
    let Event::Comment { thread, .. } = event("issue_comment", &body) else {
        panic!("not a Comment");
    };
    assert_eq!(thread, Thread::PullRequest);
}

#[test]
fn edited_and_deleted_comments_are_ignored() {
    assert_eq!(
        ignored_as("issue_comment", fixture!("issue_comment.edited.json")),
        "issue_comment.edited"
    );
    let body = edited(fixture!("issue_comment.created.json"), |payload| {
        payload["action"] = "deleted".into();
    });
    assert_eq!(ignored_as("issue_comment", &body), "issue_comment.deleted");
}

#[test]
fn a_comment_without_a_command_is_no_job() {
    let body = edited(fixture!("issue_comment.created.json"), |payload| {
        payload["comment"]["body"] = "Thanks, looks good".into();
    });
    assert!(!wants_job(&event("issue_comment", &body), &trigger()));
}

// Pull requests.

fn pull_request_13(action: PullRequestAction, head: &str) -> Event {
    Event::PullRequest {
        repo: demo(),
        number: Number(13),
        action,
        base_sha: CommitSha("3a5b7c9d1e2f4a6b8c0d2e4f6a8b0c2d4e6f8a0b".to_owned()),
        head_sha: CommitSha(head.to_owned()),
        head_repo: RepoName("ravi/demo".to_owned()),
        is_fork: true,
        author: ravi(),
    }
}

const FIRST_HEAD: &str = "8c1f3e0d2b5a4c6e9f7a1b3d5c7e9f0a2b4c6d8e";
const SECOND_HEAD: &str = "e4d7c2b19a0f8e6d5c4b3a29181706f5e4d3c2b1";

#[test]
fn pull_request_opened_synchronized_reopened() {
    for (fixture, expected) in [
        (
            &fixture!("pull_request.opened.json")[..],
            pull_request_13(PullRequestAction::Opened, FIRST_HEAD),
        ),
        (
            fixture!("pull_request.synchronized.json"),
            pull_request_13(PullRequestAction::Synchronized, SECOND_HEAD),
        ),
        (
            fixture!("pull_request.reopened.json"),
            pull_request_13(PullRequestAction::Reopened, SECOND_HEAD),
        ),
    ] {
        let pull = event("pull_request", fixture);
        assert_eq!(pull, expected);
        assert!(wants_job(&pull, &trigger()));
    }
}

#[test]
fn pull_request_from_the_same_repository() {
    let body = edited(fixture!("pull_request.opened.json"), |payload| {
        let base = payload["pull_request"]["base"]["repo"].clone();
        payload["pull_request"]["head"]["repo_id"] = 42.into();
        payload["pull_request"]["head"]["repo"] = base;
    });
    let Event::PullRequest {
        head_repo, is_fork, ..
    } = event("pull_request", &body)
    else {
        panic!("not a PullRequest");
    };
    assert_eq!(head_repo, RepoName("forgeward/demo".to_owned()));
    assert!(!is_fork);
}

#[test]
fn pull_request_from_a_deleted_fork() {
    // services/convert/pull.go leaves `repo_id` at -1 and no `repo` when the head repository
    // is gone.
    let body = edited(fixture!("pull_request.synchronized.json"), |payload| {
        payload["pull_request"]["head"]["repo_id"] = (-1).into();
        payload["pull_request"]["head"]["repo"] = serde_json::Value::Null;
    });
    let Event::PullRequest {
        head_repo, is_fork, ..
    } = event("pull_request", &body)
    else {
        panic!("not a PullRequest");
    };
    assert_eq!(head_repo, RepoName(String::new()));
    assert!(is_fork);
}

#[test]
fn a_pull_request_without_a_head_commit_is_ignored() {
    let body = edited(fixture!("pull_request.opened.json"), |payload| {
        payload["pull_request"]["head"]["sha"] = "".into();
    });
    assert_eq!(
        ignored_as("pull_request", &body),
        "pull_request.no_head_commit"
    );
}

#[test]
fn other_pull_request_actions_are_ignored() {
    assert_eq!(
        ignored_as("pull_request", fixture!("pull_request.closed.json")),
        "pull_request.closed"
    );
    // A label on a pull request is no job, as on the other forges; nor is a review or an edit.
    for action in [
        "label_updated",
        "label_cleared",
        "edited",
        "assigned",
        "review_requested",
        "reviewed",
        "milestoned",
    ] {
        let body = edited(fixture!("pull_request.opened.json"), |payload| {
            payload["action"] = action.into();
        });
        assert_eq!(
            ignored_as("pull_request", &body),
            format!("pull_request.{action}")
        );
    }
}

// Everything else.

#[test]
fn events_the_bot_does_not_act_on_are_ignored() {
    // `push` is also what a hook's "Test delivery" sends.
    assert_eq!(ignored_as("push", fixture!("push.json")), "push");
    assert_eq!(ignored_as("create", b"{}"), "create");
    assert_eq!(
        ignored_as(
            "pull_request_approved",
            fixture!("pull_request.opened.json")
        ),
        "pull_request_approved"
    );
    // A review comment's event name, with a pull request payload: not an issue comment.
    assert_eq!(
        ignored_as("pull_request_comment", b"not json"),
        "pull_request_comment"
    );
    assert_eq!(ignored_as("release\n", b""), "release_");
}

#[test]
fn an_empty_event_name_is_a_bad_header() {
    let err = parse("", fixture!("push.json")).expect_err("no event name");
    assert!(
        matches!(
            err,
            WebhookError::BadHeader {
                header: "X-Forgejo-Event",
                ..
            }
        ),
        "{err:?}"
    );
}

// Bad payloads.

#[test]
fn a_bad_field_is_named_by_its_path() {
    let body = edited(fixture!("issues.label_updated.json"), |payload| {
        payload["issue"]["number"] = "seven".into();
    });
    assert_eq!(malformed_at("issues", &body), "issue.number");
    let body = edited(fixture!("issues.label_updated.json"), |payload| {
        payload["issue"]["labels"][1]["name"] = serde_json::Value::Null;
    });
    assert_eq!(malformed_at("issues", &body), "issue.labels[1].name");
    let body = edited(fixture!("issue_comment.created.json"), |payload| {
        payload["comment"]["user"]["id"] = serde_json::Value::Null;
    });
    assert_eq!(malformed_at("issue_comment", &body), "comment.user.id");
    let body = edited(fixture!("issue_comment.created.json"), |payload| {
        payload
            .as_object_mut()
            .expect("an object")
            .remove("repository");
    });
    assert_eq!(malformed_at("issue_comment", &body), "repository");
    let body = edited(fixture!("pull_request.opened.json"), |payload| {
        payload["pull_request"]["head"]
            .as_object_mut()
            .expect("head is an object")
            .remove("sha");
    });
    assert_eq!(malformed_at("pull_request", &body), "pull_request.head.sha");
    let body = edited(fixture!("pull_request.opened.json"), |payload| {
        payload["pull_request"] = serde_json::Value::Null;
    });
    assert_eq!(malformed_at("pull_request", &body), "pull_request");
    assert_eq!(malformed_at("issues", br#"{"action": 7}"#), "action");
    assert_eq!(malformed_at("issues", br#"{"issue": {}}"#), "action");
    assert_eq!(
        malformed_at("issues", br#"{"action": "opened", "number": 1}"#),
        "issue"
    );
}

#[test]
fn an_ignored_action_with_an_odd_shape_is_still_ignored() {
    let body = br#"{"action": "deleted", "issue": {"number": "seven"}}"#;
    assert_eq!(ignored_as("issue_comment", body), "issue_comment.deleted");
    let body = br#"{"action": "closed", "pull_request": []}"#;
    assert_eq!(ignored_as("pull_request", body), "pull_request.closed");
}

#[test]
fn a_body_that_is_not_json_is_malformed() {
    for name in ["issues", "issue_comment", "pull_request"] {
        assert_eq!(
            malformed_at(name, b"payload=%7B%22action%22"),
            ".",
            "{name}"
        );
        assert_eq!(malformed_at(name, b""), ".", "{name}");
    }
}

#[test]
fn the_malformed_message_does_not_echo_the_body() {
    let body = br#"{"action": "opened", "issue": {"number": "top secret plans",
        "labels": [{"name": "forgeward"}]}}"#;
    let err = parse("issues", body).expect_err("a string is not a number");
    assert!(!err.to_string().contains("top secret"), "{err}");
    assert_eq!(err.status(), 400);
}
