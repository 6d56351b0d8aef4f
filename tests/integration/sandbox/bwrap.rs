//! The bubblewrap backend: the conformance suite, and what only bubblewrap does (the dedicated
//! user id and the ownership it hands back, a clear reason when bubblewrap is missing).

use std::os::unix::fs::MetadataExt;

use forgeward::sandbox::{Bwrap, Exit, Sandbox};
use tokio_util::sync::CancellationToken;

use super::conformance::{Captured, Job, sandbox_conformance};

sandbox_conformance!(conformance, Bwrap::new(), None);

#[tokio::test]
async fn a_missing_bwrap_is_reported_in_one_line() {
    let backend = Bwrap::with_program("/nonexistent/bwrap");
    assert_eq!(backend.name(), "bwrap");
    let err = backend
        .check()
        .await
        .expect_err("a missing bwrap must fail the check");
    let message = err.to_string();
    assert_eq!(
        message,
        "bwrap: /nonexistent/bwrap not found; install the bubblewrap package"
    );
}

#[tokio::test]
async fn the_workspace_is_handed_back_to_its_owner() {
    let backend = Bwrap::new();
    if let Err(e) = backend.check().await {
        panic!("bubblewrap cannot run here: {e} (tests/setup/bwrap.sh installs it)");
    }
    let job = Job::new();
    let owner = std::fs::metadata(&job.workspace).expect("stat").uid();
    let script = "echo new > /workspace/new.txt && mkdir -p /workspace/d && ln -s /etc/passwd /workspace/d/link && echo made";
    let log = Captured::default();
    let exit = backend
        .run(&job.spec(script, None), &log, CancellationToken::new())
        .await
        .expect("the run");
    assert_eq!(exit, Exit::Code(0), "{}", log.text());
    for rel in ["", "new.txt", "README.md", "d", "d/link"] {
        let meta = std::fs::symlink_metadata(job.workspace.join(rel)).expect("stat");
        assert_eq!(meta.uid(), owner, "{rel:?} is not the bot's after the run");
    }
    // The link was not followed when ownership was given back.
    assert_eq!(std::fs::metadata("/etc/passwd").expect("stat").uid(), 0);
}
