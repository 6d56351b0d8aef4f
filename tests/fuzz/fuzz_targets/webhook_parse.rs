//! Arbitrary bytes as a webhook body, under every event name each forge's parser treats
//! differently: parsing may refuse them, never panic. The same bytes as a signature and a token
//! exercise verification.

#![no_main]

use forgeward::forge::webhook::Secret;
use forgeward::forge::{forgejo, github, gitlab};
use libfuzzer_sys::fuzz_target;

const GITHUB_EVENTS: &[&str] = &[
    "ping",
    "issues",
    "issue_comment",
    "pull_request",
    "installation",
    "installation_repositories",
    "push",
    "",
];

const GITLAB_EVENTS: &[&str] = &[
    "Issue Hook",
    "Confidential Issue Hook",
    "Note Hook",
    "Confidential Note Hook",
    "Merge Request Hook",
    "System Hook",
    "Push Hook",
    "",
];

const FORGEJO_EVENTS: &[&str] = &["issues", "issue_comment", "pull_request", "push", ""];

fuzz_target!(|body: &[u8]| {
    for event in GITHUB_EVENTS {
        let _ = github::webhook::parse(event, body);
    }
    for event in GITLAB_EVENTS {
        let _ = gitlab::webhook::parse(event, body);
    }
    for event in FORGEJO_EVENTS {
        let _ = forgejo::webhook::parse(event, body);
    }

    let secrets = [Secret::new("fuzz".to_owned())];
    let text = std::str::from_utf8(body).ok();
    let _ = github::webhook::verify(&secrets, text, body);
    let _ = gitlab::webhook::verify(&secrets, text);
    let _ = forgejo::webhook::verify(&secrets, text, body);
});
