//! What the benchmarks share: settings from the environment, medians, the git that builds a
//! generated repository and the bot's mirror of it.

#![allow(dead_code)] // Each benchmark uses its own share.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use forgeward::forge::event::{Forge, RepoName};
use forgeward::git::Mirror;

/// A count from the environment variable `name`, else `default`.
pub fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The median of `times`.
pub fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

/// Runs `git args` in `dir`, with a fixed identity and no system configuration.
pub fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(["-c", "user.name=bench", "-c", "user.email=bench@invalid"])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .expect("running git");
    assert!(out.status.success(), "git {args:?}: {out:?}");
}

/// The bot's (empty) mirror of `bench/<name>` under `tmp`, and the URL of the generated
/// repository at `source` to fetch into it.
pub fn mirror(tmp: &Path, name: &str, source: &Path) -> (Mirror, String) {
    let mirror = Mirror::open_or_create(
        &tmp.join("mirrors"),
        Forge::GitHub,
        &RepoName(format!("bench/{name}")),
    )
    .expect("a mirror");
    (mirror, format!("file://{}", source.join(".git").display()))
}

/// A sandbox over `dir`'s `workspace`, `job` and `out` running `true`, with room for
/// `disk_bytes` of writes: what a benchmark's runs start from.
pub fn sandbox_spec(dir: &Path, disk_bytes: u64) -> forgeward::sandbox::SandboxSpec {
    forgeward::sandbox::SandboxSpec {
        workspace: dir.join("workspace"),
        job_dir: dir.join("job"),
        out_dir: dir.join("out"),
        command: vec!["true".to_owned()],
        image: None,
        env: Vec::new(),
        limits: forgeward::sandbox::Limits {
            timeout: Duration::from_secs(60),
            memory_bytes: 4 << 30,
            pids: 256,
            file_size_bytes: 64 << 20,
            disk_bytes,
            cpu: Duration::from_secs(60),
        },
        network: forgeward::sandbox::Network::None,
        read_only: Vec::new(),
        path: Vec::new(),
    }
}
