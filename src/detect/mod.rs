//! The sabotage detector: changes in, flags out.
//!
//! It does no IO beyond reading the file contents and trees it is handed, and knows nothing of
//! forges or of git: callers (the CLI, the bot) turn revisions into [`Change`]s and contents.
//!
//! Work is split in two so that a caller can spread a large diff over threads:
//! [`Detector::analyze`] looks at one file (pure, `Sync`), and [`Detector::finish`] takes every
//! file's analysis, decides what is really new across the whole change (a skip removed from one
//! file and added to another is moved, not new), and judges new files by their names against the
//! head tree (shadowing modules, backup copies).
//!
//! "New" is judged by comparing what a file had at the base with what it has at the head, not by
//! looking at added lines alone: each rule finds *occurrences* in both versions (on code only —
//! comments and string literals are masked by [`lexer`]), and only occurrences beyond what the
//! base already had, on lines the change added, are flagged. A re-indented block, a file
//! re-encoded with CRLF, a comment edited on an existing `except ImportError:` or a reason given
//! to an existing `@Ignore` add lines but no occurrence.

pub mod change;
pub mod flag;
pub mod lang;
pub mod lexer;
pub mod manifest;
pub mod options;
pub mod paths;
pub mod registry;
mod rules;
mod scan;
pub(crate) mod suite;

use std::collections::HashMap;

pub use change::{Change, ChangeKind, RepoPath};
pub use flag::{Flag, Rule, Severity};
pub use lang::Language;
pub use options::{AllowRule, Options, RuleSetting};
pub use paths::Classifier;
pub use registry::{RULES, RuleInfo};

use paths::{GlobError, glob_match};
use scan::{FileScan, Occurrence};

/// Files larger than this are judged by their path only: no real source file is this large, and
/// reading generated blobs line by line would cost more than it could find.
pub const MAX_TEXT_SIZE: usize = 4 * 1024 * 1024;

/// A tree of files the detector may look things up in (the base or the head revision, or a
/// working tree). Only the file-level rules use it, for new files, and `special-case`, for the
/// tests of a new branch on a literal.
pub trait Tree {
    /// True when a file exists at `path`.
    fn exists(&self, path: &RepoPath) -> bool;
    /// The contents of the file at `path`, if it is a readable regular file.
    fn read(&self, path: &RepoPath) -> Option<Vec<u8>>;
    /// Every file path in the tree. Called at most once per [`Detector::finish`], and only when
    /// a new file's name or a new branch on a literal makes it necessary.
    fn files(&self) -> Vec<RepoPath>;
}

/// One file handed to [`Detector::analyze`]: its change, and its contents before and after.
/// A content is `None` where the file does not exist on that side, or is binary or too large.
pub struct FileInput<'a> {
    pub change: Change,
    pub old: Option<&'a [u8]>,
    pub new: Option<&'a [u8]>,
}

/// What [`Detector::analyze`] learned of one file.
#[derive(Debug)]
pub struct FileAnalysis {
    change: Change,
    ignored: bool,
    /// Occurrences new in this file, most likely first, with their flags.
    findings: Vec<Finding>,
    /// Occurrences this file lost, by kind and key: a move's other half.
    lost: Vec<(&'static str, u64)>,
    /// Tests that check less here, and the inline allow on their line, for `finish` to judge
    /// against what the whole change gained.
    weakened: Vec<rules::test_weakened::Candidate>,
    /// Tests gone from here, likewise.
    deleted: Vec<rules::test_deleted::Candidate>,
    /// What this file's tests gained.
    pool: suite::compare::Pool,
    /// New branches on a literal, judged against the head's tests in `finish` (special-case).
    special: Vec<rules::special_case::Candidate>,
    /// Skip markers on tests new to this file, settled in `finish` against the tests the
    /// change removed (a test moved with its marker keeps it).
    skip_claims: Vec<(Finding, rules::skip_marker::Claim)>,
    /// The tests this file lost, when its markers were read (`None`: not read).
    skip_removed: Option<Vec<rules::skip_marker::Removed>>,
    /// Ignores the base had, written anew for a path that moved (runner-narrowed), settled in
    /// `finish` against what the change moved.
    repathed: Vec<(Finding, rules::runner_narrowed::Repathed)>,
    /// What could not be read (a configuration file that does not parse).
    warnings: Vec<String>,
}

#[derive(Debug)]
struct Finding {
    kind: &'static str,
    key: u64,
    flag: Flag,
    /// The reason of an inline allow on or above the flagged line.
    allowed: Option<String>,
}

/// The outcome of a check.
#[derive(Debug)]
pub struct Report {
    pub flags: Vec<Flag>,
    /// Flags that a configured or inline allow accepted, with the reason given.
    pub allowed: Vec<(Flag, String)>,
    /// Files changed.
    pub files: usize,
    /// Lines added over all text files.
    pub added_lines: u64,
    /// Lines removed over all text files.
    pub removed_lines: u64,
    /// Things the detector could not read and passed over (a manifest that does not parse).
    pub warnings: Vec<String>,
    /// The lowest severity that fails the check, from the repository's configuration.
    pub fail_on: Severity,
}

impl Default for Report {
    fn default() -> Report {
        Report {
            flags: Vec::new(),
            allowed: Vec::new(),
            files: 0,
            added_lines: 0,
            removed_lines: 0,
            warnings: Vec::new(),
            fail_on: Severity::Warning,
        }
    }
}

impl Report {
    /// How many flags are at `fail_on` or above: the ones that fail a check in block mode.
    pub fn failing(&self) -> usize {
        self.flags
            .iter()
            .filter(|f| f.severity >= self.fail_on)
            .count()
    }

    /// Whether anything fails the check.
    pub fn fails(&self) -> bool {
        self.failing() > 0
    }
}

/// The detector, configured for one repository.
#[derive(Debug, Clone, Default)]
pub struct Detector {
    classifier: Classifier,
    allow: Vec<(Rule, globset::GlobSet, String)>,
    options: Options,
}

impl Detector {
    pub fn new(options: &Options) -> Result<Detector, GlobError> {
        let classifier = Classifier::new(
            options.test_paths.iter().map(String::as_str),
            options.ignore.iter().map(String::as_str),
        )?;
        let allow = options
            .allow
            .iter()
            .map(|a| {
                let set = paths::glob_set([a.path.as_str()])?;
                Ok((a.rule, set, a.reason.clone()))
            })
            .collect::<Result<_, GlobError>>()?;
        Ok(Detector {
            classifier,
            allow,
            options: options.clone(),
        })
    }

    /// Whether `rule` is on for this repository.
    fn on(&self, rule: Rule) -> bool {
        self.options.severity(rule).is_some()
    }

    /// Looks at one file: which occurrences its head has beyond its base, and which it lost.
    pub fn analyze(&self, input: FileInput<'_>) -> FileAnalysis {
        let FileInput { change, old, new } = input;
        let path = change.path().clone();
        let ignored = self.classifier.is_ignored(&path);
        let mut analysis = FileAnalysis {
            change,
            ignored,
            findings: Vec::new(),
            lost: Vec::new(),
            weakened: Vec::new(),
            deleted: Vec::new(),
            pool: suite::compare::Pool::default(),
            special: Vec::new(),
            skip_claims: Vec::new(),
            skip_removed: None,
            repathed: Vec::new(),
            warnings: Vec::new(),
        };
        if !ignored && self.on(Rule::RunnerNarrowed) {
            let (flags, held, warnings) = rules::runner_narrowed::check(&analysis.change, old, new);
            analysis.findings.extend(
                flags
                    .into_iter()
                    .map(|flag| config_finding(flag, new, rules::runner_narrowed::KIND)),
            );
            analysis.repathed = held
                .into_iter()
                .map(|r| {
                    let finding = config_finding(r.flag.clone(), new, rules::runner_narrowed::KIND);
                    (finding, r)
                })
                .collect();
            analysis.warnings = warnings;
        }
        for &(rule, kind, read) in WHOLE_FILE_READERS {
            if !ignored && self.on(rule) {
                let flags = read(&analysis.change, old, new);
                analysis.findings.extend(
                    flags
                        .into_iter()
                        .map(|flag| config_finding(flag, new, kind)),
                );
            }
        }
        let Some(lang) = Language::of(&path) else {
            return analysis;
        };
        if ignored || paths::is_doc(&path) {
            return analysis;
        }
        // A file under a fixtures directory is what a test reads or runs (a runner's test
        // class that skips on purpose, a project a test builds), not a test of this suite: its
        // skips are not this suite's, and a test moved there is not found there.
        let is_test = self.classifier.is_test(&path) && !paths::is_fixture(&path);
        let scan = FileScan::new(lang, &path, is_test, |rule| self.on(rule));
        // Each version is lexed once, for the line rules, the test model and the branch reader
        // alike; a version no reader needs is never lexed.
        let reads_tests = self.reads_tests(lang, is_test, old, new);
        let lexed = |text| lexer::Lexed::new(lang, text, reads_tests);
        let (new_lexed, old_lexed) = (new.map(lexed), old.map(lexed));
        let (new_lexed, old_lexed) = (new_lexed.as_ref(), old_lexed.as_ref());
        let (mut head, mut base) = scan.both(new_lexed, old_lexed);
        let finding = |o: Occurrence| {
            let flag = Flag {
                rule: o.rule,
                severity: o.rule.severity(),
                path: path.clone(),
                line: Some(o.line),
                removed_line: None,
                snippet: new.map(|text| snippet(text, o.line)),
                message: o.message,
            };
            // An inline allow is read from the new file: it is part of the change a
            // reviewer sees.
            let allowed = new.and_then(|text| inline_allow(text, o.line, o.rule));
            Finding {
                kind: o.kind,
                key: o.key,
                flag,
                allowed,
            }
        };
        // A fixture's skip (a runner's input that skips on purpose) is not this suite's.
        if self.on(Rule::SkipMarker)
            && !paths::is_fixture(&path)
            && rules::skip_marker::applies(lang, is_test)
        {
            let may = |l: Option<&lexer::Lexed<'_>>| {
                l.is_some_and(|l| rules::skip_marker::might_match(lang, l.raw()))
            };
            if may(new_lexed) || may(old_lexed) {
                // Skip markers are judged per test; those whose tests cannot be told join the
                // per-file count of the other line rules.
                let judged = rules::skip_marker::judge(
                    lang,
                    is_test,
                    paths::harness(&path).is_some(),
                    &analysis.change,
                    new_lexed,
                    old_lexed,
                );
                if let Some(judged) = judged {
                    head.extend(judged.head_other);
                    base.extend(judged.base_other);
                    analysis
                        .findings
                        .extend(judged.now.into_iter().map(finding));
                    analysis
                        .findings
                        .extend(judged.conditional.into_iter().map(finding).map(|mut f| {
                            f.flag.severity = Severity::Note;
                            f
                        }));
                    analysis.skip_claims = judged
                        .claims
                        .into_iter()
                        .map(|(o, claim)| (finding(o), claim))
                        .collect();
                    analysis.skip_removed = Some(judged.removed);
                }
            }
        }
        let occurrences = new_occurrences(&analysis.change, &head, &base)
            .into_iter()
            .map(finding);
        analysis.findings.extend(occurrences);
        analysis.lost = lost_occurrences(&analysis.change, &head, &base);
        self.analyze_tests(
            lang,
            is_test,
            reads_tests,
            old_lexed,
            new_lexed,
            &mut analysis,
        );
        if self.on(Rule::SpecialCase) && rules::special_case::applies(lang, is_test) {
            let (special, lost) =
                rules::special_case::analyze(lang, &analysis.change, new_lexed, old_lexed);
            analysis.special = special;
            analysis.lost.extend(lost);
        }
        analysis
    }

    /// Whether the test model reads this file: one of its rules is on and either version may
    /// hold tests.
    fn reads_tests(
        &self,
        lang: Language,
        is_test: bool,
        old: Option<&[u8]>,
        new: Option<&[u8]>,
    ) -> bool {
        let on = [
            Rule::TestWeakened,
            Rule::ExpectationChanged,
            Rule::TestDeleted,
        ]
        .into_iter()
        .any(|rule| self.on(rule));
        let holds = |t: Option<&[u8]>| t.is_some_and(|t| suite::may_hold_tests(lang, is_test, t));
        on && (holds(old) || holds(new))
    }

    /// The test model's rules: both versions' tests, compared.
    fn analyze_tests(
        &self,
        lang: Language,
        is_test: bool,
        reads_tests: bool,
        old: Option<&lexer::Lexed<'_>>,
        new: Option<&lexer::Lexed<'_>>,
        analysis: &mut FileAnalysis,
    ) {
        let (weakened, expectation, deleted) = (
            self.on(Rule::TestWeakened),
            self.on(Rule::ExpectationChanged),
            self.on(Rule::TestDeleted),
        );
        if deleted && !is_test {
            // What production code stops (or starts) defining: a test of a removed function
            // is deleted with it.
            let (change, pool) = (&analysis.change, &mut analysis.pool);
            if let Some(old) = old.filter(|_| !change.removed.is_empty()) {
                suite::compare::definitions(old.raw(), &change.removed, &mut pool.removed_defs);
            }
            if let Some(new) = new.filter(|_| !change.added.is_empty()) {
                suite::compare::definitions(new.raw(), &change.added, &mut pool.added_defs);
            }
        }
        if !reads_tests {
            return;
        }
        let change = &analysis.change;
        let (base, head) = suite::parse_change(lang, old, new, &change.removed, &change.added);
        let diff = suite::compare::diff(&base, &head);
        let defs = std::mem::take(&mut analysis.pool);
        analysis.pool = suite::compare::Pool::of_file(&base, &head, &diff);
        analysis.pool.merge(defs);
        if is_test && let Some(new) = new.filter(|_| !change.added.is_empty()) {
            analysis
                .pool
                .added_literals
                .extend(suite::subject::literals(new, &change.added));
        }
        let path = analysis.change.path().clone();
        for t in &mut analysis.pool.new_tests {
            t.path = Some(path.clone());
        }
        for o in &mut analysis.pool.orphans {
            o.path = Some(path.clone());
        }
        let mut flags = Vec::new();
        if weakened {
            let (now, later) = rules::test_weakened::examine(&path, &base, &head, &diff);
            flags.extend(now);
            analysis.weakened = later
                .into_iter()
                .map(|mut c| {
                    let (snippet, allowed) = head_line(new.map(lexer::Lexed::raw), c.flag_mut());
                    c.flag_mut().snippet = snippet;
                    c.allowed = allowed;
                    c
                })
                .collect();
        }
        if expectation {
            flags.extend(rules::expectation_changed::examine(&path, &diff));
        }
        if deleted {
            let imports = match (&analysis.change.kind, old) {
                (ChangeKind::Deleted, Some(old)) => {
                    suite::subject::imports(lang, &path.to_string(), old.raw())
                }
                _ => Vec::new(),
            };
            analysis.deleted =
                rules::test_deleted::examine(&analysis.change, &diff, &base, &head, &imports);
        }
        for mut flag in flags {
            let (snippet, allowed) = head_line(new.map(lexer::Lexed::raw), &flag);
            flag.snippet = snippet;
            analysis.findings.push(Finding {
                kind: "test-model",
                key: 0,
                flag,
                allowed,
            });
        }
    }

    /// Decides what is new across the whole change and applies the file-level rules and the
    /// allows. `base` and `head` are the two trees the change goes between.
    pub fn finish(
        &self,
        mut analyses: Vec<FileAnalysis>,
        base: &dyn Tree,
        head: &dyn Tree,
    ) -> Report {
        let mut report = Report {
            files: analyses.len(),
            added_lines: analyses.iter().map(|a| a.change.added_lines()).sum(),
            removed_lines: analyses.iter().map(|a| a.change.removed_lines()).sum(),
            fail_on: self.options.fail_on,
            ..Report::default()
        };
        // What the change lost anywhere, by kind and key: a new occurrence with the same kind and
        // key in another file is the same line moved.
        let mut lost: HashMap<(&str, u64), usize> = HashMap::new();
        for a in &analyses {
            for &k in &a.lost {
                *lost.entry(k).or_default() += 1;
            }
        }
        let mut flags: Vec<(Flag, Option<String>)> = Vec::new();
        // What the change's tests gained anywhere, against which lost tests and assertions are
        // judged.
        let mut pool = suite::compare::Pool::default();
        let mut weakened = Vec::new();
        let mut deleted = Vec::new();
        for a in analyses.iter_mut() {
            pool.merge(std::mem::take(&mut a.pool));
            weakened.append(&mut a.weakened);
            deleted.append(&mut a.deleted);
        }
        flags.extend(rules::test_weakened::resolve(weakened, &mut pool));
        let changes: Vec<&Change> = analyses.iter().map(|a| &a.change).collect();
        flags.extend(
            rules::test_deleted::resolve(deleted, &mut pool, &changes, head, &self.classifier)
                .into_iter()
                .map(|f| (f, None)),
        );
        for a in &analyses {
            for f in &a.findings {
                if let Some(n) = lost.get_mut(&(f.kind, f.key))
                    && *n > 0
                {
                    *n -= 1;
                    continue;
                }
                flags.push((f.flag.clone(), f.allowed.clone()));
            }
        }
        flags.extend(self.skip_claims(&mut analyses, base, head));
        flags.extend(repathed_ignores(&mut analyses));
        let changes: Vec<&Change> = analyses
            .iter()
            .filter(|a| !a.ignored)
            .map(|a| &a.change)
            .collect();
        let mut ctx = rules::FileRules::new(&self.classifier, base, head);
        let file_flags = rules::shadow_module::check(&changes, &mut ctx)
            .into_iter()
            .chain(rules::stray_backup::check(&changes, &mut ctx));
        flags.extend(file_flags.map(|f| (f, None)));
        // Tests are looked up only when some file holds a new branch on a literal.
        flags.extend(rules::special_case::check(&analyses, &mut lost, &mut ctx));
        report.warnings = analyses.iter().flat_map(|a| a.warnings.clone()).collect();
        for w in ctx.into_warnings() {
            if !report.warnings.contains(&w) {
                report.warnings.push(w);
            }
        }

        for (mut flag, inline) in flags {
            // A rule that is off raises nothing; the others carry the repository's severity.
            let Some(severity) = self.options.severity(flag.rule) else {
                continue;
            };
            // A flag its rule raised below the rule's default (a skip under a condition on a
            // test that still runs elsewhere) stays below whatever the repository sets.
            flag.severity = if flag.severity < flag.rule.severity() {
                flag.severity.min(severity)
            } else {
                severity
            };
            let configured = || {
                self.allow
                    .iter()
                    .find(|(rule, set, _)| *rule == flag.rule && glob_match(set, &flag.path))
                    .map(|(_, _, reason)| reason.clone())
            };
            match inline.or_else(configured) {
                Some(reason) => report.allowed.push((flag, reason)),
                None => report.flags.push(flag),
            }
        }
        report.flags.sort_by(|a, b| a.sort_key().cmp(&b.sort_key()));
        report.flags.dedup();
        report
            .allowed
            .sort_by(|a, b| a.0.sort_key().cmp(&b.0.sort_key()));
        report
    }

    /// The skip markers on tests new to their files, settled against the tests the change
    /// removed anywhere: a test moved with its marker keeps it; a test moved or renamed that
    /// gains one, and a new test skipped without a condition, are flagged.
    fn skip_claims(
        &self,
        analyses: &mut [FileAnalysis],
        base: &dyn Tree,
        head: &dyn Tree,
    ) -> Vec<(Flag, Option<String>)> {
        let claims: Vec<(Finding, rules::skip_marker::Claim)> = analyses
            .iter_mut()
            .flat_map(|a| std::mem::take(&mut a.skip_claims))
            .collect();
        if claims.is_empty() {
            return Vec::new();
        }
        // A conditional marker on a new test is flagged only when the test is one the change
        // moved or renamed, from any file: files whose markers were not read are read now
        // for the tests they lost (rarely: only a change with such a claim pays for it).
        let read_all = claims.iter().any(|(_, c)| c.conditional());
        let mut removed = Vec::new();
        for a in analyses.iter_mut() {
            if let Some(r) = a.skip_removed.take() {
                removed.extend(r);
                continue;
            }
            if !read_all || a.ignored || a.change.removed.is_empty() {
                continue;
            }
            let Some(old_path) = &a.change.old_path else {
                continue;
            };
            let Some(lang) = Language::of(old_path) else {
                continue;
            };
            // Test files, and Rust files (which keep unit tests beside the code).
            let is_test = self.classifier.is_test(old_path);
            if paths::is_doc(old_path)
                || !(is_test || lang == Language::Rust)
                || !rules::skip_marker::applies(lang, is_test)
            {
                continue;
            }
            let Some(old) = base.read(old_path).filter(|t| t.len() <= MAX_TEXT_SIZE) else {
                continue;
            };
            let new = a
                .change
                .new_path
                .as_ref()
                .and_then(|p| head.read(p))
                .filter(|t| t.len() <= MAX_TEXT_SIZE);
            removed.extend(rules::skip_marker::removed_tests(
                lang,
                &old,
                new.as_deref(),
            ));
        }
        let refs: Vec<&rules::skip_marker::Claim> = claims.iter().map(|(_, c)| c).collect();
        let verdicts = rules::skip_marker::resolve(&refs, &mut removed);
        claims
            .into_iter()
            .zip(verdicts)
            .filter(|(_, flagged)| *flagged)
            .map(|((f, _), _)| (f.flag, f.allowed))
            .collect()
    }

    /// Both steps in one, for callers that hold every file at once (tests, small changes).
    pub fn detect(&self, inputs: Vec<FileInput<'_>>, base: &dyn Tree, head: &dyn Tree) -> Report {
        let analyses = inputs.into_iter().map(|i| self.analyze(i)).collect();
        self.finish(analyses, base, head)
    }
}

/// The re-pathed ignores (runner-narrowed) of the change that no path it moved explains: an
/// ignore the base had, re-pathed because its file moved, is the same ignore.
fn repathed_ignores(analyses: &mut [FileAnalysis]) -> Vec<(Flag, Option<String>)> {
    let held: Vec<(Finding, rules::runner_narrowed::Repathed)> = analyses
        .iter_mut()
        .flat_map(|a| std::mem::take(&mut a.repathed))
        .collect();
    if held.is_empty() {
        return Vec::new();
    }
    let gone: Vec<&RepoPath> = analyses
        .iter()
        .filter(|a| a.change.kind == ChangeKind::Deleted)
        .filter_map(|a| a.change.old_path.as_ref())
        .collect();
    let arrived: Vec<&RepoPath> = analyses
        .iter()
        .filter(|a| a.change.kind == ChangeKind::Added)
        .filter_map(|a| a.change.new_path.as_ref())
        .collect();
    let moves: Vec<(&RepoPath, &RepoPath)> = analyses
        .iter()
        .filter(|a| matches!(a.change.kind, ChangeKind::Renamed))
        .filter_map(|a| Some((a.change.old_path.as_ref()?, a.change.new_path.as_ref()?)))
        .collect();
    held.into_iter()
        .filter(|(_, r)| {
            let renamed = moves.iter().any(|(o, n)| r.moved(o, n));
            let deleted_and_added = || {
                gone.iter().any(|o| {
                    arrived
                        .iter()
                        .any(|n| o.file_name() == n.file_name() && r.moved(o, n))
                })
            };
            !renamed && !deleted_and_added()
        })
        .map(|(f, _)| (f.flag, f.allowed))
        .collect()
}

/// A runner-narrowed flag, with its inline allow (read from the new file, as for line rules).
/// A reader of a file's two versions as a whole, which knows its files by name: the rule it
/// reports for, the kind the engine keeps its findings under, and the reader.
type WholeFileReader = (
    Rule,
    &'static str,
    fn(&Change, Option<&[u8]>, Option<&[u8]>) -> Vec<Flag>,
);

/// Configuration and stored snapshots, read beside the per-language rules (`runner-narrowed`,
/// which also warns of files that do not parse, is called on its own).
const WHOLE_FILE_READERS: &[WholeFileReader] = &[
    (
        Rule::Suppression,
        rules::suppression::config::KIND,
        rules::suppression::config::check,
    ),
    (
        Rule::ExpectationChanged,
        rules::expectation_changed::snapshot::KIND,
        rules::expectation_changed::snapshot::check,
    ),
];

fn config_finding(flag: Flag, new: Option<&[u8]>, kind: &'static str) -> Finding {
    let allowed = match (new, flag.line) {
        (Some(text), Some(line)) => inline_allow(text, line, flag.rule),
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

/// The head's occurrences beyond the base's, per kind, taken from the lines the change added.
/// Where a kind gained `n` occurrences but more than `n` sit on added lines (a block re-indented
/// around a new skip), the ones whose text the base did not have go first.
fn new_occurrences(change: &Change, head: &[Occurrence], base: &[Occurrence]) -> Vec<Occurrence> {
    let mut out = Vec::new();
    for kind in kinds(head) {
        let in_head = head.iter().filter(|o| o.kind == kind).count();
        let in_base = base.iter().filter(|o| o.kind == kind).count();
        let Some(gained) = in_head.checked_sub(in_base).filter(|&n| n > 0) else {
            continue;
        };
        let mut candidates: Vec<&Occurrence> = head
            .iter()
            .filter(|o| o.kind == kind && change.any_added(o.first, o.last))
            .collect();
        // Stable: keeps file order within each group.
        candidates.sort_by_key(|o| base.iter().any(|b| b.kind == kind && b.key == o.key));
        candidates.truncate(gained);
        candidates.sort_by_key(|o| o.line);
        out.extend(candidates.into_iter().cloned());
    }
    out
}

/// The base's occurrences beyond the head's, per kind, from the lines the change removed.
fn lost_occurrences(
    change: &Change,
    head: &[Occurrence],
    base: &[Occurrence],
) -> Vec<(&'static str, u64)> {
    let mut out = Vec::new();
    for kind in kinds(base) {
        let in_head = head.iter().filter(|o| o.kind == kind).count();
        let in_base = base.iter().filter(|o| o.kind == kind).count();
        let Some(lost) = in_base.checked_sub(in_head).filter(|&n| n > 0) else {
            continue;
        };
        out.extend(
            base.iter()
                .filter(|o| o.kind == kind && change.any_removed(o.first, o.last))
                .take(lost)
                .map(|o| (kind, o.key)),
        );
    }
    out
}

fn kinds(occurrences: &[Occurrence]) -> Vec<&'static str> {
    let mut kinds: Vec<&'static str> = occurrences.iter().map(|o| o.kind).collect();
    kinds.sort_unstable();
    kinds.dedup();
    kinds
}

/// A head-side flag's snippet and the inline allow on or above its line.
fn head_line(new: Option<&[u8]>, flag: &Flag) -> (Option<String>, Option<String>) {
    match (new, flag.line) {
        (Some(text), Some(line)) => (
            Some(snippet(text, line)),
            inline_allow(text, line, flag.rule),
        ),
        _ => (None, None),
    }
}

/// The text of a 1-based line, trimmed, shortened for a report.
fn snippet(text: &[u8], line: u32) -> String {
    /// Long enough for any real decorator or call, short enough for a table cell.
    const MAX_CHARS: usize = 200;
    let raw = nth_line(text, line).unwrap_or_default();
    let s = String::from_utf8_lossy(raw);
    let s = s.trim();
    match s.char_indices().nth(MAX_CHARS) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_owned(),
    }
}

/// The bytes of a 1-based line, without its line ending.
fn nth_line(text: &[u8], line: u32) -> Option<&[u8]> {
    let raw = text
        .split(|&b| b == b'\n')
        .nth(line.checked_sub(1)? as usize)?;
    Some(raw.strip_suffix(b"\r").unwrap_or(raw))
}

/// `forgeward: allow <rule> -- <reason>` on the flagged line or the line above.
fn inline_allow(text: &[u8], line: u32, rule: Rule) -> Option<String> {
    [line, line.saturating_sub(1)]
        .into_iter()
        .filter_map(|l| nth_line(text, l))
        .find_map(|l| scan::parse_inline_allow(l, rule))
}

#[cfg(test)]
pub(crate) mod testing;
