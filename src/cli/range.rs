//! What `forgeward check` and `forgeward verify` compare: a git-style range (`A..B`, or
//! `A...B` from the merge base of A and B to B) or `--base`/`--head`, resolved to commits,
//! and the one line that says what was compared — or why there is nothing to compare. Names
//! and commits only: no file is read here.

use forgeward::git::{DefaultBase, Head, Repo};
use git2::Oid;

/// What the command line asked for.
pub struct RangeRequest<'a> {
    /// `A..B`, `A...B`, `A..`, `..B`: git's spelling of a range.
    pub range: Option<&'a str>,
    pub base: Option<&'a str>,
    pub head: Option<&'a str>,
    pub worktree: bool,
}

/// How the base was chosen, for the line that names the range.
enum BaseFrom {
    /// `A..B` or `--base A`: the commit named.
    Named,
    /// `A...B`: the merge base of the two.
    MergeBase,
    /// Nothing named: the merge base with HEAD's upstream or a default branch.
    Default(DefaultBase),
}

/// A range resolved: the commits compared and how to name them.
pub struct Compared {
    /// A commit, or the working tree.
    pub head: Head,
    /// The commit the head is or stands on.
    pub head_commit: Oid,
    pub base: Oid,
    /// The range as git spells it: `main..HEAD`, `origin/main...HEAD`.
    pub spelled: String,
    /// The left side as written (`main`, `origin/main`), for the working tree's line.
    left: String,
    from: BaseFrom,
    /// Commits the head has that the base does not.
    pub commits: usize,
    /// For a two-dot range: commits the base has that the head does not, which its diff
    /// takes back.
    behind: usize,
    /// Why the range is empty, when it is.
    empty: Option<String>,
}

/// Splits `A...B` or `A..B` into its sides (an empty side is `HEAD`, as in git) and whether
/// it is the merge-base form.
fn split(range: &str) -> anyhow::Result<(&str, &str, bool)> {
    let (left, right, merge_base) = if let Some((l, r)) = range.split_once("...") {
        (l, r, true)
    } else if let Some((l, r)) = range.split_once("..") {
        (l, r, false)
    } else {
        anyhow::bail!(
            "'{range}' is not a range: write {range}..HEAD (or {range}...HEAD from where they forked), or --base {range}"
        );
    };
    fn side(s: &str) -> &str {
        if s.is_empty() { "HEAD" } else { s }
    }
    Ok((side(left), side(right), merge_base))
}

/// Resolves what `request` names in `repo`.
pub fn resolve(repo: &Repo, request: &RangeRequest) -> anyhow::Result<Compared> {
    if let Some(range) = request.range
        && (request.base.is_some() || request.head.is_some())
    {
        let flag = if request.base.is_some() {
            "--base"
        } else {
            "--head"
        };
        anyhow::bail!(
            "the range '{range}' and {flag} both say what to compare: give one or the other"
        );
    }
    let (left, right, merge_base) = match request.range {
        Some(range) => {
            let (left, right, merge_base) = split(range)?;
            (Some(left), right, merge_base)
        }
        None => (request.base, request.head.unwrap_or("HEAD"), false),
    };
    if request.worktree && request.range.is_some_and(|r| !r.ends_with("..")) {
        anyhow::bail!(
            "--worktree checks the working tree, so the range names no head: write {}",
            request
                .range
                .and_then(|r| r.rsplit_once(".."))
                .map_or("BASE..".to_owned(), |(l, _)| format!("{l}.."))
        );
    }
    let right = if request.worktree { "HEAD" } else { right };
    let head_commit = repo.resolve(right)?;
    let (base, from, left) = match left {
        Some(left) => {
            let named = repo.resolve(left)?;
            if merge_base {
                let Some(base) = repo.merge_base(named, head_commit)? else {
                    anyhow::bail!("{}", no_merge_base(repo, left, right));
                };
                (base, BaseFrom::MergeBase, left.to_owned())
            } else {
                (named, BaseFrom::Named, left.to_owned())
            }
        }
        None => {
            let default = repo.default_base(head_commit)?;
            let left = default.against.clone();
            (default.base, BaseFrom::Default(default), left)
        }
    };
    let dots = match from {
        BaseFrom::Named => "..",
        BaseFrom::MergeBase | BaseFrom::Default(_) => "...",
    };
    let commits = repo.count_commits(base, head_commit)?;
    let behind = match from {
        BaseFrom::Named if base != head_commit => repo.count_commits(head_commit, base)?,
        _ => 0,
    };
    let mut compared = Compared {
        head: if request.worktree {
            Head::Worktree
        } else {
            Head::Commit(head_commit)
        },
        head_commit,
        base,
        spelled: format!("{left}{dots}{right}"),
        left,
        from,
        commits,
        behind,
        empty: None,
    };
    if !request.worktree && base == head_commit {
        compared.empty = Some(compared.why_empty(repo, right));
    }
    Ok(compared)
}

/// Why `A...B` has no merge base: unrelated histories, or a shallow clone cut above it.
fn no_merge_base(repo: &Repo, left: &str, right: &str) -> String {
    if repo.is_shallow() {
        format!(
            "'{left}' and '{right}' have no common ancestor in this shallow clone: fetch more history (git fetch --deepen, or fetch-depth: 0 in CI)"
        )
    } else {
        format!(
            "'{left}' and '{right}' have no common ancestor: name the base with {left}..{right}"
        )
    }
}

fn short(oid: Oid) -> String {
    let mut s = oid.to_string();
    s.truncate(7);
    s
}

fn plural(n: usize, one: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {one}s")
    }
}

impl Compared {
    /// The range names a single commit: there is nothing to compare.
    pub fn is_empty(&self) -> bool {
        self.empty.is_some()
    }

    fn why_empty(&self, repo: &Repo, right: &str) -> String {
        match &self.from {
            BaseFrom::Default(default) => {
                // On the default branch itself, the commits to look at are its last ones.
                let on_trunk = ["main", "master", "trunk", "develop"]
                    .iter()
                    .any(|t| default.against.rsplit('/').next() == Some(t));
                let example = if on_trunk {
                    "HEAD~1..HEAD"
                } else {
                    "main...HEAD"
                };
                let hint = format!("name the base: --base REV, or a range such as {example}");
                let what = if default.upstream {
                    "its upstream"
                } else {
                    "the default branch"
                };
                let branch = repo
                    .git2()
                    .head()
                    .ok()
                    .and_then(|h| h.shorthand().map(str::to_owned));
                if default.upstream && branch.as_deref() == Some(default.against.as_str()) {
                    format!(
                        "HEAD is its upstream (`{}` tracks itself); {hint}",
                        default.against
                    )
                } else if default.against_commit == self.head_commit {
                    format!("HEAD is {what} `{}`; {hint}", default.against)
                } else {
                    format!(
                        "HEAD is behind {what} `{}`, with no commit of its own; {hint}",
                        default.against
                    )
                }
            }
            BaseFrom::Named => format!(
                "`{}` and `{right}` are the same commit ({})",
                self.left,
                short(self.base)
            ),
            BaseFrom::MergeBase => format!(
                "`{right}` has no commit that `{}` lacks (their merge base is `{right}` itself)",
                self.left
            ),
        }
    }

    /// One line for the user: what was compared, or why nothing was.
    pub fn line(&self) -> String {
        if let Some(why) = &self.empty {
            return format!("nothing to compare: {why}");
        }
        if self.head == Head::Worktree {
            return if self.commits == 0 {
                format!(
                    "checked the working tree against `{}` ({}): what is not committed",
                    self.left,
                    short(self.base)
                )
            } else {
                format!(
                    "checked `{}` and the working tree ({}..), {} and what is not committed",
                    self.spelled,
                    short(self.base),
                    plural(self.commits, "commit")
                )
            };
        }
        let mut line = format!(
            "checked `{}` ({}..{}), {}",
            self.spelled,
            short(self.base),
            short(self.head_commit),
            plural(self.commits, "commit")
        );
        if self.behind > 0
            && let Some((left, right)) = self.spelled.split_once("..")
        {
            line.push_str(&format!(
                "; `{left}` has {} that `{right}` lacks, which this diff takes back ({left}...{right} compares from where they forked)",
                plural(self.behind, "commit")
            ));
        }
        line
    }
}

#[cfg(test)]
mod tests {
    use super::split;

    #[test]
    fn a_range_splits_as_git_reads_it() {
        assert_eq!(split("main..HEAD").ok(), Some(("main", "HEAD", false)));
        assert_eq!(
            split("origin/main...topic").ok(),
            Some(("origin/main", "topic", true))
        );
        assert_eq!(split("main..").ok(), Some(("main", "HEAD", false)));
        assert_eq!(split("...topic").ok(), Some(("HEAD", "topic", true)));
        assert_eq!(split("HEAD~3..HEAD").ok(), Some(("HEAD~3", "HEAD", false)));
    }

    #[test]
    fn one_revision_is_not_a_range() {
        let err = split("main").map(|_| ()).unwrap_err().to_string();
        assert_eq!(
            err,
            "'main' is not a range: write main..HEAD (or main...HEAD from where they forked), or --base main"
        );
    }
}
