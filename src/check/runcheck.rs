//! Checks of one run that the written rules make and the official
//! compliance checker does not (codes `RUN*`, all `extra`): they change
//! mlaudit's own verdict, never `official_verdict`.
//!
//! - `RUN001` a second `run_start` or `run_stop` (a restarted clock, or
//!   contradicting statuses): the official checker only warns when the
//!   values agree. An error.
//! - `RUN002` a `run_stop` whose status is not `success`: the run did not
//!   converge. An error for a log checked on its own (it is no result); a
//!   warning in a benchmark folder, where olympic scoring may drop it as
//!   the slowest run.
//! - `RUN003` a closed-division log that records no `seed`, checked on its
//!   own (in a package the seed checks, `SEED*`, see it).
//! - `RUN004` the official RCP checker takes the batch size from the last
//!   record whose key contains `global_batch_size`: when that is another
//!   key (`global_batch_size_per_node`) with another value than the logged
//!   `global_batch_size`, the RCP verdict (official, and mlaudit's, which
//!   follows it) is computed on the wrong batch size. A warning.
//!
//! The facts are gathered during the one pass over the log that the
//! other non-compliance checks share ([`Collector`]).

use crate::finding::{code, Finding, Severity};
use crate::mllog::Event;
use crate::rulebook::codes::CodeRegistry;

/// Whether the collector needs records of key `k`.
pub fn wanted(k: &str) -> bool {
    matches!(k, "run_start" | "run_stop" | "seed" | "submission_division") || k.contains(GBS)
}

const GBS: &str = "global_batch_size";

/// What the checks read from a log.
#[derive(Debug, Default, Clone)]
pub struct Collector {
    /// `(line, time_ms)` of every `run_start`.
    starts: Vec<(u64, f64)>,
    /// `(line, time_ms, status)` of every `run_stop`.
    stops: Vec<(u64, f64, Option<String>)>,
    seeds: usize,
    division: Option<String>,
    /// The last `global_batch_size` record: (line, value).
    gbs: Option<(u64, serde_json::Value)>,
    /// The last record whose key contains `global_batch_size`: (line, key, value).
    gbs_like: Option<(u64, String, serde_json::Value)>,
}

impl Collector {
    pub fn event(&mut self, e: &Event) {
        match e.key.as_str() {
            "run_start" => self.starts.push((e.line, e.time_ms)),
            "run_stop" => self.stops.push((
                e.line,
                e.time_ms,
                e.metadata
                    .get("status")
                    .map(|s| s.as_str().map_or_else(|| s.to_string(), str::to_string)),
            )),
            "seed" => self.seeds += 1,
            "submission_division" if self.division.is_none() => {
                self.division = e.value.as_str().map(str::to_string);
            }
            _ => {}
        }
        if e.key.contains(GBS) {
            if e.key == GBS {
                self.gbs = Some((e.line, e.value.clone()));
            }
            self.gbs_like = Some((e.line, e.key.clone(), e.value.clone()));
        }
    }

    /// The findings for the log at `path`; `alone`: checked on its own,
    /// not as a run of a benchmark folder.
    pub fn finish(self, codes: &CodeRegistry, path: &str, alone: bool) -> Vec<Finding> {
        let help = |code: &str| codes.get(code).map(|d| d.help.clone()).unwrap_or_default();
        let mut out = Vec::new();
        for (key, lines) in [
            (
                "run_start",
                self.starts.iter().map(|s| (s.0, s.1)).collect::<Vec<_>>(),
            ),
            ("run_stop", self.stops.iter().map(|s| (s.0, s.1)).collect()),
        ] {
            if lines.len() < 2 {
                continue;
            }
            let first = lines[0];
            for (line, t) in &lines[1..] {
                out.push(
                    Finding::of(
                        code::RUN001,
                        path,
                        format!(
                            "second {key} (first at line {}, {} ms later): a run has one clock; the official checker only warns",
                            first.0,
                            t - first.1
                        ),
                    )
                    .at_line(Some(*line))
                    .with_help(help(code::RUN001.id)),
                );
            }
        }
        let statuses: Vec<&Option<String>> = self.stops.iter().map(|s| &s.2).collect();
        if statuses.len() > 1 && statuses.windows(2).any(|w| w[0] != w[1]) {
            let list: Vec<String> = self
                .stops
                .iter()
                .map(|s| format!("line {}: {}", s.0, s.2.as_deref().unwrap_or("no status")))
                .collect();
            out.push(
                Finding::of(
                    code::RUN001,
                    path,
                    format!(
                        "run_stop statuses contradict each other ({})",
                        list.join(", ")
                    ),
                )
                .at_line(self.stops.get(1).map(|s| s.0))
                .with_help(help(code::RUN001.id)),
            );
        }
        if let Some((line, _, status)) = self.stops.last() {
            if status.as_deref() != Some("success") {
                let shown = status.as_deref().unwrap_or("missing");
                let (severity, tail) = if alone {
                    (Severity::Error, "a run that did not converge is no result")
                } else {
                    (
                        Severity::Warning,
                        "it counts as a failed run (the slowest) in the olympic score",
                    )
                };
                out.push(
                    Finding::new(
                        code::RUN002.id,
                        severity,
                        path,
                        format!("the run did not converge: run_stop status is '{shown}', not 'success'; {tail}"),
                    )
                    .at_line(Some(*line))
                    .with_help(help(code::RUN002.id)),
                );
            }
        }
        if let (Some((gl, gv)), Some((line, key, value))) = (&self.gbs, &self.gbs_like) {
            if key != GBS && value != gv {
                out.push(
                    Finding::of(
                        code::RUN004,
                        path,
                        format!(
                            "the official RCP checker reads the batch size from '{key}' = {value} (its key contains global_batch_size), not from global_batch_size = {gv} (line {gl}); the RCP verdict follows its reading"
                        ),
                    )
                    .at_line(Some(*line))
                    .with_help(help(code::RUN004.id)),
                );
            }
        }
        if alone && self.seeds == 0 && self.division.as_deref() == Some("closed") {
            out.push(
                Finding::of(
                    code::RUN003,
                    path,
                    "closed-division run logs no seed (the official compliance checker does not require it; its package seed check would reject the folder)",
                )
                .with_help(help(code::RUN003.id)),
            );
        }
        out
    }
}
