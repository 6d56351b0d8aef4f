//! The bubblewrap backend: the conformance suite, and what only bubblewrap does (the dedicated
//! user id and the ownership it hands back, a clear reason when bubblewrap is missing).

use std::os::unix::fs::MetadataExt;
use std::time::Duration;

use forgeward::sandbox::{Bwrap, Exit, Sandbox};
use tokio_util::sync::CancellationToken;

use super::conformance::sandbox_conformance;
use super::harness::{Captured, Job};

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
    // A file hard-linked from outside the workspace (as a checkout may share the mirror's
    // objects) must not become the worker's to write through.
    let shared = job.data.join("object");
    std::fs::write(&shared, "mirror object\n").expect("writing");
    std::fs::hard_link(&shared, job.workspace.join("object")).expect("linking");
    let script = "echo new > /workspace/new.txt && mkdir -p /workspace/d \
        && ln -s /etc/passwd /workspace/d/link && chmod u+s new.txt \
        && { echo changed >> object || echo refused; } && echo made";
    let log = Captured::default();
    let exit = backend
        .run(&job.spec(script, None), &log, CancellationToken::new())
        .await
        .expect("the run");
    assert_eq!(exit, Exit::Code(0), "{}", log.text());
    assert!(log.text().contains("refused"), "{}", log.text());
    let object = std::fs::read_to_string(&shared).expect("reading");
    assert_eq!(
        object, "mirror object\n",
        "the worker wrote through a hard link"
    );
    let mode = std::fs::metadata(job.workspace.join("new.txt"))
        .expect("stat")
        .mode();
    assert_eq!(
        mode & 0o6000,
        0,
        "a set-user-ID file of the worker's became the bot's"
    );
    for rel in ["", "new.txt", "README.md", "d", "d/link", "object"] {
        let meta = std::fs::symlink_metadata(job.workspace.join(rel)).expect("stat");
        assert_eq!(meta.uid(), owner, "{rel:?} is not the bot's after the run");
    }
    // The link was not followed when ownership was given back.
    assert_eq!(std::fs::metadata("/etc/passwd").expect("stat").uid(), 0);
}

/// The conformance suite accepts any clean failure for a full disk; bubblewrap's own answer is
/// `DiskFull`, counting the workspace and the tmpfs mounts together.
#[tokio::test]
async fn growth_past_the_disk_limit_is_disk_full() {
    let backend = Bwrap::new();
    if let Err(e) = backend.check().await {
        panic!("bubblewrap cannot run here: {e} (tests/setup/bwrap.sh installs it)");
    }
    for target in ["/workspace", "/tmp", "$HOME"] {
        let job = Job::new();
        let script = format!(
            "i=0; while head -c 1M /dev/zero > {target}/f$i; do i=$((i+1)); done; echo stopped; sleep 30"
        );
        let mut spec = job.spec(&script, None);
        spec.limits.disk_bytes = 8 << 20;
        spec.limits.timeout = Duration::from_secs(20);
        let log = Captured::default();
        let exit = backend
            .run(&spec, &log, CancellationToken::new())
            .await
            .expect("the run");
        assert_eq!(exit, Exit::DiskFull, "filling {target}:\n{}", log.text());
    }
}

#[tokio::test]
async fn a_spec_that_cannot_run_is_a_sandbox_error() {
    let job = Job::new();
    let mut spec = job.spec("true", None);
    spec.command.clear();
    let log = Captured::default();
    let backend = Bwrap::new();
    let err = backend
        .run(&spec, &log, CancellationToken::new())
        .await
        .expect_err("no command");
    assert_eq!(err.to_string(), "bwrap: no worker command");
    let mut spec = job.spec("true", None);
    spec.workspace = job.workspace.join("README.md");
    let err = backend
        .run(&spec, &log, CancellationToken::new())
        .await
        .expect_err("a file as the workspace");
    assert!(err.to_string().contains("is not a directory"), "{err}");
}

/// Test runners read the host's configuration under `/etc` (OpenSSL's for Node, the accounts
/// for `id`): the sandbox's `/etc` is readable by the worker.
#[tokio::test]
async fn the_worker_can_read_etc() {
    let backend = Bwrap::new();
    if let Err(e) = backend.check().await {
        panic!("bubblewrap cannot run here: {e} (tests/setup/bwrap.sh installs it)");
    }
    let job = Job::new();
    let script = "id -un && test -r /etc/ssl/openssl.cnf && echo readable";
    let log = Captured::default();
    let exit = backend
        .run(&job.spec(script, None), &log, CancellationToken::new())
        .await
        .expect("the run");
    assert_eq!(exit, Exit::Code(0), "{}", log.text());
    assert_eq!(log.text(), "worker\nreadable\n");
}

/// Node.js programs that instantiate WebAssembly (npm's and fetch's HTTP parser, Vitest's
/// bundler) run under the sandbox's address-space limit, which V8's default bounds checks
/// cannot live with; a `NODE_OPTIONS` of the worker's own is kept after the option.
#[tokio::test]
async fn node_can_instantiate_webassembly_under_the_memory_limit() {
    let backend = Bwrap::new();
    if let Err(e) = backend.check().await {
        panic!("bubblewrap cannot run here: {e} (tests/setup/bwrap.sh installs it)");
    }
    let job = Job::new();
    // The smallest module with a memory of one page.
    let script = "node -e \"WebAssembly.instantiate(new Uint8Array([0,97,115,109,1,0,0,0,5,3,1,0,1])).then(() => console.log('wasm ok ' + process.env.NODE_OPTIONS), (e) => { console.log(String(e)); process.exit(1); })\"";
    let mut spec = job.spec(script, None);
    spec.env
        .push(("NODE_OPTIONS".into(), "--max-old-space-size=512".into()));
    let log = Captured::default();
    let exit = backend
        .run(&spec, &log, CancellationToken::new())
        .await
        .expect("the run");
    assert_eq!(exit, Exit::Code(0), "{}", log.text());
    assert_eq!(
        log.text(),
        "wasm ok --disable-wasm-trap-handler --max-old-space-size=512\n"
    );
}

// The whole suite again with the egress gateway as the worker's way out.
sandbox_conformance!(conformance_gateway, Bwrap::new(), None, true);

/// The gateway's own behaviour (it turns the gateway on whatever the setup says), once.
#[tokio::test]
async fn the_gateway_is_the_only_way_out() {
    let backend = Bwrap::new();
    super::conformance::the_gateway_is_the_only_way_out(
        &backend,
        super::harness::Setup {
            image: None,
            gateway: true,
        },
    )
    .await;
}
