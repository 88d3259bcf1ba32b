//! The RCP check as `mlperf_logging.rcp_checker` computes it (facts 3 and
//! 8): per-record statistics, pruning, interpolation, the pass test, the
//! missing-RCP cases and messages, bypass and the normalisation factor.

use super::data::{RcpParams, RcpTable};
use super::npmath::{np_interp, np_mean, np_std};
use super::ttest::min_acceptable_mean;
use serde::Serialize;

/// How the RCP table is pruned before matching.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PruneMode {
    /// The official loop, including its off-by-one (logging#368): after a
    /// point is deleted the index does not step back, so the point before it
    /// is never re-tested against its new neighbour.
    #[default]
    Official,
    /// The loop as intended: after a deletion the previous point is re-tested.
    Corrected,
    /// No pruning (`--rcp_pass full_rcps`).
    Full,
}

/// Statistics of one reference point (a record, or an interpolation).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RcpPoint {
    pub name: String,
    pub batch_size: f64,
    /// Olympic mean of the convergence values.
    pub mean: f64,
    /// Population standard deviation of the untrimmed values.
    pub stdev: f64,
    /// Sample count the t-test used (`len - 2 trim`, or `2N` interpolated).
    pub n_ref: f64,
    /// Number of convergence values behind the point (`2N` interpolated).
    pub n_values: usize,
    pub min_epochs: f64,
    pub max_speedup: f64,
    pub interpolated: bool,
}

/// The reference points of one benchmark, with the pruned subset.
#[derive(Debug, Clone)]
pub struct RcpSet {
    pub benchmark: String,
    /// All records, sorted by batch size.
    pub all: Vec<RcpPoint>,
    /// What the check matches against (pruned unless `PruneMode::Full`).
    pub active: Vec<RcpPoint>,
    /// N of the benchmark.
    pub runs: u32,
    alpha: f64,
    tolerance: f64,
}

impl RcpSet {
    /// Computes every record's statistics and prunes. `None` when the
    /// benchmark has no N in `params` or the table is empty.
    pub fn new(table: &RcpTable, params: &RcpParams, mode: PruneMode) -> Option<RcpSet> {
        let runs = *params.runs.get(&table.benchmark)?;
        if table.records.is_empty() {
            return None;
        }
        let trim = params.trim(&table.benchmark);
        let n_subm = runs as f64 - 2.0;
        let mut all: Vec<RcpPoint> = table
            .records
            .iter()
            .map(|rec| {
                let mut v = rec.runs.clone();
                v.sort_by(f64::total_cmp);
                let kept = if v.len() > 2 * trim {
                    &v[trim..v.len() - trim]
                } else {
                    &v[0..0]
                };
                let mean = np_mean(kept);
                let stdev = np_std(&v);
                let n_ref = v.len() as f64 - 2.0 * trim as f64;
                let min_epochs = min_acceptable_mean(
                    mean,
                    stdev,
                    n_ref,
                    n_subm,
                    params.alpha,
                    params.bisection_tolerance,
                );
                RcpPoint {
                    name: rec.name.clone(),
                    batch_size: rec.batch_size,
                    mean,
                    stdev,
                    n_ref,
                    n_values: v.len(),
                    min_epochs,
                    max_speedup: mean / min_epochs,
                    interpolated: false,
                }
            })
            .collect();
        all.sort_by(|a, b| a.batch_size.total_cmp(&b.batch_size));
        let mut set = RcpSet {
            benchmark: table.benchmark.clone(),
            active: Vec::new(),
            all,
            runs,
            alpha: params.alpha,
            tolerance: params.bisection_tolerance,
        };
        set.active = match mode {
            PruneMode::Full => set.all.clone(),
            _ => set.prune(mode == PruneMode::Corrected),
        };
        Some(set)
    }

    /// `_prune_rcps`: drop every point with a smaller batch size than the
    /// fastest-converging one, then every interior point slower than the
    /// interpolation of its neighbours.
    fn prune(&self, corrected: bool) -> Vec<RcpPoint> {
        let Some(fastest) = self
            .all
            .iter()
            .reduce(|best, p| if p.mean < best.mean { p } else { best })
        else {
            return Vec::new();
        };
        let mut pts: Vec<RcpPoint> = self
            .all
            .iter()
            .filter(|p| p.batch_size >= fastest.batch_size)
            .cloned()
            .collect();
        let mut i = 1;
        while i + 1 < pts.len() {
            let mid = np_interp(
                pts[i].batch_size,
                pts[i - 1].batch_size,
                pts[i + 1].batch_size,
                pts[i - 1].mean,
                pts[i + 1].mean,
            );
            if pts[i].mean > mid {
                pts.remove(i);
                // Official: `i = i - 1; i = i + 1` leaves i where it was.
                if corrected && i > 1 {
                    i -= 1;
                }
            } else {
                i += 1;
            }
        }
        pts
    }

    /// `_create_interp_rcp`: mean and stdev interpolated linearly on batch
    /// size, Min Epochs with `n_ref = 2N`.
    pub fn interpolate(&self, bs: f64, lo: &RcpPoint, hi: &RcpPoint) -> RcpPoint {
        let mean = np_interp(bs, lo.batch_size, hi.batch_size, lo.mean, hi.mean);
        let stdev = np_interp(bs, lo.batch_size, hi.batch_size, lo.stdev, hi.stdev);
        let n_ref = self.runs as f64 * 2.0;
        let min_epochs = min_acceptable_mean(
            mean,
            stdev,
            n_ref,
            self.runs as f64 - 2.0,
            self.alpha,
            self.tolerance,
        );
        RcpPoint {
            name: format!("{}_interp_{}", self.benchmark, bs),
            batch_size: bs,
            mean,
            stdev,
            n_ref,
            n_values: self.runs as usize * 2,
            min_epochs,
            max_speedup: mean / min_epochs,
            interpolated: true,
        }
    }
}

/// The outcome of the check for one benchmark folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Pass,
    Fail,
    /// Failed, but turned into a pass by `rcp-bypass`.
    Bypassed,
    NotApplicable,
}

/// The RCP verdict of one benchmark folder, shaped for the JSON report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RcpResult {
    pub verdict: Verdict,
    /// The official message ("RCP found", "RCP Interpolation", ...).
    pub message: String,
    pub global_batch_size: Option<f64>,
    /// Olympic mean of the submission's convergence values.
    pub mean_epochs: Option<f64>,
    /// The summarizer's `samples_to_converge`: the same values trimmed by 1
    /// at each end whatever the benchmark (`mean_epochs` trims 4 for
    /// unet3d; facts §8 M13).
    pub samples_to_converge: Option<f64>,
    pub rcp_mean: Option<f64>,
    /// The smallest passing submission mean (`RCP Mean / Max Speedup`, with
    /// the llama31_405b relaxation applied).
    pub min_epochs: Option<f64>,
    /// What the official checker writes to `scaling.json`: `RCP mean /
    /// submission mean` when the check passes with a faster mean; otherwise
    /// `None` (no `scaling.json`, the score is not scaled).
    pub norm_factor: Option<f64>,
    /// The reference point used, when there was one.
    pub rcp: Option<RcpPoint>,
}

impl RcpResult {
    pub fn not_applicable(message: impl Into<String>) -> RcpResult {
        RcpResult::bare(Verdict::NotApplicable, message, None)
    }

    fn bare(verdict: Verdict, message: impl Into<String>, bs: Option<f64>) -> RcpResult {
        RcpResult {
            verdict,
            message: message.into(),
            global_batch_size: bs,
            mean_epochs: None,
            samples_to_converge: None,
            rcp_mean: None,
            min_epochs: None,
            norm_factor: None,
            rcp: None,
        }
    }

    /// True for pass and bypassed.
    pub fn passed(&self) -> bool {
        matches!(self.verdict, Verdict::Pass | Verdict::Bypassed)
    }

    /// The factor result_summarizer multiplies the score by: the
    /// `scaling.json` value, or 1.0 when none is written.
    pub fn scaling_factor(&self) -> f64 {
        self.norm_factor.unwrap_or(1.0)
    }
}

/// What the check needs to know about a folder's runs (see `reader`).
#[derive(Debug, Clone, PartialEq)]
pub struct SubmissionConvergence {
    /// `None` when no file logs it or the files disagree.
    pub global_batch_size: Option<f64>,
    /// One value per run; a run that did not converge holds
    /// `not_converged_value` (1e9).
    pub values: Vec<f64>,
    pub not_converged: usize,
}

/// Message of the official "Missing RCP" case.
pub fn missing_rcp_message(bs: f64) -> String {
    format!("Missing RCP, please submit RCP with BS = {}", py_num(bs))
}

/// A batch size as Python prints the JSON number (integers without `.0`).
fn py_num(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e16 {
        format!("{}", x as i64)
    } else {
        format!("{x}")
    }
}

/// `check_directory` after the logs are read. `set` is `None` when the
/// ruleset has no RCPs for the benchmark.
pub fn check(
    subm: &SubmissionConvergence,
    benchmark: &str,
    set: Option<&RcpSet>,
    params: &RcpParams,
    bypass: bool,
) -> RcpResult {
    let Some(bs) = subm.global_batch_size else {
        return RcpResult::bare(Verdict::Fail, "Could not detect global_batch_size", None);
    };
    if subm.not_converged > params.trim(benchmark) {
        return RcpResult::bare(Verdict::Fail, "Insufficient convergence", Some(bs));
    }
    let Some(set) = set.filter(|s| !s.active.is_empty()) else {
        return RcpResult::bare(Verdict::Fail, "Cannot find any RCPs", Some(bs));
    };
    let exact = set.active.iter().find(|p| p.batch_size == bs);
    let lower = set
        .active
        .iter()
        .filter(|p| p.batch_size < bs && p.batch_size > 0.0)
        .max_by(|a, b| a.batch_size.total_cmp(&b.batch_size));
    let upper = set
        .active
        .iter()
        .filter(|p| p.batch_size > bs && p.batch_size < 1e9)
        .min_by(|a, b| a.batch_size.total_cmp(&b.batch_size));
    let (point, mut message, eval_fails_as_missing) = match (exact, lower, upper) {
        (Some(p), _, _) => (Some(p.clone()), "RCP found".to_string(), false),
        (None, Some(lo), Some(hi)) => (
            Some(set.interpolate(bs, lo, hi)),
            "RCP Interpolation".to_string(),
            false,
        ),
        (None, Some(_), None) => (None, missing_rcp_message(bs), false),
        (None, None, Some(_)) => {
            // `_find_min_rcp`: the smallest batch size below 1e9.
            let smallest = set
                .active
                .iter()
                .filter(|p| p.batch_size < 1e9)
                .min_by(|a, b| a.batch_size.total_cmp(&b.batch_size))
                .cloned();
            (
                smallest,
                "RCP not found but slower convergence on smaller batch size".to_string(),
                true,
            )
        }
        (None, None, None) => (None, "Cannot find any RCPs".to_string(), false),
    };
    let mut result = RcpResult::bare(Verdict::Fail, String::new(), Some(bs));
    let mut passed = false;
    if let Some(p) = &point {
        let mut max_speedup = p.max_speedup;
        if let Some(relax) = params.min_epochs_relaxation.get(benchmark) {
            max_speedup = p.mean / (p.min_epochs - relax);
        }
        let threshold = p.mean / max_speedup;
        let mut v = subm.values.clone();
        v.sort_by(f64::total_cmp);
        let trim = params.trim(benchmark);
        let kept = if v.len() > 2 * trim {
            &v[trim..v.len() - trim]
        } else {
            &v[0..0]
        };
        let mean_subm = np_mean(kept);
        passed = mean_subm >= threshold;
        let nf = p.mean / mean_subm;
        let nf = if nf < 1.0 { 1.0 } else { nf };
        if passed && mean_subm < p.mean {
            result.norm_factor = Some(nf);
        }
        result.mean_epochs = Some(mean_subm);
        result.samples_to_converge = (v.len() > 2).then(|| np_mean(&v[1..v.len() - 1]));
        result.rcp_mean = Some(p.mean);
        result.min_epochs = Some(threshold);
        if eval_fails_as_missing && !passed {
            message = missing_rcp_message(bs);
        }
    }
    result.rcp = point;
    let bypassable = message == "RCP found"
        || message == "RCP Interpolation"
        || message == missing_rcp_message(bs);
    result.verdict = if passed {
        Verdict::Pass
    } else if bypass && bypassable {
        message.push_str(" passed using rcp_bypass");
        Verdict::Bypassed
    } else {
        Verdict::Fail
    };
    result.message = message;
    result
}

#[cfg(test)]
mod tests {
    use super::super::data::{RcpRecordData, StatsConfig};
    use super::*;
    use crate::rulebook::source::RuleSource;

    fn params() -> RcpParams {
        StatsConfig::load(&RuleSource::Embedded, "training", "5.0.0")
            .map(|c| c.rcp)
            .unwrap_or_else(|e| panic!("{e}"))
    }

    /// A bert table whose records have constant runs, so each mean is `m`.
    fn table(points: &[(f64, f64)]) -> RcpTable {
        RcpTable {
            benchmark: "bert".into(),
            ruleset: "5.0.0".into(),
            source: "test".into(),
            records: points
                .iter()
                .map(|&(bs, m)| RcpRecordData {
                    name: format!("bert_{bs}"),
                    batch_size: bs,
                    runs: vec![m; 4],
                    creator: None,
                    when: None,
                    platform: None,
                    precision: None,
                    hyperparams: serde_yaml::Value::Null,
                })
                .collect(),
        }
    }

    fn kept(t: &RcpTable, mode: PruneMode) -> Vec<f64> {
        RcpSet::new(t, &params(), mode)
            .map(|s| s.active.iter().map(|p| p.batch_size).collect())
            .unwrap_or_default()
    }

    #[test]
    fn pruning_reproduces_the_off_by_one() {
        // /tmp/prune.json holds these records (4 equal runs each); then
        // /opt/mlperf-venv/bin/python -c "from mlperf_logging.rcp_checker.rcp_checker import RCP_Checker as C;
        //   c=C('training','5.0.0','bert',False,open('/tmp/prune.json'));
        //   print(sorted(r['BS'] for r in c.pruned_rcp_data.values()))"
        // [1, 2, 4]: 0.5 goes (smaller BS than the fastest), 3 is slower than
        // the line 2-4, and 2, now slower than the line 1-4, is not re-tested.
        let t = table(&[
            (0.5, 12.0),
            (1.0, 10.0),
            (2.0, 14.0),
            (3.0, 30.0),
            (4.0, 20.0),
        ]);
        assert_eq!(kept(&t, PruneMode::Official), vec![1.0, 2.0, 4.0]);
        assert_eq!(kept(&t, PruneMode::Corrected), vec![1.0, 4.0]);
        assert_eq!(kept(&t, PruneMode::Full), vec![0.5, 1.0, 2.0, 3.0, 4.0]);
    }

    #[test]
    fn messages_for_each_case() {
        let p = params();
        let t = table(&[(100.0, 10.0), (200.0, 12.0)]);
        let set = RcpSet::new(&t, &p, PruneMode::Official);
        let subm = |bs: f64, v: f64| SubmissionConvergence {
            global_batch_size: Some(bs),
            values: vec![v; 10],
            not_converged: 0,
        };
        let run =
            |s: &SubmissionConvergence, bypass: bool| check(s, "bert", set.as_ref(), &p, bypass);
        let r = run(&subm(100.0, 10.0), false);
        assert_eq!(
            (r.verdict, r.message.as_str()),
            (Verdict::Pass, "RCP found")
        );
        assert_eq!(r.norm_factor, None);
        let r = run(&subm(150.0, 11.0), false);
        assert_eq!(
            (r.verdict, r.message.as_str()),
            (Verdict::Pass, "RCP Interpolation")
        );
        let r = run(&subm(50.0, 10.0), false);
        assert_eq!(
            (r.verdict, r.message.as_str()),
            (
                Verdict::Pass,
                "RCP not found but slower convergence on smaller batch size"
            )
        );
        let r = run(&subm(50.0, 9.0), false);
        assert_eq!(
            (r.verdict, r.message.as_str()),
            (Verdict::Fail, "Missing RCP, please submit RCP with BS = 50")
        );
        let r = run(&subm(300.0, 20.0), false);
        assert_eq!(
            (r.verdict, r.message.as_str()),
            (
                Verdict::Fail,
                "Missing RCP, please submit RCP with BS = 300"
            )
        );
        let r = run(&subm(300.0, 20.0), true);
        assert_eq!(r.verdict, Verdict::Bypassed);
        assert_eq!(
            r.message,
            "Missing RCP, please submit RCP with BS = 300 passed using rcp_bypass"
        );
        // Stdev 0: Min Epochs = mean, so anything faster fails.
        let r = run(&subm(100.0, 9.99), false);
        assert_eq!(r.verdict, Verdict::Fail);
        let mut s = subm(100.0, 10.0);
        s.not_converged = 2;
        assert_eq!(run(&s, true).message, "Insufficient convergence");
        assert_eq!(run(&s, true).verdict, Verdict::Fail);
        s.global_batch_size = None;
        assert_eq!(run(&s, true).message, "Could not detect global_batch_size");
        let r = check(&subm(100.0, 10.0), "bert", None, &p, true);
        assert_eq!(
            (r.verdict, r.message.as_str()),
            (Verdict::Fail, "Cannot find any RCPs")
        );
    }

    #[test]
    fn relaxation_for_405b_and_norm_factor() {
        let p = params();
        let mut t = table(&[(1152.0, 0.0)]);
        t.benchmark = "llama31_405b".into();
        t.records[0].runs = vec![313344.0, 313344.0, 313344.0, 331776.0, 313344.0, 294912.0];
        let set = RcpSet::new(&t, &p, PruneMode::Official);
        let min = set.as_ref().map(|s| s.active[0].min_epochs).unwrap_or(0.0);
        // One eval interval (46080) below Min Epochs still passes in 5.0.0+.
        let s = SubmissionConvergence {
            global_batch_size: Some(1152.0),
            values: vec![min - 46000.0; 3],
            not_converged: 0,
        };
        let r = check(&s, "llama31_405b", set.as_ref(), &p, false);
        assert_eq!(r.verdict, Verdict::Pass, "{r:?}");
        let rm = r.rcp_mean.unwrap_or(0.0);
        assert_eq!(r.norm_factor, Some(rm / (min - 46000.0)));
    }
}
