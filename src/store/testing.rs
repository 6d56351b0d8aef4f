//! Test harness: a fresh store on each backend, and the macro that runs one test body on both.
//!
//! SQLite: a file in a temporary directory. PostgreSQL: a database of its own
//! (`forgeward_test_<pid>_<n>`) on the server `FORGEWARD_TEST_POSTGRES_URL` names (`.ci/run` starts
//! one and sets it), dropped when the test ends, so tests run in parallel. A PostgreSQL test that
//! cannot reach its server fails; it never skips.

use std::sync::atomic::{AtomicU32, Ordering};

use sqlx::{Connection, PgConnection};

use super::{Store, WritePool, redact_url};

/// The server `.ci/run` sets up, when the environment names none.
pub(crate) const DEFAULT_POSTGRES_URL: &str =
    "postgres://postgres:postgres@127.0.0.1:5432/postgres";

/// The backends a test runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Backend {
    Sqlite,
    Postgres,
}

/// A database made for one test, and removed after it.
pub(crate) struct TestDb {
    /// The URL a `Store` opens (a second `Store` on it acts as a second process).
    pub url: String,
    cleanup: Cleanup,
}

enum Cleanup {
    Sqlite(#[allow(dead_code)] tempfile::TempDir),
    Postgres { server: String, database: String },
}

impl TestDb {
    pub(crate) async fn new(backend: Backend) -> TestDb {
        match backend {
            Backend::Sqlite => {
                let dir = tempfile::tempdir().unwrap_or_else(|err| panic!("temp dir: {err}"));
                let url = format!("sqlite://{}", dir.path().join("forgeward.db").display());
                TestDb {
                    url,
                    cleanup: Cleanup::Sqlite(dir),
                }
            }
            Backend::Postgres => {
                let server = postgres_server_url();
                let database = unique_database_name();
                let mut admin = connect(&server).await;
                sqlx::query(&format!("CREATE DATABASE {database}"))
                    .execute(&mut admin)
                    .await
                    .unwrap_or_else(|err| {
                        panic!("creating {database} on {}: {err}", redact_url(&server))
                    });
                let _ = admin.close().await;
                TestDb {
                    url: with_database(&server, &database),
                    cleanup: Cleanup::Postgres { server, database },
                }
            }
        }
    }

    pub(crate) async fn open(&self) -> Store {
        Store::open(&self.url)
            .await
            .unwrap_or_else(|err| panic!("opening the test store: {err}"))
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        let Cleanup::Postgres { server, database } = &self.cleanup else {
            return;
        };
        let (server, database) = (server.clone(), database.clone());
        // Drop runs inside the test's runtime, which cannot be blocked on: a thread of its own
        // with a runtime of its own drops the database (FORCE ends the store's connections).
        let dropped = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|err| err.to_string())?;
            runtime.block_on(async {
                let mut admin = PgConnection::connect(&server)
                    .await
                    .map_err(|err| err.to_string())?;
                sqlx::query(&format!("DROP DATABASE IF EXISTS {database} WITH (FORCE)"))
                    .execute(&mut admin)
                    .await
                    .map_err(|err| err.to_string())?;
                let _ = admin.close().await;
                Ok::<(), String>(())
            })
        })
        .join();
        if let Ok(Err(err)) = dropped {
            eprintln!("could not drop a test database: {err}");
        }
    }
}

pub(crate) fn postgres_server_url() -> String {
    std::env::var("FORGEWARD_TEST_POSTGRES_URL").unwrap_or_else(|_| DEFAULT_POSTGRES_URL.to_owned())
}

async fn connect(url: &str) -> PgConnection {
    PgConnection::connect(url).await.unwrap_or_else(|err| {
        panic!(
            "cannot connect to PostgreSQL at {} ({err}); the store's tests need a server: \
             .ci/run starts one, or set FORGEWARD_TEST_POSTGRES_URL",
            redact_url(url)
        )
    })
}

fn unique_database_name() -> String {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.subsec_nanos());
    format!(
        "forgeward_test_{}_{}_{nanos}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// `url` naming `database` instead of its own.
fn with_database(url: &str, database: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("postgres", url));
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    let query = tail
        .split_once('?')
        .map(|(_, q)| format!("?{q}"))
        .unwrap_or_default();
    format!("{scheme}://{authority}/{database}{query}")
}

impl Store {
    /// Runs raw SQL on the write connection: for tests that check what the schema itself enforces.
    pub(crate) async fn execute_sql(&self, sql: &str) -> Result<u64, sqlx::Error> {
        match &self.shared.writes {
            WritePool::Sqlite(pool) => Ok(sqlx::query(sql).execute(pool).await?.rows_affected()),
            WritePool::Postgres(pool) => Ok(sqlx::query(sql).execute(pool).await?.rows_affected()),
        }
    }
}

/// Runs each listed `async fn(Store)` once on SQLite and once on PostgreSQL; a body listed as
/// `two_stores: name` gets two `Store`s on the same database, as two processes would have.
macro_rules! on_both_backends {
    ($($name:ident),* $(,)?) => {
        $crate::store::testing::on_both_backends!(@backend sqlite, Sqlite, $($name),*);
        $crate::store::testing::on_both_backends!(@backend postgres, Postgres, $($name),*);
    };
    (two_stores: $($name:ident),* $(,)?) => {
        $crate::store::testing::on_both_backends!(@two sqlite_two_processes, Sqlite, $($name),*);
        $crate::store::testing::on_both_backends!(
            @two postgres_two_processes, Postgres, $($name),*
        );
    };
    (@backend $module:ident, $backend:ident, $($name:ident),*) => {
        mod $module {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    use $crate::store::testing::{Backend, TestDb};
                    let db = TestDb::new(Backend::$backend).await;
                    super::$name(db.open().await).await;
                }
            )*
        }
    };
    (@two $module:ident, $backend:ident, $($name:ident),*) => {
        mod $module {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    use $crate::store::testing::{Backend, TestDb};
                    let db = TestDb::new(Backend::$backend).await;
                    super::$name(db.open().await, db.open().await).await;
                }
            )*
        }
    };
}
pub(crate) use on_both_backends;

/// An issue labelled in `repo` (`owner/name`): a job whose target is `github:repo#number`.
pub(crate) fn labeled(repo: &str, number: u64) -> crate::forge::event::Event {
    use crate::forge::event::{Actor, Event, Forge, Number, Repo, RepoName};
    Event::IssueLabeled {
        repo: Repo {
            forge: Forge::GitHub,
            name: RepoName(repo.to_owned()),
            id: 1,
        },
        number: Number(number),
        labels: vec!["forgeward".to_owned()],
        actor: Actor {
            login: "maintainer".to_owned(),
            id: 2,
        },
        title: "Fix the parser".to_owned(),
        body: "It fails on empty input.".to_owned(),
    }
}

/// A pull request of `repo` opened: a check's event.
pub(crate) fn pull_request(repo: &str, number: u64) -> crate::forge::event::Event {
    use crate::forge::event::{
        Actor, CommitSha, Event, Forge, Number, PullRequestAction, Repo, RepoName,
    };
    Event::PullRequest {
        repo: Repo {
            forge: Forge::GitHub,
            name: RepoName(repo.to_owned()),
            id: 1,
        },
        number: Number(number),
        action: PullRequestAction::Opened,
        base_sha: CommitSha("a".repeat(40)),
        head_sha: CommitSha("b".repeat(40)),
        head_repo: RepoName(repo.to_owned()),
        is_fork: false,
        author: Actor {
            login: "contributor".to_owned(),
            id: 3,
        },
    }
}

/// A GitHub delivery with id `id`.
pub(crate) fn delivery(id: &str) -> super::NewDelivery {
    super::NewDelivery {
        forge: crate::forge::event::Forge::GitHub,
        id: id.to_owned(),
        event: "issues".to_owned(),
        headers: serde_json::json!({ "x-github-event": "issues", "x-github-delivery": id }),
        body: br#"{"action":"labeled"}"#.to_vec(),
        received_at_ms: super::now_ms(),
    }
}

/// Records a delivery `id` for `event` and returns its job.
pub(crate) async fn enqueue(
    store: &Store,
    id: &str,
    event: &crate::forge::event::Event,
    max_attempts: u32,
) -> super::JobId {
    match store.record(delivery(id), Some(event), max_attempts).await {
        Ok(super::Recorded::New { job: Some(job) }) => job,
        other => panic!("recording {id}: {other:?}"),
    }
}
