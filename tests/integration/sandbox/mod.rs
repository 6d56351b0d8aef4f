//! The sandbox backends: one conformance suite (`conformance`) every backend passes, invoked
//! once per backend, and what is particular to each backend beside it.

pub mod conformance;
pub mod harness;

mod bwrap;
mod docker;
