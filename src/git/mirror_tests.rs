use std::path::Path;

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
