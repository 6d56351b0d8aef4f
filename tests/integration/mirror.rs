//! The bot's git layer against real repositories: a bare mirror fetched from a local bare
//! remote, a job's checkout, the commit built from what a worker left, and the push with its
//! lease. The git CLI only builds fixtures and inspects results; credentials are checked over
//! HTTP against `git http-backend`.

use std::ffi::OsStr;
use std::net::TcpListener;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use forgeward::forge::api::GitCredentials;
use forgeward::forge::event::{Forge, RepoName};
use forgeward::git::{
    CHECKOUT_BRANCH, GitError, Lease, Mirror, NetworkTimeouts, change_request_refspec,
    set_network_timeouts,
};
use git2::{Oid, Signature};
use tempfile::TempDir;

use crate::git_http::{GOOD_AUTH, GitHttp};
use crate::util::{TestRepo, default_path, is_executable};

/// A repository pushed to a bare remote, and an empty directory for mirrors.
struct Fixture {
    repo: TestRepo,
    remote: PathBuf,
    mirrors: TempDir,
}

impl Fixture {
    fn new() -> Fixture {
        let repo = TestRepo::new();
        repo.write("README.md", "# demo\n")
            .write("src/app.py", "def main():\n    return 1\n")
            .write_script("bin/run.sh", "#!/bin/sh\necho run\n")
            .write("node_modules/vendored/index.js", "module.exports = 1;\n")
            .symlink("docs/link", "../README.md");
        repo.commit("base");
        let remote = repo.add_remote();
        repo.git(&["push", "-q", "origin", "main"]);
        Fixture {
            repo,
            remote,
            mirrors: tempfile::tempdir().expect("a temporary directory"),
        }
    }

    fn url(&self) -> String {
        format!("file://{}", self.remote.display())
    }

    fn mirror(&self) -> Mirror {
        Mirror::open_or_create(
            self.mirrors.path(),
            Forge::GitHub,
            &RepoName("octo/demo".to_owned()),
        )
        .expect("opening the mirror")
    }

    /// A mirror fetched once, and the remote's `main`.
    fn fetched(&self) -> (Mirror, Oid) {
        let mirror = self.mirror();
        mirror.fetch(&self.url(), None, &[]).expect("fetching");
        let main = mirror.repo().resolve("refs/heads/main").expect("main");
        (mirror, main)
    }

    /// Runs git with `--git-dir` set to `git_dir`, asserting success.
    fn git_at(&self, git_dir: &Path, args: &[&str]) -> Vec<u8> {
        let mut argv = vec![format!("--git-dir={}", git_dir.display())];
        argv.extend(args.iter().map(|a| (*a).to_owned()));
        let out = self
            .repo
            .run_in(self.repo.root(), "git", &argv, None, &default_path());
        assert_eq!(out.code, 0, "git {argv:?} failed:\n{out:?}");
        out.raw_stdout
    }

    /// `path → (mode, blob contents)` of every entry of `commit` in `git_dir`.
    fn tree_of(&self, git_dir: &Path, commit: Oid) -> Vec<(Vec<u8>, String, Vec<u8>)> {
        let listing = self.git_at(git_dir, &["ls-tree", "-r", "-z", &commit.to_string()]);
        let mut out = Vec::new();
        for record in listing.split(|b| *b == 0).filter(|r| !r.is_empty()) {
            let tab = record.iter().position(|b| *b == b'\t').expect("a tab");
            let meta = String::from_utf8_lossy(&record[..tab]).into_owned();
            let fields: Vec<&str> = meta.split(' ').collect();
            let content = if fields[1] == "blob" {
                self.git_at(git_dir, &["cat-file", "blob", fields[2]])
            } else {
                Vec::new()
            };
            out.push((record[tab + 1..].to_vec(), fields[0].to_owned(), content));
        }
        out
    }
}

fn entry<'a>(
    tree: &'a [(Vec<u8>, String, Vec<u8>)],
    path: &str,
) -> Option<&'a (Vec<u8>, String, Vec<u8>)> {
    tree.iter()
        .find(|(p, _, _)| p.as_slice() == path.as_bytes())
}

fn bot() -> Signature<'static> {
    Signature::now("forgeward", "bot@forgeward.invalid").expect("a signature")
}

fn creds() -> GitCredentials {
    GitCredentials {
        username: "x-access-token".to_owned(),
        password: "s3cret-t0ken".to_owned(),
    }
}

/// Every file under `dir` whose bytes contain `needle`.
fn files_containing(dir: &Path, needle: &[u8]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d)
            .expect("reading a directory")
            .flatten()
        {
            let kind = e.file_type().expect("a file type");
            if kind.is_dir() {
                stack.push(e.path());
            } else if kind.is_file() {
                let bytes = std::fs::read(e.path()).expect("reading a file");
                if bytes.windows(needle.len()).any(|w| w == needle) {
                    out.push(e.path());
                }
            }
        }
    }
    out
}

#[test]
fn a_second_fetch_brings_only_new_commits_and_new_branches() {
    let f = Fixture::new();
    let (mirror, main) = f.fetched();
    assert_eq!(main.to_string(), f.repo.rev("main"));
    assert!(mirror.path().ends_with("github/octo/demo.git"));

    f.repo.write("src/app.py", "def main():\n    return 2\n");
    let second = f.repo.commit("second");
    f.repo.branch("feature");
    f.repo.write("feature.txt", "new\n");
    let feature = f.repo.commit("feature");
    f.repo.git(&["push", "-q", "origin", "main", "feature"]);

    let packs_before = packs(mirror.path());
    mirror.fetch(&f.url(), None, &[]).expect("fetching again");
    assert_eq!(
        mirror
            .repo()
            .resolve("refs/heads/main")
            .unwrap()
            .to_string(),
        second
    );
    assert_eq!(
        mirror
            .repo()
            .resolve("refs/heads/feature")
            .unwrap()
            .to_string(),
        feature
    );
    // One new pack with the two new commits, their trees and blobs, nothing of the first.
    let new: Vec<PathBuf> = packs(mirror.path())
        .into_iter()
        .filter(|p| !packs_before.contains(p))
        .collect();
    assert_eq!(new.len(), 1, "{new:?}");
    let index = std::fs::File::open(&new[0]).expect("the new pack's index");
    let out = Command::new("git")
        .arg("show-index")
        .stdin(index)
        .output()
        .expect("git show-index");
    let objects = String::from_utf8_lossy(&out.stdout).lines().count();
    assert!(objects <= 8, "the second fetch carried {objects} objects");

    // A branch deleted upstream goes from the mirror.
    f.repo.git(&["push", "-q", "origin", "--delete", "feature"]);
    mirror
        .fetch(&f.url(), None, &[])
        .expect("fetching a third time");
    assert!(mirror.repo().resolve("refs/heads/feature").is_err());
    // Nothing of the remote is recorded in the mirror.
    let config = std::fs::read_to_string(mirror.path().join("config")).unwrap();
    assert!(!config.contains("remote"), "{config}");
    let naming = files_containing(mirror.path(), f.remote.as_os_str().as_bytes());
    assert!(naming.is_empty(), "{naming:?} name the remote");
}

fn packs(git_dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(git_dir.join("objects/pack"))
        .map(|d| {
            d.flatten()
                .map(|e| e.path())
                .filter(|p| p.extension() == Some(OsStr::new("idx")))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn a_pull_request_head_is_fetched_on_demand() {
    let f = Fixture::new();
    f.repo.branch("contrib");
    f.repo.write("contrib.txt", "from a fork\n");
    let head = f.repo.commit("contribution");
    f.repo
        .git(&["push", "-q", "origin", "contrib:refs/pull/7/head"]);
    let (mirror, _) = f.fetched();
    assert!(
        mirror.repo().resolve("refs/pull/7/head").is_err(),
        "fetched without being asked for"
    );
    let spec = change_request_refspec(Forge::GitHub, 7);
    mirror
        .fetch(&f.url(), None, &[&spec])
        .expect("fetching the PR");
    assert_eq!(
        mirror
            .repo()
            .resolve("refs/pull/7/head")
            .unwrap()
            .to_string(),
        head
    );
}

#[test]
fn a_checkout_has_the_files_and_a_clean_standalone_git() {
    let f = Fixture::new();
    let (mirror, main) = f.fetched();
    let work = tempfile::tempdir().unwrap();
    let dest = work.path().join("job-1");
    let checkout = mirror.checkout(main, &dest).expect("checking out");
    assert_eq!(checkout.path(), dest);

    assert_eq!(
        std::fs::read(dest.join("src/app.py")).unwrap(),
        b"def main():\n    return 1\n"
    );
    assert!(is_executable(&dest.join("bin/run.sh")));
    assert!(!is_executable(&dest.join("README.md")));
    let link = dest.join("docs/link");
    assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
    assert_eq!(
        std::fs::read_link(&link).unwrap(),
        Path::new("../README.md")
    );

    let git = |args: &[&str]| {
        let out = f.repo.run_in(&dest, "git", args, None, &default_path());
        assert_eq!(out.code, 0, "git {args:?}:\n{out:?}");
        out.stdout
    };
    assert_eq!(git(&["status", "--porcelain"]), "");
    assert_eq!(git(&["remote"]), "");
    assert_eq!(git(&["rev-parse", "HEAD"]).trim(), main.to_string());
    assert_eq!(
        git(&["symbolic-ref", "HEAD"]).trim(),
        format!("refs/heads/{CHECKOUT_BRANCH}")
    );
    assert_eq!(git(&["log", "--format=%s"]), "base\n");
    // Its objects are whole and sound.
    git(&["fsck", "--strict", "--no-dangling"]);
    // The worker's own tools work on it.
    std::fs::write(dest.join("README.md"), "# changed\n").unwrap();
    assert!(git(&["diff"]).contains("+# changed"));
    assert_eq!(git(&["status", "--porcelain"]), " M README.md\n");
    // Nothing points back to the mirror, and there are no hooks.
    let dot_git = dest.join(".git");
    assert!(
        files_containing(&dot_git, mirror.path().as_os_str().as_bytes()).is_empty(),
        "the checkout's .git names the mirror"
    );
    assert!(!dot_git.join("hooks").exists());
    assert!(!dot_git.join("objects/info/alternates").exists());

    drop(checkout);
    assert!(!dest.exists(), "the checkout outlived its guard");
}

#[test]
fn a_checkout_refuses_a_directory_that_is_not_empty() {
    let f = Fixture::new();
    let (mirror, main) = f.fetched();
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("precious"), "keep").unwrap();
    let err = mirror.checkout(main, work.path()).unwrap_err();
    assert!(err.to_string().contains("not empty"), "{err}");
    assert!(work.path().join("precious").exists());
}

#[test]
fn the_commit_records_what_the_worker_left_and_nothing_it_could_plant() {
    let f = Fixture::new();
    let (mirror, main) = f.fetched();
    let work = tempfile::tempdir().unwrap();
    let checkout = mirror.checkout(main, &work.path().join("ws")).unwrap();
    let ws = checkout.path();
    // Modified, added (untracked), deleted.
    std::fs::write(ws.join("src/app.py"), "def main():\n    return 42\n").unwrap();
    std::fs::write(ws.join("src/new.py"), "NEW = 1\n").unwrap();
    std::fs::remove_file(ws.join("README.md")).unwrap();
    // Tools' leftovers: excluded.
    for d in [
        "src/__pycache__",
        ".pytest_cache",
        "node_modules/left-pad",
        "venv",
    ] {
        std::fs::create_dir_all(ws.join(d)).unwrap();
    }
    std::fs::write(ws.join("src/__pycache__/app.cpython-311.pyc"), "bytecode").unwrap();
    std::fs::write(ws.join("src/stray.pyc"), "bytecode").unwrap();
    std::fs::write(ws.join(".pytest_cache/v"), "cache").unwrap();
    std::fs::write(ws.join("node_modules/left-pad/index.js"), "pad").unwrap();
    std::fs::write(ws.join("venv/pyvenv.cfg"), "home = /usr\n").unwrap();
    // The tracked node_modules/vendored is kept, and a change to it too.
    std::fs::write(
        ws.join("node_modules/vendored/index.js"),
        "module.exports = 2;\n",
    )
    .unwrap();
    // A symlink to a secret is a symlink; a symlinked directory is not followed.
    std::os::unix::fs::symlink("/etc/passwd", ws.join("passwd")).unwrap();
    std::os::unix::fs::symlink("/etc", ws.join("etc-dir")).unwrap();
    // A name that is not UTF-8.
    std::fs::write(ws.join(OsStr::from_bytes(b"caf\xe9.txt")), "latin-1\n").unwrap();
    // An executable bit added.
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(
        ws.join("src/new.py"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    // The worker's .git, tampered with: a fake HEAD, a remote, a hook, a nested repository.
    let dot_git = ws.join(".git");
    std::fs::write(dot_git.join("HEAD"), "ref: refs/heads/evil\n").unwrap();
    std::fs::write(
        dot_git.join("config"),
        "[remote \"origin\"]\n\turl = https://evil.example/x.git\n",
    )
    .unwrap();
    std::fs::create_dir_all(dot_git.join("hooks")).unwrap();
    std::fs::write(
        dot_git.join("hooks/post-checkout"),
        "#!/bin/sh\ntouch /tmp/pwned\n",
    )
    .unwrap();
    std::fs::create_dir_all(ws.join("vendor/lib/.git")).unwrap();
    std::fs::write(ws.join("vendor/lib/.git/config"), "[core]\n").unwrap();
    std::fs::write(ws.join("vendor/lib/lib.py"), "X = 1\n").unwrap();

    let commit = mirror
        .commit_workspace(main, ws, "Fix main\n", &bot(), &bot())
        .expect("committing")
        .expect("a change");
    let tree = f.tree_of(mirror.path(), commit);
    let paths: Vec<String> = tree
        .iter()
        .map(|(p, _, _)| String::from_utf8_lossy(p).into_owned())
        .collect();
    assert_eq!(
        paths,
        [
            "bin/run.sh",
            "caf\u{fffd}.txt",
            "docs/link",
            "etc-dir",
            "node_modules/vendored/index.js",
            "passwd",
            "src/app.py",
            "src/new.py",
            "vendor/lib/lib.py",
        ]
    );
    assert_eq!(
        entry(&tree, "src/app.py").unwrap().2,
        b"def main():\n    return 42\n"
    );
    assert_eq!(entry(&tree, "src/new.py").unwrap().1, "100755");
    assert_eq!(entry(&tree, "bin/run.sh").unwrap().1, "100755");
    assert_eq!(entry(&tree, "passwd").unwrap().1, "120000");
    assert_eq!(entry(&tree, "passwd").unwrap().2, b"/etc/passwd");
    assert_eq!(entry(&tree, "etc-dir").unwrap().1, "120000");
    assert_eq!(entry(&tree, "etc-dir").unwrap().2, b"/etc");
    assert_eq!(entry(&tree, "docs/link").unwrap().1, "120000");
    assert_eq!(
        entry(&tree, "node_modules/vendored/index.js").unwrap().2,
        b"module.exports = 2;\n"
    );
    let latin = tree.iter().find(|(p, _, _)| p.as_slice() == b"caf\xe9.txt");
    assert!(latin.is_some(), "the non-UTF-8 name is kept as bytes");

    // A child of the base, on no branch, with the message as given.
    let parents = f.git_at(mirror.path(), &["rev-parse", &format!("{commit}^@")]);
    assert_eq!(String::from_utf8_lossy(&parents).trim(), main.to_string());
    let message = f.git_at(
        mirror.path(),
        &["log", "-1", "--format=%B", &commit.to_string()],
    );
    assert_eq!(String::from_utf8_lossy(&message).trim(), "Fix main");
    let branches = f.git_at(
        mirror.path(),
        &["branch", "--contains", &commit.to_string()],
    );
    assert!(branches.is_empty());
}

#[test]
fn a_worker_that_changed_nothing_but_caches_and_its_git_made_no_commit() {
    let f = Fixture::new();
    let (mirror, main) = f.fetched();
    let work = tempfile::tempdir().unwrap();
    let checkout = mirror.checkout(main, &work.path().join("ws")).unwrap();
    let ws = checkout.path();
    std::fs::create_dir_all(ws.join("src/__pycache__")).unwrap();
    std::fs::write(ws.join("src/__pycache__/app.pyc"), "bytecode").unwrap();
    std::fs::remove_dir_all(ws.join(".git")).unwrap();
    std::fs::create_dir(ws.join(".git")).unwrap();
    std::fs::write(ws.join(".git/HEAD"), "garbage").unwrap();
    let made = mirror
        .commit_workspace(main, ws, "nothing", &bot(), &bot())
        .expect("reading the workspace");
    assert_eq!(made, None);
}

#[test]
fn a_push_honours_its_lease() {
    let f = Fixture::new();
    let (mirror, main) = f.fetched();
    let work = tempfile::tempdir().unwrap();
    let checkout = mirror.checkout(main, &work.path().join("ws")).unwrap();
    std::fs::write(checkout.path().join("fix.txt"), "one\n").unwrap();
    let first = mirror
        .commit_workspace(main, checkout.path(), "first", &bot(), &bot())
        .unwrap()
        .unwrap();
    let url = f.url();
    let branch = "forgeward/issue-3";
    // Pinned until pushed: a ref names it in the mirror.
    mirror.pin("3", first).expect("pinning");
    let pinned = f.git_at(mirror.path(), &["rev-parse", "refs/forgeward/jobs/3"]);
    assert_eq!(String::from_utf8_lossy(&pinned).trim(), first.to_string());

    mirror
        .push(&url, &creds(), first, branch, Lease::Absent)
        .expect("the first push");
    assert_eq!(f.repo.remote_branch(branch).unwrap(), first.to_string());
    // A retry of a push that went through succeeds.
    mirror
        .push(&url, &creds(), first, branch, Lease::Absent)
        .expect("the same push again");

    std::fs::write(checkout.path().join("fix.txt"), "two\n").unwrap();
    let second = mirror
        .commit_workspace(main, checkout.path(), "second", &bot(), &bot())
        .unwrap()
        .unwrap();
    let err = mirror
        .push(&url, &creds(), second, branch, Lease::Absent)
        .unwrap_err();
    assert!(matches!(err, GitError::LeaseRejected { .. }), "{err}");
    // Forced over the bot's own commit, as a retry does.
    mirror
        .push(&url, &creds(), second, branch, Lease::At(first))
        .expect("the forced push");
    assert_eq!(f.repo.remote_branch(branch).unwrap(), second.to_string());

    // Someone else pushed meanwhile: the bot does not overwrite it.
    f.repo.git(&[
        "push",
        "-q",
        "origin",
        &format!("main:refs/heads/{branch}"),
        "--force",
    ]);
    let err = mirror
        .push(&url, &creds(), first, branch, Lease::At(second))
        .unwrap_err();
    match &err {
        GitError::LeaseRejected {
            found, expected, ..
        } => {
            assert_eq!(found, &main.to_string());
            assert_eq!(expected, &second.to_string());
        }
        other => panic!("expected a refused lease, got {other}"),
    }
    assert_eq!(f.repo.remote_branch(branch).unwrap(), main.to_string());

    mirror.unpin("3").expect("unpinning");
    mirror.unpin("3").expect("unpinning twice");
    assert!(mirror.repo().resolve("refs/forgeward/jobs/3").is_err());
}

#[test]
fn credentials_reach_the_remote_only_through_the_callback() {
    let f = Fixture::new();
    let root = f.remote.parent().unwrap().to_path_buf();
    let server = GitHttp::start(&root, &root.join("home"));
    let url = format!("http://127.0.0.1:{}/remote.git", server.port);
    let mirror = f.mirror();
    mirror
        .fetch(&url, Some(&creds()), &[])
        .expect("fetching over HTTP");
    let main = mirror.repo().resolve("refs/heads/main").unwrap();
    assert_eq!(main.to_string(), f.repo.rev("main"));

    let work = tempfile::tempdir().unwrap();
    let checkout = mirror.checkout(main, &work.path().join("ws")).unwrap();
    std::fs::write(checkout.path().join("fix.txt"), "fixed\n").unwrap();
    let commit = mirror
        .commit_workspace(main, checkout.path(), "fix", &bot(), &bot())
        .unwrap()
        .unwrap();
    mirror
        .push(&url, &creds(), commit, "forgeward/issue-1", Lease::Absent)
        .expect("pushing over HTTP");
    assert_eq!(
        f.repo.remote_branch("forgeward/issue-1").unwrap(),
        commit.to_string()
    );

    let seen = server.seen.lock().unwrap().clone();
    assert!(seen.iter().any(|r| r.ends_with("auth=none")), "{seen:#?}");
    assert!(seen.iter().any(|r| r.ends_with(GOOD_AUTH)), "{seen:#?}");
    for dir in [mirror.path(), checkout.path()] {
        let leaks = files_containing(dir, b"s3cret-t0ken");
        assert!(leaks.is_empty(), "the token was written to {leaks:?}");
    }

    let wrong = GitCredentials {
        username: "x-access-token".to_owned(),
        password: "wrong".to_owned(),
    };
    let err = mirror.fetch(&url, Some(&wrong), &[]).unwrap_err();
    assert!(matches!(err, GitError::Auth(_)), "{err}");
    let err = mirror.fetch(&url, None, &[]).unwrap_err();
    assert!(matches!(err, GitError::Auth(_)), "{err}");
    assert!(!err.to_string().contains("s3cret"), "{err}");
}

/// What a job fetches (its base and its own branch, `jobs::run`'s refspecs) is all that arrives
/// over HTTP: another branch's history stays on the remote.
#[test]
fn a_fetch_of_one_branch_over_http_brings_nothing_of_the_others() {
    let f = Fixture::new();
    f.repo.branch("experiment");
    f.repo
        .write("experiment.txt", "an experiment no job needs\n");
    f.repo.commit("experiment");
    f.repo.git(&["push", "-q", "origin", "experiment"]);
    let experiment_blob = f.repo.git(&["rev-parse", "experiment:experiment.txt"]);
    let root = f.remote.parent().unwrap().to_path_buf();
    let server = GitHttp::start(&root, &root.join("home"));
    let url = format!("http://127.0.0.1:{}/remote.git", server.port);
    let mirror = f.mirror();
    mirror
        .fetch(
            &url,
            Some(&creds()),
            &[
                "+refs/heads/main:refs/heads/main",
                "+refs/heads/forgeward/issue-1:refs/heads/forgeward/issue-1",
            ],
        )
        .expect("fetching over HTTP");
    assert_eq!(
        mirror
            .repo()
            .resolve("refs/heads/main")
            .unwrap()
            .to_string(),
        f.repo.rev("main")
    );
    assert!(mirror.repo().resolve("refs/heads/experiment").is_err());
    let blob = Oid::from_str(experiment_blob.trim()).unwrap();
    assert!(
        !mirror.repo().git2().odb().unwrap().exists(blob),
        "the other branch's objects arrived"
    );
}

#[test]
fn a_fetch_from_a_remote_that_never_answers_is_cut() {
    let listener = TcpListener::bind("127.0.0.1:0").expect("binding");
    let port = listener.local_addr().unwrap().port();
    // Accepts, reads, and never answers.
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming().flatten() {
            held.push(stream);
        }
    });
    set_network_timeouts(NetworkTimeouts {
        connect: Duration::from_secs(5),
        stall: Duration::from_secs(3),
    });
    let mirrors = tempfile::tempdir().unwrap();
    let mirror = Mirror::open_or_create(
        mirrors.path(),
        Forge::GitLab,
        &RepoName("group/stuck".to_owned()),
    )
    .unwrap();
    let started = Instant::now();
    let err = mirror
        .fetch(
            &format!("http://127.0.0.1:{port}/stuck.git"),
            Some(&creds()),
            &[],
        )
        .unwrap_err();
    assert!(matches!(err, GitError::Timeout { .. }), "{err}");
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn a_submodule_is_an_empty_directory_and_stays_the_same_submodule() {
    let f = Fixture::new();
    let pinned = f.repo.rev("HEAD");
    f.repo.git(&[
        "update-index",
        "--add",
        "--cacheinfo",
        &format!("160000,{pinned},vendor/sub"),
    ]);
    f.repo.git(&["commit", "-q", "-m", "a submodule"]);
    f.repo.git(&["push", "-q", "origin", "main"]);
    let (mirror, main) = f.fetched();
    let work = tempfile::tempdir().unwrap();
    let checkout = mirror.checkout(main, &work.path().join("ws")).unwrap();
    let sub = checkout.path().join("vendor/sub");
    assert!(sub.is_dir());
    assert_eq!(
        std::fs::read_dir(&sub).unwrap().count(),
        0,
        "submodule contents"
    );
    let out = f.repo.run_in(
        checkout.path(),
        "git",
        ["status", "--porcelain"],
        None,
        &default_path(),
    );
    assert_eq!((out.code, out.stdout.as_str()), (0, ""), "{out:?}");

    // Whatever the worker puts there, or if it removes the directory, the gitlink is unchanged.
    std::fs::write(sub.join("planted.txt"), "x").unwrap();
    assert_eq!(
        mirror
            .commit_workspace(main, checkout.path(), "m", &bot(), &bot())
            .unwrap(),
        None
    );
    std::fs::remove_dir_all(&sub).unwrap();
    assert_eq!(
        mirror
            .commit_workspace(main, checkout.path(), "m", &bot(), &bot())
            .unwrap(),
        None
    );
}

#[test]
fn a_workspace_nested_too_deeply_is_refused_with_a_clear_error() {
    let f = Fixture::new();
    let (mirror, main) = f.fetched();
    let work = tempfile::tempdir().unwrap();
    let checkout = mirror.checkout(main, &work.path().join("ws")).unwrap();
    let deep: PathBuf = std::iter::repeat_n("d", 200).collect();
    std::fs::create_dir_all(checkout.path().join(&deep)).unwrap();
    std::fs::write(checkout.path().join(&deep).join("f"), "x").unwrap();
    let err = mirror
        .commit_workspace(main, checkout.path(), "m", &bot(), &bot())
        .unwrap_err();
    assert!(matches!(err, GitError::WorkspaceTooLarge(_)), "{err}");
    assert!(err.to_string().contains("nested"), "{err}");
}
