//! Two versions of a test file side by side: which tests are the same test (by name, else by
//! body), which are gone, which are new; and within one test, which assertions and table rows
//! stayed, which changed value or sense, which were lost and which were gained.
//!
//! The rules read these comparisons; they also add to a [`Pool`] of what the whole change
//! gained (assertions, tests, helpers, table values), which is how a test moved to another file,
//! split in two or folded into a parametrized table is told from a test that was lost.

use std::collections::BTreeSet;

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use std::ops::Range;
use std::sync::LazyLock;

use regex::bytes::{Regex, RegexBuilder};

use super::checks::literal_change;
use super::{Check, Row, TestCase, TestFile, likeness, tolerance};

/// The tests of two versions of one file, matched.
pub(crate) struct FileDiff<'a> {
    /// The same test at the base and the head.
    pub pairs: Vec<(&'a TestCase, &'a TestCase)>,
    /// At the base, not at the head.
    pub deleted: Vec<&'a TestCase>,
    /// At the head, not at the base.
    pub added: Vec<&'a TestCase>,
}

pub(crate) fn diff<'a>(base: &'a TestFile, head: &'a TestFile) -> FileDiff<'a> {
    let mut by_name: HashMap<&str, Vec<&TestCase>> = HashMap::default();
    for t in &head.cases {
        by_name.entry(t.name.as_str()).or_default().push(t);
    }
    // Same name, in order (two tests of one name pair first with first).
    let mut pairs = Vec::new();
    let mut deleted = Vec::new();
    let mut used: HashSet<*const TestCase> = HashSet::default();
    for b in &base.cases {
        match by_name
            .get_mut(b.name.as_str())
            .and_then(|v| (!v.is_empty()).then(|| v.remove(0)))
        {
            Some(h) => {
                used.insert(h);
                pairs.push((b, h));
            }
            None => deleted.push(b),
        }
    }
    let mut added: Vec<&TestCase> = head
        .cases
        .iter()
        .filter(|h| !used.contains(&(*h as *const TestCase)))
        .collect();
    // A test renamed in place keeps its body.
    deleted.retain(|b| {
        let Some(key) = b.body_key else { return true };
        match added.iter().position(|h| h.body_key == Some(key)) {
            Some(i) => {
                pairs.push((b, added.remove(i)));
                false
            }
            None => true,
        }
    });
    // Or most of it: a test renamed in place and edited is that test, and the rules judge what
    // the edit did to it (an assertion dropped, an expectation changed) rather than calling it
    // gone. Its body keeps most of its words ([`likeness`]); the head's tests and the deleted
    // ones are the file's tests, for the rarity of words.
    let mut rarity = head.rarity.clone();
    for b in &deleted {
        rarity.add(&b.words);
    }
    // A test written once in a loop over rows is told by the names its rows give it (see
    // `Pool`), not by its likeness: a test its rows do not name is not in it.
    let named: Vec<&TestCase> = added
        .iter()
        .copied()
        .filter(|h| h.instances.is_empty())
        .collect();
    let renamed: Vec<(usize, usize)> = likeness::pair(&deleted, &named, &rarity)
        .into_iter()
        .filter_map(|(i, j)| {
            let j = added.iter().position(|h| std::ptr::eq(*h, named[j]))?;
            Some((i, j))
        })
        .collect();
    if !renamed.is_empty() {
        let (mut gone, mut taken) = (vec![false; deleted.len()], vec![false; added.len()]);
        for &(i, j) in &renamed {
            pairs.push((deleted[i], added[j]));
            (gone[i], taken[j]) = (true, true);
        }
        let mut k = 0..;
        deleted.retain(|_| k.next().is_some_and(|i| !gone[i]));
        let mut k = 0..;
        added.retain(|_| k.next().is_some_and(|j| !taken[j]));
    }
    let named: Vec<&TestCase> = added
        .iter()
        .copied()
        .filter(|h| h.instances.is_empty())
        .collect();
    let pairs_named: Vec<(&TestCase, &TestCase)> = pairs
        .iter()
        .copied()
        .filter(|(_, h)| h.instances.is_empty())
        .collect();
    merge(&mut deleted, &pairs_named, &named, &rarity, base, head);
    FileDiff {
        pairs,
        deleted,
        added,
    }
}

/// Takes out of `deleted` the tests merged into a test of the head: two tests folded into one
/// parametrized test, or a variant folded into the test it varied. Such a test's body is alike
/// enough to the head test's, and the head test checks at least as much as every base test that
/// went into it together; a test merged into one that checks no more than before is lost.
fn merge<'a>(
    deleted: &mut Vec<&'a TestCase>,
    pairs: &[(&'a TestCase, &'a TestCase)],
    added: &[&'a TestCase],
    rarity: &likeness::Rarity,
    base: &TestFile,
    head: &TestFile,
) {
    if deleted.is_empty() {
        return;
    }
    let (base_helpers, head_helpers) = (base.helper_weights(), head.helper_weights());
    // Each head test that could take more, with what it has to cover so far.
    let mut into: Vec<(&TestCase, usize, usize)> = pairs
        .iter()
        .map(|(b, h)| {
            (
                *h,
                weight(h, &head_helpers, true),
                weight(b, &base_helpers, true),
            )
        })
        .chain(
            added
                .iter()
                .map(|h| (*h, weight(h, &head_helpers, true), 0)),
        )
        .filter(|(_, can, owed)| can > owed)
        .collect();
    let bags: Vec<likeness::Bag> = into
        .iter()
        .map(|(h, ..)| likeness::Bag::of(&h.words, rarity))
        .collect();
    deleted.retain(|b| {
        let need = weight(b, &base_helpers, true);
        let bag = likeness::Bag::of(&b.words, rarity);
        let best = into
            .iter_mut()
            .zip(&bags)
            .filter(|((_, can, owed), _)| *can >= *owed + need)
            .map(|(entry, h)| (likeness::bag_likeness(&bag, h), entry))
            .filter(|((score, shared), entry)| {
                likeness::alike_by(*score, *shared, || {
                    likeness::name_likeness(&b.simple, &entry.0.simple)
                })
                .is_some()
            })
            .max_by(|x, y| x.0.0.total_cmp(&y.0.0));
        match best {
            Some((_, entry)) => {
                entry.2 += need;
                false
            }
            None => true,
        }
    });
}

/// One test's assertions at the base and the head, aligned.
#[derive(Default)]
pub(crate) struct Alignment<'a> {
    /// The same assertion, its sense flipped: (base, head).
    pub flipped: Vec<(&'a Check, &'a Check)>,
    /// The same assertion, one literal operand changed: (base, head, the operand's index).
    pub changed: Vec<(&'a Check, &'a Check, usize)>,
    /// The same check on the same number, its tolerance widened (see [`tolerance`]).
    pub widened: Vec<(&'a Check, &'a Check)>,
    /// At the base, with no counterpart at the head.
    pub lost: Vec<&'a Check>,
    /// At the head, with no counterpart at the base.
    pub gained: Vec<&'a Check>,
}

pub(crate) fn align<'a>(base: &'a [Check], head: &'a [Check]) -> Alignment<'a> {
    let mut out = Alignment::default();
    // Identical assertions (by key) first.
    let mut left: Vec<&Check> = base.iter().collect();
    let mut right: Vec<&Check> = Vec::new();
    for h in head {
        match left.iter().position(|b| b.key == h.key) {
            Some(i) => {
                left.remove(i);
            }
            None => right.push(h),
        }
    }
    let mut rest = Vec::new();
    for h in right {
        // An assertion whose message was added or removed is the same assertion.
        if let Some(i) = left.iter().position(|b| same_but_message(b, h)) {
            left.remove(i);
            continue;
        }
        if let Some(i) = left.iter().position(|b| {
            b.family == h.family && b.negated != h.negated && b.operands == h.operands
        }) {
            out.flipped.push((left.remove(i), h));
            continue;
        }
        // A tolerance widened or tightened around the same value: judged as such, not as an
        // expected value changed.
        if let Some((i, change)) = left
            .iter()
            .enumerate()
            .find_map(|(i, b)| tolerance::compare(b, h).map(|c| (i, c)))
        {
            let b = left.remove(i);
            if change == tolerance::Change::Widened {
                out.widened.push((b, h));
            }
            continue;
        }
        if let Some((i, k)) = left.iter().enumerate().find_map(|(i, b)| {
            one_literal_apart(&b.operands, &h.operands)
                .filter(|_| b.family == h.family && b.negated == h.negated)
                .map(|k| (i, k))
        }) {
            out.changed.push((left.remove(i), h, k));
            continue;
        }
        rest.push(h);
    }
    out.lost = left;
    out.gained = rest;
    out
}

/// `assert x == 1` and `assert x == 1, "msg"`; `assertEqual(a, b)` and `assertEqual(a, b, "m")`.
/// Not a matcher that expects an error: `expect(f).toThrow("between 0 and 100")` says what
/// the error must say, and without it any error passes.
fn same_but_message(b: &Check, h: &Check) -> bool {
    if b.family != h.family || b.negated != h.negated || b.operands.len() == h.operands.len() {
        return false;
    }
    if b.family.starts_with("expect") && super::strength::expects_error(b) {
        return false;
    }
    let (short, long) = if b.operands.len() < h.operands.len() {
        (&b.operands, &h.operands)
    } else {
        (&h.operands, &b.operands)
    };
    // The extra operands are messages: strings, at the end (JUnit 5, unittest) or the start
    // (JUnit 4).
    let extra = long.len() - short.len();
    let is_msg = |s: &String| s.starts_with('"') || s.starts_with("f\"") || s.starts_with('`');
    (long[..short.len()] == short[..] && long[short.len()..].iter().all(is_msg))
        || (long[extra..] == short[..] && long[..extra].iter().all(is_msg))
}

/// The index of the one operand that differs, when it is a literal on both sides.
fn one_literal_apart(old: &[String], new: &[String]) -> Option<usize> {
    if old.len() != new.len() {
        return None;
    }
    let mut diffs = old.iter().zip(new).enumerate().filter(|(_, (o, n))| o != n);
    let (i, (o, n)) = diffs.next()?;
    if diffs.next().is_some() || !literal_change(o, n) {
        return None;
    }
    Some(i)
}

/// One test's table rows at the base and the head, aligned like its assertions.
#[derive(Default)]
pub(crate) struct RowAlignment<'a> {
    pub changed: Vec<(&'a Row, &'a Row, usize)>,
    pub lost: Vec<&'a Row>,
    pub gained: Vec<&'a Row>,
    /// Rows kept at the head that its body now passes over (also in `lost`, as at the base).
    pub bypassed: Vec<&'a Row>,
}

pub(crate) fn align_rows<'a>(base: &'a [Row], head: &'a [Row]) -> RowAlignment<'a> {
    let mut out = RowAlignment::default();
    let mut left: Vec<&Row> = base.iter().collect();
    let mut right = Vec::new();
    let mut bypassed = Vec::new();
    for h in head {
        match left.iter().position(|b| b.key == h.key) {
            Some(i) => {
                let b = left.remove(i);
                if h.bypassed.is_some() && !b.skipped() {
                    bypassed.push((b, h));
                }
            }
            None => right.push(h),
        }
    }
    // Rows are paired by value: a row whose values stand unchanged at the base (written
    // another way, with another id) is that row, before any row one literal apart is taken for
    // a changed one.
    let mut rest = Vec::new();
    for h in right {
        match left
            .iter()
            .position(|b| b.fields == h.fields && b.marks == h.marks)
        {
            Some(i) => {
                left.remove(i);
            }
            None => rest.push(h),
        }
    }
    for h in rest {
        match left
            .iter()
            .enumerate()
            .find_map(|(i, b)| one_literal_apart(&b.fields, &h.fields).map(|k| (i, k)))
        {
            Some((i, k)) => out.changed.push((left.remove(i), h, k)),
            None => out.gained.push(h),
        }
    }
    // A row that repeats one the table still holds (comments, white space and quote style
    // aside, as its key already sets them aside) runs a case the test still runs: dropping a
    // duplicate loses nothing.
    // Nor is a row that was marked to be skipped, which never ran.
    let kept: HashSet<u64> = head.iter().map(|r| r.key).collect();
    left.retain(|b| !kept.contains(&b.key) && !b.skipped());
    out.lost = left;
    for (b, h) in bypassed {
        out.lost.push(b);
        out.bypassed.push(h);
    }
    out
}

/// How much a test checks: its assertions (each by what it stands for, exclusive
/// branches by their heaviest), its rows, and its calls to helpers that assert.
/// A parametrized test runs its checks once per row, so its weight is their product: a table
/// test that replaces three copies of one assertion weighs what they did.
/// A call to a helper weighs what the helper checks (`helpers` maps the file's asserting
/// functions to their number of checks); a call that checks by its name alone weighs one.
/// Each assertion weighs what it stands for ([`Check::weight`]): a mock's expectation counts
/// once per occurrence, a stub nothing.
/// With `rows` false, the table is left out: what one run of the body checks.
pub(crate) fn weight(t: &TestCase, helpers: &HashMap<String, usize>, rows: bool) -> usize {
    let calls: usize = t
        .calls
        .iter()
        .map(|c| match helpers.get(c) {
            Some(&n) => n,
            None => usize::from(checks_by_name(c)),
        })
        .sum();
    // A row marked to be skipped never runs.
    let runs = if rows {
        t.rows.iter().filter(|r| !r.skipped()).count().max(1)
    } else {
        1
    };
    (t.check_weight + calls) * runs
}

/// A call that, by its name alone, checks something: `assert_valid(…)`, `check_sum(…)`,
/// `verifyOutput(…)`, `expectError(…)`.
pub(crate) fn checks_by_name(name: &str) -> bool {
    // `requireEqualSamples(t, …)`, `teststorage.RequireEqual(t, …)`: named
    // after testify's `require`; a bare `require(…)` loads a module in JavaScript and Ruby.
    let bare = name.trim_start_matches('_');
    if let Some(rest) = bare
        .strip_prefix("require")
        .or_else(|| bare.strip_prefix("Require"))
        && rest.starts_with(|c: char| c.is_ascii_uppercase())
    {
        return true;
    }
    let n = bare.to_ascii_lowercase();
    // Go's `t.Helper()` marks a helper; it checks nothing.
    if n == "helper" {
        return false;
    }
    [
        "assert", "check", "verify", "expect", "validate", "ensure", "should", "must", "compare",
        "run_test", "runtest", "do_test", "dotest", "test_", "helper",
    ]
    .iter()
    .any(|p| n.starts_with(p))
}

/// What the whole change gained, over every file: the evidence that a test or an assertion
/// that left one place arrived in another.
#[derive(Debug, Default)]
pub(crate) struct Pool {
    /// Keys of assertions that tests or helpers gained.
    pub checks: HashMap<u64, usize>,
    /// Simple names and body keys of tests that are new where they are.
    pub test_names: BTreeSet<String>,
    pub test_bodies: HashSet<u64>,
    /// Helpers (functions that assert) at the head.
    pub helpers: HashSet<String>,
    /// Literal fields of table rows the change added.
    pub row_values: HashSet<String>,
    /// The literals on lines the change added to test files, wherever they stand (an array
    /// a loop of tests runs over, a template table): the cases a folded test may have become.
    pub added_literals: HashSet<String>,
    /// What the tests the change added or rewrote call: a folded test's subject, still
    /// called by the table's one test.
    pub rewritten_calls: HashSet<String>,
    /// The head's tests that the test model read, by body key, with the keys of their
    /// assertions: a deleted test with the body and every check of one of them was its
    /// duplicate.
    pub head_tests: HashMap<u64, Vec<HashSet<u64>>>,
    /// Names that production code defines on lines the change removed, and on lines it added:
    /// a test of a function the change removes goes with it.
    pub removed_defs: HashSet<String>,
    pub added_defs: HashSet<String>,
    /// The tests new where they are, as a deleted test of another file is compared with them:
    /// moved and renamed, and edited on the way.
    pub new_tests: Vec<NewTest>,
    /// Functions new at the head that assert and that nothing in their file names: where a
    /// test renamed out of the runner's reach (`_test_x`, `xTestX`, `@Test` dropped) went.
    pub orphans: Vec<Orphan>,
}

/// A new function that asserts and is named nowhere else in its file, for [`Pool::orphans`].
#[derive(Debug)]
pub(crate) struct Orphan {
    pub path: Option<crate::RepoPath>,
    pub name: String,
    pub checks: Vec<u64>,
}

/// A test new in its file, for [`Pool::new_tests`].
#[derive(Debug)]
pub(crate) struct NewTest {
    /// Its file, set by the caller that knows it: a test deleted in the same file was compared
    /// with it already, knowing which words the file's tests share.
    pub path: Option<crate::RepoPath>,
    pub simple: String,
    /// Its definition line.
    pub line: u32,
    pub words: Vec<u64>,
    pub checks: Vec<Check>,
    /// What it checks ([`weight`]), its file's helpers counted.
    pub weight: usize,
}

impl Pool {
    pub fn merge(&mut self, other: Pool) {
        for (k, n) in other.checks {
            *self.checks.entry(k).or_default() += n;
        }
        self.test_names.extend(other.test_names);
        self.test_bodies.extend(other.test_bodies);
        self.helpers.extend(other.helpers);
        self.row_values.extend(other.row_values);
        self.added_literals.extend(other.added_literals);
        self.rewritten_calls.extend(other.rewritten_calls);
        for (k, v) in other.head_tests {
            self.head_tests.entry(k).or_default().extend(v);
        }
        self.removed_defs.extend(other.removed_defs);
        self.added_defs.extend(other.added_defs);
        self.new_tests.extend(other.new_tests);
        self.orphans.extend(other.orphans);
    }

    /// Whether a new test's name extends `name` or is a prefix of it, both at least `min` long:
    /// `test_parse` renamed `test_parse_json`, or the other way round.
    pub fn renamed_test(&self, name: &str, min: usize) -> bool {
        if name.len() < min {
            return false;
        }
        let longer = self
            .test_names
            .range::<str, _>((std::ops::Bound::Included(name), std::ops::Bound::Unbounded))
            .next()
            .is_some_and(|n| n.starts_with(name));
        longer
            || (min..name.len())
                .filter(|&i| name.is_char_boundary(i))
                .any(|i| self.test_names.contains(&name[..i]))
    }

    /// Whether the change removes the production definition of `name` (and defines it nowhere).
    pub fn removes_definition(&self, name: &str) -> bool {
        self.removed_defs.contains(name) && !self.added_defs.contains(name)
    }

    /// Takes one gained assertion with `key`, if the change has one left.
    pub fn take_check(&mut self, key: u64) -> bool {
        match self.checks.get_mut(&key) {
            Some(n) if *n > 0 => {
                *n -= 1;
                true
            }
            _ => false,
        }
    }

    /// What one file adds to the pool.
    pub fn of_file(base: &TestFile, head: &TestFile, diff: &FileDiff<'_>) -> Pool {
        let mut pool = Pool::default();
        let mut gain = |c: &Check| *pool.checks.entry(c.key).or_default() += 1;
        for (b, h) in &diff.pairs {
            let a = align(&b.checks, &h.checks);
            a.gained.iter().for_each(|c| gain(c));
            a.changed.iter().for_each(|(_, c, _)| gain(c));
            let r = align_rows(&b.rows, &h.rows);
            for row in r.gained {
                pool.row_values.extend(row.fields.iter().cloned());
            }
            // A row added to a loop of tests named by a template: a test of that name is new.
            let before: HashSet<&String> = b.instances.iter().collect();
            pool.test_names
                .extend(h.instances.iter().filter(|n| !before.contains(n)).cloned());
        }
        let head_helpers = head.helper_weights();
        pool.new_tests = diff
            .added
            .iter()
            .map(|t| NewTest {
                path: None,
                simple: t.simple.clone(),
                line: t.line,
                words: t.words.clone(),
                checks: t.checks.clone(),
                weight: weight(t, &head_helpers, true),
            })
            .collect();
        // Calls a new test makes, or a test makes anew, arrive as a lost call leaves (see
        // `test-weakened`): a call to a helper moved into a test split off.
        let mut gain_call = |name: &String| {
            *pool
                .checks
                .entry(super::hash(&format!("call {name}")))
                .or_default() += 1;
        };
        for (b, h) in &diff.pairs {
            h.calls
                .iter()
                .filter(|c| !b.calls.contains(c))
                .for_each(&mut gain_call);
        }
        for t in &head.cases {
            if let Some(k) = t.body_key {
                let checks = t.checks.iter().map(|c| c.key).collect();
                pool.head_tests.entry(k).or_default().push(checks);
            }
        }
        for (b, h) in &diff.pairs {
            if b.body_key != h.body_key {
                pool.rewritten_calls.extend(names_used(h));
            }
        }
        for t in &diff.added {
            pool.rewritten_calls.extend(names_used(t));
        }
        for t in &diff.added {
            t.calls.iter().for_each(&mut gain_call);
        }
        let mut gain = |c: &Check| *pool.checks.entry(c.key).or_default() += 1;
        for t in &diff.added {
            t.checks.iter().for_each(&mut gain);
            pool.test_names.insert(t.simple.clone());
            pool.test_names.extend(t.instances.iter().cloned());
            pool.test_bodies.extend(t.body_key);
            for row in &t.rows {
                pool.row_values.extend(row.fields.iter().cloned());
            }
        }
        // Helpers: what they assert at the head beyond the base.
        let mut base_helper_checks: HashMap<u64, usize> = HashMap::default();
        for c in base.helpers.iter().flat_map(|h| &h.checks) {
            *base_helper_checks.entry(c.key).or_default() += 1;
        }
        pool.orphans = head
            .helpers
            .iter()
            .filter(|h| !h.referenced && !base.helpers.iter().any(|b| b.name == h.name))
            .map(|h| Orphan {
                path: None,
                name: h.name.clone(),
                checks: h
                    .checks
                    .iter()
                    .filter(|c| c.weight > 0)
                    .map(|c| c.key)
                    .collect(),
            })
            .collect();
        for h in &head.helpers {
            pool.helpers.insert(h.name.clone());
            for c in &h.checks {
                match base_helper_checks.get_mut(&c.key) {
                    Some(n) if *n > 0 => *n -= 1,
                    _ => gain(c),
                }
            }
        }
        pool
    }
}

/// What a test calls, in its body or inside its assertions (`expect(slug(input))` calls
/// `slug`).
fn names_used(t: &TestCase) -> impl Iterator<Item = String> + '_ {
    let in_checks = t.checks.iter().flat_map(|c| &c.operands).flat_map(|o| {
        o.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
            .filter(|s| s.len() >= 3)
            .map(str::to_owned)
    });
    t.calls.iter().cloned().chain(in_checks)
}

/// A definition of a function, method or type, in any language the detector reads:
/// `def name`, `func (r *T) Name`, `fn name`, `function name`, `const name = (…) =>`,
/// `public int Name(`. White space inside a definition stays on its line. Every branch starts
/// with a keyword.
const DEFINITION: &str = r"\b(?:def|function|func|fn|class|struct|interface|trait|module|enum)[ \t]+(?:\([^)\n]*\)[ \t]*)?\*?[ \t]*([A-Za-z_$][\w$]{2,})|\b(?:const|let|var)[ \t]+([A-Za-z_$][\w$]{2,})[ \t]*=[ \t]*(?:async[ \t]*)?\(|\b(?:public|private|protected|internal|static)[ \t]+(?:[\w<>\[\]?]+[ \t]+){0,3}([A-Za-z_]\w{2,})[ \t]*\(";

/// `obj.name = function`, `name: function`: apart, since its keyword comes last. So is a
/// deprecated alias, whose value is the old function wrapped: `req.acceptsLanguage =
/// deprecate.function(…)` (depd), `exports.flatten = util.deprecate(…)`.
const ASSIGNED_FUNCTION: &str = r"[.\s]([A-Za-z_$][\w$]{2,})[ \t]*[:=][ \t]*(?:(?:async[ \t]+)?function\b|[\w$.]*deprecate[\w$.]*[ \t]*\()";

/// A method of a JS/TS class (or a constructor of a C-like one), which has no keyword: an
/// indented name, its parameters on the line, a return type perhaps, and the body's `{` ending
/// the line: `  hasCjsFactory(moduleID: string): boolean {`. Statements of that shape
/// (`if (…) {`, `for (…) {`) are told apart by their keyword, in [`definitions`].
const METHOD: &str = r"(?m)^[ \t]+(?:(?:public|private|protected|static|async|override|get|set)[ \t]+)*\*?([A-Za-z_$][\w$]{2,})[ \t]*(?:<[^>\n]*>)?\([^)\n]*\)[ \t]*(?::[^{}\n]+)?\{[ \t]*\r?$";

/// The three shapes of a definition as one pattern: one pass over the text instead of three.
/// Each match names one definition; the search goes on from the end of that name, not of the
/// match, so a definition inside another's match (`exports.load = function loadAll(…)`) is
/// found as it would be by its own pattern.
static DEFINITIONS: LazyLock<Regex> = LazyLock::new(|| {
    RegexBuilder::new(&format!(
        "(?:{DEFINITION})|(?:{ASSIGNED_FUNCTION})|(?:{METHOD})"
    ))
    .unicode(false)
    .build()
    .expect("the definition patterns are valid (tested)")
});

/// Keywords that open a statement shaped like a method: `if (x) {`.
const STATEMENTS: &[&str] = &[
    "for", "while", "switch", "catch", "with", "function", "return",
];

/// The names defined on `lines` of `text` (1-based line ranges of a production file), each
/// contiguous run of lines read in one pass.
pub(crate) fn definitions(text: &[u8], lines: &[Range<u32>], into: &mut HashSet<String>) {
    let mut starts = std::iter::once(0).chain(memchr::memchr_iter(b'\n', text).map(|i| i + 1));
    // The offset of line `line` (the end of the text past the last), for lines asked in order.
    let (mut line, mut offset) = (0u32, 0usize);
    let mut offset_of = |wanted: u32| -> usize {
        while line < wanted {
            offset = starts.next().unwrap_or(text.len());
            line += 1;
        }
        offset
    };
    let mut locations = DEFINITIONS.capture_locations();
    for r in lines {
        if r.start >= r.end {
            continue;
        }
        let from = offset_of(r.start);
        // Line `r.end` starts where the run ends; past the last line, the text does.
        let to = offset_of(r.end).max(from);
        let run = &text[from..to];
        let mut at = 0;
        while DEFINITIONS
            .captures_read_at(&mut locations, run, at)
            .is_some()
        {
            // Every branch captures the name: the first group set is it.
            let Some((start, end)) = (1..locations.len()).find_map(|i| locations.get(i)) else {
                break;
            };
            let name = String::from_utf8_lossy(&run[start..end]);
            if !STATEMENTS.contains(&name.as_ref()) {
                into.insert(name.into_owned());
            }
            at = end;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn definitions_are_read_on_the_lines_given_only() {
        let text = b"def kept_one():\ndef not_read():\ndef kept_two():\n";
        let mut d = HashSet::default();
        definitions(text, &[1..2, 3..9], &mut d);
        let mut names: Vec<&str> = d.iter().map(String::as_str).collect();
        names.sort_unstable();
        assert_eq!(names, ["kept_one", "kept_two"]);
    }

    #[test]
    fn definitions_in_every_language() {
        let mut d = HashSet::default();
        let text = b"def load(x):\nfunc (r *Router) Handle() {\nfn parse_it() {}\nres.sendfile = function (p) {\nconst toJson = (x) => 1\npublic static int Add(int a) {\nclass Calc:\n";
        definitions(text, &[1..3, 3..8], &mut d);
        let mut names: Vec<&str> = d.iter().map(String::as_str).collect();
        names.sort_unstable();
        assert_eq!(
            names,
            [
                "Add", "Calc", "Handle", "load", "parse_it", "sendfile", "toJson"
            ]
        );
    }

    #[test]
    fn a_definition_inside_another_is_found_too() {
        let mut d = HashSet::default();
        let text = b"exports.load = function loadAll(x) {\n  public get(key: string) {\n";
        definitions(text, &[1..2, 2..3], &mut d);
        let mut names: Vec<&str> = d.iter().map(String::as_str).collect();
        names.sort_unstable();
        assert_eq!(names, ["get", "load", "loadAll"]);
    }

    #[test]
    fn deprecated_aliases_and_class_methods_are_definitions() {
        let mut d = HashSet::default();
        let text = b"req.acceptsLanguage = deprecate.function(req.acceptsLanguages,\n  'use acceptsLanguages');\nexports.flatten = util.deprecate(flatten, 'x');\nclass Runtime {\n  hasCjsFactory(moduleID: string): boolean {\n    if (this.ready) {\n    for (const x of xs) {\n    while (going()) {\n    } catch (e) {\n  }\n  private async load<T>(id: string) {\n}\nreq.count = 0;\nreq.get = getter(x);\n";
        definitions(text, &[1..10, 10..20], &mut d);
        let mut names: Vec<&str> = d.iter().map(String::as_str).collect();
        names.sort_unstable();
        assert_eq!(
            names,
            [
                "Runtime",
                "acceptsLanguage",
                "flatten",
                "hasCjsFactory",
                "load"
            ]
        );
    }
}
