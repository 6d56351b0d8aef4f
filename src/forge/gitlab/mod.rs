//! GitLab: verifying and parsing webhook deliveries, and the REST v4 client the bot talks to a
//! GitLab with.

pub mod client;
pub mod transport;
pub mod webhook;

pub use crate::forge::http::{Retry, RetryPolicy};
pub use client::{Client, GitlabConfig};
