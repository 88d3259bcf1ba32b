//! Extra per-folder statistics (issue 4): spread of the time to train,
//! copied runs, MAD outliers and the convergence-variance F-test.

use super::data::ExtraParams;
use super::ftest::{f_test, sample_variance};
use super::rcp::RcpPoint;
use super::reader::RunInfo;
use crate::finding::code;
use crate::finding::Finding;
use serde::Serialize;
use statrs::distribution::{ContinuousCDF, StudentsT};

/// Spread of the time to train of the converged runs, for the JSON report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Stats {
    /// Converged runs: compliant, `run_stop` status success, with times.
    pub n: usize,
    pub mean_minutes: Option<f64>,
    /// Sample standard deviation / mean.
    pub cv: Option<f64>,
    /// Student-t interval of the mean, at `ci_level` (0.95).
    pub ci95_minutes: Option<[f64; 2]>,
}

/// Minutes of the converged runs, with their indices in `runs`.
pub fn converged_minutes(runs: &[RunInfo], compliant: &[bool]) -> Vec<(usize, f64)> {
    runs.iter()
        .enumerate()
        .filter(|(i, r)| compliant.get(*i).copied().unwrap_or(false) && r.succeeded())
        .filter_map(|(i, r)| r.minutes().map(|m| (i, m)))
        .collect()
}

/// n, mean, CV and the Student-t interval of `minutes`.
pub fn spread(minutes: &[f64], ci_level: f64) -> Stats {
    let n = minutes.len();
    if n == 0 {
        return Stats {
            n,
            mean_minutes: None,
            cv: None,
            ci95_minutes: None,
        };
    }
    let mean = minutes.iter().sum::<f64>() / n as f64;
    let sd = sample_variance(minutes).map(f64::sqrt);
    let cv = sd.filter(|_| mean != 0.0).map(|s| s / mean);
    let ci = sd.and_then(|s| {
        let t = StudentsT::new(0.0, 1.0, (n - 1) as f64).ok()?;
        let q = t.inverse_cdf(0.5 + ci_level / 2.0);
        let half = q * s / (n as f64).sqrt();
        Some([mean - half, mean + half])
    });
    Stats {
        n,
        mean_minutes: Some(mean),
        cv,
        ci95_minutes: ci,
    }
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Modified z-scores `0.6745 (x - median) / MAD` (Iglewicz and Hoaglin);
/// `None` when MAD is 0 or there are fewer than 3 values.
pub fn mad_z_scores(values: &[f64]) -> Option<Vec<f64>> {
    if values.len() < 3 {
        return None;
    }
    let med = median(&mut values.to_vec());
    let mut dev: Vec<f64> = values.iter().map(|x| (x - med).abs()).collect();
    let mad = median(&mut dev);
    if mad.is_nan() || mad <= 0.0 {
        return None;
    }
    Some(values.iter().map(|x| 0.6745 * (x - med) / mad).collect())
}

/// STA002: converged runs whose training rate (minutes per convergence
/// unit) is a MAD outlier and differs from the median rate by more than
/// `mad_min_rel_deviation`. The rate, unlike the raw time to train, does not
/// jump when a run needs one more evaluation to converge.
pub fn outlier_findings(runs: &[RunInfo], compliant: &[bool], p: &ExtraParams) -> Vec<Finding> {
    let conv: Vec<(usize, f64, f64)> = converged_minutes(runs, compliant)
        .into_iter()
        .filter_map(|(i, m)| {
            let c = runs[i].convergence.filter(|c| *c > 0.0)?;
            Some((i, m, m / c))
        })
        .collect();
    let rates: Vec<f64> = conv.iter().map(|c| c.2).collect();
    let Some(z) = mad_z_scores(&rates) else {
        return Vec::new();
    };
    let med = median(&mut rates.clone());
    conv.iter()
        .zip(z)
        .filter(|((_, _, r), z)| {
            z.abs() > p.mad_z_threshold && ((r - med) / med).abs() > p.mad_min_rel_deviation
        })
        .map(|((i, m, r), z)| {
            Finding::of(
                code::STA002,
                &runs[*i].path.display().to_string(),
                format!(
                    "training rate {:.4e} min per unit ({m:.3} min to train) is {:+.0}% from the median rate of the converged runs (modified z-score {z:.1}; thresholds {} and {:.0}%)",
                    r,
                    (r - med) / med * 100.0,
                    p.mad_z_threshold,
                    p.mad_min_rel_deviation * 100.0
                ),
            )
        })
        .collect()
}

/// The eval grid step: the median positive gap between consecutive
/// evaluations of the runs; `None` without two evaluations.
pub fn eval_grid_step(runs: &[RunInfo]) -> Option<f64> {
    let mut gaps: Vec<f64> = runs
        .iter()
        .flat_map(|r| r.eval_steps.windows(2).map(|w| w[1] - w[0]))
        .filter(|g| *g > 0.0)
        .collect();
    if gaps.is_empty() {
        None
    } else {
        Some(median(&mut gaps))
    }
}

/// STA001: runs that are copies of each other: identical MLLOG records, or
/// identical eval trajectories of at least `copy_min_evals` evaluations.
pub fn copy_findings(runs: &[RunInfo], p: &ExtraParams) -> Vec<Finding> {
    let mut out = Vec::new();
    copy_findings_into(runs, p, &mut |f| out.push(f));
    out
}

/// [`copy_findings`], each handed to `sink` as it is made.
pub fn copy_findings_into(runs: &[RunInfo], p: &ExtraParams, sink: &mut dyn FnMut(Finding)) {
    // Each run is compared with the earliest earlier run it copies, found
    // by hash in two maps (first run of each content hash and of each
    // evaluation trajectory): one pass, where comparing every pair took
    // billions of steps on a folder of 100,000 different logs. The same
    // run is named as comparing every pair in order would: the earliest
    // match, and the records before the trajectory at the same run.
    use std::collections::hash_map::{Entry, HashMap};
    let mut by_content: HashMap<u64, usize> = HashMap::new();
    let mut by_evals: HashMap<(usize, u64), usize> = HashMap::new();
    for (j, b) in runs.iter().enumerate() {
        let content = by_content.get(&b.content_hash).copied();
        let evals = (b.eval_count >= p.copy_min_evals)
            .then(|| by_evals.get(&(b.eval_count, b.eval_hash)).copied())
            .flatten();
        let found = match (content, evals) {
            (Some(c), Some(e)) if e < c => Some((e, false)),
            (Some(c), _) => Some((c, true)),
            (None, Some(e)) => Some((e, false)),
            (None, None) => None,
        };
        if let Entry::Vacant(v) = by_content.entry(b.content_hash) {
            v.insert(j);
        }
        if b.eval_count >= p.copy_min_evals {
            if let Entry::Vacant(v) = by_evals.entry((b.eval_count, b.eval_hash)) {
                v.insert(j);
            }
        }
        let Some((i, same_records)) = found else {
            continue;
        };
        let a = &runs[i];
        let what = if same_records {
            "has the same MLLOG records as"
        } else {
            "has the same evaluation trajectory (every eval_accuracy value and metadata) as"
        };
        sink(Finding::of(
            code::STA001,
            &b.path.display().to_string(),
            format!("{} {what} {}: a run seems to be copied", b.name, a.name),
        ));
    }
}

/// STA003/STA004: F-test of the converged runs' convergence variance against
/// the variance of the reference point (its population stdev, made
/// unbiased with its value count).
pub fn variance_findings(
    runs: &[RunInfo],
    point: &RcpPoint,
    p: &ExtraParams,
    folder: &str,
) -> Vec<Finding> {
    let values: Vec<f64> = runs.iter().filter_map(|r| r.convergence).collect();
    let n_ref = point.n_values;
    let Some(var_subm) = sample_variance(&values) else {
        return Vec::new();
    };
    if n_ref < 2 {
        return Vec::new();
    }
    let var_ref = point.stdev * point.stdev * n_ref as f64 / (n_ref - 1) as f64;
    // A variance below the quantisation variance of the eval grid is no
    // evidence of too little spread: floor it for the low side.
    let floor = eval_grid_step(runs).map_or(0.0, |h| h * h / 12.0);
    let (Some(low), Some(high)) = (
        f_test(var_subm.max(floor), values.len(), var_ref, n_ref),
        f_test(var_subm, values.len(), var_ref, n_ref),
    ) else {
        return Vec::new();
    };
    let (code, side, pv, t) = if low.p_low < p.f_test_alpha {
        (code::STA003, "small", low.p_low, low)
    } else if high.p_high < p.f_test_alpha {
        (code::STA004, "large", high.p_high, high)
    } else {
        return Vec::new();
    };
    vec![Finding::of(
        code,
        folder,
        format!(
            "convergence variance of the {} converged runs is implausibly {side} against the RCP at batch size {} (sd {:.4} (grid floor {:.4}) vs {:.4}, F = {:.4}, p = {pv:.2e}, alpha {})",
            values.len(),
            point.batch_size,
            var_subm.sqrt(),
            floor.sqrt(),
            var_ref.sqrt(),
            t.f,
            p.f_test_alpha
        ),
    )]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_matches_scipy() {
        // /opt/mlperf-venv/bin/python -c "import numpy as np, scipy.stats as s; x=[10.0,11.0,12.5,9.5,10.5];
        //   m=np.mean(x); sd=np.std(x,ddof=1); print(m, sd/m, s.t.interval(0.95, 4, loc=m, scale=sd/np.sqrt(5)))"
        // -> 10.7 0.10757817227309664 (9.270737404506487, 12.129262595493511)
        const CV: f64 = 0.10757817227309664;
        const CI_LO: f64 = 9.270737404506487;
        const CI_HI: f64 = 12.129262595493511;
        let s = spread(&[10.0, 11.0, 12.5, 9.5, 10.5], 0.95);
        assert_eq!(s.n, 5);
        let m = s.mean_minutes.unwrap();
        assert!((m - 10.7).abs() < 1e-12);
        assert!((s.cv.unwrap() - CV).abs() < 1e-12, "{s:?}");
        let ci = s.ci95_minutes.unwrap();
        assert!(
            (ci[0] - CI_LO).abs() < 1e-9 && (ci[1] - CI_HI).abs() < 1e-9,
            "{ci:?}"
        );
    }

    #[test]
    fn mad_matches_hand_figures() {
        // median 11, |dev| = [1,0,2,1,9] -> MAD 1; z(20) = 0.6745 * 9 = 6.0705
        let z = mad_z_scores(&[10.0, 11.0, 9.0, 12.0, 20.0]).unwrap();
        assert!((z[4] - 6.0705).abs() < 1e-12, "{z:?}");
        assert!(mad_z_scores(&[1.0, 1.0, 1.0, 5.0]).is_none());
    }

    fn plain_run(name: &str) -> RunInfo {
        RunInfo {
            path: name.into(),
            name: name.into(),
            ..RunInfo::default()
        }
    }

    /// Comparing every pair in order, as `copy_findings_into` did before
    /// it looked runs up by hash.
    fn copies_by_pairs(runs: &[RunInfo], min: usize) -> Vec<String> {
        let mut out = Vec::new();
        for (j, b) in runs.iter().enumerate() {
            for a in &runs[..j] {
                let what = if a.content_hash == b.content_hash {
                    "records"
                } else if a.eval_count >= min
                    && (a.eval_count, a.eval_hash) == (b.eval_count, b.eval_hash)
                {
                    "evals"
                } else {
                    continue;
                };
                out.push(format!("{} {what} {}", b.name, a.name));
                break;
            }
        }
        out
    }

    #[test]
    fn copies_found_by_hash_are_the_copies_every_pair_finds() {
        let p = ExtraParams {
            ci_level: 0.95,
            mad_z_threshold: 3.5,
            mad_min_rel_deviation: 0.0,
            copy_min_evals: 3,
            f_test_alpha: 0.05,
        };
        // A small deterministic generator: few distinct hashes and eval
        // counts around the minimum, so that every kind of match (records,
        // trajectory, both, with earlier and later partners) happens.
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        for _ in 0..300 {
            let n = 1 + next(12) as usize;
            let runs: Vec<RunInfo> = (0..n)
                .map(|i| {
                    let mut r = plain_run(&format!("r{i}"));
                    r.content_hash = next(4);
                    r.eval_count = 1 + next(4) as usize;
                    r.eval_hash = next(3);
                    r
                })
                .collect();
            let fast: Vec<String> = copy_findings(&runs, &p)
                .iter()
                .map(|f| {
                    let (b, rest) = f.message.split_once(' ').unwrap_or_default();
                    let what = if rest.starts_with("has the same MLLOG") {
                        "records"
                    } else {
                        "evals"
                    };
                    let a = rest.split(" as ").nth(1).and_then(|t| t.split(':').next());
                    format!("{b} {what} {}", a.unwrap_or_default())
                })
                .collect();
            assert_eq!(fast, copies_by_pairs(&runs, p.copy_min_evals));
        }
    }
}
