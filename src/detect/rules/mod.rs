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
use regex::bytes::{Captures, Match, Regex, RegexBuilder};

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

/// One regex for a table of patterns (none with capture groups of its own), each pattern its own
/// group, so one pass over the text finds any of them and [`which`] tells which.
pub(crate) fn alternation<'p>(patterns: impl Iterator<Item = &'p str>, multi_line: bool) -> Regex {
    let pattern = patterns
        .map(|p| format!("({p})"))
        .collect::<Vec<_>>()
        .join("|");
    RegexBuilder::new(&pattern)
        .unicode(false)
        .multi_line(multi_line)
        .build()
        .expect("the rule's pattern table is valid (tested)")
}

/// The table entry (by index) whose group matched in one match of an [`alternation`].
pub(crate) fn which<'h>(caps: &Captures<'h>) -> Option<(usize, Match<'h>)> {
    caps.iter()
        .skip(1)
        .enumerate()
        .find_map(|(i, g)| Some((i, g?)))
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
