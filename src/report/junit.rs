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
//!   timestamps, no report UUID.
//!
//! The cases and suites are computed here; `quick-junit` writes the XML
//! (escaping, and dropping characters XML cannot hold).

use super::{BenchmarkReport, Report};
use crate::aggregate::package::Verdict as FolderVerdict;
use crate::check::rules::Verdict;
use crate::finding::{Finding, Severity};
use quick_junit as junit;
use std::io::{self, Write};
use std::time::Duration;

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
    let mut xml = junit::Report::new(format!("mlaudit {} {}", report.usage, report.ruleset));
    let mut total = 0.0;
    for s in suites(report) {
        let mut suite = junit::TestSuite::new(xml_text(&s.name).as_ref());
        let time: f64 = s.cases.iter().map(|c| c.time).sum();
        total += time;
        suite.set_time(seconds(time));
        suite.add_test_cases(s.cases.into_iter().map(test_case));
        xml.add_test_suite(suite);
    }
    xml.set_time(seconds(total));
    // quick-junit ends the document with a newline.
    xml.serialize(out).map_err(io::Error::other)
}

/// One case as quick-junit writes it: `<failure message type>` with the
/// findings as its text, `<skipped message>`, or the findings (and the
/// note) in `<system-out>` of a passing case.
fn test_case(c: Case) -> junit::TestCase {
    let body = c
        .note
        .iter()
        .cloned()
        .chain(c.findings.iter().map(line_of))
        .collect::<Vec<_>>()
        .join("\n");
    let body = xml_text(&body);
    let status = match &c.outcome {
        Outcome::Pass => junit::TestCaseStatus::success(),
        Outcome::Fail(message) => {
            let kind = c
                .findings
                .iter()
                .find(|f| f.severity == Severity::Error)
                .map_or("mlaudit", |f| f.code.as_str());
            let mut st = junit::TestCaseStatus::non_success(junit::NonSuccessKind::Failure);
            st.set_message(xml_text(message).as_ref()).set_type(kind);
            st.set_description(body.as_ref());
            st
        }
        Outcome::Skipped(message) => {
            let mut st = junit::TestCaseStatus::skipped();
            st.set_message(xml_text(message).as_ref());
            st
        }
    };
    let mut case = junit::TestCase::new(xml_text(&c.name).as_ref(), status);
    case.set_classname(xml_text(&c.classname).as_ref());
    case.set_time(seconds(c.time));
    if let Some(f) = &c.file {
        case.extra
            .insert("file".into(), xml_text(f).as_ref().into());
    }
    if matches!(c.outcome, Outcome::Pass) && !body.is_empty() {
        case.set_system_out(body.as_ref());
    }
    case
}

/// `s` with the characters XML 1.0 cannot hold, even as a character
/// reference (C0 controls but tab, newline and carriage return), written
/// as `\xNN` escapes, as the text output writes them: dropped, two names
/// that differ only there would look the same.
fn xml_text(s: &str) -> std::borrow::Cow<'_, str> {
    let cannot = |c: char| (c as u32) < 0x20 && !matches!(c, '\t' | '\n' | '\r');
    if !s.chars().any(cannot) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if cannot(c) {
            crate::report::escape::push(&mut out, c);
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// A time in seconds as a duration (quick-junit writes it with millisecond
/// precision); 0 when unknown.
fn seconds(t: f64) -> Duration {
    Duration::try_from_secs_f64(t).unwrap_or(Duration::ZERO)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_and_what_xml_cannot_hold_come_back_as_text() {
        let case = Case {
            name: "a<b>&\"c'".into(),
            classname: "x".into(),
            file: Some("x/a<b>.txt".into()),
            time: 1.5,
            note: None,
            outcome: Outcome::Fail("m\u{1}<&>".into()),
            findings: vec![Finding::new(
                "BMK004",
                Severity::Error,
                "x/a<b>.txt",
                "</failure>&'\"",
            )],
        };
        let mut xml = junit::Report::new("r");
        let mut suite = junit::TestSuite::new("s");
        suite.add_test_case(test_case(case));
        xml.add_test_suite(suite);
        let text = xml.to_string().expect("serialize");
        let doc = roxmltree::Document::parse(&text).expect("well-formed");
        let tc = doc
            .descendants()
            .find(|n| n.has_tag_name("testcase"))
            .expect("testcase");
        assert_eq!(tc.attribute("name"), Some("a<b>&\"c'"));
        assert_eq!(tc.attribute("time"), Some("1.500"));
        assert_eq!(tc.attribute("file"), Some("x/a<b>.txt"));
        let failure = tc.first_element_child().expect("failure");
        assert_eq!(failure.attribute("message"), Some("m\\x01<&>"));
        assert_eq!(failure.attribute("type"), Some("BMK004"));
        assert!(failure.text().is_some_and(|t| t.contains("</failure>&'\"")));
    }
}
