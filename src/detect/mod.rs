//! The sabotage detector: changes in, flags out.
//!
//! It does no IO beyond reading the file contents it is handed, and knows nothing of forges or
//! of git: callers (the CLI, the bot) turn revisions into [`Change`]s and contents.

pub mod change;
pub mod lang;
pub mod lexer;
pub mod manifest;

pub use change::{Change, ChangeKind, RepoPath};
pub use lang::Language;
