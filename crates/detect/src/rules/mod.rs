//! The detector's rules, one file each, with their tests beside them, and the one interface
//! they share.
//!
//! Each rule's file declares its [`RuleInfo`]: its registry entry (id, default severity,
//! languages, summary, help) and the [`Pass`]es it runs, each with the files it reads
//! ([`Reads`]: one question, [`File`] → bool, and a cheap look at a version's bytes). [`RULES`]
//! lists every rule once, in the [`Rule`] enum's order; the engine in [`super`] loops over it and
//! names no rule. A pass runs
//! - on a file's two versions as bytes, by name ([`Pass::Whole`]: configuration, snapshots);
//! - on a file's code, both versions lexed ([`Pass::Code`]: markers judged per test, branches);
//! - on each version's masked lines ([`Pass::Lines`]), finding occurrences that the engine
//!   counts at the base and at the head: the surplus is what the change introduced;
//! - on the test model of both versions ([`Pass::Tests`], [`super::suite`]);
//! - across the whole change ([`Pass::Change`]), on what the file passes held for it, the pool
//!   of what the change's tests gained and the trees ([`FileRules`]).
//!
//! [`code`] holds what several line rules need to read code (block extents by indentation and by
//! braces, enclosing definitions); `tokens` is the expression-level reading `special_case`
//! needs. Neither is a rule, and no rule calls into another.

pub(crate) mod always_equal;
pub(crate) mod code;
pub(crate) mod expectation_changed;
pub(crate) mod failure_swallowed;
pub(crate) mod focused_test;
pub(crate) mod forced_exit;
pub(crate) mod outcome_patched;
mod outside;
pub(crate) mod runner_narrowed;
pub(crate) mod shadow_module;
pub(crate) mod skip_marker;
pub(crate) mod special_case;
pub(crate) mod stray_backup;
pub(crate) mod stubbed_import;
pub(crate) mod suppression;
pub(crate) mod test_deleted;
pub(crate) mod test_weakened;
pub(crate) mod tokens;
pub(crate) mod unit_mocked;

use std::any::Any;
use std::collections::HashMap;
use std::ops::Range;

use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};
use regex_automata::meta;
use regex_automata::nfa::thompson::WhichCaptures;
use regex_automata::util::syntax;

use super::change::RepoPath;
use super::flag::{Flag, Rule, Severity};
use super::lang::Language;
use super::lexer::Lexed;
use super::paths::Classifier;
use super::registry::Source;
use super::scan::{self, Occurrence, Role, Text};
use super::suite::{self, compare::FileDiff, compare::Pool};
use super::{Change, ChangeKind, Tree};

/// Every rule, in the [`Rule`] enum's order: the registry SARIF lists, `[check.rules]` names
/// and README's table follows, and the table the engine runs.
pub static RULES: &[RuleInfo] = &[
    skip_marker::RULE,
    stubbed_import::RULE,
    shadow_module::RULE,
    stray_backup::RULE,
    outside::CONFIG_EDIT,
    test_weakened::RULE,
    expectation_changed::RULE,
    test_deleted::RULE,
    focused_test::RULE,
    forced_exit::RULE,
    always_equal::RULE,
    outcome_patched::RULE,
    suppression::RULE,
    special_case::RULE,
    runner_narrowed::RULE,
    failure_swallowed::RULE,
    unit_mocked::RULE,
    outside::PROTECTED_TEST_CHANGED,
    outside::BASE_TESTS_FAIL,
    outside::TESTS_LOST,
    outside::TEST_REWRITTEN,
    outside::TESTS_VACUOUS,
];

impl Rule {
    /// Every rule, in the registry's order.
    pub fn all() -> impl Iterator<Item = Rule> {
        RULES.iter().map(|r| r.rule)
    }

    /// The rule's row in the registry.
    pub fn info(self) -> &'static RuleInfo {
        // The registry lists the rules in the enum's order (a unit test holds it to that).
        &RULES[self as usize]
    }

    /// Whether the detector raises it (`forgeward check`); the others are the bot's own.
    pub fn is_detector_rule(self) -> bool {
        self.info().source == Source::Detector
    }

    /// Whether it judges the tests or what runs them: on a worker's change (and an agent's pull
    /// request) such a rule is at least a warning, whatever the repository's `[check.rules]` say,
    /// since these are the signs of a test made to pass instead of code made to work. Lint
    /// suppressions, backups and the production-code rules keep the configured severity.
    pub fn judges_tests(self) -> bool {
        self.info().judges_tests
    }

    pub fn id(self) -> &'static str {
        self.info().id
    }

    /// One sentence for rule listings (SARIF rule metadata, line comments).
    pub fn description(self) -> &'static str {
        self.info().summary
    }

    /// The severity its flags have unless the repository says otherwise.
    pub fn severity(self) -> Severity {
        self.info().severity
    }
}

// ---- The interface ---------------------------------------------------------------------------

/// One rule, as users and reports see it, and what the detector runs for it.
#[derive(Debug)]
pub struct RuleInfo {
    pub rule: Rule,
    /// Stable: JSON, SARIF and configuration use it.
    pub id: &'static str,
    pub severity: Severity,
    pub source: Source,
    /// The languages or files it reads.
    pub languages: &'static str,
    /// One sentence.
    pub summary: &'static str,
    /// What it flags and why, and what it deliberately leaves alone.
    pub help: &'static str,
    /// Whether it judges the tests or what runs them (see [`Rule::judges_tests`]).
    pub judges_tests: bool,
    /// What the detector runs for it, in this order; none for a rule raised outside it.
    pub(crate) passes: &'static [Pass],
}

/// What a rule's file needs to declare its entry and its passes.
pub(crate) mod prelude {
    pub(crate) use super::{
        Across, Code, File, Finding, Found, Lines, Out, Pass, Reads, RuleInfo, Tests, Whole,
        may_hold_tests,
    };
    pub(crate) use crate::flag::{Flag, Rule, Severity};
    pub(crate) use crate::registry::Source;
}

/// What every pass is told of the file it may read, to answer [`Reads::applies`].
pub(crate) struct File<'a> {
    pub change: &'a Change,
    pub path: &'a RepoPath,
    /// By file name; `None` for a file no language reads (configuration, data, snapshots).
    pub lang: Option<Language>,
    pub role: Role,
}

/// Which files a pass reads: `applies` by what the path says, then `prefilter` on either
/// version's raw bytes (false when that version cannot hold anything the pass finds; both
/// versions are read as soon as either may, since newness is their difference).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Reads {
    pub applies: fn(&File<'_>) -> bool,
    pub prefilter: fn(&File<'_>, &[u8]) -> bool,
}

impl Reads {
    /// Every file the pass is offered, whatever its bytes.
    pub const ANY: Reads = Reads {
        applies: |_| true,
        prefilter: |_, _| true,
    };

    pub const fn new(
        applies: fn(&File<'_>) -> bool,
        prefilter: fn(&File<'_>, &[u8]) -> bool,
    ) -> Reads {
        Reads { applies, prefilter }
    }

    /// Whether the pass reads `file`, given its two versions' bytes.
    pub fn reads(&self, file: &File<'_>, old: Option<&[u8]>, new: Option<&[u8]>) -> bool {
        (self.applies)(file)
            && (old.is_some_and(|t| (self.prefilter)(file, t))
                || new.is_some_and(|t| (self.prefilter)(file, t)))
    }
}

/// A pass across the whole change: its flags, each with the reason of an inline allow.
pub(crate) type AcrossChange = fn(&mut Across<'_, '_>) -> Vec<(Flag, Option<String>)>;

/// One pass of a rule: what it reads, and when it runs.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Pass {
    /// A file's two versions as bytes, by name (configuration, stored snapshots), in any file
    /// the repository does not ignore. `prefilter` is not asked.
    Whole(Reads, fn(&Whole<'_>, &mut Out<'_>)),
    /// A file's code, both versions lexed: a file of a known language, not documentation.
    Code(Reads, fn(&Code<'_>, &mut Out<'_>)),
    /// Each version's masked lines: occurrences at the base and at the head, which the engine
    /// counts (the surplus on added lines is new; a kind lost here and gained elsewhere moved).
    Lines(Reads, fn(&Lines<'_, '_>, &mut Found)),
    /// The test model of both versions, compared test by test.
    Tests(Reads, fn(&Tests<'_, '_>, &mut Out<'_>)),
    /// The whole change, after every file: what the file passes held, judged together.
    Change(AcrossChange),
}

/// Both versions of a file as bytes (`None` where it does not exist, is binary or too large).
pub(crate) struct Whole<'a> {
    pub file: &'a File<'a>,
    pub old: Option<&'a [u8]>,
    pub new: Option<&'a [u8]>,
}

/// Both versions of a file of `lang`, lexed once for every reader.
pub(crate) struct Code<'a> {
    pub file: &'a File<'a>,
    pub lang: Language,
    pub old: Option<&'a Lexed<'a>>,
    pub new: Option<&'a Lexed<'a>>,
}

/// Both versions' masked, line-indexed text, shared by the line passes.
pub(crate) struct Lines<'a, 't> {
    pub file: &'a File<'a>,
    pub lang: Language,
    pub old: Option<&'a Text<'t>>,
    pub new: Option<&'a Text<'t>>,
}

impl Lines<'_, '_> {
    /// `scan` on each version where `prefilter` holds, into its side of `found`.
    pub fn each(
        &self,
        found: &mut Found,
        prefilter: impl Fn(Language, &[u8]) -> bool,
        mut scan: impl FnMut(&Text<'_>, &mut Vec<Occurrence>),
    ) {
        if let Some(t) = self.new.filter(|t| prefilter(self.lang, t.raw)) {
            scan(t, &mut found.head);
        }
        if let Some(t) = self.old.filter(|t| prefilter(self.lang, t.raw)) {
            scan(t, &mut found.base);
        }
    }
}

/// Occurrences in the head and in the base, counted by the engine.
#[derive(Debug, Default)]
pub(crate) struct Found {
    pub head: Vec<Occurrence>,
    pub base: Vec<Occurrence>,
}

/// The test model of both versions of a file, and their comparison.
pub(crate) struct Tests<'a, 'm> {
    pub file: &'a File<'a>,
    pub lang: Language,
    pub base: &'a suite::TestFile,
    pub head: &'a suite::TestFile,
    pub diff: &'a FileDiff<'m>,
    pub old: Option<&'a Lexed<'a>>,
}

/// What a file pass found: flags (new unless a twin the change lost elsewhere explains them),
/// occurrences for the engine to count, and what it holds for its rule's [`Pass::Change`].
pub(crate) struct Out<'a> {
    path: &'a RepoPath,
    new: Option<&'a [u8]>,
    pub findings: Vec<Finding>,
    pub found: Found,
    /// Occurrences this file lost, by kind and key: a move's other half.
    pub lost: Vec<(&'static str, u64)>,
    pub held: Vec<Box<dyn Any + Send>>,
    /// What this file's tests (or production code) gained, for the test model's rules.
    pub pool: Pool,
    /// What could not be read (a configuration file that does not parse).
    pub warnings: Vec<String>,
}

impl<'a> Out<'a> {
    pub fn new(path: &'a RepoPath, new: Option<&'a [u8]>) -> Out<'a> {
        Out {
            path,
            new,
            findings: Vec::new(),
            found: Found::default(),
            lost: Vec::new(),
            held: Vec::new(),
            pool: Pool::default(),
            warnings: Vec::new(),
        }
    }

    /// An occurrence's finding: its flag on the head's line, with the inline allow there (read
    /// from the new file: it is part of the change a reviewer sees).
    pub fn finding(&self, o: Occurrence) -> Finding {
        let flag = Flag {
            rule: o.rule,
            severity: o.severity.unwrap_or(o.rule.severity()),
            path: self.path.clone(),
            line: Some(o.line),
            removed_line: None,
            snippet: self.new.map(|text| scan::snippet(text, o.line)),
            message: o.message,
        };
        let allowed = self
            .new
            .and_then(|text| scan::inline_allow(text, o.line, o.rule));
        Finding {
            kind: o.kind,
            key: o.key,
            flag,
            allowed,
        }
    }

    /// A flag a whole-file reader raised, kept under `kind` and keyed by its message, with its
    /// inline allow.
    pub fn whole_file_finding(&self, flag: Flag, kind: &'static str) -> Finding {
        let allowed = match (self.new, flag.line) {
            (Some(text), Some(line)) => scan::inline_allow(text, line, flag.rule),
            _ => None,
        };
        let mut h = std::hash::DefaultHasher::new();
        std::hash::Hash::hash(&flag.message, &mut h);
        Finding {
            kind,
            key: std::hash::Hasher::finish(&h),
            flag,
            allowed,
        }
    }

    /// A flag on the test model's head line, with its snippet and inline allow.
    pub fn test_finding(&self, mut flag: Flag) -> Finding {
        let (snippet, allowed) = self.head_line(&flag);
        flag.snippet = snippet;
        Finding {
            kind: "test-model",
            key: 0,
            flag,
            allowed,
        }
    }

    /// A head-side flag's snippet and the inline allow on or above its line.
    pub fn head_line(&self, flag: &Flag) -> (Option<String>, Option<String>) {
        scan::head_line(self.new, flag)
    }

    /// Keeps `value` for the rule's [`Pass::Change`], which takes it back by its type.
    pub fn hold<T: Any + Send>(&mut self, value: T) {
        self.held.push(Box::new(value));
    }
}

/// A flag found in one file, and what the engine needs to tell whether it is new.
#[derive(Debug)]
pub(crate) struct Finding {
    pub kind: &'static str,
    pub key: u64,
    pub flag: Flag,
    /// The reason of an inline allow on or above the flagged line.
    pub allowed: Option<String>,
}

/// One changed file, as the whole-change passes see it.
pub(crate) struct Changed<'a> {
    pub change: &'a Change,
    /// Under an ignore of the repository: read by no file pass.
    pub ignored: bool,
}

/// What a [`Pass::Change`] is given: every changed file, what its rule's file passes held
/// (by file), the pool of what the change's tests gained, the occurrences the change lost
/// (after the line rules' moves were excused) and the trees.
pub(crate) struct Across<'a, 'b> {
    pub files: &'a [Changed<'a>],
    held: Vec<(usize, Box<dyn Any + Send>)>,
    pub pool: &'a mut Pool,
    pub lost: &'a mut HashMap<(&'static str, u64), usize>,
    pub trees: &'a mut FileRules<'b>,
}

impl<'a, 'b> Across<'a, 'b> {
    pub fn new(
        files: &'a [Changed<'a>],
        held: Vec<(usize, Box<dyn Any + Send>)>,
        pool: &'a mut Pool,
        lost: &'a mut HashMap<(&'static str, u64), usize>,
        trees: &'a mut FileRules<'b>,
    ) -> Self {
        Across {
            files,
            held,
            pool,
            lost,
            trees,
        }
    }

    /// A rule that reads only the change's file names and the trees (`check`: the changes
    /// the repository does not ignore): its flags, with no note.
    pub fn by_name(
        &mut self,
        check: fn(&[&Change], &mut FileRules<'b>) -> Vec<Flag>,
    ) -> Vec<(Flag, Option<String>)> {
        let changes: Vec<&Change> = self
            .files
            .iter()
            .filter(|f| !f.ignored)
            .map(|f| f.change)
            .collect();
        check(&changes, self.trees)
            .into_iter()
            .map(|f| (f, None))
            .collect()
    }

    /// What the rule's file passes held of type `T`, with the index of the file in
    /// [`Across::files`], in file order.
    pub fn take<T: Any>(&mut self) -> Vec<(usize, T)> {
        let (mine, rest): (Vec<_>, Vec<_>) = std::mem::take(&mut self.held)
            .into_iter()
            .partition(|(_, v)| v.is::<T>());
        self.held = rest;
        mine.into_iter()
            .filter_map(|(i, v)| v.downcast::<T>().ok().map(|v| (i, *v)))
            .collect()
    }
}

/// Whether a version may hold tests the model reads: the test rules' prefilter.
pub(crate) fn may_hold_tests(file: &File<'_>, raw: &[u8]) -> bool {
    file.lang
        .is_some_and(|lang| suite::may_hold_tests(lang, file.role.is_test, raw))
}

/// What the file rules may look up, with the whole-tree listings made once and only if needed.
pub(crate) struct FileRules<'a> {
    pub classifier: &'a Classifier,
    pub base: &'a dyn Tree,
    pub head: &'a dyn Tree,
    head_files: Option<Vec<RepoPath>>,
    base_by_name: Option<HashMap<Vec<u8>, Vec<RepoPath>>>,
    warnings: Vec<String>,
}

impl<'a> FileRules<'a> {
    pub fn new(classifier: &'a Classifier, base: &'a dyn Tree, head: &'a dyn Tree) -> Self {
        FileRules {
            classifier,
            base,
            head,
            head_files: None,
            base_by_name: None,
            warnings: Vec::new(),
        }
    }

    /// Every file of the head tree.
    pub fn head_files(&mut self) -> &[RepoPath] {
        self.head_files.get_or_insert_with(|| self.head.files())
    }

    /// The files of the base, by file name (last component).
    pub fn base_by_name(&mut self, name: &[u8]) -> &[RepoPath] {
        let index = self.base_by_name.get_or_insert_with(|| {
            let mut index: HashMap<Vec<u8>, Vec<RepoPath>> = HashMap::new();
            for p in self.base.files() {
                index.entry(p.file_name().to_vec()).or_default().push(p);
            }
            index
        });
        index.get(name).map_or(&[], Vec::as_slice)
    }

    /// True when `path` exists at the head or at the base.
    pub fn exists_anywhere(&self, path: &RepoPath) -> bool {
        self.head.exists(path) || self.base.exists(path)
    }

    pub fn warn(&mut self, warning: String) {
        if !self.warnings.contains(&warning) {
            self.warnings.push(warning);
        }
    }

    pub fn into_warnings(self) -> Vec<String> {
        self.warnings
    }
}

/// The path a change brings into the tree: an added or copied file, or a file renamed from a
/// path that `matches` did not already accept. A pure move of an existing file is not new.
pub(crate) fn new_path(change: &Change, matches: impl Fn(&RepoPath) -> bool) -> Option<&RepoPath> {
    let new = change.new_path.as_ref()?;
    let is_new = match change.kind {
        ChangeKind::Added | ChangeKind::Copied => true,
        ChangeKind::Renamed => !change.old_path.as_ref().is_some_and(&matches),
        ChangeKind::Modified | ChangeKind::Deleted => false,
    };
    (is_new && matches(new)).then_some(new)
}

/// A table of patterns searched as one: a single pass over the text finds any of them, and
/// each match says which (the first in the table, of those that match at the leftmost place).
pub(crate) struct Alternation(meta::Regex);

impl Alternation {
    /// Each match in `text`, leftmost first, not overlapping: its pattern's index in the table
    /// and where it is.
    pub fn find_iter<'h>(
        &'h self,
        text: &'h [u8],
    ) -> impl Iterator<Item = (usize, Range<usize>)> + 'h {
        self.0
            .find_iter(text)
            .map(|m| (m.pattern().as_usize(), m.range()))
    }
}

/// The [`Alternation`] of `patterns` (none with capture groups of its own), as bytes (no
/// Unicode classes). Built without the engine's own literal prefilter: the rules that use a
/// table read only the files that hold their words (a [`LiteralSet`]), where the prefilter's
/// candidates (a `.`, an `@`) come every few bytes; building it cost a small check more than
/// its whole search.
pub(crate) fn alternation<'p>(
    patterns: impl Iterator<Item = &'p str>,
    multi_line: bool,
) -> Alternation {
    let patterns: Vec<&str> = patterns.collect();
    let regex = meta::Builder::new()
        .configure(
            meta::Config::new()
                .which_captures(WhichCaptures::Implicit)
                .auto_prefilter(false),
        )
        .syntax(
            syntax::Config::new()
                .unicode(false)
                .utf8(false)
                .multi_line(multi_line),
        )
        .build_many(&patterns)
        .expect("the rule's pattern table is valid (tested)");
    Alternation(regex)
}

/// A few words, looked for together: the prefilters that decide whether a text is read at all.
pub(crate) struct LiteralSet(AhoCorasick);

impl LiteralSet {
    /// True when `text` holds one of the words.
    pub fn is_match(&self, text: &[u8]) -> bool {
        self.0.is_match(text)
    }

    /// Where the words are in `text`, leftmost first, not overlapping.
    pub fn find_iter<'h>(&'h self, text: &'h [u8]) -> impl Iterator<Item = Range<usize>> + 'h {
        self.0.find_iter(text).map(|m| m.range())
    }
}

/// The set of `words`. Searched with SIMD (Teddy) like a regex of them, but built as an NFA:
/// a regex (or aho-corasick's default) also builds a DFA for them, which costs a short check
/// more than its whole search.
pub(crate) fn literal_set(words: &[&str]) -> LiteralSet {
    let set = AhoCorasick::builder()
        .kind(Some(AhoCorasickKind::NoncontiguousNFA))
        .match_kind(MatchKind::LeftmostFirst)
        .build(words)
        .expect("a handful of literals is a valid automaton");
    LiteralSet(set)
}

#[cfg(test)]
mod tests {
    use super::RULES;

    /// README's rule table lists every rule of the registry once, with its default severity.
    #[test]
    fn readme_rule_table_is_the_registry() {
        let readme = include_str!("../../../../README.md");
        let mut rows: Vec<(String, String)> = readme
            .lines()
            .filter_map(|l| l.strip_prefix("| `"))
            .filter_map(|l| {
                let (id, rest) = l.split_once("` | ")?;
                let (severity, _) = rest.split_once(" | ")?;
                Some((id.to_owned(), severity.to_owned()))
            })
            .filter(|(id, _)| RULES.iter().any(|r| r.id == id) || !id.contains(' '))
            .collect();
        let mut entries: Vec<(String, String)> = RULES
            .iter()
            .map(|r| (r.id.to_owned(), r.severity.as_str().to_owned()))
            .collect();
        rows.sort();
        entries.sort();
        assert_eq!(rows, entries, "README's rule table and the registry differ");
    }
}
