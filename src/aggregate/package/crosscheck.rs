//! Cross-checks the official tools lack: what the logs of a folder say
//! about themselves against the folder name, the system description and
//! each other (mlcommons/logging#241; section 8 item 2 of the facts: the
//! official RCP checker crashes when runs disagree on the batch size).

use super::logscan::{LogFacts, BENCHMARK, DIVISION, GBS, ORG, PLATFORM, STATUS};
use super::rules::CrossCheckRules;
use super::system_desc::SystemInfo;
use crate::discover::tree::BenchmarkDir;
use crate::finding::code;
use crate::finding::Finding;
use serde_json::Value;

fn same_number(a: &Value, b: &Value) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}

/// Groups the logs by the first value they log for `key`; logs without the
/// key are grouped under `None`.
fn groups<'a>(logs: &[&'a LogFacts], key: &str) -> Vec<(Option<&'a Value>, Vec<&'a str>)> {
    let mut out: Vec<(Option<&Value>, Vec<&str>)> = Vec::new();
    for log in logs {
        let v = log.first.get(key).map(|(_, v)| v);
        let name = log.path.rsplit('/').next().unwrap_or(&log.path);
        match out.iter_mut().find(|(g, _)| match (g, v) {
            (Some(a), Some(b)) => same_number(a, b),
            (None, None) => true,
            _ => false,
        }) {
            Some((_, names)) => names.push(name),
            None => out.push((v, vec![name])),
        }
    }
    out
}

fn describe(groups: &[(Option<&Value>, Vec<&str>)]) -> String {
    groups
        .iter()
        .map(|(v, names)| {
            let v = v.map_or("(not logged)".to_string(), |v| v.to_string());
            format!("{v} in {}", crate::discover::paths::name_list(names))
        })
        .collect::<Vec<_>>()
        .join("; ")
}

pub fn cross_check(
    b: &BenchmarkDir,
    system: Option<&SystemInfo>,
    logs: &[&LogFacts],
    rules: &CrossCheckRules,
    out: &mut Vec<Finding>,
) {
    let readable: Vec<&LogFacts> = logs
        .iter()
        .copied()
        .filter(|l| l.read_error.is_none())
        .collect();
    // Same benchmark and batch size in every run.
    let bm = groups(&readable, BENCHMARK);
    if bm.len() > 1 {
        out.push(
            Finding::of(
                code::PKG016,
                &b.path,
                format!(
                    "runs log different submission_benchmark values: {}",
                    describe(&bm)
                ),
            )
            .with_help("a benchmark folder holds runs of one benchmark only"),
        );
    }
    let gbs = groups(&readable, GBS);
    if gbs.len() > 1 {
        out.push(
            Finding::of(
                code::PKG017,
                &b.path,
                format!(
                    "runs log different global_batch_size values: {}",
                    describe(&gbs)
                ),
            )
            .with_help(
                "all runs of a result must use the same global batch size; the RCP check needs one",
            ),
        );
    }
    let plat = groups(&readable, PLATFORM);
    if plat.len() > 1 {
        out.push(
            Finding::of(
                code::PKG022,
                &b.path,
                format!(
                    "runs log different submission_platform values: {}",
                    describe(&plat)
                ),
            )
            .with_help("all runs of a result should come from the same system"),
        );
    }
    let json_status = system.and_then(|s| s.str_field("status"));
    let mut warnings: Vec<Finding> = Vec::new();
    for log in &readable {
        if let Some((line, v)) = log.first_str(BENCHMARK) {
            if v != b.benchmark {
                out.push(
                    Finding::of(
                        code::PKG015,
                        &log.path,
                        format!(
                            "logs submission_benchmark '{v}' but sits in folder '{}'",
                            b.benchmark
                        ),
                    )
                    .at_line(Some(line))
                    .with_help(
                        "move the log to the folder of its benchmark, or fix the logged name",
                    ),
                );
            }
        }
        for key in [ORG, PLATFORM] {
            if let Some((line, v)) = log.first_str(key) {
                if rules.placeholders.iter().any(|p| v.contains(p.as_str())) {
                    warnings.push(
                        Finding::of(
                            code::PKG021,
                            &log.path,
                            format!("{key} is a template placeholder: '{v}'"),
                        )
                        .at_line(Some(line))
                        .with_help(format!("set {key} to the real value before the run")),
                    );
                }
            }
        }
        let Some(sys) = system else { continue };
        if let (Some((line, v)), Some(submitter)) = (log.first_str(ORG), sys.str_field("submitter"))
        {
            let placeholder = rules.placeholders.iter().any(|p| v.contains(p.as_str()));
            if v != submitter && !placeholder {
                warnings.push(
                    Finding::of(
                        code::PKG018,
                        &log.path,
                        format!("logs submission_org '{v}' but {} says submitter '{submitter}'", sys.path),
                    )
                    .at_line(Some(line))
                    .with_help("a log copied from another organisation's run must be re-run or disclosed (logging#241)"),
                );
            }
        }
        if let (Some((line, v)), Some(div)) = (log.first_str(DIVISION), sys.division()) {
            if v != div {
                out.push(
                    Finding::of(
                        code::PKG019,
                        &log.path,
                        format!("logs submission_division '{v}' but {} says division '{div}'", sys.path),
                    )
                    .at_line(Some(line))
                    .with_help("the logged division selects the compliance rules; it must match the system description"),
                );
            }
        }
        if let (Some((line, v)), Some(status)) = (log.first_str(STATUS), json_status) {
            let meant = rules.status_aliases.get(v).map_or(v, String::as_str);
            if meant != status {
                warnings.push(
                    Finding::of(
                        code::PKG020,
                        &log.path,
                        format!(
                            "logs submission_status '{v}' but {} says status '{status}'",
                            sys.path
                        ),
                    )
                    .at_line(Some(line))
                    .with_help("log the status that matches the system description"),
                );
            }
        }
    }
    out.extend(aggregate(warnings, readable.len()));
}

/// One finding per (code, message) and folder: the first log carries it,
/// the message names every run, so 10 copied logs give one warning.
fn aggregate(warnings: Vec<Finding>, runs: usize) -> Vec<Finding> {
    let mut groups: Vec<(Finding, Vec<String>)> = Vec::new();
    for w in warnings {
        let name = w.path.rsplit('/').next().unwrap_or(&w.path).to_string();
        match groups
            .iter_mut()
            .find(|(g, _)| g.code == w.code && g.message == w.message)
        {
            Some((_, names)) => names.push(name),
            None => groups.push((w, vec![name])),
        }
    }
    groups
        .into_iter()
        .map(|(mut f, names)| {
            if names.len() > 1 {
                f.message = format!(
                    "{} ({} of {runs} runs: {})",
                    f.message,
                    names.len(),
                    crate::discover::paths::name_list(&names)
                );
            }
            f
        })
        .collect()
}
