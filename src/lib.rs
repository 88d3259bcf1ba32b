//! mlaudit: checks MLPerf-style training submissions.
//!
//! The pipeline is discover → parse ([`mllog`]) → check ([`rules`]) →
//! aggregate → render ([`report`]). The library returns data; only the
//! binary prints.

pub mod audit;
pub mod changes;
pub mod ci;
pub mod cli;
pub mod codes;
pub mod commands;
pub mod config;
pub mod finding;
pub mod git;
pub mod hook;
pub mod mllog;
pub mod output;
pub mod policy;
pub mod progress;
pub mod repeat;
pub mod report;
pub mod ruledata;
pub mod rules;
pub mod safe_io;
pub mod settings;
pub mod stats;
pub mod submission;
