//! The report: everything a renderer needs, shaped as the JSON contract
//! (`shared/spec/json-report.md`). Renderers never compute; checks never print.

pub mod json;
pub mod text;

use crate::finding::{Finding, Severity};
use crate::rules::{LogCheck, Verdict};
use serde::Serialize;

pub const SCHEMA: u32 = 1;

#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    pub errors: usize,
    pub warnings: usize,
    pub logs: usize,
    pub benchmarks: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub schema: u32,
    pub tool: &'static str,
    pub version: &'static str,
    pub usage: String,
    pub ruleset: String,
    pub root: String,
    pub verdict: Verdict,
    pub summary: Summary,
    pub logs: Vec<LogCheck>,
    pub benchmarks: Vec<serde_json::Value>,
    pub findings: Vec<Finding>,
}

impl Report {
    /// Builds the report of a set of checked logs; findings are gathered from
    /// the logs and sorted.
    pub fn from_logs(usage: &str, ruleset: &str, root: &str, logs: Vec<LogCheck>) -> Report {
        let mut findings: Vec<Finding> = logs
            .iter()
            .flat_map(|l| l.findings.iter().cloned())
            .collect();
        crate::finding::sort_findings(&mut findings);
        let errors = crate::finding::count(&findings, Severity::Error);
        let warnings = crate::finding::count(&findings, Severity::Warning);
        let verdict = if logs.iter().all(|l| l.verdict == Verdict::Pass) {
            Verdict::Pass
        } else {
            Verdict::Fail
        };
        Report {
            schema: SCHEMA,
            tool: "mlaudit",
            version: env!("CARGO_PKG_VERSION"),
            usage: usage.to_string(),
            ruleset: ruleset.to_string(),
            root: root.to_string(),
            verdict,
            summary: Summary {
                errors,
                warnings,
                logs: logs.len(),
                benchmarks: 0,
            },
            logs,
            benchmarks: Vec::new(),
            findings,
        }
    }
}
