//! Keeping THE status comment of a job up to date, on any forge.
//!
//! A job has one status comment on its issue, pull request or merge request. It is found again by
//! the hidden marker on its first line (`report::status_marker`), so a retry, a restart or a
//! second runner edits the comment that is there instead of posting another. Edits are throttled:
//! GitHub limits content-creating calls (about 80 a minute), and a reader gains nothing from a
//! comment that changes every second. The final state is always written.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::forge::api::{ForgeApi, ForgeResult};
use crate::forge::{Number, RepoName, Thread};
use crate::report::parse_status_marker;
use crate::store::JobId;

/// The shortest time between two edits of one status comment that are not the final one: a
/// job's progress stays fresh to the reader, and a few jobs at once stay far below GitHub's
/// limit of 80 content-creating calls a minute.
pub const MIN_EDIT_INTERVAL: Duration = Duration::from_secs(10);

/// The status comment of one job on one thread.
pub struct StatusCommentPoster {
    forge: Arc<dyn ForgeApi>,
    repo: RepoName,
    thread: Thread,
    number: Number,
    job: JobId,
    /// The comment's id once it was found or posted.
    comment: Option<u64>,
    /// What the comment says now (as far as this poster knows) and when it was written.
    written: Option<(String, Instant)>,
}

impl StatusCommentPoster {
    pub fn new(
        forge: Arc<dyn ForgeApi>,
        repo: RepoName,
        thread: Thread,
        number: Number,
        job: JobId,
    ) -> StatusCommentPoster {
        StatusCommentPoster {
            forge,
            repo,
            thread,
            number,
            job,
            comment: None,
            written: None,
        }
    }

    /// Shows progress: writes `body` unless the comment was edited less than the interval ago,
    /// in which case this update is dropped (the next one, or the final one, carries the news).
    /// Returns whether it was written.
    pub async fn progress(&mut self, body: &str) -> ForgeResult<bool> {
        if let Some((_, at)) = &self.written
            && at.elapsed() < MIN_EDIT_INTERVAL
        {
            return Ok(false);
        }
        self.write(body).await
    }

    /// Writes the final state, whatever the interval.
    pub async fn finish(&mut self, body: &str) -> ForgeResult<()> {
        self.write(body).await.map(|_| ())
    }

    async fn write(&mut self, body: &str) -> ForgeResult<bool> {
        if self
            .written
            .as_ref()
            .is_some_and(|(current, _)| current == body)
        {
            return Ok(false);
        }
        let id = match self.comment {
            Some(id) => Some(id),
            None => self.find().await?,
        };
        match id {
            Some(id) => {
                self.forge
                    .update_comment(&self.repo, self.thread, self.number, id, body)
                    .await?;
                self.comment = Some(id);
            }
            None => {
                let created = self
                    .forge
                    .create_comment(&self.repo, self.thread, self.number, body)
                    .await?;
                self.comment = Some(created.id);
            }
        }
        self.written = Some((body.to_owned(), Instant::now()));
        Ok(true)
    }

    /// The job's comment already on the thread, if an earlier run posted one.
    async fn find(&self) -> ForgeResult<Option<u64>> {
        let comments = self
            .forge
            .comments(&self.repo, self.thread, self.number)
            .await?;
        Ok(comments
            .iter()
            .find(|c| parse_status_marker(&c.body) == Some(self.job))
            .map(|c| c.id))
    }
}
