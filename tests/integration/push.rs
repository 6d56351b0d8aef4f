//! Real `git push`es to a local bare remote, with the hook that `forgeward hook install` wrote.

use crate::util::{
    TEST_X, TEST_X_SKIPPED, TestRepo, ZERO, lines, path_with_forgeward, path_without_forgeward,
};

const SKIP_LINE: &str =
    "tests/test_x.py:3: skip-marker: newly marks a test skipped: `pytest.mark.skip`";

/// What the hook says when it refuses a push carrying one skip in `tests/test_x.py`.
const REFUSAL: &str = "\
forgeward: push refused: the commits being pushed carry 1 review flag. Three ways forward:
  1. fix it: make the code work rather than the test pass;
  2. allow it in .forgeward.toml, with a reason a reviewer can read, in a change of its
     own (the configuration in force is the base's, so it applies once that change is
     on the remote, and the change itself is flagged config-edit for a reviewer):
       [[check.allow]]
       rule = \"skip-marker\"
       path = \"tests/test_x.py\"
       reason = \"…\"
  3. push anyway, once: git push --no-verify
";

/// A project whose clean `main` is on `origin` already, with the hook installed (`install_args`
/// after `forgeward hook install`).
fn pushed_project(install_args: &[&str]) -> TestRepo {
    let repo = TestRepo::new();
    repo.write("tests/test_x.py", TEST_X);
    repo.write("src/app.py", "def parse(s):\n    return list(s)\n");
    repo.commit("a small project");
    repo.add_remote();
    repo.git(&["push", "-q", "origin", "main"]);
    let mut args = vec!["hook", "install"];
    args.extend_from_slice(install_args);
    let out = repo.forgeward(&args);
    assert_eq!(out.code, 0, "{out:?}");
    repo
}

/// Switches to a new branch `name` off `main` and commits a skipped test on it.
fn skip_on_branch(repo: &TestRepo, name: &str) -> String {
    repo.checkout("main");
    repo.branch(name);
    repo.write("tests/test_x.py", TEST_X_SKIPPED);
    repo.commit("skip the failing test")
}

/// Switches to a new branch `name` off `main` and commits an honest change on it.
fn fix_on_branch(repo: &TestRepo, name: &str) -> String {
    repo.checkout("main");
    repo.branch(name);
    repo.write(
        "src/app.py",
        "def parse(s):\n    return [c for c in s if c]\n",
    );
    repo.commit("fix the parser")
}

#[test]
fn a_flagged_push_is_refused() {
    let repo = pushed_project(&[]);
    skip_on_branch(&repo, "agent");

    let push = repo.push(&["origin", "agent"]);

    assert_ne!(push.code, 0, "{push:?}");
    assert_eq!(push.stderr_flags(), [SKIP_LINE]);
    assert!(push.stderr.contains(REFUSAL), "{push:?}");
    assert_eq!(repo.remote_branch("agent"), None);
}

#[test]
fn a_clean_push_is_accepted() {
    let repo = pushed_project(&[]);
    let fixed = fix_on_branch(&repo, "fix");

    let push = repo.push(&["origin", "fix"]);

    assert_eq!(push.code, 0, "{push:?}");
    assert!(
        !push.stderr.contains("forgeward:"),
        "a clean push is silent:\n{push:?}"
    );
    assert_eq!(repo.remote_branch("fix"), Some(fixed));
}

#[test]
fn no_verify_pushes_a_flagged_branch_anyway() {
    let repo = pushed_project(&[]);
    let skipped = skip_on_branch(&repo, "agent");

    let push = repo.push(&["--no-verify", "origin", "agent"]);

    assert_eq!(push.code, 0, "{push:?}");
    assert_eq!(repo.remote_branch("agent"), Some(skipped));
}

#[test]
fn warn_mode_lets_a_flagged_push_through_and_says_why() {
    let repo = pushed_project(&["--mode", "warn"]);
    let skipped = skip_on_branch(&repo, "agent");

    let push = repo.push(&["origin", "agent"]);

    assert_eq!(push.code, 0, "{push:?}");
    assert_eq!(push.stderr_flags(), [SKIP_LINE]);
    assert!(
        push.stderr
            .contains("forgeward: warn mode: the push goes ahead\n"),
        "{push:?}"
    );
    assert!(!push.stderr.contains("push refused"), "{push:?}");
    assert_eq!(repo.remote_branch("agent"), Some(skipped));
}

#[test]
fn a_later_push_checks_only_what_the_remote_lacks() {
    let repo = pushed_project(&[]);
    skip_on_branch(&repo, "agent");
    repo.push(&["--no-verify", "origin", "agent"]);
    repo.write(
        "src/app.py",
        "def parse(s):\n    return [c for c in s if c]\n",
    );
    let fixed = repo.commit("fix the parser too");

    let push = repo.push(&["origin", "agent"]);

    assert_eq!(push.code, 0, "{push:?}");
    assert_eq!(repo.remote_branch("agent"), Some(fixed));
}

#[test]
fn a_new_branch_is_checked_from_where_it_left_the_remote_default_branch() {
    let repo = TestRepo::new();
    repo.add_remote();
    // `main` has skipped tests of its own, from before forgeward.
    repo.write(
        "tests/test_old.py",
        "import pytest\n\n@pytest.mark.skip\ndef test_old():\n    pass\n",
    );
    repo.write("tests/test_x.py", TEST_X);
    repo.commit("an old project");
    repo.write(
        "tests/test_older.py",
        "import pytest\n\n@pytest.mark.xfail\ndef test_older():\n    pass\n",
    );
    repo.commit("more of it");
    repo.forgeward(&["hook", "install"]);

    // The first push to an empty remote has nothing to compare with: it is not checked from
    // the root commit.
    let first = repo.push(&["origin", "main"]);

    assert_eq!(first.code, 0, "{first:?}");
    assert!(
        first.stderr.contains("forgeward: refs/heads/main: nothing on 'origin' to compare it with, so it was not checked\n"),
        "{first:?}"
    );

    skip_on_branch(&repo, "agent");
    let push = repo.push(&["origin", "agent"]);

    assert_ne!(push.code, 0, "{push:?}");
    assert_eq!(push.stderr_flags(), [SKIP_LINE]);
    assert!(
        push.stderr.contains("1 file, +1 line: 1 flag\n"),
        "{push:?}"
    );
    assert!(push.stderr.contains(REFUSAL), "{push:?}");
}

#[test]
fn a_push_of_several_refs_reports_only_the_flagged_ones() {
    let repo = pushed_project(&[]);
    fix_on_branch(&repo, "a");
    skip_on_branch(&repo, "b");

    let push = repo.push(&["origin", "a", "b"]);

    assert_ne!(push.code, 0, "{push:?}");
    assert_eq!(push.stderr_flags(), [SKIP_LINE]);
    // Both refs were checked (two files changed between them); only b carries a flag.
    assert!(
        push.stderr.contains("2 files, +2 lines: 1 flag\n"),
        "{push:?}"
    );
    assert!(push.stderr.contains(REFUSAL), "{push:?}");
    assert_eq!(repo.remote_branch("a"), None, "a refused push sends no ref");
    assert_eq!(repo.remote_branch("b"), None);
}

#[test]
fn deleting_a_remote_branch_is_accepted() {
    let repo = pushed_project(&[]);
    skip_on_branch(&repo, "old");
    repo.push(&["--no-verify", "origin", "old"]);
    assert!(repo.remote_branch("old").is_some());

    let push = repo.push(&["origin", ":old"]);

    assert_eq!(push.code, 0, "{push:?}");
    assert!(!push.stderr.contains("forgeward:"), "{push:?}");
    assert_eq!(repo.remote_branch("old"), None);
}

#[test]
fn pre_push_input_fed_directly() {
    let repo = pushed_project(&[]);
    let skipped = skip_on_branch(&repo, "agent");
    let main = repo.rev("main");
    let url = repo.outside("remote.git");
    let url = url.to_str().unwrap();

    // A deletion sends nothing, so there is nothing to check.
    let deletion = repo.forgeward_stdin(
        &["check", "--pre-push", "origin", url],
        &lines(&[&format!("(delete) {ZERO} refs/heads/old {main}")]),
    );
    let update = repo.forgeward_stdin(
        &["check", "--pre-push", "origin", url],
        &lines(&[&format!(
            "refs/heads/agent {skipped} refs/heads/main {main}"
        )]),
    );

    assert_eq!(deletion.code, 0, "{deletion:?}");
    assert_eq!(deletion.stderr, "");
    assert_eq!(update.code, 1, "{update:?}");
    assert_eq!(update.stderr_flags(), [SKIP_LINE]);
    assert_eq!(update.stdout, "", "a hook reports on stderr");
}

#[test]
fn garbage_pre_push_input_is_a_one_line_error() {
    let repo = pushed_project(&[]);

    let out = repo.forgeward_stdin(
        &["check", "--pre-push", "origin", "/nowhere"],
        "this is not git talking\n",
    );

    assert_eq!(
        out.one_line_error(),
        "unexpected pre-push input line 'this is not git talking': expected '<local ref> <local sha> <remote ref> <remote sha>'"
    );
}

#[test]
fn the_installed_hook_finds_forgeward_where_it_was_installed_from() {
    let repo = pushed_project(&[]);
    skip_on_branch(&repo, "agent");

    let push = repo.run_in(
        repo.root(),
        "git",
        ["push", "origin", "agent"],
        None,
        &path_without_forgeward(),
    );

    assert_ne!(push.code, 0, "{push:?}");
    assert_eq!(push.stderr_flags(), [SKIP_LINE]);
    assert_eq!(repo.remote_branch("agent"), None);
}

#[test]
fn the_shipped_shim_lets_the_push_through_when_forgeward_is_missing() {
    let repo = pushed_project(&[]);
    let shim = concat!(env!("CARGO_MANIFEST_DIR"), "/hooks/pre-push");
    assert!(
        !std::path::Path::new("/usr/bin/forgeward").exists()
            && !std::path::Path::new("/bin/forgeward").exists(),
        "this test needs a PATH of /usr/bin:/bin without forgeward on it"
    );
    let input = lines(&[&format!(
        "refs/heads/main {} refs/heads/main {ZERO}",
        repo.rev("main")
    )]);

    let out = repo.run_in(
        repo.root(),
        "sh",
        [shim, "origin", "/nowhere"],
        Some(input.as_bytes()),
        "/usr/bin:/bin".as_ref(),
    );

    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stderr
            .starts_with("forgeward: not installed, so this push was not checked"),
        "{out:?}"
    );
}

#[test]
fn the_shipped_shim_runs_forgeward_when_it_is_installed() {
    let repo = pushed_project(&[]);
    let skipped = skip_on_branch(&repo, "agent");
    let shim = concat!(env!("CARGO_MANIFEST_DIR"), "/hooks/pre-push");
    let input = lines(&[&format!(
        "refs/heads/agent {skipped} refs/heads/agent {ZERO}"
    )]);

    let out = repo.run_in(
        repo.root(),
        "sh",
        [shim, "origin", "/nowhere"],
        Some(input.as_bytes()),
        &path_with_forgeward(),
    );

    assert_eq!(out.code, 1, "{out:?}");
    assert_eq!(out.stderr_flags(), [SKIP_LINE]);
    assert!(out.stderr.contains(REFUSAL), "{out:?}");
}

#[test]
fn the_repository_config_decides_the_mode_of_a_hook_installed_without_one() {
    let repo = pushed_project(&[]);
    // The configuration in force is the remote's: it is pushed (and reviewed) first.
    repo.write(".forgeward.toml", "[check]\nmode = \"warn\"\n");
    repo.commit("warn only in this repository");
    repo.git(&["push", "-q", "--no-verify", "origin", "main"]);
    repo.branch("agent");
    repo.write("tests/test_x.py", TEST_X_SKIPPED);
    let head = repo.commit("skip the failing test");

    let push = repo.push(&["origin", "agent"]);

    assert_eq!(push.code, 0, "{push:?}");
    assert_eq!(push.stderr_flags(), [SKIP_LINE]);
    assert!(
        push.stderr
            .contains("forgeward: warn mode: the push goes ahead\n"),
        "{push:?}"
    );
    assert_eq!(repo.remote_branch("agent"), Some(head));
}

#[test]
fn an_annotated_tag_is_checked_as_the_commit_it_tags() {
    let repo = pushed_project(&[]);
    fix_on_branch(&repo, "fix");
    repo.git(&["tag", "-a", "v1", "-m", "release 1"]);

    let clean = repo.push(&["origin", "v1"]);
    assert_eq!(clean.code, 0, "{clean:?}");

    skip_on_branch(&repo, "agent");
    repo.git(&["tag", "-a", "v2", "-m", "release 2"]);
    let flagged = repo.push(&["origin", "v2"]);
    assert_ne!(flagged.code, 0, "{flagged:?}");
    assert_eq!(flagged.stderr_flags(), [SKIP_LINE]);
    assert!(flagged.stderr.contains(REFUSAL), "{flagged:?}");
}

/// A push cannot switch its own check off: the configuration in force is the remote's, and
/// the edit is itself flagged.
#[test]
fn a_push_that_ignores_its_own_skip_is_refused() {
    let repo = pushed_project(&[]);
    repo.checkout("main");
    repo.branch("agent");
    repo.write("tests/test_x.py", TEST_X_SKIPPED);
    repo.write(
        ".forgeward.toml",
        "[check]\nignore = [\"tests/**\"]\nmode = \"warn\"\n",
    );
    repo.commit("skip it, and stop looking");

    let push = repo.push(&["origin", "agent"]);

    assert_ne!(push.code, 0, "{push:?}");
    assert_eq!(push.stderr_flags(), [SKIP_LINE]);
    assert!(
        push.stderr.contains(
            ".forgeward.toml: config-edit: the change edits .forgeward.toml, which decides what forgeward flags; this range was checked with the base's, and from the next range on the edit would relax it: ignore adds `tests/**`; mode = \"warn\": flags no longer fail the check\n"
        ),
        "{push:?}"
    );
    assert!(push.stderr.contains("push refused"), "{push:?}");
    assert_eq!(repo.remote_branch("agent"), None);
}
