//! The HPC weak-scaling score as result_summarizer computes it
//! (`_compute_weak_score_standalone`): a system trains M models at once,
//! each on S accelerators; the score is the time to train all of them.
//!
//! Every compliant run with `run_start` and `run_stop` is one model; the
//! time to train all is the last stop minus the first start, in minutes;
//! the instance scale is `int(number_of_nodes) * max(int(accelerators_per_node), 1)`
//! and must be the same in every run. No RCP factor scales it, and
//! `run_stop.status` is not looked at (as official).

use super::reader::RunInfo;
use serde::Serialize;
use serde_json::Value;

/// A weak-scaling folder's score, shaped for the JSON report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WeakScore {
    /// Minutes from the first `run_start` to the last `run_stop` of the
    /// models counted; `None` when fewer than `required` models count.
    pub time_to_train_all: Option<f64>,
    /// Models counted (M).
    pub number_of_models: usize,
    /// Accelerators per model (S); `None` when no counted run logs it.
    pub instance_scale: Option<u64>,
    /// Models the round requires at least (the strong-scaling file count).
    pub required: usize,
    /// Why there is no score, in one line.
    pub problem: Option<String>,
}

/// Python's `int()` of a logged value: a number is truncated, a string must
/// spell an integer. `None` where Python raises ValueError (or TypeError:
/// the official summarizer crashes there; mlaudit skips the run).
fn py_int(v: &Value) -> Option<i64> {
    match v {
        Value::Number(n) => n.as_i64().or_else(|| {
            n.as_f64()
                .filter(|f| f.is_finite())
                .map(|f| f.trunc() as i64)
        }),
        Value::Bool(b) => Some(i64::from(*b)),
        Value::String(s) => s.trim().replace('_', "").parse().ok(),
        _ => None,
    }
}

/// The score of the runs of one `weak/<benchmark>` folder; `compliant[i]`
/// is the compliance verdict of `runs[i]`.
pub fn weak_score(runs: &[RunInfo], compliant: &[bool], required: usize) -> WeakScore {
    let mut start = f64::INFINITY;
    let mut stop = f64::NEG_INFINITY;
    let mut models = 0usize;
    let mut scale: Option<i64> = None;
    let mut problem = None;
    for (i, run) in runs.iter().enumerate() {
        if !compliant.get(i).copied().unwrap_or(false) {
            continue;
        }
        let (Some(a), Some(b)) = (run.run_start_ms, run.run_stop_ms) else {
            continue;
        };
        start = start.min(a);
        stop = stop.max(b);
        // Counted before the scale is read, as official: a run whose scale
        // cannot be read still counts as a model.
        models += 1;
        let nodes = run.number_of_nodes.as_ref().and_then(py_int);
        let per_node = run.accelerators_per_node.as_ref().and_then(py_int);
        let (Some(nodes), Some(per_node)) = (nodes, per_node) else {
            continue;
        };
        let s = nodes.saturating_mul(per_node.max(1));
        match scale {
            None => scale = Some(s),
            Some(first) if first != s && problem.is_none() => {
                problem = Some(format!(
                    "instance scale differs between runs ({first} and {s} in {}); the official result_summarizer stops on an AssertionError",
                    run.name
                ));
            }
            Some(_) => {}
        }
    }
    if problem.is_none() && models < required {
        problem = Some(format!(
            "not enough converging weak scaling runs: {models} compliant with run_start and run_stop, at least {required} required"
        ));
    }
    WeakScore {
        time_to_train_all: problem.is_none().then_some((stop - start) / 60.0 / 1000.0),
        number_of_models: models,
        instance_scale: scale.and_then(|s| u64::try_from(s).ok()),
        required,
        problem,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(name: &str, start: f64, stop: f64, nodes: Value, per_node: Value) -> RunInfo {
        let params = crate::aggregate::stats::data::StatsConfig::load(
            &crate::rulebook::source::RuleSource::Embedded,
            "hpc",
            "3.0.0",
        )
        .unwrap_or_else(|e| panic!("{e}"))
        .rcp;
        let mut r = crate::aggregate::stats::reader::RunCollector::new(&params, false)
            .finish(Default::default(), std::path::Path::new(name));
        r.run_start_ms = Some(start);
        r.run_stop_ms = Some(stop);
        r.number_of_nodes = Some(nodes);
        r.accelerators_per_node = Some(per_node);
        r
    }

    #[test]
    fn time_to_train_all_spans_the_counted_models() {
        let runs: Vec<RunInfo> = (0..5)
            .map(|i| {
                let s = i as f64 * 1000.0;
                run(
                    &format!("result_{i}.txt"),
                    s,
                    s + 600_000.0,
                    json!(4),
                    json!("8"),
                )
            })
            .collect();
        let w = weak_score(&runs, &[true; 5], 5);
        assert_eq!(w.number_of_models, 5);
        assert_eq!(w.instance_scale, Some(32));
        let t = w.time_to_train_all.unwrap_or(f64::NAN);
        assert!((t - (4000.0 + 600_000.0) / 60_000.0).abs() < 1e-12, "{t}");
        // A non-compliant run is not a model: one short of the count.
        let w = weak_score(&runs, &[true, true, false, true, true], 5);
        assert_eq!((w.number_of_models, w.time_to_train_all), (4, None));
        assert!(w.problem.unwrap_or_default().contains("not enough"));
    }

    #[test]
    fn cpu_systems_count_one_accelerator_per_node() {
        let runs = [run("result_0.txt", 0.0, 1.0, json!("512"), json!("0"))];
        assert_eq!(weak_score(&runs, &[true], 1).instance_scale, Some(512));
    }

    #[test]
    fn a_changing_instance_scale_has_no_score() {
        let runs = [
            run("result_0.txt", 0.0, 1.0, json!(4), json!(8)),
            run("result_1.txt", 0.0, 1.0, json!(8), json!(8)),
        ];
        let w = weak_score(&runs, &[true, true], 1);
        assert_eq!(w.time_to_train_all, None);
        assert!(w.problem.unwrap_or_default().contains("AssertionError"));
    }
}
