//! `runner-narrowed`: the test runner, CI or coverage configuration newly runs or demands less.
//!
//! Configuration files are recognised by name and read in both versions; only what got
//! narrower between the base and the head is flagged, on the head line of the changed value:
//! - pytest (`pytest.ini`, `pyproject.toml` `[tool.pytest.ini_options]`, `setup.cfg`
//!   `[tool:pytest]`, `tox.ini` `[pytest]`): `addopts` gaining `-k`, `--deselect`, `--ignore`,
//!   `--ignore-glob`, `-p no:…` (not `no:cacheprovider`), `--lf`, `--collect-only`; `testpaths`
//!   dropping a path; `norecursedirs` newly covering test directories; tox `commands` and
//!   coverage.py's `fail_under` (also `.coveragerc`) as below;
//! - Jest and Vitest (`package.json` `"jest"`, `jest.config.*`, `vitest.config.*`,
//!   `vite.config.*`'s `test`): new `testPathIgnorePatterns` or `exclude` entries,
//!   `passWithNoTests`, `bail`, lowered `coverageThreshold` / `coverage.thresholds` numbers;
//! - Mocha (`.mocharc.json`, `.mocharc.js`, `package.json` `"mocha"`): a `spec` entry no head
//!   entry covers, a new `grep`/`fgrep` or `ignore` entry, `forbid-only` turned off;
//! - test scripts and recipes (`package.json` `scripts.test*`, Makefile and justfile test
//!   targets, tox `commands`): see [`command`] — a runner dropped, selection options added, paths
//!   dropped, `|| true`, `; exit 0`, `echo` instead of the runner, a make `-` prefix;
//! - a `_test.go` file newly built only under a tag nobody sets (`//go:build ignore`), or an
//!   existing one only under a tag a plain `go test` does not set (`//go:build integration`);
//! - `noxfile.py`: each session's `session.run(…)` calls compared as a script (see [`nox`]);
//! - `Cargo.toml`: `test = false`, `harness = false` or `doctest = false` on an existing target,
//!   `autotests = false`;
//! - `conftest.py`: `collect_ignore` entries that name tests, `pytest_ignore_collect` (also in
//!   a new one);
//! - Maven (`pom.xml`) and Gradle (`build.gradle`, `build.gradle.kts`): see [`jvm`] — tests
//!   newly skipped, their failures ignored, or some excluded;
//! - CI (`.github/workflows/*.yml`, `.gitlab-ci.yml`): a test step or job newly given
//!   `continue-on-error: true`, `allow_failure: true`, `if: false` or `when: manual`, its commands
//!   narrowed as above, or a job that ran tests removed.
//!
//! More verbosity or strictness, wider selections, new jobs, raised thresholds, added files and
//! deleted files are not flagged. A file that does not parse is a warning, never an error.

mod cargo;
mod ci;
mod command;
mod go;
mod ini;
mod jvm;
mod make;
mod node;
mod nox;
mod pytest;
mod runners;
mod yaml;

use crate::change::{Change, ChangeKind, RepoPath};
use crate::flag::{Flag, Rule};
use crate::rules::prelude::*;
use crate::{paths, snippet};

/// The kind under which the engine keeps these findings.
pub(crate) const KIND: &str = "runner-narrowed";

/// One thing a configuration newly runs or demands less of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Narrowed {
    /// The head line of the changed value, or none for the file as a whole.
    pub line: Option<u32>,
    pub message: String,
    /// An ignore the base had, written anew for a path that moved: the base's entry and the
    /// head's. Flagged only if the change moved nothing from the one to the other.
    pub moved_from: Option<(String, String)>,
}

/// The entry of `olds` (the base's entries the head no longer has) that `new` re-paths: the
/// same file or directory name under another directory (`packages/legacy/**` →
/// `packages/compat/legacy/**`, `tests/a/test_slow.py` → `tests/b/test_slow.py`).
pub(super) fn repathed<'a>(new: &str, olds: impl IntoIterator<Item = &'a str>) -> Option<String> {
    fn tail(p: &str) -> Option<&str> {
        p.trim_end_matches('/')
            .split('/')
            .rev()
            .find(|c| !c.is_empty() && !c.contains('*'))
    }
    let want = tail(new)?;
    olds.into_iter()
        .find(|old| *old != new && tail(old) == Some(want))
        .map(str::to_owned)
}

/// A re-pathed ignore's flag, held until the whole change says whether a path moved from
/// the base's entry to the head's.
#[derive(Debug)]
pub(crate) struct Repathed {
    pub flag: Flag,
    pub from: String,
    pub to: String,
}

impl Repathed {
    /// Whether `old` → `new`, a path the change moved, went from the base's entry to the
    /// head's.
    pub fn moved(&self, old: &RepoPath, new: &RepoPath) -> bool {
        covers(&self.from, old) && covers(&self.to, new)
    }
}

/// Whether an ignore entry (a path, a directory, a glob; perhaps `<rootDir>/`- or
/// `./`-rooted) covers `path`.
fn covers(entry: &str, path: &RepoPath) -> bool {
    let entry = entry
        .trim_start_matches("<rootDir>")
        .trim_start_matches("./")
        .trim_start_matches('/')
        .trim_end_matches('/');
    if entry.is_empty() {
        return false;
    }
    let path = path.to_string();
    if entry.contains('*') {
        return paths::glob_set([entry, &format!("{entry}/**")])
            .is_ok_and(|set| paths::glob_match(&set, &RepoPath::from(path.as_str())));
    }
    path == entry || path.starts_with(&format!("{entry}/")) || path.contains(&format!("/{entry}/"))
}

/// The configuration families, by file name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Format {
    PytestIni,
    PyProject,
    SetupCfg,
    ToxIni,
    CoverageRc,
    PackageJson,
    JestConfig,
    VitestConfig,
    Nyc,
    Mocharc,
    GoTest,
    Cargo,
    Makefile,
    Justfile,
    GithubWorkflow,
    GitlabCi,
    Pom,
    Gradle,
    Conftest,
    Noxfile,
    /// A shell script named for running the tests (`run_tests.sh`, `scripts/test.sh`,
    /// `ci/test-all.bash`).
    TestScript,
}

impl Format {
    fn of(path: &RepoPath) -> Option<Format> {
        if path
            .dirs()
            .any(|d| d == b"node_modules".as_slice() || d == b"vendor".as_slice())
        {
            return None;
        }
        let name = path.file_name();
        let name = std::str::from_utf8(name).ok()?;
        let stem_ext = |stem: &str, exts: &[&str]| {
            name.strip_prefix(stem)
                .and_then(|rest| rest.strip_prefix('.'))
                .is_some_and(|ext| exts.contains(&ext))
        };
        const JS: &[&str] = &["js", "ts", "mjs", "cjs", "mts", "cts", "json"];
        let format = match name {
            "pytest.ini" | ".pytest.ini" => Format::PytestIni,
            "pyproject.toml" => Format::PyProject,
            "setup.cfg" => Format::SetupCfg,
            "tox.ini" => Format::ToxIni,
            ".coveragerc" => Format::CoverageRc,
            "package.json" => Format::PackageJson,
            ".nycrc" | ".nycrc.json" => Format::Nyc,
            ".mocharc.json" | ".mocharc.jsonc" | ".mocharc.js" | ".mocharc.cjs" => Format::Mocharc,
            "Cargo.toml" => Format::Cargo,
            "Makefile" | "makefile" | "GNUmakefile" => Format::Makefile,
            "justfile" | "Justfile" | ".justfile" => Format::Justfile,
            ".gitlab-ci.yml" | ".gitlab-ci.yaml" => Format::GitlabCi,
            "pom.xml" => Format::Pom,
            "conftest.py" => Format::Conftest,
            "noxfile.py" => Format::Noxfile,
            "build.gradle" | "build.gradle.kts" => Format::Gradle,
            _ if stem_ext("jest.config", JS) => Format::JestConfig,
            _ if stem_ext("vitest.config", JS) || stem_ext("vite.config", JS) => {
                Format::VitestConfig
            }
            _ if name.ends_with("_test.go") => Format::GoTest,
            _ if name.ends_with(".mk") => Format::Makefile,
            _ if [".sh", ".bash"].iter().any(|ext| {
                name.strip_suffix(ext)
                    .is_some_and(|stem| !stem.is_empty() && command::is_test_name(stem))
            }) =>
            {
                Format::TestScript
            }
            _ if (name.ends_with(".yml") || name.ends_with(".yaml"))
                && path.parent() == b".github/workflows" =>
            {
                Format::GithubWorkflow
            }
            _ => return None,
        };
        Some(format)
    }
}

/// A test script's commands at the base and the head, compared as one shell: its status is the
/// last command's, or the first failure's under `set -e`.
fn test_script(base: &str, head: &str, path: &RepoPath) -> Vec<Narrowed> {
    let lines = |text: &str| -> Vec<(String, Option<u32>)> {
        text.lines()
            .zip(1u32..)
            .map(|(l, n)| (l.to_owned(), Some(n)))
            .collect()
    };
    let errexit = |text: &str| {
        text.lines().any(|l| {
            let l = l.trim();
            l.strip_prefix("set -")
                .and_then(|rest| rest.split_whitespace().next())
                .is_some_and(|options| options.contains('e'))
                || (l.starts_with("#!") && l.split_whitespace().any(|w| w == "-e"))
        })
    };
    let shell = if errexit(head) {
        command::Shell::ErrExit
    } else {
        command::Shell::LastStatus
    };
    let what = format!("the `{path}` script");
    command::compare_scopes(
        &command::invocations(&lines(base)),
        &command::invocations(&lines(head)),
        shell,
        &what,
        None,
        true,
    )
}

/// True when `path` is a configuration file this rule reads.
#[cfg(test)]
pub(crate) fn reads(path: &RepoPath) -> bool {
    Format::of(path).is_some()
}

/// Compares one configuration file's base and head versions: the flags (rule
/// `runner-narrowed`, with snippets) and the warnings for a version that does not parse.
/// What [`check`] found in one file: flags, re-pathed ignores held for the whole change, and
/// warnings (a file that does not parse).
pub(crate) type Checked = (Vec<Flag>, Vec<Repathed>, Vec<String>);

pub(crate) fn check(change: &Change, old: Option<&[u8]>, new: Option<&[u8]>) -> Checked {
    let path = change.path();
    let Some(format) = Format::of(path) else {
        return (Vec::new(), Vec::new(), Vec::new());
    };
    if paths::is_doc(path) || change.binary {
        return (Vec::new(), Vec::new(), Vec::new());
    }
    let (Some(new_raw), true) = (new, change.kind != ChangeKind::Deleted) else {
        return (Vec::new(), Vec::new(), Vec::new());
    };
    let added = old.is_none() || matches!(change.kind, ChangeKind::Added | ChangeKind::Copied);
    let old_raw = old.unwrap_or_default();
    // Nothing to compare: the lines that matter did not change.
    if !added && change.added.is_empty() && change.removed.is_empty() {
        return (Vec::new(), Vec::new(), Vec::new());
    }
    let text = |raw: &[u8]| {
        let raw = raw.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(raw);
        String::from_utf8_lossy(raw).into_owned()
    };
    let (base, head) = (text(old_raw), text(new_raw));
    let result = match format {
        // A new file is judged only where a line can only narrow (`-k`, `--deselect`).
        _ if added => match format {
            Format::PytestIni | Format::PyProject | Format::SetupCfg | Format::ToxIni => {
                pytest::added(format, &head)
            }
            Format::Conftest => Ok(pytest::conftest("", &head)),
            _ => Ok(Vec::new()),
        },
        Format::PytestIni | Format::PyProject | Format::SetupCfg | Format::ToxIni => {
            pytest::compare(format, &base, &head)
        }
        Format::CoverageRc => pytest::coveragerc(&base, &head),
        Format::PackageJson => node::package_json(&base, &head),
        Format::JestConfig => node::js_config(&base, &head, path, node::Runner::Jest),
        Format::VitestConfig => node::js_config(&base, &head, path, node::Runner::Vitest),
        Format::Nyc => node::nycrc(&base, &head),
        Format::Mocharc => node::mocharc(&base, &head),
        Format::GoTest => Ok(go::compare(&base, &head)),
        Format::Cargo => cargo::compare(&base, &head),
        Format::Makefile => Ok(make::compare(&base, &head, make::Dialect::Make)),
        Format::Justfile => Ok(make::compare(&base, &head, make::Dialect::Just)),
        Format::GithubWorkflow => Ok(ci::github(&base, &head)),
        Format::GitlabCi => Ok(ci::gitlab(&base, &head)),
        Format::Pom => Ok(jvm::pom(&base, &head)),
        Format::Gradle => Ok(jvm::gradle(&base, &head)),
        Format::Conftest => Ok(pytest::conftest(&base, &head)),
        Format::Noxfile => Ok(nox::compare(&base, &head)),
        Format::TestScript => Ok(test_script(&base, &head, path)),
    };
    match result {
        Ok(found) => {
            let mut flags: Vec<Flag> = Vec::new();
            let mut held: Vec<Repathed> = Vec::new();
            for n in found {
                let flag = Flag {
                    rule: Rule::RunnerNarrowed,
                    severity: Rule::RunnerNarrowed.severity(),
                    path: path.clone(),
                    line: n.line,
                    removed_line: None,
                    snippet: n.line.map(|l| snippet(new_raw, l)),
                    message: n.message,
                };
                if let Some((from, to)) = n.moved_from {
                    held.push(Repathed { flag, from, to });
                } else if !flags.contains(&flag) {
                    flags.push(flag);
                }
            }
            (flags, held, Vec::new())
        }
        Err(reason) => (
            Vec::new(),
            Vec::new(),
            vec![format!(
                "runner-narrowed: skipped {path}, which does not parse: {reason}"
            )],
        ),
    }
}

/// Lines of `text`, 1-based, without line endings.
pub(super) fn numbered(text: &str) -> impl Iterator<Item = (u32, &str)> {
    text.lines()
        .enumerate()
        .map(|(i, l)| (u32::try_from(i + 1).unwrap_or(u32::MAX), l))
}

/// A number as a configuration writes it (`80`, `80.5`, `"80%"`).
pub(super) fn number(s: &str) -> Option<f64> {
    s.trim()
        .trim_matches(|c| c == '"' || c == '\'')
        .trim_end_matches('%')
        .trim()
        .parse()
        .ok()
}

/// A TOML key's value as lines of the file: `(key line, [(line text, line)])`, for the key
/// `key` in the `nth` (0-based) table whose header `header` accepts (`[tool.pytest.ini_options]`,
/// `[[test]]`). Only what the value spans: up to its closing bracket or quotes.
pub(super) fn toml_lines(
    text: &str,
    header: impl Fn(&str) -> bool,
    nth: usize,
    key: &str,
) -> Option<(u32, Vec<(String, u32)>)> {
    let mut seen = 0usize;
    let mut inside = false;
    let mut lines = numbered(text);
    while let Some((n, raw)) = lines.next() {
        let t = raw.trim();
        if t.starts_with('[') {
            inside = header(t) && {
                seen += 1;
                seen == nth + 1
            };
            continue;
        }
        if !inside {
            continue;
        }
        let Some(rest) = t.strip_prefix(key) else {
            continue;
        };
        let Some(value) = rest.trim_start().strip_prefix('=') else {
            continue;
        };
        let mut out = vec![(value.to_owned(), n)];
        // Still open: an array's brackets or a multi-line string's quotes.
        let open = |s: &str| {
            let depth = s.matches('[').count() as i64 - s.matches(']').count() as i64;
            let triples = s.matches("\"\"\"").count() + s.matches("'''").count();
            depth > 0 || triples % 2 == 1
        };
        let mut all = value.to_owned();
        while open(&all) {
            let Some((m, l)) = lines.next() else {
                break;
            };
            all.push('\n');
            all.push_str(l);
            out.push((l.to_owned(), m));
        }
        return Some((n, out));
    }
    None
}

/// The line among `lines` that holds `item` quoted (or bare), else the first.
pub(super) fn item_line(lines: &[(String, u32)], item: &str) -> u32 {
    let quoted = [format!("\"{item}\""), format!("'{item}'")];
    lines
        .iter()
        .find(|(l, _)| quoted.iter().any(|q| l.contains(q.as_str())))
        .or_else(|| lines.iter().find(|(l, _)| l.contains(item)))
        .or(lines.first())
        .map_or(0, |(_, n)| *n)
}

/// The rule's registry entry and what the detector runs for it.
pub(crate) const RULE: RuleInfo = RuleInfo {
    rule: Rule::RunnerNarrowed,
    id: "runner-narrowed",
    severity: Severity::Note,
    source: Source::Detector,
    languages: "pytest, tox, nox, coverage.py, Jest, Vitest, Mocha, package.json, Go build constraints, Cargo, Make, just, GitHub Actions, GitLab CI",
    summary: "The test runner, CI or coverage configuration newly runs or demands less.",
    help: "A suite that no longer runs the failing test, or a CI step that may fail, passes \
           without the code working. Flags pytest options that deselect or ignore tests \
           (`-k`, `--deselect`, `--ignore`, `-p no:…`, narrowed `testpaths`, `norecursedirs` \
           over tests, `-m`, `python_files` no longer matching `test_*.py`, a \
           `conftest.py` `collect_ignore` of tests or `pytest_ignore_collect`), Maven \
           `<skipTests>`, `<testFailureIgnore>` or a Surefire `<exclude>`, Gradle \
           `ignoreFailures` or an `exclude` in a test task, Jest/Vitest ignore patterns, `exclude`, `passWithNoTests`, `bail`, \
           Mocha's `spec` narrowed or `forbid-only` turned off, a \
           test script or recipe that can no longer fail (`|| true`, `; exit 0`, `echo`, a \
           `-` prefix) or runs fewer paths (also a nox session's `session.run`), a \
           `_test.go` file newly built only under `ignore` (or, for an existing one, a tag \
           a plain `go test` does not set, `integration`), Cargo `test = false` / `harness = false` on an existing target, a CI \
           test step given `continue-on-error` or `allow_failure` or removed, and a lowered \
           coverage threshold. More verbosity or strictness, wider selections, new jobs and \
           raised thresholds are not flagged.",
    judges_tests: true,
    passes: &[
        Pass::Whole(Reads::ANY, configuration),
        Pass::Change(settle_repathed),
    ],
};

/// The file's flags, its re-pathed ignores held for [`settle_repathed`], and warnings for a
/// version that does not parse.
fn configuration(whole: &Whole<'_>, out: &mut Out<'_>) {
    let (flags, held, warnings) = check(whole.file.change, whole.old, whole.new);
    for flag in flags {
        let f = out.whole_file_finding(flag, KIND);
        out.findings.push(f);
    }
    let held: Vec<(Finding, Repathed)> = held
        .into_iter()
        .map(|r| (out.whole_file_finding(r.flag.clone(), KIND), r))
        .collect();
    if !held.is_empty() {
        out.hold(held);
    }
    out.warnings.extend(warnings);
}

/// The re-pathed ignores of the change that no path it moved explains: an ignore the base
/// had, re-pathed because its file moved, is the same ignore.
fn settle_repathed(across: &mut Across<'_, '_>) -> Vec<(Flag, Option<String>)> {
    let held: Vec<(Finding, Repathed)> = across
        .take::<Vec<(Finding, Repathed)>>()
        .into_iter()
        .flat_map(|(_, h)| h)
        .collect();
    if held.is_empty() {
        return Vec::new();
    }
    let changes = || across.files.iter().map(|f| f.change);
    let gone: Vec<&RepoPath> = changes()
        .filter(|c| c.kind == ChangeKind::Deleted)
        .filter_map(|c| c.old_path.as_ref())
        .collect();
    let arrived: Vec<&RepoPath> = changes()
        .filter(|c| c.kind == ChangeKind::Added)
        .filter_map(|c| c.new_path.as_ref())
        .collect();
    let moves: Vec<(&RepoPath, &RepoPath)> = changes()
        .filter(|c| matches!(c.kind, ChangeKind::Renamed))
        .filter_map(|c| Some((c.old_path.as_ref()?, c.new_path.as_ref()?)))
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

#[cfg(test)]
mod repath_tests;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{Spec::*, lines, messages, run};

    #[test]
    fn files_by_name() {
        for p in [
            "pytest.ini",
            "sub/pyproject.toml",
            "setup.cfg",
            "tox.ini",
            ".coveragerc",
            "web/package.json",
            "jest.config.ts",
            "vitest.config.mts",
            "vite.config.js",
            "pkg/x_test.go",
            "crates/a/Cargo.toml",
            "Makefile",
            "build/rules.mk",
            "justfile",
            ".github/workflows/ci.yml",
            ".gitlab-ci.yml",
            "pom.xml",
            "app/build.gradle.kts",
            "tests/conftest.py",
        ] {
            assert!(reads(&p.into()), "{p}");
        }
        for p in [
            "x.go",
            "workflows/ci.yml",
            ".github/ci.yml",
            "node_modules/a/package.json",
            "jest.setup.js",
            "config.yml",
        ] {
            assert!(!reads(&p.into()), "{p}");
        }
    }

    #[test]
    fn a_shell_test_script_that_can_no_longer_fail() {
        let base = "#!/bin/sh\nset -e\npip install -e .\npython -m pytest tests\n";
        let head = "#!/bin/sh\nset -e\npip install -e .\npython -m pytest tests || true\n";
        for path in ["run_tests.sh", "scripts/test.sh", "ci/test-all.bash"] {
            let r = run(&[Modify(path, base, head)]);
            assert_eq!(lines(&r, Rule::RunnerNarrowed), vec![4], "{path}");
            assert_eq!(
                messages(&r, Rule::RunnerNarrowed),
                [format!(
                    "the `{path}` script can no longer fail: `pytest` is followed by `|| true`"
                )]
            );
        }
        // Without `set -e` the last command's status is the script's: an echo after it.
        let last = "#!/bin/sh\ngo test ./...\n";
        let r = run(&[Modify(
            "test.sh",
            last,
            "#!/bin/sh\ngo test ./...\necho done\n",
        )]);
        assert_eq!(lines(&r, Rule::RunnerNarrowed), vec![3]);
        // Lookalikes: a step that is no test, a script not named for tests, a test script that
        // still fails.
        let cleanup = "#!/bin/sh\nset -e\nrm -r build || true\npython -m pytest tests\n";
        assert!(
            lines(
                &run(&[Modify("run_tests.sh", base, cleanup)]),
                Rule::RunnerNarrowed
            )
            .is_empty()
        );
        assert!(
            lines(
                &run(&[Modify("deploy.sh", base, head)]),
                Rule::RunnerNarrowed
            )
            .is_empty()
        );
        let stricter = "#!/bin/sh\nset -eu\npip install -e .\npython -m pytest -x tests\n";
        assert!(
            lines(
                &run(&[Modify("run_tests.sh", base, stricter)]),
                Rule::RunnerNarrowed
            )
            .is_empty()
        );
    }

    #[test]
    fn a_file_that_does_not_parse_is_a_warning() {
        let r = run(&[Modify(
            "package.json",
            "{\"scripts\": {\"test\": \"jest\"}}",
            "{\"scripts\": {\"test\": \"jest || true\"",
        )]);
        assert!(lines(&r, Rule::RunnerNarrowed).is_empty());
        assert_eq!(r.warnings.len(), 1, "{:?}", r.warnings);
        assert!(r.warnings[0].contains("package.json"), "{:?}", r.warnings);
    }

    #[test]
    fn inline_allow_and_turning_it_off() {
        use crate::{Detector, Options, RuleSetting};
        let old = "[pytest]\naddopts = -q\n";
        let new = "[pytest]\n# forgeward: allow runner-narrowed -- flaky upstream, see #12\naddopts = -q --deselect tests/test_a.py::test_b\n";
        let r = run(&[Modify("pytest.ini", old, new)]);
        assert!(r.flags.is_empty(), "{:?}", r.flags);
        assert_eq!(r.allowed.len(), 1);
        let mut options = Options::default();
        options.rules.insert(Rule::RunnerNarrowed, RuleSetting::Off);
        let detector = Detector::new(&options).expect("valid options");
        let new = "[pytest]\naddopts = -q --deselect tests/test_a.py::test_b\n";
        let r = crate::testing::run_with(&detector, &[Modify("pytest.ini", old, new)]);
        assert!(r.flags.is_empty() && r.allowed.is_empty());
        let r = run(&[Modify("pytest.ini", old, new)]);
        assert_eq!(lines(&r, Rule::RunnerNarrowed), vec![2]);
        assert_eq!(
            r.flags[0].snippet.as_deref(),
            Some("addopts = -q --deselect tests/test_a.py::test_b")
        );
    }

    #[test]
    fn added_and_deleted_files() {
        // A new configuration is judged only for pure selections.
        let r = run(&[Add(
            "pytest.ini",
            "[pytest]\naddopts = --ignore=docs -p no:warnings\n",
        )]);
        assert!(lines(&r, Rule::RunnerNarrowed).is_empty(), "{:?}", r.flags);
        let r = run(&[Add(
            "pytest.ini",
            "[pytest]\naddopts = -k 'not test_parse'\n",
        )]);
        assert_eq!(lines(&r, Rule::RunnerNarrowed), vec![2]);
        let r = run(&[Delete(
            ".github/workflows/ci.yml",
            "jobs:\n  t:\n    steps:\n      - run: pytest\n",
        )]);
        assert!(r.flags.is_empty());
    }
}

#[cfg(test)]
mod garbage {
    use crate::change::{Change, ChangeKind};

    #[test]
    fn garbage_never_panics() {
        const PIECES: &[&str] = &[
            "[",
            "]",
            "{",
            "}",
            "\"",
            "'",
            ":",
            "=",
            "\n",
            "  ",
            "\t",
            "-",
            "- ",
            "#",
            "|",
            ">",
            "test",
            "pytest",
            "jest",
            "||",
            "true",
            "addopts",
            "jobs",
            "steps",
            "run",
            "script",
            "continue-on-error",
            "[pytest]",
            "[[test]]",
            "harness",
            "false",
            "//go:build",
            "!",
            "&&",
            "(",
            ")",
            "$(",
            "${",
            "exit 0",
            "npm",
            "go test",
            "<skipTests>",
            "</skipTests>",
            "<plugin>",
            "<!--",
            "test {",
            "ignoreFailures",
            ",",
            "0",
            "90",
            "\\",
        ];
        let paths = [
            "pytest.ini",
            "pyproject.toml",
            "setup.cfg",
            "tox.ini",
            ".coveragerc",
            "package.json",
            "jest.config.js",
            "vitest.config.ts",
            ".nycrc",
            "a_test.go",
            "Cargo.toml",
            "Makefile",
            "justfile",
            ".github/workflows/ci.yml",
            ".gitlab-ci.yml",
            "pom.xml",
            "build.gradle",
        ];
        let mut seed: u64 = 0x2545_F491_4F6C_DD1D;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let mut text = || -> String {
            let len = (next() % 60) as usize;
            (0..len)
                .map(|_| PIECES[(next() % PIECES.len() as u64) as usize])
                .collect()
        };
        for round in 0..4000 {
            let (old, new) = (text(), text());
            let path = paths[round % paths.len()];
            let change = Change {
                kind: ChangeKind::Modified,
                old_path: Some(path.into()),
                new_path: Some(path.into()),
                added: std::iter::once(1..200).collect(),
                removed: std::iter::once(1..200).collect(),
                binary: false,
                too_large: None,
            };
            let _ = super::check(&change, Some(old.as_bytes()), Some(new.as_bytes()));
        }
    }
}
