//! mlaudit: checks MLPerf-style training submissions.
//!
//! The pipeline, one folder per stage:
//!
//! ```text
//! paths ─► discover ─► mllog ─► check ─► aggregate ─► report
//!          (tree)      (events) (findings per log) (verdicts,  (text, json, sarif,
//!                                                   stats)      junit, github, html)
//! ```
//!
//! - [`discover`]: what the user named becomes a tree of packages, systems,
//!   benchmark folders and logs (and what a git change touches);
//! - [`mllog`]: one streaming pass over a log's records;
//! - [`check`]: per log, the compliance rules and the policy signals;
//! - [`aggregate`]: per folder and package, the package rules, RCP, olympic
//!   score and spread; [`aggregate::repeat`] compares two runs;
//! - [`report`]: one report value, one renderer per format.
//!
//! [`audit`] runs the stages in order for `check`; [`rulebook`] is the rule
//! data they read; [`finding`] the one type every stage reports with;
//! [`config`] the project's `.mlaudit.toml`. Only [`app`] prints, parses
//! arguments or chooses an exit code.

pub mod aggregate;
pub mod app;
pub mod audit;
pub mod check;
pub mod config;
pub mod discover;
pub mod finding;
pub mod mllog;
pub mod report;
pub mod rulebook;
pub mod safe_io;
