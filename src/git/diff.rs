//! Diffs: a range of a repository through the detector, file by file, on every core.
//!
//! git2 computes which files changed (with rename and copy detection); each file's two
//! versions are then read, diffed line by line and analysed on a pool of threads, each with
//! its own handle on the repository, holding one file at a time. The working tree is read from
//! disk as it is: no filter or diff driver runs, and symlinks are judged by name only.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use git2::{Delta, DiffFindOptions, DiffOptions, FileMode, Oid, Repository};

use super::tree::{CommitTree, Read, WorkTree};
use super::{GitError, Repo};
use crate::detect::diff::line_diff;
use crate::detect::timings::{self, Shared};
use crate::detect::{
    Change, ChangeKind, Detector, FileAnalysis, FileInput, Language, RepoPath, Report,
};

/// The head of a range: a commit, or the working tree (uncommitted and untracked files that
/// git does not ignore).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Head {
    Commit(Oid),
    Worktree,
}

/// One side of a changed file.
#[derive(Clone)]
struct Side {
    path: RepoPath,
    oid: Oid,
    /// A symlink or a submodule: judged by its path only.
    not_a_file: bool,
}

/// One changed file, before its contents are read.
struct Job {
    kind: ChangeKind,
    old: Option<Side>,
    new: Option<Side>,
}

/// Where a job reads the head side from.
enum Source<'a> {
    Odb,
    Disk(&'a Path),
}

/// Runs the detector over `base..head`.
///
/// Rename detection only pairs added and deleted files, so the modified files — nearly all of
/// a large change — are analysed on the other threads while this one looks for renames.
pub fn analyze_range(
    repo: &Repo,
    base: Oid,
    head: Head,
    detector: &Detector,
) -> Result<Report, GitError> {
    let git = repo.git2();
    let mut diff = tree_diff(git, base, head)?;
    let workdir: Option<PathBuf> = match head {
        Head::Commit(_) => None,
        Head::Worktree => Some(repo.workdir()?.to_path_buf()),
    };
    let source = match &workdir {
        Some(dir) => Source::Disk(dir),
        None => Source::Odb,
    };
    let modified = languages_first(jobs(&diff, |kind| kind == ChangeKind::Modified));
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(diff.deltas().len().div_ceil(FILES_PER_THREAD))
        .max(1);
    let pool = Pool {
        modified,
        rest: OnceLock::new(),
        next_modified: AtomicUsize::new(0),
        next_rest: AtomicUsize::new(0),
        source: &source,
        detector,
    };
    let git_dir = repo.git_dir();
    let analyses = std::thread::scope(|s| {
        let helpers: Vec<_> = (1..threads)
            .map(|_| {
                s.spawn(|| {
                    let mut out = Vec::new();
                    // Without a repository of its own, a helper leaves its files to the others.
                    if let Ok(git) = Repository::open(&git_dir) {
                        pool.work(&git, &mut out, Phase::Modified);
                        pool.work(&git, &mut out, Phase::Rest);
                    }
                    out
                })
            })
            .collect();
        let renames = find_renames(&mut diff, head);
        let rest = match &renames {
            Ok(()) => languages_first(jobs(&diff, |kind| kind != ChangeKind::Modified)),
            Err(_) => Vec::new(),
        };
        // Set on every path: the helpers wait for it.
        let _ = pool.rest.set(rest);
        let mut out = Vec::new();
        pool.work(git, &mut out, Phase::Modified);
        pool.work(git, &mut out, Phase::Rest);
        for h in helpers {
            match h.join() {
                Ok(r) => out.extend(r),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        renames.map(|()| out)
    })?;
    let mut analyses = analyses;
    analyses.sort_by_key(|(order, _)| *order);
    let analyses = analyses.into_iter().map(|(_, a)| a).collect();
    let base_tree = CommitTree::new(git, base);
    let report = match (head, &workdir) {
        (Head::Commit(h), _) => detector.finish(analyses, &base_tree, &CommitTree::new(git, h)),
        (Head::Worktree, Some(dir)) => {
            detector.finish(analyses, &base_tree, &WorkTree::new(git, dir))
        }
        (Head::Worktree, None) => unreachable!("a worktree head always has a workdir"),
    };
    Ok(report)
}

fn tree_diff(git: &Repository, base: Oid, head: Head) -> Result<git2::Diff<'_>, GitError> {
    let tree_of = |oid: Oid| {
        git.find_commit(oid)
            .and_then(|c| c.tree())
            .map_err(|e| GitError::git(format!("reading commit {oid}"), e))
    };
    let base_tree = tree_of(base)?;
    let mut opts = DiffOptions::new();
    opts.ignore_submodules(true).include_typechange(true);
    match head {
        Head::Commit(h) => {
            let head_tree = tree_of(h)?;
            git.diff_tree_to_tree(Some(&base_tree), Some(&head_tree), Some(&mut opts))
        }
        Head::Worktree => {
            opts.include_untracked(true).recurse_untracked_dirs(true);
            git.diff_tree_to_workdir_with_index(Some(&base_tree), Some(&mut opts))
        }
    }
    .map_err(|e| GitError::git("computing the diff", e))
}

fn find_renames(diff: &mut git2::Diff<'_>, head: Head) -> Result<(), GitError> {
    /// Enough for large refactors; libgit2's default of 200 gives up on them.
    const RENAME_LIMIT: usize = 5000;
    let mut find = DiffFindOptions::new();
    // Renames only: copy detection compares every added file with every modified one, which
    // costs more than the rest of a large check together, and a copy is judged as the new file
    // it is anyway.
    find.renames(true)
        .copies(false)
        .rename_limit(RENAME_LIMIT)
        .for_untracked(head == Head::Worktree);
    diff.find_similar(Some(&mut find))
        .map_err(|e| GitError::git("finding renames", e))
}

/// The changed files of `diff` whose kind `wanted` accepts.
fn jobs(diff: &git2::Diff<'_>, wanted: impl Fn(ChangeKind) -> bool) -> Vec<Job> {
    let side = |f: git2::DiffFile<'_>| -> Option<Side> {
        let path = RepoPath::new(f.path_bytes()?);
        Some(Side {
            path,
            oid: f.id(),
            not_a_file: matches!(f.mode(), FileMode::Link | FileMode::Commit),
        })
    };
    let mut jobs = Vec::new();
    for delta in diff.deltas() {
        let kind = match delta.status() {
            Delta::Added | Delta::Untracked => ChangeKind::Added,
            Delta::Modified | Delta::Typechange | Delta::Conflicted => ChangeKind::Modified,
            Delta::Deleted => ChangeKind::Deleted,
            Delta::Renamed => ChangeKind::Renamed,
            Delta::Copied => ChangeKind::Copied,
            Delta::Unmodified | Delta::Ignored | Delta::Unreadable => continue,
        };
        if !wanted(kind) {
            continue;
        }
        let old = (kind != ChangeKind::Added)
            .then(|| side(delta.old_file()))
            .flatten();
        let new = (kind != ChangeKind::Deleted)
            .then(|| side(delta.new_file()))
            .flatten();
        if old.is_some() || new.is_some() {
            jobs.push(Job { kind, old, new });
        }
    }
    jobs
}

/// `jobs` with their places in the diff, in the order the pool hands them out: the first file
/// of each language, then the rest in the diff's order. The detector compiles a language's
/// patterns when its first file of that language comes, and a thread that needs patterns another
/// thread is compiling waits for them: taking different languages first, the threads compile
/// side by side. The rest keep the diff's order (by path): handing every file out by language in
/// turn was slower on a large change.
fn languages_first(jobs: Vec<Job>) -> Vec<(usize, Job)> {
    let mut seen = Vec::new();
    let (mut first, mut rest) = (Vec::new(), Vec::new());
    for (place, job) in jobs.into_iter().enumerate() {
        let lang = job
            .new
            .as_ref()
            .or(job.old.as_ref())
            .and_then(|s| Language::of(&s.path));
        if seen.contains(&lang) {
            rest.push((place, job));
        } else {
            seen.push(lang);
            first.push((place, job));
        }
    }
    first.extend(rest);
    first
}

/// Below this many files a second thread costs more than it saves.
const FILES_PER_THREAD: usize = 16;

#[derive(Clone, Copy)]
enum Phase {
    Modified,
    Rest,
}

/// The files of a range, shared by the threads that analyse them: the modified ones at once,
/// the rest once renames are known.
struct Pool<'a> {
    modified: Vec<(usize, Job)>,
    rest: OnceLock<Vec<(usize, Job)>>,
    next_modified: AtomicUsize,
    next_rest: AtomicUsize,
    source: &'a Source<'a>,
    detector: &'a Detector,
}

impl Pool<'_> {
    /// Analyses files of `phase` until none is left, each tagged with its place in the report.
    fn work(&self, git: &Repository, out: &mut Vec<(usize, FileAnalysis)>, phase: Phase) {
        let (jobs, next, offset) = match phase {
            Phase::Modified => (&self.modified, &self.next_modified, 0),
            Phase::Rest => (self.rest.wait(), &self.next_rest, self.modified.len()),
        };
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some((place, job)) = jobs.get(i) else {
                break;
            };
            out.push((
                offset + place,
                analyze_one(git, job, self.source, self.detector),
            ));
        }
    }
}

/// A blob's contents if it is a file of at most `limit` bytes.
fn read_blob(git: &Repository, side: &Side, limit: u64) -> Read {
    if side.not_a_file || side.oid.is_zero() {
        return Read::Nothing;
    }
    let Ok(blob) = git.find_blob(side.oid) else {
        return Read::Nothing;
    };
    match blob.size() as u64 {
        size if size > limit => Read::TooLarge(size),
        _ => Read::Text(blob.content().to_vec()),
    }
}

/// Git's own test for binary content: a NUL byte in the first 8000 bytes.
fn is_binary(content: &[u8]) -> bool {
    /// The length of the prefix git inspects (`buffer_is_binary` in git's xdiff-interface.c).
    const FIRST_FEW_BYTES: usize = 8000;
    content[..content.len().min(FIRST_FEW_BYTES)].contains(&0)
}

fn analyze_one(
    git: &Repository,
    job: &Job,
    source: &Source<'_>,
    detector: &Detector,
) -> FileAnalysis {
    let limit = detector.max_file_size();
    let old = job
        .old
        .as_ref()
        .map_or(Read::Nothing, |s| read_blob(git, s, limit));
    let new = job.new.as_ref().map_or(Read::Nothing, |s| match source {
        Source::Odb => read_blob(git, s, limit),
        Source::Disk(root) if !s.not_a_file => WorkTree::read_within(root, &s.path, limit),
        Source::Disk(_) => Read::Nothing,
    });
    let too_large = new.too_large().or(old.too_large());
    let (old, new) = (old.text(), new.text());
    let unreadable = |side: &Option<Side>, content: &Option<Vec<u8>>| {
        side.is_some() && content.as_deref().is_none_or(is_binary)
    };
    let binary = unreadable(&job.old, &old) || unreadable(&job.new, &new);
    let (old, new) = if binary { (None, None) } else { (old, new) };
    let (added, removed) = if binary {
        (Vec::new(), Vec::new())
    } else {
        timings::shared(Shared::LineDiff, || {
            line_diff(
                old.as_deref().unwrap_or_default(),
                new.as_deref().unwrap_or_default(),
            )
        })
    };
    let change = Change {
        kind: job.kind,
        old_path: job.old.as_ref().map(|s| s.path.clone()),
        new_path: job.new.as_ref().map(|s| s.path.clone()),
        added,
        removed,
        binary,
        too_large,
    };
    detector.analyze(FileInput {
        change,
        old: old.as_deref(),
        new: new.as_deref(),
    })
}

#[cfg(test)]
mod tests {
    use super::{ChangeKind, Job, Oid, RepoPath, Side, languages_first};

    #[test]
    fn a_languages_first_file_is_handed_out_first_and_every_file_keeps_its_place() {
        let job = |path: &str| Job {
            kind: ChangeKind::Modified,
            old: None,
            new: Some(Side {
                path: RepoPath::from(path),
                oid: Oid::zero(),
                not_a_file: false,
            }),
        };
        let paths = [
            "a.py", "b.py", "c.py", "d.js", "e.js", "README", "f.go", "Makefile",
        ];
        let order: Vec<(usize, String)> = languages_first(paths.iter().map(|p| job(p)).collect())
            .into_iter()
            .map(|(place, job)| {
                (
                    place,
                    job.new.map(|s| s.path.to_string()).unwrap_or_default(),
                )
            })
            .collect();
        let expected = [
            (0, "a.py"),
            (3, "d.js"),
            (5, "README"),
            (6, "f.go"),
            (1, "b.py"),
            (2, "c.py"),
            (4, "e.js"),
            (7, "Makefile"),
        ];
        let expected: Vec<(usize, String)> =
            expected.iter().map(|(i, p)| (*i, p.to_string())).collect();
        assert_eq!(order, expected);
    }
}
