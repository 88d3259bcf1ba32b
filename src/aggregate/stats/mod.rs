//! RCP statistics, olympic scores and extra per-folder statistics for
//! MLPerf Training result folders (issue 4).
//!
//! - [`reader`]: what each `result_*.txt` says (benchmark, batch size,
//!   convergence value, run times);
//! - [`rcp`]: the RCP check as the official `rcp_checker` does it;
//! - [`olympic`]: the score as `result_summarizer` computes it;
//! - [`spread`], [`ftest`]: extra statistics and their findings;
//! - [`data`]: thresholds and RCP tables under `rules/training/<ver>/`.
//!
//! Per-run compliance verdicts come from the compliance engine: every
//! function that needs them takes `compliant[i]` for the i-th run of
//! [`reader::FolderRuns::runs`] (sorted by file name).

pub mod data;
pub mod ftest;
pub mod npmath;
pub mod olympic;
pub mod rcp;
pub mod reader;
pub mod spread;
pub mod ttest;
pub mod weak;

use crate::finding::code;
use crate::finding::Finding;
use data::{DataError, StatsConfig};
use olympic::Score;
use rcp::{PruneMode, RcpResult, RcpSet, Verdict};
use reader::FolderRuns;
use serde::Serialize;
use spread::Stats;
use std::path::Path;

/// Options of the RCP check.
#[derive(Debug, Clone, Copy, Default)]
pub struct Options {
    /// `rcp-bypass`: turn a bypassable RCP failure into a pass (warning).
    pub rcp_bypass: bool,
    /// `--rcp-bert-train-samples`: BERT convergence from `train_samples`.
    pub bert_train_samples: bool,
    pub prune: PruneMode,
    /// No RCP check (open division, as package_checker): the verdict is
    /// `not_applicable` and the score is not scaled.
    pub skip_rcp: bool,
    /// HPC weak scaling (`weak/<benchmark>`): the number of models the
    /// round requires; the folder gets a weak-scaling score instead of the
    /// olympic one.
    pub weak_scaling: Option<usize>,
}

/// Everything the statistics say about one benchmark folder.
#[derive(Debug, Clone, Serialize)]
pub struct FolderReport {
    pub benchmark: Option<String>,
    pub rcp: RcpResult,
    pub score: Score,
    /// HPC weak scaling: the score result_summarizer gives such a folder.
    pub weak: Option<weak::WeakScore>,
    pub stats: Stats,
    pub findings: Vec<Finding>,
}

#[derive(Debug, thiserror::Error)]
pub enum StatsError {
    #[error(transparent)]
    Data(#[from] DataError),
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
}

/// Reads `dir` and runs the RCP check, the olympic score and the extra
/// statistics. `compliant[i]` is the compliance verdict of the i-th
/// `result_*.txt` by file name.
pub fn check_folder(
    cfg: &StatsConfig,
    dir: &Path,
    compliant: &[bool],
    opts: &Options,
) -> Result<FolderReport, StatsError> {
    let runs = reader::read_folder(dir, &cfg.rcp, opts.bert_train_samples).map_err(|e| {
        StatsError::Io {
            path: dir.display().to_string(),
            source: e,
        }
    })?;
    analyse(cfg, &runs, compliant, opts)
}

/// [`check_folder`] on runs already read.
pub fn analyse(
    cfg: &StatsConfig,
    runs: &FolderRuns,
    compliant: &[bool],
    opts: &Options,
) -> Result<FolderReport, StatsError> {
    let mut findings = Vec::new();
    let mut report = analyse_into(cfg, runs, compliant, opts, &mut |f| findings.push(f))?;
    report.findings = findings;
    Ok(report)
}

/// [`analyse`], each finding handed to `sink` as it is made (the report's
/// `findings` stay empty): a folder of 100,000 runs makes a few findings
/// per run, and `check` keeps only the ones it lists.
pub fn analyse_into(
    cfg: &StatsConfig,
    runs: &FolderRuns,
    compliant: &[bool],
    opts: &Options,
    sink: &mut dyn FnMut(Finding),
) -> Result<FolderReport, StatsError> {
    let folder = runs.dir.display().to_string();
    let benchmark = runs.benchmark().map(str::to_string);
    let subm = runs.convergence_into(&cfg.rcp, sink);
    let rcp = match benchmark.as_deref() {
        _ if opts.skip_rcp => RcpResult {
            global_batch_size: subm.global_batch_size,
            ..RcpResult::not_applicable("open division: no RCP check")
        },
        None => {
            sink(Finding::of(
                code::RCP006,
                &folder,
                "no result file logs submission_benchmark, so the RCP check cannot choose its reference data",
            ));
            RcpResult {
                global_batch_size: subm.global_batch_size,
                ..RcpResult::not_applicable("Could not detect submission_benchmark")
            }
        }
        Some(bm) if cfg.rcp.not_checked_why(bm).is_some() => RcpResult {
            global_batch_size: subm.global_batch_size,
            ..RcpResult::not_applicable(cfg.rcp.not_checked_why(bm).unwrap_or_default())
        },
        Some(bm) => {
            let set = cfg
                .rcp_tables
                .get(bm)
                .and_then(|t| RcpSet::new(t, &cfg.rcp, opts.prune));
            rcp::check(&subm, bm, set.as_ref(), &cfg.rcp, opts.rcp_bypass)
        }
    };
    match rcp.verdict {
        Verdict::Fail => sink(Finding::of(code::RCP001, &folder, rcp_finding_text(&rcp))),
        Verdict::Bypassed => sink(Finding::of(code::RCP002, &folder, rcp_finding_text(&rcp))),
        _ => {}
    }
    let trim = cfg.rcp.trim(benchmark.as_deref().unwrap_or(""));
    let score = olympic::olympic_score(&runs.runs, compliant, trim, rcp.scaling_factor());
    let weak = opts
        .weak_scaling
        .map(|required| weak::weak_score(&runs.runs, compliant, required));
    if let Some(problem) = weak.as_ref().and_then(|w| w.problem.as_ref()) {
        sink(Finding::of(
            code::STA006,
            &folder,
            format!("no weak-scaling score: {problem}"),
        ));
    }
    if score.minutes.is_none() && weak.is_none() {
        sink(Finding::of(
            code::STA005,
            &folder,
            format!(
                "no olympic score: {} of {} runs failed (at most {trim} may) or too few runs remain",
                score.runs_failed,
                runs.runs.len()
            ),
        ));
    }
    let minutes: Vec<f64> = spread::converged_minutes(&runs.runs, compliant)
        .into_iter()
        .map(|c| c.1)
        .collect();
    let stats = spread::spread(&minutes, cfg.extras.ci_level);
    spread::copy_findings_into(&runs.runs, &cfg.extras, sink);
    spread::outlier_findings(&runs.runs, compliant, &cfg.extras)
        .into_iter()
        .for_each(&mut *sink);
    if let Some(point) = &rcp.rcp {
        spread::variance_findings(&runs.runs, point, &cfg.extras, &folder)
            .into_iter()
            .for_each(&mut *sink);
    }
    Ok(FolderReport {
        benchmark,
        rcp,
        score,
        weak,
        stats,
        findings: Vec::new(),
    })
}

fn rcp_finding_text(r: &RcpResult) -> String {
    match (r.mean_epochs, r.min_epochs, r.rcp_mean) {
        (Some(m), Some(min), Some(rm)) => format!(
            "the runs converge faster than the reference allows: mean {} against a minimum of {} (reference mean {}); official: {}",
            short(m),
            short(min),
            short(rm),
            r.message
        ),
        _ => format!("RCP check failed: {}", r.message),
    }
}

/// A convergence value for a message: at most 4 decimals, trailing zeros
/// dropped (`348904.5103`, `3.21`).
fn short(x: f64) -> String {
    let s = format!("{x:.4}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_string()
}

/// Whether a `package_checker_params` file turns on `rcp-bypass`, as
/// package_checker reads it: each line is compared with `"rcp-bypass"`
/// including its line ending, so only a last line without a trailing
/// newline matches (reproduced quirk, see rules/README-rcp.md).
pub fn params_file_requests_bypass(text: &str) -> bool {
    text.split_inclusive('\n').any(|l| l == "rcp-bypass")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rulebook::codes::CodeRegistry;
    use crate::rulebook::source::RuleSource;

    #[test]
    fn params_file_newline_quirk() {
        assert!(params_file_requests_bypass("rcp-bypass"));
        assert!(params_file_requests_bypass("other\nrcp-bypass"));
        assert!(!params_file_requests_bypass("rcp-bypass\n"));
        assert!(!params_file_requests_bypass("rcp-bypass\r\n"));
    }

    #[test]
    fn every_emitted_code_is_documented() {
        let reg = CodeRegistry::load(&RuleSource::Embedded).unwrap_or_else(|e| panic!("{e}"));
        for code in [
            code::RCP001,
            code::RCP002,
            code::RCP003,
            code::RCP004,
            code::RCP005,
            code::RCP006,
            code::STA001,
            code::STA002,
            code::STA003,
            code::STA004,
            code::STA005,
            code::STA006,
        ]
        .map(|c| c.id)
        {
            assert!(
                reg.get(code).is_some(),
                "{code} is not in rules/codes/stats.yaml"
            );
        }
    }

    #[test]
    fn stats_data_loads_for_every_ruleset() {
        let source = RuleSource::Embedded;
        for (u, v) in crate::check::rules::available_rulesets(&source) {
            let cfg = StatsConfig::load(&source, &u, &v).unwrap_or_else(|e| panic!("{e}"));
            let files = source.list(&format!("{u}/{v}/rcp"));
            assert_eq!(cfg.rcp_tables.len(), files.len(), "{v}");
            for (bm, t) in &cfg.rcp_tables {
                assert!(
                    RcpSet::new(t, &cfg.rcp, PruneMode::Official).is_some(),
                    "{v}/{bm}"
                );
            }
        }
    }
}
