//! Reads one benchmark folder's `result_*.txt` files with [`crate::mllog`]
//! and extracts, per run, what the RCP checker and result_summarizer use
//! (facts 1.2, 3.4, 3.7, 8 items 2 and M13–M15).
//!
//! Like the official reader we look at records whose key *contains*
//! `global_batch_size`, `submission_benchmark`, `eval_accuracy`/`eval_error`
//! or `train_samples` (the official tool matches these substrings anywhere
//! in the record's JSON text; on every real log the match is on the key).

use super::data::RcpParams;
use super::npmath::py_round;
use super::rcp::SubmissionConvergence;
use crate::finding::code;
use crate::finding::Finding;
use crate::mllog;
use serde_json::Value;
use std::collections::hash_map::DefaultHasher;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::hash::{Hash, Hasher};
use std::io;
use std::path::{Path, PathBuf};

/// What one result log says.
#[derive(Debug, Clone, Default)]
pub struct RunInfo {
    pub path: PathBuf,
    /// File name, e.g. `result_3.txt`.
    pub name: String,
    /// Value of the last record whose key contains `submission_benchmark`.
    pub benchmark: Option<String>,
    /// Value of the last record whose key contains `global_batch_size`.
    pub global_batch_size: Option<Value>,
    pub gbs_line: Option<u64>,
    /// Convergence value when the last `run_stop` says `success` and a
    /// convergence value was found; `None` means "did not converge".
    pub convergence: Option<f64>,
    /// `run_start`/`run_stop` times as result_summarizer picks them.
    pub run_start_ms: Option<f64>,
    pub run_stop_ms: Option<f64>,
    /// HPC weak scaling: `number_of_nodes` and `accelerators_per_node` as
    /// result_summarizer picks them (like the run times: updated until
    /// both are seen).
    pub number_of_nodes: Option<Value>,
    pub accelerators_per_node: Option<Value>,
    /// `metadata.status` of the last `run_stop`.
    pub run_stop_status: Option<String>,
    /// How many `eval_accuracy` records the log has, and a hash of their
    /// values and metadata (as JSON), in order: copied trajectories share it.
    pub eval_count: usize,
    pub eval_hash: u64,
    /// Convergence-unit position (epoch or samples) of every evaluation,
    /// in order: the grid the convergence value is quantised to.
    pub eval_steps: Vec<f64>,
    /// The evaluation curve, for pictures: `(position, value)` of every
    /// `eval_accuracy` record with a numeric value, the position in the
    /// folder's convergence unit (`samples_count` for benchmarks converging
    /// in samples, else `epoch_num`). When records name a
    /// `metadata.metric` (Stable Diffusion: FID and CLIP), only the first
    /// metric logged is kept, and named in `eval_metric`.
    pub eval_points: Vec<(f64, f64)>,
    pub eval_metric: Option<String>,
    /// Hash of the text of every MLLOG record, in order.
    pub content_hash: u64,
    /// Problems reading the convergence value, with line numbers.
    pub findings: Vec<Finding>,
}

impl RunInfo {
    /// Time to train in minutes, as result_summarizer computes it.
    pub fn minutes(&self) -> Option<f64> {
        Some((self.run_stop_ms? - self.run_start_ms?) / 60.0 / 1000.0)
    }

    pub fn succeeded(&self) -> bool {
        self.run_stop_status.as_deref() == Some("success")
    }
}

/// All runs of one benchmark folder, sorted by file name.
#[derive(Debug, Clone)]
pub struct FolderRuns {
    pub dir: PathBuf,
    pub runs: Vec<RunInfo>,
}

/// Lists `dir/result_*.txt` (the official glob), sorted by name.
pub fn result_files(dir: &Path) -> io::Result<Vec<PathBuf>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("result_") && n.ends_with(".txt"))
        })
        .collect();
    files.sort();
    Ok(files)
}

/// Reads every result log of `dir`.
pub fn read_folder(
    dir: &Path,
    params: &RcpParams,
    bert_train_samples: bool,
) -> io::Result<FolderRuns> {
    let mut runs = Vec::new();
    for path in result_files(dir)? {
        runs.push(read_run(&path, params, bert_train_samples)?);
    }
    Ok(FolderRuns {
        dir: dir.to_path_buf(),
        runs,
    })
}

fn num(v: Option<&Value>) -> Option<f64> {
    v.and_then(Value::as_f64)
}

fn json_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Reads one result log.
pub fn read_run(path: &Path, params: &RcpParams, bert_train_samples: bool) -> io::Result<RunInfo> {
    parse_run(
        crate::safe_io::open_regular(path)?,
        path,
        params,
        bert_train_samples,
    )
}

/// Extracts a [`RunInfo`] from a log shown as `path`, streaming it.
pub fn parse_run(
    reader: impl io::Read,
    path: &Path,
    params: &RcpParams,
    bert_train_samples: bool,
) -> io::Result<RunInfo> {
    let mut collector = RunCollector::new(params, bert_train_samples);
    let mut hash = ContentHash::default();
    mllog::scan_records_raw_in(
        params.format,
        reader,
        wanted,
        |r| collector.event(r.to_event()),
        |raw| hash.add(raw),
    )?;
    Ok(collector.finish(hash, path))
}

/// The keys the RCP reader looks at (substring matches, as the official
/// reader's).
pub fn wanted(k: &str) -> bool {
    k.contains("global_batch_size")
        || k.contains("submission_benchmark")
        || k.contains("eval_accuracy")
        || k.contains("eval_error")
        || k.contains("train_samples")
        || k == "run_start"
        || k == "run_stop"
        || k == "number_of_nodes"
        || k == "accelerators_per_node"
}

/// Hash of the MLLOG part of a log: the text from the marker to the end of
/// every line that carries one (copied runs share it).
///
/// foldhash (its `quality` variant, seeded once per process so that every
/// log of a run is hashed alike) rather than SipHash: every MLLOG byte of
/// the package goes through it, and SipHash was 3% of a v5.0 NVIDIA check.
pub struct ContentHash(foldhash::quality::FoldHasher<'static>);

impl Default for ContentHash {
    fn default() -> Self {
        use std::hash::BuildHasher;
        static SEED: std::sync::OnceLock<foldhash::quality::SeedableRandomState> =
            std::sync::OnceLock::new();
        ContentHash(
            SEED.get_or_init(foldhash::quality::SeedableRandomState::random)
                .build_hasher(),
        )
    }
}

impl ContentHash {
    pub fn add(&mut self, rec: &[u8]) {
        rec.hash(&mut self.0);
    }
}

/// Gathers what [`RunInfo`] needs while a log streams by, so the reader can
/// share one pass over the file with other checks: feed it the events
/// (those [`wanted`] rejects are ignored) and, at the end, the
/// [`ContentHash`] of the raw MLLOG lines. Each record is folded in as it
/// comes, so memory does not grow with the records' metadata (a log of
/// 500,000 evaluations held every one of them: 298 MB).
pub struct RunCollector<'a> {
    params: &'a RcpParams,
    run: RunInfo,
    use_train: bool,
    conv: Option<f64>,
    /// Stable Diffusion checkpoints: (samples_count, FID, CLIP), and where
    /// each step is in it (a linear search per record was quadratic).
    sd: Vec<(f64, Option<f64>, Option<f64>)>,
    sd_at: HashMap<u64, usize>,
    evals: DefaultHasher,
}

/// Writes formatted text into a hasher, so a record is hashed without
/// building its text.
struct HashText<'h>(&'h mut DefaultHasher);

impl std::fmt::Write for HashText<'_> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.0.write(s.as_bytes());
        Ok(())
    }
}

impl<'a> RunCollector<'a> {
    /// A collector for one log read with `params` (and BERT's
    /// train-samples convergence when `bert_train_samples`).
    pub fn new(params: &'a RcpParams, bert_train_samples: bool) -> RunCollector<'a> {
        RunCollector {
            params,
            run: RunInfo::default(),
            use_train: bert_train_samples,
            conv: None,
            sd: Vec::new(),
            sd_at: HashMap::new(),
            evals: DefaultHasher::new(),
        }
    }

    /// A record the reader wants (others are ignored).
    pub fn event(&mut self, e: mllog::Event) {
        if wanted(&e.key) {
            self.fold(&e);
        }
    }

    /// The run, its findings naming `path`.
    pub fn finish(mut self, hash: ContentHash, path: &Path) -> RunInfo {
        let shown = path.display().to_string();
        self.run.path = path.to_path_buf();
        self.run.name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        self.run.content_hash = hash.0.finish();
        self.run.eval_hash = self.evals.finish();
        for f in &mut self.run.findings {
            f.path.clone_from(&shown);
        }
        self.run
    }

    /// The index of the Stable Diffusion checkpoint at `step`, a new one
    /// when no earlier record named it (steps compare as numbers: -0 is 0,
    /// NaN is never an earlier step).
    fn sd_checkpoint(&mut self, step: f64) -> usize {
        let key = if step == 0.0 { 0 } else { step.to_bits() };
        if !step.is_nan() {
            if let Some(&i) = self.sd_at.get(&key) {
                return i;
            }
            self.sd_at.insert(key, self.sd.len());
        }
        self.run.eval_steps.push(step);
        self.sd.push((step, None, None));
        self.sd.len() - 1
    }

    fn fold(&mut self, e: &mllog::Event) {
        let params = self.params;
        let sd_params = &params.stable_diffusion;
        let decimals = params.epoch_decimals;
        // The path is set when the run is finished.
        let bad = |line: u64, msg: String| Finding::of(code::RCP003, "", msg).at_line(Some(line));
        let run = &mut self.run;
        let key = e.key.as_str();
        if key == "eval_accuracy" {
            run.eval_count += 1;
            let _ = write!(HashText(&mut self.evals), "{}|{}", e.value, e.metadata);
            self.evals.write_u8(0xff);
            let bm = run.benchmark.as_deref().unwrap_or("");
            let unit = if bm == "stable_diffusion" {
                params.stable_diffusion.step_field.as_str()
            } else if params.in_samples(bm) {
                "samples_count"
            } else {
                "epoch_num"
            };
            let metric = e.metadata.get("metric").map(json_text);
            if run.eval_points.is_empty() {
                run.eval_metric = metric.clone();
            }
            if let (Some(x), Some(y)) = (num(e.metadata.get(unit)), e.value.as_f64()) {
                if metric == run.eval_metric && x.is_finite() && y.is_finite() {
                    run.eval_points.push((x, y));
                }
            }
        }
        if run.run_start_ms.is_none() || run.run_stop_ms.is_none() {
            if key == "run_start" {
                run.run_start_ms = Some(e.time_ms);
            }
            if key == "run_stop" {
                run.run_stop_ms = Some(e.time_ms);
            }
        }
        if run.number_of_nodes.is_none() || run.accelerators_per_node.is_none() {
            if key == "number_of_nodes" {
                run.number_of_nodes = Some(e.value.clone());
            }
            if key == "accelerators_per_node" {
                run.accelerators_per_node = Some(e.value.clone());
            }
        }
        if key.contains("global_batch_size") {
            run.global_batch_size = Some(e.value.clone());
            run.gbs_line = Some(e.line);
        }
        if key.contains("submission_benchmark") {
            let b = json_text(&e.value);
            if b != "bert" {
                self.use_train = false;
            }
            run.benchmark = Some(b);
        }
        let bm = run.benchmark.as_deref().unwrap_or("");
        let is_eval = key.contains("eval_error") || key.contains("eval_accuracy");
        if bm == "stable_diffusion" && is_eval {
            let step = num(e.metadata.get(&sd_params.step_field));
            let metric = e.metadata.get("metric").and_then(Value::as_str);
            let value = e.value.as_f64();
            match (step, metric, value) {
                (Some(step), Some(metric), Some(value)) => {
                    let idx = self.sd_checkpoint(step);
                    match metric {
                        "FID" => self.sd[idx].1 = Some(value),
                        "CLIP" => self.sd[idx].2 = Some(value),
                        _ => {}
                    }
                }
                _ => run.findings.push(bad(
                    e.line,
                    format!(
                        "{key}: needs a numeric value, metadata.{} and metadata.metric to find the Stable Diffusion convergence point",
                        sd_params.step_field
                    ),
                )),
            }
        } else if params.in_samples(bm) && is_eval {
            match num(e.metadata.get("samples_count")) {
                Some(s) => {
                    run.eval_steps.push(s);
                    self.conv = Some(s)
                }
                None => run.findings.push(bad(
                    e.line,
                    format!("{key}: metadata.samples_count is missing or not a number"),
                )),
            }
        } else if !self.use_train && is_eval {
            match num(e.metadata.get("epoch_num")) {
                Some(x) => {
                    run.eval_steps.push(py_round(x, decimals));
                    self.conv = Some(py_round(x, decimals))
                }
                None => run.findings.push(bad(
                    e.line,
                    format!("{key}: metadata.epoch_num is missing or not a number"),
                )),
            }
        } else if self.use_train && key.contains("train_samples") {
            match e.value.as_f64() {
                Some(x) => self.conv = Some(x),
                None => run
                    .findings
                    .push(bad(e.line, format!("{key}: value is not a number"))),
            }
        }
        if key == "run_stop" {
            let run = &mut self.run;
            let status = e.metadata.get("status").map(json_text);
            let success = status.as_deref() == Some("success");
            run.run_stop_status = status;
            if success {
                if run.benchmark.as_deref() == Some("stable_diffusion") {
                    self.conv = self
                        .sd
                        .iter()
                        .filter(|c| {
                            c.1.is_some_and(|f| f <= sd_params.fid_max)
                                && c.2.is_some_and(|c| c >= sd_params.clip_min)
                        })
                        .map(|c| c.0)
                        .reduce(f64::min);
                }
                if self.conv.is_none() {
                    run.findings.push(
                        Finding::of(
                            code::RCP004,
                            "",
                            "run_stop reports success but no evaluation before it gives a convergence point; the run counts as not converged",
                        )
                        .at_line(Some(e.line)),
                    );
                }
                run.convergence = self.conv;
            } else {
                run.convergence = None;
            }
        }
    }
}

fn same_value(a: &Value, b: &Value) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}

impl FolderRuns {
    /// The benchmark the logs name: the first file's (as the official tool
    /// does); `None` when no file names one.
    pub fn benchmark(&self) -> Option<&str> {
        self.runs.iter().find_map(|r| r.benchmark.as_deref())
    }

    /// The folder's convergence values as `get_submission_epochs` combines
    /// them, with a finding when the files disagree on the batch size or
    /// the benchmark (the official tool crashes there, facts 8 item 2).
    pub fn convergence(&self, params: &RcpParams) -> (SubmissionConvergence, Vec<Finding>) {
        let mut findings = Vec::new();
        let subm = self.convergence_into(params, &mut |f| findings.push(f));
        (subm, findings)
    }

    /// [`convergence`](Self::convergence), each finding handed to `sink` as
    /// it is made (a folder of 100,000 runs makes as many).
    pub fn convergence_into(
        &self,
        params: &RcpParams,
        sink: &mut dyn FnMut(Finding),
    ) -> SubmissionConvergence {
        let mut bs: Option<(&Value, &RunInfo)> = None;
        let mut bm: Option<(&str, &RunInfo)> = None;
        let mut consistent = true;
        for run in &self.runs {
            run.findings.iter().cloned().for_each(&mut *sink);
            match (bs, &run.global_batch_size) {
                (None, Some(v)) => bs = Some((v, run)),
                (None, None) => {}
                (Some((v0, r0)), cur) => {
                    if !cur.as_ref().is_some_and(|v| same_value(v, v0)) {
                        consistent = false;
                        sink(
                            Finding::of(
                                code::RCP005,
                                &run.path.display().to_string(),
                                format!(
                                    "global_batch_size {} differs from {} in {} (the official RCP checker crashes here: KeyError None)",
                                    cur.as_ref()
                                        .map_or("(not logged)".to_string(), |v| v.to_string()),
                                    v0,
                                    r0.name
                                ),
                            )
                            .at_line(run.gbs_line),
                        );
                    }
                }
            }
            match (bm, run.benchmark.as_deref()) {
                (None, Some(b)) => bm = Some((b, run)),
                (None, None) => {}
                (Some((b0, r0)), cur) => {
                    if cur != Some(b0) {
                        consistent = false;
                        sink(Finding::of(
                            code::RCP005,
                            &run.path.display().to_string(),
                            format!(
                                "submission_benchmark {} differs from {b0} in {} (the official RCP checker crashes here: KeyError None)",
                                cur.unwrap_or("(not logged)"),
                                r0.name
                            ),
                        ));
                    }
                }
            }
        }
        let global_batch_size = if consistent {
            bs.and_then(|(v, _)| v.as_f64())
        } else {
            None
        };
        let values: Vec<f64> = self
            .runs
            .iter()
            .map(|r| r.convergence.unwrap_or(params.not_converged_value))
            .collect();
        let not_converged = self.runs.iter().filter(|r| r.convergence.is_none()).count();
        SubmissionConvergence {
            global_batch_size,
            values,
            not_converged,
        }
    }
}
