use super::*;

fn checkout(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, content) in files {
        std::fs::write(dir.path().join(name), content).unwrap();
    }
    dir
}

#[test]
fn the_language_comes_from_the_files_at_the_root() {
    let cases: &[(&[(&str, &str)], Language)] = &[
        (&[("requirements-dev.txt", "pytest\n")], Language::Python),
        (
            &[
                ("pyproject.toml", "[project]\n"),
                ("package-lock.json", "{}"),
            ],
            Language::Python,
        ),
        (
            &[("package.json", "{}"), ("package-lock.json", "{}")],
            Language::Node,
        ),
        (&[("package.json", "{}")], Language::Plain),
        (&[("go.mod", "module x\n")], Language::Go),
        (&[("Cargo.toml", ""), ("Cargo.lock", "")], Language::Rust),
        (&[("README.md", "")], Language::Plain),
    ];
    for (files, expected) in cases {
        assert_eq!(
            Language::detect(checkout(files).path()),
            *expected,
            "{files:?}"
        );
    }
}

#[test]
fn a_symlinked_dependency_file_is_refused_not_read() {
    let dir = checkout(&[("requirements.txt", "six\n")]);
    std::os::unix::fs::symlink("/etc/passwd", dir.path().join("pyproject.toml")).unwrap();
    let err = read_dependency_files(dir.path(), Language::Python).unwrap_err();
    assert_eq!(
        err.to_string(),
        "dependency file pyproject.toml: is a symlink; dependency files must be regular files"
    );
    // A symlink alone does not even make the checkout a Python one.
    let dir = checkout(&[]);
    std::os::unix::fs::symlink("/etc/passwd", dir.path().join("go.mod")).unwrap();
    assert_eq!(Language::detect(dir.path()), Language::Plain);
}

#[test]
fn dependency_files_are_read_and_optional_ones_may_be_missing() {
    let dir = checkout(&[
        ("requirements.txt", "six\n"),
        ("requirements-test.txt", "pytest\n"),
    ]);
    let files = read_dependency_files(dir.path(), Language::Python).unwrap();
    let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["requirements-test.txt", "requirements.txt"]);

    let dir = checkout(&[("package-lock.json", "{}")]);
    let err = read_dependency_files(dir.path(), Language::Node).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("dependency file package.json: "),
        "{err}"
    );
}

#[test]
fn the_tag_changes_with_every_input_and_only_with_them() {
    let files = vec![("requirements.txt".to_string(), b"six\n".to_vec())];
    let tag = image_tag(Language::Python, "sha256:base", &files);
    assert!(tag.starts_with("forgeward/sandbox-python:"), "{tag}");
    assert_eq!(tag.len(), "forgeward/sandbox-python:".len() + TAG_HEX);
    assert_eq!(tag, image_tag(Language::Python, "sha256:base", &files));
    let other_content = vec![("requirements.txt".to_string(), b"six==1\n".to_vec())];
    let other_name = vec![("requirements-dev.txt".to_string(), b"six\n".to_vec())];
    for other in [
        image_tag(Language::Python, "sha256:other", &files),
        image_tag(Language::Python, "sha256:base", &other_content),
        image_tag(Language::Python, "sha256:base", &other_name),
        image_tag(Language::Python, "sha256:base", &[]),
    ] {
        assert_ne!(tag, other);
    }
    // Name and content are delimited: moving bytes from one to the other is another recipe.
    let a = vec![("ab".to_string(), b"c".to_vec())];
    let b = vec![("a".to_string(), b"bc".to_vec())];
    assert_ne!(
        image_tag(Language::Go, "x", &a),
        image_tag(Language::Go, "x", &b)
    );
}

#[test]
fn a_build_log_tail_is_one_line_without_colours_or_builder_notices() {
    let mut log = String::from(
        "DEPRECATED: The legacy builder is deprecated and will be removed in a future release.\n",
    );
    for i in 0..20 {
        log.push_str(&format!("Step {i}\n"));
    }
    log.push_str("\u{1b}[91mERROR: No matching distribution found for nope==9\n\u{1b}[0m\n");
    let tail = log_tail(&log);
    assert!(!tail.contains('\n') && !tail.contains('\u{1b}'), "{tail}");
    assert!(
        tail.ends_with("Step 19 | ERROR: No matching distribution found for nope==9"),
        "{tail}"
    );
    assert!(
        !tail.contains("DEPRECATED") && !tail.contains("Step 8 "),
        "{tail}"
    );
    assert_eq!(tail.matches(" | ").count(), LOG_TAIL_LINES - 1);
}
