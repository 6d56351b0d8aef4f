//! Makefile and justfile test targets (`test`, `check`, `test-unit`, `ci`, …): their recipes
//! compared as scripts (see [`super::command`]), and make's `-` prefix, which ignores a
//! command's failure. Simple variables (`PYTEST ?= pytest`) are substituted.

use std::collections::HashMap;

use super::command::{self, Shell};
use super::{Narrowed, numbered};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Dialect {
    Make,
    Just,
}

/// A target: its header line and its recipe lines (prefixes stripped), each with whether it
/// had make's `-` prefix.
#[derive(Debug, Default)]
struct Target {
    line: u32,
    recipe: Vec<(String, u32, bool)>,
}

fn parse(text: &str, dialect: Dialect) -> Vec<(String, Target)> {
    let mut vars: HashMap<String, String> = HashMap::new();
    let mut targets: Vec<(String, Target)> = Vec::new();
    let mut current: Option<usize> = None;
    let mut continued: Option<(String, u32, bool)> = None;
    for (n, raw) in numbered(text) {
        let is_recipe = match dialect {
            Dialect::Make => raw.starts_with('\t'),
            Dialect::Just => raw.starts_with(' ') || raw.starts_with('\t'),
        };
        if let Some((mut acc, line, dash)) = continued.take() {
            acc.push(' ');
            acc.push_str(raw.trim().trim_end_matches('\\'));
            if raw.trim_end().ends_with('\\') {
                continued = Some((acc, line, dash));
            } else if let Some(c) = current {
                targets[c].1.recipe.push((acc, line, dash));
            }
            continue;
        }
        if is_recipe && current.is_some() {
            let mut l = raw.trim();
            if l.is_empty() || l.starts_with('#') {
                continue;
            }
            let mut dash = false;
            while let Some(c) = l.chars().next().filter(|c| matches!(c, '@' | '-' | '+')) {
                dash |= c == '-';
                l = l[1..].trim_start();
            }
            let l = substitute(l, &vars);
            if l.trim_end().ends_with('\\') {
                continued = Some((l.trim_end().trim_end_matches('\\').to_owned(), n, dash));
            } else if let Some(c) = current {
                targets[c].1.recipe.push((l, n, dash));
            }
            continue;
        }
        let l = raw.trim_end();
        if l.trim().is_empty() || l.trim_start().starts_with('#') {
            continue;
        }
        // A variable: `NAME = v`, `NAME := v`, `NAME ?= v`, just's `name := v`.
        if let Some((name, value)) = assignment(l) {
            vars.insert(name, value);
            current = None;
            continue;
        }
        if let Some(colon) = l.find(':')
            && !l[colon..].starts_with(":=")
        {
            let names = &l[..colon];
            let names: Vec<&str> = match dialect {
                Dialect::Make => names.split_whitespace().collect(),
                // just: `test *ARGS:` or `@test:`; the first word names the recipe.
                Dialect::Just => names
                    .split_whitespace()
                    .next()
                    .map(|w| w.trim_start_matches('@'))
                    .into_iter()
                    .collect(),
            };
            if names.is_empty() || names.iter().any(|w| w.contains('$') || w.contains('%')) {
                current = None;
                continue;
            }
            targets.push((
                names.join(" "),
                Target {
                    line: n,
                    recipe: Vec::new(),
                },
            ));
            current = Some(targets.len() - 1);
            // `test: ; pytest` (make's recipe on the target line).
            if dialect == Dialect::Make
                && let Some(rest) = l[colon + 1..].split_once(';').map(|(_, r)| r.trim())
                && !rest.is_empty()
            {
                let last = targets.len() - 1;
                targets[last]
                    .1
                    .recipe
                    .push((substitute(rest, &vars), n, false));
            }
            continue;
        }
        current = None;
    }
    targets
}

fn assignment(line: &str) -> Option<(String, String)> {
    let l = line
        .trim_start()
        .strip_prefix("export ")
        .unwrap_or(line.trim_start());
    for op in ["::=", ":=", "?=", "+=", "="] {
        if let Some(at) = l.find(op) {
            let name = l[..at].trim();
            if !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return Some((name.to_owned(), l[at + op.len()..].trim().to_owned()));
            }
            return None;
        }
    }
    None
}

fn substitute(line: &str, vars: &HashMap<String, String>) -> String {
    let mut out = line.to_owned();
    for (name, value) in vars {
        for pattern in [
            format!("$({name})"),
            format!("${{{name}}}"),
            format!("{{{{{name}}}}}"),
        ] {
            if out.contains(&pattern) {
                out = out.replace(&pattern, value);
            }
        }
    }
    out
}

pub(super) fn compare(base: &str, head: &str, dialect: Dialect) -> Vec<Narrowed> {
    let b = parse(base, dialect);
    let h = parse(head, dialect);
    let mut out = Vec::new();
    for (name, ht) in &h {
        if !name.split_whitespace().any(command::is_test_name) {
            continue;
        }
        let Some((_, bt)) = b.iter().find(|(n, _)| n == name) else {
            continue;
        };
        let lines = |t: &Target| -> Vec<(String, Option<u32>)> {
            t.recipe
                .iter()
                .map(|(l, n, _)| (l.clone(), Some(*n)))
                .collect()
        };
        let what = format!("the `{name}` target");
        // Each recipe line is its own shell: its status decides.
        out.extend(command::compare_scopes(
            &command::invocations(&lines(bt)),
            &command::invocations(&lines(ht)),
            Shell::ErrExit,
            &what,
            Some(ht.line),
            true,
        ));
        for (l, n, dash) in &ht.recipe {
            let runs = command::invocations(&[(l.clone(), None)]);
            let Some(r) = runs.first() else {
                continue;
            };
            let had = bt.recipe.iter().any(|(bl, _, bd)| {
                *bd && command::invocations(&[(bl.clone(), None)])
                    .iter()
                    .any(|b| b.name == r.name)
            });
            if *dash && !had {
                out.push(Narrowed {
                    moved_from: None,
                    line: Some(*n),
                    message: format!(
                        "{what} newly ignores the failure of `{}` (the `-` prefix)",
                        r.name
                    ),
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::Rule;
    use crate::testing::{Spec::*, lines, run};

    fn flagged(path: &str, old: &str, new: &str) -> Vec<u32> {
        lines(&run(&[Modify(path, old, new)]), Rule::RunnerNarrowed)
    }

    const OLD: &str = "PYTEST ?= python -m pytest\n\n.PHONY: test lint\n\ntest:\n\t$(PYTEST) tests/unit tests/integration\n\tgo test ./...\n\nlint:\n\truff check .\n";

    #[test]
    fn makefile_test_targets() {
        for (new, line) in [
            (OLD.replace("tests/unit tests/integration", "tests/unit"), 6),
            (OLD.replace("\t$(PYTEST)", "\t-$(PYTEST)"), 6),
            (OLD.replace("go test ./...", "go test ./... || true"), 7),
            (
                OLD.replace("go test ./...", "go test -run TestFast ./..."),
                7,
            ),
            (OLD.replace("\tgo test ./...\n", ""), 5),
        ] {
            assert_eq!(flagged("Makefile", OLD, &new), vec![line], "{new}");
        }
        for new in [
            OLD.replace("tests/unit tests/integration", "tests"),
            OLD.replace("go test ./...", "go test -race -v ./..."),
            OLD.replace("ruff check .", "ruff check . || true"),
            format!("{OLD}\nbench:\n\tgo test -run XXX -bench . ./...\n"),
        ] {
            assert!(flagged("Makefile", OLD, &new).is_empty(), "{new}");
        }
    }

    #[test]
    fn justfile_recipes() {
        let old = "set shell := [\"bash\", \"-cu\"]\n\ntest *ARGS:\n    cargo test {{ARGS}}\n\nfmt:\n    cargo fmt\n";
        let new = old.replace("cargo test {{ARGS}}", "cargo test --lib {{ARGS}}");
        assert_eq!(flagged("justfile", old, &new), vec![4]);
        let new = old.replace("cargo test {{ARGS}}", "cargo test {{ARGS}} || true");
        assert_eq!(flagged("justfile", old, &new), vec![4]);
        let new = old.replace("cargo fmt", "cargo fmt --check");
        assert!(flagged("justfile", old, &new).is_empty());
    }
}
