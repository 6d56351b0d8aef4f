//! `test-deleted`: a test case, or a whole test file, present at the base and gone at the head,
//! and not found elsewhere in the change.
//!
//! A test renamed in its own file and edited, its body mostly kept, is paired with its new
//! name by the test model ([`crate::suite::compare::diff`]) and judged by
//! `test-weakened` and `expectation-changed` instead.
//! A test is found elsewhere when the change has a new test of the same name (moved to another
//! file or class: that test is then judged as this one, and a move that dropped assertions,
//! loosened one or changed an expected value is reported there as `test-weakened` or
//! `expectation-changed`) or of the same body (renamed), a new test whose name extends its own
//! (`test_parse` → `test_parse_json`), new assertions that hold most of its own (split in two or
//! merged), or new rows of a parametrized table that hold its literals (folded into a table).
//! A test of a function or method whose definition the change removes from production code is
//! not flagged either: it goes with the feature it tested. The test uses it (calls it, names it
//! in an assertion) or is named for it (`test_eval_type_backport` and `def eval_type_backport`).
//! The flag has no line at the head: it names the test and where it was at the base, and a
//! forge shows it on the base side of the diff or in the review's body.

use super::{expectation_changed, test_weakened};
use crate::flag::{Flag, Rule};
use crate::rules::prelude::*;
use crate::suite;
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use crate::suite::compare::{FileDiff, NewTest, Pool, align, weight};
use crate::suite::likeness::{Bag, NameKey, Rarity, alike_by, bag_likeness, one_to_one};
use crate::suite::strength::loosened;
use crate::suite::subject::{Import, literals_in, strip_extension};
use crate::suite::{Check, HELPER_DEPTH, Helper, TestCase, TestFile, is_literal};
use crate::{Change, ChangeKind, RepoPath};

#[derive(Debug)]
pub(crate) struct Candidate {
    path: RepoPath,
    /// Its file at the head, if it is still there.
    head_path: Option<RepoPath>,
    file_deleted: bool,
    name: String,
    simple: String,
    line: u32,
    body_key: Option<u64>,
    checks: Vec<u64>,
    /// Per assertion, its literal operands.
    literals: Vec<Vec<String>>,
    /// The names it calls or names in its assertions.
    uses: Vec<String>,
    /// Its body's words and its assertions, for a new test of another file it may have become.
    words: Vec<u64>,
    full_checks: Vec<Check>,
    weight: usize,
    /// The modules its file imports, read when the file is deleted.
    imports: Vec<Import>,
}

pub(crate) fn examine(
    change: &Change,
    diff: &FileDiff<'_>,
    base: &TestFile,
    head: &TestFile,
    imports: &[Import],
) -> Vec<Candidate> {
    let path = change.old_path.as_ref().unwrap_or(change.path()).clone();
    let helpers = base.helper_weights();
    diff.deleted
        .iter()
        .filter(|t| !run_by_helper(t, diff, head))
        .map(|t| Candidate {
            path: path.clone(),
            head_path: change.new_path.clone(),
            file_deleted: change.kind == ChangeKind::Deleted,
            name: t.name.clone(),
            simple: t.simple.clone(),
            line: t.line,
            body_key: t.body_key,
            // A stub (a mock's set-up that checks nothing) is not what a test is found by.
            checks: t
                .checks
                .iter()
                .filter(|c| c.weight > 0)
                .map(|c| c.key)
                .collect(),
            literals: t.checks.iter().map(literals).collect(),
            uses: uses(t, base),
            words: t.words.clone(),
            full_checks: t.checks.clone(),
            weight: weight(t, &helpers, true),
            imports: imports.to_vec(),
        })
        .collect()
}

/// The same file's helpers that `calls` reach, a few calls deep.
fn reached<'a>(calls: &[String], file: &'a TestFile) -> Vec<&'a Helper> {
    let mut out: Vec<&Helper> = Vec::new();
    let mut next: Vec<&str> = calls.iter().map(String::as_str).collect();
    for _ in 0..HELPER_DEPTH {
        let found: Vec<&Helper> = file
            .helpers
            .iter()
            .filter(|h| {
                next.contains(&h.name.as_str()) && !out.iter().any(|o| std::ptr::eq(*o, *h))
            })
            .collect();
        if found.is_empty() {
            break;
        }
        next = found
            .iter()
            .flat_map(|h| &h.calls)
            .map(String::as_str)
            .collect();
        out.extend(found);
    }
    out
}

/// A Go subtest `TestX/name` that is gone from `TestX`'s body while `TestX` now runs
/// `t.Run("name", …)` through a helper of the same file: moved, not deleted.
fn run_by_helper(t: &TestCase, diff: &FileDiff<'_>, head: &TestFile) -> bool {
    let Some((parent, sub)) = t.name.rsplit_once('/') else {
        return false;
    };
    diff.pairs
        .iter()
        .filter(|(_, h)| h.name == parent)
        .any(|(_, h)| {
            reached(&h.calls, head)
                .iter()
                .any(|helper| helper.subtests.iter().any(|s| s == sub))
        })
}

/// The names a test uses: what it calls and names in its assertions, and so do the helpers it
/// calls in its file (a test whose body is `testX(t)` tests what `testX` calls).
fn uses(t: &TestCase, file: &TestFile) -> Vec<String> {
    let mut out = t.calls.clone();
    let helpers = reached(&t.calls, file);
    out.extend(helpers.iter().flat_map(|h| h.calls.iter().cloned()));
    let words = t
        .checks
        .iter()
        .chain(helpers.iter().flat_map(|h| &h.checks))
        .flat_map(|c| &c.operands)
        .map(String::as_str)
        .chain(std::iter::once(t.name.as_str()));
    for w in words {
        out.extend(
            w.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
                .filter(|s| s.len() >= 3)
                .map(str::to_owned),
        );
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// What a test's name says it tests: the name without the framework's `test` prefix or
/// suffix (`test_eval_type_backport` tests `eval_type_backport`, `TestParse` and `testParse`
/// test `Parse` or `parse`, `parse_test` tests `parse`). A name that is nothing but the prefix
/// names nothing.
fn subjects(name: &str) -> impl Iterator<Item = String> + '_ {
    let bare = ["test_", "Test_", "test", "Test"]
        .iter()
        .find_map(|p| name.strip_prefix(p))
        .or_else(|| ["_test", "Test"].iter().find_map(|s| name.strip_suffix(s)))
        .filter(|rest| rest.len() >= 3 && !rest.starts_with('_'));
    let lower = bare.and_then(|b| {
        let mut chars = b.chars();
        let first = chars.next()?;
        first
            .is_ascii_uppercase()
            .then(|| first.to_ascii_lowercase().to_string() + chars.as_str())
    });
    bare.map(str::to_owned).into_iter().chain(lower)
}

fn literals(c: &Check) -> Vec<String> {
    c.operands
        .iter()
        .filter(|o| is_literal(o))
        .cloned()
        .collect()
}

/// What became of a deleted test that a new test of the same name may be: moved to another
/// file or class.
enum Moved {
    /// No new test has its name (or its body unchanged, which is the same test).
    No,
    /// A new test of its name checks what it did, with the same expectations.
    Kept,
    /// Every new test of its name checks less, or expects something else: the move hid an
    /// edit that, made in place, `test-weakened` or `expectation-changed` would report.
    Weaker(Flag),
}

fn moved(c: &Candidate, pool: &Pool) -> Moved {
    let same: Vec<(&RepoPath, &NewTest)> = pool
        .new_tests
        .iter()
        .filter(|t| t.simple == c.simple)
        .filter_map(|t| Some((t.path.as_ref()?, t)))
        .collect();
    if same.is_empty() {
        // Its body under another name: renamed, and the same test (a body's key leaves the
        // contents of strings out, so a test of the same name is compared by its assertions).
        return if c.body_key.is_some_and(|k| pool.test_bodies.contains(&k)) {
            Moved::Kept
        } else {
            Moved::No
        };
    }
    let mut first = None;
    for (path, t) in same {
        let a = align(&c.full_checks, &t.checks);
        // A common name (`test_str`) in an unrelated file is not this test moved: the new
        // test keeps one of its assertions or most of its words, or it is not judged.
        if a.lost.len() == c.full_checks.len() && !alike(c, t) {
            continue;
        }
        let lost = a.lost.iter().any(|k| k.weight > 0);
        let loose = loosened(&a.lost, &a.gained);
        if a.flipped.is_empty()
            && a.changed.is_empty()
            && loose.is_empty()
            && a.widened.is_empty()
            && (!lost || t.weight >= c.weight)
        {
            return Moved::Kept;
        }
        first.get_or_insert((path, t, a, loose));
    }
    let Some((path, t, a, loose)) = first else {
        // Only namesakes: found by its name, as before a move was judged.
        return Moved::Kept;
    };
    let who = if *path == c.path {
        format!("`{}`", c.simple)
    } else {
        format!("`{}` (moved from `{}`)", c.simple, c.path)
    };
    let flag = |rule: Rule, line: u32, message: String| {
        Moved::Weaker(Flag {
            rule,
            severity: rule.severity(),
            path: path.clone(),
            line: Some(line),
            removed_line: None,
            message,
            snippet: None,
        })
    };
    if let Some((old, new)) = a.flipped.first() {
        return flag(
            Rule::ExpectationChanged,
            new.line,
            expectation_changed::opposite_message(&who, old, new),
        );
    }
    if let Some((old, new, i)) = a.changed.first() {
        return flag(
            Rule::ExpectationChanged,
            new.line,
            expectation_changed::changed_message(&who, old, new, *i),
        );
    }
    if let Some((old, new)) = loose.first() {
        return flag(
            Rule::TestWeakened,
            new.line,
            test_weakened::loosened_message(&who, &new.shown, &old.shown),
        );
    }
    if let Some((old, new)) = a.widened.first() {
        return flag(
            Rule::TestWeakened,
            new.line,
            test_weakened::widened_message(&who, old, new),
        );
    }
    let message = if t.weight == 0 {
        test_weakened::emptied_message(&who, c.weight)
    } else {
        let lost: Vec<&Check> = a.lost.iter().copied().filter(|k| k.weight > 0).collect();
        test_weakened::fewer_message(&who, c.weight, t.weight, &lost)
    };
    flag(Rule::TestWeakened, t.line, message)
}

/// Whether a deleted test and a new one of its name have alike bodies, or the new one is
/// mostly made of the old one's words: what is left of it when its assertions were dropped.
fn alike(c: &Candidate, t: &NewTest) -> bool {
    let rarity = Rarity::default();
    let (score, shared) = bag_likeness(&Bag::of(&c.words, &rarity), &Bag::of(&t.words, &rarity));
    if alike_by(score, shared, || 1.0).is_some() {
        return true;
    }
    let mut new = t.words.clone();
    new.dedup();
    let kept = new
        .iter()
        .filter(|w| c.words.binary_search(w).is_ok())
        .count();
    kept > 0 && kept * 5 >= new.len() * 3
}

/// Whether a deleted test file's subject left with it: a production module it imports is
/// deleted by the same change (a migration and its spec), and every other module it imports
/// that the head still has is a test's own (a fixture, a helper). `gone`: the stems of the
/// production files the change deletes; `kept`: whether a stem is a production file still
/// at the head.
fn subject_removed(c: &Candidate, gone: &[String], kept: &dyn Fn(&Import) -> bool) -> bool {
    c.file_deleted
        && c.imports.iter().any(|i| gone.iter().any(|g| i.is(g)))
        && !c
            .imports
            .iter()
            .any(|i| !gone.iter().any(|g| i.is(g)) && kept(i))
}

/// Folded into a table that a loop or `each` runs: each assertion's literals are among the
/// literals the change wrote into test files, and a test the change added or edited calls
/// what it called.
fn folded_into_cases(c: &Candidate, pool: &Pool) -> bool {
    // Every literal the assertions write, inside calls too: the inputs as well as the
    // expected values, or a case dropped from the table would pass for one folded into it.
    let written: Vec<String> = c
        .full_checks
        .iter()
        .flat_map(|k| &k.operands)
        .flat_map(|o| literals_in(o))
        .collect();
    !written.is_empty()
        && c.literals.iter().any(|l| !l.is_empty())
        && written
            .iter()
            .all(|v| pool.row_values.contains(v) || pool.added_literals.contains(v))
        && c.uses
            .iter()
            .any(|u| *u != c.simple && pool.rewritten_calls.contains(u))
}

/// What an assertion says, whichever framework says it: unittest's `self.assertEqual(a, b)`
/// and pytest's `assert a == b`, `assertRaises(E)` and `pytest.raises(E)` are one. `None`
/// for a family with no counterpart here.
fn sense(c: &Check) -> Option<String> {
    let family = c.family.rsplit('.').next().unwrap_or(&c.family);
    let (kind, negated) = match family {
        "assertEqual" | "assertEquals" | "assert==" => ("==", false),
        "assertNotEqual" | "assertNotEquals" | "assert!=" => ("==", true),
        "assertTrue" | "assert_" | "assert-truth" => ("truth", false),
        "assertFalse" => ("truth", true),
        "assertIn" | "assert-in" => ("in", false),
        "assertNotIn" | "assert-not-in" => ("in", true),
        "assertIs" | "assert-is" => ("is", false),
        "assertIsNot" | "assert-is-not" => ("is", true),
        "assertIsNone" => return Some(format!("is {} None {}", c.operands.first()?, c.negated)),
        "assertIsNotNone" => {
            return Some(format!("is {} None {}", c.operands.first()?, !c.negated));
        }
        "assertRaises" | "raises" => ("raises", false),
        "assertWarns" | "warns" => ("warns", false),
        _ => return None,
    };
    Some(format!(
        "{kind} {} {}",
        c.operands.join(" "),
        negated != c.negated
    ))
}

/// Rewritten for another framework, perhaps renamed on the way (a `unittest.TestCase` method
/// become a pytest function): a new test says everything it said.
/// `senses` holds each new test's [`sense`]s, made on first need and shared by every candidate.
fn rewritten_elsewhere(c: &Candidate, pool: &Pool, senses: &Senses) -> bool {
    let Some(wanted) = c
        .full_checks
        .iter()
        .filter(|k| k.weight > 0)
        .map(sense)
        .collect::<Option<Vec<String>>>()
        .filter(|w| !w.is_empty())
    else {
        return false;
    };
    let (said_by_each, saying) = senses.get_or_init(|| {
        let said_by_each: Vec<HashSet<String>> = pool
            .new_tests
            .iter()
            .map(|t| t.checks.iter().filter_map(sense).collect())
            .collect();
        let mut saying: HashMap<String, Vec<usize>> = HashMap::default();
        for (i, said) in said_by_each.iter().enumerate() {
            for s in said {
                saying.entry(s.clone()).or_default().push(i);
            }
        }
        (said_by_each, saying)
    });
    // Only the new tests that say its first sense can say them all.
    saying.get(&wanted[0]).is_some_and(|tests| {
        tests
            .iter()
            .any(|&i| wanted.iter().all(|w| said_by_each[i].contains(w)))
    })
}

/// What each of the pool's new tests says, by [`sense`], and which of them say each sense.
type Senses = std::cell::OnceCell<(Vec<HashSet<String>>, HashMap<String, Vec<usize>>)>;

fn found_elsewhere(c: &Candidate, pool: &mut Pool, senses: &Senses) -> bool {
    // The change removes the code it tested: the test goes with its feature.
    // (Its own name aside: a Rust test is a function beside the code.)
    if c.uses
        .iter()
        .any(|u| *u != c.simple && pool.removes_definition(u))
        || subjects(&c.simple).any(|s| pool.removes_definition(&s))
    {
        return true;
    }
    if pool.test_names.contains(&c.simple)
        || c.body_key.is_some_and(|k| pool.test_bodies.contains(&k))
    {
        return true;
    }
    // A duplicate removed: a test at the head has its body and makes every check it made.
    if !c.checks.is_empty()
        && c.body_key
            .and_then(|k| pool.head_tests.get(&k))
            .is_some_and(|tests| {
                tests
                    .iter()
                    .any(|checks| c.checks.iter().all(|k| checks.contains(k)))
            })
    {
        return true;
    }
    // Renamed to a longer or shorter name of the same test, or rewritten for another
    // framework.
    if pool.renamed_test(&c.simple, 6) || rewritten_elsewhere(c, pool, senses) {
        return true;
    }
    // Split or merged: most of its assertions arrived elsewhere.
    if !c.checks.is_empty() {
        let present = c
            .checks
            .iter()
            .filter(|k| pool.checks.get(k).is_some_and(|&n| n > 0))
            .count();
        if present * 2 >= c.checks.len() {
            for k in &c.checks {
                pool.take_check(*k);
            }
            return true;
        }
    }
    // Folded into a parametrized table: each assertion's literals are values of new rows.
    (!c.literals.is_empty()
        && c.literals
            .iter()
            .all(|l| !l.is_empty() && l.iter().all(|v| pool.row_values.contains(v))))
        || folded_into_cases(c, pool)
}

/// A deleted test that is still written, where its runner no longer runs it: renamed in its
/// file to a function the runner does not collect and nothing there calls (`_test_x`,
/// `xTestX`, a JUnit method without its `@Test`), or moved to a file the runner does not
/// collect ([`uncollected`]). The message, if so.
fn out_of_reach(c: &Candidate, pool: &Pool, uncollected: &HashSet<RepoPath>) -> Option<String> {
    let at = format!("test `{}` (line {} at the base)", c.name, c.line);
    let same: Vec<&NewTest> = pool
        .new_tests
        .iter()
        .filter(|t| t.simple == c.simple)
        .collect();
    if !same.is_empty() {
        let path = same[0].path.as_ref()?;
        let away = same
            .iter()
            .all(|t| t.path.as_ref().is_some_and(|p| uncollected.contains(p)));
        return (away && !uncollected.contains(&c.path)).then(|| {
            format!(
                "{at} is moved to `{path}`, a file pytest does not collect (not named `test_*.py` or `*_test.py`) and nothing in the change imports: it no longer runs"
            )
        });
    }
    if c.checks.is_empty() || c.head_path.is_none() {
        return None;
    }
    let name = c.simple.to_lowercase();
    pool.orphans
        .iter()
        .filter(|o| o.path == c.head_path && o.name.to_lowercase().contains(&name))
        .find(|o| {
            let kept = c.checks.iter().filter(|k| o.checks.contains(k)).count();
            kept * 2 >= c.checks.len()
        })
        .map(|o| {
            format!(
                "{at} is now `{}`, a function its runner does not collect and nothing in its file calls: its checks no longer run",
                o.name
            )
        })
}

/// pytest's own files for its settings, at the repository's root.
const PYTEST_SETTINGS: &[&str] = &[
    "pytest.ini",
    ".pytest.ini",
    "pyproject.toml",
    "setup.cfg",
    "tox.ini",
];

/// The files of the change's new tests that their runner does not collect: a Python file the
/// change adds, named neither `test_*.py` nor `*_test.py`, that holds a test a deleted one
/// became, in a repository whose pytest settings leave `python_files` at its default, and that
/// no file of the change names (an import, `pytest_plugins`): being new, whatever imports it
/// is in the change too. Other languages' runners are not judged here.
/// Whether pytest's default `python_files` (`test_*.py`, `*_test.py`) collects a file, and
/// unittest's discovery (`test*.py`) too; any file not Python is left to its own runner.
fn collected_by_pytest(p: &RepoPath) -> bool {
    let name = p.file_name();
    let Some(stem) = name.strip_suffix(b".py") else {
        return true;
    };
    stem.starts_with(b"test") || stem.ends_with(b"_test") || stem == b"conftest"
}

/// Whether the repository's pytest settings name their own `python_files`.
fn python_files_configured(head: &dyn crate::Tree) -> bool {
    PYTEST_SETTINGS.iter().any(|f| {
        head.read(&RepoPath::from(*f))
            .is_some_and(|t| memchr::memmem::find(&t, b"python_files").is_some())
    })
}

fn uncollected(
    deleted: &[Candidate],
    pool: &Pool,
    changes: &[&crate::Change],
    head: &dyn crate::Tree,
) -> HashSet<RepoPath> {
    let collected_by_name = collected_by_pytest;
    let names: HashSet<&str> = deleted
        .iter()
        .filter(|c| c.path.file_name().ends_with(b".py") && collected_by_name(&c.path))
        .map(|c| c.simple.as_str())
        .collect();
    if names.is_empty() {
        return HashSet::default();
    }
    let added: HashSet<&RepoPath> = changes
        .iter()
        .filter(|c| c.kind == ChangeKind::Added)
        .filter_map(|c| c.new_path.as_ref())
        .collect();
    let suspects: HashSet<&RepoPath> = pool
        .new_tests
        .iter()
        .filter(|t| names.contains(t.simple.as_str()))
        .filter_map(|t| t.path.as_ref())
        .filter(|p| p.file_name().ends_with(b".py") && added.contains(p) && !collected_by_name(p))
        .collect();
    if suspects.is_empty() {
        return HashSet::default();
    }
    if python_files_configured(head) {
        return HashSet::default();
    }
    let texts: Vec<(&RepoPath, Vec<u8>)> = changes
        .iter()
        .filter_map(|c| c.new_path.as_ref())
        .filter(|p| {
            p.file_name().ends_with(b".py")
                || PYTEST_SETTINGS.iter().any(|f| p.as_bytes() == f.as_bytes())
        })
        .filter_map(|p| Some((p, head.read(p)?)))
        .collect();
    suspects
        .into_iter()
        .filter(|p| {
            let name = p.file_name();
            let module = name.strip_suffix(b".py").unwrap_or(name);
            !texts.iter().any(|(other, text)| {
                other != p
                    && memchr::memmem::find_iter(text, module)
                        .any(|at| crate::suite::word_at(text, at, module))
            })
        })
        .cloned()
        .collect()
}

/// Takes out of `lost` the tests that became a new test of another file: moved, renamed and
/// edited on the way. Paired like tests renamed in their file ([`crate::suite::likeness`]),
/// one to one, the most alike first; but a pair across files is not judged by the rules of a
/// changed test, so it stands only where there is nothing for them to report: the new test
/// checks at least as much, and no assertion of the old one changed its value or sense.
fn moved_and_renamed(lost: &mut Vec<Candidate>, pool: &Pool) {
    if lost.is_empty() || pool.new_tests.is_empty() {
        return;
    }
    // Beyond this many pairs (a suite rewritten), none is tried.
    const MAX_PAIRS: usize = 250_000;
    if lost.len() * pool.new_tests.len() > MAX_PAIRS {
        return;
    }
    // Across files there is no one file whose words are common: every word weighs the same.
    let rarity = Rarity::default();
    let new_names: Vec<NameKey> = pool
        .new_tests
        .iter()
        .map(|t| NameKey::of(&t.simple))
        .collect();
    let new_bags: Vec<Bag> = pool
        .new_tests
        .iter()
        .map(|t| Bag::of(&t.words, &rarity))
        .collect();
    let mut candidates: Vec<(f64, f64, usize, usize)> = Vec::new();
    for (i, c) in lost.iter().enumerate() {
        let (name, bag) = (NameKey::of(&c.simple), Bag::of(&c.words, &rarity));
        for (j, t) in pool.new_tests.iter().enumerate() {
            if (c.head_path.is_some() && t.path == c.head_path) || t.weight < c.weight {
                continue;
            }
            // Every word weighing one, two bodies share at most the smaller's words: when that
            // is under a quarter of both, their likeness is under one half, too low to pair.
            let (m, n) = (c.words.len(), t.words.len());
            if 4 * m.min(n) < m + n {
                continue;
            }
            let (score, shared) = bag_likeness(&bag, &new_bags[j]);
            let Some(names) = alike_by(score, shared, || name.likeness(&new_names[j])) else {
                continue;
            };
            let a = align(&c.full_checks, &t.checks);
            if a.flipped.is_empty() && a.changed.is_empty() && a.widened.is_empty() {
                candidates.push((score, names, i, j));
            }
        }
    }
    let mut gone = vec![false; lost.len()];
    for (i, _) in one_to_one(candidates, lost.len(), pool.new_tests.len()) {
        gone[i] = true;
    }
    let mut k = 0..;
    lost.retain(|_| k.next().is_some_and(|i| !gone[i]));
}

/// Judges the change's deleted tests against what it gained; `changes` and `head` say where a
/// test moved to is collected.
pub(crate) fn resolve(
    candidates: Vec<Candidate>,
    pool: &mut Pool,
    changes: &[&crate::Change],
    head: &dyn crate::Tree,
    classifier: &crate::Classifier,
) -> Vec<Flag> {
    let uncollected = uncollected(&candidates, pool, changes, head);
    // The production files the change deletes, by stem, for a test file deleted with its
    // subject.
    let gone: Vec<String> = if candidates.iter().any(|c| c.file_deleted) {
        changes
            .iter()
            .filter(|c| c.kind == ChangeKind::Deleted)
            .filter_map(|c| c.old_path.as_ref())
            .filter(|p| !classifier.is_test(p))
            .map(|p| strip_extension(&p.to_string()).to_owned())
            .collect()
    } else {
        Vec::new()
    };
    let head_files: Vec<String> = if gone.is_empty() {
        Vec::new()
    } else {
        head.files()
            .iter()
            .filter(|p| !classifier.is_test(p) && !crate::paths::is_fixture(p))
            .map(|p| strip_extension(&p.to_string()).to_owned())
            .collect()
    };
    let kept = |i: &Import| head_files.iter().any(|f| i.is(f));
    let senses = Senses::new();
    let mut out: Vec<Flag> = Vec::new();
    let mut lost: Vec<Candidate> = Vec::new();
    // Several deleted tests of one name and fewer new ones of it (tests of two files merged
    // into one, or namesakes): which became which is not known, so none is judged by the move.
    let mut deleted_by_name: HashMap<&str, usize> = HashMap::default();
    for c in &candidates {
        *deleted_by_name.entry(c.simple.as_str()).or_default() += 1;
    }
    let mut new_by_name: HashMap<&str, usize> = HashMap::default();
    for t in &pool.new_tests {
        *new_by_name.entry(t.simple.as_str()).or_default() += 1;
    }
    let crowded: HashSet<String> = deleted_by_name
        .iter()
        .filter(|(name, n)| **n > new_by_name.get(*name).copied().unwrap_or(0))
        .map(|(name, _)| (*name).to_owned())
        .collect();
    let python_files_set = candidates
        .iter()
        .any(|c| c.path.file_name().ends_with(b".py"))
        && python_files_configured(head);
    out.extend(relocated::relocated(&candidates, pool));
    for c in candidates {
        // Unit tests written in a production file (Rust's `#[cfg(test)] mod tests`) that
        // the change deletes: they go with the code they sit beside.
        if c.file_deleted && !classifier.is_test(&c.path) {
            continue;
        }
        // A Python file pytest does not collect (not `test_*.py` nor `*_test.py`, with
        // `python_files` at its default): its functions never ran as tests.
        if !python_files_set && !collected_by_pytest(&c.path) {
            continue;
        }
        if let Some(message) = out_of_reach(&c, pool, &uncollected) {
            out.push(Flag {
                rule: Rule::TestDeleted,
                severity: Rule::TestDeleted.severity(),
                path: c.path.clone(),
                line: None,
                removed_line: Some(c.line),
                message,
                snippet: None,
            });
            continue;
        }
        let judged = if crowded.contains(&c.simple) {
            Moved::No
        } else {
            moved(&c, pool)
        };
        match judged {
            Moved::Kept => {}
            Moved::Weaker(flag) => out.push(flag),
            Moved::No
                if subject_removed(&c, &gone, &kept) || found_elsewhere(&c, pool, &senses) => {}
            Moved::No => lost.push(c),
        }
    }
    moved_and_renamed(&mut lost, pool);
    let flag = |path: &RepoPath, line: u32, message: String| Flag {
        rule: Rule::TestDeleted,
        severity: Rule::TestDeleted.severity(),
        path: path.clone(),
        line: None,
        removed_line: Some(line),
        message,
        snippet: None,
    };
    // A deleted file is one flag naming its tests, and so are more than a few tests gone from
    // one file: a reviewer reads one flag, not a screenful.
    let mut i = 0;
    while i < lost.len() {
        let c = &lost[i];
        let same: Vec<&Candidate> = lost[i..].iter().take_while(|x| x.path == c.path).collect();
        i += same.len();
        if !c.file_deleted && same.len() <= MAX_FLAGS_PER_FILE {
            for t in same {
                out.push(flag(
                    &t.path,
                    t.line,
                    format!(
                        "test `{}` (line {} at the base) is deleted and found nowhere else in the change",
                        t.name, t.line
                    ),
                ));
            }
            continue;
        }
        let names: Vec<&str> = same.iter().take(3).map(|x| x.simple.as_str()).collect();
        let more = if same.len() > 3 { ", …" } else { "" };
        let tests = if same.len() == 1 {
            "its test".to_owned()
        } else {
            format!("{} tests", same.len())
        };
        let message = if c.file_deleted {
            format!(
                "the test file is deleted with {} found nowhere else in the change (`{}`{more})",
                if same.len() == 1 {
                    tests
                } else {
                    format!("its {tests}")
                },
                names.join("`, `")
            )
        } else {
            format!(
                "{tests} are deleted from this file and found nowhere else in the change (`{}`{more}, the first at line {} of the base)",
                names.join("`, `"),
                c.line
            )
        };
        out.push(flag(&c.path, c.line, message));
    }
    out
}

mod relocated;

/// Up to this many tests gone from one file are flagged one by one.
const MAX_FLAGS_PER_FILE: usize = 3;

/// The rule's registry entry and what the detector runs for it.
pub(crate) const RULE: RuleInfo = RuleInfo {
    rule: Rule::TestDeleted,
    id: "test-deleted",
    severity: Severity::Note,
    source: Source::Detector,
    languages: "Python, JS/TS, Go, Rust, Java/Kotlin, C#, Ruby, PHP",
    summary: "A test, or a whole test file, is gone and is not found elsewhere in the change.",
    help: "A deleted test cannot fail. Flags a test case present at the base and absent at \
           the head, unless it moved to another file, was renamed with the same body (or \
           with most of its body's words: in its file the edit is then judged as a \
           weakened test or a changed expectation; in another, the new test must check as \
           much with the same expected values), was split into tests that keep its \
           assertions or merged into one that checks as much, became a row of a \
           parametrized test, or tested (or was named for) a production definition the \
           change removes. Also flags a test still written where its runner no longer \
           runs it: renamed to a name the runner does not collect and nothing in its file \
           calls (`_test_x`, `xTestX`, `@Test` dropped), or moved to a new Python file \
           pytest does not collect that nothing in the change imports.",
    judges_tests: true,
    passes: &[
        Pass::Code(Reads::new(production, Reads::ANY.prefilter), definitions),
        Pass::Tests(Reads::new(|_| true, may_hold_tests), deleted),
        Pass::Change(judge_candidates),
    ],
};

fn production(file: &File<'_>) -> bool {
    !file.role.is_test
}

/// What production code stops (or starts) defining: a test of a removed function is deleted
/// with it.
fn definitions(code: &Code<'_>, out: &mut Out<'_>) {
    let change = code.file.change;
    if let Some(old) = code.old.filter(|_| !change.removed.is_empty()) {
        suite::compare::definitions(old.raw(), &change.removed, &mut out.pool.removed_defs);
    }
    if let Some(new) = code.new.filter(|_| !change.added.is_empty()) {
        suite::compare::definitions(new.raw(), &change.added, &mut out.pool.added_defs);
    }
}

fn deleted(tests: &Tests<'_, '_>, out: &mut Out<'_>) {
    let change = tests.file.change;
    let imports = match (&change.kind, tests.old) {
        (ChangeKind::Deleted, Some(old)) => {
            suite::subject::imports(tests.lang, &tests.file.path.to_string(), old.raw())
        }
        _ => Vec::new(),
    };
    out.hold(examine(
        change, tests.diff, tests.base, tests.head, &imports,
    ));
}

fn judge_candidates(across: &mut Across<'_, '_>) -> Vec<(Flag, Option<String>)> {
    let candidates: Vec<Candidate> = across
        .take::<Vec<Candidate>>()
        .into_iter()
        .flat_map(|(_, c)| c)
        .collect();
    let changes: Vec<&Change> = across.files.iter().map(|f| f.change).collect();
    let (head, classifier) = (across.trees.head, across.trees.classifier);
    resolve(candidates, across.pool, &changes, head, classifier)
        .into_iter()
        .map(|f| (f, None))
        .collect()
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod tests_jvm_ruby_php;

#[cfg(test)]
mod renamed;

#[cfg(test)]
mod reach;

#[cfg(test)]
mod folded;

#[cfg(test)]
mod with_subject;
