//! GitHub: verifying and parsing webhook deliveries, the App's identity (its JWT) and its
//! installation tokens, the REST client behind `ForgeApi` with its retry and rate-limit layer,
//! the sweep that has GitHub redeliver the deliveries the bot missed, and what the bot needs of
//! a GitHub App (`manifest`).

pub mod app;
pub mod checks;
pub mod client;
pub mod deliveries;
mod graphql;
pub mod http;
pub mod manifest;
mod models;
pub mod permissions;
mod runs;
pub mod tokens;
pub mod webhook;

pub use client::{Client, GithubAuth, GithubConfig, TokenUser};
pub use runs::FlaggedConclusion;
