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
    /// Runs read (result logs of the folder): `runs_used + runs_failed`.
    pub runs_read: usize,
    /// Runs the olympic mean is taken over (0 when there is no score).
    pub runs_counted: usize,
    /// Fastest runs the olympic mean drops.
    pub runs_dropped_fastest: usize,
    /// Slowest runs the olympic mean drops (failed runs take the place of
    /// the slowest, so this is what trimming leaves after them).
    pub runs_dropped_slowest: usize,
}

impl Score {
    /// `5 runs read: 3 counted, 2 dropped (fastest, slowest), 0 failed`,
    /// the same words in every format.
    pub fn describe(&self) -> String {
        let runs = if self.runs_read == 1 { "run" } else { "runs" };
        let dropped = self.runs_dropped_fastest + self.runs_dropped_slowest;
        let which = match (self.runs_dropped_fastest, self.runs_dropped_slowest) {
            (0, 0) => String::new(),
            (_, 0) => " (fastest)".to_string(),
            (0, _) => " (slowest)".to_string(),
            (f, s) if f == 1 && s == 1 => " (fastest, slowest)".to_string(),
            (f, s) => format!(" ({f} fastest, {s} slowest)"),
        };
        let failed = if self.runs_failed > 0 {
            " (counted as the slowest)"
        } else {
            ""
        };
        if self.minutes.is_none() {
            return format!(
                "{} {runs} read: none counted (no score), {} failed",
                self.runs_read, self.runs_failed
            );
        }
        format!(
            "{} {runs} read: {} counted, {dropped} dropped{which}, {} failed{failed}",
            self.runs_read, self.runs_counted, self.runs_failed
        )
    }
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
    let (counted, fastest, slowest) = match minutes {
        Some(_) => {
            let (start, end) = kept_window(scores.len(), dropped, trim);
            (end - start, start, scores.len() - end)
        }
        None => (0, 0, 0),
    };
    Score {
        minutes,
        runs_used: scores.len(),
        runs_failed: dropped,
        scaling_factor,
        runs_read: runs.len(),
        runs_counted: counted,
        runs_dropped_fastest: fastest,
        runs_dropped_slowest: slowest,
    }
}

/// The part of `len` sorted scores the olympic mean keeps:
/// `scores[trim .. len - (trim - dropped)]` with Python slice semantics.
fn kept_window(len: usize, dropped: usize, trim: usize) -> (usize, usize) {
    let n = len as i64;
    let end = (n - (trim as i64 - dropped as i64)).clamp(0, n) as usize;
    (trim.min(len), end)
}

/// `_compute_olympic_average`: sort, keep `scores[trim .. len - (trim - dropped)]`
/// (Python slice semantics), Python `sum`, divide.
pub fn olympic_average(scores: &mut [f64], dropped: usize, trim: usize) -> Option<f64> {
    scores.sort_by(f64::total_cmp);
    let (start, end) = kept_window(scores.len(), dropped, trim);
    if start >= end {
        return None;
    }
    let kept = &scores[start..end];
    Some(py_sum(kept) / kept.len() as f64)
}

/// What the olympic score does with a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    Counted,
    /// Among the fastest runs the olympic mean drops.
    DroppedFastest,
    /// Among the slowest runs the olympic mean drops.
    DroppedSlowest,
    /// Not compliant or without run_start/run_stop: counts as the slowest.
    Failed,
    /// Too many failed runs: no score.
    Unscored,
}

impl Role {
    pub fn describe(self) -> &'static str {
        match self {
            Role::Counted => "counted",
            Role::DroppedFastest => "dropped (fastest)",
            Role::DroppedSlowest => "dropped (slowest)",
            Role::Failed => "failed (counts as the slowest)",
            Role::Unscored => "no score",
        }
    }
}

/// What [`olympic_score`] does with each run (`runs[i]`): the `trim`
/// fastest and the slowest are dropped, failed runs replace the slowest;
/// ties keep the order of the runs.
pub fn roles(runs: &[RunInfo], compliant: &[bool], trim: usize) -> Vec<Role> {
    let mut roles = vec![Role::Failed; runs.len()];
    let mut scored: Vec<(usize, f64)> = runs
        .iter()
        .enumerate()
        .filter(|(i, _)| compliant.get(*i).copied().unwrap_or(false))
        .filter_map(|(i, r)| r.minutes().map(|m| (i, m)))
        .collect();
    let failed = runs.len() - scored.len();
    if failed > trim {
        for (i, _) in &scored {
            roles[*i] = Role::Unscored;
        }
        return roles;
    }
    scored.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
    let (start, end) = kept_window(scored.len(), failed, trim);
    for (k, (i, _)) in scored.iter().enumerate() {
        roles[*i] = if k < start {
            Role::DroppedFastest
        } else if k >= end {
            Role::DroppedSlowest
        } else {
            Role::Counted
        };
    }
    roles
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

    fn run(name: &str, minutes: Option<f64>) -> RunInfo {
        RunInfo {
            path: name.into(),
            name: name.into(),
            run_start_ms: minutes.map(|_| 0.0),
            run_stop_ms: minutes.map(|m| m * 60_000.0),
            ..RunInfo::default()
        }
    }

    #[test]
    fn the_score_says_what_it_did_with_each_run() {
        let runs: Vec<RunInfo> = [3.0, 1.0, 5.0, 2.0, 4.0]
            .iter()
            .enumerate()
            .map(|(i, m)| run(&format!("r{i}"), Some(*m)))
            .collect();
        let s = olympic_score(&runs, &[true; 5], 1, 1.0);
        assert_eq!((s.runs_read, s.runs_counted), (5, 3));
        assert_eq!(
            s.describe(),
            "5 runs read: 3 counted, 2 dropped (fastest, slowest), 0 failed"
        );
        let s = olympic_score(&runs, &[true, true, false, true, true], 1, 1.0);
        assert_eq!(
            s.describe(),
            "5 runs read: 3 counted, 1 dropped (fastest), 1 failed (counted as the slowest)"
        );
        let s = olympic_score(&runs, &[false, true, false, true, true], 1, 1.0);
        assert_eq!(
            s.describe(),
            "5 runs read: none counted (no score), 2 failed"
        );
    }

    #[test]
    fn olympic_roles_follow_the_score() {
        use Role::*;
        let runs: Vec<RunInfo> = [3.0, 1.0, 5.0, 2.0, 4.0]
            .iter()
            .enumerate()
            .map(|(i, m)| run(&format!("r{i}"), Some(*m)))
            .collect();
        assert_eq!(
            roles(&runs, &[true; 5], 1),
            vec![Counted, DroppedFastest, DroppedSlowest, Counted, Counted]
        );
        // A failed run replaces the slowest: only the fastest is dropped.
        assert_eq!(
            roles(&runs, &[true, true, false, true, true], 1),
            vec![Counted, DroppedFastest, Failed, Counted, Counted]
        );
        assert_eq!(
            roles(&runs, &[false, true, false, true, true], 1),
            vec![Failed, Unscored, Failed, Unscored, Unscored]
        );
    }
}
