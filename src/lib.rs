//! mlaudit: checks MLPerf-style training submissions.
//!
//! The pipeline is discover → parse ([`mllog`]) → check ([`rules`]) →
//! aggregate → render ([`report`]). The library returns data; only the
//! binary prints.

pub mod codes;
pub mod finding;
pub mod mllog;
pub mod ruledata;
pub mod submission;
