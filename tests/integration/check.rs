//! `forgeward check`: what a branch adds, reported in each format, with configuration, through
//! git's renames and re-encodings, and on odd file names and contents.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use serde_json::{Value, json};

use crate::util::{Output, TEST_X, TEST_X_SKIPPED, TestRepo, lines};

/// A text report's lines after its first, which names the range compared.
fn report_lines(out: &Output) -> Vec<&str> {
    let lines = out.stdout_lines();
    assert!(
        lines.first().is_some_and(|l| l.starts_with("checked ")),
        "the report opens with the range:\n{out:?}"
    );
    lines[1..].to_vec()
}

/// Production code as `main` has it.
const APP: &str = "\
import yaml


def load(text):
    return yaml.safe_load(text)
";

/// The same code, carrying on without its dependency (`except ImportError` on line 3).
const APP_STUBBED: &str = "\
try:
    import yaml
except ImportError:
    yaml = None


def load(text):
    return yaml.safe_load(text)
";

const REQUIREMENTS: &str = "sqlglot>=20\nPyYAML==6.0\n";

const SKIP_LINE: &str =
    "tests/test_x.py:3: skip-marker: newly marks a test skipped: `pytest.mark.skip`";
const STUB_LINE: &str = "src/app.py:3: stubbed-import: newly carries on when `yaml` fails to import: `except ImportError` closes a `try` that only imports";
const SHADOW_LINE: &str = "sqlglot.py: shadow-module: new module `sqlglot.py` is named like the dependency `sqlglot` (declared in requirements.txt) and would be imported instead of it";
const BACKUP_LINE: &str =
    "src/app.py.bak: stray-backup: new file `src/app.py.bak` looks like a backup copy (`.bak`)";

/// A repository whose `main` holds a small, honest Python project.
fn project() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("tests/test_x.py", TEST_X)
        .write("src/app.py", APP)
        .write("requirements.txt", REQUIREMENTS);
    repo.commit("a small project");
    repo
}

/// `project()` with a branch `agent` (checked out) that games the tests in four ways at once.
fn gamed_branch() -> TestRepo {
    let repo = project();
    repo.branch("agent");
    repo.write("tests/test_x.py", TEST_X_SKIPPED)
        .write("src/app.py", APP_STUBBED)
        .write("sqlglot.py", "def parse(sql):\n    return []\n")
        .write("src/app.py.bak", APP);
    repo.commit("make the tests pass");
    repo
}

/// A repository with `base` committed on `main`, and a branch `agent` on top of it whose one
/// commit is whatever `change` does to the working tree.
fn change_on_branch(base: &[(&str, &str)], change: impl FnOnce(&TestRepo)) -> TestRepo {
    let repo = TestRepo::new();
    for (path, content) in base {
        repo.write(path, content);
    }
    repo.commit("base");
    repo.branch("agent");
    change(&repo);
    repo.commit("change");
    repo
}

#[test]
fn flags_what_a_branch_adds_to_main() {
    let repo = gamed_branch();

    // No upstream: the range starts where the branch left `main`.
    let out = repo.forgeward(&["check"]);

    assert_eq!(out.code, 1, "{out:?}");
    assert_eq!(
        report_lines(&out),
        [
            SHADOW_LINE,
            STUB_LINE,
            BACKUP_LINE,
            SKIP_LINE,
            "4 files, +12 lines: 4 flags"
        ],
    );
    assert_eq!(out.stderr, "");
}

#[test]
fn warn_mode_reports_the_same_flags_and_exits_0() {
    let repo = gamed_branch();

    let block = repo.forgeward(&["check"]);
    let warn = repo.forgeward(&["check", "--mode", "warn"]);

    assert_eq!(warn.code, 0, "{warn:?}");
    assert_eq!(warn.stdout, block.stdout);
}

#[test]
fn a_clean_change_exits_0() {
    let repo = project();
    repo.branch("fix");
    repo.write(
        "src/app.py",
        APP.replace("safe_load(text)", "safe_load(text) or {}"),
    );
    repo.commit("an honest fix");

    let out = repo.forgeward(&["check"]);

    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(report_lines(&out), ["1 file, +1 line: 0 flags"]);
}

#[test]
fn explicit_base_and_head_name_the_range() {
    let repo = gamed_branch();
    repo.checkout("main");

    let whole = repo.forgeward(&["check", "--base", "main", "--head", "agent"]);
    let nothing = repo.forgeward(&["check", "--base", "agent", "--head", "agent"]);

    assert_eq!(whole.code, 1, "{whole:?}");
    assert_eq!(report_lines(&whole).len(), 5, "{whole:?}");
    assert_eq!(nothing.code, 0, "{nothing:?}");
    assert_eq!(
        nothing.stdout,
        format!(
            "nothing to compare: `agent` and `agent` are the same commit ({})\n",
            &repo.rev("agent")[..7]
        )
    );
}

#[test]
fn default_base_is_the_upstream_when_the_branch_has_one() {
    let repo = project();
    repo.add_remote();
    repo.git(&["push", "-q", "-u", "origin", "main"]);
    repo.branch("agent");
    repo.write("tests/test_x.py", TEST_X_SKIPPED);
    let pushed = repo.commit("skip the failing test");
    repo.git(&["push", "-q", "-u", "origin", "agent"]);
    repo.write("src/app.py.bak", APP);
    repo.commit("leave a backup behind");

    let out = repo.forgeward(&["check"]);
    let json = repo.forgeward(&["check", "--format", "json"]).json();

    // Only what the branch adds to `origin/agent`: the skip was pushed already.
    assert_eq!(out.code, 1, "{out:?}");
    assert_eq!(
        report_lines(&out),
        [BACKUP_LINE, "1 file, +5 lines: 1 flag"]
    );
    assert_eq!(json["base"], pushed);
}

#[test]
fn timings_go_to_stderr_and_leave_the_report_as_it_is() {
    let repo = gamed_branch();

    let plain = repo.forgeward(&["check", "--format", "json"]);
    let timed = repo.forgeward(&["check", "--format", "json", "--timings"]);

    assert_eq!(timed.code, plain.code, "{timed:?}");
    assert_eq!(timed.stdout, plain.stdout);
    let lines: Vec<&str> = timed
        .stderr
        .lines()
        .filter_map(|l| l.strip_prefix("forgeward: timings: "))
        .collect();
    assert!(
        lines.first().is_some_and(|l| l.ends_with("ms CPU")),
        "{timed:?}"
    );
    for rule in ["rule skip-marker", "rule stubbed-import", "test model"] {
        assert!(
            lines.iter().any(|l| l.trim_start().starts_with(rule)),
            "{rule} missing: {lines:#?}"
        );
    }
}

#[test]
fn json_report() {
    let repo = gamed_branch();

    let out = repo.forgeward(&["check", "--format", "json"]);

    assert_eq!(out.code, 1, "{out:?}");
    let report = out.json();
    assert_eq!(report["version"], 1);
    assert_eq!(report["base"], repo.rev("main"));
    assert_eq!(report["head"], repo.rev("HEAD"));
    assert_eq!(
        report["summary"],
        json!({ "files": 4, "added_lines": 12, "flags": 4 })
    );
    assert_eq!(report["allowed"], json!([]));
    assert_eq!(report["warnings"], json!([]));

    let flags = report["flags"].as_array().expect("flags is an array");
    for flag in flags {
        let mut keys: Vec<&str> = flag
            .as_object()
            .expect("a flag is an object")
            .keys()
            .map(String::as_str)
            .collect();
        keys.sort_unstable();
        assert_eq!(
            keys,
            ["line", "message", "path", "rule", "severity", "snippet"]
        );
        assert_eq!(flag["severity"], "warning");
    }
    let summary: Vec<(&str, &str, &Value)> = flags
        .iter()
        .map(|f| {
            (
                f["rule"].as_str().unwrap(),
                f["path"].as_str().unwrap(),
                &f["line"],
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            ("shadow-module", "sqlglot.py", &Value::Null),
            ("stubbed-import", "src/app.py", &json!(3)),
            ("stray-backup", "src/app.py.bak", &Value::Null),
            ("skip-marker", "tests/test_x.py", &json!(3)),
        ]
    );
    let skip = &flags[3];
    assert_eq!(
        skip["message"],
        "newly marks a test skipped: `pytest.mark.skip`"
    );
    assert_eq!(skip["snippet"], "@pytest.mark.skip");
    assert_eq!(flags[1]["snippet"], "except ImportError:");
    assert_eq!(flags[0]["snippet"], Value::Null);
}

#[test]
fn worktree_sees_uncommitted_and_untracked_but_not_ignored_files() {
    let repo = project();
    repo.write(".gitignore", "scratch/\n");
    repo.commit("ignore scratch files");
    // Unstaged, staged and untracked changes, and ignored files that would be flagged.
    repo.write("tests/test_x.py", TEST_X_SKIPPED);
    repo.write(
        "tests/test_y.py",
        "import pytest\n\n\ndef test_y():\n    pytest.skip('later')\n",
    );
    repo.git(&["add", "tests/test_y.py"]);
    repo.write("src/app.py.bak", APP);
    repo.write("scratch/test_tmp.py", TEST_X_SKIPPED);
    repo.write("scratch/app.py.bak", APP);

    let committed = repo.forgeward(&["check"]);
    let out = repo.forgeward(&["check", "--worktree", "--format", "json"]);

    assert_eq!(
        committed.code, 0,
        "HEAD adds nothing to main:\n{committed:?}"
    );
    assert_eq!(out.code, 1, "{out:?}");
    let report = out.json();
    assert_eq!(report["head"], "WORKTREE");
    assert_eq!(report["base"], repo.rev("HEAD"));
    let flagged: Vec<String> = report["flags"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            format!(
                "{} {}:{}",
                f["rule"].as_str().unwrap(),
                f["path"].as_str().unwrap(),
                f["line"]
            )
        })
        .collect();
    assert_eq!(
        flagged,
        [
            "stray-backup src/app.py.bak:null",
            "skip-marker tests/test_x.py:3",
            "skip-marker tests/test_y.py:5",
        ]
    );
}

#[test]
fn sarif_report() {
    let repo = gamed_branch();

    let out = repo.forgeward(&["check", "--format", "sarif"]);

    assert_eq!(out.code, 1, "{out:?}");
    let sarif = out.json();
    assert_eq!(sarif["version"], "2.1.0");
    let run = &sarif["runs"][0];
    assert_eq!(run["tool"]["driver"]["name"], "forgeward");
    let rule_ids: Vec<&str> = run["tool"]["driver"]["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    // Every rule of the detector, each with its help; the bot's own only when a flag has one.
    let detector_rules: Vec<&str> = forgeward::detect::RULES
        .iter()
        .filter(|r| r.rule.is_detector_rule())
        .map(|r| r.id)
        .collect();
    assert_eq!(rule_ids, detector_rules);
    for id in [
        "skip-marker",
        "test-weakened",
        "expectation-changed",
        "test-deleted",
        "focused-test",
    ] {
        assert!(rule_ids.contains(&id), "{id} listed");
    }
    for rule in run["tool"]["driver"]["rules"].as_array().unwrap() {
        assert!(
            rule["help"]["text"].as_str().is_some_and(|t| t.len() > 40),
            "{rule}"
        );
    }
    let levels: Vec<&str> = run["tool"]["driver"]["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["defaultConfiguration"]["level"].as_str().unwrap())
        .collect();
    assert!(
        levels.contains(&"note") && levels.contains(&"error"),
        "{levels:?}"
    );
    let results: Vec<(&str, &str, u64)> = run["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let location = &r["locations"][0]["physicalLocation"];
            (
                r["ruleId"].as_str().unwrap(),
                location["artifactLocation"]["uri"].as_str().unwrap(),
                location["region"]["startLine"].as_u64().unwrap(),
            )
        })
        .collect();
    // A file-level flag points at the file's first line.
    assert_eq!(
        results,
        [
            ("shadow-module", "sqlglot.py", 1),
            ("stubbed-import", "src/app.py", 3),
            ("stray-backup", "src/app.py.bak", 1),
            ("skip-marker", "tests/test_x.py", 3),
        ]
    );
}

#[test]
fn github_annotations() {
    let repo = gamed_branch();

    let out = repo.forgeward(&["check", "--format", "github"]);

    assert_eq!(out.code, 1, "{out:?}");
    let lines = out.stdout_lines();
    assert_eq!(lines.len(), 4, "{out:?}");
    assert!(
        lines[0].starts_with(
            "::warning file=sqlglot.py,title=forgeward shadow-module::new module `sqlglot.py`"
        ),
        "{out:?}"
    );
    assert_eq!(
        lines[1],
        "::warning file=src/app.py,line=3,title=forgeward stubbed-import::newly carries on when `yaml` fails to import: `except ImportError` closes a `try` that only imports"
    );
    assert_eq!(
        lines[3],
        "::warning file=tests/test_x.py,line=3,title=forgeward skip-marker::newly marks a test skipped: `pytest.mark.skip`"
    );
}

#[test]
fn an_unknown_base_revision_is_a_one_line_error() {
    let repo = gamed_branch();

    let out = repo.forgeward(&["check", "--base", "nope"]);

    assert_eq!(out.one_line_error(), "unknown revision 'nope'");
    assert_eq!(out.stdout, "");
}

#[test]
fn a_directory_outside_any_repository_is_a_one_line_error() {
    let repo = TestRepo::new();
    let elsewhere = repo.outside("not-a-repo");
    std::fs::create_dir(&elsewhere).unwrap();

    let out = repo.forgeward(&["check", "--repo", elsewhere.to_str().unwrap()]);

    assert_eq!(
        out.one_line_error(),
        format!("{}: not a git repository", elsewhere.display())
    );
}

#[test]
fn a_broken_config_is_a_one_line_error_naming_its_line() {
    let repo = project();
    repo.write(".forgeward.toml", "[check]\nmodee = \"warn\"\n");
    repo.commit("configure, badly");
    repo.branch("agent");
    repo.write("tests/test_x.py", TEST_X_SKIPPED);
    repo.commit("skip");

    // The base's configuration is the one in force: broken there, the check cannot be made.
    let out = repo.forgeward(&["check", "--base", "HEAD~1"]);

    let message = out.one_line_error();
    assert!(
        message.starts_with(".forgeward.toml:2:1: unknown field `modee`"),
        "{out:?}"
    );
}

#[test]
fn a_change_that_breaks_the_config_is_flagged_and_checked_with_the_base_s() {
    let repo = project();
    repo.branch("agent");
    repo.write(".forgeward.toml", "[check]\nmodee = \"warn\"\n");
    repo.write("tests/test_x.py", TEST_X_SKIPPED);
    repo.commit("configure, badly");

    let out = repo.forgeward(&["check"]);

    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        report_lines(&out)[0].ends_with(
            "the change's file does not parse (.forgeward.toml:2:1: unknown field `modee`, expected one of `test_paths`, `ignore`, `allow`, `mode`, `fail_on`, `rules`, `max_file_size`)"
        ),
        "{out:?}"
    );
    assert!(out.stdout.contains("skip-marker"), "{out:?}");
}

#[test]
fn an_unknown_format_is_a_usage_error() {
    let repo = gamed_branch();

    let out = repo.forgeward(&["check", "--format", "xml"]);

    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stderr
            .contains("unknown format 'xml', expected text, json, sarif, github or codequality"),
        "{out:?}"
    );
    assert_eq!(out.stdout, "");
}

#[test]
fn a_configured_allow_silences_a_flag() {
    let repo = TestRepo::new();
    repo.write("tests/test_x.py", TEST_X);
    repo.write(
        ".forgeward.toml",
        lines(&[
            "[[check.allow]]",
            "rule = \"skip-marker\"",
            "path = \"tests/**\"",
            "reason = \"quarantined until the parser lands, see #12\"",
        ]),
    );
    repo.commit("base");
    repo.branch("agent");
    repo.write("tests/test_x.py", TEST_X_SKIPPED);
    repo.commit("quarantine");

    let out = repo.forgeward(&["check"]);

    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(
        report_lines(&out),
        [
            "tests/test_x.py:3: skip-marker: allowed: quarantined until the parser lands, see #12",
            "1 file, +1 line: 0 flags (1 allowed)",
        ]
    );
    let report = repo.forgeward(&["check", "--format", "json"]).json();
    assert_eq!(
        report["allowed"][0]["reason"],
        "quarantined until the parser lands, see #12"
    );
    assert_eq!(report["flags"], json!([]));
}

#[test]
fn ignored_paths_are_not_checked() {
    let repo = change_on_branch(
        &[(".forgeward.toml", "[check]\nignore = [\"vendor/**\"]\n")],
        |repo| {
            repo.write("vendor/lib/tests/test_lib.py", TEST_X_SKIPPED);
            repo.write("vendor/lib/setup.py.orig", "x = 1\n");
        },
    );

    let out = repo.forgeward(&["check"]);

    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stdout.ends_with(": 0 flags\n"), "{out:?}");
}

#[test]
fn configured_test_paths_are_tests() {
    // `@skip` is a skip only in a test file; `qa/` is one only when configured.
    let skipped = "from unittest import skip\n\n\n@skip('later')\ndef check_totals():\n    pass\n";
    let unconfigured = change_on_branch(&[("README.md", "hi\n")], |repo| {
        repo.write("qa/checks.py", skipped);
    });
    let configured = change_on_branch(
        &[(".forgeward.toml", "[check]\ntest_paths = [\"qa/**\"]\n")],
        |repo| {
            repo.write("qa/checks.py", skipped);
        },
    );

    let plain = unconfigured.forgeward(&["check"]);
    let out = configured.forgeward(&["check"]);

    assert_eq!(plain.code, 0, "{plain:?}");
    assert_eq!(out.code, 1, "{out:?}");
    assert_eq!(
        report_lines(&out)[0],
        "qa/checks.py:4: skip-marker: newly marks a test skipped: `@skip`"
    );
}

#[test]
fn configured_warn_mode_reports_and_exits_0_unless_overridden() {
    let repo = change_on_branch(
        &[
            (".forgeward.toml", "[check]\nmode = \"warn\"\n"),
            ("tests/test_x.py", TEST_X),
        ],
        |repo| {
            repo.write("tests/test_x.py", TEST_X_SKIPPED);
        },
    );

    let configured = repo.forgeward(&["check"]);
    let overridden = repo.forgeward(&["check", "--mode", "block"]);

    assert_eq!(configured.code, 0, "{configured:?}");
    assert_eq!(
        report_lines(&configured),
        [SKIP_LINE, "1 file, +1 line: 1 flag"]
    );
    assert_eq!(overridden.code, 1, "{overridden:?}");
}

#[test]
fn an_inline_allow_on_the_line_above_silences_a_skip() {
    let repo = change_on_branch(&[("tests/test_x.py", TEST_X)], |repo| {
        repo.write(
            "tests/test_x.py",
            TEST_X_SKIPPED.replace(
                "@pytest.mark.skip",
                "# forgeward: allow skip-marker -- upstream bug, see #4\n@pytest.mark.skip",
            ),
        );
    });

    let out = repo.forgeward(&["check"]);

    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(
        report_lines(&out),
        [
            "tests/test_x.py:4: skip-marker: allowed: upstream bug, see #4",
            "1 file, +2 lines: 0 flags (1 allowed)",
        ]
    );
}

#[test]
fn a_pure_rename_of_a_skipped_test_is_not_new() {
    let repo = change_on_branch(&[("tests/test_a.py", TEST_X_SKIPPED)], |repo| {
        repo.mkdir("tests/unit");
        repo.git(&["mv", "tests/test_a.py", "tests/unit/test_a.py"]);
    });

    let out = repo.forgeward(&["check"]);

    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(report_lines(&out), ["1 file, +0 lines: 0 flags"]);
}

#[test]
fn a_skip_moved_between_test_files_is_not_new() {
    let a = "import pytest\n\n@pytest.mark.skip(reason='slow')\ndef test_big():\n    pass\n\ndef test_small():\n    pass\n";
    let b = "def test_other():\n    pass\n";
    let repo = change_on_branch(&[("tests/test_a.py", a), ("tests/test_b.py", b)], |repo| {
        repo.write("tests/test_a.py", "def test_small():\n    pass\n");
        repo.write(
            "tests/test_b.py",
            "import pytest\n\ndef test_other():\n    pass\n\n@pytest.mark.skip(reason='slow')\ndef test_big():\n    pass\n",
        );
    });

    let out = repo.forgeward(&["check"]);

    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stdout.ends_with(": 0 flags\n"), "{out:?}");
}

#[test]
fn removing_a_skip_is_not_flagged() {
    let repo = change_on_branch(&[("tests/test_x.py", TEST_X_SKIPPED)], |repo| {
        repo.write("tests/test_x.py", TEST_X);
    });

    let out = repo.forgeward(&["check"]);

    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(report_lines(&out), ["1 file, +0 lines: 0 flags"]);
}

#[test]
fn re_encoding_a_skipped_test_with_crlf_is_not_new() {
    let repo = change_on_branch(&[("tests/test_x.py", TEST_X_SKIPPED)], |repo| {
        repo.write("tests/test_x.py", TEST_X_SKIPPED.replace('\n', "\r\n"));
    });

    let out = repo.forgeward(&["check"]);

    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(report_lines(&out), ["1 file, +5 lines: 0 flags"]);
}

#[test]
fn names_with_spaces_and_unicode_are_reported_as_they_are() {
    let repo = change_on_branch(&[("README.md", "hi\n")], |repo| {
        repo.write("tests/test ünï code.py", TEST_X_SKIPPED);
    });

    let out = repo.forgeward(&["check"]);
    let json = repo.forgeward(&["check", "--format", "json"]).json();

    assert_eq!(out.code, 1, "{out:?}");
    assert_eq!(
        report_lines(&out)[0],
        "tests/test ünï code.py:3: skip-marker: newly marks a test skipped: `pytest.mark.skip`"
    );
    assert_eq!(json["flags"][0]["path"], "tests/test ünï code.py");
}

#[test]
fn a_non_utf8_file_name_is_reported_with_its_bytes() {
    let name = Path::new(OsStr::from_bytes(b"tests/test_\xff.py"));
    let repo = change_on_branch(&[("README.md", "hi\n")], |repo| {
        repo.write(name, TEST_X_SKIPPED);
    });

    let out = repo.forgeward(&["check"]);
    let json = repo.forgeward(&["check", "--format", "json"]);
    let sarif = repo.forgeward(&["check", "--format", "sarif"]);

    assert_eq!(out.code, 1, "{out:?}");
    let expected =
        b"tests/test_\xff.py:3: skip-marker: newly marks a test skipped: `pytest.mark.skip`\n";
    // After the line naming the range.
    let report = out.raw_stdout.splitn(2, |&b| b == b'\n').nth(1);
    assert!(report.is_some_and(|r| r.starts_with(expected)), "{out:?}");
    // Formats that need UTF-8 show the byte as U+FFFD, or percent-encode it.
    assert_eq!(json.code, 1, "{json:?}");
    assert_eq!(json.json()["flags"][0]["path"], "tests/test_\u{fffd}.py");
    let sarif = sarif.json();
    let location = &sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"];
    assert_eq!(location["artifactLocation"]["uri"], "tests/test_%FF.py");
}

#[test]
fn non_utf8_content_is_still_checked() {
    let latin1: &[u8] = b"# -*- coding: latin-1 -*-\nimport pytest\n\n# caf\xe9, na\xefve\n@pytest.mark.skip\ndef test_caf\xe9():\n    pass\n";
    let repo = change_on_branch(&[("README.md", "hi\n")], |repo| {
        repo.write("tests/test_latin1.py", latin1);
    });

    let out = repo.forgeward(&["check"]);

    assert_eq!(out.code, 1, "{out:?}");
    assert_eq!(
        report_lines(&out),
        [
            "tests/test_latin1.py:5: skip-marker: newly marks a test skipped: `pytest.mark.skip`",
            "1 file, +7 lines: 1 flag",
        ]
    );
}

#[test]
fn binary_files_are_judged_by_their_names_only() {
    let mut binary = b"\x00\x01\x02@pytest.mark.skip\n\x00".to_vec();
    binary.extend_from_slice(TEST_X_SKIPPED.as_bytes());
    let repo = change_on_branch(&[("README.md", "hi\n")], |repo| {
        repo.write("tests/data.bin", &binary);
        repo.write("tests/test_blob.py", &binary);
        repo.write("x.bak", &binary);
    });

    let out = repo.forgeward(&["check"]);

    assert_eq!(out.code, 1, "{out:?}");
    assert_eq!(
        report_lines(&out),
        [
            "x.bak: stray-backup: new file `x.bak` looks like a backup copy (`.bak`)",
            "3 files, +0 lines: 1 flag",
        ]
    );
}

#[test]
fn a_very_large_file_does_not_stop_the_check() {
    let row = "ROW = ('a fairly long line of generated data', 1234567890)\n";
    let big = row.repeat(6 * 1024 * 1024 / row.len() + 1); // Just over 6 MiB.
    let repo = change_on_branch(&[("tests/test_x.py", TEST_X)], |repo| {
        repo.write("src/generated_table.py", &big);
        repo.write("tests/test_x.py", TEST_X_SKIPPED);
    });

    let out = repo.forgeward(&["check"]);

    assert_eq!(out.code, 1, "{out:?}");
    assert_eq!(report_lines(&out)[0], SKIP_LINE);
    assert!(report_lines(&out)[1].starts_with("2 files, "), "{out:?}");
}

#[test]
fn a_symlink_is_judged_by_its_name_and_never_read() {
    let passwd = std::fs::read_to_string("/etc/passwd").unwrap_or_default();
    let secret = passwd.lines().next().unwrap_or("root:x:0:0");
    let repo = TestRepo::new();
    // A skipped test outside the repository, that a link could smuggle in.
    let outside_test = repo.outside("evil_test.py");
    std::fs::write(&outside_test, TEST_X_SKIPPED).unwrap();
    repo.write("requirements.txt", REQUIREMENTS);
    repo.commit("base");
    repo.branch("agent");
    repo.symlink("sqlglot.py", "/etc/passwd");
    repo.symlink("tests/test_link.py", &outside_test);
    repo.commit("links");

    let committed = repo.forgeward(&["check"]);
    let worktree = repo.forgeward(&["check", "--worktree"]);
    let json = repo.forgeward(&["check", "--format", "json"]);

    for out in [&committed, &worktree] {
        assert_eq!(out.code, 1, "{out:?}");
        assert_eq!(
            report_lines(out),
            [SHADOW_LINE, "2 files, +0 lines: 1 flag"]
        );
    }
    for out in [&committed, &worktree, &json] {
        assert!(
            !out.stdout.contains(secret) && !out.stderr.contains(secret),
            "{out:?}"
        );
    }
}

#[test]
fn a_large_change_is_reported_in_path_order() {
    // Enough files for the check to spread them over threads.
    let repo = change_on_branch(&[("README.md", "hi\n")], |repo| {
        for i in (0..40).rev() {
            let test = TEST_X_SKIPPED.replace("test_parse", &format!("test_parse_{i}"));
            repo.write(format!("tests/test_{i:02}.py"), test);
        }
    });

    let out = repo.forgeward(&["check"]);

    assert_eq!(out.code, 1, "{out:?}");
    let expected: Vec<String> = (0..40)
        .map(|i| format!("tests/test_{i:02}.py:3: skip-marker: newly marks a test skipped: `pytest.mark.skip`"))
        .chain(["40 files, +200 lines: 40 flags".to_owned()])
        .collect();
    assert_eq!(report_lines(&out), expected);
}

/// A branch whose only sign is an expected value edited: a note by default.
fn expectation_branch(config: Option<&str>) -> TestRepo {
    let repo = TestRepo::new();
    repo.write(
        "tests/test_calc.py",
        "def test_add():\n    assert add(2, 3) == 5\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n",
    );
    if let Some(config) = config {
        repo.write(".forgeward.toml", config);
    }
    repo.commit("calc tests");
    repo.branch("agent");
    repo.write(
        "tests/test_calc.py",
        "def test_add():\n    assert add(2, 3) == -1\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n",
    );
    repo.commit("expect -1");
    repo
}

#[test]
fn a_note_is_reported_and_does_not_fail_the_check() {
    let repo = expectation_branch(None);
    let out = repo.forgeward(&["check", "--base", "main"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stdout.contains(
            "tests/test_calc.py:2: expectation-changed (note): `test_add` now expects `-1` where it expected `5`"
        ),
        "{}",
        out.stdout
    );
    let json = repo
        .forgeward(&["check", "--base", "main", "--format", "json"])
        .json();
    assert_eq!(json["flags"][0]["severity"], "note");
}

#[test]
fn rule_settings_and_fail_on_come_from_the_configuration() {
    // Raised to a warning, the same change fails.
    let repo = expectation_branch(Some("[check.rules]\nexpectation-changed = \"warning\"\n"));
    let out = repo.forgeward(&["check", "--base", "main"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stdout
            .contains("tests/test_calc.py:2: expectation-changed: "),
        "{}",
        out.stdout
    );
    // fail_on = "note" fails on notes too.
    let repo = expectation_branch(Some("[check]\nfail_on = \"note\"\n"));
    assert_eq!(repo.forgeward(&["check", "--base", "main"]).code, 1);
    // Off: nothing at all.
    let repo = expectation_branch(Some("[check.rules]\nexpectation-changed = \"off\"\n"));
    let out = repo.forgeward(&["check", "--base", "main"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stdout.contains(": 0 flags"), "{}", out.stdout);
    // A rule that does not exist is an error with its place.
    let repo = expectation_branch(Some("[check.rules]\nexpectation = \"off\"\n"));
    let out = repo.forgeward(&["check", "--base", "main"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stderr
            .contains(".forgeward.toml:2:1: unknown rule 'expectation'"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_deleted_test_is_reported_with_its_base_line() {
    let repo = TestRepo::new();
    repo.write(
        "tests/test_calc.py",
        "def test_add():\n    assert add(2, 3) == 5\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n",
    );
    repo.commit("calc tests");
    repo.branch("agent");
    repo.write(
        "tests/test_calc.py",
        "def test_add():\n    assert add(2, 3) == 5\n",
    );
    repo.commit("drop the failing test");
    let out = repo.forgeward(&["check", "--base", "main", "--format", "json"]);
    // test-deleted is a note by default, below the default `fail_on`: reported, not blocking.
    assert_eq!(out.code, 0, "{out:?}");
    let flag = &out.json()["flags"][0];
    assert_eq!(flag["rule"], "test-deleted");
    assert_eq!(flag["line"], Value::Null);
    assert_eq!(flag["base_line"], 5);
}

#[test]
fn an_assertion_made_loose_and_a_test_moved_with_fewer_checks_are_weakened() {
    let repo = TestRepo::new();
    repo.write(
        "tests/test_pricing.py",
        "def test_discount():\n    result = discount(200, 15)\n    assert result == 170.0\n\n\ndef test_parse():\n    p = parse(\"TS-M\")\n    assert p[\"family\"] == \"TS\"\n    assert p[\"size\"] == \"M\"\n",
    );
    repo.commit("pricing tests");
    repo.branch("agent");
    repo.write(
        "tests/test_pricing.py",
        "def test_discount():\n    result = discount(200, 15)\n    assert result is not None\n",
    );
    repo.write(
        "tests/test_parse.py",
        "def test_parse():\n    p = parse(\"TS-M\")\n    assert p[\"family\"] == \"TS\"\n",
    );
    repo.commit("make the tests pass");
    let out = repo.forgeward(&["check", "--base", "main", "--format", "json"]);
    // Notes by default: reported, not blocking.
    assert_eq!(out.code, 0, "{out:?}");
    let flags: Vec<(String, String, u64, String)> = out.json()["flags"]
        .as_array()
        .expect("flags")
        .iter()
        .map(|f| {
            (
                f["rule"].as_str().unwrap_or_default().to_owned(),
                f["path"].as_str().unwrap_or_default().to_owned(),
                f["line"].as_u64().unwrap_or_default(),
                f["message"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    assert_eq!(flags.len(), 2, "{flags:?}");
    assert_eq!(
        flags[0],
        (
            "test-weakened".to_owned(),
            "tests/test_parse.py".to_owned(),
            1,
            "`test_parse` (moved from `tests/test_pricing.py`) checks less: 2 checks at the base, 1 now (gone: `assert p[\"size\"] == \"M\"`)".to_owned()
        )
    );
    assert_eq!(
        flags[1],
        (
            "test-weakened".to_owned(),
            "tests/test_pricing.py".to_owned(),
            3,
            "`test_discount` checks less: `assert result is not None` where it checked `assert result == 170.0`".to_owned()
        )
    );
}

/// `forgeward check` reads the configuration at the base: a change that adds a skip and a
/// `.forgeward.toml` that would hide it, or turn the check to warn, or turn the rule off, is
/// checked as the base says, and the edit is flagged with what it would relax.
#[test]
fn a_change_cannot_switch_its_own_check_off() {
    for (config, relaxed) in [
        (
            "[check]\nignore = [\"tests/**\"]\n",
            "ignore adds `tests/**`",
        ),
        (
            "[check]\nmode = \"warn\"\n",
            "mode = \"warn\": flags no longer fail the check",
        ),
        (
            "[check.rules]\nskip-marker = \"off\"\n",
            "`skip-marker` turned off",
        ),
    ] {
        let repo = change_on_branch(&[("tests/test_x.py", TEST_X)], |repo| {
            repo.write("tests/test_x.py", TEST_X_SKIPPED);
            repo.write(".forgeward.toml", config);
        });
        let out = repo.forgeward(&["check"]);
        assert_eq!(out.code, 1, "{config}: {out:?}");
        assert_eq!(
            report_lines(&out)[..2],
            [
                format!(
                    ".forgeward.toml: config-edit: the change edits .forgeward.toml, which decides what forgeward flags; this range was checked with the base's, and from the next range on the edit would relax it: {relaxed}"
                )
                .as_str(),
                SKIP_LINE
            ],
            "{config}"
        );
        // From the next range on, the edit is the base's and applies.
        repo.write("tests/test_y.py", TEST_X_SKIPPED);
        repo.commit("another skip");
        let next = repo.forgeward(&["check", "--base", "HEAD~1"]);
        assert_eq!(next.code, 0, "{config}: {next:?}");
    }
}

#[test]
fn a_change_that_only_tightens_the_configuration_is_a_note() {
    let repo = change_on_branch(
        &[(".forgeward.toml", "[check]\nmode = \"warn\"\n")],
        |repo| {
            repo.write(
                ".forgeward.toml",
                "[check.rules]\nexpectation-changed = \"warning\"\n",
            );
        },
    );
    let out = repo.forgeward(&["check"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(
        report_lines(&out)[0],
        ".forgeward.toml: config-edit (note): the change edits .forgeward.toml and only tightens it: mode = \"block\"; `expectation-changed` raised from note to warning; this range was checked with the base's"
    );
}

/// `--worktree` on a range from HEAD tries out the working tree's configuration, uncommitted.
#[test]
fn the_working_tree_s_configuration_is_tried_out_only_from_head() {
    let repo = change_on_branch(&[("tests/test_x.py", TEST_X)], |repo| {
        repo.write("src/app.py", "x = 1\n");
    });
    repo.write("tests/test_x.py", TEST_X_SKIPPED);
    repo.write(".forgeward.toml", "[check]\nmode = \"warn\"\n");
    let tried = repo.forgeward(&["check", "--base", "HEAD", "--worktree"]);
    assert_eq!(tried.code, 0, "{tried:?}");
    assert!(tried.stdout.contains(SKIP_LINE), "{tried:?}");
    assert!(!tried.stdout.contains("config-edit"), "{tried:?}");
    // From further back, the base's configuration judges, and the edit is flagged.
    let judged = repo.forgeward(&["check", "--base", "main", "--worktree"]);
    assert_eq!(judged.code, 1, "{judged:?}");
    assert!(judged.stdout.contains("config-edit"), "{judged:?}");
}

/// A test gutted in a test file over the size limit is not read, and the check says so instead
/// of passing in silence; a repository whose base raises the limit gets the file read.
#[test]
fn a_changed_file_over_the_size_limit_is_reported_skipped_and_the_limit_is_a_setting() {
    // A test module carrying a large table of cases: 5 MiB.
    let table: String = (0..120_000)
        .map(|i| format!("    ('case-{i:06}', 'expected-value-{i:06}'),\n"))
        .collect();
    let big = |test: &str| format!("{test}\n\nCASES = [\n{table}]\n");
    let gutted = TEST_X.replace("assert parse('a') == ['a']", "pass");
    let repo = change_on_branch(&[("tests/test_big.py", &big(TEST_X))], |repo| {
        repo.write("tests/test_big.py", big(&gutted));
    });
    let size = std::fs::metadata(repo.path("tests/test_big.py"))
        .expect("the test file")
        .len();
    assert!(size > 4 << 20, "{size} bytes is not over the limit");
    let out = repo.forgeward(&["check", "--base", "main"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(
        out.stderr,
        format!(
            "forgeward: warning: tests/test_big.py: skipped: {:.1} MiB, over the 4 MiB limit ([check] max_file_size)\n",
            size as f64 / f64::from(1u32 << 20)
        )
    );
    let json = repo.forgeward(&["check", "--base", "main", "--format", "json"]);
    let report: Value = serde_json::from_str(&json.stdout).expect("JSON");
    assert_eq!(
        report["warnings"].as_array().map(Vec::len),
        Some(1),
        "{report}"
    );

    // The base raises the limit: the file is read, and the gutted test is flagged (a note, as
    // test-weakened is by default).
    let raised = change_on_branch(
        &[
            ("tests/test_big.py", &big(TEST_X)),
            (".forgeward.toml", "[check]\nmax_file_size = \"8M\"\n"),
        ],
        |repo| {
            repo.write("tests/test_big.py", big(&gutted));
        },
    );
    let out = raised.forgeward(&["check", "--base", "main"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stdout.contains(
            "tests/test_big.py:3: test-weakened (note): `test_parse` no longer checks anything"
        ),
        "{}",
        out.stdout
    );
    assert_eq!(out.stderr, "");
}
