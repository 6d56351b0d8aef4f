use std::path::Path;

use git2::Oid;

use super::*;
use crate::git::co_authored_by;

fn path_of(name: &str) -> Result<PathBuf, GitError> {
    mirror_path(
        Path::new("/data/mirrors"),
        Forge::GitHub,
        &RepoName(name.to_owned()),
    )
}

#[test]
fn a_mirror_lives_under_the_forge_and_the_escaped_name() {
    assert_eq!(
        path_of("Octo-Org/my_repo").unwrap(),
        Path::new("/data/mirrors/github/octo-org/my_repo.git")
    );
    assert_eq!(
        mirror_path(
            Path::new("/m"),
            Forge::GitLab,
            &RepoName("group/sub/pro.ject".to_owned())
        )
        .unwrap(),
        Path::new("/m/gitlab/group/sub/pro%2Eject.git")
    );
}

#[test]
fn no_name_reaches_outside_the_root_or_into_another_mirror() {
    for name in [
        "../../etc/x",
        "a/../../b",
        "./.",
        "..%2F/x",
        "a/.git",
        "/abs/x",
    ] {
        match path_of(name) {
            Ok(path) => {
                assert!(
                    path.starts_with("/data/mirrors/github/"),
                    "{name}: {path:?}"
                );
                assert!(
                    path.components().all(|c| matches!(
                        c,
                        std::path::Component::Normal(_) | std::path::Component::RootDir
                    )),
                    "{name}: {path:?}"
                );
            }
            Err(e) => assert!(matches!(e, GitError::BadRepoName(_)), "{name}: {e}"),
        }
    }
    // `a/b.git/c` would otherwise be inside the mirror of `a/b`.
    let outer = path_of("a/b").unwrap();
    let inner = path_of("a/b.git/c").unwrap();
    assert!(!inner.starts_with(&outer), "{inner:?} inside {outer:?}");
    assert_eq!(
        path_of("a/b\n").unwrap(),
        Path::new("/data/mirrors/github/a/b%0A.git")
    );
}

#[test]
fn names_without_an_owner_or_with_empty_parts_are_refused() {
    for name in ["", "repo", "a//b", "a/b/", "/a", &"a/".repeat(30)] {
        assert!(
            matches!(path_of(name), Err(GitError::BadRepoName(_))),
            "{name:?}"
        );
    }
}

#[test]
fn urls_that_could_carry_a_secret_are_refused_before_use() {
    for url in [
        "https://x-access-token:s3cret@github.com/o/r.git",
        "https://token@github.com/o/r.git",
        "https://github.com/o/r.git?access_token=s3cret",
        "http://host/r.git#frag",
    ] {
        let e = check_url(url).unwrap_err();
        assert!(matches!(e, GitError::CredentialsInUrl), "{url}: {e}");
        assert!(!e.to_string().contains("s3cret"), "{e}");
    }
    for url in [
        "ssh://git@host/r.git",
        "git://host/r",
        "ext::sh -c x",
        "relative/path",
    ] {
        assert!(check_url(url).is_err(), "{url}");
    }
    for url in [
        "https://github.com/o/r.git",
        "http://127.0.0.1:8080/r.git",
        "file:///tmp/r.git",
        "/tmp/r.git",
    ] {
        assert!(check_url(url).is_ok(), "{url}");
    }
}

#[test]
fn change_request_heads_have_each_forges_ref_name() {
    assert_eq!(
        change_request_refspec(Forge::GitHub, 12),
        "+refs/pull/12/head:refs/pull/12/head"
    );
    assert_eq!(
        change_request_refspec(Forge::GitLab, 3),
        "+refs/merge-requests/3/head:refs/merge-requests/3/head"
    );
}

#[test]
fn a_co_author_cannot_add_lines_to_the_message() {
    let msg = co_authored_by(
        "Fix the parser\n\n",
        "Eve\nSigned-off-by: Mallory <m@x>",
        "e ve@<x>.org",
    );
    assert_eq!(
        msg,
        "Fix the parser\n\nCo-authored-by: EveSigned-off-by: Mallory m@x <eve@x.org>\n"
    );
    assert_eq!(msg.lines().filter(|l| l.contains(':')).count(), 1);
}

#[test]
fn job_pins_must_be_one_ref_component() {
    assert!(pin_ref("42").is_ok());
    for job in ["a/b", "..", "x y", ""] {
        assert!(pin_ref(job).is_err(), "{job:?}");
    }
}

/// A non-bare repository with `main` and `feature`, each a commit of its own.
fn source_with_two_branches() -> (tempfile::TempDir, git2::Repository, Oid, Oid) {
    use crate::git::testing::commit;
    let dir = tempfile::tempdir().expect("a temporary directory");
    let git = git2::Repository::init(dir.path().join("src")).expect("init");
    let main = commit(&git, &[("a.py", "a = 1\n")], None);
    let feature = commit(
        &git,
        &[("a.py", "a = 1\n"), ("b.py", "b = 2\n")],
        Some(main),
    );
    git.reference("refs/heads/main", main, true, "t")
        .expect("main");
    git.reference("refs/heads/feature", feature, true, "t")
        .expect("feature");
    (dir, git, main, feature)
}

/// Every object file and pack in a repository's own store (not the ones it borrows).
fn own_objects(mirror: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(mirror.join("objects")).expect("objects") {
        let entry = entry.expect("an entry");
        if entry.file_name() == "info" {
            continue;
        }
        for file in std::fs::read_dir(entry.path()).expect("a directory") {
            out.push(file.expect("a file").path());
        }
    }
    out
}

#[test]
fn a_local_repository_s_objects_are_borrowed_not_copied() {
    let (dir, source, main, feature) = source_with_two_branches();
    let root = dir.path().join("mirrors");
    let name = RepoName("local/src-0123".to_owned());
    let mirror = Mirror::open_or_create(&root, Forge::GitHub, &name).expect("a mirror");
    mirror
        .borrow(source.workdir().expect("a work tree"))
        .expect("borrowed");
    let git = mirror.repo().git2();
    assert_eq!(git.refname_to_id("refs/heads/main").ok(), Some(main));
    assert_eq!(git.refname_to_id("refs/heads/feature").ok(), Some(feature));
    assert!(
        own_objects(mirror.path()).is_empty(),
        "nothing copied: {:?}",
        own_objects(mirror.path())
    );
    let alternates = std::fs::read_to_string(mirror.path().join("objects/info/alternates"))
        .expect("the alternates file");
    let objects = std::fs::canonicalize(source.path().join("objects")).expect("objects");
    assert_eq!(alternates, format!("{}\n", objects.display()));
    // The borrowed objects are readable through the mirror, also once it is opened again.
    let checkout = dir.path().join("checkout");
    let reopened = Mirror::open_or_create(&root, Forge::GitHub, &name).expect("reopened");
    // (A checkout removes its files when dropped.)
    let _checkout = reopened.checkout(feature, &checkout).expect("a checkout");
    assert_eq!(
        std::fs::read_to_string(checkout.join("b.py")).expect("b.py"),
        "b = 2\n"
    );

    // A branch deleted and one moved at the source: the next borrow follows.
    source
        .find_reference("refs/heads/feature")
        .and_then(|mut r| r.delete())
        .expect("feature deleted");
    source
        .reference("refs/heads/main", feature, true, "t")
        .expect("main moved");
    reopened.borrow(source.path()).expect("borrowed again");
    let git = reopened.repo().git2();
    assert_eq!(git.refname_to_id("refs/heads/main").ok(), Some(feature));
    assert!(git.refname_to_id("refs/heads/feature").is_err(), "pruned");
    assert!(own_objects(reopened.path()).is_empty());
}

#[test]
fn a_missing_object_is_named_with_the_path_that_needs_it() {
    let (dir, source, main, feature) = source_with_two_branches();
    let repo =
        crate::git::Repo::from_git2(git2::Repository::open(source.path()).expect("opened again"));
    assert_eq!(repo.missing_object(feature), None);
    // `b.py` is only in `feature`: remove its loose object.
    let blob = source
        .find_commit(feature)
        .and_then(|c| c.tree())
        .and_then(|t| t.get_path(Path::new("b.py")).map(|e| e.id()))
        .expect("b.py's blob");
    let hex = blob.to_string();
    std::fs::remove_file(
        source
            .path()
            .join("objects")
            .join(&hex[..2])
            .join(&hex[2..]),
    )
    .expect("the loose object removed");
    assert_eq!(
        repo.missing_object(feature),
        Some((blob, "b.py".to_owned()))
    );
    assert_eq!(repo.missing_object(main), None, "main does not need it");
    drop(dir);
}

#[test]
fn a_mirror_lock_makes_another_holder_wait() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let root = dir.path().to_path_buf();
    let name = RepoName("acme/widgets".to_owned());
    let first = MirrorLock::take(&root, Forge::GitHub, &name).expect("the lock");
    let (tx, rx) = std::sync::mpsc::channel();
    let waiter = {
        let (root, name) = (root.clone(), name.clone());
        std::thread::spawn(move || {
            let second = MirrorLock::take(&root, Forge::GitHub, &name).expect("the lock");
            tx.send(()).expect("told");
            drop(second);
        })
    };
    assert!(
        rx.recv_timeout(Duration::from_millis(300)).is_err(),
        "the second holder took the lock while the first held it"
    );
    drop(first);
    rx.recv_timeout(Duration::from_secs(10))
        .expect("the second holder got the lock once the first let go");
    waiter.join().expect("the waiter");
    // Another repository's mirror has its own lock.
    let _other = MirrorLock::take(&root, Forge::GitHub, &RepoName("acme/other".to_owned()))
        .expect("another mirror's lock");
}
