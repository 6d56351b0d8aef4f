use super::*;

fn kind_of(path: &Path) -> std::fs::FileType {
    std::fs::symlink_metadata(path).unwrap().file_type()
}

#[test]
fn caches_and_dependency_directories_are_recognised_by_name() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = kind_of(tmp.path());
    let file_path = tmp.path().join("f");
    std::fs::write(&file_path, "x").unwrap();
    let file = kind_of(&file_path);
    for name in [
        "__pycache__",
        "node_modules",
        ".venv",
        ".pytest_cache",
        "pkg.egg-info",
    ] {
        assert!(is_cache(name.as_bytes(), dir, false), "{name}");
    }
    assert!(is_cache(b"m.pyc", file, false));
    assert!(!is_cache(b"m.py", file, false));
    assert!(
        !is_cache(b"target", dir, false),
        "target without Cargo.toml"
    );
    assert!(is_cache(b"target", dir, true));
    assert!(!is_cache(b"src", dir, true));
}

#[test]
fn dot_git_is_recognised_in_any_case() {
    for name in [".git", ".GIT", ".Git"] {
        assert!(is_dot_git(name.as_bytes()));
    }
    assert!(!is_dot_git(b".gitignore"));
    assert!(!is_dot_git(b"git"));
}
