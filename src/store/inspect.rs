//! A look at a store that changes nothing, for `forgeward doctor`: whether the URL reaches a
//! database, and how its migrations compare with the ones this binary embeds.
//!
//! Unlike [`Store::open`](super::Store::open), this never creates a file or a directory, never
//! migrates, and starts no writer: a SQLite file is opened read-only (and only when it exists),
//! a PostgreSQL database through one connection that runs `SELECT`s only. What it finds is
//! described, not judged: whether a store that does not exist yet is fine is the caller's call.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use sqlx::Connection as _;
use sqlx::migrate::Migrator;
use sqlx::postgres::{PgConnectOptions, PgConnection};
use sqlx::sqlite::{SqliteConnectOptions, SqliteConnection};

use super::{POSTGRES_MIGRATIONS, SQLITE_MIGRATIONS, StoreError, redact, redact_url};

/// Which database a store URL names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

impl Backend {
    pub fn as_str(self) -> &'static str {
        match self {
            Backend::Sqlite => "SQLite",
            Backend::Postgres => "PostgreSQL",
        }
    }
}

/// What [`inspect`] found at a store URL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Inspection {
    pub backend: Backend,
    /// The URL, any password replaced by `***`.
    pub url: String,
    /// SQLite's file, as the URL names it (relative to the working directory, if it is).
    pub file: Option<PathBuf>,
    pub state: State,
}

/// The state of the database a store URL names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum State {
    /// The SQLite file does not exist (yet). `creatable` is whether this process could create
    /// it: the nearest directory above it that exists is one it may write to (`Store::open`
    /// creates the directories below it).
    Absent { path: PathBuf, creatable: bool },
    /// The database answers and holds no migration of forgeward's: nothing applied yet.
    /// `can_migrate` is whether this process's user may create the tables there (PostgreSQL:
    /// `CREATE` on the schema the migrations go to; SQLite: the file and its directory
    /// writable, for the file itself and its journal).
    Empty { can_migrate: bool },
    /// The database answers and has migrations applied.
    Migrated(Migrations),
}

/// One migration, as this binary embeds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Migration {
    pub version: i64,
    /// Its description: the migration file's name after the version (`base runs`).
    pub description: String,
}

/// The store's migrations beside this binary's.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Migrations {
    /// Every migration this binary embeds, oldest first.
    pub embedded: Vec<Migration>,
    /// Embedded and not applied: what the next `Store::open` applies.
    pub pending: Vec<Migration>,
    /// Recorded as applied but not successfully (a migration that failed part-way).
    pub failed: Vec<Migration>,
    /// Applied, with a checksum other than this binary's: another build's migration of the
    /// same number. `Store::open` refuses such a store.
    pub changed: Vec<Migration>,
    /// Versions applied that this binary does not embed: a newer forgeward migrated the store.
    /// `Store::open` refuses such a store too.
    pub unknown: Vec<i64>,
}

impl Migrations {
    /// Everything applied, nothing pending, nothing this binary would refuse.
    pub fn complete(&self) -> bool {
        self.pending.is_empty()
            && self.failed.is_empty()
            && self.changed.is_empty()
            && self.unknown.is_empty()
    }

    /// The newest version embedded.
    pub fn newest(&self) -> i64 {
        self.embedded.last().map_or(0, |m| m.version)
    }

    /// Compares what the store recorded, `(version, success, checksum)`, with `migrator`.
    fn compare(migrator: &Migrator, applied: &[(i64, bool, Vec<u8>)]) -> Migrations {
        let mut embedded: Vec<&sqlx::migrate::Migration> = migrator
            .iter()
            .filter(|m| m.migration_type.is_up_migration())
            .collect();
        embedded.sort_by_key(|m| m.version);
        let recorded: BTreeMap<i64, (bool, &[u8])> = applied
            .iter()
            .map(|(v, ok, sum)| (*v, (*ok, sum.as_slice())))
            .collect();
        let mut out = Migrations::default();
        for m in &embedded {
            let migration = Migration {
                version: m.version,
                description: m.description.to_string(),
            };
            match recorded.get(&m.version) {
                None => out.pending.push(migration.clone()),
                Some((false, _)) => out.failed.push(migration.clone()),
                Some((true, sum)) if *sum != &*m.checksum => out.changed.push(migration.clone()),
                Some(_) => {}
            }
            out.embedded.push(migration);
        }
        out.unknown = recorded
            .keys()
            .filter(|v| !embedded.iter().any(|m| m.version == **v))
            .copied()
            .collect();
        out
    }
}

/// Looks at the store `url` names (`sqlite://…` or `postgres://…`) without changing anything.
/// An error is a URL the store cannot use, or a database that cannot be reached or read; its
/// message never holds the password.
pub async fn inspect(url: &str) -> Result<Inspection, StoreError> {
    let shown = redact_url(url);
    let (backend, file, state) = if url.starts_with("sqlite:") {
        let (file, state) = inspect_sqlite(url, &shown).await?;
        (Backend::Sqlite, Some(file), state)
    } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        (
            Backend::Postgres,
            None,
            inspect_postgres(url, &shown).await?,
        )
    } else {
        return Err(StoreError::Url {
            url: shown,
            reason: "expected sqlite://… or postgres://…",
        });
    };
    Ok(Inspection {
        backend,
        url: shown,
        file,
        state,
    })
}

async fn inspect_sqlite(url: &str, shown: &str) -> Result<(PathBuf, State), StoreError> {
    if url.contains(":memory:") || url.contains("mode=memory") {
        return Err(StoreError::Url {
            url: shown.to_owned(),
            reason: "an in-memory database does not survive a restart; name a file",
        });
    }
    let failed = |message: String| StoreError::Open {
        url: shown.to_owned(),
        message: redact(&message, url),
    };
    let options = SqliteConnectOptions::from_str(url).map_err(|e| failed(e.to_string()))?;
    let path = options.get_filename().to_owned();
    match std::fs::metadata(&path) {
        // Not there, or a file stands where a directory above it should be.
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
            ) =>
        {
            let creatable = nearest_existing(&path).is_some_and(|dir| writable(&dir));
            let state = State::Absent {
                path: path.clone(),
                creatable,
            };
            return Ok((path, state));
        }
        Err(e) => return Err(failed(format!("{}: {e}", path.display()))),
        Ok(meta) if !meta.is_file() => {
            return Err(failed(format!("{} is not a file", path.display())));
        }
        Ok(_) => {}
    }
    // Read-only, never created: the doctor must not leave a file where there was none.
    let options = options.read_only(true).create_if_missing(false);
    let mut conn = SqliteConnection::connect_with(&options)
        .await
        .map_err(|e| failed(e.to_string()))?;
    let read = async {
        let tables: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = '_sqlx_migrations'",
        )
        .fetch_one(&mut conn)
        .await?;
        if tables == 0 {
            return Ok(None);
        }
        sqlx::query_as::<_, (i64, bool, Vec<u8>)>(
            "SELECT version, success, checksum FROM _sqlx_migrations ORDER BY version",
        )
        .fetch_all(&mut conn)
        .await
        .map(Some)
    };
    let applied: Option<Vec<(i64, bool, Vec<u8>)>> =
        read.await.map_err(|e: sqlx::Error| failed(e.to_string()))?;
    let _ = conn.close().await;
    let state = match applied {
        Some(rows) if !rows.is_empty() => {
            State::Migrated(Migrations::compare(&SQLITE_MIGRATIONS, &rows))
        }
        _ => State::Empty {
            can_migrate: writable(&path) && path.parent().is_none_or(writable_or_cwd),
        },
    };
    Ok((path, state))
}

async fn inspect_postgres(url: &str, shown: &str) -> Result<State, StoreError> {
    let failed = |err: sqlx::Error| StoreError::Open {
        url: shown.to_owned(),
        message: redact(&err.to_string(), url),
    };
    let options = PgConnectOptions::from_str(url).map_err(failed)?;
    let mut conn = PgConnection::connect_with(&options).await.map_err(failed)?;
    let read = async {
        // Where sqlx's unqualified `_sqlx_migrations` resolves, by the role's search path.
        let present: bool =
            sqlx::query_scalar("SELECT to_regclass('_sqlx_migrations') IS NOT NULL")
                .fetch_one(&mut conn)
                .await?;
        if !present {
            let can_create: bool = sqlx::query_scalar(
                "SELECT COALESCE(has_schema_privilege(current_schema(), 'CREATE'), false)",
            )
            .fetch_one(&mut conn)
            .await?;
            return Ok(Err(can_create));
        }
        sqlx::query_as::<_, (i64, bool, Vec<u8>)>(
            "SELECT version, success, checksum FROM _sqlx_migrations ORDER BY version",
        )
        .fetch_all(&mut conn)
        .await
        .map(Ok)
    };
    let found: Result<Vec<(i64, bool, Vec<u8>)>, bool> = read.await.map_err(failed)?;
    let _ = conn.close().await;
    Ok(match found {
        Ok(rows) if !rows.is_empty() => {
            State::Migrated(Migrations::compare(&POSTGRES_MIGRATIONS, &rows))
        }
        Ok(_) => State::Empty { can_migrate: true },
        Err(can_migrate) => State::Empty { can_migrate },
    })
}

/// `path` itself or the nearest directory above it that exists.
fn nearest_existing(path: &Path) -> Option<PathBuf> {
    let mut at = path.parent();
    while let Some(dir) = at {
        let dir = if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        };
        match std::fs::metadata(dir) {
            Ok(meta) if meta.is_dir() => return Some(dir.to_owned()),
            Ok(_) => return None,
            Err(_) => at = dir.parent(),
        }
    }
    None
}

/// Whether this process may write to `path` (a directory: create entries in it), as the kernel
/// judges it for this user, root included.
fn writable(path: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt as _;
    let Ok(c_path) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: `c_path` is a valid NUL-terminated string that outlives the call.
    unsafe { libc::access(c_path.as_ptr(), libc::W_OK) == 0 }
}

/// [`writable`] for a file's directory, the working directory when it has none.
fn writable_or_cwd(dir: &Path) -> bool {
    if dir.as_os_str().is_empty() {
        writable(Path::new("."))
    } else {
        writable(dir)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_sqlite_file_that_is_not_there_is_absent_and_not_created() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("data/forgeward.db");
        let url = format!("sqlite://{}", path.display());
        let found = inspect(&url).await.expect("inspected");
        assert_eq!(found.backend, Backend::Sqlite);
        assert_eq!(
            found.state,
            State::Absent {
                path: path.clone(),
                creatable: true
            }
        );
        assert!(!dir.path().join("data").exists(), "nothing is created");
    }

    #[tokio::test]
    async fn a_store_opened_once_is_migrated_and_one_behind_is_pending() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("forgeward.db");
        let url = format!("sqlite://{}", path.display());
        drop(super::super::Store::open(&url).await.expect("opened"));
        let State::Migrated(migrations) = inspect(&url).await.expect("inspected").state else {
            panic!("expected a migrated store");
        };
        assert!(migrations.complete(), "{migrations:?}");
        // The newest migration this build embeds.
        let newest = migrations.newest();
        assert!(newest >= 3, "{migrations:?}");

        let conn = rusqlite::Connection::open(&path).expect("open");
        conn.execute("DELETE FROM _sqlx_migrations WHERE version = ?1", [newest])
            .expect("delete");
        conn.execute(
            "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time) \
             VALUES (99, 'from the future', TRUE, X'00', 0)",
            [],
        )
        .expect("insert");
        conn.execute(
            "UPDATE _sqlx_migrations SET checksum = X'00' WHERE version = 2",
            [],
        )
        .expect("update");
        drop(conn);
        let State::Migrated(migrations) = inspect(&url).await.expect("inspected").state else {
            panic!("expected a migrated store");
        };
        assert_eq!(
            migrations
                .pending
                .iter()
                .map(|m| m.version)
                .collect::<Vec<_>>(),
            [newest]
        );
        assert_eq!(
            migrations
                .changed
                .iter()
                .map(|m| m.version)
                .collect::<Vec<_>>(),
            [2]
        );
        assert_eq!(migrations.unknown, [99]);
        assert!(!migrations.complete());
    }

    #[tokio::test]
    async fn an_empty_sqlite_file_has_nothing_applied() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("empty.db");
        drop(rusqlite::Connection::open(&path).expect("create"));
        let url = format!("sqlite://{}", path.display());
        assert_eq!(
            inspect(&url).await.expect("inspected").state,
            State::Empty { can_migrate: true }
        );
    }

    #[tokio::test]
    async fn urls_it_cannot_use_are_errors_without_the_password() {
        let e = inspect("mysql://u:hunter22@db/x")
            .await
            .expect_err("refused");
        let text = e.to_string();
        assert!(text.contains("expected sqlite://"), "{text}");
        assert!(!text.contains("hunter22"), "{text}");
    }
}
