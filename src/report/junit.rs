//! `--format junit`: JUnit XML, for CI test-report views.
//!
//! - one `<testsuite>` per benchmark folder, named by its path, with a
//!   `<testcase>` per log (`name` the file name, `classname` the folder,
//!   `file` the path) and one `folder checks` test case for the folder's
//!   verdict (package rules, RCP, score);
//! - log files outside any folder go to a `logs` suite; findings about
//!   neither a folder nor a log (system descriptions, the package root) to
//!   a `package` suite with one `package checks` test case;
//! - a log test case fails when the log is not compliant, unless olympic
//!   scoring accepts it (its folder passes): then it passes and its
//!   `<system-out>` says so; the folder test case fails when the folder
//!   fails; the `<failure>` message is the first error (`[CODE] text`, and
//!   how many more), its body lists the test case's findings, one per line,
//!   as the text format prints them. Warnings of a passing test case go to
//!   `<system-out>`; a folder of a benchmark not in the round is `<skipped>`;
//! - `classname` is the folder path with dots as `_` (Jenkins splits a
//!   class name at dots); `file` keeps the real path;
//! - `time` is a log's time to train in seconds (run_start to run_stop, 0
//!   when unknown; folder and package checks 0), a suite's the sum: a
//!   property of the input, so the same input gives the same bytes. No
//!   timestamps.

use super::{BenchmarkReport, Report};
use crate::aggregate::package::Verdict as FolderVerdict;
use crate::check::rules::Verdict;
use crate::finding::{Finding, Severity};
use std::io::{self, Write};

struct Case {
    name: String,
    classname: String,
    file: Option<String>,
    /// The run's time to train in seconds (run_start to run_stop), 0 for
    /// folder and package checks.
    time: f64,
    /// A line for `<system-out>` before the findings.
    note: Option<String>,
    outcome: Outcome,
    findings: Vec<Finding>,
}

enum Outcome {
    Pass,
    Fail(String),
    Skipped(String),
}

struct Suite {
    name: String,
    cases: Vec<Case>,
}

pub fn render(report: &Report, out: &mut dyn Write) -> io::Result<()> {
    let suites = suites(report);
    let tests: usize = suites.iter().map(|s| s.cases.len()).sum();
    let failures = count(&suites, |o| matches!(o, Outcome::Fail(_)));
    let skipped = count(&suites, |o| matches!(o, Outcome::Skipped(_)));
    writeln!(out, r#"<?xml version="1.0" encoding="UTF-8"?>"#)?;
    writeln!(
        out,
        r#"<testsuites name="mlaudit {} {}" tests="{tests}" failures="{failures}" errors="0" skipped="{skipped}" time="{}">"#,
        attr(&report.usage),
        attr(&report.ruleset),
        seconds(
            suites
                .iter()
                .flat_map(|s| s.cases.iter())
                .map(|c| c.time)
                .sum()
        )
    )?;
    for s in &suites {
        let failures = count(std::slice::from_ref(s), |o| matches!(o, Outcome::Fail(_)));
        let skipped = count(std::slice::from_ref(s), |o| {
            matches!(o, Outcome::Skipped(_))
        });
        let time: f64 = s.cases.iter().map(|c| c.time).sum();
        writeln!(
            out,
            r#"  <testsuite name="{}" tests="{}" failures="{failures}" errors="0" skipped="{skipped}" time="{}">"#,
            attr(&s.name),
            s.cases.len(),
            seconds(time)
        )?;
        for c in &s.cases {
            write!(
                out,
                r#"    <testcase name="{}" classname="{}" time="{}""#,
                attr(&c.name),
                attr(&c.classname),
                seconds(c.time)
            )?;
            if let Some(f) = &c.file {
                write!(out, r#" file="{}""#, attr(f))?;
            }
            let body = c
                .note
                .iter()
                .cloned()
                .chain(c.findings.iter().map(line_of))
                .collect::<Vec<_>>()
                .join("\n");
            match &c.outcome {
                Outcome::Pass if body.is_empty() => writeln!(out, "/>")?,
                Outcome::Pass => {
                    writeln!(out, ">")?;
                    writeln!(out, "      <system-out>{}</system-out>", escape(&body))?;
                    writeln!(out, "    </testcase>")?;
                }
                Outcome::Fail(message) => {
                    writeln!(out, ">")?;
                    let kind = c
                        .findings
                        .iter()
                        .find(|f| f.severity == Severity::Error)
                        .map_or("mlaudit", |f| f.code.as_str());
                    writeln!(
                        out,
                        r#"      <failure message="{}" type="{}">{}</failure>"#,
                        attr(message),
                        attr(kind),
                        escape(&body)
                    )?;
                    writeln!(out, "    </testcase>")?;
                }
                Outcome::Skipped(message) => {
                    writeln!(out, ">")?;
                    writeln!(out, r#"      <skipped message="{}"/>"#, attr(message))?;
                    writeln!(out, "    </testcase>")?;
                }
            }
        }
        writeln!(out, "  </testsuite>")?;
    }
    writeln!(out, "</testsuites>")
}

/// Seconds with millisecond precision, as JUnit readers expect.
fn seconds(t: f64) -> String {
    if t.is_finite() && t > 0.0 {
        format!("{t:.3}")
    } else {
        "0".to_string()
    }
}

/// A path as a JUnit class name: dots become `_`, since Jenkins and others
/// split a class name at its last dot into package and class.
fn classname(path: &str) -> String {
    if path.is_empty() {
        ".".to_string()
    } else {
        path.replace('.', "_")
    }
}

fn count(suites: &[Suite], pred: impl Fn(&Outcome) -> bool) -> usize {
    suites
        .iter()
        .flat_map(|s| s.cases.iter())
        .filter(|c| pred(&c.outcome))
        .count()
}

fn line_of(f: &Finding) -> String {
    let place = match f.line {
        Some(l) => format!("{}:{l}", f.path),
        None => f.path.clone(),
    };
    format!("{place}: {}[{}] {}", f.severity, f.code, f.message)
}

fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// The failure message: the first error's code and text, and how many
/// more errors there are.
fn errors_message(findings: &[Finding], what: &str) -> String {
    let errors: Vec<&Finding> = findings
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .collect();
    match errors.as_slice() {
        [] => format!("{what} failed"),
        [f] => format!("[{}] {}", f.code, f.message),
        [f, rest @ ..] => format!(
            "[{}] {} (and {} more {})",
            f.code,
            f.message,
            rest.len(),
            if rest.len() == 1 { "error" } else { "errors" }
        ),
    }
}

fn suites(report: &Report) -> Vec<Suite> {
    let mut used = vec![false; report.findings.len()];
    let mut take = |pred: &dyn Fn(&Finding) -> bool| -> Vec<Finding> {
        let mut out = Vec::new();
        for (i, f) in report.findings.iter().enumerate() {
            if !used[i] && pred(f) {
                used[i] = true;
                out.push(f.clone());
            }
        }
        out
    };
    let mut logs_left: Vec<bool> = vec![true; report.logs.len()];
    let mut suites = Vec::new();
    for b in &report.benchmarks {
        let mut cases = Vec::new();
        for (i, log) in report.logs.iter().enumerate() {
            if !logs_left[i] || !b.covers(&log.path) {
                continue;
            }
            logs_left[i] = false;
            let findings = take(&|f| f.path == log.path);
            let accepted = b.verdict == FolderVerdict::Pass
                && b.non_compliant
                    .iter()
                    .any(|r| file_name(&log.path).strip_suffix(".txt") == Some(r.as_str()));
            let (outcome, note) = match log.verdict {
                Verdict::Pass => (Outcome::Pass, None),
                // Olympic scoring accepts it: the folder passes, so the
                // case does not fail; it says why.
                Verdict::Fail if accepted => (
                    Outcome::Pass,
                    Some(
                        "not compliant, accepted under olympic scoring: it counts as the slowest run and the folder passes"
                            .to_string(),
                    ),
                ),
                Verdict::Fail => (Outcome::Fail(errors_message(&findings, "log")), None),
            };
            cases.push(Case {
                name: file_name(&log.path).to_string(),
                classname: classname(&b.path),
                file: Some(log.path.clone()),
                time: log.seconds.unwrap_or(0.0),
                note,
                outcome,
                findings,
            });
        }
        let findings = take(&|f| b.covers(&f.path));
        cases.push(folder_case(b, findings));
        suites.push(Suite {
            name: b.path.clone(),
            cases,
        });
    }
    let mut loose = Vec::new();
    for (i, log) in report.logs.iter().enumerate() {
        if !logs_left[i] {
            continue;
        }
        let findings = take(&|f| f.path == log.path);
        let outcome = match log.verdict {
            Verdict::Pass => Outcome::Pass,
            Verdict::Fail => Outcome::Fail(errors_message(&findings, "log")),
        };
        loose.push(Case {
            name: file_name(&log.path).to_string(),
            classname: classname(log.path.rsplit_once('/').map_or("", |(dir, _)| dir)),
            file: Some(log.path.clone()),
            time: log.seconds.unwrap_or(0.0),
            note: None,
            outcome,
            findings,
        });
    }
    if !loose.is_empty() {
        suites.push(Suite {
            name: "logs".to_string(),
            cases: loose,
        });
    }
    let rest = take(&|_| true);
    if !rest.is_empty() || !report.benchmarks.is_empty() {
        let outcome = if rest.iter().any(|f| f.severity == Severity::Error) {
            Outcome::Fail(errors_message(&rest, "package checks"))
        } else {
            Outcome::Pass
        };
        suites.push(Suite {
            name: "package".to_string(),
            cases: vec![Case {
                name: "package checks".to_string(),
                classname: classname(&report.root),
                file: None,
                time: 0.0,
                note: None,
                outcome,
                findings: rest,
            }],
        });
    }
    suites
}

fn folder_case(b: &BenchmarkReport, findings: Vec<Finding>) -> Case {
    let outcome = match b.verdict {
        FolderVerdict::Pass => Outcome::Pass,
        FolderVerdict::Fail => Outcome::Fail(errors_message(&findings, "folder checks")),
        FolderVerdict::Skipped => Outcome::Skipped(
            findings
                .first()
                .map_or("not checked".to_string(), |f| f.message.clone()),
        ),
    };
    Case {
        name: "folder checks".to_string(),
        classname: classname(&b.path),
        file: None,
        time: 0.0,
        note: None,
        outcome,
        findings,
    }
}

/// Escapes text for XML content and attribute values. Characters XML 1.0
/// cannot hold at all (most control characters) become U+FFFD.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

/// Escapes an attribute value: as [`escape`], with tabs and line breaks as
/// character references (a parser turns raw ones into spaces).
pub fn attr(s: &str) -> String {
    escape(s)
        .replace('\t', "&#9;")
        .replace('\n', "&#10;")
        .replace('\r', "&#13;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_drops_what_xml_cannot_hold() {
        assert_eq!(
            escape(r#"<a href="x">&'</a>"#),
            "&lt;a href=&quot;x&quot;&gt;&amp;&apos;&lt;/a&gt;"
        );
        assert_eq!(escape("a\u{1}b\tc"), "a\u{FFFD}b\tc");
        assert_eq!(attr("a\nb\t"), "a&#10;b&#9;");
    }
}
