//! `mlaudit score`: the olympic score of each benchmark folder, as text and
//! as mlaudit's long CSV (one row per folder; for the summarizer's own wide
//! CSV see `summarizer.rs`).

use super::{BenchmarkReport, Report};
use crate::aggregate::stats::rcp::Verdict as RcpVerdict;
use std::collections::BTreeMap;
use std::io::{self, Write};

/// The CSV columns, in order. `time_to_train_min`, `GBS`,
/// `samples_to_converge`, `RCP` and `rcp_scaling_factor` are the summarizer's
/// detailed columns (logging#455); the system columns come from the system
/// description.
pub const COLUMNS: &[&str] = &[
    "submitter",
    "division",
    "availability",
    "system",
    "system_name",
    "accelerators_count",
    "accelerator_model_name",
    "framework",
    "benchmark",
    "time_to_train_min",
    "GBS",
    "samples_to_converge",
    "RCP",
    "rcp_scaling_factor",
    "runs_used",
    "runs_failed",
    "runs_read",
    "runs_counted",
    "runs_dropped",
    "verdict",
];

/// The summarizer's RCP column: Pass, Fail, Missing or No RCP.
fn rcp_column(b: &BenchmarkReport) -> &'static str {
    match &b.rcp {
        None => "",
        Some(r) => match r.verdict {
            RcpVerdict::Pass | RcpVerdict::Bypassed => "Pass",
            RcpVerdict::NotApplicable => "No RCP",
            RcpVerdict::Fail if r.message.starts_with("Missing RCP") => "Missing",
            RcpVerdict::Fail => "Fail",
        },
    }
}

fn field(system: Option<&serde_json::Value>, name: &str) -> String {
    match system.and_then(|s| s.get(name)) {
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(serde_json::Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    }
}

fn accelerators(system: Option<&serde_json::Value>) -> String {
    let n = |name: &str| field(system, name).trim().parse::<u64>().ok();
    match (n("number_of_nodes"), n("accelerators_per_node")) {
        (Some(a), Some(b)) => (a * b).to_string(),
        _ => String::new(),
    }
}

fn opt(x: Option<f64>) -> String {
    x.map(|v| v.to_string()).unwrap_or_default()
}

pub fn write_csv(
    report: &Report,
    systems: &BTreeMap<String, serde_json::Value>,
    out: &mut dyn Write,
) -> csv::Result<()> {
    let mut w = csv::Writer::from_writer(out);
    w.write_record(COLUMNS)?;
    for b in &report.benchmarks {
        let Some(score) = &b.score else { continue };
        let sys = systems.get(&b.system);
        let rcp = b.rcp.as_ref();
        w.write_record([
            field(sys, "submitter"),
            b.division.clone().unwrap_or_default(),
            field(sys, "status"),
            b.system.clone(),
            field(sys, "system_name"),
            accelerators(sys),
            field(sys, "accelerator_model_name"),
            field(sys, "framework"),
            b.benchmark.clone(),
            opt(score.minutes),
            opt(rcp.and_then(|r| r.global_batch_size)),
            opt(rcp.and_then(|r| r.samples_to_converge)),
            rcp_column(b).to_string(),
            score.scaling_factor.to_string(),
            score.runs_used.to_string(),
            score.runs_failed.to_string(),
            score.runs_read.to_string(),
            score.runs_counted.to_string(),
            (score.runs_dropped_fastest + score.runs_dropped_slowest).to_string(),
            serde_json::to_value(b.verdict)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default(),
        ])?;
    }
    w.flush()?;
    Ok(())
}

pub fn render(report: &Report, out: &mut dyn Write) -> io::Result<()> {
    let width = report
        .benchmarks
        .iter()
        .map(|b| super::escape::text(&b.path).chars().count())
        .max()
        .unwrap_or(0);
    for b in &report.benchmarks {
        let Some(s) = &b.score else {
            writeln!(out, "{:<width$}  skipped", super::escape::text(&b.path))?;
            continue;
        };
        let minutes = match s.minutes {
            Some(m) => format!("{m:>10.3} min"),
            None => format!("{:>14}", "no score"),
        };
        let scaled = if s.scaling_factor != 1.0 {
            format!(", scaled x{:.4}", s.scaling_factor)
        } else {
            String::new()
        };
        writeln!(
            out,
            "{:<width$}  {minutes}  ({}{scaled})",
            super::escape::text(&b.path),
            s.describe()
        )?;
    }
    let scored = report
        .benchmarks
        .iter()
        .filter(|b| b.score.as_ref().is_some_and(|s| s.minutes.is_some()))
        .count();
    let n = report.benchmarks.len();
    writeln!(
        out,
        "{scored} of {n} {} scored with {} {} rules",
        if n == 1 { "folder" } else { "folders" },
        report.usage,
        report.ruleset
    )
}
