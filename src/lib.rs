//! mlaudit: checks MLPerf-style training submissions.
//!
//! The pipeline is discover → parse ([`mllog`]) → check ([`rules`]) →
//! aggregate → render ([`report`]). The library returns data; only the
//! binary prints.

pub mod audit;
pub mod cli;
pub mod codes;
pub mod commands;
pub mod config;
pub mod finding;
pub mod mllog;
pub mod policy;
pub mod repeat;
pub mod report;
pub mod ruledata;
pub mod rules;
pub mod stats;
pub mod submission;
