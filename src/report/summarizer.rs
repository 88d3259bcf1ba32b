//! `mlaudit score --csv FILE --csv-layout summarizer`: the two CSV files
//! `result_summarizer --csv FILE` of mlperf_logging 4.1.68 writes, with its
//! columns in its order, its rows and its values.
//!
//! - `FILE`: one row per system; the system columns, then one column per
//!   benchmark of the round (the olympic score in minutes, empty when the
//!   system has no score for it), then `details_url` and `code_url`;
//! - `FILE_detailed.csv` (`FILE` without `.csv`, plus `_detailed.csv`):
//!   the same with six columns per benchmark, `<bm>:time_to_train`,
//!   `:Energy`, `:GBS`, `:samples_to_converge`, `:RCP`,
//!   `:rcp_scaling_factor`.
//!
//! As pandas writes them: rows sorted by every column in order (empty
//! numbers last), numbers as Python's `repr` (`8.0`, `16.36206681134259`),
//! fields quoted only when they hold a comma, a quote or a line break.
//! The benchmark columns of a round are rule data
//! (`rules/<usage>/<version>/summarizer.yaml`).
//!
//! Not reproduced: the JSON files the summarizer writes beside the CSVs,
//! `privateid.json` ids (the column is written empty, as the summarizer
//! does without `--generate_private_ids`), energy (the column is empty, as
//! for every package without power logs), and rows for system folders
//! without any benchmark folder.

use super::{BenchmarkReport, Report};
use crate::aggregate::stats::rcp::Verdict as RcpVerdict;
use serde::Deserialize;
use std::cmp::Ordering;
use std::collections::BTreeMap;

/// `rules/<usage>/<version>/summarizer.yaml`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Layout {
    /// The benchmark columns, in the summarizer's order
    /// (`mlperf_logging.benchmark_meta.get_allowed_benchmarks`).
    pub benchmarks: Vec<String>,
}

impl Layout {
    /// The layout of a round; an error naming the file when the round has
    /// none.
    pub fn load(
        source: &crate::rulebook::source::RuleSource,
        usage: &str,
        version: &str,
    ) -> anyhow::Result<Layout> {
        let rel = format!("{usage}/{version}/summarizer.yaml");
        crate::rulebook::source::load_yaml::<Layout>(source, &rel)?.ok_or_else(|| {
            anyhow::anyhow!(
                "no result_summarizer layout for {usage} {version}: {} is missing",
                source.display(&rel)
            )
        })
    }
}

/// One cell, typed as pandas has it after `astype`.
#[derive(Debug, Clone, PartialEq)]
enum Cell {
    Text(String),
    Int(i64),
    Float(Option<f64>),
}

impl Cell {
    fn render(&self) -> String {
        match self {
            Cell::Text(s) => s.clone(),
            Cell::Int(i) => i.to_string(),
            Cell::Float(None) => String::new(),
            Cell::Float(Some(f)) => py_repr(*f),
        }
    }

    fn cmp(&self, other: &Cell) -> Ordering {
        match (self, other) {
            (Cell::Text(a), Cell::Text(b)) => a.cmp(b),
            (Cell::Int(a), Cell::Int(b)) => a.cmp(b),
            // Empty numbers sort last.
            (Cell::Float(a), Cell::Float(b)) => match (a, b) {
                (Some(x), Some(y)) => x.total_cmp(y),
                (Some(_), None) => Ordering::Less,
                (None, Some(_)) => Ordering::Greater,
                (None, None) => Ordering::Equal,
            },
            _ => Ordering::Equal,
        }
    }
}

/// A float as Python's `repr`: the shortest text that reads back the same,
/// `.0` on whole numbers, an exponent below 1e-4 and from 1e16 on.
pub fn py_repr(f: f64) -> String {
    if f.is_nan() {
        return "nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "inf".into() } else { "-inf".into() };
    }
    let a = f.abs();
    if a != 0.0 && !(1e-4..1e16).contains(&a) {
        // Rust: `1e-5`, `1.5e16`; Python: `1e-05`, `1.5e+16`.
        let s = format!("{f:e}");
        let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
        let (sign, digits) = match exp.strip_prefix('-') {
            Some(d) => ('-', d),
            None => ('+', exp),
        };
        return format!("{mantissa}e{sign}{digits:0>2}");
    }
    let s = format!("{f}");
    if s.contains('.') {
        s
    } else {
        format!("{s}.0")
    }
}

fn quote(field: &str) -> String {
    if field.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", field.replace('"', "\"\""))
    } else {
        field.to_string()
    }
}

fn text(desc: &serde_json::Value, key: &str) -> String {
    match desc.get(key) {
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(serde_json::Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    }
}

fn int(desc: &serde_json::Value, key: &str) -> i64 {
    match desc.get(key) {
        // Python's int(): a float is truncated (v3.1 Ailiverse logs
        // number_of_nodes 1.0).
        Some(serde_json::Value::Number(n)) => n
            .as_i64()
            .or_else(|| {
                n.as_f64()
                    .filter(|f| f.is_finite())
                    .map(|f| f.trunc() as i64)
            })
            .unwrap_or(0),
        Some(serde_json::Value::String(s)) => s.trim().parse().unwrap_or(0),
        _ => 0,
    }
}

/// `training_results_v5.0` from `5.0.0`, as the summarizer shortens it.
fn url_prefix(usage: &str, ruleset: &str) -> String {
    let (head, tail) = ruleset.split_at(ruleset.len().min(3));
    format!(
        "https://github.com/mlcommons/{usage}_results_v{head}{}",
        tail.replace(".0", "")
    )
}

/// The system columns of one row, as `summarize_results` builds them.
fn system_cells(desc: &serde_json::Value) -> Vec<Cell> {
    let name = text(desc, "system_name");
    let (name, model) = if name == "tpu-v3" {
        (
            format!("TPUv3.{}", int(desc, "accelerators_per_node") * 2),
            "TPUv3".to_string(),
        )
    } else {
        (name, text(desc, "accelerator_model_name"))
    };
    let model = if text(desc, "accelerator_model_name") == "tpu-v3" {
        "TPUv3".to_string()
    } else {
        model
    };
    let mut framework = text(desc, "framework");
    if framework.contains("TensorFlow") {
        if let Some(at) = framework.find(" commit hash = ") {
            framework.truncate(at);
        }
    }
    let notes: Vec<String> = ["hw_notes", "sw_notes"]
        .iter()
        .map(|k| text(desc, k))
        .filter(|s| !s.is_empty())
        .collect();
    vec![
        Cell::Text(text(desc, "division")),
        Cell::Text(text(desc, "status")),
        Cell::Text(text(desc, "submitter")),
        Cell::Text(name),
        Cell::Text(text(desc, "number_of_nodes")),
        Cell::Text(text(desc, "host_processor_model_name")),
        Cell::Int(int(desc, "host_processors_per_node") * int(desc, "number_of_nodes")),
        Cell::Text(model),
        Cell::Int(int(desc, "accelerators_per_node") * int(desc, "number_of_nodes")),
        Cell::Text(framework),
        Cell::Text(notes.join(";")),
        Cell::Text(String::new()),
    ]
}

const SYSTEM_COLUMNS: &[&str] = &[
    "division",
    "availability",
    "submitter",
    "system",
    "number_of_nodes",
    "host_processor_model_name",
    "host_processors_count",
    "accelerator_model_name",
    "accelerators_count",
    "framework",
    "notes",
    "private_id",
];

const DETAILED_METRICS: &[&str] = &[
    "time_to_train",
    "Energy",
    "GBS",
    "samples_to_converge",
    "RCP",
    "rcp_scaling_factor",
];

/// The summarizer's RCP word for a closed folder.
fn rcp_word(b: &BenchmarkReport) -> String {
    let Some(r) = &b.rcp else {
        return String::new();
    };
    match r.verdict {
        RcpVerdict::Pass | RcpVerdict::Bypassed => "Pass".into(),
        RcpVerdict::NotApplicable => String::new(),
        RcpVerdict::Fail => match r.message.as_str() {
            "RCP found" => "Fail".into(),
            "RCP Interpolation" => "Interp. Fail".into(),
            m if m.contains("Missing") => "Missing".into(),
            "Cannot find any RCPs" => "No RCP".into(),
            _ => "Unknown state".into(),
        },
    }
}

/// The six detailed cells of a folder.
fn detailed_cells(b: Option<&BenchmarkReport>) -> Vec<Cell> {
    let Some(b) = b else {
        return vec![
            Cell::Float(None),
            Cell::Float(None),
            Cell::Float(None),
            Cell::Float(None),
            Cell::Text(String::new()),
            Cell::Float(None),
        ];
    };
    let closed = b.division.as_deref() == Some("closed");
    let rcp = b.rcp.as_ref().filter(|_| closed);
    vec![
        Cell::Float(b.score.as_ref().and_then(|s| s.minutes)),
        Cell::Float(None),
        Cell::Float(rcp.and_then(|r| r.global_batch_size)),
        Cell::Float(rcp.and_then(|r| r.samples_to_converge)),
        Cell::Text(if closed { rcp_word(b) } else { String::new() }),
        Cell::Float(Some(b.score.as_ref().map_or(1.0, |s| s.scaling_factor))),
    ]
}

/// The two files' contents: (summary, detailed).
pub fn render(
    report: &Report,
    systems: &BTreeMap<String, serde_json::Value>,
    layout: &Layout,
) -> (String, String) {
    // Folders by system, in report order.
    let mut by_system: BTreeMap<&str, Vec<&BenchmarkReport>> = BTreeMap::new();
    for b in &report.benchmarks {
        by_system.entry(b.system.as_str()).or_default().push(b);
    }
    let prefix = url_prefix(&report.usage, &report.ruleset);
    let mut rows: Vec<Vec<Cell>> = Vec::new();
    let mut detailed: Vec<Vec<Cell>> = Vec::new();
    for (system, folders) in by_system {
        let Some(desc) = systems.get(system) else {
            continue;
        };
        let head = system_cells(desc);
        let submitter = text(desc, "submitter");
        let urls = [
            Cell::Text(format!(
                "{prefix}/blob/main/{submitter}/systems/{system}.json"
            )),
            Cell::Text(format!("{prefix}/blob/master/{submitter}/benchmarks")),
        ];
        let folder = |bm: &str| folders.iter().copied().find(|b| b.benchmark == bm);
        let mut row = head.clone();
        let mut drow = head;
        for bm in &layout.benchmarks {
            let f = folder(bm);
            row.push(Cell::Float(
                f.and_then(|b| b.score.as_ref()).and_then(|s| s.minutes),
            ));
            drow.extend(detailed_cells(f));
        }
        row.extend(urls.iter().cloned());
        drow.extend(urls);
        rows.push(row);
        detailed.push(drow);
    }
    let sort = |rows: &mut Vec<Vec<Cell>>| {
        rows.sort_by(|a, b| {
            a.iter()
                .zip(b)
                .map(|(x, y)| x.cmp(y))
                .find(|o| *o != Ordering::Equal)
                .unwrap_or(Ordering::Equal)
        })
    };
    sort(&mut rows);
    sort(&mut detailed);
    let mut columns: Vec<String> = SYSTEM_COLUMNS.iter().map(|s| s.to_string()).collect();
    let mut dcolumns = columns.clone();
    columns.extend(layout.benchmarks.iter().cloned());
    for bm in &layout.benchmarks {
        dcolumns.extend(DETAILED_METRICS.iter().map(|m| format!("{bm}:{m}")));
    }
    for c in [&mut columns, &mut dcolumns] {
        c.push("details_url".into());
        c.push("code_url".into());
    }
    (table(&columns, &rows), table(&dcolumns, &detailed))
}

fn table(columns: &[String], rows: &[Vec<Cell>]) -> String {
    let mut out = columns.join(",");
    out.push('\n');
    for r in rows {
        let cells: Vec<String> = r.iter().map(|c| quote(&c.render())).collect();
        out.push_str(&cells.join(","));
        out.push('\n');
    }
    out
}

/// `FILE_detailed.csv` beside `FILE.csv`, as the summarizer names it.
pub fn detailed_path(path: &std::path::Path) -> std::path::PathBuf {
    let s = path.to_string_lossy();
    match s.strip_suffix(".csv") {
        Some(stem) => std::path::PathBuf::from(format!("{stem}_detailed.csv")),
        None => std::path::PathBuf::from(format!("{s}_detailed.csv")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_read_as_python_writes_them() {
        assert_eq!(py_repr(8.0), "8.0");
        assert_eq!(py_repr(16.36206681134259), "16.36206681134259");
        assert_eq!(py_repr(1.034722222222222), "1.034722222222222");
        assert_eq!(py_repr(1e-5), "1e-05");
        assert_eq!(py_repr(1.5e16), "1.5e+16");
        assert_eq!(py_repr(322560.0), "322560.0");
    }

    #[test]
    fn urls_use_the_short_round() {
        assert_eq!(
            url_prefix("training", "5.0.0"),
            "https://github.com/mlcommons/training_results_v5.0"
        );
        assert_eq!(
            url_prefix("training", "4.1.0"),
            "https://github.com/mlcommons/training_results_v4.1"
        );
    }
}
