//! A kept environment lent as an overlay to real sandboxes: bubblewrap (0.8, which has no
//! overlay option of its own) and Docker both see the overlay mounted inside the workspace
//! through their bind of it, the worker (another user) reads, writes and removes files there,
//! the kept directory stays as it was, and nothing is left mounted once the loan is taken back.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use forgeward::environment::kept::{Kept, Meta, Store};
use forgeward::environment::lend::{self, Lending};
use forgeward::sandbox::{Bwrap, Exit, Limits, LogSink, Sandbox, SandboxSpec, Stream};
use tokio_util::sync::CancellationToken;

#[derive(Default)]
struct Lines(Mutex<Vec<String>>);

impl LogSink for Lines {
    fn line(&self, _stream: Stream, line: &str) {
        self.0.lock().expect("the lines").push(line.to_owned());
    }
}

fn kept(dir: &Path) -> Kept {
    let store = Store::at(dir.join("environments"));
    let building = store.building("k").expect("building");
    let ws = building.join("workspace");
    std::fs::create_dir_all(ws.join(".venv/lib/fwdep")).expect("mkdir");
    std::fs::write(ws.join(".venv/lib/fwdep/__init__.py"), "x = 2\n").expect("write");
    std::fs::create_dir_all(ws.join("node_modules/left-pad")).expect("mkdir");
    std::fs::write(ws.join("node_modules/left-pad/index.js"), "pad\n").expect("write");
    let meta = Meta {
        key: "k".to_owned(),
        created: 0,
        job: None,
        steps: Vec::new(),
        duration_ms: 0,
        kept: vec![".venv".to_owned(), "node_modules".to_owned()],
        files: 0,
        bytes: 0,
    };
    store.keep(&building, &ws, meta).expect("kept")
}

/// The files under `root` with their bytes and modes.
fn contents(root: &Path) -> Vec<(PathBuf, u32, Vec<u8>)> {
    use std::os::unix::fs::MetadataExt;
    let mut out = Vec::new();
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("a directory").flatten() {
            let path = entry.path();
            let meta = std::fs::symlink_metadata(&path).expect("lstat");
            let bytes = if meta.is_dir() {
                dirs.push(path.clone());
                Vec::new()
            } else {
                std::fs::read(&path).expect("read")
            };
            out.push((path, meta.mode(), bytes));
        }
    }
    out.sort();
    out
}

fn mounts_under(dir: &Path) -> Vec<PathBuf> {
    let dir = std::fs::canonicalize(dir).expect("the directory");
    let text = std::fs::read_to_string("/proc/self/mountinfo").expect("mountinfo");
    text.lines()
        .filter_map(|l| l.split(' ').nth(4))
        .map(PathBuf::from)
        .filter(|p| p.starts_with(&dir))
        .collect()
}

/// What the worker does in the lent environment: reads it, replaces a module, adds a cache,
/// removes a package.
const WORKER: &str = "cat /workspace/.venv/lib/fwdep/__init__.py /workspace/node_modules/left-pad/index.js \
    && sed -i 's/2/3/' /workspace/.venv/lib/fwdep/__init__.py \
    && grep -q 'x = 3' /workspace/.venv/lib/fwdep/__init__.py \
    && mkdir /workspace/node_modules/.vite && echo c > /workspace/node_modules/.vite/dep \
    && rm -r /workspace/node_modules/left-pad && echo worked";

fn spec(dir: &Path, image: Option<String>) -> SandboxSpec {
    let spec = SandboxSpec {
        workspace: dir.join("workspace"),
        job_dir: dir.join("job"),
        out_dir: dir.join("out"),
        command: vec!["/bin/sh".to_owned(), "-c".to_owned(), WORKER.to_owned()],
        image,
        env: Vec::new(),
        limits: Limits {
            timeout: Duration::from_secs(120),
            memory_bytes: 1 << 30,
            pids: 128,
            file_size_bytes: 16 << 20,
            disk_bytes: 256 << 20,
            cpu: Duration::from_secs(60),
        },
        network: forgeward::sandbox::Network::None,
        read_only: Vec::new(),
        path: Vec::new(),
    };
    for d in [&spec.workspace, &spec.job_dir, &spec.out_dir] {
        std::fs::create_dir_all(d).expect("a directory");
    }
    spec
}

async fn lent_to(sandbox: &dyn Sandbox, image: Option<String>) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let kept = kept(dir.path());
    let before = contents(&kept.files());
    let how = Lending::for_this_process(&dir.path().join("environments"));
    assert_eq!(
        how,
        Lending::Overlay,
        "these tests run as root, where the bot mounts overlays"
    );
    let job = dir.path().join("job");
    let mut spec = spec(&job, image);
    sandbox.prepare(&mut spec).await.expect("prepared");
    for run in 0..2 {
        let loan = lend::lend(&kept, &spec.workspace, how).expect("lent");
        assert_eq!(loan.how(), Some(Lending::Overlay));
        assert_eq!(mounts_under(&job).len(), 2);
        let lines = Lines::default();
        let exit = sandbox
            .run(&spec, &lines, CancellationToken::new())
            .await
            .expect("the sandbox ran");
        let lines = lines.0.into_inner().expect("the lines");
        assert_eq!(exit, Exit::Code(0), "run {run}: {lines:?}");
        // Each run sees the kept environment, not what the last one wrote.
        assert_eq!(lines, ["x = 2", "pad", "worked"], "run {run}");
        loan.take_back().expect("taken back");
        assert!(mounts_under(&job).is_empty(), "nothing left mounted");
        assert!(!spec.workspace.join(".venv").exists());
        assert_eq!(
            contents(&kept.files()),
            before,
            "the kept directory after run {run}"
        );
    }
}

#[tokio::test]
async fn bwrap_sees_an_environment_lent_as_an_overlay_and_leaves_the_kept_one_as_it_was() {
    let sandbox = Bwrap::new();
    sandbox
        .check()
        .await
        .unwrap_or_else(|e| panic!("bubblewrap cannot run here: {e}"));
    lent_to(&sandbox, None).await;
}

#[tokio::test]
async fn docker_sees_an_environment_lent_as_an_overlay_and_leaves_the_kept_one_as_it_was() {
    let base = std::env::var("FORGEWARD_TEST_DOCKER_BASE").unwrap_or_else(|_| {
        panic!(
            "FORGEWARD_TEST_DOCKER_BASE is not set: run `eval \"$(bash tests/setup/docker.sh)\"`"
        )
    });
    let images = forgeward::sandbox::images::Images::new(base);
    let image = images
        .sandbox_image()
        .await
        .unwrap_or_else(|e| panic!("the sandbox image: {e}"));
    let sandbox =
        forgeward::sandbox::docker::Docker::new(&format!("test-lent-{}", std::process::id()))
            .with_images(images);
    lent_to(&sandbox, Some(image)).await;
}
