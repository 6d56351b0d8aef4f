//! The runs a job page shows and the list of jobs, on SQLite and on PostgreSQL.

use std::time::Duration;

use super::*;
use crate::forge::event::{Actor, Event, Number, Repo, RepoName, Thread};
use crate::store::testing::{enqueue, labeled, on_both_backends};
use crate::store::{Outcome, Queue, Store, now_ms};

on_both_backends!(
    a_run_is_recorded_while_its_lease_is_held,
    each_attempt_is_a_run_of_its_own,
    the_list_is_newest_first_filtered_and_paged,
);

const LEASE: Duration = Duration::from_secs(60);

fn flag(rule: &str, path: &str, line: Option<u32>) -> RunFlag {
    RunFlag {
        rule: rule.to_owned(),
        severity: "warning".to_owned(),
        path: path.to_owned(),
        line,
        message: format!("{rule} <here> & there"),
        snippet: line.map(|_| "@pytest.mark.skip".to_owned()),
    }
}

async fn a_run_is_recorded_while_its_lease_is_held(store: Store) {
    let id = enqueue(&store, "d-1", &labeled("acme/widgets", 7), 3).await;
    // Nobody holds it yet: nothing is written.
    let phase = RunEvent::Phase("cloning".to_owned());
    assert!(!store.record_run(id, "r", phase.clone()).await.unwrap());
    assert!(store.runs(id).await.unwrap().is_empty());

    let before = now_ms();
    let claimed = store
        .claim("r", LEASE, Queue::Work)
        .await
        .unwrap()
        .expect("a job");
    assert_eq!(claimed.id, id);
    for event in [
        phase,
        RunEvent::Target {
            title: "add() <subtracts>".to_owned(),
            branch: "forgeward/issue-7".to_owned(),
        },
        RunEvent::Base("b".repeat(40)),
        RunEvent::Phase("working".to_owned()),
        RunEvent::Checked {
            commit: "c".repeat(40),
            flags: vec![flag("skip-marker", "tests/test_calc.py", Some(6))],
            total: 1,
        },
        // Checked again (a second check of the same run): the flags are replaced, not added.
        RunEvent::Checked {
            commit: "d".repeat(40),
            flags: vec![
                flag("stubbed-import", "calc.py", Some(1)),
                flag("stray-backup", "calc.py.bak", None),
            ],
            total: 2,
        },
        RunEvent::Phase("publishing".to_owned()),
        RunEvent::Published {
            number: 12,
            url: "https://github.example/acme/widgets/pull/12".to_owned(),
        },
    ] {
        assert!(store.record_run(id, "r", event).await.unwrap());
    }
    // Another runner's word is not taken.
    let stranger = RunEvent::Phase("hijacked".to_owned());
    assert!(
        !store
            .record_run(id, "someone else", stranger)
            .await
            .unwrap()
    );

    let runs = store.runs(id).await.unwrap();
    assert_eq!(runs.len(), 1);
    let run = &runs[0];
    assert_eq!(run.attempt, 1);
    assert!(run.started_at_ms >= before, "{run:?}");
    assert_eq!(run.ended_at_ms, None, "still running");
    assert_eq!(run.title.as_deref(), Some("add() <subtracts>"));
    assert_eq!(run.branch.as_deref(), Some("forgeward/issue-7"));
    assert_eq!(run.base_sha, Some("b".repeat(40)));
    assert_eq!(run.commit_sha, Some("d".repeat(40)));
    assert_eq!(
        run.pull_request,
        Some((12, "https://github.example/acme/widgets/pull/12".to_owned()))
    );
    let phases: Vec<&str> = run.phases.iter().map(|p| p.phase.as_str()).collect();
    assert_eq!(phases, ["cloning", "working", "publishing"]);
    assert!(
        run.phases
            .windows(2)
            .all(|w| w[0].started_at_ms <= w[1].started_at_ms),
        "{run:?}"
    );
    assert_eq!(
        run.flags,
        [
            flag("stubbed-import", "calc.py", Some(1)),
            flag("stray-backup", "calc.py.bak", None)
        ]
    );

    store.complete(id, "r", Outcome::Flagged).await.unwrap();
    let run = store.runs(id).await.unwrap().remove(0);
    let ended = run.ended_at_ms.expect("the run ended with its outcome");
    let phases_started = run.phases.last().expect("phases").started_at_ms;
    assert!(ended >= phases_started, "{run:?}");
    // A finished job is no one's: nothing more is written.
    let late = RunEvent::Phase("late".to_owned());
    assert!(!store.record_run(id, "r", late).await.unwrap());
}

async fn each_attempt_is_a_run_of_its_own(store: Store) {
    let id = enqueue(&store, "d-1", &labeled("acme/widgets", 7), 3).await;
    let store = store.with_backoff_base(Duration::ZERO);
    store
        .claim("r", LEASE, Queue::Work)
        .await
        .unwrap()
        .expect("a job");
    let phase = |p: &str| RunEvent::Phase(p.to_owned());
    assert!(store.record_run(id, "r", phase("cloning")).await.unwrap());
    let failed = Outcome::Failed {
        error: "the forge said 502".to_owned(),
        retry: true,
    };
    store.complete(id, "r", failed).await.unwrap();
    store
        .claim("r2", LEASE, Queue::Work)
        .await
        .unwrap()
        .expect("the retry");
    assert!(store.record_run(id, "r2", phase("cloning")).await.unwrap());
    assert!(store.record_run(id, "r2", phase("working")).await.unwrap());

    let runs = store.runs(id).await.unwrap();
    let attempts: Vec<(u32, usize, bool)> = runs
        .iter()
        .map(|r| (r.attempt, r.phases.len(), r.ended_at_ms.is_some()))
        .collect();
    assert_eq!(attempts, [(1, 1, true), (2, 2, false)]);
}

fn comment(repo: &str, number: u64) -> Event {
    Event::Comment {
        repo: Repo {
            forge: Forge::GitLab,
            name: RepoName(repo.to_owned()),
            id: 3,
        },
        number: Number(number),
        thread: Thread::Issue,
        comment_id: 5,
        author: Actor {
            login: "bob".to_owned(),
            id: 4,
        },
        body: "/forgeward run".to_owned(),
    }
}

async fn the_list_is_newest_first_filtered_and_paged(store: Store) {
    let mut ids = Vec::new();
    for n in 1..=5 {
        ids.push(enqueue(&store, &format!("w-{n}"), &labeled("acme/widgets", n), 3).await);
    }
    let other = enqueue(&store, "g-1", &labeled("acme/gadgets", 1), 3).await;
    // A GitLab delivery, as its job's forge is the delivery's.
    let gitlab_delivery = crate::store::NewDelivery {
        forge: Forge::GitLab,
        ..crate::store::testing::delivery("l-1")
    };
    let recorded = store
        .record(gitlab_delivery, Some(&comment("acme/widgets", 9)), 3)
        .await;
    let Ok(crate::store::Recorded::New { job: Some(gitlab) }) = recorded else {
        panic!("the GitLab job: {recorded:?}");
    };
    // The oldest widget job runs and is flagged; its run is titled.
    let claimed = store
        .claim("r", LEASE, Queue::Work)
        .await
        .unwrap()
        .expect("a job");
    assert_eq!(claimed.id, ids[0]);
    let target = RunEvent::Target {
        title: "Fix <it>".to_owned(),
        branch: "forgeward/issue-1".to_owned(),
    };
    store.record_run(ids[0], "r", target).await.unwrap();
    store.complete(ids[0], "r", Outcome::Flagged).await.unwrap();

    let list = |filter: JobFilter| {
        let store = store.clone();
        async move {
            store
                .list_jobs(&filter)
                .await
                .unwrap()
                .into_iter()
                .map(|l| (l.job.id, l.title))
                .collect::<Vec<_>>()
        }
    };
    let all = list(JobFilter {
        limit: 50,
        ..JobFilter::default()
    })
    .await;
    let all_ids: Vec<JobId> = all.iter().map(|(id, _)| *id).collect();
    let mut expected: Vec<JobId> = ids.iter().copied().chain([other, gitlab]).collect();
    expected.sort_by(|a, b| b.cmp(a));
    assert_eq!(all_ids, expected, "newest first");
    assert_eq!(
        all.iter()
            .find(|(id, _)| *id == ids[0])
            .map(|(_, t)| t.clone()),
        Some(Some("Fix <it>".to_owned()))
    );

    let widgets = list(JobFilter {
        repo: Some("acme/widgets".to_owned()),
        limit: 50,
        ..JobFilter::default()
    })
    .await;
    assert_eq!(widgets.len(), 6, "both forges' acme/widgets: {widgets:?}");
    let github_widgets = list(JobFilter {
        repo: Some("acme/widgets".to_owned()),
        forge: Some(Forge::GitHub),
        limit: 50,
        ..JobFilter::default()
    })
    .await;
    assert_eq!(github_widgets.len(), 5);
    let flagged = list(JobFilter {
        state: Some(JobState::Flagged),
        limit: 50,
        ..JobFilter::default()
    })
    .await;
    assert_eq!(flagged, [(ids[0], Some("Fix <it>".to_owned()))]);
    let none = list(JobFilter {
        repo: Some("acme/%".to_owned()),
        limit: 50,
        ..JobFilter::default()
    })
    .await;
    assert!(none.is_empty(), "a repository is matched exactly: {none:?}");

    // Pages of two, each older than the last one seen.
    let mut seen = Vec::new();
    let mut before = None;
    loop {
        let page = list(JobFilter {
            repo: Some("acme/widgets".to_owned()),
            forge: Some(Forge::GitHub),
            before,
            limit: 2,
            ..JobFilter::default()
        })
        .await;
        let Some((last, _)) = page.last() else { break };
        assert!(page.len() <= 2);
        before = Some(*last);
        seen.extend(page.into_iter().map(|(id, _)| id));
    }
    let mut widgets_newest_first = ids.clone();
    widgets_newest_first.reverse();
    assert_eq!(seen, widgets_newest_first);

    let repos = store.job_repos().await.unwrap();
    assert_eq!(
        repos,
        [
            (Forge::GitHub, "acme/gadgets".to_owned(), 1),
            (Forge::GitHub, "acme/widgets".to_owned(), 5),
            (Forge::GitLab, "acme/widgets".to_owned(), 1),
        ]
    );
}

#[test]
fn the_list_statement_binds_only_the_filters_given() {
    let unfiltered = JobFilter {
        limit: 50,
        ..JobFilter::default()
    };
    let (sql, args) = list_sql(&unfiltered);
    assert!(
        sql.ends_with("WHERE 1 = 1 ORDER BY id DESC LIMIT $1"),
        "{sql}"
    );
    assert_eq!(args.len(), 1);
    let filter = JobFilter {
        repo: Some("acme/widgets".to_owned()),
        forge: Some(Forge::GitLab),
        state: Some(JobState::Flagged),
        before: Some(JobId(90)),
        limit: 5000,
    };
    let (sql, args) = list_sql(&filter);
    assert!(
        sql.ends_with(
            "WHERE 1 = 1 AND repo = $1 AND forge = $2 AND state = $3 AND id < $4 \
             ORDER BY id DESC LIMIT $5"
        ),
        "{sql}"
    );
    assert!(matches!(args[4], Arg::Int(200)), "the limit is capped");
}
