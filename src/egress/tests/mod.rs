//! The gateway end to end over real loopback sockets and real TLS: upstreams served by hyper
//! (plain HTTP, and HTTPS with a test CA of their own that the gateway is given as an extra
//! root), clients that speak `CONNECT` and then hyper's HTTP/1.1 client over tokio-rustls
//! trusting the job's CA, and raw bytes where a client library would not misbehave enough.
//!
//! Every test reads the gateway's log lines and checks, on each of them, that no secret's real
//! value is there.

mod harness;

mod connect;
mod malformed;
mod plain;
mod secrets;
