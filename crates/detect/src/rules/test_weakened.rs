//! `test-weakened`: a test that exists at the base and at the head now checks less.
//!
//! Read on the test model ([`crate::suite`]): a test whose assertions, table rows and
//! calls to asserting helpers number fewer than they did; a body left with nothing that checks
//! (`pass`, `...`, `return`, calls whose results are dropped); an assertion made vacuous
//! (`assert True`, `… or True`, `expect(true).toBe(true)`, `assert!(true)`); and an assertion newly
//! wrapped so that its failure is swallowed (`except AssertionError: pass`, an empty `catch`).
//!
//! Not a weakening: assertions that moved to another test (a test split in two), into a helper
//! the test now calls, or into a parametrized table; a message added to an assertion; a test
//! rewritten with as many checks. Those are told apart in [`resolve`], which sees what the whole
//! change gained.

use crate::rules::prelude::*;
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use crate::RepoPath;
use crate::flag::{Flag, Rule};
use crate::suite::compare::{
    FileDiff, Pool, RowAlignment, align, align_rows, checks_by_name, weight,
};
use crate::suite::strength::{folded, loosened};
use crate::suite::tolerance;
use crate::suite::{Check, TestCase, TestFile, hash};

/// A test that checks less in its own file; whether the change as a whole kept what it lost is
/// decided by [`resolve`].
#[derive(Debug)]
pub(crate) struct Candidate {
    flag: Flag,
    /// What it lost, as keys (assertions, rows, helper calls).
    lost: Vec<u64>,
    /// By how much its weight fell.
    net: usize,
    /// The names it calls that its own file does not define: helpers elsewhere, perhaps.
    calls: Vec<String>,
    /// Nothing that checks is left.
    emptied: bool,
    /// The reason of an inline allow on the test's line, read where its text is at hand.
    pub allowed: Option<String>,
}

impl Candidate {
    pub fn flag_mut(&mut self) -> &mut Flag {
        &mut self.flag
    }
}

fn flag(path: &RepoPath, line: u32, message: String) -> Flag {
    Flag {
        rule: Rule::TestWeakened,
        severity: Rule::TestWeakened.severity(),
        path: path.clone(),
        line: Some(line),
        removed_line: None,
        message,
        snippet: None,
    }
}

fn plural(n: usize, one: &str) -> String {
    format!("{n} {one}{}", if n == 1 { "" } else { "s" })
}

/// The messages, for a test here and for one moved to another file
/// ([`crate::rules::test_deleted`]); `who` is the test as shown.
pub(crate) fn emptied_message(who: &str, was: usize) -> String {
    format!(
        "{who} no longer checks anything: {} at the base, none now",
        plural(was, "check")
    )
}

pub(crate) fn fewer_message(who: &str, was: usize, now: usize, lost: &[&Check]) -> String {
    let gone: Vec<&str> = lost.iter().take(2).map(|c| c.shown.as_str()).collect();
    let example = if gone.is_empty() {
        String::new()
    } else {
        format!(" (gone: `{}`)", gone.join("`, `"))
    };
    format!(
        "{who} checks less: {} at the base, {now} now{example}",
        plural(was, "check")
    )
}

pub(crate) fn loosened_message(who: &str, new: &str, old: &str) -> String {
    format!("{who} checks less: `{new}` where it checked `{old}`")
}

pub(crate) fn widened_message(who: &str, old: &Check, new: &Check) -> String {
    let was = match tolerance::width(old) {
        Some(0.0) | None => "required the exact value".to_owned(),
        Some(w) => format!("allowed {}", tolerance::shown_number(w)),
    };
    let now = tolerance::width(new).map_or_else(String::new, tolerance::shown_number);
    format!(
        "{who} checks less: `{}` where it checked `{}` (a tolerance of {now} where it {was})",
        new.shown, old.shown
    )
}

/// The flags that need nothing beyond this file (vacuous and swallowed assertions) and the
/// candidates that [`resolve`] judges.
pub(crate) fn examine(
    path: &RepoPath,
    base: &TestFile,
    head: &TestFile,
    diff: &FileDiff<'_>,
) -> (Vec<Flag>, Vec<Candidate>) {
    let (base_helpers, head_helpers) = (base.helper_weights(), head.helper_weights());
    let mut flags = Vec::new();
    let mut candidates = Vec::new();
    for (b, h) in &diff.pairs {
        let base_keys: HashSet<u64> = b.checks.iter().map(|c| c.key).collect();
        for c in h
            .checks
            .iter()
            .filter(|c| c.vacuous && !base_keys.contains(&c.key))
        {
            flags.push(flag(
                path,
                c.line,
                format!("`{}` in `{}` cannot fail", c.shown, h.simple),
            ));
        }
        // Rust: `#[should_panic]` put on a test that still asserts what it did: its assertion
        // failing now makes it pass.
        let panics = |t: &TestCase| t.checks.iter().any(|c| c.family == "should_panic");
        if panics(h)
            && !panics(b)
            && let Some(kept) = h
                .checks
                .iter()
                .find(|c| c.family != "should_panic" && c.weight > 0 && base_keys.contains(&c.key))
        {
            flags.push(flag(
                path,
                h.line,
                format!(
                    "`{}` now passes only by panicking: `#[should_panic]` was added while it still asserts `{}`, so that assertion failing makes it pass",
                    h.simple, kept.shown
                ),
            ));
        }
        let base_swallows: HashSet<u64> = b.swallows.iter().map(|s| s.key).collect();
        for s in h
            .swallows
            .iter()
            .filter(|s| !base_swallows.contains(&s.key))
        {
            flags.push(flag(
                path,
                s.line,
                format!(
                    "the failure of an assertion in `{}` is newly caught and dropped",
                    h.simple
                ),
            ));
        }
        let by_name = |f: &HashMap<String, usize>, t: &crate::suite::TestCase| -> HashSet<String> {
            t.calls
                .iter()
                .filter(|c| f.contains_key(c.as_str()) || checks_by_name(c))
                .cloned()
                .collect()
        };
        let (bh, hh) = (by_name(&base_helpers, b), by_name(&head_helpers, h));
        // A table the model cannot count on either side (its rows made by a call, a
        // comprehension) is not compared: rows it cannot see are not rows gone.
        let counted = !(b.rows_unread || h.rows_unread);
        // Running a Go test runs its subtests (`TestX/name`): checks moved into them stay the
        // test's own.
        let with_subtests = |f: &TestFile, helpers: &HashMap<String, usize>, t: &TestCase| {
            let prefix = format!("{}/", t.name);
            weight(t, helpers, counted)
                + f.cases
                    .iter()
                    .filter(|s| s.name.starts_with(&prefix))
                    .map(|s| weight(s, helpers, counted))
                    .sum::<usize>()
        };
        let (wb, wh) = (
            with_subtests(base, &base_helpers, b),
            with_subtests(head, &head_helpers, h),
        );
        let checks = align(&b.checks, &h.checks);
        if wh >= wb {
            // As many checks, but an exact one swapped for a loose one about the same value, or
            // its tolerance widened.
            let who = format!("`{}`", h.simple);
            let loose = loosened(&checks.lost, &checks.gained)
                .into_iter()
                .map(|(old, new)| (old, new, loosened_message(&who, &new.shown, &old.shown)));
            let wide = checks
                .widened
                .iter()
                .map(|&(old, new)| (old, new, widened_message(&who, old, new)));
            for (old, new, message) in loose.chain(wide) {
                candidates.push(Candidate {
                    flag: flag(path, new.line, message),
                    lost: vec![old.key],
                    net: 1,
                    calls: outside_calls(h, &head_helpers),
                    emptied: false,
                    allowed: None,
                });
            }
            continue;
        }
        let rows = if counted {
            align_rows(&b.rows, &h.rows)
        } else {
            RowAlignment::default()
        };
        // A lost stub (a mock's set-up that checks nothing) is no loss, nor is a check of a
        // part folded into a new check of the whole.
        let lost_checks: Vec<&crate::suite::Check> = checks
            .lost
            .iter()
            .copied()
            .filter(|c| c.weight > 0 && !folded(c, &checks.gained))
            .collect();
        let mut lost: Vec<u64> = lost_checks.iter().map(|c| c.key).collect();
        lost.extend(rows.lost.iter().map(|r| r.key));
        lost.extend(bh.difference(&hh).map(|name| hash(&format!("call {name}"))));
        let emptied = wh == 0;
        let who = format!("`{}`", h.simple);
        let message = if emptied {
            emptied_message(&who, wb)
        } else if let Some(guard) = rows.bypassed.first().and_then(|r| r.bypassed.as_ref())
            && lost_checks.is_empty()
        {
            format!(
                "`{}` checks less: {} of its table {} passed over by `{guard}`",
                h.simple,
                plural(rows.bypassed.len(), "row"),
                if rows.bypassed.len() == 1 {
                    "is"
                } else {
                    "are"
                }
            )
        } else if !rows.lost.is_empty() && lost_checks.is_empty() {
            format!(
                "`{}` checks less: {} of its table are gone",
                h.simple,
                plural(rows.lost.len(), "row")
            )
        } else {
            fewer_message(&who, wb, wh, &lost_checks)
        };
        candidates.push(Candidate {
            flag: flag(path, h.line, message),
            lost,
            net: wb - wh,
            calls: outside_calls(h, &head_helpers),
            emptied,
            allowed: None,
        });
    }
    (flags, candidates)
}

/// The names `t` calls that its own file does not define as helpers: helpers elsewhere,
/// perhaps.
fn outside_calls(t: &TestCase, helpers: &HashMap<String, usize>) -> Vec<String> {
    t.calls
        .iter()
        .filter(|c| !helpers.contains_key(c.as_str()))
        .cloned()
        .collect()
}

/// The candidates whose loss the change did not make up for elsewhere.
pub(crate) fn resolve(candidates: Vec<Candidate>, pool: &mut Pool) -> Vec<(Flag, Option<String>)> {
    let mut out = Vec::new();
    for c in candidates {
        // The test now calls a helper, defined in another file of the change, that asserts.
        if c.calls.iter().any(|name| pool.helpers.contains(name)) {
            continue;
        }
        if c.emptied {
            out.push((c.flag, c.allowed));
            continue;
        }
        let kept = c.lost.iter().filter(|&&k| pool.take_check(k)).count();
        if c.net.min(c.lost.len() - kept) > 0 {
            out.push((c.flag, c.allowed));
        }
    }
    out
}

/// The rule's registry entry and what the detector runs for it.
pub(crate) const RULE: RuleInfo = RuleInfo {
    rule: Rule::TestWeakened,
    id: "test-weakened",
    severity: Severity::Note,
    source: Source::Detector,
    languages: "Python, JS/TS, Go, Rust, Java/Kotlin, C#, Ruby, PHP",
    summary: "A test that exists before and after the change now checks less.",
    help: "Flags a test with fewer assertions (or table rows) than it had, a body reduced \
           to nothing that checks (`pass`, `return`, calls whose results are dropped), an \
           assertion made vacuous (`assert True`, `... or True`, `expect(true).toBe(true)`, \
           `assert!(true)`, `expect(x)` with no matcher, `assert len(x) >= 0`), an exact \
           assertion swapped for a loose one about the same value (`== 170` to \
           `is not None`, `toBe(170)` to `toBeDefined()`, `isEqualTo` to `isNotNull()`, \
           `toThrow(\"msg\")` to `toThrow()`), a tolerance widened by an order of \
           magnitude or more past rounding noise (`approx(20.0, abs=1e-9)` to `abs=10`, \
           `== 170.0` to `approx(170.0, rel=0.5)`, `places=7` to `places=0`, \
           `toBeCloseTo(x, 4)` to `toBeCloseTo(x, 0)`, a delta from `1e-9` to `1.0`), a \
           mock's call checked loosely (`assert_called_once_with(...)` to \
           `assert mock.called`), a specific error made any error, `#[should_panic]` \
           added to a Rust test that still asserts what it did, a test moved to another file or class \
           that checks less there, assertions put where they never run (after a \
           `return`, inside `if False:` or `if (false) { ... }`), a table row the body \
           newly passes over (`if tt.name == \"x\" { continue }`), and an assertion newly \
           wrapped so that its failure is \
           swallowed (`except AssertionError: pass`, an empty `catch`). Assertions moved \
           to another test, into a helper the test calls, or into a parametrized table are \
           not lost, nor is an assertion on a caught error folded into the raise that \
           caught it (`pytest.raises(E, match=...)`, `assertRaisesRegex`). A mock's \
           expectation (`expects(...)`, `shouldReceive(...)->once()`) counts once each; a \
           stub (a mock set up with no call count) counts for nothing.",
    judges_tests: true,
    passes: &[
        Pass::Tests(Reads::new(|_| true, may_hold_tests), weakened),
        Pass::Change(judge_candidates),
    ],
};

/// What [`weakened`] holds for [`judge_candidates`]: the flags that need nothing beyond the
/// file, and the candidates judged against what the whole change gained.
struct Held {
    now: Vec<Finding>,
    later: Vec<Candidate>,
}

fn weakened(tests: &Tests<'_, '_>, out: &mut Out<'_>) {
    let (now, later) = examine(tests.file.path, tests.base, tests.head, tests.diff);
    let now = now.into_iter().map(|f| out.test_finding(f)).collect();
    let later = later
        .into_iter()
        .map(|mut c| {
            let (snippet, allowed) = out.head_line(c.flag_mut());
            c.flag_mut().snippet = snippet;
            c.allowed = allowed;
            c
        })
        .collect();
    out.hold(Held { now, later });
}

/// The candidates, judged against the pool of what the change's tests gained, then the flags
/// that needed nothing beyond their file.
fn judge_candidates(across: &mut Across<'_, '_>) -> Vec<(Flag, Option<String>)> {
    let (mut now, mut later) = (Vec::new(), Vec::new());
    for (_, held) in across.take::<Held>() {
        now.extend(held.now);
        later.extend(held.later);
    }
    let mut flags = resolve(later, across.pool);
    flags.extend(now.into_iter().map(|f| (f.flag, f.allowed)));
    flags
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod tests_jvm_ruby_php;
