//! What a local command that crashed left mounted: `forgeward run` and `forgeward verify` lend
//! environments in temporary directories of their own (`forgeward-run-<pid>`,
//! `forgeward-verify-<pid>-…`), not in the bot's job directories, so the bot's start-up
//! cleanup (`run::clear_leftover_job_dirs`) never sees them. Each of those commands calls
//! [`clear_leftover_local_mounts`] when it starts: an overlay a killed run left mounted would
//! otherwise stay until the machine restarts, and keep its kept environment from ever being
//! pruned.
//!
//! Only a directory whose process is gone is touched; a run still going keeps its mounts.

use std::io;
use std::path::{Path, PathBuf};

/// The temporary directories of the local commands that lend environments, each name this
/// prefix and the process's id (then, for `verify`, `-` and a random tail).
const PREFIXES: [&str; 2] = ["forgeward-run-", "forgeward-verify-"];

/// The prefix of `forgeward verify`'s temporary directory for this process: the cleanup of a
/// later start tells from it whether the process is gone.
pub fn verify_scratch_prefix() -> String {
    format!("{}{}-", PREFIXES[1], std::process::id())
}

/// The name of `forgeward run`'s temporary directory for this process.
pub fn run_scratch_name() -> String {
    format!("{}{}", PREFIXES[0], std::process::id())
}

/// The process a local command's temporary directory named `name` belongs to.
fn owner(name: &str) -> Option<u32> {
    let rest = PREFIXES.iter().find_map(|p| name.strip_prefix(p))?;
    let digits = rest.split('-').next()?;
    digits.parse().ok()
}

/// Unmounts everything mounted in a temporary directory under `temp` of a `forgeward run` or
/// `forgeward verify` whose process is gone, deepest first, then removes the directory; returns
/// how many mounts were unmounted. A directory whose process still runs is left alone.
pub fn clear_leftover_local_mounts(temp: &Path) -> io::Result<usize> {
    let Ok(temp) = std::fs::canonicalize(temp) else {
        return Ok(0);
    };
    let mut unmounted = 0;
    let mut dirs: Vec<PathBuf> = Vec::new();
    for point in crate::mounts::under(&temp)? {
        let Some(name) = point
            .strip_prefix(&temp)
            .ok()
            .and_then(|rel| rel.components().next())
            .and_then(|first| first.as_os_str().to_str())
        else {
            continue;
        };
        let Some(pid) = owner(name) else { continue };
        if Path::new("/proc").join(pid.to_string()).exists() {
            continue;
        }
        crate::mounts::unmount(&point)?;
        unmounted += 1;
        let dir = temp.join(name);
        if !dirs.contains(&dir) {
            dirs.push(dir);
        }
    }
    for dir in dirs {
        crate::git::remove_tree(&dir)?;
    }
    if unmounted > 0 {
        tracing::info!(
            unmounted,
            "mounts a crashed forgeward run or verify left in its temporary directory unmounted"
        );
    }
    Ok(unmounted)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::environment::kept::{Kept, Meta, Store};
    use crate::environment::lend::{self, Lending};

    fn kept(dir: &Path) -> Kept {
        let store = Store::at(dir.join("environments"));
        let building = store.building("k").expect("building");
        let ws = building.join("workspace");
        std::fs::create_dir_all(ws.join(".venv/lib")).expect("mkdir");
        std::fs::write(ws.join(".venv/lib/dep.py"), "x = 2\n").expect("write");
        std::fs::create_dir_all(ws.join("node_modules/pad")).expect("mkdir");
        std::fs::write(ws.join("node_modules/pad/index.js"), "pad\n").expect("write");
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

    /// The mount points `/proc/self/mountinfo` has under `dir` (a canonical path, which need
    /// not exist).
    fn mounted_under(dir: &Path) -> Vec<String> {
        let dir = dir.to_str().expect("UTF-8").to_owned();
        let table = std::fs::read_to_string("/proc/self/mountinfo").expect("mountinfo");
        table
            .lines()
            .filter_map(|l| l.split(' ').nth(4))
            .filter(|p| p.starts_with(&dir))
            .map(str::to_owned)
            .collect()
    }

    /// A process id that no process has now: a child's, once it has been waited for.
    fn gone_pid() -> u32 {
        let mut child = std::process::Command::new("true").spawn().expect("true");
        let pid = child.id();
        child.wait().expect("waited for");
        assert!(!Path::new("/proc").join(pid.to_string()).exists());
        pid
    }

    #[test]
    fn names_say_whose_directory_it_is() {
        assert_eq!(owner("forgeward-run-42"), Some(42));
        assert_eq!(owner("forgeward-verify-42-x1Yz"), Some(42));
        assert_eq!(owner("forgeward-env-42-x1Yz"), None);
        assert_eq!(owner("forgeward-verify-abc"), None);
        assert_eq!(owner(&run_scratch_name()), Some(std::process::id()));
        let verify = format!("{}Ab3", verify_scratch_prefix());
        assert_eq!(owner(&verify), Some(std::process::id()));
    }

    /// A `forgeward verify` killed with its environment lent (its loan never taken back:
    /// forgotten, as a SIGKILL would) leaves two overlays; the next start unmounts them and
    /// removes its directory, and leaves a live run's mounts as they are.
    #[test]
    fn a_crashed_local_run_s_mounts_are_unmounted_at_the_next_start() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let temp = std::fs::canonicalize(dir.path()).expect("the directory");
        let kept = kept(&temp);
        let how = Lending::for_this_process(&temp.join("environments"));
        assert_eq!(how, Lending::Overlay, "these tests run as root");

        let crashed = temp.join(format!("forgeward-verify-{}-Q1w2", gone_pid()));
        let workspace = crashed.join("workspace");
        std::fs::create_dir_all(&workspace).expect("mkdir");
        let loan = lend::lend(&kept, &workspace, how).expect("lent");
        std::mem::forget(loan);
        assert_eq!(mounted_under(&crashed).len(), 2);

        let live = temp.join(run_scratch_name()).join("jobs/1-1/workspace");
        std::fs::create_dir_all(&live).expect("mkdir");
        let live_loan = lend::lend(&kept, &live, how).expect("lent");

        let unmounted = clear_leftover_local_mounts(&temp).expect("cleared");
        assert_eq!(unmounted, 2);
        assert!(
            mounted_under(&crashed).is_empty(),
            "the crashed run's mounts"
        );
        assert!(!crashed.exists(), "its directory is removed");
        assert_eq!(mounted_under(&live).len(), 2, "a live run keeps its mounts");
        assert!(live.join(".venv/lib/dep.py").exists());

        live_loan.take_back().expect("taken back");
        assert!(mounted_under(&temp).is_empty());
        assert_eq!(clear_leftover_local_mounts(&temp).expect("cleared"), 0);
    }
}
