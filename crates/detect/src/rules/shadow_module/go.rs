//! `shadow-module` in Go: `go.mod` newly replacing a dependency with a local directory that the
//! same change writes (`replace github.com/google/uuid => ./third_party/uuid`): the build
//! compiles that code in the dependency's place. A replace of a module of the same owner (a
//! monorepo's sibling, `github.com/acme/lib` beside `github.com/acme/app`), to a version, or to
//! a directory the change leaves alone is not flagged.

use crate::change::{Change, ChangeKind, RepoPath};

/// A `replace` directive: the module replaced, the local directory, and its 1-based line.
struct Replace {
    module: String,
    dir: String,
    line: u32,
}

/// The `module` path and the local `replace` directives of a `go.mod`.
fn read(text: &str) -> (Option<String>, Vec<Replace>) {
    let mut module = None;
    let mut out = Vec::new();
    let mut in_block = false;
    for (line, l) in (1u32..).zip(text.lines()) {
        let l = l.split("//").next().unwrap_or(l).trim();
        if let Some(rest) = l.strip_prefix("module ") {
            module = Some(rest.trim().trim_matches('"').to_owned());
            continue;
        }
        let spec = if in_block {
            if l == ")" {
                in_block = false;
                continue;
            }
            l
        } else if let Some(rest) = l.strip_prefix("replace") {
            let rest = rest.trim();
            if rest == "(" {
                in_block = true;
                continue;
            }
            rest
        } else {
            continue;
        };
        let Some((from, to)) = spec.split_once("=>") else {
            continue;
        };
        let (from, to) = (from.split_whitespace().next(), to.trim());
        let (Some(from), true) = (from, to.starts_with("./") || to.starts_with("../")) else {
            continue;
        };
        out.push(Replace {
            module: from.to_owned(),
            dir: to.split_whitespace().next().unwrap_or(to).to_owned(),
            line,
        });
    }
    (module, out)
}

/// Who publishes a module: `github.com/acme` of `github.com/acme/lib/v2` on a shared forge,
/// the host itself (`example.com`) elsewhere.
fn owner(module: &str) -> String {
    const FORGES: &[&str] = &[
        "github.com",
        "gitlab.com",
        "bitbucket.org",
        "codeberg.org",
        "gitea.com",
        "git.sr.ht",
    ];
    let host = module.split('/').next().unwrap_or(module);
    let parts = if FORGES.contains(&host) { 2 } else { 1 };
    module.split('/').take(parts).collect::<Vec<_>>().join("/")
}

/// The flags' lines and messages for one `go.mod`, given its two versions and the change's
/// files.
pub(super) fn replaces(
    path: &RepoPath,
    base: Option<&[u8]>,
    head: &[u8],
    changes: &[&Change],
) -> Vec<(u32, String)> {
    let head = String::from_utf8_lossy(head);
    let (own, found) = read(&head);
    let before = base.map_or_else(Vec::new, |b| read(&String::from_utf8_lossy(b)).1);
    let mut out = Vec::new();
    for r in found {
        if before
            .iter()
            .any(|b| b.module == r.module && b.dir == r.dir)
            || own.as_deref().is_some_and(|m| owner(m) == owner(&r.module))
        {
            continue;
        }
        let mut prefix = super::join_dir(path.parent(), r.dir.as_bytes());
        prefix.push(b'/');
        let written = changes.iter().any(|c| {
            matches!(
                c.kind,
                ChangeKind::Added | ChangeKind::Copied | ChangeKind::Renamed
            ) && c
                .new_path
                .as_ref()
                .is_some_and(|p| p.as_bytes().starts_with(&prefix))
        });
        if written {
            out.push((
                r.line,
                format!(
                    "`go.mod` newly replaces the dependency `{}` with `{}`, a directory this change writes: the build compiles that code in its place",
                    r.module, r.dir
                ),
            ));
        }
    }
    out
}
