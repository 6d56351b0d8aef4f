//! `expectation-changed`: an assertion of a test present at the base and at the head compares
//! against a different expected value, or its sense flipped.
//!
//! Read on the test model's alignment of one test's assertions ([`crate::suite::compare`]):
//! an assertion whose one differing operand is a literal on both sides (`== 5` → `== -1`,
//! `toBe('a')` → `toBe('b')`), one whose family is the same and whose sense flipped
//! (`==` ↔ `!=`, `assertTrue` ↔ `assertFalse`, `toBe` ↔ `not.toBe`, `is` ↔ `is not`), and a row
//! of a parametrized or table test whose one literal changed. Not changes: quote style, wrapping,
//! an added message (the operands are normalised and messages set aside), a value moved into a
//! parametrize or table row (its operand is no longer a literal). Stored snapshots whose value
//! changed (Jest and Vitest `.snap`, insta, syrupy) are read apart, in [`snapshot`].

pub(crate) mod snapshot;

use crate::RepoPath;
use crate::flag::{Flag, Rule};
use crate::rules::prelude::*;
use crate::suite::Check;
use crate::suite::compare::{FileDiff, align, align_rows};

fn flag(path: &RepoPath, line: u32, message: String) -> Flag {
    Flag {
        rule: Rule::ExpectationChanged,
        severity: Rule::ExpectationChanged.severity(),
        path: path.clone(),
        line: Some(line),
        removed_line: None,
        message,
        snippet: None,
    }
}

/// Two values as a message shows them: each on one line, shortened, and where they share a
/// long start (a rewritten snapshot, a long string), from a little before where they differ.
fn shown_pair(new: &str, old: &str) -> (String, String) {
    /// Enough to tell two values apart; a reviewer reads the whole on the line itself.
    const MAX_CHARS: usize = 60;
    /// Shared characters kept before the first difference.
    const LEAD: usize = 12;
    let one = |v: &str| -> Vec<char> {
        v.split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .chars()
            .collect()
    };
    let (n, o) = (one(new), one(old));
    let common = n.iter().zip(&o).take_while(|(a, b)| a == b).count();
    let from = if common > 2 * LEAD { common - LEAD } else { 0 };
    let cut = |v: &[char]| -> String {
        let rest: String = v[from.min(v.len())..].iter().take(MAX_CHARS).collect();
        let lead = if from > 0 { "…" } else { "" };
        let tail = if v.len() > from + MAX_CHARS {
            "…"
        } else {
            ""
        };
        format!("{lead}{rest}{tail}")
    };
    (cut(&n), cut(&o))
}

/// The messages, for a test here and for one moved to another file
/// ([`crate::rules::test_deleted`]); `who` is the test as shown.
pub(crate) fn opposite_message(who: &str, old: &Check, new: &Check) -> String {
    format!(
        "{who} now expects the opposite: `{}` → `{}`",
        old.shown, new.shown
    )
}

/// Operand `i` changed.
pub(crate) fn changed_message(who: &str, old: &Check, new: &Check, i: usize) -> String {
    let (now, was) = shown_pair(&new.operands[i], &old.operands[i]);
    format!("{who} now expects `{now}` where it expected `{was}`")
}

pub(crate) fn examine(path: &RepoPath, diff: &FileDiff<'_>) -> Vec<Flag> {
    let mut out = Vec::new();
    for (b, h) in &diff.pairs {
        let a = align(&b.checks, &h.checks);
        let who = format!("`{}`", h.simple);
        for (old, new) in a.flipped {
            out.push(flag(path, new.line, opposite_message(&who, old, new)));
        }
        for (old, new, i) in a.changed {
            out.push(flag(path, new.line, changed_message(&who, old, new, i)));
        }
        for (old, new, i) in align_rows(&b.rows, &h.rows).changed {
            let (now, was) = shown_pair(&new.fields[i], &old.fields[i]);
            out.push(flag(
                path,
                new.line,
                format!(
                    "a row of `{}` now holds `{now}` where it held `{was}`",
                    h.simple
                ),
            ));
        }
    }
    out
}

/// The rule's registry entry and what the detector runs for it.
pub(crate) const RULE: RuleInfo = RuleInfo {
    rule: Rule::ExpectationChanged,
    id: "expectation-changed",
    severity: Severity::Note,
    source: Source::Detector,
    languages: "Python, JS/TS, Go, Rust, Java/Kotlin, C#, Ruby, PHP",
    summary: "An assertion of an existing test now expects a different value, or the opposite.",
    help: "Flags an assertion whose expected literal changed (`== 5` to `== -1`), or whose \
           sense flipped (`==` to `!=`, `assertTrue` to `assertFalse`, `toBe` to \
           `not.toBe`), a table row of a test whose one literal changed, and a rewritten \
           snapshot (inline, or stored: Jest/Vitest `.snap`, insta, syrupy). Quote style, \
           wrapping, an added assertion message and a value moved into a parametrized row \
           unchanged are not changes. A note by default: honest changes of behaviour edit \
           expectations too.",
    judges_tests: true,
    passes: &[
        Pass::Whole(Reads::ANY, stored_snapshots),
        Pass::Tests(Reads::new(|_| true, may_hold_tests), assertions),
    ],
};

/// Jest and Vitest `.snap` entries, insta snapshots, syrupy `.ambr` entries.
fn stored_snapshots(whole: &Whole<'_>, out: &mut Out<'_>) {
    for flag in snapshot::check(whole.file.change, whole.old, whole.new) {
        let f = out.whole_file_finding(flag, snapshot::KIND);
        out.findings.push(f);
    }
}

fn assertions(tests: &Tests<'_, '_>, out: &mut Out<'_>) {
    for flag in examine(tests.file.path, tests.diff) {
        let f = out.test_finding(flag);
        out.findings.push(f);
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod tests_jvm_ruby_php;
