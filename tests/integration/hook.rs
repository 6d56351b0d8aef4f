//! `forgeward hook install|uninstall`: where the hook lands, what it keeps, what it puts back.

use crate::util::{TestRepo, ZERO, is_executable, lines};

/// A repository with one clean commit on `main` and an empty bare remote `origin`.
fn repo_with_remote() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("src/app.py", "def f():\n    return 1\n");
    repo.commit("init");
    repo.add_remote();
    repo
}

/// A hook that is not ours: it logs its arguments and input to `log`, and lets the push go.
fn foreign_hook(log: &std::path::Path) -> String {
    lines(&[
        "#!/bin/sh",
        "# the team's own pre-push checks",
        &format!("echo \"args: $*\" >> '{}'", log.display()),
        &format!("cat >> '{}'", log.display()),
    ])
}

#[test]
fn install_writes_an_executable_pre_push_hook() {
    let repo = TestRepo::new();
    let hook = repo.path(".git/hooks/pre-push");

    let out = repo.forgeward(&["hook", "install"]);

    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(
        out.stdout,
        format!(
            "forgeward: installed the pre-push hook at {} (mode from .forgeward.toml, else block)\n",
            hook.display()
        )
    );
    assert!(is_executable(&hook));
    let text = String::from_utf8(repo.read(&hook)).unwrap();
    assert!(text.starts_with("#!/bin/sh\n# forgeward-hook"), "{text}");
    // Without --mode, the repository's configuration decides at each push.
    assert!(!text.contains("--mode"), "{text}");
}

#[test]
fn installing_twice_changes_nothing() {
    let repo = TestRepo::new();
    repo.forgeward(&["hook", "install"]);
    let first = repo.read(".git/hooks/pre-push");

    let out = repo.forgeward(&["hook", "install"]);

    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stdout
            .contains("is already installed (mode from .forgeward.toml, else block)"),
        "{out:?}"
    );
    assert_eq!(repo.read(".git/hooks/pre-push"), first);
}

#[test]
fn installing_in_warn_mode_rewrites_the_hook() {
    let repo = TestRepo::new();
    repo.forgeward(&["hook", "install"]);

    let out = repo.forgeward(&["hook", "install", "--mode", "warn"]);

    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stdout
            .starts_with("forgeward: updated the pre-push hook at "),
        "{out:?}"
    );
    let text = String::from_utf8(repo.read(".git/hooks/pre-push")).unwrap();
    assert!(
        text.contains("--mode warn") && !text.contains("--mode block"),
        "{text}"
    );
    assert!(is_executable(&repo.path(".git/hooks/pre-push")));
}

#[test]
fn a_foreign_hook_is_kept_run_first_and_put_back() {
    let repo = repo_with_remote();
    let log = repo.outside("hook.log");
    let theirs = foreign_hook(&log);
    repo.write_script(".git/hooks/pre-push", &theirs);

    let install = repo.forgeward(&["hook", "install"]);

    assert_eq!(install.code, 0, "{install:?}");
    let saved = repo.path(".git/hooks/pre-push.forgeward-saved");
    assert!(
        install.stdout.contains(&format!(
            "the hook that was there is kept at {} and runs first",
            saved.display()
        )),
        "{install:?}"
    );
    assert_eq!(repo.read(&saved), theirs.as_bytes());
    assert!(is_executable(&saved));

    // A real push runs it, with git's arguments and input.
    let push = repo.push(&["origin", "main"]);

    assert_eq!(push.code, 0, "{push:?}");
    let logged = std::fs::read_to_string(&log).expect("the foreign hook ran");
    let remote = repo.outside("remote.git");
    assert_eq!(
        logged,
        format!(
            "args: origin {}\nrefs/heads/main {} refs/heads/main {ZERO}\n",
            remote.display(),
            repo.rev("main")
        )
    );

    let uninstall = repo.forgeward(&["hook", "uninstall"]);

    assert_eq!(uninstall.code, 0, "{uninstall:?}");
    assert!(
        uninstall
            .stdout
            .contains("put back the hook that was there before"),
        "{uninstall:?}"
    );
    assert_eq!(repo.read(".git/hooks/pre-push"), theirs.as_bytes());
    assert!(is_executable(&repo.path(".git/hooks/pre-push")));
    assert!(!saved.exists());
}

#[test]
fn a_foreign_hook_that_refuses_still_refuses_the_push() {
    let repo = repo_with_remote();
    repo.write_script(
        ".git/hooks/pre-push",
        "#!/bin/sh\necho 'team check: no pushes on Friday' >&2\nexit 1\n",
    );
    repo.forgeward(&["hook", "install"]);

    let push = repo.push(&["origin", "main"]);

    assert_ne!(push.code, 0, "{push:?}");
    assert!(
        push.stderr.contains("team check: no pushes on Friday"),
        "{push:?}"
    );
    assert_eq!(repo.remote_branch("main"), None);
}

#[test]
fn install_force_sets_a_foreign_hook_aside() {
    let repo = repo_with_remote();
    let log = repo.outside("hook.log");
    repo.write_script(".git/hooks/pre-push", foreign_hook(&log));

    let install = repo.forgeward(&["hook", "install", "--force"]);
    let push = repo.push(&["origin", "main"]);

    assert_eq!(install.code, 0, "{install:?}");
    assert!(install.stdout.contains("is set aside at"), "{install:?}");
    assert_eq!(push.code, 0, "{push:?}");
    assert!(!log.exists(), "the hook set aside no longer runs");
}

#[test]
fn install_follows_core_hooks_path_from_anywhere_in_the_tree() {
    let repo = TestRepo::new();
    repo.write("src/app.py", "x = 1\n");
    repo.commit("init");
    repo.git(&["config", "core.hooksPath", "myhooks"]);

    let out = repo.forgeward_in(&repo.path("src"), &["hook", "install"]);

    assert_eq!(out.code, 0, "{out:?}");
    let hook = repo.path("myhooks/pre-push");
    assert!(out.stdout.contains(&hook.display().to_string()), "{out:?}");
    assert!(is_executable(&hook));
    assert!(!repo.path(".git/hooks/pre-push").exists());
    assert!(!repo.path("src/myhooks").exists());
}

#[test]
fn install_from_a_linked_worktree_writes_the_common_hooks() {
    let repo = TestRepo::new();
    repo.write("src/app.py", "x = 1\n");
    repo.commit("init");
    let wt = repo.outside("wt");
    repo.git(&["worktree", "add", "-q", wt.to_str().unwrap()]);

    let out = repo.forgeward_in(&wt, &["hook", "install"]);

    assert_eq!(out.code, 0, "{out:?}");
    let hook = repo.path(".git/hooks/pre-push");
    assert!(out.stdout.contains(&hook.display().to_string()), "{out:?}");
    assert!(is_executable(&hook));
    assert!(!repo.path(".git/worktrees/wt/hooks").exists());
    assert!(
        wt.join(".git").is_file(),
        "a linked worktree has a .git file, not a directory"
    );
}

#[test]
fn uninstall_removes_our_hook() {
    let repo = TestRepo::new();
    repo.forgeward(&["hook", "install"]);

    let out = repo.forgeward(&["hook", "uninstall"]);

    assert_eq!(out.code, 0, "{out:?}");
    let hook = repo.path(".git/hooks/pre-push");
    assert_eq!(
        out.stdout,
        format!(
            "forgeward: removed the pre-push hook at {}\n",
            hook.display()
        )
    );
    assert!(!hook.exists());
}

#[test]
fn uninstall_leaves_a_foreign_hook_alone() {
    let repo = TestRepo::new();
    let theirs = "#!/bin/sh\nexit 0\n";
    repo.write(".git/hooks/pre-push", theirs);

    let out = repo.forgeward(&["hook", "uninstall"]);

    let hook = repo.path(".git/hooks/pre-push");
    assert_eq!(
        out.one_line_error(),
        format!(
            "the pre-push hook at {} was not installed by forgeward; left as it is",
            hook.display()
        )
    );
    assert_eq!(repo.read(&hook), theirs.as_bytes());
}

#[test]
fn uninstall_with_nothing_installed_does_nothing() {
    let repo = TestRepo::new();

    let out = repo.forgeward(&["hook", "uninstall"]);

    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stdout.ends_with("; nothing to do\n"), "{out:?}");
    assert!(!repo.path(".git/hooks/pre-push").exists());
}
