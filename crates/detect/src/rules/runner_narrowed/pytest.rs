//! pytest, tox and coverage.py settings: `addopts`, `testpaths`, `norecursedirs`, tox
//! `commands`, and `fail_under`, from `pytest.ini`, `pyproject.toml`, `setup.cfg`, `tox.ini`
//! and `.coveragerc`.

use super::command::{self, Shell};
use super::ini::Ini;
use super::runners::Runner;
use super::{Format, Narrowed, item_line, toml_lines};

/// A value as lines of text, each with its line.
type Lines = Vec<(String, Option<u32>)>;

/// The settings the rule compares, however the file spells them.
#[derive(Debug, Default)]
struct Settings {
    /// `(key line, value lines)`.
    addopts: Option<(u32, Lines)>,
    testpaths: Option<Vec<(String, u32)>>,
    norecursedirs: Option<Vec<(String, u32)>>,
    fail_under: Option<(f64, u32)>,
    /// `python_files`, `python_classes`, `python_functions`: the names pytest collects.
    collected: Vec<(&'static str, Vec<(String, u32)>)>,
    /// tox environments: `(name, header line, commands)`.
    tox: Vec<(String, u32, Lines)>,
}

fn from_ini(format: Format, text: &str) -> Settings {
    let ini = Ini::parse(text);
    let pytest: &[&str] = match format {
        Format::PytestIni => &["pytest", "tool:pytest"],
        Format::SetupCfg => &["tool:pytest"],
        Format::ToxIni => &["pytest"],
        _ => &[],
    };
    let coverage: &[&str] = match format {
        Format::CoverageRc => &["report", "coverage:report"],
        _ => &["coverage:report"],
    };
    let mut s = Settings {
        addopts: ini.get(pytest, "addopts").map(|e| (e.line, e.lines())),
        testpaths: ini.get(pytest, "testpaths").map(|e| e.items()),
        norecursedirs: ini.get(pytest, "norecursedirs").map(|e| e.items()),
        fail_under: ini.get(coverage, "fail_under").and_then(|e| {
            let (v, l) = e.values.first()?;
            Some((super::number(v)?, *l))
        }),
        collected: COLLECTED
            .iter()
            .filter_map(|(key, _)| Some((*key, ini.get(pytest, key)?.items())))
            .collect(),
        tox: Vec::new(),
    };
    if format == Format::ToxIni {
        for (name, line, entries) in ini.sections(|n| n == "testenv" || n.starts_with("testenv:")) {
            if let Some(e) = entries.iter().find(|e| e.key == "commands") {
                s.tox.push((name.to_owned(), line, e.lines()));
            }
        }
    }
    s
}

fn from_toml(text: &str) -> Result<Settings, String> {
    let value: toml::Value =
        toml::from_str(text).map_err(|e| forgeward_text::one_line(&e.to_string()))?;
    let tool = value.get("tool");
    let pytest_header = |h: &str| h == "[tool.pytest.ini_options]";
    let options = tool
        .and_then(|t| t.get("pytest"))
        .and_then(|p| p.get("ini_options"));
    let strings = |key: &str| -> Option<(u32, Vec<(String, u32)>)> {
        let v = options?.get(key)?;
        let (key_line, lines) = toml_lines(text, pytest_header, 0, key).unwrap_or((0, Vec::new()));
        let items: Vec<String> = match v {
            toml::Value::String(s) => vec![s.clone()],
            toml::Value::Array(a) => a
                .iter()
                .filter_map(|i| i.as_str().map(str::to_owned))
                .collect(),
            _ => return None,
        };
        Some((
            key_line,
            items
                .into_iter()
                .map(|i| {
                    let l = item_line(&lines, &i);
                    (i, l)
                })
                .collect(),
        ))
    };
    let list = |key: &str| -> Option<Vec<(String, u32)>> {
        let (_, items) = strings(key)?;
        Some(
            items
                .into_iter()
                .flat_map(|(i, l)| {
                    i.split_whitespace()
                        .map(|p| (p.to_owned(), l))
                        .collect::<Vec<_>>()
                })
                .collect(),
        )
    };
    let addopts = strings("addopts").map(|(key_line, items)| {
        // A multi-line string: each of its lines on its own line of the file.
        let lines: Lines = if items.len() == 1 && items[0].0.contains('\n') {
            let first = toml_lines(text, pytest_header, 0, "addopts")
                .map(|(_, l)| l)
                .unwrap_or_default();
            let starts_next = first
                .first()
                .is_some_and(|(v, _)| matches!(v.trim(), "\"\"\"" | "'''"));
            items[0]
                .0
                .lines()
                .enumerate()
                .map(|(k, l)| {
                    (
                        l.to_owned(),
                        Some(key_line + k as u32 + u32::from(starts_next)),
                    )
                })
                .collect()
        } else {
            items.into_iter().map(|(i, l)| (i, Some(l))).collect()
        };
        (key_line, lines)
    });
    let fail_under = tool
        .and_then(|t| t.get("coverage"))
        .and_then(|c| c.get("report"))
        .and_then(|r| r.get("fail_under"))
        .and_then(|v| v.as_float().or_else(|| v.as_integer().map(|i| i as f64)))
        .map(|n| {
            let line = toml_lines(text, |h| h == "[tool.coverage.report]", 0, "fail_under")
                .map_or(0, |(l, _)| l);
            (n, line)
        });
    Ok(Settings {
        addopts,
        testpaths: list("testpaths"),
        norecursedirs: list("norecursedirs"),
        fail_under,
        collected: COLLECTED
            .iter()
            .filter_map(|(key, _)| Some((*key, list(key)?)))
            .collect(),
        tox: Vec::new(),
    })
}

fn settings(format: Format, text: &str) -> Result<Settings, String> {
    match format {
        Format::PyProject => from_toml(text),
        _ => Ok(from_ini(format, text)),
    }
}

/// The settings that name what pytest collects, with the pattern of their default that every
/// test suite relies on.
const COLLECTED: &[(&str, &str)] = &[
    ("python_files", "test_*.py"),
    ("python_classes", "Test"),
    ("python_functions", "test"),
];

/// A directory name or glob that covers tests.
fn covers_tests(entry: &str) -> bool {
    let e = entry.to_ascii_lowercase();
    let last = e.trim_end_matches('/').rsplit('/').next().unwrap_or(&e);
    last.contains("test")
        || last.contains("spec")
        || matches!(last, "e2e" | "integration" | "unit" | "functional" | "*")
}

pub(super) fn compare(format: Format, base: &str, head: &str) -> Result<Vec<Narrowed>, String> {
    let h = settings(format, head)?;
    let Ok(b) = settings(format, base) else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    if let Some((key_line, head_opts)) = &h.addopts {
        let base_opts = b
            .addopts
            .as_ref()
            .map(|(_, l)| l.clone())
            .unwrap_or_default();
        let bi = command::options(Runner::Pytest, "pytest", &base_opts);
        let mut hi = command::options(Runner::Pytest, "pytest", head_opts);
        hi.line = hi.line.or(Some(*key_line));
        out.extend(command::compare_options(&bi, &hi, "`addopts`"));
    } else if let Some((_, base_opts)) = &b.addopts {
        // `--cov-fail-under` dropped with the whole `addopts`.
        let bi = command::options(Runner::Pytest, "pytest", base_opts);
        let hi = command::options(Runner::Pytest, "pytest", &[]);
        out.extend(
            command::compare_options(&bi, &hi, "`addopts`")
                .into_iter()
                .filter(|n| n.message.contains("coverage threshold")),
        );
    }
    for (key, default) in COLLECTED {
        let Some((_, hp)) = h.collected.iter().find(|(k, _)| k == key) else {
            continue;
        };
        let base: Vec<String> = match b.collected.iter().find(|(k, _)| k == key) {
            Some((_, bp)) => bp.iter().map(|(p, _)| p.clone()).collect(),
            None => vec![(*default).to_owned()],
        };
        for p in base {
            if !hp.iter().any(|(q, _)| *q == p || q == "*") {
                out.push(Narrowed {
                    moved_from: None,
                    line: hp.first().map(|(_, l)| *l),
                    message: format!(
                        "`{key}` no longer matches `{p}`: tests named so are no longer collected"
                    ),
                });
            }
        }
    }
    if let (Some(bp), Some(hp)) = (&b.testpaths, &h.testpaths) {
        for (p, _) in bp {
            // A directory split into several of its own (`tests` into `tests/unit` and
            // `tests/integration`): its tests moved there.
            let inside = |q: &str| q.starts_with(&format!("{}/", p.trim_end_matches('/')));
            if hp.len() >= 2 && hp.iter().all(|(q, _)| inside(q)) {
                continue;
            }
            if !hp.iter().any(|(q, _)| command::covers(q, p)) {
                out.push(Narrowed {
                    moved_from: None,
                    line: hp.first().map(|(_, l)| *l),
                    message: format!(
                        "`testpaths` no longer includes `{p}`: the tests there no longer run"
                    ),
                });
            }
        }
    }
    if let Some(hn) = &h.norecursedirs {
        let had = b.norecursedirs.clone().unwrap_or_default();
        for (entry, line) in hn {
            if covers_tests(entry) && !had.iter().any(|(e, _)| e == entry) {
                out.push(Narrowed {
 moved_from: None,
                    line: Some(*line),
                    message: format!(
                        "`norecursedirs` newly skips `{entry}`: the tests there are no longer collected"
                    ),
                });
            }
        }
    }
    out.extend(fail_under(b.fail_under, h.fail_under));
    for (name, header, commands) in &h.tox {
        let Some((_, _, base_commands)) = b.tox.iter().find(|(n, _, _)| n == name) else {
            continue;
        };
        let what = format!("tox environment `{name}`");
        out.extend(command::compare_scopes(
            &command::invocations(&strip_dash(base_commands)),
            &command::invocations(&strip_dash(commands)),
            Shell::ErrExit,
            &what,
            Some(*header),
            true,
        ));
        // tox ignores the exit status of a command written `- cmd`.
        let dashed = |lines: &Lines| -> Vec<(String, Option<u32>)> {
            lines
                .iter()
                .filter(|(l, _)| l.starts_with('-') && !l.starts_with("--"))
                .filter(|(l, _)| !command::invocations(&[(l[1..].to_owned(), None)]).is_empty())
                .cloned()
                .collect()
        };
        let before = dashed(base_commands).len();
        for (l, line) in dashed(commands).into_iter().skip(before) {
            out.push(Narrowed {
                moved_from: None,
                line,
                message: format!(
                    "{what} newly ignores the failure of `{}` (the `-` prefix)",
                    l[1..].trim()
                ),
            });
        }
    }
    Ok(out)
}

fn strip_dash(lines: &Lines) -> Lines {
    lines
        .iter()
        .map(|(l, n)| match l.strip_prefix('-') {
            Some(rest) if !rest.starts_with('-') => (rest.trim_start().to_owned(), *n),
            _ => (l.clone(), *n),
        })
        .collect()
}

fn fail_under(base: Option<(f64, u32)>, head: Option<(f64, u32)>) -> Option<Narrowed> {
    let (b, _) = base?;
    match head {
        Some((h, line)) if h < b => Some(Narrowed {
            moved_from: None,
            line: Some(line),
            message: format!(
                "`fail_under` lowered from {b} to {h}: the coverage check demands less"
            ),
        }),
        None if b > 0.0 => Some(Narrowed {
            moved_from: None,
            line: None,
            message: format!("`fail_under` ({b}) was removed: coverage is no longer checked"),
        }),
        _ => None,
    }
}

/// A new pytest configuration: only options that can only deselect (`-k`, `--deselect`,
/// `--lf`) are a sign in a file that had no base.
pub(super) fn added(format: Format, head: &str) -> Result<Vec<Narrowed>, String> {
    let h = settings(format, head)?;
    let Some((key_line, opts)) = &h.addopts else {
        return Ok(Vec::new());
    };
    let bi = command::options(Runner::Pytest, "pytest", &[]);
    let mut hi = command::options(Runner::Pytest, "pytest", opts);
    hi.line = hi.line.or(Some(*key_line));
    Ok(command::compare_options(&bi, &hi, "`addopts`")
        .into_iter()
        .filter(|n| {
            ["`-k ", "`--deselect ", "`--lf`", "`--last-failed`"]
                .iter()
                .any(|o| n.message.contains(o))
        })
        .collect())
}

/// `conftest.py`: test files newly left out of collection (`collect_ignore`,
/// `collect_ignore_glob`, at the module's top level), or a `pytest_ignore_collect` hook newly
/// defined. (Collected tests dropped in `pytest_collection_modifyitems` are `outcome-patched`'s.)
pub(super) fn conftest(base: &str, head: &str) -> Vec<Narrowed> {
    let mut out = Vec::new();
    let (b, h) = (ignored(base), ignored(head));
    for (entry, line) in &h {
        if !b.iter().any(|(e, _)| e == entry) && names_tests(entry) {
            out.push(Narrowed {
 moved_from: None,
                line: Some(*line),
                message: format!(
                    "`conftest.py` newly keeps `{entry}` from being collected: the tests there no longer run"
                ),
            });
        }
    }
    let hook = "pytest_ignore_collect";
    let lines = |text: &str| -> Vec<u32> {
        super::numbered(text)
            .filter(|(_, l)| mentions_hook(l, hook))
            .map(|(n, _)| n)
            .collect()
    };
    if lines(base).is_empty()
        && let Some(&line) = lines(head).first()
    {
        out.push(Narrowed {
            moved_from: None,
            line: Some(line),
            message: format!(
                "`conftest.py` newly defines `{hook}`: it can leave test files uncollected"
            ),
        });
    }
    out
}

fn mentions_hook(line: &str, hook: &str) -> bool {
    let code = line.split('#').next().unwrap_or(line);
    code.match_indices(hook).any(|(i, _)| {
        let after = code[i + hook.len()..].trim_start();
        after.starts_with('(') && !code[..i].ends_with(|c: char| c.is_alphanumeric() || c == '_')
    })
}

/// The entries of `collect_ignore` and `collect_ignore_glob` set at the module's top level
/// (one set under an `if` is a condition on where the tests run).
fn ignored(text: &str) -> Vec<(String, u32)> {
    let mut out = Vec::new();
    let mut open = false;
    for (n, raw) in super::numbered(text) {
        let code = raw.split('#').next().unwrap_or(raw);
        let starts = ["collect_ignore", "collect_ignore_glob"].iter().any(|k| {
            code.strip_prefix(k).is_some_and(|rest| {
                let rest = rest.trim_start();
                rest.starts_with('=')
                    || rest.starts_with("+=")
                    || rest.starts_with(".append(")
                    || rest.starts_with(".extend(")
            })
        });
        if !(starts || open) {
            continue;
        }
        for piece in code.split(['"', '\'']).skip(1).step_by(2) {
            out.push((piece.to_owned(), n));
        }
        let depth =
            code.matches(['[', '(']).count() as i64 - code.matches([']', ')']).count() as i64;
        open = if starts {
            depth > 0
        } else {
            open && depth >= 0 && !code.contains([']', ')'])
        };
    }
    out
}

/// An entry that names tests: a test file, or a directory of them.
fn names_tests(entry: &str) -> bool {
    let last = entry
        .trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap_or(entry);
    (last.ends_with(".py") && (last.starts_with("test") || last.ends_with("_test.py")))
        || (!last.contains('.') && covers_tests(last))
}

pub(super) fn coveragerc(base: &str, head: &str) -> Result<Vec<Narrowed>, String> {
    let b = from_ini(Format::CoverageRc, base);
    let h = from_ini(Format::CoverageRc, head);
    Ok(fail_under(b.fail_under, h.fail_under).into_iter().collect())
}

#[cfg(test)]
mod tests {
    use crate::Rule;
    use crate::testing::{self, Spec::*, lines, run};

    fn flagged(path: &str, old: &str, new: &str) -> Vec<u32> {
        lines(&run(&[Modify(path, old, new)]), Rule::RunnerNarrowed)
    }

    fn messages(path: &str, old: &str, new: &str) -> Vec<String> {
        testing::messages(&run(&[Modify(path, old, new)]), Rule::RunnerNarrowed)
    }

    #[test]
    fn pytest_ini_addopts() {
        let old = "[pytest]\naddopts = -q\ntestpaths = tests\n";
        for (new, line) in [
            (
                "[pytest]\naddopts = -q -k \"not test_parse\"\ntestpaths = tests\n",
                2,
            ),
            (
                "[pytest]\naddopts = -q --deselect tests/test_a.py::test_b\ntestpaths = tests\n",
                2,
            ),
            (
                "[pytest]\naddopts =\n    -q\n    --ignore=tests/test_parser.py\ntestpaths = tests\n",
                4,
            ),
            (
                "[pytest]\naddopts = -q --ignore-glob=*_slow.py\ntestpaths = tests\n",
                2,
            ),
            (
                "[pytest]\naddopts = -q -p no:asyncio\ntestpaths = tests\n",
                2,
            ),
        ] {
            assert_eq!(flagged("pytest.ini", old, new), vec![line], "{new}");
        }
        assert_eq!(
            messages(
                "pytest.ini",
                old,
                "[pytest]\naddopts = -q --deselect tests/test_a.py::test_b\ntestpaths = tests\n"
            ),
            vec![
                "`addopts` newly passes `--deselect tests/test_a.py::test_b` to `pytest`, which deselects tests"
            ]
        );
        for new in [
            "[pytest]\naddopts = -q -v --strict-markers -ra\ntestpaths = tests\n",
            "[pytest]\naddopts = -q -p no:cacheprovider\ntestpaths = tests\n",
            "[pytest]\naddopts = -q\ntestpaths = tests\nmarkers = slow\n",
            "[pytest]\n# addopts = -k nothing\naddopts = -q\ntestpaths = tests\n",
        ] {
            assert!(flagged("pytest.ini", old, new).is_empty(), "{new}");
        }
    }

    #[test]
    fn testpaths_and_norecursedirs() {
        let old = "[tool:pytest]\ntestpaths =\n    tests/unit\n    tests/integration\nnorecursedirs = .git build\n";
        let new = "[tool:pytest]\ntestpaths =\n    tests/unit\nnorecursedirs = .git build\n";
        assert_eq!(
            messages("setup.cfg", old, new),
            vec![
                "`testpaths` no longer includes `tests/integration`: the tests there no longer run"
            ]
        );
        let new = "[tool:pytest]\ntestpaths = tests\nnorecursedirs = .git build\n";
        assert!(flagged("setup.cfg", old, new).is_empty(), "wider");
        let new = "[tool:pytest]\ntestpaths =\n    tests/unit\n    tests/integration\nnorecursedirs = .git build tests/integration\n";
        assert_eq!(flagged("setup.cfg", old, new), vec![5]);
        let new = "[tool:pytest]\ntestpaths =\n    tests/unit\n    tests/integration\nnorecursedirs = .git build node_modules\n";
        assert!(flagged("setup.cfg", old, new).is_empty());
    }

    #[test]
    fn pyproject() {
        let old = "[project]\nname = \"x\"\n\n[tool.pytest.ini_options]\naddopts = \"-ra\"\ntestpaths = [\"tests\", \"integration\"]\n\n[tool.coverage.report]\nfail_under = 90\n";
        let new = "[project]\nname = \"x\"\n\n[tool.pytest.ini_options]\naddopts = \"-ra --deselect tests/test_x.py::test_y\"\ntestpaths = [\"tests\"]\n\n[tool.coverage.report]\nfail_under = 60\n";
        assert_eq!(flagged("pyproject.toml", old, new), vec![5, 6, 9]);
        let new = "[project]\nname = \"x\"\n\n[tool.pytest.ini_options]\naddopts = [\n  \"-ra\",\n  \"-k\", \"not slow\",\n]\ntestpaths = [\"tests\", \"integration\"]\n\n[tool.coverage.report]\nfail_under = 95\n";
        assert_eq!(flagged("pyproject.toml", old, new), vec![7]);
        let new = "[project]\nname = \"x\"\n\n[tool.pytest.ini_options]\naddopts = \"\"\"\n-ra\n--cov-fail-under=50\n\"\"\"\ntestpaths = [\"tests\", \"integration\"]\n";
        let m = messages("pyproject.toml", old, new);
        assert_eq!(
            m,
            vec!["`fail_under` (90) was removed: coverage is no longer checked"],
            "{m:?}"
        );
        // Unrelated sections and a raised threshold.
        let new = old
            .replace("name = \"x\"", "name = \"y\"")
            .replace("90", "92");
        assert!(flagged("pyproject.toml", old, &new).is_empty());
    }

    #[test]
    fn coverage_thresholds() {
        assert_eq!(
            flagged(
                ".coveragerc",
                "[run]\nbranch = True\n[report]\nfail_under = 85\n",
                "[run]\nbranch = True\n[report]\nfail_under = 40\n"
            ),
            vec![4]
        );
        assert!(
            flagged(
                ".coveragerc",
                "[report]\nfail_under = 85\n",
                "[report]\nfail_under = 90\n"
            )
            .is_empty()
        );
        assert_eq!(
            flagged(
                "tox.ini",
                "[pytest]\naddopts = --cov --cov-fail-under=80\n",
                "[pytest]\naddopts = --cov --cov-fail-under=10\n"
            ),
            vec![2]
        );
    }

    #[test]
    fn tox_commands() {
        let old = "[tox]\nenvlist = py3\n\n[testenv]\ncommands =\n    pytest tests\n    mypy src\n";
        assert_eq!(
            flagged(
                "tox.ini",
                old,
                "[tox]\nenvlist = py3\n\n[testenv]\ncommands =\n    - pytest tests\n    mypy src\n"
            ),
            vec![6]
        );
        assert_eq!(
            flagged(
                "tox.ini",
                old,
                "[tox]\nenvlist = py3\n\n[testenv]\ncommands =\n    pytest tests/unit/test_a.py\n    mypy src\n"
            ),
            vec![6]
        );
        assert_eq!(
            flagged(
                "tox.ini",
                old,
                "[tox]\nenvlist = py3\n\n[testenv]\ncommands =\n    mypy src\n"
            ),
            vec![4]
        );
        assert!(flagged("tox.ini", old, "[tox]\nenvlist = py3,py312\n\n[testenv]\ncommands =\n    pytest -v {posargs} tests\n    mypy src\n").is_empty());
    }

    #[test]
    fn conftest_collection() {
        let p = "tests/conftest.py";
        let old = "import pytest\n\n\n@pytest.fixture\ndef numbers():\n    return [1, 2, 3]\n";
        for (new, line) in [
            (format!("{old}\ncollect_ignore = [\"test_calc.py\"]\n"), 8),
            (
                format!(
                    "{old}\ncollect_ignore_glob = [\n    \"legacy/*.py\",\n    \"integration\",\n]\n"
                ),
                10,
            ),
            (
                format!(
                    "{old}\n\ndef pytest_ignore_collect(collection_path, config):\n    return collection_path.name == \"test_calc.py\"\n"
                ),
                9,
            ),
        ] {
            assert_eq!(flagged(p, old, &new), vec![line], "{new}");
        }
        // Not tests; under a condition; markers added to items; kept from the base.
        for new in [
            format!("{old}\ncollect_ignore = [\"setup.py\", \"docs/conf.py\"]\n"),
            format!(
                "{old}\nif sys.version_info < (3, 10):\n    collect_ignore = [\"test_match.py\"]\n"
            ),
            format!(
                "{old}\n\ndef pytest_collection_modifyitems(config, items):\n    for item in items:\n        item.add_marker(pytest.mark.slow)\n"
            ),
        ] {
            assert!(flagged(p, old, &new).is_empty(), "{new}");
        }
        // A new conftest that keeps a test file out.
        let r = crate::testing::run(&[Add(p, "collect_ignore = [\"test_calc.py\"]\n")]);
        assert_eq!(lines(&r, Rule::RunnerNarrowed), vec![1]);
        let had = format!("{old}\ncollect_ignore = [\"test_calc.py\"]\n");
        assert!(flagged(p, &had, &had.replace("\"]", "\", \"setup.py\"]")).is_empty());
    }

    #[test]
    fn collection_names_markers_and_test_data() {
        let old = "[pytest]\naddopts = -ra\ntestpaths = tests\n";
        assert_eq!(
            messages(
                "pytest.ini",
                old,
                "[pytest]\naddopts = -ra\ntestpaths = tests\npython_files = check_*.py\n"
            ),
            [
                "`python_files` no longer matches `test_*.py`: tests named so are no longer collected"
            ]
        );
        // Wider: the default kept beside a project's own pattern.
        assert!(
            flagged(
                "pytest.ini",
                old,
                "[pytest]\naddopts = -ra\ntestpaths = tests\npython_files = test_*.py check_*.py\n"
            )
            .is_empty()
        );
        let toml = "[tool.pytest.ini_options]\npython_functions = [\"test_*\", \"check_*\"]\n";
        assert_eq!(
            flagged(
                "pyproject.toml",
                toml,
                "[tool.pytest.ini_options]\npython_functions = [\"test_*\"]\n"
            ),
            vec![2]
        );
        // A marker expression deselects the tests it marks.
        assert_eq!(
            flagged(
                "pytest.ini",
                old,
                "[pytest]\naddopts = -ra -m \"not integration\"\ntestpaths = tests\n"
            ),
            vec![2]
        );
        // Test data ignored is no test ignored.
        for data in [
            "tests/fixtures",
            "tests/testdata/",
            "tests/unit/__fixtures__",
        ] {
            let new = format!("[pytest]\naddopts = -ra --ignore={data}\ntestpaths = tests\n");
            assert!(flagged("pytest.ini", old, &new).is_empty(), "{data}");
        }
        assert_eq!(
            flagged(
                "pytest.ini",
                old,
                "[pytest]\naddopts = -ra --ignore=tests/test_parser.py\ntestpaths = tests\n"
            ),
            vec![2]
        );
        // A directory split into its parts; one part of it kept is narrower.
        assert!(
            flagged(
                "pytest.ini",
                old,
                "[pytest]\naddopts = -ra\ntestpaths = tests/unit tests/integration\n"
            )
            .is_empty()
        );
        assert_eq!(
            flagged(
                "pytest.ini",
                old,
                "[pytest]\naddopts = -ra\ntestpaths = tests/unit\n"
            ),
            vec![3]
        );
    }
}
