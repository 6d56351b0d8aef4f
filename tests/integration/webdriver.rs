//! A real headless Chromium, driven over WebDriver (the W3C protocol, spoken over plain HTTP to
//! Debian's `chromedriver`): navigate, run a script in the page, take a screenshot, read the
//! browser's console.
//!
//! `tests/setup/chromium.sh` installs `chromium` and `chromium-driver` and exports
//! `FORGEWARD_TEST_CHROMEDRIVER` and `FORGEWARD_TEST_CHROMIUM`; a test that cannot find them
//! fails, saying so. chromedriver runs in a process group of its own, with the browser it
//! starts: closing the session quits the browser, and the group is killed however the test
//! ends (a panic included), so no browser outlives its test.

#![allow(dead_code)] // Each test takes what it needs.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::{Value, json};

/// The W3C key of an element reference in a WebDriver answer.
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

fn tool(var: &str, default: &str) -> PathBuf {
    let path = std::env::var(var).map_or_else(|_| PathBuf::from(default), PathBuf::from);
    assert!(
        path.is_file(),
        "{} is not there: the browser tests need Debian's chromium and chromium-driver; \
         run tests/setup/chromium.sh (it installs them and exports {var})",
        path.display()
    );
    path
}

/// A browser session: chromedriver, the Chromium it started, and a profile of its own.
pub struct Browser {
    driver: Child,
    base: String,
    session: String,
    client: reqwest::Client,
    _profile: tempfile::TempDir,
}

impl Browser {
    /// Chromium, headless, `width`×`height` CSS pixels (a phone's width, say).
    pub async fn start(width: u32, height: u32) -> Browser {
        let chromedriver = tool("FORGEWARD_TEST_CHROMEDRIVER", "/usr/bin/chromedriver");
        let chromium = tool("FORGEWARD_TEST_CHROMIUM", "/usr/bin/chromium");
        let profile = tempfile::tempdir().expect("a profile directory");
        let (driver, port) = start_driver(&chromedriver);
        let base = format!("http://127.0.0.1:{port}");
        let client = reqwest::Client::new();
        let capabilities = json!({
            "capabilities": {
                "alwaysMatch": {
                    "browserName": "chrome",
                    "goog:chromeOptions": {
                        "binary": chromium,
                        "args": [
                            "--headless=new",
                            // Chromium's own sandbox does not run as root.
                            "--no-sandbox",
                            "--disable-gpu",
                            "--disable-dev-shm-usage",
                            "--no-first-run",
                            "--hide-scrollbars",
                            format!("--user-data-dir={}", profile.path().display()),
                            format!("--window-size={width},{height}"),
                        ],
                    },
                    "goog:loggingPrefs": { "browser": "ALL" },
                }
            }
        });
        let mut browser = Browser {
            driver,
            base,
            session: String::new(),
            client,
            _profile: profile,
        };
        let answer = browser.call("POST", "/session", Some(capabilities)).await;
        browser.session = answer["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("no session from chromedriver: {answer}"))
            .to_owned();
        browser
    }

    async fn call(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        let url = format!("{}{path}", self.base);
        let request = match method {
            "GET" => self.client.get(&url),
            "DELETE" => self.client.delete(&url),
            _ => self
                .client
                .post(&url)
                .json(&body.unwrap_or_else(|| json!({}))),
        };
        let response = request
            .timeout(Duration::from_secs(60))
            .send()
            .await
            .unwrap_or_else(|e| panic!("chromedriver {method} {path}: {e}"));
        let status = response.status();
        let value: Value = response.json().await.expect("chromedriver answers JSON");
        assert!(
            status.is_success(),
            "chromedriver {method} {path}: {status} {value}"
        );
        value["value"].clone()
    }

    fn session_path(&self, rest: &str) -> String {
        format!("/session/{}{rest}", self.session)
    }

    pub async fn goto(&self, url: &str) {
        self.call(
            "POST",
            &self.session_path("/url"),
            Some(json!({ "url": url })),
        )
        .await;
    }

    /// Runs `script` (a function body; `return` gives the value) in the page.
    pub async fn script(&self, script: &str) -> Value {
        let body = json!({ "script": script, "args": [] });
        self.call("POST", &self.session_path("/execute/sync"), Some(body))
            .await
    }

    /// The text of the first element `selector` finds.
    pub async fn text(&self, selector: &str) -> String {
        let found = self
            .call(
                "POST",
                &self.session_path("/element"),
                Some(json!({ "using": "css selector", "value": selector })),
            )
            .await;
        let id = found[ELEMENT].as_str().expect("an element").to_owned();
        let text = self
            .call(
                "GET",
                &self.session_path(&format!("/element/{id}/text")),
                None,
            )
            .await;
        text.as_str().unwrap_or_default().to_owned()
    }

    /// A PNG of the viewport.
    pub async fn screenshot(&self) -> Vec<u8> {
        let value = self
            .call("GET", &self.session_path("/screenshot"), None)
            .await;
        base64::engine::general_purpose::STANDARD
            .decode(value.as_str().expect("base64"))
            .expect("a PNG")
    }

    /// What the page's console said since the last call (chromedriver's log of the browser).
    pub async fn console(&self) -> Vec<String> {
        let entries = self
            .call(
                "POST",
                &self.session_path("/se/log"),
                Some(json!({ "type": "browser" })),
            )
            .await;
        entries
            .as_array()
            .map(|entries| {
                entries
                    .iter()
                    .map(|e| format!("{} {}", e["level"], e["message"]))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Ends the session (the browser quits) and chromedriver, and checks that no process of
    /// this browser is left.
    pub async fn close(mut self) {
        if !self.session.is_empty() {
            let path = self.session_path("");
            self.call("DELETE", &path, None).await;
            self.session.clear();
        }
        let left = self.end();
        assert!(
            left.is_empty(),
            "browser processes outlived their process group and were killed: {left:?}"
        );
    }

    /// Ends chromedriver's process group (it holds every browser process chromedriver
    /// started), then kills anything still running with this session's profile; returns what
    /// had to be killed so.
    fn end(&mut self) -> Vec<i32> {
        let group = self.driver.id() as libc::pid_t;
        // SAFETY: a plain kill(2) of the group this test made.
        unsafe {
            libc::kill(-group, libc::SIGTERM);
        }
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline && !matches!(self.driver.try_wait(), Ok(Some(_))) {
            std::thread::sleep(Duration::from_millis(50));
        }
        // SAFETY: as above; whatever is left of the group.
        unsafe {
            libc::kill(-group, libc::SIGKILL);
        }
        let _ = self.driver.wait();
        let mut left = self.profile_processes();
        let deadline = Instant::now() + Duration::from_secs(5);
        while !left.is_empty() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(100));
            left = self.profile_processes();
        }
        for pid in &left {
            // SAFETY: a process running with this session's own profile directory.
            unsafe {
                libc::kill(*pid, libc::SIGKILL);
            }
        }
        left
    }

    /// The processes whose command line names this session's profile directory (the browser's
    /// and its helpers', crashpad's among them, which leaves the process group).
    fn profile_processes(&self) -> Vec<i32> {
        let needle = self._profile.path().display().to_string();
        let Ok(entries) = std::fs::read_dir("/proc") else {
            return Vec::new();
        };
        entries
            .flatten()
            .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
            .filter(|pid| {
                std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|cmdline| {
                    String::from_utf8_lossy(&cmdline)
                        .split('\0')
                        .any(|arg| arg.contains(&needle))
                })
            })
            .collect()
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        self.end();
    }
}

/// chromedriver on a free port of 127.0.0.1, in a process group of its own; once it says it
/// listens. What it prints after that is read and dropped, so it never blocks on a full pipe.
fn start_driver(chromedriver: &std::path::Path) -> (Child, u16) {
    use std::os::unix::process::CommandExt as _;
    for _ in 0..5 {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let mut child = Command::new(chromedriver)
            .arg(format!("--port={port}"))
            .process_group(0)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("starting {}: {e}", chromedriver.display()));
        let stdout = child.stdout.take().expect("piped");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        let deadline = Instant::now() + Duration::from_secs(20);
        let mut said = String::new();
        while let Ok(line) = rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            said.push_str(&line);
            said.push('\n');
            if line.contains("started successfully") {
                return (child, port);
            }
        }
        let _ = child.kill();
        let _ = child.wait();
        eprintln!("chromedriver did not start on port {port}:\n{said}");
    }
    panic!("chromedriver did not start");
}
