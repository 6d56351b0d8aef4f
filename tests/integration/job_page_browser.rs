//! The job page in a real headless Chromium, as a person on a phone sees it: opened from the
//! status comment's link while the worker runs, its phases advance and the worker's lines
//! arrive without the page being loaded again; once the job is flagged the page shows the
//! verdict and the flags, and a screenshot of it is kept (`target/test-artifacts/`, the path
//! printed). The page's strict policy leaves nothing to complain about in the console.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::job_page::{flagged, labelled, page_link, slow_saboteur};
use crate::webdriver::Browser;

/// A phone's width (CSS pixels), and tall enough for the flagged page to fit in one shot.
const WIDTH: u32 = 412;
const HEIGHT: u32 = 1400;

/// What the page shows, read in the page: the headline, each phase and whether it is the
/// current one, the log's lines, and whether the page is still the one first loaded.
const READ_PAGE: &str = r#"
const phases = Array.from(document.querySelectorAll('#phase-list li')).map(li => ({
  phase: li.getAttribute('data-phase'), current: li.classList.contains('current')
}));
const lines = Array.from(document.querySelectorAll('#log-lines .line')).map(l => l.textContent.trimEnd());
const flags = Array.from(document.querySelectorAll('ul.flags li a')).map(a => a.getAttribute('href'));
return {
  headline: (document.getElementById('state') || {}).textContent || '',
  phases, lines, flags,
  first_load: window.__firstLoad === true,
  overflow: document.documentElement.scrollWidth - document.documentElement.clientWidth,
};
"#;

fn artifacts() -> PathBuf {
    // CARGO_TARGET_TMPDIR is <target>/tmp: the artifacts go beside it.
    let tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let dir = tmp
        .parent()
        .map_or(tmp.clone(), |t| t.join("test-artifacts"));
    std::fs::create_dir_all(&dir).expect("the artifacts directory");
    dir
}

fn phase_names(page: &Value) -> Vec<String> {
    page["phases"]
        .as_array()
        .map(|p| {
            p.iter()
                .map(|p| p["phase"].as_str().unwrap_or("").to_owned())
                .collect()
        })
        .unwrap_or_default()
}

fn current_phase(page: &Value) -> Option<String> {
    page["phases"].as_array()?.iter().find_map(|p| {
        p["current"]
            .as_bool()
            .unwrap_or(false)
            .then(|| p["phase"].as_str().unwrap_or("").to_owned())
    })
}

fn lines(page: &Value) -> Vec<String> {
    page["lines"]
        .as_array()
        .map(|l| {
            l.iter()
                .map(|l| l.as_str().unwrap_or("").to_owned())
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread")]
async fn chromium_follows_a_running_job_then_shows_it_flagged() {
    // The browser first: it takes seconds to start on a busy machine, and the job does not wait.
    let browser = Browser::start(WIDTH, HEIGHT).await;
    let mut world = labelled(&slow_saboteur(12)).await;
    let link = page_link(&mut world).await;
    browser.goto(&link).await;
    // A mark on this load of the page: gone once the page is loaded again.
    browser
        .script("window.__firstLoad = true; return null;")
        .await;

    // While the worker runs: the phase it is in, and its lines as they come.
    let started = Instant::now();
    let mut currents = BTreeSet::new();
    let mut seen_lines = 0;
    let mut grew_live = 0;
    let mut running_shot = None;
    let last_live = loop {
        assert!(
            started.elapsed() < Duration::from_secs(150),
            "the page never showed the job flagged; the bot said:\n{}",
            world.bot.drain()
        );
        let page = browser.script(READ_PAGE).await;
        if !page["first_load"].as_bool().unwrap_or(false) {
            break page;
        }
        if let Some(current) = current_phase(&page) {
            currents.insert(current);
        }
        let shown = lines(&page);
        let ticks = shown.iter().filter(|l| l.starts_with("tick ")).count();
        if ticks > seen_lines {
            if seen_lines > 0 {
                grew_live += 1;
            }
            seen_lines = ticks;
        }
        if running_shot.is_none() && ticks >= 3 {
            assert_eq!(
                shown
                    .iter()
                    .find(|l| l.starts_with("tick 1"))
                    .map(String::as_str),
                Some("tick 1 <b>&amp;</b>"),
                "a line is text, as the worker printed it: {shown:?}"
            );
            assert!(
                page["headline"]
                    .as_str()
                    .unwrap_or("")
                    .contains("In progress"),
                "{page}"
            );
            running_shot = Some(browser.screenshot().await);
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert!(
        grew_live >= 2,
        "lines arrived while the page stayed loaded (seen {seen_lines}, grew {grew_live} times)"
    );
    assert!(currents.contains("working"), "{currents:?}");
    assert!(
        currents.len() >= 2,
        "the phases advanced on the page as it stayed loaded: {currents:?}"
    );
    let before_reload = phase_names(&last_live);
    assert!(!before_reload.is_empty(), "{last_live}");

    // Loaded again once the job ended: the verdict, every phase done, the flags linked.
    let page = crate::util::eventually("the flagged page", Duration::from_secs(30), async || {
        let page = browser.script(READ_PAGE).await;
        let headline = page["headline"].as_str().unwrap_or("").to_owned();
        if headline.contains("Flagged") {
            Ok(page)
        } else {
            Err(format!("{page}"))
        }
    })
    .await;
    assert_eq!(
        page["headline"].as_str(),
        Some("⚠️ Flagged — 2 review flags"),
        "{page}"
    );
    assert_eq!(current_phase(&page), None, "no phase is running: {page}");
    let names = phase_names(&page);
    assert_eq!(
        names.first().map(String::as_str),
        Some("cloning"),
        "{names:?}"
    );
    assert_eq!(
        names.last().map(String::as_str),
        Some("publishing"),
        "{names:?}"
    );
    let flags: Vec<String> = page["flags"]
        .as_array()
        .expect("flags")
        .iter()
        .map(|f| f.as_str().unwrap_or("").to_owned())
        .collect();
    assert_eq!(flags.len(), 2, "{page}");
    assert!(
        flags
            .iter()
            .all(|f| f.starts_with("https://github.example/acme/widgets/blob/")),
        "{flags:?}"
    );
    assert!(
        flags.iter().any(|f| f.ends_with("/tests/test_calc.py#L6")),
        "{flags:?}"
    );
    assert!(
        lines(&page).iter().any(|l| l == "all tests pass now"),
        "{page}"
    );
    assert!(
        page["overflow"].as_i64().unwrap_or(1) <= 0,
        "the page fits a phone's width: {page}"
    );
    let title = browser.text("#state").await;
    assert_eq!(title, "⚠️ Flagged — 2 review flags");

    let shot = browser.screenshot().await;
    assert!(shot.starts_with(b"\x89PNG"), "a PNG");
    let dir = artifacts();
    let path = dir.join("job-page-flagged.png");
    std::fs::write(&path, &shot).expect("writing the screenshot");
    println!("the flagged job's page: {}", path.display());
    if let Some(running) = running_shot {
        let path = dir.join("job-page-running.png");
        std::fs::write(&path, running).expect("writing the screenshot");
        println!("the running job's page: {}", path.display());
    }

    // Nothing the page does is refused by its own policy, and nothing failed.
    let console = browser.console().await;
    let complaints: Vec<&String> = console
        .iter()
        .filter(|l| {
            l.contains("Content Security Policy") || l.contains("SEVERE") || l.contains("Refused")
        })
        .collect();
    assert!(complaints.is_empty(), "the console: {console:#?}");
    browser.close().await;

    flagged(&mut world).await;
}
