//! One folder card of the page: facts, charts and runs of a benchmark
//! folder, computed from its runs and the loaded RCP tables.

use super::findings::{self, CodeLink, Why};
use super::page::{fixed, folder_verdict, rcp_word};
use super::svg::{self, Chart, Curve, RcpPicture, RefPoint, Role, TimedRun};
use super::target::QualityTarget;
use crate::aggregate::package::Verdict as FolderVerdict;
use crate::aggregate::stats::data::{RcpParams, RcpTable};
use crate::aggregate::stats::olympic;
use crate::aggregate::stats::rcp::{PruneMode, RcpSet};
use crate::aggregate::stats::reader::FolderRuns;
use crate::report::BenchmarkReport;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet, HashMap};

#[derive(Debug, Serialize)]
pub(super) struct FolderView {
    pub(super) anchor: String,
    /// Set on the first folder of each package of a round: the package's
    /// heading.
    pub(super) package_head: Option<PackageHead>,
    pub(super) path: String,
    pub(super) path_segments: Vec<String>,
    pub(super) verdict: &'static str,
    /// Its findings, per code, linking to them.
    pub(super) links: Vec<CodeLink>,
    /// The runs that are not compliant and why.
    pub(super) failed: Vec<FailedRun>,
    pub(super) facts: Vec<Fact>,
    pub(super) charts: Vec<Chart>,
    pub(super) runs: Vec<RunRow>,
    pub(super) note: String,
}

#[derive(Debug, Serialize)]
pub(super) struct PackageHead {
    pub(super) anchor: String,
    pub(super) path: String,
    pub(super) verdict: &'static str,
}

#[derive(Debug, Serialize)]
pub(super) struct FailedRun {
    pub(super) name: String,
    pub(super) why: Vec<Why>,
}

#[derive(Debug, Serialize)]
pub(super) struct Fact {
    name: &'static str,
    value: String,
}

#[derive(Debug, Serialize)]
pub(super) struct RunRow {
    name: String,
    compliant: &'static str,
    status: String,
    minutes: String,
    minutes_sort: String,
    convergence: String,
    evals: usize,
    role: &'static str,
    role_class: &'static str,
    /// For a run that is not compliant: the errors that made it so.
    why: Vec<Why>,
}

/// What the system description says about the hardware, as text.
pub(super) fn system_facts(desc: &serde_json::Value) -> Vec<Fact> {
    let text = |key: &str| -> Option<String> {
        let t = match desc.get(key)? {
            serde_json::Value::String(s) => s.trim().to_string(),
            serde_json::Value::Null => return None,
            other => other.to_string(),
        };
        (!t.is_empty()).then_some(t)
    };
    let mut facts = Vec::new();
    if let Some(name) = text("system_name") {
        facts.push(Fact {
            name: "system",
            value: name,
        });
    }
    let accel = match (
        text("number_of_nodes"),
        text("accelerators_per_node"),
        text("accelerator_model_name"),
    ) {
        (Some(n), Some(a), Some(m)) => Some(format!(
            "{n} {} × {a} {m}",
            if n == "1" { "node" } else { "nodes" }
        )),
        (None, Some(a), Some(m)) => Some(format!("{a} × {m}")),
        (_, _, Some(m)) => Some(m),
        _ => None,
    };
    if let Some(a) = accel {
        facts.push(Fact {
            name: "accelerators",
            value: a,
        });
    }
    if let Some(f) = text("framework") {
        facts.push(Fact {
            name: "framework",
            value: f,
        });
    }
    facts
}

/// RCP sets by benchmark, built once each from the loaded tables.
pub(super) struct RcpTables<'a> {
    tables: &'a BTreeMap<String, RcpTable>,
    params: &'a RcpParams,
    sets: BTreeMap<String, Option<RcpSet>>,
}

impl<'a> RcpTables<'a> {
    pub(super) fn new(tables: &'a BTreeMap<String, RcpTable>, params: &'a RcpParams) -> Self {
        RcpTables {
            tables,
            params,
            sets: BTreeMap::new(),
        }
    }

    fn get(&mut self, benchmark: &str) -> Option<&RcpSet> {
        let (tables, params) = (self.tables, self.params);
        self.sets
            .entry(benchmark.to_string())
            .or_insert_with(|| {
                tables
                    .get(benchmark)
                    .and_then(|t| RcpSet::new(t, params, PruneMode::Official))
            })
            .as_ref()
    }
}

/// Most runs of one folder drawn and listed: a real folder has 5 to 10; a
/// folder of 100,000 result files made a 53 MB page.
pub(super) const MAX_RUNS_SHOWN: usize = 200;

/// What a folder card needs besides its own folder.
pub(super) struct FolderContext<'a> {
    pub(super) compliant: &'a HashMap<&'a str, bool>,
    pub(super) params: &'a RcpParams,
    pub(super) why: &'a BTreeMap<String, Vec<Why>>,
    pub(super) target: Option<QualityTarget>,
}

/// The card of folder `i`.
pub(super) fn view(
    i: usize,
    b: &BenchmarkReport,
    runs: Option<&FolderRuns>,
    ctx: &FolderContext<'_>,
    tables: &mut RcpTables<'_>,
) -> FolderView {
    let (compliant_by_path, params) = (ctx.compliant, ctx.params);
    let anchor = format!("folder-{i}");
    let mut facts = vec![Fact {
        name: "division",
        value: b.division.clone().unwrap_or_else(|| "unknown".to_string()),
    }];
    if let Some(r) = &b.rcp {
        facts.push(Fact {
            name: "RCP",
            value: format!("{}: {}", rcp_word(r.verdict), r.message),
        });
        if let Some(bs) = r.global_batch_size {
            facts.push(Fact {
                name: "global batch size",
                value: svg::whole(bs),
            });
        }
        if let (Some(m), Some(min), Some(rm)) = (r.mean_epochs, r.min_epochs, r.rcp_mean) {
            facts.push(Fact {
                name: "convergence",
                value: format!(
                    "submission mean {}, RCP mean {}, minimum acceptable {}",
                    svg::human(m),
                    svg::human(rm),
                    svg::human(min)
                ),
            });
        }
        if let Some(nf) = r.norm_factor {
            facts.push(Fact {
                name: "norm factor",
                value: format!("{nf:.4}"),
            });
        }
    }
    if let Some(s) = &b.score {
        facts.push(Fact {
            name: "score",
            value: match s.minutes {
                Some(m) => format!(
                    "{m:.3} min ({} runs used, {} failed)",
                    s.runs_used, s.runs_failed
                ),
                None => format!("none ({} runs used, {} failed)", s.runs_used, s.runs_failed),
            },
        });
    }
    if let Some(st) = &b.stats {
        let mut v = format!("{} converged runs", st.n);
        if let Some(cv) = st.cv {
            v.push_str(&format!(", CV {:.1}%", cv * 100.0));
        }
        if let Some([lo, hi]) = st.ci95_minutes {
            v.push_str(&format!(", 95% CI of the mean {lo:.3}–{hi:.3} min"));
        }
        facts.push(Fact {
            name: "spread",
            value: v,
        });
    }
    let mut view = FolderView {
        anchor: anchor.clone(),
        package_head: None,
        path: b.path.clone(),
        path_segments: findings::segments(&b.path),
        verdict: folder_verdict(b.verdict),
        links: Vec::new(),
        failed: Vec::new(),
        facts,
        charts: Vec::new(),
        runs: Vec::new(),
        note: String::new(),
    };
    let Some(folder) = runs else {
        view.note = if b.verdict == FolderVerdict::Skipped {
            "not checked: the benchmark is not part of this round".into()
        } else {
            "no runs were read from this folder".into()
        };
        return view;
    };
    let bm = folder
        .benchmark()
        .map(str::to_string)
        .unwrap_or_else(|| b.benchmark.clone());
    let compliant: Vec<bool> = folder
        .runs
        .iter()
        .map(|r| {
            compliant_by_path
                .get(r.path.to_string_lossy().as_ref())
                .copied()
                .unwrap_or(false)
        })
        .collect();
    let roles = olympic::roles(&folder.runs, &compliant, params.trim(&bm));
    let unit = if params.in_samples(&bm) || bm == "stable_diffusion" {
        "samples_count"
    } else {
        "epoch_num"
    };

    // Evaluation curves.
    let metric = folder.runs.iter().find_map(|r| r.eval_metric.clone());
    let curves: Vec<Curve> = folder
        .runs
        .iter()
        .take(MAX_RUNS_SHOWN)
        .enumerate()
        .map(|(k, r)| Curve {
            name: r.name.clone(),
            index: k,
            points: r.eval_points.clone(),
            target: r.convergence,
        })
        .collect();
    let y_label = match &metric {
        Some(m) => format!("eval_accuracy ({m})"),
        None => "eval_accuracy".to_string(),
    };
    if let Some(c) = svg::eval_chart(
        &format!("{anchor}-eval"),
        format!("{y_label} by {unit}"),
        unit,
        &y_label,
        &curves,
        ctx.target,
    ) {
        view.charts.push(c);
    }

    // Time to train.
    let timed: Vec<TimedRun> = folder
        .runs
        .iter()
        .zip(&roles)
        .take(MAX_RUNS_SHOWN)
        .map(|(r, role)| TimedRun {
            name: r.name.clone(),
            minutes: r.minutes(),
            role: *role,
        })
        .collect();
    let mean = b
        .score
        .as_ref()
        .and_then(|s| s.minutes.map(|m| m / s.scaling_factor));
    if let Some(c) = svg::time_chart(
        &format!("{anchor}-time"),
        "time to train per run".into(),
        &timed,
        mean,
    ) {
        view.charts.push(c);
    }

    // RCP picture.
    if let Some(set) = tables.get(&bm) {
        let active: BTreeSet<&str> = set.active.iter().map(|p| p.name.as_str()).collect();
        let refs = set
            .all
            .iter()
            .map(|p| RefPoint {
                name: p.name.clone(),
                batch_size: p.batch_size,
                mean: p.mean,
                min_mean: p.min_epochs,
                active: active.contains(p.name.as_str()),
            })
            .collect();
        let rcp = b.rcp.as_ref();
        let used = rcp
            .and_then(|r| r.rcp.as_ref())
            .filter(|p| p.interpolated)
            .map(|p| RefPoint {
                name: p.name.clone(),
                batch_size: p.batch_size,
                mean: p.mean,
                min_mean: rcp.and_then(|r| r.min_epochs).unwrap_or(p.min_epochs),
                active: true,
            });
        let submission = rcp.and_then(|r| {
            Some((
                r.global_batch_size?,
                r.mean_epochs.filter(|m| *m < params.not_converged_value)?,
                r.passed(),
            ))
        });
        let pic = RcpPicture {
            unit: unit.to_string(),
            refs,
            used,
            submission,
            runs: folder.runs.iter().filter_map(|r| r.convergence).collect(),
        };
        if let Some(c) = svg::rcp_chart(
            &format!("{anchor}-rcp"),
            format!("RCP: {bm} convergence by batch size"),
            &pic,
        ) {
            view.charts.push(c);
        }
    }

    if folder.runs.len() > MAX_RUNS_SHOWN {
        view.note = format!(
            "{} runs: only the first {MAX_RUNS_SHOWN} are drawn and listed on this page",
            folder.runs.len()
        );
    }
    view.runs = folder
        .runs
        .iter()
        .zip(&compliant)
        .zip(&roles)
        .take(MAX_RUNS_SHOWN)
        .map(|((r, ok), role)| {
            let m = r.minutes();
            RunRow {
                name: r.name.clone(),
                compliant: if *ok { "pass" } else { "fail" },
                status: r.run_stop_status.clone().unwrap_or_default(),
                minutes: fixed(m, 3),
                minutes_sort: fixed(m, 6),
                convergence: r.convergence.map(svg::human).unwrap_or_default(),
                evals: r.eval_points.len(),
                role: role.describe(),
                why: if *ok {
                    Vec::new()
                } else {
                    ctx.why
                        .get(r.path.to_string_lossy().as_ref())
                        .cloned()
                        .unwrap_or_default()
                },
                role_class: match role {
                    Role::Counted => "counted",
                    Role::DroppedFastest => "dropped-fast",
                    Role::DroppedSlowest => "dropped-slow",
                    Role::Failed => "failed",
                    Role::Unscored => "unscored",
                },
            }
        })
        .collect();
    view
}
