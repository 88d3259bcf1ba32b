//! The olympic score as result_summarizer computes it (facts 3.7, 8 M13).

use super::npmath::py_sum;
use super::reader::RunInfo;
use serde::Serialize;

/// A folder's score, shaped for the JSON report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Score {
    /// Olympic mean of the runs' minutes times the scaling factor; `None`
    /// when too many runs failed or no run is left after trimming.
    pub minutes: Option<f64>,
    /// Runs that counted (compliant, with run_start and run_stop).
    pub runs_used: usize,
    /// Runs dropped: not compliant, or without run_start/run_stop.
    pub runs_failed: usize,
    pub scaling_factor: f64,
}

/// `_compute_strong_score_standalone`: every run whose log is compliant
/// (`compliant[i]` for `runs[i]`, from the compliance engine) and has
/// `run_start` and `run_stop` gives `(stop - start) / 60000` minutes; the
/// `trim` fastest are dropped and failed runs replace the slowest. The file
/// count is not checked (as the summarizer does not), and `run_stop.status`
/// is not looked at.
pub fn olympic_score(
    runs: &[RunInfo],
    compliant: &[bool],
    trim: usize,
    scaling_factor: f64,
) -> Score {
    let mut scores: Vec<f64> = Vec::new();
    let mut dropped = 0usize;
    for (i, run) in runs.iter().enumerate() {
        match (compliant.get(i).copied().unwrap_or(false), run.minutes()) {
            (true, Some(m)) => scores.push(m),
            _ => dropped += 1,
        }
    }
    let minutes = if dropped > trim {
        None
    } else {
        olympic_average(&mut scores, dropped, trim).map(|avg| avg * scaling_factor)
    };
    Score {
        minutes,
        runs_used: scores.len(),
        runs_failed: dropped,
        scaling_factor,
    }
}

/// `_compute_olympic_average`: sort, keep `scores[trim .. len - (trim - dropped)]`
/// (Python slice semantics), Python `sum`, divide.
pub fn olympic_average(scores: &mut [f64], dropped: usize, trim: usize) -> Option<f64> {
    scores.sort_by(f64::total_cmp);
    let len = scores.len() as i64;
    let end = (len - (trim as i64 - dropped as i64)).clamp(0, len) as usize;
    let start = trim.min(scores.len());
    if start >= end {
        return None;
    }
    let kept = &scores[start..end];
    Some(py_sum(kept) / kept.len() as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn olympic_drops_fastest_and_slowest() {
        let mut s = vec![5.0, 1.0, 3.0, 4.0, 2.0];
        assert_eq!(olympic_average(&mut s, 0, 1), Some(3.0));
        // One failed run takes the place of the slowest: only the fastest
        // of the remaining four is dropped.
        let mut s = vec![1.0, 2.0, 3.0, 4.0];
        assert_eq!(olympic_average(&mut s, 1, 1), Some(3.0));
        let mut s = vec![1.0];
        assert_eq!(olympic_average(&mut s, 0, 1), None);
    }

    #[test]
    fn worked_example_from_the_facts() {
        // facts 3.5: minutes 3.33 + i (i = 0..8), one aborted run dropped,
        // olympic mean 7.833, x 1.0125604 = 7.9317.
        let mut s: Vec<f64> = (0..9).map(|i| 3.33 + i as f64).collect();
        let avg = olympic_average(&mut s, 1, 1).unwrap_or(f64::NAN);
        assert!((avg - 7.83).abs() < 1e-9, "{avg}");
    }
}
