//! `stray-backup`: a new file or directory that is a backup copy left behind.
//!
//! Three shapes: a backup suffix (`*.bak`, `*.orig`, `*.rej`, `*~`, `*.swp`, …); a copy named
//! after an original that sits beside it (`parse_backup.py` beside `parse.py`, `old_parse.py`,
//! `parse copy.py`); and a `*backup*` directory holding copies of files of the tree. A module that
//! is merely *about* backups (`backup_service.py` with no `service.py` beside it, `backups/`
//! holding code found nowhere else) is not one.

use crate::rules::prelude::*;
use std::collections::BTreeMap;
use std::sync::LazyLock;

use regex::bytes::{Regex, RegexBuilder};

use super::{FileRules, new_path};
use crate::change::{Change, RepoPath};
use crate::flag::{Flag, Rule};

/// Suffixes that only editors, merge tools and `patch` leave behind, with what each is.
const SUFFIXES: &[(&str, &str)] = &[
    (".bak", "a backup copy"),
    (".backup", "a backup copy"),
    (".orig", "a merge or patch leftover"),
    (".rej", "a rejected patch hunk"),
    (".swp", "an editor's swap file"),
    (".swo", "an editor's swap file"),
    ("~", "an editor's backup copy"),
];

/// Extensions that make a copy of the file named by the rest: `calc.py.old` beside `calc.py`.
/// Only a copy when that file exists, unlike [`SUFFIXES`].
const COPY_EXTENSIONS: &[&str] = &[".old", ".prev", ".save", ".copy"];

/// `name_backup`, `name.bak2`, `name (copy)`, `name - Copy`: the original's stem in group 1.
static COPY_SUFFIX: LazyLock<Regex> = LazyLock::new(|| {
    ci(r"^(.+?)(?:[ ._-]+\(?|\s*\()(?:backup|bak|old|orig|original|copy|save|saved)\)?[ ._-]?\d*$")
});
/// `backup_name`, `old_name`, `copy of name`: the original's stem in group 1.
static COPY_PREFIX: LazyLock<Regex> =
    LazyLock::new(|| ci(r"^(?:backup|bak|old|orig|copy(?:[ _-]of)?)[ ._-]+(.+)$"));
/// A directory named as a place for backups: `backup`, `backups`, `src_backup`, `old.bak`.
static BACKUP_DIR: LazyLock<Regex> = LazyLock::new(|| ci(r"backup|^bak$|[._-]bak$|^bak[._-]"));

fn ci(pattern: &str) -> Regex {
    RegexBuilder::new(pattern)
        .case_insensitive(true)
        .unicode(false)
        .build()
        .expect("valid pattern (tested)")
}

/// File names too common to say that two files with them are copies of each other.
const GENERIC_NAMES: &[&[u8]] = &[
    b"__init__.py",
    b"index.js",
    b"index.ts",
    b"mod.rs",
    b"lib.rs",
    b"main.rs",
    b"main.py",
    b"main.go",
    b"README.md",
    b"Makefile",
    b".gitkeep",
];

fn suffix(name: &[u8]) -> Option<(&'static str, &'static str)> {
    let lower = name.to_ascii_lowercase();
    SUFFIXES
        .iter()
        .find(|(s, _)| lower.ends_with(s.as_bytes()) && lower.len() > s.len())
        .copied()
}

/// The original a copy is named after, if it sits beside the copy (at the head or the base).
fn original_beside(ctx: &FileRules<'_>, path: &RepoPath) -> Option<RepoPath> {
    let name = path.file_name();
    let (stem, ext) = match name.iter().rposition(|&b| b == b'.') {
        Some(i) if i > 0 => (&name[..i], &name[i..]),
        _ => (name, &[][..]),
    };
    // `calc.py.old`, `settings.json.prev`: the whole original's name before a copy's extension.
    let whole = COPY_EXTENSIONS
        .iter()
        .any(|e| ext.eq_ignore_ascii_case(e.as_bytes()))
        .then(|| RepoPath::join(path.parent(), stem));
    whole
        .into_iter()
        .chain(
            [&*COPY_SUFFIX, &*COPY_PREFIX]
                .into_iter()
                .filter_map(|re| re.captures(stem)?.get(1))
                .map(|orig| {
                    let mut file = orig.as_bytes().to_vec();
                    file.extend_from_slice(ext);
                    RepoPath::join(path.parent(), &file)
                }),
        )
        .find(|orig| orig != path && ctx.exists_anywhere(orig))
}

/// The backup directory a path sits in: the shallowest component named like one.
fn backup_dir(path: &RepoPath) -> Option<(RepoPath, RepoPath)> {
    let bytes = path.as_bytes();
    let mut start = 0;
    for dir in path.dirs() {
        let end = start + dir.len();
        if BACKUP_DIR.is_match(dir) {
            let dir_path = RepoPath::new(&bytes[..end]);
            let rest = RepoPath::new(&bytes[end + 1..]);
            return Some((dir_path, rest));
        }
        start = end + 1;
    }
    None
}

/// True when the new file under a backup directory is a copy of a file of the tree: the same
/// bytes as the file at its place outside the directory, or as a file of the base with its name.
fn is_copy(ctx: &mut FileRules<'_>, dir: &RepoPath, rest: &RepoPath, path: &RepoPath) -> bool {
    /// Enough to find a copy among files of one name; more is searching, not checking.
    const MAX_COMPARED: usize = 8;
    let Some(content) = ctx.head.read(path) else {
        return false;
    };
    let outside = RepoPath::join(dir.parent(), rest.as_bytes());
    let mut places = vec![outside];
    if !GENERIC_NAMES.contains(&path.file_name()) {
        places.extend(
            ctx.base_by_name(path.file_name())
                .iter()
                .filter(|p| !p.as_bytes().starts_with(dir.as_bytes()))
                .take(MAX_COMPARED)
                .cloned(),
        );
    }
    places.iter().any(|p| {
        ctx.base.read(p).is_some_and(|c| c == content)
            || ctx.head.read(p).is_some_and(|c| c == content)
    })
}

pub(crate) fn check(changes: &[&Change], ctx: &mut FileRules<'_>) -> Vec<Flag> {
    let flag = |path: RepoPath, message: String| Flag {
        rule: Rule::StrayBackup,
        severity: Rule::StrayBackup.severity(),
        path,
        line: None,
        removed_line: None,
        message,
        snippet: None,
    };
    let mut flags = Vec::new();
    // Backup directories, with the copies found in each.
    let mut dirs: BTreeMap<RepoPath, Vec<RepoPath>> = BTreeMap::new();
    for change in changes {
        let in_backup_dir = new_path(change, |p| backup_dir(p).is_some()).cloned();
        if let Some(path) = in_backup_dir
            && let Some((dir, rest)) = backup_dir(&path)
            && is_copy(ctx, &dir, &rest, &path)
        {
            dirs.entry(dir).or_default().push(path);
            continue;
        }
        // Test data may well be a backup file on purpose (a fixture of a tool that reads them).
        if let Some(path) = new_path(change, |p| {
            suffix(p.file_name()).is_some() && !crate::paths::is_fixture(p)
        }) {
            let (suffix, what) = suffix(path.file_name()).unwrap_or(("", "a backup copy"));
            let message = format!("new file `{path}` looks like {what} (`{suffix}`)");
            flags.push(flag(path.clone(), message));
            continue;
        }
        if let Some(path) = new_path(change, |p| original_beside(ctx, p).is_some())
            && let Some(original) = original_beside(ctx, path)
        {
            let message = format!("new file `{path}` looks like a copy of `{original}` beside it");
            flags.push(flag(path.clone(), message));
        }
    }
    for (dir, copies) in dirs {
        let names: Vec<String> = copies.iter().take(3).map(|p| p.to_string()).collect();
        let more = if copies.len() > 3 { ", …" } else { "" };
        let message = format!(
            "new directory `{dir}/` holds {} {} of files of the tree ({}{more})",
            copies.len(),
            if copies.len() == 1 { "copy" } else { "copies" },
            names.join(", ")
        );
        let mut path = dir.as_bytes().to_vec();
        path.push(b'/');
        flags.push(flag(RepoPath::new(path), message));
    }
    flags
}

/// The rule's registry entry and what the detector runs for it.
pub(crate) const RULE: RuleInfo = RuleInfo {
    rule: Rule::StrayBackup,
    id: "stray-backup",
    severity: Severity::Warning,
    source: Source::Detector,
    languages: "any file",
    summary: "A new file or directory is a backup copy left behind.",
    help: "Flags new `*.bak`, `*.orig`, `*.rej`, `*~`, `*.swp` files, `name_backup.py` \
           or `name.py.old` beside `name.py`, and `backup/` directories of copies.",
    judges_tests: false,
    passes: &[Pass::Change(new_files)],
};

/// New files, by name, against the trees (the files a repository ignores are not read).
fn new_files(across: &mut Across<'_, '_>) -> Vec<(Flag, Option<String>)> {
    across.by_name(check)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{Spec::*, run};

    fn backups(specs: &[crate::testing::Spec<'_>]) -> Vec<String> {
        run(specs)
            .flags
            .into_iter()
            .filter(|f| f.rule == Rule::StrayBackup)
            .map(|f| f.path.to_string())
            .collect()
    }

    #[test]
    fn suffixes() {
        for p in [
            "src/app.py.bak",
            "src/app.py.orig",
            "src/app.py.rej",
            "notes.txt~",
            "src/.app.py.swp",
            "db.sqlite.BAK",
            "README.md.backup",
        ] {
            assert_eq!(backups(&[Add(p, "x\n")]), vec![p], "{p}");
        }
        assert!(backups(&[Add("src/bakery.py", "x\n")]).is_empty());
        // Test data: a fixture of a tool that reads backup files.
        assert!(backups(&[Add("tests/fixtures/config.ini.bak", "x\n")]).is_empty());
        assert!(backups(&[Add("src/original.py", "x\n")]).is_empty());
    }

    #[test]
    fn copies_beside_their_original() {
        for p in [
            "src/parse_backup.py",
            "src/parse.backup.py",
            "src/parse-old.py",
            "src/parse_bak2.py",
            "src/parse copy.py",
            "src/parse (copy).py",
            "src/parse - Copy.py",
            "src/backup_parse.py",
            "src/old_parse.py",
            "src/Copy of parse.py",
            "src/parse_orig.py",
            "src/parse.py.old",
            "src/parse.py.PREV",
        ] {
            assert_eq!(
                backups(&[Keep("src/parse.py", "x\n"), Add(p, "x\n")]),
                vec![p],
                "{p}"
            );
        }
        // The original may have been deleted by the same change: it was beside it at the base.
        assert_eq!(
            backups(&[
                Delete("src/parse.py", "x\n"),
                Add("src/parse_backup.py", "x\n")
            ]),
            vec!["src/parse_backup.py"]
        );
    }

    #[test]
    fn a_copy_extension_with_no_original_beside_it_is_not_a_copy() {
        // `.old` alone says little: a data file's history, a fixture. Only a file's copy beside
        // it is one.
        assert!(backups(&[Add("src/parse.py.old", "x\n")]).is_empty());
        assert!(
            backups(&[Keep("src/parse.py", "x\n"), Add("data/parse.py.old", "x\n")]).is_empty()
        );
        assert!(backups(&[Keep("src/parse.py", "x\n"), Add("src/parse.old", "x\n")]).is_empty());
    }

    #[test]
    fn modules_about_backups_are_not_copies() {
        assert!(backups(&[Add("src/backup_service.py", "x\n")]).is_empty());
        assert!(
            backups(&[
                Keep("src/service.py", "y\n"),
                Add("lib/backup_service.py", "x\n")
            ])
            .is_empty(),
            "original elsewhere"
        );
        assert!(backups(&[Add("app/backups/scheduler.py", "def run(): pass\n")]).is_empty());
        assert!(
            backups(&[
                Keep("app/models.py", "a = 1\n"),
                Add("app/backup/models.py", "b = 2\n")
            ])
            .is_empty(),
            "same name, other code"
        );
    }

    #[test]
    fn backup_directory_of_copies() {
        let r = backups(&[
            Modify("src/a.py", "a = 1\n", "a = 2\n"),
            Keep("src/b.py", "b = 1\n"),
            Add("src_backup/a.py", "a = 1\n"),
            Add("src_backup/b.py", "b = 1\n"),
        ]);
        assert_eq!(r, vec!["src_backup/"]);
        let r = backups(&[
            Keep("lib/util.py", "u = 1\n"),
            Add(".backup/lib/util.py", "u = 1\n"),
        ]);
        assert_eq!(r, vec![".backup/"]);
    }

    #[test]
    fn moving_an_existing_backup_is_not_new() {
        assert!(
            backups(&[Rename("old/app.py.bak", "archive/app.py.bak", "x\n", "x\n")]).is_empty()
        );
        assert_eq!(
            backups(&[Rename(
                "tests/test_parse.py",
                "tests/test_parse.py.bak",
                "x\n",
                "x\n"
            )]),
            vec!["tests/test_parse.py.bak"]
        );
    }

    #[test]
    fn message() {
        let r = run(&[Add("src/app.py.orig", "x\n")]);
        assert_eq!(
            r.flags[0].message,
            "new file `src/app.py.orig` looks like a merge or patch leftover (`.orig`)"
        );
    }
}
