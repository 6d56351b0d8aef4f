//! `forgeward check` says what it compared: the range as git spells it (`main..HEAD`,
//! `origin/main...HEAD`), its commits, or why there is nothing to compare; a git-style range
//! beside `--base`/`--head`, and one-line errors when they conflict or name nothing.

use crate::util::{Output, TEST_X, TEST_X_SKIPPED, TestRepo};

/// `main` with a test, and a branch `agent` (checked out) two commits ahead that skips it.
fn agent_branch() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("tests/test_x.py", TEST_X);
    repo.commit("a test");
    repo.branch("agent");
    repo.write("src/app.py", "x = 1\n");
    repo.commit("some code");
    repo.write("tests/test_x.py", TEST_X_SKIPPED);
    repo.commit("skip the test");
    repo
}

/// `text` with each named revision's short sha replaced by `<name>`, for snapshots.
fn normalized(repo: &TestRepo, text: &str, revs: &[&str]) -> String {
    let mut text = text.to_owned();
    for rev in revs {
        let sha = repo.rev(rev);
        text = text.replace(&sha[..7], &format!("<{rev}>"));
    }
    text
}

/// What a user reads: the command, its exit code, and both streams.
fn transcript(repo: &TestRepo, args: &[&str], revs: &[&str]) -> String {
    let out = repo.forgeward(args);
    normalized(
        repo,
        &format!(
            "$ forgeward {}\n[exit {}]\n--- stdout\n{}--- stderr\n{}",
            args.join(" "),
            out.code,
            out.stdout,
            out.stderr
        ),
        revs,
    )
}

#[test]
fn the_report_names_the_range_it_compared() {
    let repo = agent_branch();

    let mut seen = String::new();
    for args in [
        &["check"][..],
        &["check", "main..HEAD"],
        &["check", "main...agent"],
        &["check", "--base", "main", "--head", "agent"],
        &["check", "HEAD~1.."],
    ] {
        seen.push_str(&transcript(&repo, args, &["main", "agent", "agent~1"]));
    }

    insta::assert_snapshot!(seen);
}

#[test]
fn two_dots_say_what_the_diff_takes_back_and_three_dots_start_where_they_forked() {
    let repo = agent_branch();
    // `main` moves on: a test file of its own, which `main..agent` shows deleted.
    repo.checkout("main");
    repo.write("tests/test_y.py", "def test_y():\n    assert 1 + 1 == 2\n");
    repo.commit("another test on main");
    repo.checkout("agent");

    let two = repo.forgeward(&["check", "main..agent"]);
    let three = repo.forgeward(&["check", "main...agent"]);

    assert_eq!(two.code, 1, "{two:?}");
    assert!(two.stdout.contains("test-deleted"), "{two:?}");
    assert_eq!(three.code, 1, "{three:?}");
    assert!(!three.stdout.contains("test-deleted"), "{three:?}");
    let lines = format!("{}\n{}\n", two.stdout_lines()[0], three.stdout_lines()[0]);
    insta::assert_snapshot!(normalized(&repo, &lines, &["main", "agent", "main~1"]));
}

#[test]
fn a_branch_at_its_upstream_has_nothing_to_compare_and_says_why() {
    let repo = agent_branch();
    repo.add_remote();
    repo.git(&["push", "-q", "origin", "main"]);
    repo.git(&["push", "-q", "-u", "origin", "agent"]);

    let on_branch = transcript(&repo, &["check"], &["agent"]);
    repo.checkout("main");
    repo.git(&["branch", "-q", "--set-upstream-to=origin/main"]);
    let on_main = transcript(&repo, &["check"], &["main"]);
    // A branch whose upstream is itself (`git config branch.main.merge refs/heads/main`).
    repo.git(&["config", "branch.main.remote", "."]);
    repo.git(&["config", "branch.main.merge", "refs/heads/main"]);
    let itself = transcript(&repo, &["check"], &["main"]);
    let json = repo.forgeward(&["check", "--format", "json"]);

    insta::assert_snapshot!(format!("{on_branch}{on_main}{itself}"));
    // Machine formats still print a whole (empty) report.
    assert_eq!(json.code, 0, "{json:?}");
    assert_eq!(json.json()["flags"], serde_json::json!([]));
    assert_eq!(json.json()["commits"], 0);
}

#[test]
fn the_same_commit_twice_has_nothing_to_compare() {
    let repo = agent_branch();

    let seen = [
        transcript(&repo, &["check", "agent..HEAD"], &["agent"]),
        transcript(&repo, &["check", "agent...main"], &["main"]),
    ]
    .concat();

    insta::assert_snapshot!(seen);
}

#[test]
fn machine_formats_keep_stdout_theirs_and_name_the_range_on_stderr() {
    let repo = agent_branch();

    for format in ["json", "sarif", "github", "codequality"] {
        let out = repo.forgeward(&["check", "main...HEAD", "--format", format]);
        assert_eq!(out.code, 1, "{format}: {out:?}");
        assert_eq!(
            normalized(&repo, &out.stderr, &["main", "agent"]),
            "forgeward: checked `main...HEAD` (<main>..<agent>), 2 commits\n",
            "{format}"
        );
        assert!(!out.stdout.contains("checked `"), "{format}: {out:?}");
        if format != "github" {
            out.json();
        }
    }
    let json = repo
        .forgeward(&["check", "main...HEAD", "--format", "json"])
        .json();
    assert_eq!(json["range"], "main...HEAD");
    assert_eq!(json["commits"], 2);
    assert_eq!(json["base"], repo.rev("main"));
}

#[test]
fn an_empty_range_in_actions_is_a_warning_on_the_run() {
    let repo = agent_branch();

    let out = repo.forgeward(&["check", "agent..HEAD", "--format", "github"]);

    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(
        normalized(&repo, &out.stdout, &["agent"]),
        "::warning title=forgeward::nothing to compare: `agent` and `HEAD` are the same commit (<agent>)\n"
    );
}

#[test]
fn the_working_tree_beside_a_range() {
    let repo = agent_branch();
    repo.write("src/app.py.bak", "x = 1\n");

    let from_main = repo.forgeward(&["check", "main..", "--worktree"]);
    let from_head = repo.forgeward(&["check", "--base", "HEAD", "--worktree"]);

    assert_eq!(from_main.code, 1, "{from_main:?}");
    assert_eq!(
        normalized(&repo, from_main.stdout_lines()[0], &["main"]),
        "checked `main..HEAD` and the working tree (<main>..), 2 commits and what is not committed"
    );
    assert_eq!(from_head.code, 1, "{from_head:?}");
    assert_eq!(
        normalized(&repo, from_head.stdout_lines()[0], &["agent"]),
        "checked the working tree against `HEAD` (<agent>): what is not committed"
    );
}

/// One line on stderr, `forgeward: error: …`, exit 2, nothing on stdout.
fn error(out: &Output) -> &str {
    assert_eq!(out.stdout, "", "{out:?}");
    out.one_line_error()
}

#[test]
fn a_range_beside_base_or_head_is_a_one_line_error() {
    let repo = agent_branch();

    let base = repo.forgeward(&["check", "main..HEAD", "--base", "main"]);
    let head = repo.forgeward(&["check", "main..HEAD", "--head", "agent"]);
    let worktree = repo.forgeward(&["check", "main...HEAD", "--worktree"]);
    let pre_push = repo.forgeward(&["check", "--pre-push", "origin", "url", "main..HEAD"]);

    assert_eq!(
        error(&base),
        "the range 'main..HEAD' and --base both say what to compare: give one or the other"
    );
    assert_eq!(
        error(&head),
        "the range 'main..HEAD' and --head both say what to compare: give one or the other"
    );
    assert_eq!(
        error(&worktree),
        "--worktree checks the working tree, so the range names no head: write main..."
    );
    assert_eq!(
        error(&pre_push),
        "--pre-push reads the ranges from git's input, so the range 'main..HEAD' cannot be given too"
    );
}

#[test]
fn unknown_revisions_and_one_revision_are_one_line_errors() {
    let repo = agent_branch();

    for (range, message) in [
        ("nope..HEAD", "unknown revision 'nope'"),
        ("main..nope", "unknown revision 'nope'"),
        ("main...nope", "unknown revision 'nope'"),
        (
            "main",
            "'main' is not a range: write main..HEAD (or main...HEAD from where they forked), or --base main",
        ),
    ] {
        let out = repo.forgeward(&["check", range]);
        assert_eq!(error(&out), message, "{range}");
    }
}

#[test]
fn unrelated_histories_have_no_merge_base() {
    let repo = agent_branch();
    repo.git(&["checkout", "-q", "--orphan", "other"]);
    repo.commit("a history of its own");

    let out = repo.forgeward(&["check", "main...other"]);

    assert_eq!(
        error(&out),
        "'main' and 'other' have no common ancestor: name the base with main..other"
    );
}

#[test]
fn a_shallow_clone_cut_above_the_merge_base_says_to_fetch_more() {
    let repo = agent_branch();
    let url = format!("file://{}", repo.root().display());
    let clone = repo.outside("shallow");
    repo.git(&[
        "clone",
        "-q",
        "--depth=1",
        "--no-single-branch",
        &url,
        clone.to_str().expect("a UTF-8 path"),
    ]);

    let out = repo.forgeward_in(&clone, &["check", "origin/main...origin/agent"]);

    assert_eq!(
        error(&out),
        "'origin/main' and 'origin/agent' have no common ancestor in this shallow clone: fetch more history (git fetch --deepen, or fetch-depth: 0 in CI)"
    );
}
