//! `noxfile.py`: each session's `session.run("pytest", "tests", "-k", …)` calls, read as the
//! command lines they run and compared like a script (see [`super::command`]). Only string
//! literals are arguments; `*session.posargs` and names are the caller's and left out, the
//! same at the base and the head.

use super::Narrowed;
use super::command::{self, Shell};

/// A session: its name, its definition line, and its `session.run` calls as command lines.
#[derive(Debug, Default)]
struct Session {
    name: String,
    line: u32,
    runs: Vec<(String, Option<u32>)>,
}

fn sessions(text: &str) -> Vec<Session> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out: Vec<Session> = Vec::new();
    // The session whose body the lines are in, and whether a decorator names one.
    let mut current: Option<usize> = None;
    let mut decorated = false;
    let mut i = 0;
    while i < lines.len() {
        let l = lines[i];
        let n = u32::try_from(i + 1).unwrap_or(u32::MAX);
        let t = l.trim_start();
        let indented = l.starts_with([' ', '\t']);
        if l.starts_with('@') {
            decorated |= t.contains("session");
            current = None;
        } else if let Some(rest) = l.strip_prefix("def ") {
            current = None;
            if decorated {
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                out.push(Session {
                    name,
                    line: n,
                    runs: Vec::new(),
                });
                current = Some(out.len() - 1);
            }
            decorated = false;
        } else if !indented && !t.is_empty() && !t.starts_with('#') && !t.starts_with(')') {
            // Module-level code ends the session.
            current = None;
            decorated = false;
        } else if let (Some(at), Some(c), true) = (t.find("session.run("), current, indented) {
            // The call, over as many lines as its brackets take.
            let mut call = t[at + "session.run(".len()..].to_owned();
            let mut j = i;
            while depth(&call) > 0 && j + 1 < lines.len() {
                j += 1;
                call.push(' ');
                call.push_str(lines[j].trim());
            }
            out[c].runs.push((command_line(&call), Some(n)));
            i = j;
        }
        i += 1;
    }
    out.retain(|s| !s.name.is_empty());
    out
}

/// How many brackets `s` leaves open, strings aside.
fn depth(s: &str) -> i32 {
    let mut d = 1;
    let mut quote: Option<char> = None;
    for c in s.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '(' | '[' | '{') => d += 1,
            (None, ')' | ']' | '}') => d -= 1,
            _ => {}
        }
    }
    d
}

/// The string literals among a call's arguments, as one shell line (each quoted).
fn command_line(args: &str) -> String {
    let mut words = Vec::new();
    let mut quote: Option<char> = None;
    let mut word = String::new();
    let mut d = 0;
    for c in args.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => {
                quote = None;
                if d == 0 {
                    words.push(format!("'{}'", word.replace('\'', "'\\''")));
                }
                word.clear();
            }
            (Some(_), c) => word.push(c),
            (None, '"' | '\'') => quote = Some(c),
            (None, '(' | '[' | '{') => d += 1,
            (None, ')' | ']' | '}') => d -= 1,
            _ => {}
        }
        if d < 0 {
            break;
        }
    }
    words.join(" ")
}

pub(super) fn compare(base: &str, head: &str) -> Vec<Narrowed> {
    let (b, h) = (sessions(base), sessions(head));
    let mut out = Vec::new();
    for hs in &h {
        let Some(bs) = b.iter().find(|s| s.name == hs.name) else {
            continue;
        };
        out.extend(command::compare_scopes(
            &command::invocations(&bs.runs),
            &command::invocations(&hs.runs),
            Shell::ErrExit,
            &format!("the nox session `{}`", hs.name),
            Some(hs.line),
            command::is_test_name(&hs.name),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = "import nox\n\n\n@nox.session(python=[\"3.11\", \"3.12\"])\ndef tests(session):\n    session.install(\"-e\", \".\", \"pytest\")\n    session.run(\"pytest\", \"tests\", *session.posargs)\n\n\n@nox.session\ndef lint(session):\n    session.run(\"ruff\", \"check\", \".\")\n";

    fn lines(new: &str) -> Vec<Option<u32>> {
        compare(BASE, new).into_iter().map(|n| n.line).collect()
    }

    #[test]
    fn a_session_that_runs_fewer_tests() {
        let k = BASE.replace(
            "\"tests\", *session.posargs)",
            "\"tests\", \"-k\", \"not test_add\", *session.posargs)",
        );
        assert_eq!(lines(&k), [Some(7)]);
        let wrapped = BASE.replace(
            "session.run(\"pytest\", \"tests\", *session.posargs)",
            "session.run(\n        \"pytest\",\n        \"tests/test_unit.py\",\n    )",
        );
        assert_eq!(lines(&wrapped), [Some(7)]);
        let gone = BASE.replace(
            "    session.run(\"pytest\", \"tests\", *session.posargs)\n",
            "",
        );
        assert_eq!(lines(&gone), [Some(5)]);
        let message = &compare(BASE, &k)[0].message;
        assert!(message.contains("the nox session `tests`"), "{message}");
    }

    #[test]
    fn lookalikes() {
        for new in [
            BASE.to_owned(),
            // Options that narrow nothing, another session, a reformatted call.
            BASE.replace("\"tests\", *session.posargs)", "\"tests\", \"-x\", \"-q\", *session.posargs)"),
            BASE.replace("\"ruff\", \"check\", \".\"", "\"ruff\", \"check\", \"src\""),
            BASE.replace(
                "session.run(\"pytest\", \"tests\", *session.posargs)",
                "session.run(\n        'pytest',\n        'tests',\n        *session.posargs,\n    )",
            ),
            BASE.replace("\"3.11\", \"3.12\"", "\"3.12\", \"3.13\""),
        ] {
            assert_eq!(lines(&new), [] as [Option<u32>; 0], "{new}");
        }
    }
}
