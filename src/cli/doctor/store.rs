//! The store check: the URL `serve` would open (`store.url`, else the SQLite file in the data
//! directory) reaches a database, and its migrations are the ones this binary applies —
//! looked at through [`forgeward::store::inspect`], which creates nothing and migrates nothing.
//!
//! **A SQLite file (or a PostgreSQL database) with nothing in it yet passes.** `serve` and
//! `worker` create the file and apply every migration themselves when they open the store, so
//! before the first start that is the state a correct set-up is in, and there is nothing for
//! the operator to set; the doctor, which only reads, must not create it to find out. What
//! could go wrong then is checked instead: that the file's directory can be created and
//! written by this user (for PostgreSQL: that the role may create tables in its schema). Run
//! the doctor as the user `serve` runs as, from the directory it runs in: a relative data
//! directory is relative to it, and the line shows the absolute path.
//!
//! **A store behind, ahead of or different from this binary fails**: migrations not applied
//! yet mean the running bot is an older forgeward than this one (until it is restarted with
//! this one, which applies them); a migration this binary does not know, or one with another
//! checksum, makes `serve` refuse to start.

use forgeward::store::inspect::{Inspection, Migration, Migrations, State, inspect};

use super::{Context, Line, NETWORK_TIMEOUT, Pending, absolute};

const SUBJECT: &str = "store";

pub(super) fn check(cx: &mut Context) -> Pending<'_> {
    Box::pin(async move {
        let settings = match cx.settings_or_skip(SUBJECT) {
            Ok(settings) => settings,
            Err(skipped) => return skipped,
        };
        let url = settings.store_url();
        let setting = if settings.store.url.is_some() {
            "store.url (FORGEWARD_STORE_URL)"
        } else {
            "server.data_dir (FORGEWARD_SERVER_DATA_DIR)"
        };
        let found = match tokio::time::timeout(NETWORK_TIMEOUT, inspect(&url)).await {
            Ok(Ok(found)) => found,
            Ok(Err(e)) => {
                return vec![Line::fail(
                    SUBJECT,
                    e.to_string(),
                    format!(
                        "check {setting}: a sqlite:// file this user can read and write, or a \
                         postgres:// URL whose host, port, user, password and database are \
                         right and whose server accepts connections from here"
                    ),
                )];
            }
            Err(_) => {
                return vec![Line::fail(
                    SUBJECT,
                    format!(
                        "no answer from the store within {} s",
                        NETWORK_TIMEOUT.as_secs()
                    ),
                    format!(
                        "check {setting}: the database server's host and port, and that this \
                         machine reaches it"
                    ),
                )];
            }
        };
        vec![judge(&found, setting)]
    })
}

/// What the line calls the store: SQLite's file by its absolute path, PostgreSQL by its URL
/// (password hidden).
fn named(found: &Inspection) -> String {
    match &found.file {
        Some(file) => format!("{} {}", found.backend.as_str(), absolute(file).display()),
        None => format!("{} {}", found.backend.as_str(), found.url),
    }
}

fn judge(found: &Inspection, setting: &str) -> Line {
    let backend = found.backend.as_str();
    let store = named(found);
    match &found.state {
        State::Absent { path, creatable } => {
            let path = absolute(path);
            if *creatable {
                Line::pass(
                    SUBJECT,
                    format!(
                        "{backend} {} does not exist yet: `serve` creates it and applies the \
                         migrations when it starts",
                        path.display()
                    ),
                )
            } else {
                Line::fail(
                    SUBJECT,
                    format!(
                        "{backend} {} does not exist, and this user cannot create it",
                        path.display()
                    ),
                    format!(
                        "create {} writable by the bot's user, or set {setting} to a directory \
                         it may write (or store.url to a PostgreSQL database)",
                        path.parent().unwrap_or(&path).display()
                    ),
                )
            }
        }
        State::Empty { can_migrate: true } => Line::pass(
            SUBJECT,
            format!(
                "{store}: reachable, nothing applied yet: `serve` applies the migrations when it \
                 starts"
            ),
        ),
        State::Empty { can_migrate: false } => Line::fail(
            SUBJECT,
            format!(
                "{store}: reachable, nothing applied yet, and this user may not create its tables"
            ),
            match found.backend {
                forgeward::store::inspect::Backend::Postgres => {
                    "GRANT CREATE ON SCHEMA public TO the bot's role (or the schema its \
                     search_path names), or have the database owned by it"
                        .to_owned()
                }
                forgeward::store::inspect::Backend::Sqlite => {
                    "make the file and its directory writable by the bot's user".to_owned()
                }
            },
        ),
        State::Migrated(migrations) => migrated(found, migrations),
    }
}

fn migrated(found: &Inspection, m: &Migrations) -> Line {
    let store = named(found);
    if m.complete() {
        return Line::pass(
            SUBJECT,
            format!(
                "{store}: reachable, migrated (all {} migrations, to version {})",
                m.embedded.len(),
                m.newest()
            ),
        );
    }
    if !m.unknown.is_empty() {
        let versions: Vec<String> = m.unknown.iter().map(i64::to_string).collect();
        return Line::fail(
            SUBJECT,
            format!(
                "{store} has migration {} that this forgeward does not know: a newer \
                 forgeward migrated it, and `serve` of this one refuses to start on it",
                versions.join(", ")
            ),
            "run the forgeward version that migrated this store (or a newer one)",
        );
    }
    if !m.changed.is_empty() {
        return Line::fail(
            SUBJECT,
            format!(
                "{store}: {} applied differently from this forgeward's, and `serve` \
                 refuses to start on it",
                listed(&m.changed)
            ),
            "run the forgeward build that migrated this store, or give this one a store of its \
             own",
        );
    }
    if !m.failed.is_empty() {
        return Line::fail(
            SUBJECT,
            format!("{store}: {} failed part-way", listed(&m.failed)),
            "see the error `serve` logged when it applied it; repair the database, delete that \
             row of _sqlx_migrations, and start `serve` again to apply it",
        );
    }
    Line::fail(
        SUBJECT,
        format!(
            "{store}: {} not applied yet: the store was last opened by an older \
             forgeward",
            listed(&m.pending)
        ),
        "start `forgeward serve` (or `forgeward worker`) of this version once with this \
         configuration: it applies the migrations when it opens the store (on PostgreSQL under \
         a lock, so processes starting together migrate once)",
    )
}

/// `migration 3 (base runs)`, `migrations 2 (job question), 3 (base runs)`.
fn listed(migrations: &[Migration]) -> String {
    let each: Vec<String> = migrations
        .iter()
        .map(|m| format!("{} ({})", m.version, m.description))
        .collect();
    let noun = if each.len() == 1 {
        "migration"
    } else {
        "migrations"
    };
    format!("{noun} {}", each.join(", "))
}
