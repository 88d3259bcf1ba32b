//! The rules engine: rule packs are YAML data (`pack.rs` is their format),
//! compiled once (`load.rs`, `expr.rs`) and run over a log's events
//! (`engine.rs`).

pub mod budget;
pub mod engine;
pub mod expr;
pub mod load;
pub mod pack;
pub mod plain;
mod tally;
mod walk;
pub mod watchdog;

pub use engine::{check_bytes, check_file, check_file_observed, LogCheck, Observer, Verdict};
pub use load::{available_rulesets, available_versions, log_format, Ruleset};
