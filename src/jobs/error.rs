//! Why a job stopped early, and the helper that runs blocking work off the async runtime: the
//! floor every job module stands on.

use crate::forge::api::{ForgeError, ForgeErrorKind};
use crate::store::Outcome;

/// Why a job stopped early: one line for the status comment and the store, and whether another
/// attempt could go better (a forge or network hiccup) or not (a refused request, a bad config).
#[derive(Debug)]
pub struct JobError {
    pub message: String,
    pub retry: bool,
}

impl JobError {
    pub fn fatal(message: impl Into<String>) -> JobError {
        JobError {
            message: message.into(),
            retry: false,
        }
    }

    pub fn transient(message: impl Into<String>) -> JobError {
        JobError {
            message: message.into(),
            retry: true,
        }
    }

    pub fn outcome(self) -> Outcome {
        Outcome::Failed {
            error: self.message,
            retry: self.retry,
        }
    }
}

impl From<ForgeError> for JobError {
    fn from(err: ForgeError) -> JobError {
        let retry = matches!(
            err.kind,
            ForgeErrorKind::Server(_)
                | ForgeErrorKind::Network(_)
                | ForgeErrorKind::RateLimited { .. }
        );
        JobError {
            message: err.to_string(),
            retry,
        }
    }
}

impl From<crate::git::GitError> for JobError {
    fn from(err: crate::git::GitError) -> JobError {
        JobError::transient(err.to_string())
    }
}

impl From<crate::check::CheckError> for JobError {
    fn from(err: crate::check::CheckError) -> JobError {
        JobError::fatal(err.to_string())
    }
}

impl From<crate::sandbox::SandboxError> for JobError {
    fn from(err: crate::sandbox::SandboxError) -> JobError {
        JobError::transient(err.to_string())
    }
}

/// Runs blocking work (git2, the detector, file system walks) off the async runtime.
pub(crate) async fn blocking<T, F>(f: F) -> Result<T, JobError>
where
    T: Send + 'static,
    F: FnOnce() -> Result<T, JobError> + Send + 'static,
{
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|err| JobError::transient(format!("a blocking task failed: {err}")))?
}
