//! Prometheus metrics: counters and histograms kept in memory, rendered in the text exposition
//! format at `GET /metrics`. Gauges that live in the store (jobs by state, queue depth) are read
//! at scrape time and handed to [`Metrics::render`].

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::Mutex;

/// Every metric the bot exports, with its help text. A name not listed here is a bug.
const HELP: &[(&str, &str, &str)] = &[
    (
        "forgeward_webhook_deliveries_total",
        "counter",
        "Webhook deliveries by forge, event and outcome (accepted, duplicate, ignored, rejected).",
    ),
    (
        "forgeward_webhook_rejections_total",
        "counter",
        "Webhook deliveries refused, by forge and reason.",
    ),
    (
        "forgeward_webhook_ack_seconds",
        "histogram",
        "Time from a delivery's arrival to its durable acknowledgement.",
    ),
    ("forgeward_jobs", "gauge", "Jobs by state."),
    ("forgeward_queue_depth", "gauge", "Jobs waiting to run."),
    (
        "forgeward_job_duration_seconds",
        "histogram",
        "Time a job's attempt ran, by outcome.",
    ),
    (
        "forgeward_job_phase_duration_seconds",
        "histogram",
        "Time spent in each phase of a job.",
    ),
    (
        "forgeward_connections_open",
        "gauge",
        "HTTP connections open now.",
    ),
    (
        "forgeward_connections_refused_total",
        "counter",
        "HTTP connections refused or closed early, by reason (cap: a newcomer over server.max_connections with every connection in a request; evicted: a connection not in a request closed to make room at the cap; accept: the accept failed).",
    ),
    (
        "forgeward_connections_timed_out_total",
        "counter",
        "HTTP connections closed at a deadline, by phase (head, body, idle).",
    ),
    (
        "forgeward_requests_shed_total",
        "counter",
        "Deliveries answered 503 because the store's writer could not keep up.",
    ),
];

/// Upper bounds, in seconds: from a fast acknowledgement to a long worker run.
const BUCKETS: &[f64] = &[
    0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0, 900.0,
    1800.0, 3600.0,
];

type Labels = Vec<(&'static str, String)>;

#[derive(Default)]
struct Histogram {
    /// Cumulative count per bucket of [`BUCKETS`].
    buckets: Vec<u64>,
    sum: f64,
    count: u64,
}

#[derive(Default)]
struct Inner {
    counters: BTreeMap<(&'static str, Labels), u64>,
    histograms: BTreeMap<(&'static str, Labels), Histogram>,
}

/// A gauge read when the metrics are scraped, from whatever already knows its value.
type Source = Box<dyn Fn() -> f64 + Send + Sync>;

#[derive(Default)]
pub struct Metrics {
    inner: Mutex<Inner>,
    sources: Mutex<Vec<(&'static str, Source)>>,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Metrics")
    }
}

fn labels(pairs: &[(&'static str, &str)]) -> Labels {
    pairs.iter().map(|(k, v)| (*k, (*v).to_owned())).collect()
}

impl Metrics {
    pub fn inc(&self, name: &'static str, pairs: &[(&'static str, &str)]) {
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        *inner.counters.entry((name, labels(pairs))).or_default() += 1;
    }

    pub fn observe(&self, name: &'static str, pairs: &[(&'static str, &str)], seconds: f64) {
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let h = inner.histograms.entry((name, labels(pairs))).or_default();
        if h.buckets.is_empty() {
            h.buckets = vec![0; BUCKETS.len()];
        }
        for (i, bound) in BUCKETS.iter().enumerate() {
            if seconds <= *bound {
                h.buckets[i] += 1;
            }
        }
        h.sum += seconds;
        h.count += 1;
    }

    /// Reads the gauge `name` from `read` at every scrape (the connections open, from the
    /// receiver's own count).
    pub fn gauge_source(&self, name: &'static str, read: impl Fn() -> f64 + Send + Sync + 'static) {
        self.sources
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push((name, Box::new(read)));
    }

    /// A counter's value (for tests and logs).
    pub fn counter(&self, name: &str, pairs: &[(&'static str, &str)]) -> u64 {
        let inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        inner
            .counters
            .get(&(
                HELP.iter().map(|h| h.0).find(|n| *n == name).unwrap_or(""),
                labels(pairs),
            ))
            .copied()
            .unwrap_or(0)
    }

    /// The text exposition format, with `gauges` read from elsewhere at scrape time.
    pub fn render(&self, gauges: &[(&'static str, Labels, f64)]) -> String {
        let sources: Vec<(&'static str, f64)> = self
            .sources
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .map(|(name, read)| (*name, read()))
            .collect();
        let inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let mut out = String::new();
        for (name, kind, help) in HELP {
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
            for ((n, l), v) in &inner.counters {
                if n == name {
                    let _ = writeln!(out, "{name}{} {v}", render_labels(l, None));
                }
            }
            for (n, l, v) in gauges {
                if n == name {
                    let _ = writeln!(out, "{name}{} {v}", render_labels(l, None));
                }
            }
            for (n, v) in &sources {
                if n == name {
                    let _ = writeln!(out, "{name} {v}");
                }
            }
            for ((n, l), h) in &inner.histograms {
                if n != name {
                    continue;
                }
                for (bound, count) in BUCKETS.iter().zip(&h.buckets) {
                    let le = bound.to_string();
                    let _ = writeln!(out, "{name}_bucket{} {count}", render_labels(l, Some(&le)));
                }
                let _ = writeln!(
                    out,
                    "{name}_bucket{} {}",
                    render_labels(l, Some("+Inf")),
                    h.count
                );
                let _ = writeln!(out, "{name}_sum{} {}", render_labels(l, None), h.sum);
                let _ = writeln!(out, "{name}_count{} {}", render_labels(l, None), h.count);
            }
        }
        out
    }
}

fn render_labels(labels: &Labels, le: Option<&str>) -> String {
    let mut parts: Vec<String> = labels
        .iter()
        .map(|(k, v)| format!("{k}=\"{}\"", escape(v)))
        .collect();
    if let Some(le) = le {
        parts.push(format!("le=\"{le}\""));
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!("{{{}}}", parts.join(","))
    }
}

/// Label values escape `\`, `"` and newlines.
fn escape(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_the_text_format() {
        let m = Metrics::default();
        m.inc(
            "forgeward_webhook_deliveries_total",
            &[
                ("forge", "github"),
                ("event", "issues"),
                ("outcome", "accepted"),
            ],
        );
        m.inc(
            "forgeward_webhook_deliveries_total",
            &[
                ("forge", "github"),
                ("event", "issues"),
                ("outcome", "accepted"),
            ],
        );
        m.observe("forgeward_webhook_ack_seconds", &[], 0.003);
        let text = m.render(&[
            ("forgeward_queue_depth", vec![], 4.0),
            ("forgeward_jobs", vec![("state", "queued".to_owned())], 4.0),
        ]);
        assert!(text.contains("forgeward_webhook_deliveries_total{forge=\"github\",event=\"issues\",outcome=\"accepted\"} 2\n"), "{text}");
        assert!(
            text.contains("forgeward_webhook_ack_seconds_bucket{le=\"0.001\"} 0\n"),
            "{text}"
        );
        assert!(
            text.contains("forgeward_webhook_ack_seconds_bucket{le=\"0.005\"} 1\n"),
            "{text}"
        );
        assert!(
            text.contains("forgeward_webhook_ack_seconds_count 1\n"),
            "{text}"
        );
        assert!(text.contains("forgeward_queue_depth 4\n"), "{text}");
        assert!(
            text.contains("forgeward_jobs{state=\"queued\"} 4\n"),
            "{text}"
        );
        assert!(
            text.contains("# TYPE forgeward_job_duration_seconds histogram\n"),
            "{text}"
        );
        assert_eq!(
            m.counter(
                "forgeward_webhook_deliveries_total",
                &[
                    ("forge", "github"),
                    ("event", "issues"),
                    ("outcome", "accepted")
                ]
            ),
            2
        );
    }

    #[test]
    fn label_values_are_escaped() {
        assert_eq!(escape("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
    }
}
