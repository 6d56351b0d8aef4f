//! Who wrote a pull request: a person, or a coding agent.
//!
//! A pull request is agent-authored when its author, or the author or committer of one of its
//! commits, is a bot account or an App; when a commit carries a `Co-authored-by` trailer of a
//! known agent; or when its author, a commit's e-mail or its branch matches the operator's
//! `[review]` agent lists. The agents forgeward knows by name are one table, [`KNOWN`]: each
//! with the accounts it opens pull requests as, the e-mails it signs commits or trailers with,
//! and the branch prefix it names its branches with.
//!
//! Pure: the caller reads the pull request from its forge and the commits from git, and hands
//! over what they say ([`Evidence`]). The answer names what gave the agent away
//! ([`Authorship::Agent`]), for the check's summary: a person must be able to see why their pull
//! request was treated as an agent's.

use std::fmt;

/// An agent forgeward knows by name, and how its pull requests and commits show it.
pub struct KnownAgent {
    /// As people name it: `GitHub Copilot coding agent`.
    pub name: &'static str,
    /// Forge accounts it opens pull requests or commits as (compared without case).
    pub logins: &'static [&'static str],
    /// E-mail addresses of its commits and its `Co-authored-by` trailers (without case).
    pub emails: &'static [&'static str],
    /// The prefix of the branches it pushes (`copilot/`).
    pub branch_prefixes: &'static [&'static str],
}

/// The coding agents known by name. A bot account or an App is an agent whether or not it is
/// here; this table names the ones that also show themselves some other way (a trailer, an
/// e-mail, a branch), and gives the name the summary uses.
pub const KNOWN: &[KnownAgent] = &[
    KnownAgent {
        name: "GitHub Copilot coding agent",
        logins: &["Copilot", "copilot-swe-agent[bot]", "copilot-swe-agent"],
        emails: &["198982749+Copilot@users.noreply.github.com"],
        branch_prefixes: &["copilot/"],
    },
    KnownAgent {
        name: "Claude Code",
        logins: &["claude[bot]", "claude"],
        emails: &[
            "noreply@anthropic.com",
            "209825114+claude[bot]@users.noreply.github.com",
        ],
        branch_prefixes: &["claude/"],
    },
    KnownAgent {
        name: "Codex",
        logins: &["chatgpt-codex-connector[bot]", "chatgpt-codex-connector"],
        emails: &[],
        branch_prefixes: &["codex/"],
    },
    KnownAgent {
        name: "Jules",
        logins: &["google-labs-jules[bot]", "google-labs-jules"],
        emails: &[],
        branch_prefixes: &[],
    },
    KnownAgent {
        name: "Devin",
        logins: &["devin-ai-integration[bot]", "devin-ai-integration"],
        emails: &["158243242+devin-ai-integration[bot]@users.noreply.github.com"],
        branch_prefixes: &["devin/"],
    },
    KnownAgent {
        name: "Cursor background agent",
        logins: &["cursor[bot]", "cursor"],
        emails: &["cursoragent@cursor.com"],
        branch_prefixes: &["cursor/"],
    },
    KnownAgent {
        name: "OpenHands",
        logins: &["openhands-agent", "openhands[bot]"],
        emails: &["openhands@all-hands.dev"],
        branch_prefixes: &["openhands/"],
    },
];

/// The operator's own additions to [`KNOWN`] (`[review] agent_logins`, `agent_emails`,
/// `agent_branch_prefixes`): accounts, e-mails and branch prefixes that mean an agent wrote the
/// pull request.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AgentList {
    pub logins: Vec<String>,
    pub emails: Vec<String>,
    pub branch_prefixes: Vec<String>,
}

/// A forge account, as a pull request or a commit names it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Account {
    pub login: String,
    /// The forge says it is a bot or an App (GitHub's `type: Bot`, GitLab's and Forgejo's bot
    /// users).
    pub bot: bool,
}

/// A name and e-mail from a commit: its author, committer, or a `Co-authored-by` trailer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Signature {
    pub name: String,
    pub email: String,
}

/// One commit of a pull request, as far as authorship goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommitEvidence {
    pub author: Signature,
    pub committer: Signature,
    pub co_authors: Vec<Signature>,
}

/// What is known of who wrote a pull request.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Evidence {
    /// Who opened it, when the forge said.
    pub author: Option<Account>,
    pub branch: String,
    pub commits: Vec<CommitEvidence>,
}

/// Who wrote it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Authorship {
    Person,
    /// An agent, and what showed it (`opened by copilot-swe-agent[bot], a bot account`).
    Agent(String),
}

impl Authorship {
    pub fn is_agent(&self) -> bool {
        matches!(self, Authorship::Agent(_))
    }
}

impl fmt::Display for Authorship {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Authorship::Person => f.write_str("a person"),
            Authorship::Agent(why) => f.write_str(why),
        }
    }
}

/// Whether an agent wrote the pull request, and what showed it: the first sign found, in the
/// order the author, the branch, then each commit's author, committer and trailers.
pub fn authorship(evidence: &Evidence, extra: &AgentList) -> Authorship {
    let named =
        |agent: Option<&KnownAgent>| agent.map_or(String::new(), |a| format!(" ({})", a.name));
    if let Some(author) = &evidence.author {
        let known = by_login(&author.login);
        if author.bot || known.is_some() || is_bot_login(&author.login) {
            return Authorship::Agent(format!(
                "opened by {}, {}{}",
                author.login,
                if author.bot || is_bot_login(&author.login) {
                    "a bot account"
                } else {
                    "an agent's account"
                },
                named(known)
            ));
        }
        if contains(&extra.logins, &author.login) {
            return Authorship::Agent(format!(
                "opened by {}, listed in [review] agent_logins",
                author.login
            ));
        }
    }
    let branch = &evidence.branch;
    if let Some(agent) = KNOWN
        .iter()
        .find(|a| a.branch_prefixes.iter().any(|p| branch.starts_with(p)))
    {
        return Authorship::Agent(format!(
            "its branch {branch} is named as {}'s are",
            agent.name
        ));
    }
    if let Some(prefix) = extra
        .branch_prefixes
        .iter()
        .find(|p| !p.is_empty() && branch.starts_with(p.as_str()))
    {
        return Authorship::Agent(format!(
            "its branch {branch} starts with {prefix}, listed in [review] agent_branch_prefixes"
        ));
    }
    for commit in &evidence.commits {
        for (role, who) in [
            ("authored", &commit.author),
            ("committed", &commit.committer),
        ] {
            if let Some(why) = signed_by_agent(who, extra) {
                return Authorship::Agent(format!("a commit {role} by {}: {why}", shown(who)));
            }
        }
        for who in &commit.co_authors {
            if let Some(why) = signed_by_agent(who, extra) {
                return Authorship::Agent(format!("a commit co-authored by {}: {why}", shown(who)));
            }
        }
    }
    Authorship::Person
}

/// Why a commit's signature is an agent's, if it is.
fn signed_by_agent(who: &Signature, extra: &AgentList) -> Option<String> {
    if let Some(agent) = KNOWN.iter().find(|a| contains_str(a.emails, &who.email)) {
        return Some(format!("{}'s address", agent.name));
    }
    // GitHub's no-reply address of an App's bot user: `<id>+<name>[bot]@users.noreply…`.
    let local = who.email.split('@').next().unwrap_or("");
    if is_bot_login(local) || is_bot_login(&who.name) {
        let known = by_login(local.split_once('+').map_or(local, |(_, l)| l))
            .or_else(|| by_login(&who.name));
        return Some(match known {
            Some(agent) => format!("a bot account ({})", agent.name),
            None => "a bot account".to_owned(),
        });
    }
    if contains(&extra.emails, &who.email) {
        return Some("listed in [review] agent_emails".to_owned());
    }
    None
}

fn shown(who: &Signature) -> String {
    format!("{} <{}>", who.name, who.email)
}

fn by_login(login: &str) -> Option<&'static KnownAgent> {
    KNOWN.iter().find(|a| contains_str(a.logins, login))
}

/// A login forges give bots and Apps: GitHub's `name[bot]`, GitLab's project, group and
/// service-account bots (`project_12_bot_3f…`, `group_4_bot_…`).
fn is_bot_login(login: &str) -> bool {
    let login = login.rsplit_once('+').map_or(login, |(_, l)| l);
    if login.ends_with("[bot]") {
        return true;
    }
    let mut parts = login.split('_');
    matches!(
        (parts.next(), parts.next(), parts.next()),
        (Some("project" | "group"), Some(id), Some("bot")) if !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit())
    )
}

fn contains(list: &[String], value: &str) -> bool {
    list.iter().any(|v| v.eq_ignore_ascii_case(value))
}

fn contains_str(list: &[&str], value: &str) -> bool {
    list.iter().any(|v| v.eq_ignore_ascii_case(value))
}

/// The `Co-authored-by:` trailers of a commit message, in order (the key read without case, as
/// git and forges do; a trailer without an e-mail is not one).
pub fn co_authors(message: &str) -> Vec<Signature> {
    message
        .lines()
        .filter_map(|line| {
            let (key, value) = line.trim().split_once(':')?;
            if !key.trim().eq_ignore_ascii_case("co-authored-by") {
                return None;
            }
            let value = value.trim();
            let (name, rest) = value.split_once('<')?;
            let email = rest.strip_suffix('>')?.trim();
            (!email.is_empty()).then(|| Signature {
                name: name.trim().to_owned(),
                email: email.to_owned(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn person(name: &str, email: &str) -> Signature {
        Signature {
            name: name.to_owned(),
            email: email.to_owned(),
        }
    }

    fn commit(author: Signature, message: &str) -> CommitEvidence {
        CommitEvidence {
            committer: author.clone(),
            author,
            co_authors: co_authors(message),
        }
    }

    fn evidence(login: &str, bot: bool, branch: &str, commits: Vec<CommitEvidence>) -> Evidence {
        Evidence {
            author: Some(Account {
                login: login.to_owned(),
                bot,
            }),
            branch: branch.to_owned(),
            commits,
        }
    }

    fn alice() -> CommitEvidence {
        commit(person("Alice", "alice@example.com"), "Fix the parser\n")
    }

    #[test]
    fn a_person_s_pull_request_is_a_person_s() {
        let e = evidence("alice", false, "fix-parser", vec![alice()]);
        assert_eq!(authorship(&e, &AgentList::default()), Authorship::Person);
    }

    #[test]
    fn a_bot_account_opening_it_is_an_agent() {
        let e = evidence("copilot-swe-agent[bot]", true, "fix", vec![alice()]);
        assert_eq!(
            authorship(&e, &AgentList::default()).to_string(),
            "opened by copilot-swe-agent[bot], a bot account (GitHub Copilot coding agent)"
        );
        // Whatever the forge says of the account, `[bot]` is GitHub's mark of an App.
        let e = evidence("some-app[bot]", false, "fix", vec![]);
        assert!(authorship(&e, &AgentList::default()).is_agent());
        let e = evidence("project_12_bot_3fa9", false, "fix", vec![]);
        assert!(authorship(&e, &AgentList::default()).is_agent());
    }

    #[test]
    fn a_known_agent_s_trailer_makes_a_person_s_pull_request_an_agent_s() {
        let claude = commit(
            person("Alice", "alice@example.com"),
            "Fix it\n\nCo-Authored-By: Claude <noreply@anthropic.com>\n",
        );
        let e = evidence("alice", false, "fix", vec![alice(), claude]);
        assert_eq!(
            authorship(&e, &AgentList::default()).to_string(),
            "a commit co-authored by Claude <noreply@anthropic.com>: Claude Code's address"
        );
        let cursor = commit(
            person("Alice", "alice@example.com"),
            "x\n\nco-authored-by: Cursor Agent <CursorAgent@cursor.com>",
        );
        assert!(
            authorship(
                &evidence("alice", false, "x", vec![cursor]),
                &AgentList::default()
            )
            .is_agent()
        );
    }

    #[test]
    fn a_person_co_author_is_not_an_agent() {
        let pair = commit(
            person("Alice", "alice@example.com"),
            "Fix\n\nCo-authored-by: Bob <bob@example.com>\n",
        );
        let e = evidence("alice", false, "fix", vec![pair]);
        assert_eq!(authorship(&e, &AgentList::default()), Authorship::Person);
    }

    #[test]
    fn a_bot_committer_and_an_agent_s_branch_are_agents() {
        let bot = commit(
            person(
                "devin-ai-integration[bot]",
                "158243242+devin-ai-integration[bot]@users.noreply.github.com",
            ),
            "x",
        );
        let e = Evidence {
            author: None,
            branch: "feature".to_owned(),
            commits: vec![bot],
        };
        assert!(
            authorship(&e, &AgentList::default())
                .to_string()
                .contains("Devin")
        );
        let e = evidence("alice", false, "codex/fix-parser", vec![alice()]);
        assert_eq!(
            authorship(&e, &AgentList::default()).to_string(),
            "its branch codex/fix-parser is named as Codex's are"
        );
    }

    #[test]
    fn the_operator_s_lists_name_more_agents() {
        let extra = AgentList {
            logins: vec!["our-agent".to_owned()],
            emails: vec!["agent@example.com".to_owned()],
            branch_prefixes: vec!["ai/".to_owned()],
        };
        let e = evidence("Our-Agent", false, "fix", vec![]);
        assert!(
            authorship(&e, &extra)
                .to_string()
                .contains("[review] agent_logins")
        );
        let e = evidence("alice", false, "ai/fix", vec![]);
        assert!(
            authorship(&e, &extra)
                .to_string()
                .contains("agent_branch_prefixes")
        );
        let by = commit(person("Agent", "agent@example.com"), "x");
        let e = evidence("alice", false, "fix", vec![by]);
        assert!(authorship(&e, &extra).to_string().contains("agent_emails"));
        // None of it without the lists.
        let e = evidence("our-agent", false, "ai/fix", vec![]);
        assert_eq!(authorship(&e, &AgentList::default()), Authorship::Person);
    }

    #[test]
    fn trailers_are_read_as_git_writes_them() {
        let got = co_authors(
            "Subject\n\nBody says Co-authored-by: in passing\nCo-authored-by: A B <a@example.com>\n\
             Co-authored-by: no address\nCO-AUTHORED-BY:C<c@example.com>\n",
        );
        assert_eq!(
            got,
            [person("A B", "a@example.com"), person("C", "c@example.com")]
        );
    }
}
