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

/// One column of a row read by [`Conn::fetch_values`]: the store's columns are integers, text
/// and (a delivery's body) bytes, each possibly NULL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Value {
    Null,
    Int(i64),
    Text(String),
    Bytes(Vec<u8>),
}

impl Value {
    pub fn int(&self) -> Option<i64> {
        match self {
            Value::Int(v) => Some(*v),
            _ => None,
        }
    }

    pub fn text(&self) -> Option<&str> {
        match self {
            Value::Text(v) => Some(v),
            _ => None,
        }
    }

    pub fn into_bytes(self) -> Option<Vec<u8>> {
        match self {
            Value::Bytes(v) => Some(v),
            _ => None,
        }
    }
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

    /// Rows of integers and texts, any of them NULL, in the statement's column order.
    fn fetch_values<'a>(
        &'a mut self,
        sql: &'a str,
        args: &'a [Arg<'a>],
    ) -> BoxFuture<'a, sqlx::Result<Vec<Vec<Value>>>>;
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

            fn fetch_values<'a>(
                &'a mut self,
                sql: &'a str,
                args: &'a [Arg<'a>],
            ) -> BoxFuture<'a, sqlx::Result<Vec<Vec<Value>>>> {
                Box::pin(async move {
                    use sqlx::Row as _;
                    let rows = bind::<$db>(sqlx::query(sql), args)
                        .fetch_all(&mut *self)
                        .await?;
                    rows.iter()
                        .map(|row| {
                            (0..row.len())
                                .map(|i| {
                                    // An integer column decodes as one; a text column refuses
                                    // to, and is read as text; a blob refuses both.
                                    if let Ok(v) = row.try_get::<Option<i64>, _>(i) {
                                        return Ok(v.map_or(Value::Null, Value::Int));
                                    }
                                    if let Ok(v) = row.try_get::<Option<String>, _>(i) {
                                        return Ok(v.map_or(Value::Null, Value::Text));
                                    }
                                    let v = row.try_get::<Option<Vec<u8>>, _>(i)?;
                                    Ok(v.map_or(Value::Null, Value::Bytes))
                                })
                                .collect()
                        })
                        .collect()
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

/// The SQLite writer's own connection (rusqlite, on the writer's thread): the same statements
/// as sqlx runs, each prepared once and cached, run in place with no hand-off to another
/// thread. Its futures are ready when first polled.
impl Conn for rusqlite::Connection {
    fn dialect(&self) -> Dialect {
        Dialect::Sqlite
    }

    fn execute<'a>(
        &'a mut self,
        sql: &'a str,
        args: &'a [Arg<'a>],
    ) -> BoxFuture<'a, sqlx::Result<u64>> {
        let done = (|| {
            let mut statement = bound(self, sql, args)?;
            let changed = statement.raw_execute()?;
            Ok(changed as u64)
        })();
        Box::pin(std::future::ready(done.map_err(sqlite_error)))
    }

    fn fetch_jobs<'a>(
        &'a mut self,
        sql: &'a str,
        args: &'a [Arg<'a>],
    ) -> BoxFuture<'a, sqlx::Result<Vec<JobRow>>> {
        let rows = rows(self, sql, args, |row| {
            Ok(JobRow {
                id: row.get("id")?,
                forge: row.get("forge")?,
                delivery_id: row.get("delivery_id")?,
                state: row.get("state")?,
                phase: row.get("phase")?,
                target: row.get("target")?,
                event: row.get("event")?,
                attempts: row.get("attempts")?,
                max_attempts: row.get("max_attempts")?,
                lease_owner: row.get("lease_owner")?,
                lease_expires_at_ms: row.get("lease_expires_at_ms")?,
                next_run_at_ms: row.get("next_run_at_ms")?,
                last_error: row.get("last_error")?,
                created_at_ms: row.get("created_at_ms")?,
                updated_at_ms: row.get("updated_at_ms")?,
                question: row.get("question")?,
            })
        });
        Box::pin(std::future::ready(rows))
    }

    fn fetch_ints<'a>(
        &'a mut self,
        sql: &'a str,
        args: &'a [Arg<'a>],
    ) -> BoxFuture<'a, sqlx::Result<Vec<Vec<i64>>>> {
        let rows = rows(self, sql, args, |row| {
            (0..row.as_ref().column_count())
                .map(|i| row.get::<_, i64>(i))
                .collect()
        });
        Box::pin(std::future::ready(rows))
    }

    fn fetch_keyed<'a>(
        &'a mut self,
        sql: &'a str,
        args: &'a [Arg<'a>],
    ) -> BoxFuture<'a, sqlx::Result<Vec<(String, i64)>>> {
        let rows = rows(self, sql, args, |row| Ok((row.get(0)?, row.get(1)?)));
        Box::pin(std::future::ready(rows))
    }

    fn fetch_values<'a>(
        &'a mut self,
        sql: &'a str,
        args: &'a [Arg<'a>],
    ) -> BoxFuture<'a, sqlx::Result<Vec<Vec<Value>>>> {
        use rusqlite::types::ValueRef;
        let rows = rows(self, sql, args, |row| {
            (0..row.as_ref().column_count())
                .map(|i| {
                    Ok(match row.get_ref(i)? {
                        ValueRef::Null => Value::Null,
                        ValueRef::Integer(v) => Value::Int(v),
                        ValueRef::Text(t) => Value::Text(String::from_utf8_lossy(t).into_owned()),
                        ValueRef::Blob(b) => Value::Bytes(b.to_vec()),
                        ValueRef::Real(_) => {
                            return Err(rusqlite::Error::InvalidColumnType(
                                i,
                                row.as_ref().column_name(i).unwrap_or("?").to_owned(),
                                rusqlite::types::Type::Real,
                            ));
                        }
                    })
                })
                .collect()
        });
        Box::pin(std::future::ready(rows))
    }
}

/// `sql` prepared (from the connection's cache) with `args` bound. The store's statements
/// number their parameters `$1`, `$2`, … as PostgreSQL does; SQLite reads each `$N` as a name
/// and numbers the names in the order they first appear (`$1` may come last, or twice), so each
/// is bound by its name.
fn bound<'c>(
    conn: &'c rusqlite::Connection,
    sql: &str,
    args: &[Arg<'_>],
) -> rusqlite::Result<rusqlite::CachedStatement<'c>> {
    use rusqlite::types::ToSqlOutput;
    let mut statement = conn.prepare_cached(sql)?;
    for index in 1..=statement.parameter_count() {
        let arg = statement
            .parameter_name(index)
            .and_then(|name| name.strip_prefix('$')?.parse::<usize>().ok())
            .and_then(|n| args.get(n.checked_sub(1)?))
            .ok_or_else(|| {
                rusqlite::Error::InvalidParameterName(
                    statement.parameter_name(index).unwrap_or("?").to_owned(),
                )
            })?;
        let value = match *arg {
            Arg::Int(v) => ToSqlOutput::from(v),
            Arg::OptInt(v) => v.map_or(ToSqlOutput::from(rusqlite::types::Null), ToSqlOutput::from),
            Arg::Text(v) => ToSqlOutput::from(v),
            Arg::OptText(v) => {
                v.map_or(ToSqlOutput::from(rusqlite::types::Null), ToSqlOutput::from)
            }
            Arg::Bytes(v) => ToSqlOutput::from(v),
        };
        statement.raw_bind_parameter(index, value)?;
    }
    Ok(statement)
}

/// Every row `sql` returns, each made by `row`.
fn rows<T>(
    conn: &rusqlite::Connection,
    sql: &str,
    args: &[Arg<'_>],
    mut row: impl FnMut(&rusqlite::Row<'_>) -> rusqlite::Result<T>,
) -> sqlx::Result<Vec<T>> {
    let mut read = || {
        let mut statement = bound(conn, sql, args)?;
        let mut rows = statement.raw_query();
        let mut out = Vec::new();
        while let Some(r) = rows.next()? {
            out.push(row(r)?);
        }
        Ok(out)
    };
    read().map_err(sqlite_error)
}

/// A rusqlite error as the store's other database errors are: a database error with
/// SQLite's message.
pub(crate) fn sqlite_error(err: rusqlite::Error) -> sqlx::Error {
    sqlx::Error::Database(Box::new(SqliteError {
        message: err.to_string(),
        source: err,
    }))
}

#[derive(Debug, thiserror::Error)]
#[error("{message}")]
struct SqliteError {
    message: String,
    source: rusqlite::Error,
}

impl sqlx::error::DatabaseError for SqliteError {
    fn message(&self) -> &str {
        &self.message
    }

    fn as_error(&self) -> &(dyn std::error::Error + Send + Sync + 'static) {
        self
    }

    fn as_error_mut(&mut self) -> &mut (dyn std::error::Error + Send + Sync + 'static) {
        self
    }

    fn into_error(self: Box<Self>) -> Box<dyn std::error::Error + Send + Sync + 'static> {
        self
    }

    fn kind(&self) -> sqlx::error::ErrorKind {
        match &self.source {
            rusqlite::Error::SqliteFailure(e, _) => match e.extended_code {
                rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE
                | rusqlite::ffi::SQLITE_CONSTRAINT_PRIMARYKEY => {
                    sqlx::error::ErrorKind::UniqueViolation
                }
                rusqlite::ffi::SQLITE_CONSTRAINT_FOREIGNKEY => {
                    sqlx::error::ErrorKind::ForeignKeyViolation
                }
                rusqlite::ffi::SQLITE_CONSTRAINT_NOTNULL => {
                    sqlx::error::ErrorKind::NotNullViolation
                }
                rusqlite::ffi::SQLITE_CONSTRAINT_CHECK => sqlx::error::ErrorKind::CheckViolation,
                _ => sqlx::error::ErrorKind::Other,
            },
            _ => sqlx::error::ErrorKind::Other,
        }
    }
}
