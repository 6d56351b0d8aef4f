//! The witness of the worker runs: the scripted worker, inside its sandbox, holds a TCP
//! connection to the test for as long as it runs, saying `start <job> <attempt>` when it starts
//! and `end` when it is done. A connection that closes without `end` is a run that was killed;
//! two connections open at once for one job are a job running twice at once. Times are read on
//! the store's clock ([`now_ms`]), the same machine's.

use std::sync::{Arc, Mutex};

use forgeward::store::now_ms;
use tokio::io::AsyncBufReadExt;

/// One run of the worker script, as the witness saw it.
#[derive(Clone, Debug)]
pub(super) struct Run {
    pub(super) runner: &'static str,
    pub(super) job: i64,
    pub(super) attempt: u32,
    pub(super) started_ms: i64,
    pub(super) ended_ms: Option<i64>,
    /// The script said `end`: it ran to completion rather than being killed.
    pub(super) finished: bool,
}

#[derive(Default)]
struct Seen {
    runs: Vec<Run>,
    /// Runs that started while another run of the same job was still going, and reports that
    /// made no sense.
    faults: Vec<String>,
}

/// Listens for the worker script's reports, one listener per runner process.
#[derive(Clone, Default)]
pub(super) struct Witness(Arc<Mutex<Seen>>);

impl Witness {
    /// A listener for `runner`'s sandboxes; returns its port.
    pub(super) async fn listen(&self, runner: &'static str) -> u16 {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("binding the witness");
        let port = listener.local_addr().expect("its address").port();
        let witness = self.clone();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let witness = witness.clone();
                tokio::spawn(async move { witness.follow(runner, stream).await });
            }
        });
        port
    }

    async fn follow(&self, runner: &'static str, stream: tokio::net::TcpStream) {
        let mut lines = tokio::io::BufReader::new(stream).lines();
        let Ok(Some(first)) = lines.next_line().await else {
            return;
        };
        let mut words = first.split_whitespace();
        let (Some("start"), Some(job), Some(attempt)) = (words.next(), words.next(), words.next())
        else {
            self.lock()
                .faults
                .push(format!("{runner}: the worker said {first:?}"));
            return;
        };
        let (Ok(job), Ok(attempt)) = (job.parse::<i64>(), attempt.parse::<u32>()) else {
            self.lock()
                .faults
                .push(format!("{runner}: the worker said {first:?}"));
            return;
        };
        let index = {
            let mut seen = self.lock();
            let started_ms = now_ms();
            let running: Vec<String> = seen
                .runs
                .iter()
                .filter(|r| r.job == job && r.ended_ms.is_none())
                .map(|r| format!("{r:?}"))
                .collect();
            if !running.is_empty() {
                seen.faults.push(format!(
                    "job {job} started on {runner} (attempt {attempt}) while running: {}",
                    running.join(", ")
                ));
            }
            seen.runs.push(Run {
                runner,
                job,
                attempt,
                started_ms,
                ended_ms: None,
                finished: false,
            });
            seen.runs.len() - 1
        };
        let mut finished = false;
        while let Ok(Some(line)) = lines.next_line().await {
            finished |= line.trim() == "end";
        }
        let mut seen = self.lock();
        let run = &mut seen.runs[index];
        run.ended_ms = Some(now_ms());
        run.finished = finished;
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Seen> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(super) fn runs(&self) -> Vec<Run> {
        self.lock().runs.clone()
    }

    /// Fails the test if a job ever ran twice at once (or a worker's report made no sense).
    pub(super) fn no_overlap(&self) {
        let faults = self.lock().faults.clone();
        assert!(faults.is_empty(), "the witness saw: {faults:#?}");
    }
}
