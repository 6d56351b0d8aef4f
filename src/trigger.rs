//! Which events start a job, and the comment commands people give the bot.
//!
//! Policy only: whether the person may trigger a job is asked of the forge when the job runs.

use crate::config::server::TriggerSection;
use crate::forge::{Event, Forge};

/// A command in a comment: `/forgeward run [more instructions]`, `retry`, `cancel`, `check`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    Run { instructions: String },
    Retry,
    Cancel,
    Check,
}

/// The first line of `body` that starts with `prefix` (e.g. `/forgeward`), as a command.
/// A bare `/forgeward` is `run`; an unknown verb is no command at all.
pub fn parse_command(body: &str, prefix: &str) -> Option<Command> {
    body.lines().find_map(|line| {
        let rest = line.trim().strip_prefix(prefix)?;
        if !(rest.is_empty() || rest.starts_with(char::is_whitespace)) {
            return None; // `/forgewardly` is not ours.
        }
        let mut words = rest.trim().splitn(2, char::is_whitespace);
        let verb = words.next().unwrap_or("");
        let more = words.next().unwrap_or("").trim().to_owned();
        match verb {
            "" | "run" => Some(Command::Run { instructions: more }),
            "retry" => Some(Command::Retry),
            "cancel" => Some(Command::Cancel),
            "check" => Some(Command::Check),
            _ => None,
        }
    })
}

/// True when `event` should become a job: the trigger label put on an issue, a command in a
/// comment, or a pull request to check, on any forge. A label event for which [`labels_once`]
/// holds becomes one only if no earlier one of its issue did.
pub fn wants_job(event: &Event, trigger: &TriggerSection) -> bool {
    match event {
        Event::IssueLabeled { labels, .. } => labels.contains(&trigger.label),
        Event::Comment { body, .. } => parse_command(body, &trigger.command).is_some(),
        Event::PullRequest { .. } => true,
        Event::Ping | Event::Installation { .. } => false,
    }
}

/// True when `event` may start a job only if no earlier label did on its issue: an issue labelled
/// on Forgejo or Gitea.
///
/// Their webhooks say which labels an issue has after a change, not which one the change put on
/// ([`Event::IssueLabeled`]). Once the trigger label is on, every later label change on the issue
/// sends it again: someone adding `bug` would start the work a second time. So the first
/// delivery with the trigger label is taken as the one that put it on, and later ones are not
/// jobs. What this gives up: taking the label off and putting it back does not start the work
/// again there (a run command in a comment does), and two label changes delivered at the same
/// instant, before either is recorded, can still both become jobs.
pub fn labels_once(event: &Event) -> bool {
    matches!(event, Event::IssueLabeled { repo, .. } if repo.forge == Forge::Forgejo)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands() {
        let p = |b: &str| parse_command(b, "/forgeward");
        assert_eq!(
            p("/forgeward run"),
            Some(Command::Run {
                instructions: String::new()
            })
        );
        assert_eq!(
            p("/forgeward"),
            Some(Command::Run {
                instructions: String::new()
            })
        );
        assert_eq!(
            p("Thanks!\n  /forgeward run  and add a test too\n"),
            Some(Command::Run {
                instructions: "and add a test too".to_owned()
            })
        );
        assert_eq!(p("/forgeward retry"), Some(Command::Retry));
        assert_eq!(p("/forgeward cancel"), Some(Command::Cancel));
        assert_eq!(p("/forgeward check"), Some(Command::Check));
        assert_eq!(p("/forgeward dance"), None);
        assert_eq!(p("/forgewardly run"), None);
        assert_eq!(p("please /forgeward run"), None);
        assert_eq!(p("no command here"), None);
    }

    #[test]
    fn only_forgejo_labels_start_one_job_per_issue() {
        use crate::forge::{Actor, Number, Repo, RepoName};
        let labeled = |forge| Event::IssueLabeled {
            repo: Repo {
                forge,
                name: RepoName("a/b".to_owned()),
                id: 1,
            },
            number: Number(1),
            labels: vec!["forgeward".to_owned()],
            actor: Actor {
                login: "a".to_owned(),
                id: 1,
            },
            title: String::new(),
            body: String::new(),
        };
        assert!(labels_once(&labeled(Forge::Forgejo)));
        assert!(!labels_once(&labeled(Forge::GitHub)));
        assert!(!labels_once(&labeled(Forge::GitLab)));
        assert!(!labels_once(&Event::Ping));
    }
}
