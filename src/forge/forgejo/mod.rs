//! Forgejo and Gitea (Codeberg and self-hosted instances): verifying and parsing webhook
//! deliveries, and the REST v1 client the bot talks to an instance with. Both speak one API and
//! one webhook dialect (Forgejo's headers are `X-Forgejo-*`, Gitea's `X-Gitea-*`).

pub mod client;
mod models;
mod transport;
pub mod webhook;

pub use crate::forge::http::{Retry, RetryPolicy};
pub use client::{Client, ForgejoConfig};
