//! What the bot asks of GitHub, as a GitHub App needs it granted: one table of the calls
//! the client makes on a repository with the permission each needs, the events the receiver
//! acts on, and the App's permissions derived from them (`forgeward setup github` puts them in
//! the App's manifest). A call added to the client without a row here fails this module's
//! test, so the App never lacks a permission the code came to need, nor holds one it does not.
//!
//! Deliberately absent: `workflows` (the bot never pushes a change to `.github/workflows/`, so
//! a worker cannot write a workflow that runs with the repository's secrets; GitHub refuses such
//! a push), `statuses` (an App's check is a check run), `administration` and `members`.

use std::collections::BTreeMap;

/// How much of a permission the App needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Access {
    Read,
    Write,
}

impl Access {
    /// As a manifest spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Access::Read => "read",
            Access::Write => "write",
        }
    }
}

/// One thing the bot does on a repository and the App permission it needs.
#[derive(Clone, Copy, Debug)]
pub struct Use {
    /// The REST call, as the client names it in its errors (and GitHub documents it), or what
    /// git does.
    pub call: &'static str,
    /// The App permission (`issues`, `pull_requests`, …); `None` for a call the bot makes only
    /// with a personal token.
    pub permission: Option<&'static str>,
    pub access: Access,
}

const fn read(call: &'static str, permission: &'static str) -> Use {
    Use {
        call,
        permission: Some(permission),
        access: Access::Read,
    }
}

const fn write(call: &'static str, permission: &'static str) -> Use {
    Use {
        call,
        permission: Some(permission),
        access: Access::Write,
    }
}

/// Everything the bot does on a repository it is installed on.
pub const USES: &[Use] = &[
    read("GET /repos/{owner}/{repo}", "metadata"),
    read(
        "GET /repos/{owner}/{repo}/collaborators/{username}/permission",
        "metadata",
    ),
    read("GET /repos/{owner}/{repo}/contents/{path}", "contents"),
    read("GET /repos/{owner}/{repo}/git/blobs/{file_sha}", "contents"),
    read(
        "git fetch (the mirror and a pull request's head)",
        "contents",
    ),
    write("git push (the bot's branch)", "contents"),
    read("GET /repos/{owner}/{repo}/issues/{issue_number}", "issues"),
    read(
        "GET /repos/{owner}/{repo}/issues/{issue_number}/comments",
        "issues",
    ),
    write(
        "POST /repos/{owner}/{repo}/issues/{issue_number}/comments",
        "issues",
    ),
    write(
        "PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}",
        "issues",
    ),
    write(
        "POST /repos/{owner}/{repo}/issues/comments/{comment_id}/reactions",
        "issues",
    ),
    write(
        "POST /repos/{owner}/{repo}/issues/{issue_number}/labels",
        "issues",
    ),
    write(
        "DELETE /repos/{owner}/{repo}/issues/{issue_number}/labels/{name}",
        "issues",
    ),
    read("GET /repos/{owner}/{repo}/pulls", "pull_requests"),
    read(
        "GET /repos/{owner}/{repo}/pulls/{pull_number}",
        "pull_requests",
    ),
    // GraphQL: a pull request's review threads, and resolving one whose flag no longer holds.
    read("POST /graphql (reviewThreads)", "pull_requests"),
    write("POST /graphql (resolveReviewThread)", "pull_requests"),
    write("POST /repos/{owner}/{repo}/pulls", "pull_requests"),
    write(
        "PATCH /repos/{owner}/{repo}/pulls/{pull_number}",
        "pull_requests",
    ),
    write(
        "POST /repos/{owner}/{repo}/pulls/{pull_number}/reviews",
        "pull_requests",
    ),
    read(
        "GET /repos/{owner}/{repo}/commits/{ref}/check-runs",
        "checks",
    ),
    write("POST /repos/{owner}/{repo}/check-runs", "checks"),
    write(
        "PATCH /repos/{owner}/{repo}/check-runs/{check_run_id}",
        "checks",
    ),
    // With a personal token only: an App's check is a check run.
    Use {
        call: "POST /repos/{owner}/{repo}/statuses/{sha}",
        permission: None,
        access: Access::Write,
    },
];

/// The webhook events the receiver acts on, and why. GitHub sends `installation` and `ping`
/// to every App unasked.
pub const EVENTS: &[(&str, &str)] = &[
    ("issues", "the trigger label put on an issue starts a job"),
    (
        "issue_comment",
        "`/forgeward run|retry|cancel|check` in a comment",
    ),
    (
        "pull_request",
        "a pull request opened, pushed to or reopened is checked",
    ),
];

/// The permissions the App needs, each at the most any use needs: what its manifest's
/// `default_permissions` says.
pub fn app_permissions() -> BTreeMap<&'static str, Access> {
    let mut permissions = BTreeMap::new();
    for u in USES {
        if let Some(permission) = u.permission {
            let access = permissions.entry(permission).or_insert(u.access);
            *access = (*access).max(u.access);
        }
    }
    permissions
}

/// GitHub's `read`, `write` or `admin` in an App's `permissions`; anything else grants nothing.
fn granted(level: &str) -> Option<Access> {
    match level {
        "read" => Some(Access::Read),
        "write" | "admin" => Some(Access::Write),
        _ => None,
    }
}

/// What an App lacks of [`app_permissions`] and [`EVENTS`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Shortfall {
    /// Each permission it lacks, the access needed, and what it has of it (`read` where
    /// `write` is needed).
    pub permissions: Vec<(&'static str, Access, Option<String>)>,
    /// Each event it is not subscribed to, and why the bot needs it.
    pub events: Vec<(&'static str, &'static str)>,
}

impl Shortfall {
    pub fn is_empty(&self) -> bool {
        self.permissions.is_empty() && self.events.is_empty()
    }
}

/// What an App with `permissions` (`GET /app`'s object: name → `read`/`write`/`admin`) and
/// subscribed to `events` lacks of what the bot needs: `forgeward doctor`'s finding.
pub fn shortfall(permissions: &BTreeMap<String, String>, events: &[String]) -> Shortfall {
    let lacking = app_permissions()
        .into_iter()
        .filter_map(|(name, needed)| {
            let has = permissions.get(name);
            let enough = has
                .and_then(|level| granted(level))
                .is_some_and(|granted| granted >= needed);
            (!enough).then(|| (name, needed, has.cloned()))
        })
        .collect();
    Shortfall {
        permissions: lacking,
        events: EVENTS
            .iter()
            .filter(|(name, _)| !events.iter().any(|e| e == name))
            .copied()
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn granted_map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn an_app_with_everything_lacks_nothing_and_admin_is_more_than_write() {
        let all = granted_map(&[
            ("metadata", "read"),
            ("contents", "admin"),
            ("issues", "write"),
            ("pull_requests", "write"),
            ("checks", "write"),
            ("deployments", "read"),
        ]);
        let events: Vec<String> = ["issues", "issue_comment", "pull_request", "push"]
            .map(str::to_owned)
            .to_vec();
        assert!(shortfall(&all, &events).is_empty());
    }

    #[test]
    fn read_where_write_is_needed_and_a_missing_event_are_named() {
        let some = granted_map(&[
            ("metadata", "read"),
            ("contents", "read"),
            ("issues", "write"),
        ]);
        let lacking = shortfall(&some, &["pull_request".to_owned()]);
        let names: Vec<(&str, Option<&str>)> = lacking
            .permissions
            .iter()
            .map(|(name, _, has)| (*name, has.as_deref()))
            .collect();
        assert_eq!(
            names,
            [
                ("checks", None),
                ("contents", Some("read")),
                ("pull_requests", None)
            ]
        );
        let events: Vec<&str> = lacking.events.iter().map(|(name, _)| *name).collect();
        assert_eq!(events, ["issues", "issue_comment"]);
    }

    /// Every `const CALL` the GitHub client names a repository call with.
    fn client_calls() -> Vec<&'static str> {
        let sources = [
            include_str!("client.rs"),
            include_str!("checks.rs"),
            include_str!("graphql.rs"),
        ];
        let mut calls: Vec<&str> = sources
            .iter()
            .flat_map(|source| source.split("const CALL: &str = \"").skip(1))
            .filter_map(|rest| rest.split('"').next())
            .collect();
        calls.sort_unstable();
        calls.dedup();
        calls
    }

    #[test]
    fn every_call_the_client_makes_has_its_permission_and_every_row_is_a_call() {
        let calls = client_calls();
        assert!(calls.len() > 15, "{calls:?}");
        for call in &calls {
            assert!(
                USES.iter().any(|u| u.call == *call),
                "{call}: the GitHub App's permissions do not say what it needs (add a row to USES)"
            );
        }
        for u in USES.iter().filter(|u| !u.call.starts_with("git ")) {
            assert!(
                calls.contains(&u.call),
                "{}: no longer called; remove its row",
                u.call
            );
        }
    }

    #[test]
    fn the_app_asks_for_what_it_uses_and_nothing_more() {
        let permissions: Vec<(&str, &str)> = app_permissions()
            .into_iter()
            .map(|(p, a)| (p, a.as_str()))
            .collect();
        assert_eq!(
            permissions,
            [
                ("checks", "write"),
                ("contents", "write"),
                ("issues", "write"),
                ("metadata", "read"),
                ("pull_requests", "write"),
            ]
        );
    }

    #[test]
    fn the_events_are_the_ones_the_receiver_acts_on() {
        let examples: [(&str, &[u8]); 3] = [
            (
                "issues",
                include_bytes!("../../../tests/data/webhooks/github/issues.labeled.json"),
            ),
            (
                "issue_comment",
                include_bytes!("../../../tests/data/webhooks/github/issue_comment.created.json"),
            ),
            (
                "pull_request",
                include_bytes!("../../../tests/data/webhooks/github/pull_request.opened.json"),
            ),
        ];
        let events: Vec<&str> = EVENTS.iter().map(|(event, _)| *event).collect();
        assert_eq!(events, examples.map(|(event, _)| event));
        for (event, body) in examples {
            let parsed = super::super::webhook::parse(event, body);
            assert!(
                matches!(parsed, Ok(crate::forge::webhook::Parsed::Event(_))),
                "{event}: {parsed:?}"
            );
        }
    }
}
