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
pub mod diff;
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
pub mod timings;

use std::any::Any;
use std::collections::HashMap;

pub use change::{Change, ChangeKind, RepoPath};
pub use flag::{Flag, Rule, Severity};
pub use lang::Language;
pub use options::{AllowRule, Options, RuleSetting};
pub use paths::Classifier;
pub use rules::{RULES, RuleInfo};
pub(crate) use scan::{inline_allow, snippet};

use paths::{GlobError, glob_match};
use rules::{Across, Changed, Finding, Found, Out, Pass};
use scan::{Occurrence, Role};
use timings::Shared;

/// Files larger than this are judged by their path only, unless the repository says otherwise
/// ([`Options::max_file_size`]): no real source file is this large, and reading generated
/// blobs line by line would cost more than it could find. The report says which were skipped.
pub const MAX_TEXT_SIZE: usize = 4 * 1024 * 1024;

/// A size for people, in the binary units a limit is set in: `8.1 MiB`, `4 MiB`, `512 KiB`.
fn human_size(bytes: u64) -> String {
    let (value, unit) = match bytes {
        b if b >= 1 << 30 => (b as f64 / f64::from(1u32 << 30), "GiB"),
        b if b >= 1 << 20 => (b as f64 / f64::from(1u32 << 20), "MiB"),
        b if b >= 1 << 10 => (b as f64 / f64::from(1u32 << 10), "KiB"),
        b => return format!("{b} B"),
    };
    let text = format!("{value:.1}");
    format!("{} {unit}", text.strip_suffix(".0").unwrap_or(&text))
}

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
    gathered: Gathered,
}

/// What the rules' file passes found in one file.
#[derive(Debug, Default)]
struct Gathered {
    /// Occurrences new in this file, most likely first, with their flags.
    findings: Vec<Finding>,
    /// Occurrences this file lost, by kind and key: a move's other half.
    lost: Vec<(&'static str, u64)>,
    /// What this file's tests (and production code) gained.
    pool: suite::compare::Pool,
    /// What each rule's file passes held for its pass across the change.
    held: Vec<(Rule, Box<dyn Any + Send>)>,
    /// What could not be read (a configuration file that does not parse).
    warnings: Vec<String>,
}

impl Gathered {
    /// Takes in what one pass of `rule` found.
    fn absorb(&mut self, rule: Rule, out: Out<'_>, found: &mut Found) {
        self.findings.extend(out.findings);
        found.head.extend(out.found.head);
        found.base.extend(out.found.base);
        self.lost.extend(out.lost);
        self.held
            .extend(out.held.into_iter().map(|value| (rule, value)));
        self.pool.merge(out.pool);
        self.warnings.extend(out.warnings);
    }
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

    /// The passes of the rules the repository has on, in the registry's order.
    fn passes(&self) -> impl Iterator<Item = (Rule, &'static Pass)> + '_ {
        RULES
            .iter()
            .filter(|info| self.on(info.rule))
            .flat_map(|info| info.passes.iter().map(move |pass| (info.rule, pass)))
    }

    /// Looks at one file: which occurrences its head has beyond its base, and which it lost.
    /// Each rule's passes run in stages: whole files by name, then (for a file of a known
    /// language that is not documentation) its code, its lines and its tests.
    pub fn analyze(&self, input: FileInput<'_>) -> FileAnalysis {
        let FileInput { change, old, new } = input;
        let ignored = self.classifier.is_ignored(change.path());
        let mut gathered = if ignored {
            Gathered::default()
        } else {
            self.gather(&change, old, new)
        };
        if let Some(size) = change.too_large.filter(|_| !ignored) {
            gathered.warnings.push(format!(
                "{}: skipped: {}, over the {} limit ([check] max_file_size)",
                change.path(),
                human_size(size),
                human_size(self.options.max_file_size)
            ));
        }
        FileAnalysis {
            change,
            ignored,
            gathered,
        }
    }

    /// The file passes on one file the repository does not ignore.
    fn gather(&self, change: &Change, old: Option<&[u8]>, new: Option<&[u8]>) -> Gathered {
        let path = change.path();
        let mut analysis = Gathered::default();
        // A file under a fixtures directory is what a test reads or runs (a runner's test
        // class that skips on purpose, a project a test builds), not a test of this suite: its
        // skips are not this suite's, and a test moved there is not found there.
        let is_test = self.classifier.is_test(path) && !paths::is_fixture(path);
        let lang = Language::of(path);
        let file = rules::File {
            change,
            path,
            lang,
            role: Role::of(path, is_test),
        };
        let out = || Out::new(path, new);
        let mut found = Found::default();
        for (rule, pass) in self.passes() {
            if let Pass::Whole(reads, run) = pass
                && (reads.applies)(&file)
            {
                let mut o = out();
                timings::rule(rule, || {
                    run(
                        &rules::Whole {
                            file: &file,
                            old,
                            new,
                        },
                        &mut o,
                    )
                });
                analysis.absorb(rule, o, &mut found);
            }
        }
        let Some(lang) = lang.filter(|_| !paths::is_doc(path)) else {
            return analysis;
        };
        // Each version is lexed once, for the line rules, the test model and the branch reader
        // alike; a version no reader needs is never lexed.
        let reads_tests = self
            .passes()
            .any(|(_, p)| matches!(p, Pass::Tests(reads, _) if reads.reads(&file, old, new)));
        let lexed = |text| lexer::Lexed::new(lang, text, reads_tests);
        let (new_lexed, old_lexed) =
            timings::shared(Shared::Lexing, || (new.map(lexed), old.map(lexed)));
        let (new_lexed, old_lexed) = (new_lexed.as_ref(), old_lexed.as_ref());
        // What the code passes count (markers whose tests cannot be told) joins the line
        // passes' occurrences after them.
        let mut counted = Found::default();
        for (rule, pass) in self.passes() {
            if let Pass::Code(reads, run) = pass
                && reads.reads(&file, old, new)
            {
                let code = rules::Code {
                    file: &file,
                    lang,
                    old: old_lexed,
                    new: new_lexed,
                };
                let mut o = out();
                timings::rule(rule, || run(&code, &mut o));
                analysis.absorb(rule, o, &mut counted);
            }
        }
        let line_passes: Vec<_> = self
            .passes()
            .filter_map(|(rule, p)| match p {
                Pass::Lines(reads, run) if reads.reads(&file, old, new) => Some((rule, run)),
                _ => None,
            })
            .collect();
        // Text without a word any pattern needs has nothing to find: it is not even indexed.
        if !line_passes.is_empty() {
            let (new_text, old_text) = timings::shared(Shared::Indexing, || {
                (new_lexed.map(scan::Text::of), old_lexed.map(scan::Text::of))
            });
            let lines = rules::Lines {
                file: &file,
                lang,
                old: old_text.as_ref(),
                new: new_text.as_ref(),
            };
            for (rule, run) in line_passes {
                timings::rule(rule, || run(&lines, &mut found));
            }
        }
        found.head.append(&mut counted.head);
        found.base.append(&mut counted.base);
        timings::shared(Shared::Occurrences, || {
            let o = out();
            let occurrences = new_occurrences(change, &found.head, &found.base)
                .into_iter()
                .map(|occurrence| o.finding(occurrence));
            analysis.findings.extend(occurrences);
            analysis
                .lost
                .extend(lost_occurrences(change, &found.head, &found.base));
        });
        if reads_tests {
            self.analyze_tests(&file, lang, old_lexed, new_lexed, &mut analysis);
        }
        analysis
    }

    /// The test model's passes: both versions' tests, compared.
    fn analyze_tests(
        &self,
        file: &rules::File<'_>,
        lang: Language,
        old: Option<&lexer::Lexed<'_>>,
        new: Option<&lexer::Lexed<'_>>,
        analysis: &mut Gathered,
    ) {
        let change = file.change;
        let (base, head) = timings::shared(Shared::TestModel, || {
            suite::parse_change(lang, old, new, &change.removed, &change.added)
        });
        let diff = timings::shared(Shared::TestModel, || {
            let diff = suite::compare::diff(&base, &head);
            let defs = std::mem::take(&mut analysis.pool);
            analysis.pool = suite::compare::Pool::of_file(&base, &head, &diff);
            analysis.pool.merge(defs);
            if file.role.is_test
                && let Some(new) = new.filter(|_| !change.added.is_empty())
            {
                analysis
                    .pool
                    .added_literals
                    .extend(suite::subject::literals(new, &change.added));
            }
            diff
        });
        for t in &mut analysis.pool.new_tests {
            t.path = Some(file.path.clone());
        }
        for o in &mut analysis.pool.orphans {
            o.path = Some(file.path.clone());
        }
        let tests = rules::Tests {
            file,
            lang,
            base: &base,
            head: &head,
            diff: &diff,
            old,
        };
        let mut found = Found::default();
        for (rule, pass) in self.passes() {
            if let Pass::Tests(reads, run) = pass
                && reads.reads(file, old.map(lexer::Lexed::raw), new.map(lexer::Lexed::raw))
            {
                let mut o = Out::new(file.path, new.map(lexer::Lexed::raw));
                timings::rule(rule, || run(&tests, &mut o));
                analysis.absorb(rule, o, &mut found);
            }
        }
    }

    /// The largest changed file the caller should read as text ([`Options::max_file_size`]).
    pub fn max_file_size(&self) -> u64 {
        self.options.max_file_size
    }

    /// Decides what is new across the whole change and applies the file-level rules and the
    /// allows. `base` and `head` are the two trees the change goes between.
    pub fn finish(&self, analyses: Vec<FileAnalysis>, base: &dyn Tree, head: &dyn Tree) -> Report {
        timings::shared(Shared::Finish, || self.finish_all(analyses, base, head))
    }

    fn finish_all(
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
            for &k in &a.gathered.lost {
                *lost.entry(k).or_default() += 1;
            }
        }
        let mut flags: Vec<(Flag, Option<String>)> = Vec::new();
        // What the change's tests gained anywhere, against which lost tests and assertions are
        // judged.
        let mut pool = suite::compare::Pool::default();
        let mut held = Vec::new();
        for (i, a) in analyses.iter_mut().enumerate() {
            pool.merge(std::mem::take(&mut a.gathered.pool));
            held.extend(
                std::mem::take(&mut a.gathered.held)
                    .into_iter()
                    .map(|(r, v)| (i, r, v)),
            );
        }
        for a in &analyses {
            for f in &a.gathered.findings {
                if let Some(n) = lost.get_mut(&(f.kind, f.key))
                    && *n > 0
                {
                    *n -= 1;
                    continue;
                }
                flags.push((f.flag.clone(), f.allowed.clone()));
            }
        }
        let files: Vec<Changed<'_>> = analyses
            .iter()
            .map(|a| Changed {
                change: &a.change,
                ignored: a.ignored,
            })
            .collect();
        let mut ctx = rules::FileRules::new(&self.classifier, base, head);
        // Every rule's pass across the change runs, on or off (a rule that is off held
        // nothing, and its flags are dropped below).
        for info in RULES {
            for pass in info.passes {
                let Pass::Change(run) = pass else {
                    continue;
                };
                let (mine, rest) = held.into_iter().partition(|(_, r, _)| *r == info.rule);
                held = rest;
                let mine = mine.into_iter().map(|(i, _, v)| (i, v)).collect();
                let mut across = Across::new(&files, mine, &mut pool, &mut lost, &mut ctx);
                flags.extend(timings::rule(info.rule, || run(&mut across)));
            }
        }
        report.warnings = analyses
            .iter()
            .flat_map(|a| a.gathered.warnings.clone())
            .collect();
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

    /// Both steps in one, for callers that hold every file at once (tests, small changes).
    pub fn detect(&self, inputs: Vec<FileInput<'_>>, base: &dyn Tree, head: &dyn Tree) -> Report {
        let analyses = inputs.into_iter().map(|i| self.analyze(i)).collect();
        self.finish(analyses, base, head)
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

/// Changes and trees built in memory, for the detector's tests and its callers'.
#[cfg(any(test, feature = "testing"))]
pub mod testing;

#[cfg(test)]
mod size_tests {
    use super::*;

    fn too_large(path: &str, size: u64) -> FileInput<'static> {
        FileInput {
            change: Change {
                kind: ChangeKind::Modified,
                old_path: Some(path.into()),
                new_path: Some(path.into()),
                added: Vec::new(),
                removed: Vec::new(),
                binary: true,
                too_large: Some(size),
            },
            old: None,
            new: None,
        }
    }

    #[test]
    fn a_file_over_the_limit_is_a_warning_unless_the_repository_ignores_it() {
        let options = Options {
            ignore: vec!["vendor/**".to_owned()],
            ..Options::default()
        };
        let detector = Detector::new(&options).expect("valid globs");
        let analyses = vec![
            detector.analyze(too_large("tests/test_big.py", 8_493_466)),
            detector.analyze(too_large("vendor/bundle.js", 9 << 20)),
        ];
        let report = detector.finish(
            analyses,
            &testing::MemTree::default(),
            &testing::MemTree::default(),
        );
        assert_eq!(
            report.warnings,
            ["tests/test_big.py: skipped: 8.1 MiB, over the 4 MiB limit ([check] max_file_size)"]
        );
        assert!(report.flags.is_empty());
    }

    #[test]
    fn sizes_read_in_the_units_a_limit_is_set_in() {
        assert_eq!(human_size(512), "512 B");
        assert_eq!(human_size(512 << 10), "512 KiB");
        assert_eq!(human_size(4 << 20), "4 MiB");
        assert_eq!(human_size((4 << 20) + (1 << 19)), "4.5 MiB");
        assert_eq!(human_size(3 << 30), "3 GiB");
    }
}
