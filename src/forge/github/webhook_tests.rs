//! GitHub deliveries: real example payloads, signatures and tokens, and malformed input.

use hmac::{Hmac, Mac};
use sha2::Sha256;

use super::*;
use crate::forge::webhook::testing;

macro_rules! fixture {
    ($name:literal) => {
        include_bytes!(concat!("../../../tests/data/webhooks/github/", $name))
    };
}

fn hello_world() -> Repo {
    Repo {
        forge: Forge::GitHub,
        name: RepoName("Codertocat/Hello-World".to_owned()),
        id: 186853002,
    }
}

fn codertocat() -> Actor {
    Actor {
        login: "Codertocat".to_owned(),
        id: 21031067,
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

/// `body` as GitHub signs it with `secret`.
fn sign(secret: &str, body: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("any key length");
    mac.update(body);
    format!("sha256={}", hex::encode(mac.finalize().into_bytes()))
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
    let body = fixture!("issues.labeled.json");
    let signature = sign("It's a Secret to Everybody", body);
    verify(
        &secrets(&["It's a Secret to Everybody"]),
        Some(&signature),
        body,
    )
    .expect("signed with the secret");
}

#[test]
fn githubs_documented_example_signature_is_accepted() {
    // From GitHub's "Validating webhook deliveries": secret and payload as given there.
    let signature = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17";
    verify(
        &secrets(&["It's a Secret to Everybody"]),
        Some(signature),
        b"Hello, World!",
    )
    .expect("GitHub's own test vector");
}

#[test]
fn a_signature_with_another_secret_is_refused() {
    let body = fixture!("ping.json");
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
    let body = fixture!("push.json");
    let both = secrets(&["old", "new"]);
    verify(&both, Some(&sign("old", body)), body).expect("old secret still configured");
    verify(&both, Some(&sign("new", body)), body).expect("new secret configured");
    let result = verify(&both, Some(&sign("older", body)), body);
    assert_eq!(refusal(result), "signature does not match");
}

#[test]
fn a_missing_signature_is_refused() {
    let result = verify(&secrets(&["s3cret"]), None, b"{}");
    assert_eq!(refusal(result), "missing X-Hub-Signature-256");
}

#[test]
fn a_malformed_signature_is_refused() {
    let good = sign("s3cret", b"{}");
    let digits = good.trim_start_matches("sha256=");
    for signature in [
        "",
        "sha256=",
        digits,
        &format!("sha1={digits}"),
        &format!("sha256={}", &digits[..62]),
        &format!("sha256={digits}00"),
        &format!("sha256={}zz", &digits[..62]),
        &format!("sha256= {digits}"),
    ] {
        let result = verify(&secrets(&["s3cret"]), Some(signature), b"{}");
        assert_eq!(
            refusal(result),
            "malformed X-Hub-Signature-256",
            "{signature:?}"
        );
    }
}

#[test]
fn upper_case_hex_is_still_the_same_signature() {
    let signature = sign("s3cret", b"{}")
        .to_uppercase()
        .replacen("SHA256=", "sha256=", 1);
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

// Parsing the real examples.

#[test]
fn ping() {
    assert_eq!(event("ping", fixture!("ping.json")), Event::Ping);
}

#[test]
fn issue_labeled() {
    assert_eq!(
        event("issues", fixture!("issues.labeled.json")),
        Event::IssueLabeled {
            repo: hello_world(),
            number: Number(1),
            labels: vec!["bug".to_owned()],
            actor: codertocat(),
            title: "Spelling error in the README file".to_owned(),
            body: "It looks like you accidently spelled 'commit' with two 't's.".to_owned(),
        }
    );
}

#[test]
fn issue_labeled_with_a_null_body_has_an_empty_one() {
    let mut payload: serde_json::Value =
        serde_json::from_slice(fixture!("issues.labeled.json")).expect("fixture is JSON");
    payload["issue"]["body"] = serde_json::Value::Null;
    let body = serde_json::to_vec(&payload).expect("serializes");
    let Event::IssueLabeled { body, .. } = event("issues", &body) else {
        panic!("not an IssueLabeled");
    };
    assert_eq!(body, "");
}

#[test]
fn other_issue_actions_are_ignored() {
    assert_eq!(
        ignored_as("issues", fixture!("issues.opened.json")),
        "issues.opened"
    );
}

#[test]
fn comment_on_an_issue() {
    assert_eq!(
        event("issue_comment", fixture!("issue_comment.created.json")),
        Event::Comment {
            repo: hello_world(),
            number: Number(1),
            thread: Thread::Issue,
            comment_id: 492700400,
            author: codertocat(),
            body: "You are totally right! I'll get this fixed right away.".to_owned(),
        }
    );
}

#[test]
fn comment_on_a_pull_request() {
    assert_eq!(
        event(
            "issue_comment",
            fixture!("issue_comment.created.pull_request.json")
        ),
        Event::Comment {
            repo: hello_world(),
            number: Number(1),
            thread: Thread::PullRequest,
            comment_id: 492700400,
            author: codertocat(),
            body: "You are totally right! I'll get this fixed right away.".to_owned(),
        }
    );
}

#[test]
fn edited_comments_are_ignored() {
    assert_eq!(
        ignored_as("issue_comment", fixture!("issue_comment.edited.json")),
        "issue_comment.edited"
    );
}

fn pull_request_2(action: PullRequestAction) -> Event {
    Event::PullRequest {
        repo: hello_world(),
        number: Number(2),
        action,
        base_sha: CommitSha("f95f852bd8fca8fcc58a9a2d6c842781e32a215e".to_owned()),
        head_sha: CommitSha("ec26c3e57ca3a959ca5aad62de7213c562f8c821".to_owned()),
        head_repo: RepoName("Codertocat/Hello-World".to_owned()),
        is_fork: false,
        author: codertocat(),
    }
}

#[test]
fn pull_request_opened_synchronized_reopened() {
    for (fixture, action) in [
        (
            &fixture!("pull_request.opened.json")[..],
            PullRequestAction::Opened,
        ),
        (
            fixture!("pull_request.synchronize.json"),
            PullRequestAction::Synchronized,
        ),
        (
            fixture!("pull_request.reopened.json"),
            PullRequestAction::Reopened,
        ),
    ] {
        assert_eq!(event("pull_request", fixture), pull_request_2(action));
    }
}

#[test]
fn pull_request_from_a_fork() {
    let mut payload: serde_json::Value =
        serde_json::from_slice(fixture!("pull_request.opened.json")).expect("fixture is JSON");
    payload["pull_request"]["head"]["repo"]["id"] = 4242.into();
    payload["pull_request"]["head"]["repo"]["full_name"] = "octocat/Hello-World".into();
    let body = serde_json::to_vec(&payload).expect("serializes");
    let Event::PullRequest {
        head_repo, is_fork, ..
    } = event("pull_request", &body)
    else {
        panic!("not a PullRequest");
    };
    assert_eq!(head_repo, RepoName("octocat/Hello-World".to_owned()));
    assert!(is_fork);
}

#[test]
fn pull_request_from_a_deleted_fork() {
    let mut payload: serde_json::Value =
        serde_json::from_slice(fixture!("pull_request.synchronize.json")).expect("fixture is JSON");
    payload["pull_request"]["head"]["repo"] = serde_json::Value::Null;
    let body = serde_json::to_vec(&payload).expect("serializes");
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
fn closed_pull_requests_are_ignored() {
    assert_eq!(
        ignored_as("pull_request", fixture!("pull_request.closed.json")),
        "pull_request.closed"
    );
}

#[test]
fn installation_created_and_deleted() {
    assert_eq!(
        event("installation", fixture!("installation.created.json")),
        Event::Installation {
            action: InstallationAction::Added,
            installation_id: 957387,
            account: "Codertocat".to_owned(),
            repos: vec![RepoName("Codertocat/Hello-World".to_owned())],
        }
    );
    assert_eq!(
        event("installation", fixture!("installation.deleted.json")),
        Event::Installation {
            action: InstallationAction::Removed,
            installation_id: 2,
            account: "octocat".to_owned(),
            repos: vec![RepoName("octocat/Hello-World".to_owned())],
        }
    );
}

#[test]
fn installation_repositories_added_and_removed() {
    let added = fixture!("installation_repositories.added.json");
    assert_eq!(
        event("installation_repositories", added),
        Event::Installation {
            action: InstallationAction::Added,
            installation_id: 957387,
            account: "Codertocat".to_owned(),
            repos: vec![RepoName("Codertocat/Space".to_owned())],
        }
    );

    let mut payload: serde_json::Value = serde_json::from_slice(added).expect("fixture is JSON");
    payload["action"] = "removed".into();
    payload["repositories_removed"] = payload["repositories_added"].take();
    let body = serde_json::to_vec(&payload).expect("serializes");
    assert_eq!(
        event("installation_repositories", &body),
        Event::Installation {
            action: InstallationAction::Removed,
            installation_id: 957387,
            account: "Codertocat".to_owned(),
            repos: vec![RepoName("Codertocat/Space".to_owned())],
        }
    );
}

#[test]
fn other_installation_actions_are_ignored() {
    assert_eq!(
        ignored_as(
            "installation",
            br#"{"action": "suspend", "installation": 7}"#
        ),
        "installation.suspend"
    );
}

#[test]
fn events_the_bot_does_not_act_on_are_ignored() {
    assert_eq!(ignored_as("push", fixture!("push.json")), "push");
    assert_eq!(ignored_as("check_run", b"{}"), "check_run");
    assert_eq!(ignored_as("not even json", b"\x00\xff"), "not_even_json");
}

#[test]
fn an_empty_event_name_is_a_bad_header() {
    let err = parse("", fixture!("ping.json")).expect_err("no event name");
    assert!(
        matches!(
            err,
            WebhookError::BadHeader {
                header: "X-GitHub-Event",
                ..
            }
        ),
        "{err:?}"
    );
}

// Bad payloads.

#[test]
fn a_bad_field_is_named_by_its_path() {
    let mut payload: serde_json::Value =
        serde_json::from_slice(fixture!("issues.labeled.json")).expect("fixture is JSON");
    payload["issue"]["number"] = "seven".into();
    let body = serde_json::to_vec(&payload).expect("serializes");
    assert_eq!(malformed_at("issues", &body), "issue.number");

    let body = br#"{"action": "created", "issue": {"number": 1, "title": "t", "body": null}}"#;
    assert_eq!(malformed_at("issue_comment", body), "repository");
    let body = br#"{"action": "opened", "repository": {"id": 1, "full_name": "a/b"},
            "pull_request": {"number": 1, "user": {"login": "a", "id": 1},
            "base": {"sha": "x", "repo": {"id": 1, "full_name": "a/b"}}, "head": {"repo": null}}}"#;
    assert_eq!(malformed_at("pull_request", body), "pull_request.head.sha");
    assert_eq!(malformed_at("issues", br#"{"action": 7}"#), "action");
    assert_eq!(malformed_at("issues", br#"{"issue": {}}"#), "action");
}

#[test]
fn an_ignored_action_with_an_odd_shape_is_still_ignored() {
    let body = br#"{"action": "deleted", "issue": {"number": "seven"}}"#;
    assert_eq!(ignored_as("issue_comment", body), "issue_comment.deleted");
}

#[test]
fn a_body_that_is_not_json_is_malformed() {
    for name in ["issues", "issue_comment", "pull_request", "installation"] {
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
    let body = br#"{"action": "labeled", "issue": {"number": "top secret plans"}}"#;
    let err = parse("issues", body).expect_err("a string is not a number");
    assert!(!err.to_string().contains("top secret"), "{err}");
    assert_eq!(err.status(), 400);
}
