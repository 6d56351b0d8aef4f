//! One connection, whichever the backend: the store's SQL is written once (with `$1`-style
//! parameters, which both SQLite and PostgreSQL accept) and run through this trait, so the
//! queue's logic does not exist twice. Only the few row shapes the store reads are decoded here.

use std::future::Future;
use std::pin::Pin;

use sqlx::{FromRow, PgConnection, SqliteConnection};

pub(crate) type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Which SQL dialect a connection speaks, for the few statements that differ.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Dialect {
    Sqlite,
    Postgres,
}

/// A value bound to a statement parameter.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Arg<'a> {
    Int(i64),
    OptInt(Option<i64>),
    Text(&'a str),
    OptText(Option<&'a str>),
    Bytes(&'a [u8]),
}

/// A `jobs` row as stored, before it is checked into a [`super::Job`].
#[derive(Debug, FromRow)]
pub(crate) struct JobRow {
    pub id: i64,
    pub forge: String,
    pub delivery_id: String,
    pub state: String,
    pub phase: String,
    pub target: Option<String>,
    pub event: String,
    pub attempts: i64,
    pub max_attempts: i64,
    pub lease_owner: Option<String>,
    pub lease_expires_at_ms: Option<i64>,
    pub next_run_at_ms: i64,
    pub last_error: Option<String>,
    pub created_at_ms: i64,
    pub updated_at_ms: i64,
    pub question: Option<String>,
}

/// A connection (or a transaction on one) the store's statements run on.
pub(crate) trait Conn: Send {
    fn dialect(&self) -> Dialect;

    /// Runs a statement; the number of rows it changed.
    fn execute<'a>(
        &'a mut self,
        sql: &'a str,
        args: &'a [Arg<'a>],
    ) -> BoxFuture<'a, sqlx::Result<u64>>;

    /// Rows of `jobs` columns.
    fn fetch_jobs<'a>(
        &'a mut self,
        sql: &'a str,
        args: &'a [Arg<'a>],
    ) -> BoxFuture<'a, sqlx::Result<Vec<JobRow>>>;

    /// Rows whose every column is a (non-NULL) integer.
    fn fetch_ints<'a>(
        &'a mut self,
        sql: &'a str,
        args: &'a [Arg<'a>],
    ) -> BoxFuture<'a, sqlx::Result<Vec<Vec<i64>>>>;

    /// Rows of a text and an integer (a count by key, an id by key).
    fn fetch_keyed<'a>(
        &'a mut self,
        sql: &'a str,
        args: &'a [Arg<'a>],
    ) -> BoxFuture<'a, sqlx::Result<Vec<(String, i64)>>>;
}

/// The same implementation for each backend's connection type: the statements are identical, the
/// types are not.
macro_rules! impl_conn {
    ($conn:ty, $db:ty, $dialect:expr) => {
        impl Conn for $conn {
            fn dialect(&self) -> Dialect {
                $dialect
            }

            fn execute<'a>(
                &'a mut self,
                sql: &'a str,
                args: &'a [Arg<'a>],
            ) -> BoxFuture<'a, sqlx::Result<u64>> {
                Box::pin(async move {
                    let done = bind::<$db>(sqlx::query(sql), args)
                        .execute(&mut *self)
                        .await?;
                    Ok(done.rows_affected())
                })
            }

            fn fetch_jobs<'a>(
                &'a mut self,
                sql: &'a str,
                args: &'a [Arg<'a>],
            ) -> BoxFuture<'a, sqlx::Result<Vec<JobRow>>> {
                Box::pin(async move {
                    let rows = bind::<$db>(sqlx::query(sql), args)
                        .fetch_all(&mut *self)
                        .await?;
                    rows.iter().map(JobRow::from_row).collect()
                })
            }

            fn fetch_ints<'a>(
                &'a mut self,
                sql: &'a str,
                args: &'a [Arg<'a>],
            ) -> BoxFuture<'a, sqlx::Result<Vec<Vec<i64>>>> {
                Box::pin(async move {
                    use sqlx::Row as _;
                    let rows = bind::<$db>(sqlx::query(sql), args)
                        .fetch_all(&mut *self)
                        .await?;
                    rows.iter()
                        .map(|row| (0..row.len()).map(|i| row.try_get::<i64, _>(i)).collect())
                        .collect()
                })
            }

            fn fetch_keyed<'a>(
                &'a mut self,
                sql: &'a str,
                args: &'a [Arg<'a>],
            ) -> BoxFuture<'a, sqlx::Result<Vec<(String, i64)>>> {
                Box::pin(async move {
                    let rows = bind::<$db>(sqlx::query(sql), args)
                        .fetch_all(&mut *self)
                        .await?;
                    rows.iter().map(<(String, i64)>::from_row).collect()
                })
            }
        }
    };
}

impl_conn!(SqliteConnection, sqlx::Sqlite, Dialect::Sqlite);
impl_conn!(PgConnection, sqlx::Postgres, Dialect::Postgres);

/// Binds `args` in order to a statement of either backend.
fn bind<'q, DB>(
    mut query: sqlx::query::Query<'q, DB, <DB as sqlx::Database>::Arguments<'q>>,
    args: &'q [Arg<'q>],
) -> sqlx::query::Query<'q, DB, <DB as sqlx::Database>::Arguments<'q>>
where
    DB: sqlx::Database,
    i64: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    Option<i64>: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    &'q str: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    Option<&'q str>: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    &'q [u8]: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
{
    for arg in args {
        query = match *arg {
            Arg::Int(value) => query.bind(value),
            Arg::OptInt(value) => query.bind(value),
            Arg::Text(value) => query.bind(value),
            Arg::OptText(value) => query.bind(value),
            Arg::Bytes(value) => query.bind(value),
        };
    }
    query
}
