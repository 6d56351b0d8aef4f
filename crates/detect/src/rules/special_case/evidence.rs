//! The tests' side: which test of the head tree uses a candidate's inputs, read only when a
//! candidate exists and stopping at the first that does.

use std::collections::{HashMap, HashSet};

use regex::bytes::{Regex, RegexBuilder};

use super::branches::rust_tests_start;
use super::literal::{Lit, literal, number, shown_lit};
use super::{Candidate, KIND, MAX_TEST_BYTES, WINDOW, lines_of};
use crate::change::RepoPath;
use crate::flag::{Flag, Rule};
use crate::lang::{Language, PerLanguage};
use crate::rules::Changed;
use crate::rules::FileRules;
use crate::rules::tokens::{Kind, Tokens};
use crate::{MAX_TEXT_SIZE, paths};

/// The literals of one test file, by line, and its lines for naming the test.
pub(super) struct TestFile<'a> {
    path: &'a RepoPath,
    raw: &'a [u8],
    lang: Language,
    /// In line order.
    lits: Vec<(u32, Lit)>,
    /// Where its tests begin (0-based): a Rust file's `#[cfg(test)]` module, else its start.
    /// A test is named from there down, never from the production code above.
    first_line: usize,
}

impl<'a> TestFile<'a> {
    /// `rust_inline`: a Rust source file whose tests follow its `#[cfg(test)]`; `seqs`: read
    /// bracketed collections too (some candidate compares or answers one).
    /// `bools`: read the words that expect a yes or a no too (`assertFalse`, `not`, `true`).
    fn new(
        path: &'a RepoPath,
        lang: Language,
        raw: &'a [u8],
        rust_inline: bool,
        seqs: bool,
        bools: bool,
    ) -> TestFile<'a> {
        let t = Tokens::new(lang, raw);
        let from = if rust_inline { rust_tests_start(&t) } else { 0 };
        let first_line = if from < t.len() {
            (t.line(from) as usize).saturating_sub(1)
        } else {
            0
        };
        let mut lits = Vec::new();
        for i in from.min(t.len())..t.len() {
            let lit = match t.kind(i) {
                Some(Kind::Str) if t.toks[i].plain => Lit::Str(t.content(i).to_vec()),
                Some(Kind::Num) => {
                    // `-17` is negative after an operator or an opening, not after an operand.
                    let negative = i >= 1
                        && t.is(i - 1, "-")
                        && (i < 2
                            || !(matches!(
                                t.kind(i - 2),
                                Some(Kind::Ident | Kind::Num | Kind::Str)
                            ) || [")", "]", "}"].iter().any(|w| t.is(i - 2, w))));
                    number(t.text(i), negative)
                }
                Some(Kind::Ident) if bools => match expects_bool(t.text(i)) {
                    Some(v) => Lit::Bool(v),
                    None => continue,
                },
                Some(Kind::Punct) if seqs && t.opener(i) => {
                    match t.pair(i).and_then(|c| literal(&t, i, c + 1)) {
                        Some(seq @ Lit::Seq(_)) => seq,
                        _ => continue,
                    }
                }
                _ => continue,
            };
            lits.push((t.line(i), lit));
        }
        TestFile {
            path,
            raw,
            lang,
            lits,
            first_line,
        }
    }

    /// The literals within [`WINDOW`] lines of `line`.
    fn near(&self, line: u32) -> &[(u32, Lit)] {
        let from = self.lits.partition_point(|(l, _)| *l + WINDOW < line);
        let to = self.lits.partition_point(|(l, _)| *l <= line + WINDOW);
        &self.lits[from..to.max(from)]
    }

    /// The line of a test using every literal of `need` (and expecting the constant, when it
    /// must) within [`WINDOW`] lines; `None` where there is none.
    fn uses(&self, need: &Need, constant: &Lit) -> Option<u32> {
        let first = need.alt.first()?;
        for (line, lit) in &self.lits {
            if lit != first {
                continue;
            }
            let near = self.near(*line);
            let others = need.alt[1..]
                .iter()
                .all(|want| near.iter().any(|(_, x)| x == want));
            let expects = !need.need_constant
                || match constant {
                    // A yes or a no is expected on the input's own line or one beside it.
                    Lit::Bool(_) => near
                        .iter()
                        .any(|(l, x)| l.abs_diff(*line) <= 1 && x == constant),
                    _ => near.iter().any(|(_, x)| constant.expected_by(x)),
                };
            if others && expects {
                return Some(*line);
            }
        }
        None
    }

    /// `path::test_name` for the test around `line`, or the path alone.
    fn name_at(&self, line: u32) -> String {
        let lines = lines_of(self.raw);
        let path = self.path.to_string();
        let at = |l: usize| {
            lines
                .get(l)
                .map(|s| String::from_utf8_lossy(s))
                .unwrap_or_default()
        };
        let hit = (line as usize)
            .saturating_sub(1)
            .min(lines.len().saturating_sub(1));
        for l in (hit.saturating_sub(400).max(self.first_line.min(hit))..=hit).rev() {
            let text = at(l);
            if let Some(name) = test_name(self.lang, &text) {
                return format!("{path}::{name}");
            }
            // A decorator or an attribute holds the data: the test is the function below it.
            let trimmed = text.trim_start();
            if trimmed.starts_with('@') || trimmed.starts_with('[') {
                break;
            }
        }
        for l in hit..lines.len().min(hit + 40) {
            if let Some(name) = test_name(self.lang, &at(l)) {
                return format!("{path}::{name}");
            }
        }
        path
    }
}

/// The answer a test expects by this word, where it says one: `false`, `not`, `assertFalse`,
/// `toBeFalsy`, C#'s `Assert.False`; `true`, `assertTrue`, `toBeTruthy`.
fn expects_bool(word: &[u8]) -> Option<bool> {
    match word {
        b"false" | b"False" | b"FALSE" | b"not" | b"assertFalse" | b"toBeFalsy" | b"isFalse"
        | b"IsFalse" | b"refute" | b"be_falsey" | b"EXPECT_FALSE" | b"ASSERT_FALSE"
        | b"XCTAssertFalse" => Some(false),
        b"true" | b"True" | b"TRUE" | b"assertTrue" | b"toBeTruthy" | b"isTrue" | b"IsTrue"
        | b"be_truthy" | b"EXPECT_TRUE" | b"ASSERT_TRUE" | b"XCTAssertTrue" => Some(true),
        _ => None,
    }
}

/// The name of a test defined on this line.
pub(super) fn test_name(lang: Language, line: &str) -> Option<String> {
    // Each language's pattern is compiled when a change first has its files (Unicode classes
    // make these the costliest of the detector's patterns to build).
    static PATTERNS: PerLanguage<regex::Regex> = PerLanguage::new(|lang| {
        let pattern = match lang {
            Language::Python => r"^\s*(?:async\s+)?def\s+(\w+)",
            Language::Go => r"^func\s+(?:\([^)]*\)\s*)?(\w+)\s*\(",
            Language::Rust => r"^\s*(?:pub\s+)?(?:async\s+)?fn\s+(\w+)",
            Language::JavaScript => r#"\b(?:it|test|specify)(?:\.\w+)*\s*\(\s*['"`]([^'"`]+)['"`]"#,
            Language::Ruby => {
                r#"^\s*(?:it|specify|test|scenario|example)\s*\(?\s*['"]([^'"]+)['"]|^\s*def\s+(test_\w+)"#
            }
            Language::Java => r"\b(?:void|fun)\s+`?([\w ]+?)`?\s*\(",
            Language::CSharp => r"\b(?:void|Task)\s+(\w+)\s*\(",
            Language::Php => r"\bfunction\s+(\w+)\s*\(",
            Language::Swift => r"\bfunc\s+(\w+)\s*\(",
            Language::Cpp => r"\bTEST(?:_F|_P)?\s*\(\s*(\w+\s*,\s*\w+)",
            Language::Elixir => r#"^\s*test\s+"([^"]+)""#,
        };
        regex::Regex::new(pattern).expect("the rule's patterns are valid (tested)")
    });
    let re = PATTERNS.get(lang);
    let caps = re.captures(line)?;
    let name = caps.iter().skip(1).flatten().next()?.as_str().trim();
    (!name.is_empty()).then(|| name.to_owned())
}

/// What a candidate needs of a test, for one of its alternatives.
pub(super) struct Need {
    /// The distinctive literals, all of which a test must use within a few lines.
    alt: Vec<Lit>,
    /// The test must also expect the constant there.
    need_constant: bool,
    /// The literal bytes a test file must contain, as patterns (a quick filter).
    needles: Vec<Regex>,
}

pub(super) fn needs(c: &Candidate) -> Vec<Need> {
    let mut out = Vec::new();
    for alt in &c.alternatives {
        let mut unique: Vec<&Lit> = Vec::new();
        for l in alt {
            if !unique.contains(&l) {
                unique.push(l);
            }
        }
        let unmistakable = alt.iter().any(Lit::unmistakable);
        let strong = unmistakable || unique.len() >= 2;
        let matchable = c.constant.matchable();
        let need_constant = if c.table {
            // In a lookup table, only unmistakable test data counts.
            if !unmistakable {
                continue;
            }
            matchable
        } else if matchable {
            !strong
        } else if strong {
            false
        } else if matches!(c.constant, Lit::Bool(_)) && alt.iter().all(Lit::datum) {
            // `if n == 49: return False`: a yes or a no for a datum, which the test must
            // expect beside it.
            true
        } else {
            continue;
        };
        let needles = alt
            .iter()
            .filter_map(Lit::needle)
            .filter(|n| !n.is_empty())
            .map(|n| literal_pattern(&n))
            .collect();
        out.push(Need {
            alt: alt.clone(),
            need_constant,
            needles,
        });
    }
    out
}

/// A pattern matching exactly these bytes.
pub(super) fn literal_pattern(bytes: &[u8]) -> Regex {
    let mut pattern = String::with_capacity(bytes.len() * 4);
    for &b in bytes {
        if b.is_ascii_alphanumeric() {
            pattern.push(b as char);
        } else {
            pattern.push_str(&format!("\\x{b:02X}"));
        }
    }
    RegexBuilder::new(&pattern)
        .unicode(false)
        .build()
        .expect("escaped bytes are a valid pattern")
}

/// The test files of the head tree, changed ones first; when a Rust candidate asks, Rust files
/// too (their tests follow `#[cfg(test)]`), marked `true`.
pub(super) fn test_files(
    files: &[Changed<'_>],
    ctx: &mut FileRules<'_>,
    rust: bool,
) -> Vec<(RepoPath, bool)> {
    let classifier = ctx.classifier;
    let wanted = |p: &RepoPath| -> Option<bool> {
        if classifier.is_ignored(p)
            || paths::is_doc(p)
            || p.dirs().any(|d| d == b"node_modules".as_slice())
        {
            return None;
        }
        let lang = Language::of(p)?;
        if classifier.is_test(p) {
            return Some(false);
        }
        (rust && lang == Language::Rust).then_some(true)
    };
    let mut out: Vec<(RepoPath, bool)> = Vec::new();
    let mut seen = HashSet::new();
    for a in files {
        if let Some(p) = &a.change.new_path
            && wanted(p) == Some(false)
            && seen.insert(p.clone())
        {
            out.push((p.clone(), false));
        }
    }
    let rest: Vec<(RepoPath, bool)> = ctx
        .head_files()
        .iter()
        .filter(|p| !seen.contains(*p))
        .filter_map(|p| wanted(p).map(|inline| (p.clone(), inline)))
        .collect();
    out.extend(rest);
    out
}

/// Judges the candidates of every file against the head tree's tests, with the flag's inline
/// allow. Reads nothing when there is no candidate (after moves across files are excused), and
/// stops at the first test that uses each candidate's inputs.
pub(crate) fn check(
    candidates: &[Candidate],
    files: &[Changed<'_>],
    lost: &mut HashMap<(&str, u64), usize>,
    ctx: &mut FileRules<'_>,
) -> Vec<(Flag, Option<String>)> {
    let mut pending: Vec<(&Candidate, Vec<Need>)> = Vec::new();
    for c in candidates {
        if let Some(n) = lost.get_mut(&(KIND, c.key))
            && *n > 0
        {
            *n -= 1;
            continue;
        }
        let needs = needs(c);
        if !needs.is_empty() {
            pending.push((c, needs));
        }
    }
    if pending.is_empty() {
        return Vec::new();
    }
    let rust = pending.iter().any(|(c, _)| c.lang == Language::Rust);
    let seqs = pending.iter().any(|(c, needs)| {
        matches!(c.constant, Lit::Seq(_))
            || needs
                .iter()
                .any(|n| n.alt.iter().any(|l| matches!(l, Lit::Seq(_))))
    });
    let bools = pending.iter().any(|(c, needs)| {
        matches!(c.constant, Lit::Bool(_)) && needs.iter().any(|n| n.need_constant)
    });
    let files = test_files(files, ctx, rust);
    let mut found: Vec<Option<(String, usize)>> = vec![None; pending.len()];
    let mut read = 0usize;
    for (path, inline) in files {
        if found.iter().all(Option::is_some) {
            break;
        }
        if read > MAX_TEST_BYTES {
            ctx.warn(format!(
                "special-case: stopped looking for test inputs after {} MiB of test files",
                MAX_TEST_BYTES / (1024 * 1024)
            ));
            break;
        }
        let Some(lang) = Language::of(&path) else {
            continue;
        };
        let Some(content) = ctx.head.read(&path) else {
            continue;
        };
        if content.len() > MAX_TEXT_SIZE || content[..content.len().min(8000)].contains(&0) {
            continue;
        }
        read += content.len();
        let open: Vec<usize> = (0..pending.len())
            .filter(|&k| found[k].is_none())
            .filter(|&k| !inline || pending[k].0.lang == Language::Rust)
            .filter(|&k| {
                pending[k]
                    .1
                    .iter()
                    .any(|n| n.needles.iter().all(|re| re.is_match(&content)))
            })
            .collect();
        if open.is_empty() {
            continue;
        }
        let test = TestFile::new(&path, lang, &content, inline, seqs, bools);
        for k in open {
            let (c, needs) = &pending[k];
            if let Some((n, line)) = needs
                .iter()
                .enumerate()
                .find_map(|(n, need)| Some((n, test.uses(need, &c.constant)?)))
            {
                found[k] = Some((test.name_at(line), n));
            }
        }
    }
    let mut flags = Vec::new();
    for ((c, needs), test) in pending.into_iter().zip(found) {
        let Some((test, n)) = test else {
            continue;
        };
        let inputs = needs
            .get(n)
            .map(|n| n.alt.iter().map(shown_lit).collect::<Vec<_>>().join(", "))
            .unwrap_or_default();
        let message = format!(
            "newly returns `{}` when called with `{inputs}`, the inputs of `{test}`: the answer is hard-coded for the test, not computed",
            c.shown_constant
        );
        flags.push((
            Flag {
                rule: Rule::SpecialCase,
                severity: Rule::SpecialCase.severity(),
                path: c.path.clone(),
                line: Some(c.line),
                removed_line: None,
                message,
                snippet: c.snippet.clone(),
            },
            c.allowed.clone(),
        ));
    }
    flags
}
