//! Everything the bot hears from and says to a forge. Forge JSON stays in here: the rest of
//! the code sees [`Event`]s and newtypes.

pub mod api;
pub mod event;
pub mod forgejo;
pub mod github;
pub mod gitlab;
pub mod http;
pub mod webhook;

#[cfg(test)]
mod test_server;

pub use api::{ForgeApi, ForgeError, ForgeErrorKind, ForgeResult};
pub use event::{Actor, CommitSha, Event, Forge, Number, Repo, RepoName, Thread};
