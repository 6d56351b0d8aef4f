use super::*;

fn checkout(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, content) in files {
        std::fs::write(dir.path().join(name), content).unwrap();
    }
    dir
}

/// Files at a checkout's root, and the toolchains they call for.
type Case<'a> = (&'a [(&'a str, &'a str)], &'a [Language]);

#[test]
fn the_toolchains_come_from_the_files_at_the_root() {
    use Language::*;
    let cases: &[Case] = &[
        (&[("requirements-dev.txt", "pytest\n")], &[Python]),
        (
            &[("pyproject.toml", "[project]\n"), ("package.json", "{}")],
            &[Python, Node],
        ),
        (&[("package.json", "{}")], &[Node]),
        (&[("go.mod", "module x\n"), ("Cargo.toml", "")], &[Go, Rust]),
        (&[("Cargo.toml", "")], &[Rust]),
        (&[("README.md", "")], &[]),
        // Only at the root, and only by those names.
        (&[("requirements.in", "")], &[]),
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
fn a_symlink_does_not_make_a_checkout_need_a_toolchain() {
    let dir = checkout(&[]);
    std::os::unix::fs::symlink("/etc/passwd", dir.path().join("go.mod")).unwrap();
    std::os::unix::fs::symlink("/etc/passwd", dir.path().join("requirements.txt")).unwrap();
    assert_eq!(Language::detect(dir.path()), []);
}

#[test]
fn the_tag_changes_with_the_recipe_and_the_image_below_and_only_with_them() {
    let tag = image_tag(Language::Python, "sha256:base");
    assert!(tag.starts_with("forgeward/sandbox-python:"), "{tag}");
    assert_eq!(tag.len(), "forgeward/sandbox-python:".len() + TAG_HEX);
    assert_eq!(tag, image_tag(Language::Python, "sha256:base"));
    assert_ne!(tag, image_tag(Language::Python, "sha256:other"));
    // Node over Python is not Node over the base.
    assert_ne!(
        image_tag(Language::Node, &tag),
        image_tag(Language::Node, "sha256:base")
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
