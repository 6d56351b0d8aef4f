//! The store's behaviour, the same suite on SQLite and on PostgreSQL (see [`super::testing`]).

use std::collections::HashSet;
use std::time::Duration;

use super::testing::{delivery, enqueue, labeled, on_both_backends};
use super::*;
use crate::forge::event::{Event, InstallationAction, RepoName};

on_both_backends!(
    record_then_redelivery_is_duplicate,
    delivery_ids_are_per_forge,
    events_without_work_store_only_the_delivery,
    claim_is_first_in_first_out,
    one_running_job_per_target,
    schema_rejects_a_second_running_job_for_a_target,
    expired_lease_returns_the_job_for_another_owner,
    heartbeat_keeps_the_lease,
    expired_lease_on_the_last_attempt_is_dead,
    failed_with_retry_backs_off_doubling_then_dead,
    final_outcomes,
    release_requeues_without_counting_the_attempt,
    phase_is_recorded_while_held,
    concurrent_records_all_commit,
    a_failing_write_does_not_fail_its_batch,
    counts_every_state,
    ready_after_open,
    jobs_of_one_target,
    a_question_is_kept_with_the_outcome,
    a_base_run_is_kept_replaced_and_pruned,
    a_delivery_body_reads_back_as_the_forge_sent_it,
);
on_both_backends!(two_stores: another_process_sees_what_was_acknowledged);

const LEASE: Duration = Duration::from_secs(60);

async fn record_then_redelivery_is_duplicate(store: Store) {
    let event = labeled("acme/widgets", 7);
    let first = store.record(delivery("d-1"), Some(&event), 3).await;
    let Ok(Recorded::New { job: Some(id) }) = first else {
        panic!("first delivery: {first:?}");
    };
    let again = store.record(delivery("d-1"), Some(&event), 3).await;
    assert!(matches!(again, Ok(Recorded::Duplicate)), "{again:?}");
    assert!(store.delivery_exists(Forge::GitHub, "d-1").await.unwrap());
    assert!(!store.delivery_exists(Forge::GitHub, "d-2").await.unwrap());

    let jobs = store.jobs().await.unwrap();
    assert_eq!(jobs.len(), 1);
    let job = store.job(id).await.unwrap().expect("the job");
    assert_eq!(job, jobs[0]);
    assert_eq!(job.state, JobState::Queued);
    assert_eq!(job.phase, "queued");
    assert_eq!(job.target.as_deref(), Some("github:acme/widgets#7"));
    assert_eq!(job.event, event);
    assert_eq!(
        (job.forge, job.delivery_id.as_str()),
        (Forge::GitHub, "d-1")
    );
    assert_eq!((job.attempts, job.max_attempts), (0, 3));
    assert_eq!(
        (job.lease_owner, job.lease_expires_at_ms, job.last_error),
        (None, None, None)
    );
    assert!(job.next_run_at_ms <= now_ms());
    assert_eq!(job.created_at_ms, job.updated_at_ms);
    assert_eq!(store.job(JobId(id.0 + 1000)).await.unwrap(), None);
}

async fn delivery_ids_are_per_forge(store: Store) {
    let event = labeled("acme/widgets", 7);
    enqueue(&store, "same-id", &event, 3).await;
    let gitlab = NewDelivery {
        forge: Forge::GitLab,
        ..delivery("same-id")
    };
    let recorded = store.record(gitlab, None, 3).await.unwrap();
    assert_eq!(recorded, Recorded::New { job: None });
    assert!(
        store
            .delivery_exists(Forge::GitLab, "same-id")
            .await
            .unwrap()
    );
}

async fn events_without_work_store_only_the_delivery(store: Store) {
    let ignored = store.record(delivery("ignored"), None, 3).await.unwrap();
    assert_eq!(ignored, Recorded::New { job: None });
    assert!(
        store
            .delivery_exists(Forge::GitHub, "ignored")
            .await
            .unwrap()
    );
    assert!(store.jobs().await.unwrap().is_empty());

    // A job without a target (an installation) runs alongside any other.
    let installation = Event::Installation {
        action: InstallationAction::Added,
        installation_id: 9,
        account: "acme".to_owned(),
        repos: vec![RepoName("acme/widgets".to_owned())],
    };
    let id = enqueue(&store, "installed", &installation, 0).await;
    let job = store.job(id).await.unwrap().expect("the job");
    assert_eq!(
        (job.target, job.max_attempts),
        (None, 1),
        "max_attempts is at least 1"
    );
}

async fn claim_is_first_in_first_out(store: Store) {
    let mut queued = Vec::new();
    for n in 1..=4 {
        queued.push(enqueue(&store, &format!("d-{n}"), &labeled("acme/widgets", n), 3).await);
    }
    let mut claimed = Vec::new();
    while let Some(job) = store.claim("runner-a", LEASE, Queue::Work).await.unwrap() {
        assert_eq!(job.state, JobState::Running);
        assert_eq!(job.attempts, 1);
        assert_eq!(job.lease_owner.as_deref(), Some("runner-a"));
        assert!(job.lease_expires_at_ms.unwrap() > now_ms() + 50_000);
        claimed.push(job.id);
    }
    assert_eq!(claimed, queued);
}

async fn one_running_job_per_target(store: Store) {
    let a1 = enqueue(&store, "a1", &labeled("acme/a", 1), 3).await;
    let a2 = enqueue(&store, "a2", &labeled("acme/a", 1), 3).await;
    let b1 = enqueue(&store, "b1", &labeled("acme/b", 1), 3).await;

    assert_eq!(claim_id(&store, "r1").await, Some(a1));
    assert_eq!(
        claim_id(&store, "r2").await,
        Some(b1),
        "another target is claimable"
    );
    assert_eq!(claim_id(&store, "r2").await, None, "a2 waits behind a1");

    store.complete(a1, "r1", Outcome::Succeeded).await.unwrap();
    assert_eq!(claim_id(&store, "r2").await, Some(a2));
}

async fn schema_rejects_a_second_running_job_for_a_target(store: Store) {
    let first = enqueue(&store, "a1", &labeled("acme/a", 1), 3).await;
    let second = enqueue(&store, "a2", &labeled("acme/a", 1), 3).await;
    assert_eq!(claim_id(&store, "r1").await, Some(first));
    let sneak = format!(
        "UPDATE jobs SET state = 'running', lease_owner = 'r2', lease_expires_at_ms = 1 \
         WHERE id = {}",
        second.0
    );
    let err = store
        .execute_sql(&sneak)
        .await
        .expect_err("the unique index");
    assert!(err.to_string().to_lowercase().contains("unique"), "{err}");
}

async fn expired_lease_returns_the_job_for_another_owner(store: Store) {
    let id = enqueue(&store, "d", &labeled("acme/a", 1), 3).await;
    let first = store
        .claim("crashed", Duration::from_millis(300), Queue::Work)
        .await
        .unwrap();
    assert_eq!(first.map(|job| job.id), Some(id));
    assert_eq!(
        claim_id(&store, "other").await,
        None,
        "the lease still holds"
    );

    tokio::time::sleep(Duration::from_millis(400)).await;
    let job = store
        .claim("other", LEASE, Queue::Work)
        .await
        .unwrap()
        .expect("the expired job");
    assert_eq!(job.id, id);
    assert_eq!(job.attempts, 2);
    assert_eq!(job.lease_owner.as_deref(), Some("other"));
    assert!(
        job.last_error.as_deref().unwrap_or("").contains("crashed"),
        "{job:?}"
    );

    assert!(!store.heartbeat(id, "crashed", LEASE).await.unwrap());
    assert!(!store.set_phase(id, "crashed", "cloning").await.unwrap());
    let late = store.complete(id, "crashed", Outcome::Succeeded).await;
    assert!(
        matches!(late, Err(StoreError::LeaseLost { .. })),
        "{late:?}"
    );
    let job = store.job(id).await.unwrap().expect("the job");
    assert_eq!(
        (job.state, job.lease_owner.as_deref()),
        (JobState::Running, Some("other"))
    );
}

async fn heartbeat_keeps_the_lease(store: Store) {
    let id = enqueue(&store, "d", &labeled("acme/a", 1), 3).await;
    let lease = Duration::from_millis(600);
    assert_eq!(
        store
            .claim("alive", lease, Queue::Work)
            .await
            .unwrap()
            .map(|j| j.id),
        Some(id)
    );
    for _ in 0..6 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(store.heartbeat(id, "alive", lease).await.unwrap());
        assert_eq!(claim_id(&store, "other").await, None);
    }
    let job = store.job(id).await.unwrap().expect("the job");
    assert_eq!((job.state, job.attempts), (JobState::Running, 1));
    assert_eq!(job.lease_owner.as_deref(), Some("alive"));
}

async fn expired_lease_on_the_last_attempt_is_dead(store: Store) {
    let id = enqueue(&store, "d", &labeled("acme/a", 1), 1).await;
    assert_eq!(
        store
            .claim("crashed", Duration::from_millis(30), Queue::Work)
            .await
            .unwrap()
            .map(|j| j.id),
        Some(id)
    );
    tokio::time::sleep(Duration::from_millis(80)).await;
    assert_eq!(claim_id(&store, "other").await, None);
    let job = store.job(id).await.unwrap().expect("the job");
    assert_eq!(job.state, JobState::Dead);
    assert_eq!(
        (job.lease_owner.as_deref(), job.lease_expires_at_ms),
        (None, None)
    );
    assert!(
        job.last_error.as_deref().unwrap_or("").contains("lease"),
        "{job:?}"
    );
}

async fn failed_with_retry_backs_off_doubling_then_dead(store: Store) {
    let base = Duration::from_millis(400);
    let store = store.with_backoff_base(base);
    let id = enqueue(&store, "d", &labeled("acme/a", 1), 3).await;
    for attempt in 1..=3u32 {
        let job = claim_when_due(&store, "r").await;
        assert_eq!((job.id, job.attempts), (id, attempt));
        let before = now_ms();
        let failed = Outcome::Failed {
            error: format!("boom {attempt}"),
            retry: true,
        };
        store.complete(id, "r", failed).await.unwrap();
        let job = store.job(id).await.unwrap().expect("the job");
        assert_eq!(job.last_error, Some(format!("boom {attempt}")));
        if attempt < 3 {
            assert_eq!(
                (job.state, job.phase.as_str()),
                (JobState::Queued, "queued")
            );
            let wait = millis(backoff_delay(base, attempt));
            assert_eq!(wait, 400 << (attempt - 1), "doubling");
            assert!(job.next_run_at_ms >= before + wait, "{job:?}");
            assert!(job.next_run_at_ms <= now_ms() + wait, "{job:?}");
            assert_eq!(claim_id(&store, "r").await, None, "not before its backoff");
        } else {
            assert_eq!(job.state, JobState::Dead);
            assert_eq!(job.lease_owner, None);
        }
    }
    assert_eq!(claim_id(&store, "r").await, None);
}

async fn final_outcomes(store: Store) {
    let cases = [
        (Outcome::Succeeded, JobState::Succeeded, None),
        (Outcome::Flagged, JobState::Flagged, None),
        (Outcome::Cancelled, JobState::Cancelled, None),
        (
            Outcome::Failed {
                error: "no such branch".to_owned(),
                retry: false,
            },
            JobState::Failed,
            Some("no such branch"),
        ),
    ];
    for (n, (outcome, state, error)) in cases.into_iter().enumerate() {
        let id = enqueue(&store, &format!("d-{n}"), &labeled("acme/a", 1), 3).await;
        assert_eq!(claim_id(&store, "r").await, Some(id));
        store.complete(id, "r", outcome).await.unwrap();
        let job = store.job(id).await.unwrap().expect("the job");
        assert_eq!((job.state, job.phase.as_str()), (state, state.as_str()));
        assert_eq!(job.last_error.as_deref(), error);
        assert_eq!((job.lease_owner, job.lease_expires_at_ms), (None, None));
        assert!(job.state.is_final());
        let twice = store.complete(id, "r", Outcome::Succeeded).await;
        assert!(
            matches!(twice, Err(StoreError::LeaseLost { .. })),
            "{twice:?}"
        );
    }
}

async fn release_requeues_without_counting_the_attempt(store: Store) {
    let id = enqueue(&store, "d", &labeled("acme/a", 1), 3).await;
    assert_eq!(claim_id(&store, "r").await, Some(id));
    store.release(id, "r").await.unwrap();
    let job = store.job(id).await.unwrap().expect("the job");
    assert_eq!(
        (job.state, job.attempts, job.lease_owner),
        (JobState::Queued, 0, None)
    );
    let again = store.release(id, "r").await;
    assert!(
        matches!(again, Err(StoreError::LeaseLost { .. })),
        "{again:?}"
    );
    let job = store
        .claim("r2", LEASE, Queue::Work)
        .await
        .unwrap()
        .expect("claimable again");
    assert_eq!((job.id, job.attempts), (id, 1));
}

async fn phase_is_recorded_while_held(store: Store) {
    let id = enqueue(&store, "d", &labeled("acme/a", 1), 3).await;
    assert_eq!(claim_id(&store, "r").await, Some(id));
    assert_eq!(store.job(id).await.unwrap().expect("job").phase, "claimed");
    assert!(store.set_phase(id, "r", "cloning").await.unwrap());
    assert!(
        !store
            .set_phase(id, "someone else", "pushing")
            .await
            .unwrap()
    );
    let job = store.job(id).await.unwrap().expect("the job");
    assert_eq!(job.phase, "cloning");
    assert!(job.updated_at_ms >= job.created_at_ms);
}

async fn concurrent_records_all_commit(store: Store) {
    let mut tasks = tokio::task::JoinSet::new();
    for n in 0..200u64 {
        let store = store.clone();
        tasks.spawn(async move {
            let event = labeled("acme/many", n);
            store
                .record(delivery(&format!("c-{n}")), Some(&event), 3)
                .await
        });
    }
    let mut ids = HashSet::new();
    while let Some(done) = tasks.join_next().await {
        match done.expect("task") {
            Ok(Recorded::New { job: Some(id) }) => assert!(ids.insert(id)),
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(ids.len(), 200);
    assert_eq!(store.jobs().await.unwrap().len(), 200);
}

/// PostgreSQL refuses text with a NUL byte (SQLite stores it): in a batch with good deliveries,
/// that one write fails alone.
async fn a_failing_write_does_not_fail_its_batch(store: Store) {
    let mut tasks = tokio::task::JoinSet::new();
    for n in 0..40u64 {
        let store = store.clone();
        tasks.spawn(async move {
            let mut delivery = delivery(&format!("b-{n}"));
            if n == 20 {
                delivery.event = "issues\0".to_owned();
            }
            (
                n,
                store.record(delivery, Some(&labeled("acme/b", n)), 3).await,
            )
        });
    }
    let postgres = store.url().starts_with("postgres");
    let mut recorded = 0;
    while let Some(done) = tasks.join_next().await {
        match done.expect("task") {
            (20, Err(StoreError::Database(_))) if postgres => {}
            (n, Ok(Recorded::New { job: Some(_) })) if n != 20 || !postgres => recorded += 1,
            (n, other) => panic!("delivery {n}: {other:?}"),
        }
    }
    assert_eq!(recorded, if postgres { 39 } else { 40 });
    assert_eq!(store.jobs().await.unwrap().len(), recorded);
}

async fn counts_every_state(store: Store) {
    let counts = store.job_counts().await.unwrap();
    assert_eq!(counts, JobState::ALL.map(|s| (s, 0)).to_vec());
    for n in 1..=3 {
        enqueue(&store, &format!("d-{n}"), &labeled("acme/a", n), 3).await;
    }
    let id = claim_id(&store, "r").await.expect("a job");
    store.complete(id, "r", Outcome::Flagged).await.unwrap();
    claim_id(&store, "r").await.expect("a job");
    let counts = store.job_counts().await.unwrap();
    let count = |state| counts.iter().find(|(s, _)| *s == state).map(|(_, n)| *n);
    assert_eq!(count(JobState::Queued), Some(1), "queue depth");
    assert_eq!(count(JobState::Running), Some(1));
    assert_eq!(count(JobState::Flagged), Some(1));
    assert_eq!(count(JobState::Dead), Some(0));
}

async fn ready_after_open(store: Store) {
    store.ready().await.unwrap();
}

/// `again` is opened on the same database after `store` (migrations already applied), as a
/// restarted or second process would.
async fn another_process_sees_what_was_acknowledged(store: Store, again: Store) {
    let id = enqueue(&store, "d", &labeled("acme/a", 1), 3).await;
    again.ready().await.unwrap();
    assert_eq!(again.job(id).await.unwrap().map(|job| job.id), Some(id));
    assert!(again.delivery_exists(Forge::GitHub, "d").await.unwrap());
    let duplicate = again.record(delivery("d"), None, 3).await.unwrap();
    assert_eq!(duplicate, Recorded::Duplicate);
}

async fn claim_id(store: &Store, owner: &str) -> Option<JobId> {
    store
        .claim(owner, LEASE, Queue::Work)
        .await
        .unwrap()
        .map(|job| job.id)
}

/// Claims, waiting out a backoff (up to ten seconds).
async fn claim_when_due(store: &Store, owner: &str) -> Job {
    for _ in 0..500 {
        if let Some(job) = store.claim(owner, LEASE, Queue::Work).await.unwrap() {
            return job;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("no job became claimable");
}

// Not on a backend: URLs, errors, the backoff schedule.

#[tokio::test]
async fn sqlite_file_and_its_directory_are_created() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nested/data/forgeward.db");
    let store = Store::open(&format!("sqlite://{}", path.display()))
        .await
        .unwrap();
    store.ready().await.unwrap();
    assert!(path.exists());
}

#[tokio::test]
async fn unsupported_urls_are_refused() {
    for url in [
        "mysql://localhost/x",
        "sqlite::memory:",
        "forgeward.db",
        "sqlite:///tmp/forgeward-never.db?vfs=unix-dotfile",
    ] {
        let err = Store::open(url).await.expect_err(url);
        assert!(matches!(err, StoreError::Url { .. }), "{url}: {err}");
    }
}

/// A refused login fails at once (a refused connection is retried for the acquire timeout), and
/// its error names the server without the password, which the server's own message does not
/// repeat either.
#[tokio::test]
async fn postgres_login_failure_hides_the_password() {
    let server = super::testing::postgres_server_url();
    let (_, rest) = server.split_once("://").expect("a URL");
    let host_and_database = rest.rsplit_once('@').map_or(rest, |(_, host)| host);
    let url = format!("postgres://forgeward_nobody:s3cr%40t-pw@{host_and_database}");
    let err = Store::open(&url).await.expect_err("no such role");
    let shown = err.to_string();
    assert!(matches!(err, StoreError::Open { .. }), "{shown}");
    assert!(
        shown.contains("postgres://forgeward_nobody:***@"),
        "{shown}"
    );
    assert!(!shown.contains("s3cr") && !shown.contains('\n'), "{shown}");
}

#[test]
fn urls_are_shown_without_passwords() {
    assert_eq!(
        redact_url("postgres://bot:hunter2@db:5432/fw?sslmode=require"),
        "postgres://bot:***@db:5432/fw?sslmode=require"
    );
    assert_eq!(
        redact_url("postgres://db/fw?user=bot&password=hunter2"),
        "postgres://db/fw?user=bot&password=***"
    );
    assert_eq!(redact_url("postgres://bot@db/fw"), "postgres://bot@db/fw");
    assert_eq!(redact_url("sqlite://data/fw.db"), "sqlite://data/fw.db");
    assert_eq!(
        redact(
            "password authentication failed:\n p@ss",
            "postgres://u:p%40ss@h/d"
        ),
        "password authentication failed: ***"
    );
}

#[test]
fn backoff_doubles_from_the_base_up_to_ten_minutes() {
    let base = DEFAULT_BACKOFF_BASE;
    let waits: Vec<u64> = (1..=8).map(|n| backoff_delay(base, n).as_secs()).collect();
    assert_eq!(waits, [10, 20, 40, 80, 160, 320, 600, 600]);
    assert_eq!(backoff_delay(base, u32::MAX), MAX_BACKOFF);
    assert_eq!(
        backoff_delay(Duration::from_millis(5), 3),
        Duration::from_millis(20)
    );
}

#[test]
fn job_states_round_trip_their_names() {
    for state in JobState::ALL {
        assert_eq!(state.as_str().parse::<JobState>(), Ok(state));
    }
    assert!("paused".parse::<JobState>().is_err());
}

async fn jobs_of_one_target(store: Store) {
    let a1 = enqueue(&store, "t-1", &labeled("acme/widgets", 7), 3).await;
    let _other = enqueue(&store, "t-2", &labeled("acme/widgets", 8), 3).await;
    let a2 = enqueue(&store, "t-3", &labeled("acme/widgets", 7), 3).await;
    let jobs = store
        .jobs_for_target("github:acme/widgets#7")
        .await
        .unwrap();
    let ids: Vec<JobId> = jobs.iter().map(|j| j.id).collect();
    assert_eq!(ids, [a1, a2]);
    assert!(
        store
            .jobs_for_target("github:acme/widgets#9")
            .await
            .unwrap()
            .is_empty()
    );
}

async fn a_question_is_kept_with_the_outcome(store: Store) {
    let asked = enqueue(&store, "q-1", &labeled("acme/widgets", 7), 3).await;
    assert_eq!(claim_id(&store, "r").await, Some(asked));
    let question = "The test expects `add(1, 2) == 4`: is that right? ✋".to_owned();
    let outcome = Outcome::Question {
        question: question.clone(),
    };
    store.complete(asked, "r", outcome).await.unwrap();
    let job = store.job(asked).await.unwrap().expect("the job");
    assert_eq!(job.state, JobState::Succeeded);
    assert_eq!(job.question.as_deref(), Some(question.as_str()));
    assert_eq!(job.last_error, None);

    // The next job of the target asks nothing until it ends that way.
    let next = enqueue(&store, "q-2", &labeled("acme/widgets", 7), 3).await;
    assert_eq!(claim_id(&store, "r").await, Some(next));
    store.complete(next, "r", Outcome::Succeeded).await.unwrap();
    let jobs = store
        .jobs_for_target("github:acme/widgets#7")
        .await
        .unwrap();
    let questions: Vec<Option<&str>> = jobs.iter().map(|j| j.question.as_deref()).collect();
    assert_eq!(questions, [Some(question.as_str()), None]);
}

async fn a_base_run_is_kept_replaced_and_pruned(store: Store) {
    assert_eq!(store.base_run("k1").await.unwrap(), None);
    store
        .put_base_run(
            "k1",
            r#"{"tests":[]}"#.to_owned(),
            Duration::from_millis(1500),
        )
        .await
        .unwrap();
    let kept = store.base_run("k1").await.unwrap();
    assert_eq!(
        kept,
        Some((r#"{"tests":[]}"#.to_owned(), Duration::from_millis(1500)))
    );
    // Written again (a run after the first was lost): replaced, not doubled.
    store
        .put_base_run("k1", "{}".to_owned(), Duration::from_millis(7))
        .await
        .unwrap();
    assert_eq!(
        store.base_run("k1").await.unwrap(),
        Some(("{}".to_owned(), Duration::from_millis(7)))
    );
    assert_eq!(store.base_run("k2").await.unwrap(), None);
    // A row older than the 30 days kept goes when the next one is written.
    store
        .execute_sql("UPDATE base_runs SET created_at_ms = 0 WHERE key = 'k1'")
        .await
        .unwrap();
    store
        .put_base_run("k2", "{}".to_owned(), Duration::ZERO)
        .await
        .unwrap();
    assert_eq!(store.base_run("k1").await.unwrap(), None);
    assert!(store.base_run("k2").await.unwrap().is_some());
}

/// The body is kept compressed (src/store/body.rs) and read back whole; a row written before
/// bodies were compressed (`identity`) reads as it is.
async fn a_delivery_body_reads_back_as_the_forge_sent_it(store: Store) {
    let body = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/webhooks/github/issues.labeled.json"
    ))
    .unwrap();
    let mut big = delivery("big");
    big.body = body.clone();
    store.record(big, None, 3).await.unwrap();
    store.record(delivery("small"), None, 3).await.unwrap();
    assert_eq!(
        store.delivery_body(Forge::GitHub, "big").await.unwrap(),
        Some(body.clone())
    );
    assert_eq!(
        store.delivery_body(Forge::GitHub, "small").await.unwrap(),
        Some(br#"{"action":"labeled"}"#.to_vec())
    );
    assert_eq!(
        store.delivery_body(Forge::GitLab, "big").await.unwrap(),
        None
    );
    // What the database holds for the large one is a fraction of it.
    let smaller = store
        .execute_sql(&format!(
            "UPDATE deliveries SET received_at_ms = received_at_ms \
             WHERE delivery_id = 'big' AND body_encoding = 'zstd' AND length(body) * 4 < {}",
            body.len()
        ))
        .await
        .unwrap();
    assert_eq!(smaller, 1);
    // An older row, kept as it came (a blob literal in SQLite's words, then PostgreSQL's).
    let insert = |blob: &str| {
        format!(
            "INSERT INTO deliveries (forge, delivery_id, event, headers, body, received_at_ms) \
             VALUES ('github', 'old', 'issues', '{{}}', {blob}, 0)"
        )
    };
    if store.execute_sql(&insert("X'7B7D'")).await.is_err() {
        store
            .execute_sql(&insert("decode('7b7d', 'hex')"))
            .await
            .unwrap();
    }
    assert_eq!(
        store.delivery_body(Forge::GitHub, "old").await.unwrap(),
        Some(b"{}".to_vec())
    );
}
