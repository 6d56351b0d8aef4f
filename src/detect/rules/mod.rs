//! The detector's rules, one file each, with their tests beside them.
//!
//! Line rules (`skip_marker`, `stubbed_import`, `forced_exit`, `always_equal`,
//! `outcome_patched`, `suppression`) find occurrences in one version of a file; the engine in
//! [`super`] decides which are new. File rules (`shadow_module`, `stray_backup`) judge new files
//! by name against the trees, through [`FileRules`]. [`code`] holds what several line rules need
//! to read code: block extents by indentation and by braces, enclosing definitions.
//! `special_case` finds new branches per file and looks up the head tree's tests for their
//! literals only when one exists; `runner_narrowed` compares the two versions of a test runner,
//! CI or coverage configuration file; `tokens` is the expression-level reading `special_case`
//! needs. The test model's rules (`test_weakened`, `expectation_changed`, `test_deleted`) read
//! [`super::suite`].

pub(crate) mod always_equal;
pub(crate) mod code;
pub(crate) mod expectation_changed;
pub(crate) mod focused_test;
pub(crate) mod forced_exit;
pub(crate) mod outcome_patched;
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

use std::collections::HashMap;

use std::ops::Range;

use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};
use regex_automata::meta;
use regex_automata::nfa::thompson::WhichCaptures;
use regex_automata::util::syntax;

use super::change::RepoPath;
use super::paths::Classifier;
use super::{Change, ChangeKind, Tree};

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
