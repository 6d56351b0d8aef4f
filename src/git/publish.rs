//! Publishing a job's commit: a push of one commit to one branch, with force-with-lease, and the
//! `Co-authored-by` trailer of its message.
//!
//! The push goes through an anonymous remote (nothing saved in the mirror) with the credentials
//! given only to git's HTTP transport for this push, like a fetch. The lease is checked against the values
//! the remote advertises on the push's own connection; over git's smart protocol the remote then
//! applies the update only if the branch still has that value (the old value travels in the push
//! command, and `receive-pack` compares it under the ref's lock), so a concurrent push between the
//! check and the update is refused by the remote, not lost. Over `file://`, libgit2 writes the
//! ref itself without that comparison: the race is accepted there, as only tests and local runs
//! push to a path.

use std::cell::RefCell;

use git2::{Oid, PushOptions, Reference, RemoteCallbacks, RemoteRedirect};

use super::GitError;
use super::mirror::{Mirror, Watch, check_url};
use crate::forge::api::GitCredentials;

/// What the remote branch must be for a push to go ahead.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lease {
    /// The branch must not exist (a job's first push).
    Absent,
    /// The branch must be at this commit (a retry, or an update of a branch the bot pushed).
    At(Oid),
}

impl Lease {
    fn allows(self, current: Oid) -> bool {
        match self {
            Lease::Absent => current.is_zero(),
            Lease::At(oid) => current == oid,
        }
    }

    fn describe(self) -> String {
        match self {
            Lease::Absent => "absent".to_owned(),
            Lease::At(oid) => oid.to_string(),
        }
    }
}

/// `message` with a `Co-authored-by: name <email>` trailer, after a blank line. Angle brackets,
/// control characters and line breaks are dropped from the name and email, which come from a
/// forge profile and must not add lines or trailers of their own.
pub fn co_authored_by(message: &str, name: &str, email: &str) -> String {
    let clean = |s: &str, keep_spaces: bool| -> String {
        s.chars()
            .filter(|c| !c.is_control() && *c != '<' && *c != '>')
            .filter(|c| keep_spaces || !c.is_whitespace())
            .collect::<String>()
            .trim()
            .to_owned()
    };
    let message = message.trim_end();
    format!(
        "{message}\n\nCo-authored-by: {} <{}>\n",
        clean(name, true),
        clean(email, false)
    )
}

impl Mirror {
    /// Pushes `commit` (an object of the mirror) to `refs/heads/<branch>` at `url`, forced, if
    /// the branch is what `lease` says. A branch already at `commit` is success (a retry whose
    /// earlier push went through). A remote branch elsewhere is [`GitError::LeaseRejected`].
    pub fn push(
        &self,
        url: &str,
        credentials: &GitCredentials,
        commit: Oid,
        branch: &str,
        lease: Lease,
    ) -> Result<(), GitError> {
        check_url(url)?;
        let refname = format!("refs/heads/{branch}");
        if !Reference::is_valid_name(&refname) {
            return Err(GitError::PushRejected {
                branch: branch.escape_debug().to_string(),
                reason: "not a valid branch name".to_owned(),
            });
        }
        let what = format!("pushing to {url}");
        let watch = Watch::new(self.deadline());
        let refused_lease: RefCell<Option<Oid>> = RefCell::new(None);
        let rejected: RefCell<Option<String>> = RefCell::new(None);
        let mut callbacks = RemoteCallbacks::new();
        callbacks.push_negotiation(|updates| {
            for update in updates {
                let current = update.src();
                if update.dst_refname_bytes() == refname.as_bytes()
                    && current != commit
                    && !lease.allows(current)
                {
                    *refused_lease.borrow_mut() = Some(current);
                    return Err(git2::Error::from_str("the lease was refused"));
                }
            }
            Ok(())
        });
        callbacks.push_update_reference(|_name, status| {
            if let Some(reason) = status {
                *rejected.borrow_mut() = Some(reason.to_owned());
            }
            Ok(())
        });
        let mut remote = self
            .repo()
            .git2()
            .remote_anonymous(url)
            .map_err(|e| GitError::git(&what, e))?;
        let mut opts = PushOptions::new();
        opts.remote_callbacks(callbacks)
            .follow_redirects(RemoteRedirect::None);
        let result = watch.run(Some(credentials), || {
            remote.push(&[format!("+{commit}:{refname}")], Some(&mut opts))
        });
        drop(opts);
        if let Some(found) = refused_lease.into_inner() {
            return Err(GitError::LeaseRejected {
                branch: branch.to_owned(),
                expected: lease.describe(),
                found: if found.is_zero() {
                    "absent".to_owned()
                } else {
                    found.to_string()
                },
            });
        }
        if let Some(reason) = rejected.into_inner() {
            return Err(GitError::PushRejected {
                branch: branch.to_owned(),
                reason,
            });
        }
        result.map_err(|e| watch.error(what, e))?;
        Ok(())
    }
}
