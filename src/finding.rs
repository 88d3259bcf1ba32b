//! `Finding`: one thing a check found, with where it was found and how to fix it.

use serde::Serialize;
use std::fmt;

/// How bad a finding is. Ordered from least to most severe.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Note,
    Warning,
    Error,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Note => "note",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }

    pub fn parse(s: &str) -> Option<Severity> {
        match s {
            "note" => Some(Severity::Note),
            "warning" => Some(Severity::Warning),
            "error" => Some(Severity::Error),
            _ => None,
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One result of a check, ready to be rendered in any format.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    pub code: String,
    pub severity: Severity,
    pub message: String,
    /// Path of the file (or folder) the finding is about, as the user named it.
    pub path: String,
    /// 1-based physical line, or `None` for a finding about the whole file.
    pub line: Option<u64>,
    /// The rule that produced it, e.g. `training/5.0.0/common.yaml#init_stop`.
    pub rule: Option<String>,
    pub help: Option<String>,
}

impl Finding {
    pub fn new(code: &str, severity: Severity, path: &str, message: impl Into<String>) -> Finding {
        Finding {
            code: code.to_string(),
            severity,
            message: message.into(),
            path: path.to_string(),
            line: None,
            rule: None,
            help: None,
        }
    }

    pub fn at_line(mut self, line: Option<u64>) -> Finding {
        self.line = line;
        self
    }

    pub fn with_help(mut self, help: impl Into<String>) -> Finding {
        self.help = Some(help.into());
        self
    }

    pub fn with_rule(mut self, rule: impl Into<String>) -> Finding {
        self.rule = Some(rule.into());
        self
    }

    /// The order findings are rendered in: by path, then line (whole-file
    /// findings first), then code, then message.
    pub fn sort_key(&self) -> (&str, u64, &str, &str) {
        (
            self.path.as_str(),
            self.line.unwrap_or(0),
            self.code.as_str(),
            self.message.as_str(),
        )
    }
}

/// Sorts findings into their rendering order and removes exact duplicates.
pub fn sort_findings(findings: &mut Vec<Finding>) {
    findings.sort_by(|a, b| a.sort_key().cmp(&b.sort_key()));
    findings.dedup();
}

/// How many of `findings` have exactly `severity`.
pub fn count(findings: &[Finding], severity: Severity) -> usize {
    findings.iter().filter(|f| f.severity == severity).count()
}
