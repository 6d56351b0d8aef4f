//! The test model: which tests one version of a test file defines, and what each of them checks.
//!
//! For each version of a test file (base and head), [`parse`] finds the test cases (a qualified
//! name, the definition line, a key of the body), the helpers (functions that are not tests but
//! hold assertions), and inside each the *checks*: assertions with their family
//! (`assertEqual`, `expect.toBe`, `assert_eq`, …), their sense (a `Not`, `!=`, `not_to` or
//! `refute` flips it), their operands and whether they are vacuous (`assert True`,
//! `expect(true).toBe(true)`); the data rows of parametrized and table tests; and `try` blocks
//! whose handler swallows an assertion's failure.
//!
//! It reads the lexer's masked text (comments and string contents blanked) for structure, so
//! nothing in a comment or a string is ever taken for a test or an assertion, and a second view
//! with only comments blanked for the values (`"abc"` is an operand, `# was 4` is not). It is a
//! structural reading, not a parser: one linear pass per pattern, brackets matched on the masked
//! text, indentation for Python and Ruby. Where the code is unusual it finds less, never panics.
//!
//! The rules that judge a change (`test-weakened`, `expectation-changed`, `test-deleted`) compare
//! two versions through [`compare`]; none of them parses anything itself.

mod brace;
mod branches;
mod bypass;
mod checks;
pub(crate) mod compare;
mod dead;
mod indent;
pub(crate) mod likeness;
mod loops;
pub(crate) mod strength;
pub(crate) mod subject;
mod text;
pub(crate) mod tolerance;

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::hash::{DefaultHasher, Hash, Hasher};

use super::lang::Language;
use super::lexer::Lexed;
pub(crate) use text::{Source, word_at};

/// What one version of a test file holds.
#[derive(Debug, Default)]
pub(crate) struct TestFile {
    pub cases: Vec<TestCase>,
    /// Functions that are not tests but assert: a test that calls one still checks.
    pub helpers: Vec<Helper>,
    /// In how many of the file's tests each word appears, every test counted, read or not:
    /// which words tell one test from another. From [`parse_change`], only the head's, and
    /// only where the base has a test the head may lack (empty otherwise: nothing reads it).
    pub rarity: likeness::Rarity,
}

impl TestFile {
    /// What each asserting helper checks, by name: what a call to it weighs in a test
    /// ([`compare::weight`]).
    pub(crate) fn helper_weights(&self) -> HashMap<String, usize> {
        self.helpers
            .iter()
            .map(|h| (h.name.clone(), h.weight))
            .collect()
    }
}

#[derive(Debug)]
pub(crate) struct TestCase {
    /// Qualified by its classes or `describe` blocks: `TestCalc::test_add`, `calc > adds`.
    pub name: String,
    /// The last part of the name, which survives a move to another class or file.
    pub simple: String,
    /// The definition line (1-based).
    pub line: u32,
    /// The body's code, white space removed, hashed; `None` for an empty body. The same body
    /// under another name is the same test renamed.
    pub body_key: Option<u64>,
    /// The words of its body, hashed and sorted (see [`Source::words`]): a test renamed and
    /// edited is told by the words it kept.
    pub words: Vec<u64>,
    pub checks: Vec<Check>,
    pub rows: Vec<Row>,
    /// It has a table whose rows the model cannot count (made by a call, a comprehension).
    pub rows_unread: bool,
    /// The conditions its checks state in one run: their sum, but for exclusive branches,
    /// which weigh what the heaviest of them does.
    pub check_weight: usize,
    pub swallows: Vec<Swallow>,
    /// Names the body calls outside its checks, for helpers that assert.
    pub calls: Vec<String>,
    /// The names it runs under, one per row, when it is written once in a loop over rows and
    /// named by a template (JavaScript): `denies ${name}` is `denies a`, `denies b`.
    pub instances: Vec<String>,
}

#[derive(Debug)]
pub(crate) struct Helper {
    pub name: String,
    pub checks: Vec<Check>,
    /// Names it calls outside its checks: the helpers it hands its work to.
    pub calls: Vec<String>,
    /// What a call to it checks: its own checks and those of the same file's helpers it calls,
    /// [`HELPER_DEPTH`] calls deep. A test whose body moved into `testX(t)`, which runs it
    /// through `runX(t)`, still checks what `runX` does.
    pub weight: usize,
    /// Go: the subtests it runs by a literal name (`t.Run("name", …)`).
    pub subtests: Vec<String>,
    /// Its name appears in its file beyond its definition: something here calls it or hands
    /// it on. A test renamed out of the runner's reach (`_test_x`, `xTestX`) is not.
    pub referenced: bool,
}

/// How many calls deep a test's helpers are followed: far enough for the helper of a helper of
/// a wrapper, and a bound on recursion.
pub(crate) const HELPER_DEPTH: usize = 3;

/// One assertion.
#[derive(Debug, Clone)]
pub(crate) struct Check {
    pub line: u32,
    /// Its whole text, white space and quote style normalised, hashed.
    pub key: u64,
    /// The assertion's name with its sense taken out: `assertNotEqual` is `assertEqual`, negated.
    pub family: String,
    pub negated: bool,
    /// The operands, normalised (white space dropped, one quote style), messages left out.
    pub operands: Vec<String>,
    /// The assertion as a reviewer reads it, on one line, shortened.
    pub shown: String,
    /// It cannot fail: `assert True`, `… or True`, `expect(true).toBe(true)`, `assert_eq!(1, 1)`.
    pub vacuous: bool,
    /// How many checks it stands for, which is what a test's weight counts. Mostly 1; 2 for an
    /// expectation that something raises which also says what the error must be
    /// (`pytest.raises(E, match=…)`), since that stands for the raise and the assertion on the
    /// caught error that it replaces; PHPUnit's `expectExceptionObject(new E('m', 3))` sets the
    /// class, message and code expectations that three calls set otherwise; and a mock set up
    /// without an expected call count (a stub: Mockery's `allows`, `shouldReceive` without
    /// `once()`/`times(n)`, PHPUnit's `expects($this->any())`) is read so that its name counts
    /// for nothing.
    pub weight: usize,
}

/// One row of a parametrized or table-driven test: `(2, 3, 5)`, `{"add", 2, 3, 5}`.
#[derive(Debug, Clone)]
pub(crate) struct Row {
    pub line: u32,
    pub key: u64,
    pub fields: Vec<String>,
    /// The marks put on the row (pytest's `marks=…`), normalised; empty for none.
    pub marks: String,
    /// The guard in the test's body that passes over the row (`if tt.name == "a" { continue
    /// }`), as shown: the row runs no check.
    pub bypassed: Option<String>,
}

impl Row {
    /// The row is marked to be skipped whatever happens (`pytest.mark.skip`, not `skipif`): it
    /// never runs, so it checks nothing.
    /// So is a row its test's body passes over.
    pub fn skipped(&self) -> bool {
        self.bypassed.is_some()
            || self.marks.match_indices("mark.skip").any(|(i, w)| {
                !self.marks[i + w.len()..]
                    .starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
            })
    }
}

/// A `try` around an assertion whose handler lets its failure go.
#[derive(Debug, Clone)]
pub(crate) struct Swallow {
    /// The `except`/`catch`/`rescue` line.
    pub line: u32,
    pub key: u64,
}

/// The languages the test model reads.
pub(crate) fn reads(lang: Language) -> bool {
    matches!(
        lang,
        Language::Python
            | Language::JavaScript
            | Language::Go
            | Language::Rust
            | Language::Java
            | Language::CSharp
            | Language::Ruby
            | Language::Php
    )
}

/// Whether a file of `lang` may hold tests: a test file, or (Rust) any file with a `#[test]`,
/// since Rust keeps unit tests beside the code.
pub(crate) fn may_hold_tests(lang: Language, is_test: bool, raw: &[u8]) -> bool {
    if !reads(lang) {
        return false;
    }
    if is_test {
        return true;
    }
    lang == Language::Rust && memchr::memmem::find(raw, b"test]").is_some()
}

/// The tests of one version of a file, every one read in full.
#[cfg(test)]
pub(crate) fn parse(lang: Language, raw: &[u8]) -> TestFile {
    let lexed = Lexed::new(lang, raw, true);
    let src = Source::of(&lexed);
    let units = units(lang, &src);
    let mut file = build(lang, &src, units, |u| src.words(u.body.clone()));
    file.rarity = likeness::Rarity::of_words(file.cases.iter().map(|c| c.words.as_slice()));
    file
}

/// Every test and helper of one version, found but not read: where each starts and ends, for a
/// rule that places something (a skip marker) on the test it belongs to. Empty for a language the
/// test model does not read.
pub(crate) fn outline(lexed: &Lexed<'_>) -> Vec<Unit> {
    if !reads(lexed.lang()) {
        return Vec::new();
    }
    units(lexed.lang(), &Source::of(lexed))
}

fn units(lang: Language, src: &Source<'_>) -> Vec<Unit> {
    match lang {
        Language::Python | Language::Ruby => indent::units(lang, src),
        _ => brace::units(lang, src),
    }
}

/// The tests of both versions of a changed file. Every test is found on both sides, but only
/// the ones the change can have affected are read in full: a test whose lines the change did not
/// touch on either side is the same test at the base and the head, and nothing a rule asks of it
/// can differ. So are the helpers that the change touches or that a touched test calls. Most of
/// a large test file is never read beyond its test names.
pub(crate) fn parse_change(
    lang: Language,
    old: Option<&Lexed<'_>>,
    new: Option<&Lexed<'_>>,
    removed: &[std::ops::Range<u32>],
    added: &[std::ops::Range<u32>],
) -> (TestFile, TestFile) {
    let base = old.map(Source::of);
    let head = new.map(Source::of);
    let base_units = base.as_ref().map(|s| units(lang, s)).unwrap_or_default();
    let head_units = head.as_ref().map(|s| units(lang, s)).unwrap_or_default();
    let touches = |src: &Source<'_>, u: &Unit, lines: &[std::ops::Range<u32>]| {
        let (first, last) = (src.line_of(u.head.start), src.line_of(u.body.end));
        lines.iter().any(|r| r.start <= last && first < r.end)
    };
    let names = |units: &[Unit]| -> HashSet<String> {
        units
            .iter()
            .filter(|u| u.test)
            .map(|u| u.name.clone())
            .collect()
    };
    let (base_names, head_names) = (names(&base_units), names(&head_units));
    // The rarity of words is the head's, read only by the pairing of tests the change deleted
    // from this file ([`compare::diff`]): none is deleted unless some name has more tests at the
    // base than at the head, and the base's rarity is never read.
    fn counts(units: &[Unit]) -> HashMap<&str, usize> {
        let mut n: HashMap<&str, usize> = HashMap::default();
        for u in units.iter().filter(|u| u.test) {
            *n.entry(u.name.as_str()).or_default() += 1;
        }
        n
    }
    let head_counts = counts(&head_units);
    let may_delete = counts(&base_units)
        .iter()
        .any(|(name, n)| *n > head_counts.get(name).copied().unwrap_or(0));
    let mut touched: HashSet<String> = HashSet::default();
    for (src, units, lines) in [(&base, &base_units, removed), (&head, &head_units, added)] {
        if let Some(src) = src {
            touched.extend(
                units
                    .iter()
                    .filter(|u| u.test && touches(src, u, lines))
                    .map(|u| u.name.clone()),
            );
        }
    }
    let read = |src: &Option<Source<'_>>,
                units: Vec<Unit>,
                other: &HashSet<String>,
                lines,
                rarity: bool| {
        let Some(src) = src else {
            return TestFile::default();
        };
        let (mut tests, rest): (Vec<Unit>, Vec<Unit>) = units.into_iter().partition(|u| u.test);
        // Every test's words, for their rarity, when it is read; those read keep theirs.
        let mut words: HashMap<usize, Vec<u64>> = if rarity {
            tests
                .iter()
                .map(|u| (u.body.start, src.words(u.body.clone())))
                .collect()
        } else {
            HashMap::default()
        };
        let rarity = likeness::Rarity::of_words(words.values().map(Vec::as_slice));
        tests.retain(|u| touched.contains(&u.name) || !other.contains(&u.name));
        // Only when there are helpers to choose from: those the tests call, and the helpers
        // those call, a few calls deep.
        let mut called: HashSet<String> = if rest.is_empty() {
            HashSet::default()
        } else {
            tests
                .iter()
                .flat_map(|u| checks::calls(src, u.body.clone(), &[]))
                .collect()
        };
        let (mut picked, mut rest): (Vec<Unit>, Vec<Unit>) = rest
            .into_iter()
            .partition(|u| called.contains(&u.simple) || touches(src, u, lines));
        for _ in 0..HELPER_DEPTH {
            if rest.is_empty() {
                break;
            }
            let before = called.len();
            for u in &picked {
                called.extend(checks::calls(src, u.body.clone(), &[]));
            }
            if called.len() == before {
                break;
            }
            let (more, left): (Vec<Unit>, Vec<Unit>) =
                rest.into_iter().partition(|u| called.contains(&u.simple));
            picked.extend(more);
            rest = left;
        }
        tests.extend(picked);
        let mut file = build(lang, src, tests, |u| {
            words
                .remove(&u.body.start)
                .unwrap_or_else(|| src.words(u.body.clone()))
        });
        file.rarity = rarity;
        file
    };
    (
        read(&base, base_units, &head_names, removed, false),
        read(&head, head_units, &base_names, added, may_delete),
    )
}

/// A test or a helper, as the language readers find it, before its checks are read.
#[derive(Debug)]
pub(crate) struct Unit {
    pub test: bool,
    pub name: String,
    pub simple: String,
    pub line: u32,
    /// The body, as byte offsets.
    pub body: std::ops::Range<usize>,
    /// Where the unit's data rows are written (decorators, attributes, `.each(…)`), if apart
    /// from the body.
    pub head: std::ops::Range<usize>,
}

/// Reads the checks of `units`; each test's words come from `words`. The file's rarity of words
/// is left to the caller, who knows which tests it counts.
fn build(
    lang: Language,
    src: &Source<'_>,
    units: Vec<Unit>,
    mut words: impl FnMut(&Unit) -> Vec<u64>,
) -> TestFile {
    let all = checks::find(lang, src, units.iter().map(|u| u.body.clone()));
    let mut file = TestFile::default();
    // Each check belongs to the innermost unit around it (a subtest, a nested helper): of the
    // units that start before it, the last to start that still holds it.
    let mut order: Vec<usize> = (0..units.len()).collect();
    order.sort_by_key(|&i| (units[i].body.start, std::cmp::Reverse(units[i].body.end)));
    let owner = |at: usize| {
        let before = order.partition_point(|&i| units[i].body.start <= at);
        order[..before]
            .iter()
            .rev()
            .find(|&&i| units[i].body.contains(&at))
            .copied()
    };
    let mut owned: Vec<Vec<Check>> = vec![Vec::new(); units.len()];
    let mut spans: Vec<Vec<std::ops::Range<usize>>> = vec![Vec::new(); units.len()];
    for (check, span) in all {
        if let Some(i) = owner(span.start) {
            owned[i].push(check);
            spans[i].push(span);
        }
    }
    let mut helpers: Vec<Helper> = Vec::new();
    let mut tests = Vec::new();
    for ((unit, mut checks), spans) in units.iter().zip(owned).zip(spans) {
        if unit.test {
            tests.push((unit, checks, spans));
            continue;
        }
        checks.retain(|c| !checks::is_failure_call(&c.family));
        helpers.push(Helper {
            name: unit.simple.clone(),
            calls: checks::calls(src, unit.body.clone(), &spans),
            // What its checks stand for: a function that only sets up stubs checks nothing.
            weight: checks.iter().map(|c| c.weight).sum(),
            subtests: if lang == Language::Go {
                brace::go_subtests(src, unit.body.clone())
                    .into_iter()
                    .map(|(name, ..)| name)
                    .collect()
            } else {
                Vec::new()
            },
            referenced: mentions(src.masked, unit.simple.as_bytes()) > 1,
            checks,
        });
    }
    // A helper weighs what the helpers it calls check too; one that checks nothing, itself or
    // through them, is no helper.
    let own: HashMap<&str, (usize, &[String])> = helpers
        .iter()
        .map(|h| (h.name.as_str(), (h.weight, h.calls.as_slice())))
        .collect();
    let weights: Vec<usize> = helpers
        .iter()
        .map(|h| reach_weight(&own, &h.name, HELPER_DEPTH))
        .collect();
    for (mut h, w) in helpers.into_iter().zip(weights) {
        if w > 0 {
            h.weight = w;
            file.helpers.push(h);
        }
    }
    let helper_weights = file.helper_weights();
    for (unit, mut checks, spans) in tests {
        checks::self_compared(src, unit.body.clone(), &mut checks, &spans);
        if lang == Language::CSharp {
            checks::recorded_exceptions(src, unit.body.clone(), &mut checks);
        }
        // Assertions that never run (after a `return`, in `if False:`) check nothing.
        let dead = dead::ranges(src, unit.body.clone());
        if !dead.is_empty() {
            let mut k = 0..;
            // An `if <failure> { t.Error(…) }` check spans its condition: its block dead
            // (`if false && got != 170 { … }`) is the check dead.
            let live: Vec<bool> = spans
                .iter()
                .map(|s| {
                    !dead
                        .iter()
                        .any(|d| d.contains(&s.start) || (s.start <= d.start && d.end == s.end))
                })
                .collect();
            checks.retain(|_| k.next().is_some_and(|i| live[i]));
        }
        // A call read as an assertion by its name (`assert_sku(parsed, "TS")`) that is a helper
        // of this file checks what the helper does: assertions extracted into it are not lost.
        for c in &mut checks {
            if let Some(&w) = helper_weights.get(c.family.as_str()) {
                c.weight = w;
            }
        }
        let body_key = src.body_key(unit.body.clone());
        let mut attributes = checks::attribute_checks(lang, src, unit.head.clone());
        if !attributes.is_empty() {
            attributes.append(&mut checks);
            checks = attributes;
        }
        let (mut rows, rows_unread) = checks::rows(lang, src, unit);
        if !rows.is_empty() {
            for guard in bypass::guards(src, unit.body.clone()) {
                for row in rows.iter_mut().filter(|r| r.bypassed.is_none()) {
                    if row
                        .fields
                        .iter()
                        .any(|f| guard.values.iter().any(|v| bypass::holds(f, v)))
                    {
                        row.bypassed = Some(guard.shown.clone());
                    }
                }
            }
        }
        let lines: Vec<(u32, usize)> = checks.iter().map(|c| (c.line, c.weight)).collect();
        let check_weight = branches::run_weight(lang, src, unit.body.clone(), &lines);
        file.cases.push(TestCase {
            name: unit.name.clone(),
            simple: unit.simple.clone(),
            line: unit.line,
            body_key,
            words: words(unit),
            rows,
            rows_unread,
            check_weight,
            swallows: checks::swallows(lang, src, unit.body.clone(), &spans),
            calls: checks::calls(
                src,
                unit.body.clone(),
                &without_subtests(&units, unit, spans),
            ),
            instances: if lang == Language::JavaScript {
                loops::instances(src, unit)
            } else {
                Vec::new()
            },
            checks,
        });
    }
    file
}

/// How often the word `name` stands in `m`, up to two.
fn mentions(m: &[u8], name: &[u8]) -> usize {
    if name.is_empty() {
        return 0;
    }
    memchr::memmem::find_iter(m, name)
        .filter(|&at| text::word_at(m, at, name))
        .take(2)
        .count()
}

/// The spans a test's own calls leave out: its checks, and the tests nested in it (a Go
/// subtest), whose calls are theirs.
fn without_subtests(
    units: &[Unit],
    unit: &Unit,
    mut spans: Vec<std::ops::Range<usize>>,
) -> Vec<std::ops::Range<usize>> {
    spans.extend(
        units
            .iter()
            .filter(|u| {
                u.test
                    && u.body != unit.body
                    && unit.body.start <= u.body.start
                    && u.body.end <= unit.body.end
            })
            .map(|u| u.body.clone()),
    );
    spans
}

/// The checks of helper `name` and of the helpers it calls, `depth` calls deep; a call to a
/// function of no helper here that checks by its name (`teststorage.RequireEqual(t, …)`) counts
/// as one, as it does in a test ([`compare::weight`]).
fn reach_weight(own: &HashMap<&str, (usize, &[String])>, name: &str, depth: usize) -> usize {
    let Some(&(checks, calls)) = own.get(name) else {
        return 0;
    };
    if depth == 0 {
        return checks;
    }
    checks
        + calls
            .iter()
            .filter(|c| c.as_str() != name)
            .map(|c| match own.contains_key(c.as_str()) {
                true => reach_weight(own, c, depth - 1),
                false => usize::from(compare::checks_by_name(c)),
            })
            .sum::<usize>()
}

/// A hash of normalised text.
pub(crate) fn hash(s: &str) -> u64 {
    let mut h = DefaultHasher::new();
    s.hash(&mut h);
    h.finish()
}

/// A hash of normalised bytes.
pub(crate) fn hash_bytes(b: &[u8]) -> u64 {
    let mut h = DefaultHasher::new();
    h.write(b);
    h.finish()
}

/// Whether a normalised operand is a literal: a number, a string, `true`/`None`/`nil`/…, or a
/// list, tuple, map or set made only of literals.
pub(crate) fn is_literal(op: &str) -> bool {
    let s = op.trim();
    if s.is_empty() {
        return false;
    }
    if matches!(
        s,
        "True"
            | "False"
            | "None"
            | "true"
            | "false"
            | "null"
            | "nil"
            | "undefined"
            | "NaN"
            | "Infinity"
            | "NotImplemented"
    ) {
        return true;
    }
    let b = s.as_bytes();
    // A string, with any prefix (r, b, f, u, @, $).
    let body = s.trim_start_matches(['r', 'b', 'f', 'u', 'R', 'B', 'F', 'U', '@', '$']);
    if body.starts_with('"') && body.ends_with('"') && body.len() >= 2 {
        return !body[1..body.len() - 1].contains('"') || is_one_string(body);
    }
    // A template literal without a placeholder: its `"` are characters (an inline snapshot).
    if body.starts_with('`') && body.ends_with('`') && body.len() >= 2 && !body.contains("${") {
        return !body[1..body.len() - 1].contains('`');
    }
    // A number: sign, digits, `.`, `_`, exponent, hex, a type suffix (`5u32`, `1L`, `2.0f`).
    let num = s.trim_start_matches(['-', '+']);
    if num.as_bytes().first().is_some_and(u8::is_ascii_digit)
        && num
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || c == b'.' || c == b'_')
    {
        return true;
    }
    // A collection of literals.
    let (open, close) = (b[0], b[b.len() - 1]);
    let inner = match (open, close) {
        (b'[', b']') | (b'(', b')') | (b'{', b'}') => &s[1..s.len() - 1],
        _ => {
            // `vec![…]`, `List.of(…)`, `new[] {…}`, `array(…)`, `Some(5)`.
            let Some(i) = s.find(['[', '(', '{']) else {
                return false;
            };
            let ctor = &s[..i];
            let known = [
                "vec!",
                "List.of",
                "Set.of",
                "Map.of",
                "Arrays.asList",
                "listOf",
                "setOf",
                "mapOf",
                "arrayOf",
                "array",
                "Some",
                "Ok",
                "Err",
                "new[]",
                "[]int",
                "[]string",
                "[]float64",
                "[]byte",
                "map[string]int",
                "map[string]string",
            ];
            if !known.contains(&ctor) {
                return false;
            }
            let rest = &s[i..];
            return is_literal(rest);
        }
    };
    if inner.is_empty() {
        return true;
    }
    text::split_top(inner.as_bytes(), b',')
        .into_iter()
        .map(|r| &inner[r])
        .filter(|f| !f.trim().is_empty())
        .all(|f| match text::split_pair(f) {
            Some((k, v)) => is_literal(k) && is_literal(v),
            None => is_literal(f),
        })
}

/// `"a" "b"`-free: a string literal whose inner quotes are all escaped.
fn is_one_string(s: &str) -> bool {
    let inner = &s.as_bytes()[1..s.len() - 1];
    let mut escaped = false;
    for &c in inner {
        match c {
            b'\\' if !escaped => escaped = true,
            b'"' if !escaped => return false,
            _ => escaped = false,
        }
    }
    true
}

/// A literal that is true in a condition: `True`, `1`, a non-empty string.
pub(crate) fn is_truthy_literal(op: &str) -> bool {
    let s = op.trim();
    match s {
        "True" | "true" | "!false" | "!0" | "!!1" | "not False" | "not None" => true,
        _ => {
            is_literal(s)
                && !matches!(
                    s,
                    "False" | "false" | "None" | "null" | "nil" | "undefined" | "NaN" | "\"\""
                )
                && s.trim_start_matches(['-', '+'])
                    .trim_start_matches(['0', '.'])
                    .bytes()
                    .next()
                    .is_some()
                && !s.starts_with('[')
                && !s.starts_with('{')
                && !s.starts_with('(')
        }
    }
}

#[cfg(test)]
mod tests;
