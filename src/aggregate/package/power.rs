//! Power folder checks (official `power_checker.py`): every result log has
//! `power/<result_name>/`, files there are `node_<i>`/`sw_<i>` with indexes
//! in range, and runs agree on the number of node and switch files. A run
//! that fails any of these counts as non-compliant.

use crate::discover::tree::{BenchmarkDir, PowerDir};
use crate::finding::code;
use crate::finding::Finding;
use std::collections::BTreeSet;

fn index_of(name: &str) -> Option<i64> {
    let stem = name.rsplit_once('.').map_or(name, |(s, _)| s);
    stem.rsplit('_').next()?.parse().ok()
}

fn warn(out: &mut Vec<Finding>, path: &str, msg: String) {
    out.push(
        Finding::of(code::PKG023, path, msg)
            .with_help("give each result_<i>.txt a power/result_<i>/ folder with node_<j> and sw_<k> files, the same counts in every run"),
    );
}

/// Returns the names (`result_3`) of runs whose power data is non-compliant.
pub fn check_power(b: &BenchmarkDir, p: &PowerDir, out: &mut Vec<Finding>) -> BTreeSet<String> {
    let mut bad = BTreeSet::new();
    let mut counts: Vec<(String, usize, usize)> = Vec::new();
    for log in &b.result_logs {
        let name = log.path.rsplit('/').next().unwrap_or(&log.path);
        let run = name.strip_suffix(".txt").unwrap_or(name).to_string();
        let Some(files) = p.runs.get(&run) else {
            warn(out, &p.path, format!("no power folder for {run}"));
            bad.insert(run);
            continue;
        };
        let dir = format!("{}/{run}", p.path);
        let nodes: Vec<&String> = files.iter().filter(|f| f.starts_with("node")).collect();
        let sws: Vec<&String> = files.iter().filter(|f| f.starts_with("sw")).collect();
        if files.len() > nodes.len() + sws.len() {
            warn(
                out,
                &dir,
                format!(
                    "{} files, but some are neither node_* nor sw_*",
                    files.len()
                ),
            );
        }
        for (what, list) in [("node", &nodes), ("sw", &sws)] {
            let n = list.len() as i64;
            let ok = list
                .iter()
                .all(|f| index_of(f).is_some_and(|i| (0..n).contains(&i)));
            if !ok {
                warn(
                    out,
                    &dir,
                    format!(
                        "bad naming of {what} power files: expected {what}_x with x in 0..{}",
                        n - 1
                    ),
                );
                bad.insert(run.clone());
            }
        }
        counts.push((run, nodes.len(), sws.len()));
    }
    for (what, pick) in [("node", 1usize), ("sw", 2usize)] {
        let get = |c: &(String, usize, usize)| if pick == 1 { c.1 } else { c.2 };
        // The most frequent count wins; ties go to the first seen, as official.
        let mut best: Option<(usize, usize)> = None;
        for c in &counts {
            let v = get(c);
            let freq = counts.iter().filter(|d| get(d) == v).count();
            if best.is_none_or(|(_, f)| freq > f) {
                best = Some((v, freq));
            }
        }
        if let Some((v, _)) = best {
            for c in counts.iter().filter(|c| get(c) != v) {
                warn(
                    out,
                    &format!("{}/{}", p.path, c.0),
                    format!("{} {what} power files, most runs have {v}", get(c)),
                );
                bad.insert(c.0.clone());
            }
        }
    }
    bad
}
