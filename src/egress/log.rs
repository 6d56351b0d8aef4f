//! What the gateway tells the job log: one [`Connection`] per connection the worker made (when
//! it ends) and per refused request (at once), handed to the caller's [`EgressLog`], and the
//! running [`Totals`] for the job's summary line.
//!
//! Nothing here ever holds a secret's value or a header's: a line names hosts, addresses,
//! counts, the variable a secret came from and the header it went into.

use std::collections::BTreeSet;
use std::fmt;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// Where the caller wants the gateway's lines: the job log.
pub trait EgressLog: Send + Sync {
    fn connection(&self, event: &Connection);
}

/// A sink that keeps nothing: for a gateway whose verdicts only its [`Totals`] are read of.
pub struct Discard;

impl EgressLog for Discard {
    fn connection(&self, _: &Connection) {}
}

/// How the worker asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Method {
    /// `CONNECT host:port`: a tunnel, or TLS ended at the gateway for a secret host.
    Connect,
    /// A plain-HTTP request (`GET http://host/…`; for an upstream that served several, the
    /// first one's), or one request inside a secret host's tunnel; the method as sent, empty
    /// when the head could not be read.
    Http(String),
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Method::Connect => f.write_str("CONNECT"),
            // A head too broken to name its method.
            Method::Http(verb) if verb.is_empty() => f.write_str("request"),
            Method::Http(verb) => f.write_str(verb),
        }
    }
}

/// What became of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Allowed,
    /// The policy said no (or the request was malformed): why, in one line.
    Refused(String),
    /// Allowed, but the real host could not be reached or its TLS could not be verified, or the
    /// worker's side of the handshake failed: why, in one line.
    Failed(String),
}

/// A secret the gateway put into requests: its variable and the header it went into.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Injected {
    pub env: String,
    /// `x-api-key`, or `authorization (Bearer)`.
    pub header: String,
}

/// One line of the job log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Connection {
    pub method: Method,
    /// The host asked for (a name, or an address; IPv6 in brackets); empty when the request
    /// could not be read far enough to tell.
    pub host: String,
    pub port: u16,
    /// The address connected to, once connected.
    pub address: Option<SocketAddr>,
    pub outcome: Outcome,
    /// Bytes the worker sent over this connection (for a secret host, decrypted).
    pub sent: u64,
    /// Bytes the worker received.
    pub received: u64,
    /// HTTP requests forwarded (0 for an opaque tunnel).
    pub requests: u32,
    /// Secrets injected, each once.
    pub injected: Vec<Injected>,
}

impl fmt::Display for Connection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.host.is_empty() {
            write!(f, "egress: request")?;
        } else {
            write!(f, "egress: {} {}:{}", self.method, self.host, self.port)?;
        }
        match &self.outcome {
            Outcome::Allowed => {
                f.write_str(" allowed")?;
                if let Some(addr) = self.address {
                    write!(f, " ({addr})")?;
                }
                write!(
                    f,
                    " sent {} received {}",
                    Size(self.sent),
                    Size(self.received)
                )?;
                match self.requests {
                    0 => {}
                    1 => f.write_str(", 1 request")?,
                    n => write!(f, ", {n} requests")?,
                }
                for i in &self.injected {
                    write!(f, ", {} from {}", i.header, i.env)?;
                }
                Ok(())
            }
            Outcome::Refused(why) | Outcome::Failed(why) => {
                let word = match self.outcome {
                    Outcome::Refused(_) => "refused",
                    _ => "failed",
                };
                write!(f, " {word}: {why}")
            }
        }
    }
}

/// A byte count for people: `517 B`, `1.2 KiB`, `30.4 MiB`.
pub struct Size(pub u64);

impl fmt::Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
        if self.0 < 1024 {
            return write!(f, "{} B", self.0);
        }
        let mut value = self.0 as f64 / 1024.0;
        let mut unit = 0;
        while value >= 1024.0 && unit + 1 < UNITS.len() {
            value /= 1024.0;
            unit += 1;
        }
        write!(f, "{value:.1} {}", UNITS[unit])
    }
}

/// The job's egress in all, for its summary line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Totals {
    /// Connections (and plain-HTTP upstreams) allowed.
    pub allowed: u64,
    /// Connections and requests refused by the policy or as malformed.
    pub refused: u64,
    /// Allowed but not completed: the host unreachable, its certificate not trusted.
    pub failed: u64,
    pub sent: u64,
    pub received: u64,
    /// Each `host:port` connected to.
    pub reached: BTreeSet<String>,
}

impl fmt::Display for Totals {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "egress: {} allowed, {} refused, {} failed; sent {} received {}",
            self.allowed,
            self.refused,
            self.failed,
            Size(self.sent),
            Size(self.received)
        )?;
        if !self.reached.is_empty() {
            let hosts: Vec<&str> = self.reached.iter().map(String::as_str).collect();
            write!(f, "; reached {}", hosts.join(", "))?;
        }
        Ok(())
    }
}

/// Where the gateway's connections report: the caller's sink and the totals.
pub(crate) struct Ledger {
    sink: Arc<dyn EgressLog>,
    totals: Mutex<Totals>,
}

impl Ledger {
    pub(crate) fn new(sink: Arc<dyn EgressLog>) -> Ledger {
        Ledger {
            sink,
            totals: Mutex::new(Totals::default()),
        }
    }

    pub(crate) fn totals(&self) -> Totals {
        self.lock().clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Totals> {
        self.totals.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(crate) fn record(&self, event: &Connection) {
        {
            let mut totals = self.lock();
            match event.outcome {
                Outcome::Allowed => {
                    totals.allowed += 1;
                    if event.address.is_some() {
                        totals
                            .reached
                            .insert(format!("{}:{}", event.host, event.port));
                    }
                }
                Outcome::Refused(_) => totals.refused += 1,
                Outcome::Failed(_) => totals.failed += 1,
            }
            totals.sent += event.sent;
            totals.received += event.received;
        }
        self.sink.connection(event);
    }
}

/// Bytes through one client connection, counted where they cross its socket (or its TLS, for
/// a secret host), shared by the entries that report them.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub(crate) sent: AtomicU64,
    pub(crate) received: AtomicU64,
}

impl Counters {
    fn snapshot(&self) -> (u64, u64) {
        (
            self.sent.load(Ordering::Relaxed),
            self.received.load(Ordering::Relaxed),
        )
    }
}

/// One line in the making: reported to the ledger when dropped, which is when its connection
/// ends in any way (finished, failed, or the gateway shut down under it).
pub(crate) struct Entry {
    ledger: Arc<Ledger>,
    counters: Option<(Arc<Counters>, (u64, u64))>,
    pub(crate) event: Connection,
}

impl Entry {
    /// An entry counting `counters` from now on.
    pub(crate) fn new(
        ledger: &Arc<Ledger>,
        counters: &Arc<Counters>,
        method: Method,
        host: String,
        port: u16,
    ) -> Entry {
        Entry {
            ledger: ledger.clone(),
            counters: Some((counters.clone(), counters.snapshot())),
            event: Connection {
                method,
                host,
                port,
                address: None,
                outcome: Outcome::Allowed,
                sent: 0,
                received: 0,
                requests: 0,
                injected: Vec::new(),
            },
        }
    }

    /// Reports one request's refusal or failure at once, with no bytes counted.
    pub(crate) fn report(
        ledger: &Arc<Ledger>,
        method: Method,
        host: String,
        port: u16,
        outcome: Outcome,
    ) {
        let mut entry = Entry {
            ledger: ledger.clone(),
            counters: None,
            event: Connection {
                method,
                host,
                port,
                address: None,
                outcome,
                sent: 0,
                received: 0,
                requests: 0,
                injected: Vec::new(),
            },
        };
        entry.finish();
    }

    pub(crate) fn refuse(&mut self, why: impl Into<String>) {
        self.event.outcome = Outcome::Refused(why.into());
    }

    pub(crate) fn fail(&mut self, why: impl Into<String>) {
        self.event.outcome = Outcome::Failed(why.into());
    }

    pub(crate) fn injected(&mut self, env: &str, header: String) {
        if !self.event.injected.iter().any(|i| i.env == env) {
            self.event.injected.push(Injected {
                env: env.to_owned(),
                header,
            });
        }
    }

    fn finish(&mut self) {
        if let Some((counters, (sent, received))) = &self.counters {
            let (now_sent, now_received) = counters.snapshot();
            self.event.sent = now_sent - sent;
            self.event.received = now_received - received;
        }
        self.ledger.record(&self.event);
    }
}

impl Drop for Entry {
    fn drop(&mut self) {
        if self.counters.is_some() {
            self.finish();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(outcome: Outcome) -> Connection {
        Connection {
            method: Method::Connect,
            host: "api.anthropic.com".into(),
            port: 443,
            address: Some("93.184.216.34:443".parse().unwrap()),
            outcome,
            sent: 1229,
            received: 31130,
            requests: 3,
            injected: vec![Injected {
                env: "ANTHROPIC_API_KEY".into(),
                header: "x-api-key".into(),
            }],
        }
    }

    #[test]
    fn lines_read_as_written_for_people() {
        assert_eq!(
            line(Outcome::Allowed).to_string(),
            "egress: CONNECT api.anthropic.com:443 allowed (93.184.216.34:443) sent 1.2 KiB \
             received 30.4 KiB, 3 requests, x-api-key from ANTHROPIC_API_KEY"
        );
        let refused = Connection {
            method: Method::Http("GET".into()),
            host: "169.254.169.254".into(),
            port: 80,
            address: None,
            outcome: Outcome::Refused("169.254.169.254 is the cloud metadata address".into()),
            sent: 0,
            received: 0,
            requests: 0,
            injected: vec![],
        };
        assert_eq!(
            refused.to_string(),
            "egress: GET 169.254.169.254:80 refused: 169.254.169.254 is the cloud metadata address"
        );
        assert_eq!(Size(517).to_string(), "517 B");
        let totals = Totals {
            allowed: 3,
            refused: 1,
            failed: 0,
            sent: 2048,
            received: 5 << 20,
            reached: [
                "pypi.example.com:443".to_owned(),
                "api.anthropic.com:443".to_owned(),
            ]
            .into(),
        };
        assert_eq!(
            totals.to_string(),
            "egress: 3 allowed, 1 refused, 0 failed; sent 2.0 KiB received 5.0 MiB; reached \
             api.anthropic.com:443, pypi.example.com:443"
        );
        assert_eq!(Size(3 << 20).to_string(), "3.0 MiB");
    }
}
