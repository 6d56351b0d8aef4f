//! What the bot needs of a GitHub App, in one table: the repository permissions its calls
//! use and the webhook events it acts on. `forgeward doctor` compares an App's `GET /app`
//! with it; a manifest to create the App (`forgeward setup github`) is to be written from the
//! same table, so the two cannot drift apart.
//!
//! Each row says which calls need it (see `client.rs`, `tokens.rs`, `git::mirror`):
//! - `metadata: read` — every App has it; `GET /repos/{owner}/{repo}` and a collaborator's
//!   permission (`GET /repos/{owner}/{repo}/collaborators/{username}/permission`) need it.
//! - `contents: write` — `.forgeward.toml` and files at a revision (`GET …/contents/{path}`,
//!   `GET …/git/blobs/{sha}`), cloning, and pushing the worker's branch over git.
//! - `issues: write` — the issue itself, its comments (the status comment), reactions, labels
//!   (`forgeward:flagged` on a pull request is an issue label).
//! - `pull_requests: write` — opening and updating the pull request, its line comments and
//!   review.
//! - `checks: write` — an App reports its result as the `forgeward` check run
//!   (`POST …/check-runs`); `statuses` is not needed: commit statuses are what the bot sets
//!   when it runs with a token instead.
//!
//! Events: `installation` and `installation_repositories` reach every App without asking;
//! `push` is not needed (a pull request's new commits come as `pull_request.synchronize`).
//! `workflows: write` is deliberately not asked for: with it the bot would push a worker's
//! edit of `.github/workflows/`, which then runs with the repository's secrets; without it
//! GitHub refuses that push, and the job fails saying so.

use std::collections::BTreeMap;

/// How much of a permission the bot needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Access {
    Read,
    Write,
}

impl Access {
    /// As GitHub spells it in an App's `permissions` and a manifest's `default_permissions`.
    pub fn as_str(self) -> &'static str {
        match self {
            Access::Read => "read",
            Access::Write => "write",
        }
    }

    /// GitHub's `read`, `write` or `admin`; anything else grants nothing.
    fn granted(level: &str) -> Option<Access> {
        match level {
            "read" => Some(Access::Read),
            "write" | "admin" => Some(Access::Write),
            _ => None,
        }
    }
}

/// One repository permission the bot needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Permission {
    /// GitHub's name for it (`pull_requests`).
    pub name: &'static str,
    pub access: Access,
    /// What the bot does with it, for people.
    pub why: &'static str,
}

/// One webhook event the bot acts on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Event {
    /// GitHub's name for it (`issue_comment`).
    pub name: &'static str,
    pub why: &'static str,
}

/// The repository permissions the bot's calls use. See the module documentation.
pub const PERMISSIONS: &[Permission] = &[
    Permission {
        name: "metadata",
        access: Access::Read,
        why: "repositories and people's permissions on them",
    },
    Permission {
        name: "contents",
        access: Access::Write,
        why: "files at a revision, clones, the worker's branch pushed",
    },
    Permission {
        name: "issues",
        access: Access::Write,
        why: "the status comment, reactions and labels",
    },
    Permission {
        name: "pull_requests",
        access: Access::Write,
        why: "the pull request, its line comments and review",
    },
    Permission {
        name: "checks",
        access: Access::Write,
        why: "the forgeward check run on a commit",
    },
];

/// The webhook events the bot acts on. See the module documentation.
pub const EVENTS: &[Event] = &[
    Event {
        name: "issues",
        why: "the trigger label put on an issue",
    },
    Event {
        name: "issue_comment",
        why: "/forgeward run|retry|cancel|check",
    },
    Event {
        name: "pull_request",
        why: "a pull request opened, given new commits or reopened",
    },
];

/// What an App lacks of [`PERMISSIONS`] and [`EVENTS`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Shortfall {
    /// Each permission it lacks, with what it has of it (`read` where `write` is needed).
    pub permissions: Vec<(Permission, Option<String>)>,
    pub events: Vec<Event>,
}

impl Shortfall {
    pub fn is_empty(&self) -> bool {
        self.permissions.is_empty() && self.events.is_empty()
    }
}

/// What an App with `permissions` (`GET /app`'s object: name → `read`/`write`/`admin`) and
/// subscribed to `events` lacks.
pub fn shortfall(permissions: &BTreeMap<String, String>, events: &[String]) -> Shortfall {
    let permissions_lacking = PERMISSIONS
        .iter()
        .filter_map(|need| {
            let has = permissions.get(need.name);
            let enough = has
                .and_then(|level| Access::granted(level))
                .is_some_and(|granted| granted >= need.access);
            (!enough).then(|| (*need, has.cloned()))
        })
        .collect();
    let events_lacking = EVENTS
        .iter()
        .filter(|need| !events.iter().any(|e| e == need.name))
        .copied()
        .collect();
    Shortfall {
        permissions: permissions_lacking,
        events: events_lacking,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn granted(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn an_app_with_everything_lacks_nothing_and_admin_is_more_than_write() {
        let all = granted(&[
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
        let some = granted(&[
            ("metadata", "read"),
            ("contents", "read"),
            ("issues", "write"),
        ]);
        let lacking = shortfall(&some, &["pull_request".to_owned()]);
        let names: Vec<(&str, Option<&str>)> = lacking
            .permissions
            .iter()
            .map(|(p, has)| (p.name, has.as_deref()))
            .collect();
        assert_eq!(
            names,
            [
                ("contents", Some("read")),
                ("pull_requests", None),
                ("checks", None)
            ]
        );
        let events: Vec<&str> = lacking.events.iter().map(|e| e.name).collect();
        assert_eq!(events, ["issues", "issue_comment"]);
    }
}
