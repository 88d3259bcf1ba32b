//! Follow-up reviews (`check --baseline OLD.json`): what changed since an
//! earlier JSON report of the same submission.
//!
//! A finding of this run and one of the baseline are the same finding when
//! they have the same code and path and, in this order of preference: the
//! same line and message; the same message; the same message once numbers
//! are left out (`4 of 46 intervals` and `4 of 50 intervals`). Line numbers
//! alone never match: a line inserted at the top of a log shifts every line
//! below it. Each baseline finding matches at most one finding of this run.
//! Packages are matched by path.

use crate::check::rules::Verdict;
use crate::finding::Finding;
use crate::report::Report;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::Path;

/// Most bytes of a baseline report read.
pub const MAX_BYTES: u64 = 512 << 20;

/// A finding as an earlier JSON report has it.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
pub struct OldFinding {
    pub code: String,
    /// `error`, `warning` or `note`.
    pub severity: String,
    pub message: String,
    pub path: String,
    #[serde(default)]
    pub line: Option<u64>,
}

#[derive(Debug, Deserialize)]
struct OldPackage {
    path: String,
    verdict: String,
}

#[derive(Debug, Deserialize)]
struct OldReport {
    schema: u32,
    tool: String,
    verdict: String,
    findings: Vec<OldFinding>,
    #[serde(default)]
    packages: Vec<OldPackage>,
}

/// What two findings must share to be the same: code, path, and a third
/// part that depends on the pass.
type Key = (String, String, String);
type KeyFn = dyn Fn(&str, &str, Option<u64>, &str) -> Key;

/// An earlier report, read.
#[derive(Debug)]
pub struct Baseline {
    file: String,
    report: OldReport,
}

/// A package whose verdict changed, appeared or went away.
#[derive(Debug, Clone, Serialize)]
pub struct PackageChange {
    pub path: String,
    /// `null` when the baseline did not check it.
    pub before: Option<Verdict>,
    /// `null` when this run did not check it.
    pub after: Option<Verdict>,
}

/// What changed since the baseline (`baseline` in the JSON report).
#[derive(Debug, Clone, Serialize)]
pub struct BaselineDiff {
    /// The baseline file, as given.
    pub file: String,
    pub verdict_before: Verdict,
    pub verdict_after: Verdict,
    /// Findings of this run the baseline did not have.
    pub new: Vec<Finding>,
    /// Findings of the baseline this run does not have.
    pub resolved: Vec<OldFinding>,
    /// Findings in both.
    pub unchanged: usize,
    /// Packages whose verdict is not the baseline's.
    pub packages: Vec<PackageChange>,
}

/// Why a baseline could not be used; the message names the file.
#[derive(Debug, thiserror::Error)]
#[error("{file}: cannot use as --baseline: {why}")]
pub struct BaselineError {
    file: String,
    why: String,
}

impl Baseline {
    /// Reads an earlier `--format json` report of mlaudit.
    pub fn load(path: &Path) -> Result<Baseline, BaselineError> {
        let file = path.display().to_string();
        let err = |why: String| BaselineError {
            file: file.clone(),
            why,
        };
        let meta = std::fs::metadata(path).map_err(|e| err(e.to_string()))?;
        if meta.is_dir() {
            return Err(err("is a folder, not a JSON report".into()));
        }
        if meta.len() > MAX_BYTES {
            return Err(err(format!(
                "{} bytes, more than the {MAX_BYTES} a report can have",
                meta.len()
            )));
        }
        // A regular file only: a FIFO blocked and /dev/zero filled memory.
        let text =
            crate::safe_io::read_regular_string(path, MAX_BYTES).map_err(|e| err(e.to_string()))?;
        let report: OldReport = serde_json::from_str(&text).map_err(|e| {
            err(format!(
                "not a JSON report of mlaudit (`mlaudit check --format json`): {e}"
            ))
        })?;
        let verdicts = std::iter::once(report.verdict.as_str())
            .chain(report.packages.iter().map(|p| p.verdict.as_str()));
        if let Some(bad) = verdicts.into_iter().find(|v| verdict(v).is_none()) {
            return Err(err(format!("unknown verdict '{bad}'")));
        }
        if report.tool != "mlaudit" || report.schema != crate::report::SCHEMA {
            return Err(err(format!(
                "a report of {} schema {}, not of mlaudit schema {}",
                report.tool,
                report.schema,
                crate::report::SCHEMA
            )));
        }
        Ok(Baseline { file, report })
    }

    /// Compares `now` with the baseline.
    pub fn compare(&self, now: &Report) -> BaselineDiff {
        let old = &self.report.findings;
        let mut taken = vec![false; old.len()];
        let mut matched = vec![false; now.findings.len()];
        let passes: [&KeyFn; 3] = [
            &|code, path, line, msg| {
                (
                    code.to_string(),
                    path.to_string(),
                    format!("{line:?} {msg}"),
                )
            },
            &|code, path, _, msg| (code.to_string(), path.to_string(), msg.to_string()),
            &|code, path, _, msg| (code.to_string(), path.to_string(), without_numbers(msg)),
        ];
        for key in passes {
            let mut free: HashMap<Key, Vec<usize>> = HashMap::new();
            for (i, f) in old.iter().enumerate().rev() {
                if !taken[i] {
                    free.entry(key(&f.code, &f.path, f.line, &f.message))
                        .or_default()
                        .push(i);
                }
            }
            for (j, f) in now.findings.iter().enumerate() {
                if matched[j] {
                    continue;
                }
                if let Some(i) = free
                    .get_mut(&key(&f.code, &f.path, f.line, &f.message))
                    .and_then(Vec::pop)
                {
                    taken[i] = true;
                    matched[j] = true;
                }
            }
        }
        let new: Vec<Finding> = now
            .findings
            .iter()
            .zip(&matched)
            .filter(|(_, m)| !**m)
            .map(|(f, _)| f.clone())
            .collect();
        let resolved: Vec<OldFinding> = old
            .iter()
            .zip(&taken)
            .filter(|(_, t)| !**t)
            .map(|(f, _)| f.clone())
            .collect();
        let unchanged = matched.iter().filter(|m| **m).count();
        let mut packages: Vec<PackageChange> = Vec::new();
        for p in &now.packages {
            let before = self
                .report
                .packages
                .iter()
                .find(|o| o.path == p.path)
                .and_then(|o| verdict(&o.verdict));
            if before != Some(p.verdict) {
                packages.push(PackageChange {
                    path: p.path.clone(),
                    before,
                    after: Some(p.verdict),
                });
            }
        }
        for o in &self.report.packages {
            if !now.packages.iter().any(|p| p.path == o.path) {
                packages.push(PackageChange {
                    path: o.path.clone(),
                    before: verdict(&o.verdict),
                    after: None,
                });
            }
        }
        packages.sort_by(|a, b| a.path.cmp(&b.path));
        BaselineDiff {
            file: self.file.clone(),
            verdict_before: verdict(&self.report.verdict).unwrap_or(Verdict::Fail),
            verdict_after: now.verdict,
            new,
            resolved,
            unchanged,
            packages,
        }
    }
}

fn verdict(word: &str) -> Option<Verdict> {
    match word {
        "pass" => Some(Verdict::Pass),
        "fail" => Some(Verdict::Fail),
        _ => None,
    }
}

/// The message with every number replaced by `#`.
fn without_numbers(msg: &str) -> String {
    let mut out = String::with_capacity(msg.len());
    let mut in_number = false;
    let mut chars = msg.chars().peekable();
    while let Some(c) = chars.next() {
        // A point belongs to a number only between digits (`0.05`, not
        // `result_3.txt`).
        let digit = c.is_ascii_digit()
            || (in_number && c == '.' && chars.peek().is_some_and(|n| n.is_ascii_digit()));
        if digit {
            if !in_number {
                out.push('#');
            }
        } else {
            out.push(c);
        }
        in_number = digit;
    }
    out
}

fn word(v: Option<Verdict>) -> &'static str {
    match v {
        Some(Verdict::Pass) => "pass",
        Some(Verdict::Fail) => "fail",
        None => "not checked",
    }
}

fn place(path: &str, line: Option<u64>) -> String {
    match line {
        Some(l) => format!("{path}:{l}"),
        None => path.to_string(),
    }
}

/// The comparison as text lines (the end of the text report).
pub fn text_lines(d: &BaselineDiff) -> Vec<String> {
    let mut lines = vec![format!(
        "since the baseline {}: {} new, {} resolved, {} unchanged findings; verdict {} -> {}",
        d.file,
        d.new.len(),
        d.resolved.len(),
        d.unchanged,
        word(Some(d.verdict_before)),
        word(Some(d.verdict_after)),
    )];
    for p in &d.packages {
        lines.push(format!(
            "  package {}: {} -> {}",
            p.path,
            word(p.before),
            word(p.after)
        ));
    }
    for f in &d.new {
        lines.push(format!(
            "  new      {} {} {} {}",
            f.severity.as_str(),
            f.code,
            place(&f.path, f.line),
            f.message
        ));
    }
    for f in &d.resolved {
        lines.push(format!(
            "  resolved {} {} {} {}",
            f.severity,
            f.code,
            place(&f.path, f.line),
            f.message
        ));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_left_out() {
        assert_eq!(
            without_numbers("4 of 46 intervals are not 0.05"),
            "# of # intervals are not #"
        );
        assert_eq!(without_numbers("result_3.txt"), "result_#.txt");
    }
}
