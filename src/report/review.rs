//! What a reviewer reads on the pull or merge request: one line comment per flag, the review's
//! body, and the pull request's own description.
//!
//! Pure rendering, like the status comment: flags and texts in, Markdown out. Each line comment
//! ends with a hidden marker naming the rule and the flagged line's text, so a flag already posted
//! on an earlier push is recognised and not posted again ([`flag_key`], [`posted_flag_key`]).

use std::fmt::Write as _;

use crate::detect::Flag;
use crate::text::one_line;

const FLAG_MARKER_PREFIX: &str = "<!-- forgeward:flag ";
const FLAG_MARKER_SUFFIX: &str = " -->";

/// How a flag is recognised across pushes: its rule, its file and what the flagged line says.
/// Not the line number, which moves when lines are added above it.
pub fn flag_key(flag: &Flag) -> String {
    format!(
        "{} {} {}",
        flag.rule.id(),
        hex::encode(flag.path.as_bytes()),
        hex::encode(flag.snippet.as_deref().unwrap_or("").trim()),
    )
}

/// The key a posted line comment carries, if it is one of the bot's flags.
pub fn posted_flag_key(body: &str) -> Option<&str> {
    let start = body.find(FLAG_MARKER_PREFIX)? + FLAG_MARKER_PREFIX.len();
    let rest = &body[start..];
    let end = rest.find(FLAG_MARKER_SUFFIX)?;
    Some(&rest[..end])
}

/// The line comment for one flag.
pub fn render_flag_comment(flag: &Flag) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "⚠️ **forgeward · `{}`**: {}",
        flag.rule.id(),
        one_line(&flag.message)
    );
    let _ = writeln!(out);
    let _ = writeln!(out, "{}", flag.rule.description());
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "<sub>A review flag, not a verdict. If this is intended, say why in `.forgeward.toml` \
         (`[[check.allow]]`) or on the line (`forgeward: allow {} -- <reason>`).</sub>",
        flag.rule.id()
    );
    let _ = write!(
        out,
        "{FLAG_MARKER_PREFIX}{}{FLAG_MARKER_SUFFIX}",
        flag_key(flag)
    );
    out
}

/// The body of the review that holds the line comments: a count, and the flags that have no
/// line in the diff listed as file-level notes.
pub fn render_review_body(flags: &[Flag], file_level: &[&Flag]) -> String {
    let mut out = String::new();
    let n = flags.len();
    let _ = writeln!(
        out,
        "forgeward found {n} sign{} that the change may make the tests pass without making the \
         code work. Each is a flag for a human to look at, not a verdict.",
        if n == 1 { "" } else { "s" }
    );
    if !file_level.is_empty() {
        let _ = writeln!(out);
        for flag in file_level {
            let line = flag.line.map(|l| format!(":{l}")).unwrap_or_default();
            let _ = writeln!(
                out,
                "- `{}{line}` (`{}`): {}",
                flag.path,
                flag.rule.id(),
                one_line(&flag.message)
            );
        }
    }
    out
}

/// What the pull request the bot opens says.
pub struct PullRequestBody<'a> {
    /// `#7` on GitHub, `#7` on GitLab too (issues), with the issue's title.
    pub issue_ref: &'a str,
    pub issue_title: &'a str,
    /// The worker's `/job-out/summary.md`, if it left one.
    pub summary: Option<&'a str>,
    pub worker: &'a str,
    pub flags: &'a [Flag],
    /// The person who asked for the job.
    pub requested_by: &'a str,
    /// The verdict is ready for review: only then does merging the pull request close the issue
    /// ("Closes"); a change flagged or whose tests could not be judged only refers to it
    /// ("Refs").
    pub ready: bool,
}

/// The pull request's title: the issue's, said to be the bot's attempt.
pub fn pull_request_title(issue_title: &str, issue_ref: &str) -> String {
    format!("{} ({issue_ref})", one_line(issue_title))
}

/// The pull request's description.
pub fn render_pull_request_body(body: &PullRequestBody) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} {} — {}.\n",
        if body.ready { "Closes" } else { "Refs" },
        body.issue_ref,
        one_line(body.issue_title)
    );
    let _ = writeln!(
        out,
        "Written by the worker `{}` in a sandbox without forge credentials, at the request \
         of @{}; committed and checked by forgeward.\n",
        one_line(body.worker),
        body.requested_by
    );
    if let Some(summary) = body.summary.map(str::trim).filter(|s| !s.is_empty()) {
        let _ = writeln!(out, "### The worker's summary\n");
        let _ = writeln!(out, "{summary}\n");
    }
    if body.flags.is_empty() {
        let _ = writeln!(out, "forgeward found no sign of sabotage in the change.");
    } else {
        let _ = writeln!(
            out,
            "⚠️ forgeward flagged {} place{} for review (see the line comments):\n",
            body.flags.len(),
            if body.flags.len() == 1 { "" } else { "s" }
        );
        for flag in body.flags {
            let line = flag.line.map(|l| format!(":{l}")).unwrap_or_default();
            let _ = writeln!(
                out,
                "- `{}{line}` `{}`: {}",
                flag.path,
                flag.rule.id(),
                one_line(&flag.message)
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::{Rule, Severity};

    fn flag(rule: Rule, path: &str, line: Option<u32>, snippet: &str) -> Flag {
        Flag {
            rule,
            severity: Severity::Warning,
            path: path.into(),
            line,
            removed_line: None,
            message: "test `test_parse` newly skipped".to_owned(),
            snippet: Some(snippet.to_owned()),
        }
    }

    #[test]
    fn a_flag_comment_reads_well_and_carries_its_key() {
        let f = flag(
            Rule::SkipMarker,
            "tests/test_parse.py",
            Some(12),
            "@pytest.mark.skip",
        );
        let body = render_flag_comment(&f);
        insta::assert_snapshot!(body);
        assert_eq!(posted_flag_key(&body), Some(flag_key(&f).as_str()));
    }

    #[test]
    fn the_key_survives_a_moved_line_but_not_another_rule_or_file() {
        let a = flag(Rule::SkipMarker, "t.py", Some(12), "@skip");
        let moved = flag(Rule::SkipMarker, "t.py", Some(40), "@skip");
        assert_eq!(flag_key(&a), flag_key(&moved));
        assert_ne!(
            flag_key(&a),
            flag_key(&flag(Rule::StubbedImport, "t.py", Some(12), "@skip"))
        );
        assert_ne!(
            flag_key(&a),
            flag_key(&flag(Rule::SkipMarker, "u.py", Some(12), "@skip"))
        );
        assert_eq!(posted_flag_key("a comment a person wrote"), None);
    }

    #[test]
    fn review_body_lists_the_flags_without_a_line() {
        let flags = [
            flag(Rule::SkipMarker, "tests/test_a.py", Some(3), "@skip"),
            flag(Rule::ShadowModule, "sqlglot.py", None, ""),
        ];
        insta::assert_snapshot!(render_review_body(&flags, &[&flags[1]]));
    }

    #[test]
    fn pull_request_body_with_summary_and_flags() {
        let flags = [flag(Rule::SkipMarker, "tests/test_a.py", Some(3), "@skip")];
        let body = PullRequestBody {
            issue_ref: "#7",
            issue_title: "Parsing fails on empty input",
            summary: Some("Fixed the parser.\n"),
            worker: "my-agent",
            flags: &flags,
            requested_by: "alice",
            ready: false,
        };
        insta::assert_snapshot!(render_pull_request_body(&body));
        // Only a change ready for review closes its issue when merged.
        let ready = render_pull_request_body(&PullRequestBody {
            flags: &[],
            ready: true,
            ..body
        });
        assert!(
            ready.starts_with("Closes #7 — Parsing fails on empty input."),
            "{ready}"
        );
        assert_eq!(
            pull_request_title("Parsing fails\non empty input", "#7"),
            "Parsing fails; on empty input (#7)"
        );
    }
}
