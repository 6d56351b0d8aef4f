//! Recording deliveries and their jobs, many rows per statement.
//!
//! The writer hands over every delivery of a batch at once. Two statements per delivery would
//! cost two statements' work (and, on PostgreSQL, two round trips) each; a multi-row INSERT costs
//! one per [`MAX_ROWS`] deliveries. Redeliveries are
//! found by the database itself: `ON CONFLICT DO NOTHING` skips them, and `RETURNING` names the
//! rows it did insert.

use std::collections::HashMap;

use super::Recorded;
use super::conn::{Arg, Conn};
use super::job::JobId;
use crate::forge::event::Forge;

/// Rows per INSERT at most (SQLite allows 32,766 parameters; this is 448). Statements come in
/// power-of-two sizes up to it, so that only a handful of shapes exist, each prepared once and
/// cached by the connection.
const MAX_ROWS: usize = 64;

const DELIVERY_HEAD: &str = "INSERT INTO deliveries (forge, delivery_id, event, headers, body, \
     body_encoding, received_at_ms) VALUES ";
const DELIVERY_ROW: &str = "(?, ?, ?, ?, ?, ?, ?)";
const DELIVERY_TAIL: &str =
    " ON CONFLICT (forge, delivery_id) DO NOTHING RETURNING forge || ' ' || delivery_id, id";

/// `$1` is "now", shared by every row.
const JOB_HEAD: &str = "INSERT INTO jobs (forge, delivery_id, state, phase, target, repo, event, \
     queue, attempts, max_attempts, next_run_at_ms, created_at_ms, updated_at_ms) VALUES ";
const JOB_ROW: &str = "(?, ?, 'queued', 'queued', ?, ?, ?, ?, 0, ?, $1, $1, $1)";
const JOB_TAIL: &str = " RETURNING forge || ' ' || delivery_id, id";

/// A delivery to record, its JSON already serialised by the caller (off the writer's path).
#[derive(Debug)]
pub(crate) struct DeliveryRow {
    pub forge: Forge,
    pub id: String,
    pub event: String,
    pub headers: String,
    /// The body as kept ([`super::body`]), and how.
    pub body: Vec<u8>,
    pub body_encoding: &'static str,
    pub received_at_ms: i64,
    pub job: Option<NewJob>,
}

/// The job a delivery produces.
#[derive(Debug)]
pub(crate) struct NewJob {
    pub target: Option<String>,
    /// The repository's name (`owner/name`), for the job list's filter.
    pub repo: Option<String>,
    pub event: String,
    pub queue: super::job::Queue,
    pub max_attempts: i64,
}

/// Records `deliveries` in order: what each one did. A delivery id seen before — in the store,
/// or earlier in `deliveries` — is a [`Recorded::Duplicate`].
pub(crate) async fn record_all(
    conn: &mut dyn Conn,
    deliveries: &[&DeliveryRow],
    now: i64,
) -> sqlx::Result<Vec<Recorded>> {
    let mut recorded = Vec::with_capacity(deliveries.len());
    for chunk in chunks(deliveries) {
        recorded.extend(record_chunk(conn, chunk, now).await?);
    }
    Ok(recorded)
}

async fn record_chunk(
    conn: &mut dyn Conn,
    deliveries: &[&DeliveryRow],
    now: i64,
) -> sqlx::Result<Vec<Recorded>> {
    let sql = insert_sql(
        DELIVERY_HEAD,
        DELIVERY_ROW,
        deliveries.len(),
        1,
        DELIVERY_TAIL,
    );
    let mut args = Vec::with_capacity(deliveries.len() * 7);
    for delivery in deliveries {
        args.extend([
            Arg::Text(delivery.forge.as_str()),
            Arg::Text(&delivery.id),
            Arg::Text(&delivery.event),
            Arg::Text(&delivery.headers),
            Arg::Bytes(&delivery.body),
            Arg::Text(delivery.body_encoding),
            Arg::Int(delivery.received_at_ms),
        ]);
    }
    let mut inserted: HashMap<String, i64> =
        conn.fetch_keyed(&sql, &args).await?.into_iter().collect();
    // The first of a repeated id took the row; the ones after it are redeliveries.
    let new: Vec<bool> = deliveries
        .iter()
        .map(|d| inserted.remove(&key(d.forge, &d.id)).is_some())
        .collect();

    let with_jobs: Vec<&DeliveryRow> = deliveries
        .iter()
        .zip(&new)
        .filter(|(delivery, new)| **new && delivery.job.is_some())
        .map(|(delivery, _)| *delivery)
        .collect();
    let mut jobs = HashMap::with_capacity(with_jobs.len());
    for chunk in chunks(&with_jobs) {
        jobs.extend(insert_jobs(conn, chunk, now).await?);
    }

    Ok(deliveries
        .iter()
        .zip(new)
        .map(|(delivery, new)| match new {
            false => Recorded::Duplicate,
            true => Recorded::New {
                job: jobs
                    .get(&key(delivery.forge, &delivery.id))
                    .copied()
                    .map(JobId),
            },
        })
        .collect())
}

/// Inserts the jobs of `deliveries` (each has one): their ids by [`key`].
async fn insert_jobs(
    conn: &mut dyn Conn,
    deliveries: &[&DeliveryRow],
    now: i64,
) -> sqlx::Result<Vec<(String, i64)>> {
    let sql = insert_sql(JOB_HEAD, JOB_ROW, deliveries.len(), 2, JOB_TAIL);
    let mut args = Vec::with_capacity(1 + deliveries.len() * 7);
    args.push(Arg::Int(now));
    for delivery in deliveries {
        if let Some(job) = &delivery.job {
            args.extend([
                Arg::Text(delivery.forge.as_str()),
                Arg::Text(&delivery.id),
                Arg::OptText(job.target.as_deref()),
                Arg::OptText(job.repo.as_deref()),
                Arg::Text(&job.event),
                Arg::Text(job.queue.as_str()),
                Arg::Int(job.max_attempts),
            ]);
        }
    }
    conn.fetch_keyed(&sql, &args).await
}

/// How a RETURNING clause names a delivery: forge names have no space, so this is unambiguous.
fn key(forge: Forge, id: &str) -> String {
    format!("{forge} {id}")
}

/// `items` in pieces of [`MAX_ROWS`], then of decreasing powers of two.
fn chunks<T>(mut items: &[T]) -> impl Iterator<Item = &[T]> {
    std::iter::from_fn(move || {
        if items.is_empty() {
            return None;
        }
        let len = (1usize << items.len().ilog2()).min(MAX_ROWS);
        let (chunk, rest) = items.split_at(len);
        items = rest;
        Some(chunk)
    })
}

/// `head`, then `rows` copies of `row` whose `?`s are numbered `$first`, `$first + 1`, …
/// across the rows, then `tail`.
fn insert_sql(head: &str, row: &str, rows: usize, first: usize, tail: &str) -> String {
    let mut sql = String::with_capacity(head.len() + rows * (row.len() + 24) + tail.len());
    sql.push_str(head);
    let mut next = first;
    for n in 0..rows {
        if n > 0 {
            sql.push_str(", ");
        }
        for c in row.chars() {
            if c == '?' {
                sql.push('$');
                sql.push_str(&next.to_string());
                next += 1;
            } else {
                sql.push(c);
            }
        }
    }
    sql.push_str(tail);
    sql
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_numbered_across_the_statement() {
        assert_eq!(
            insert_sql("INSERT INTO t VALUES ", "(?, $1, ?)", 2, 2, " RETURNING id"),
            "INSERT INTO t VALUES ($2, $1, $3), ($4, $1, $5) RETURNING id"
        );
    }

    #[test]
    fn chunks_come_in_few_sizes() {
        let items: Vec<u32> = (0..200).collect();
        let sizes: Vec<usize> = chunks(&items).map(<[u32]>::len).collect();
        assert_eq!(sizes, [64, 64, 64, 8]);
        let sizes: Vec<usize> = chunks(&items[..63]).map(<[u32]>::len).collect();
        assert_eq!(sizes, [32, 16, 8, 4, 2, 1]);
        assert_eq!(chunks::<u32>(&[]).count(), 0);
    }
}
