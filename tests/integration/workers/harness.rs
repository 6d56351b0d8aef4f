//! The processes and the database the workers test runs: `forgeward` processes with their
//! stderr kept, the processes a process left behind (read from /proc), and a PostgreSQL
//! database of the test's own.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use sqlx::{Connection, PgConnection};

use crate::util::eventually;

/// A database of its own on the server `FORGEWARD_TEST_POSTGRES_URL` names, dropped at the end.
pub(crate) struct Database {
    server: String,
    name: String,
    /// The database's URL, for the store.
    pub(crate) url: String,
}

impl Database {
    pub(crate) async fn create() -> Database {
        let server = std::env::var("FORGEWARD_TEST_POSTGRES_URL").unwrap_or_else(|_| {
            panic!(
                "FORGEWARD_TEST_POSTGRES_URL is not set; run: eval \"$(bash tests/setup/postgres.sh)\""
            )
        });
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let name = format!("forgeward_workers_{}_{nanos}", std::process::id());
        let mut admin = PgConnection::connect(&server)
            .await
            .unwrap_or_else(|e| panic!("cannot connect to FORGEWARD_TEST_POSTGRES_URL: {e}"));
        sqlx::query(&format!("CREATE DATABASE {name}"))
            .execute(&mut admin)
            .await
            .unwrap_or_else(|e| panic!("creating {name}: {e}"));
        let _ = admin.close().await;
        let (base, query) = match server.split_once('?') {
            Some((base, query)) => (base, format!("?{query}")),
            None => (server.as_str(), String::new()),
        };
        let (scheme, rest) = base.split_once("://").expect("a URL");
        let authority = rest.split('/').next().unwrap_or(rest);
        let url = format!("{scheme}://{authority}/{name}{query}");
        Database { server, name, url }
    }
}

impl Drop for Database {
    fn drop(&mut self) {
        let (server, name) = (self.server.clone(), self.name.clone());
        // The test's runtime cannot be blocked on: a thread with a runtime of its own drops it.
        let _ = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .ok()?;
            runtime.block_on(async {
                let mut admin = PgConnection::connect(&server).await.ok()?;
                let sql = format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)");
                sqlx::query(&sql).execute(&mut admin).await.ok()?;
                admin.close().await.ok()
            })
        })
        .join();
    }
}

/// A `forgeward` process, its stderr collected.
pub(super) struct Process {
    pub(super) name: &'static str,
    child: Child,
    log: Arc<Mutex<String>>,
}

impl Process {
    pub(super) fn spawn(name: &'static str, mut cmd: Command) -> Process {
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("starting {name}: {e}"));
        let stderr = child.stderr.take().expect("piped stderr");
        let log = Arc::new(Mutex::new(String::new()));
        let sink = Arc::clone(&log);
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                let mut log = sink.lock().unwrap_or_else(|p| p.into_inner());
                log.push_str(&line);
                log.push('\n');
            }
        });
        Process { name, child, log }
    }

    pub(super) fn pid(&self) -> u32 {
        self.child.id()
    }

    pub(super) fn log(&self) -> String {
        self.log.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// The first log line containing `needle`, waiting for it.
    pub(super) async fn line(&self, needle: &str, within: Duration) -> String {
        let what = format!("{} never said `{needle}`", self.name);
        eventually(&what, within, async || {
            let log = self.log();
            if let Some(line) = log.lines().find(|l| l.contains(needle)) {
                return Ok(line.to_owned());
            }
            Err(log)
        })
        .await
    }

    pub(super) fn signal(&self, signal: i32) {
        // SAFETY: kill(2) on our own child's pid has no memory effects.
        let sent = unsafe { libc::kill(self.pid() as i32, signal) };
        assert_eq!(sent, 0, "signalling {}", self.name);
    }

    pub(super) async fn exit(&mut self, within: Duration) -> ExitStatus {
        let what = format!("{} did not exit", self.name);
        eventually(&what, within, async || {
            if let Some(status) = self.child.try_wait().expect("waiting") {
                return Ok(status);
            }
            Err(self.log())
        })
        .await
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A process as /proc knows it: its id and its start time, so a reused id is not mistaken for it.
pub(super) type ProcId = (i32, u64);

fn start_time(pid: i32) -> Option<(char, u64)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = stat.rsplit_once(')')?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // After the command: state (field 3) … starttime (field 22).
    let state = fields.first()?.chars().next()?;
    Some((state, fields.get(19)?.parse().ok()?))
}

/// Every process descended from `pid` (not `pid` itself).
pub(super) fn descendants(pid: i32) -> Vec<ProcId> {
    let mut found = Vec::new();
    let mut stack = vec![pid];
    while let Some(parent) = stack.pop() {
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{parent}/task")) else {
            continue;
        };
        for task in tasks.flatten() {
            let children =
                std::fs::read_to_string(task.path().join("children")).unwrap_or_default();
            for child in children.split_whitespace().filter_map(|c| c.parse().ok()) {
                if let Some((_, started)) = start_time(child) {
                    found.push((child, started));
                    stack.push(child);
                }
            }
        }
    }
    found
}

/// The program a process runs, as the kernel names it.
pub(super) fn comm(pid: i32) -> Option<String> {
    let name = std::fs::read_to_string(format!("/proc/{pid}/comm")).ok()?;
    Some(name.trim().to_owned())
}

/// Those of `processes` still running (a zombie runs nothing).
pub(super) fn alive(processes: &[ProcId]) -> Vec<ProcId> {
    processes
        .iter()
        .copied()
        .filter(|&(pid, started)| {
            matches!(start_time(pid), Some((state, s)) if s == started && !matches!(state, 'Z' | 'X'))
        })
        .collect()
}
