//! Running a ruleset over one log, in one streaming pass with bounded
//! memory.
//!
//! The official checker reads the whole log, then lets the root pack walk its
//! events with a fresh state, then every pack it includes (by division, by
//! benchmark) walk them again with its own fresh state, in the order they
//! were included. When a later pack has a rule for a key, the errors earlier
//! packs raised for that key are dropped: benchmark rules replace common
//! rules.
//!
//! We get the same result without keeping the events: every pack run (an
//! *instance*) has its own state and sees each event as it is read. An
//! instance included part-way through the log first replays the events read
//! so far from a bounded replay buffer; when an include comes after the
//! buffer was given up (more than [`REPLAY_EVENTS`] events or
//! [`REPLAY_BYTES`] bytes), the file is read again for that instance. The
//! voiding of earlier errors and the virtual events of aggregates are
//! applied at the end, in include order, exactly as a sequential walk would.
//! Nothing kept grows with the length of the log: findings per rule,
//! aggregate groups and pack runs have limits (see the constants).

use super::load::{Ruleset, ROOT_PACK};
use super::walk::Run;
use crate::finding::code;
use crate::finding::{Finding, Severity};
use crate::mllog::{self, Record, ScanSummary};
use minijinja::value::{Enumerator, Object};
use minijinja::Value;
use serde::Serialize;
use std::io::Read;
use std::path::Path;
use std::sync::{Arc, OnceLock, RwLock};

/// Events kept for instances included part-way through a log. Shipped packs
/// include on `submission_division` and `submission_benchmark`, logged in
/// the first lines of a run, so a replay from memory is the rule and a
/// second read of the file the exception.
pub const REPLAY_EVENTS: usize = 20_000;
/// Bytes of record text the replay buffer may stand for.
pub const REPLAY_BYTES: usize = 16 << 20;
/// Findings one rule (code and key) of one pack run reports in detail; the
/// rest are counted in one more finding. Real logs have a handful.
pub const MAX_FINDINGS_PER_RULE: usize = 100;
/// Groups one aggregate builds (stable diffusion logs have about 20).
pub const MAX_GROUPS: usize = 1_000;
/// Pack runs one log may start: a pack that includes itself would otherwise
/// never stop. Shipped rulesets start at most 3.
pub const MAX_PACK_RUNS: usize = 64;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Pass,
    Fail,
}

/// What checking one log produced.
#[derive(Debug, Clone, Serialize)]
pub struct LogCheck {
    pub path: String,
    pub benchmark: Option<String>,
    pub division: Option<String>,
    pub verdict: Verdict,
    pub errors: usize,
    pub warnings: usize,
    /// Time to train, `run_stop − run_start`, when both are logged.
    pub seconds: Option<f64>,
    /// Line of the first `eval_accuracy` that met the benchmark's quality
    /// target (its rule's `at_least_one`): evaluations after it cannot
    /// have stopped the clock.
    #[serde(skip)]
    pub target_met_at: Option<u64>,
    #[serde(skip)]
    pub findings: Vec<Finding>,
}

/// One event as the rules see it.
#[derive(Clone)]
pub(super) struct Ev {
    pub(super) line: u64,
    pub(super) key: Value,
    pub(super) v: Value,
}

impl Ev {
    pub(super) fn key(&self) -> &str {
        self.key.as_str().unwrap_or_default()
    }
}

/// Checks the log at `path`, reporting it as `display`. An unreadable file
/// is a failing check with an `LOG005` finding, not an error.
pub fn check_file(ruleset: &Ruleset, path: &Path, display: &str) -> LogCheck {
    let mut open = || -> std::io::Result<Box<dyn Read>> {
        let f = crate::safe_io::open_regular(path)?;
        if f.metadata()?.is_dir() {
            return Err(std::io::Error::other("is a directory, not a log file"));
        }
        Ok(Box::new(f))
    };
    check_source(ruleset, &mut open, display, None)
}

/// What else reads a log's records while the rules read it: the collectors
/// of the one pass per log (policy signals, the run's statistics facts,
/// the package facts). It sees the first read of the log only; the rules
/// read the file again only when a pack is included after the replay
/// buffer was given up.
pub trait Observer {
    /// Whether a well-formed record with this key should be decoded and
    /// handed to [`Observer::record`].
    fn wants(&mut self, key: &str) -> bool;
    /// Whether it reads the `metadata` of a record with this key it wants
    /// (decoding it costs more than the rest of most records).
    fn wants_metadata(&mut self, key: &str) -> bool;
    /// A well-formed record it wants, in file order, with its `value` and
    /// (when [`Observer::wants_metadata`] said so) its `metadata` as the
    /// rules read them: each is decoded once, for the rules and the
    /// observer alike.
    fn record(&mut self, r: &Record<'_>, value: &Value, metadata: Option<&Value>);
    /// The bytes from the marker to the end of every line that carries one
    /// (what a content hash of the MLLOG part needs).
    fn raw(&mut self, bytes: &[u8]);
    /// The read is over: its summary, or why the log could not be read.
    fn done(&mut self, read: Result<&ScanSummary, &std::io::Error>);
}

/// [`check_file`], handing every record it reads to `observer` as well, so
/// the log is read once for the rules and for everything else.
pub fn check_file_observed(
    ruleset: &Ruleset,
    path: &Path,
    display: &str,
    observer: &mut dyn Observer,
) -> LogCheck {
    let mut open = || -> std::io::Result<Box<dyn Read>> {
        let f = crate::safe_io::open_regular(path)?;
        if f.metadata()?.is_dir() {
            return Err(std::io::Error::other("is a directory, not a log file"));
        }
        Ok(Box::new(f))
    };
    check_source(ruleset, &mut open, display, Some(observer))
}

/// Checks a log held in memory, reporting it as `display`.
pub fn check_bytes(ruleset: &Ruleset, bytes: &[u8], display: &str) -> LogCheck {
    let mut open = || -> std::io::Result<Box<dyn Read + '_>> { Ok(Box::new(bytes)) };
    check_source(ruleset, &mut open, display, None)
}

fn unreadable(display: &str, e: &std::io::Error) -> LogCheck {
    let finding = Finding::of(code::LOG005, display, format!("cannot read the log: {e}"));
    finish(display, vec![finding], None, None, None)
}

/// Facts read in the first pass besides the rule walk.
#[derive(Default)]
pub(super) struct Facts {
    pub(super) division: Option<String>,
    pub(super) benchmark: Option<String>,
    pub(super) run_start: Option<f64>,
    pub(super) run_stop: Option<f64>,
}

impl Facts {
    pub(super) fn note(&mut self, r: &Record<'_>) {
        match r.key.as_ref() {
            "submission_division" if self.division.is_none() => self.division = as_text(r.value),
            "submission_benchmark" if self.benchmark.is_none() => self.benchmark = as_text(r.value),
            "run_start" if self.run_start.is_none() => self.run_start = Some(r.time_ms),
            "run_stop" => self.run_stop = Some(r.time_ms),
            _ => {}
        }
    }
}

/// Checks the log `open` reads (and reads again when a late include needs it).
fn check_source<'s>(
    ruleset: &Ruleset,
    open: &mut dyn FnMut() -> std::io::Result<Box<dyn Read + 's>>,
    display: &str,
    observer: Option<&mut dyn Observer>,
) -> LogCheck {
    let mut run = Run::new(ruleset, display);
    run.new_instance(ROOT_PACK, None, None);
    let mut facts = Facts::default();
    let summary = match run.passes(open, Some(&mut facts), observer) {
        Ok(Some(s)) => s,
        Ok(None) => ScanSummary::default(),
        Err(e) => return unreadable(display, &e),
    };
    let seconds = match (facts.run_start, facts.run_stop) {
        (Some(a), Some(b)) => Some((b - a) / 1000.0),
        _ => None,
    };
    let mut findings = scan_findings(&summary, display, ruleset.format);
    if summary.well_formed() == 0 {
        if summary.long_total == 0 {
            findings.push(Finding::of(
                code::LOG002,
                display,
                match ruleset.format {
                    mllog::Format::Mllog => "no ':::MLLOG' records found in the log",
                    mllog::Format::Mll => "no ':::MLL' records found in the log",
                },
            ));
        }
        return finish(display, findings, facts.division, facts.benchmark, seconds);
    }
    match run.finish_all(open) {
        Ok(tagged) => findings.extend(tagged.into_iter().map(|t| t.finding)),
        Err(e) => return unreadable(display, &e),
    }
    findings.append(&mut run.extra);
    let mut check = finish(display, findings, facts.division, facts.benchmark, seconds);
    check.target_met_at = run.first_satisfied("eval_accuracy");
    check
}

/// Findings about the bytes of the log: malformed records, non-string keys,
/// over-long lines.
fn scan_findings(summary: &ScanSummary, display: &str, format: mllog::Format) -> Vec<Finding> {
    let mut findings = Vec::new();
    for m in &summary.malformed {
        findings.push(
            Finding::of(
                code::LOG001,
                display,
                format!("malformed MLLOG record: {}: {}", m.error, m.excerpt),
            )
            .at_line(Some(m.line)),
        );
    }
    let more = summary.malformed_total - summary.malformed.len() as u64;
    if more > 0 {
        findings.push(Finding::of(
            code::LOG001,
            display,
            format!(
                "{more} more malformed MLLOG records (only the first {} are listed)",
                mllog::MAX_KEPT
            ),
        ));
    }
    for &line in &summary.non_string_keys {
        findings
            .push(Finding::of(code::LOG004, display, format.ignored_record()).at_line(Some(line)));
    }
    let more = summary.non_string_total - summary.non_string_keys.len() as u64;
    if more > 0 {
        findings.push(Finding::of(
            code::LOG004,
            display,
            format!("{more} more records ignored as the one above"),
        ));
    }
    for l in &summary.long_lines {
        findings.push(
            Finding::of(
                code::LOG007,
                display,
                format!(
                    "MLLOG line of {} bytes is longer than the {} bytes a record may have; it is not read",
                    l.bytes,
                    mllog::MAX_LINE_BYTES
                ),
            )
            .at_line(Some(l.line)),
        );
    }
    let more = summary.long_total - summary.long_lines.len() as u64;
    if more > 0 {
        findings.push(Finding::of(
            code::LOG007,
            display,
            format!("{more} more over-long MLLOG lines"),
        ));
    }
    findings
}

fn finish(
    display: &str,
    mut findings: Vec<Finding>,
    division: Option<String>,
    benchmark: Option<String>,
    seconds: Option<f64>,
) -> LogCheck {
    crate::finding::sort_findings(&mut findings);
    // Kept until the report is built: no spare capacity per log (a folder
    // may hold 100,000 of them).
    findings.shrink_to_fit();
    let errors = crate::finding::count(&findings, Severity::Error);
    let warnings = crate::finding::count(&findings, Severity::Warning);
    LogCheck {
        path: display.to_string(),
        benchmark,
        division,
        verdict: if errors == 0 {
            Verdict::Pass
        } else {
            Verdict::Fail
        },
        errors,
        warnings,
        seconds,
        target_met_at: None,
        findings,
    }
}

/// A logged value as text: a string as itself, `null` as nothing, anything
/// else as its JSON text.
fn as_text(raw: &str) -> Option<String> {
    match raw {
        "null" => None,
        _ if raw.starts_with('"') => Some(mllog::json::unescape(raw)),
        other => Some(other.to_string()),
    }
}

/// The event of a record whose `value` (and maybe `metadata`) is decoded;
/// an undecoded `metadata` is decoded on first use.
pub(super) fn to_ev(r: &Record<'_>, value: Value, metadata: Option<Value>) -> Ev {
    let key = Value::from(r.key.as_ref());
    let v = Value::from_object(EventObj {
        key: key.clone(),
        value,
        metadata_raw: r.metadata.into(),
        metadata: metadata.map_or_else(OnceLock::new, OnceLock::from),
        time_ms: Value::from(r.time_ms),
        line: Value::from(r.line),
        event_type: r.event_type.as_deref().map(Value::from).unwrap_or_default(),
    });
    Ev {
        line: r.line,
        key,
        v,
    }
}

/// Converts decoded JSON into a rule value without a serde round trip.
pub fn json_to_value(j: &serde_json::Value) -> Value {
    match j {
        serde_json::Value::Null => Value::from(()),
        serde_json::Value::Bool(b) => Value::from(*b),
        serde_json::Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                Value::from(i)
            } else if let Some(u) = n.as_u64() {
                Value::from(u)
            } else {
                Value::from(n.as_f64().unwrap_or(f64::NAN))
            }
        }
        serde_json::Value::String(s) => Value::from(s.as_str()),
        serde_json::Value::Array(a) => Value::from(a.iter().map(json_to_value).collect::<Vec<_>>()),
        serde_json::Value::Object(m) => {
            Value::from_iter(m.iter().map(|(k, v)| (k.as_str(), json_to_value(v))))
        }
    }
}

/// The event object `v` of rule expressions. `metadata` is decoded on first
/// use: most rules never read it.
#[derive(Debug)]
pub(super) struct EventObj {
    pub(super) key: Value,
    pub(super) value: Value,
    pub(super) metadata_raw: Box<str>,
    pub(super) metadata: OnceLock<Value>,
    pub(super) time_ms: Value,
    pub(super) line: Value,
    pub(super) event_type: Value,
}

impl EventObj {
    /// The field `key` (what `v.<key>` reads).
    pub(super) fn field(&self, key: &str) -> Option<Value> {
        Some(match key {
            "key" => self.key.clone(),
            "value" => self.value.clone(),
            "metadata" => self
                .metadata
                .get_or_init(|| mllog::json::parse(&self.metadata_raw).unwrap_or_default())
                .clone(),
            "time_ms" => self.time_ms.clone(),
            "line" => self.line.clone(),
            "event_type" => self.event_type.clone(),
            _ => return None,
        })
    }
}

impl Object for EventObj {
    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        self.field(key.as_str()?)
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        Enumerator::Str(&["key", "value", "metadata", "time_ms", "line", "event_type"])
    }
}

/// The state `s` of one pack run, updated in place (rebuilding a map on
/// every assignment was a quarter of the run time).
/// A pack has about ten state variables: a list beats a hash map.
#[derive(Debug, Default)]
pub(super) struct StateObj {
    pub(super) vars: RwLock<Vec<(String, Value)>>,
}

impl StateObj {
    pub(super) fn set(&self, name: &str, v: Value) {
        let mut vars = self.vars.write().unwrap_or_else(|e| e.into_inner());
        match vars.iter_mut().find(|(k, _)| k == name) {
            Some(slot) => slot.1 = v,
            None => vars.push((name.to_string(), v)),
        }
    }

    /// A frozen copy, for aggregates (which see the state before the walk).
    pub(super) fn snapshot(&self) -> Value {
        let vars = self.vars.read().unwrap_or_else(|e| e.into_inner());
        Value::from_iter(vars.iter().map(|(k, v)| (k.clone(), v.clone())))
    }
}

impl StateObj {
    /// The variable `key` (what `s.<key>` reads).
    pub(super) fn var(&self, key: &str) -> Option<Value> {
        let vars = self.vars.read().unwrap_or_else(|e| e.into_inner());
        vars.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone())
    }
}

impl Object for StateObj {
    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        self.var(key.as_str()?)
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        let vars = self.vars.read().unwrap_or_else(|e| e.into_inner());
        Enumerator::Values(vars.iter().map(|(k, _)| Value::from(k.as_str())).collect())
    }
}

/// The names in scope of a rule expression: `v` and `s`. One per pack run,
/// with `v` swapped for each event.
#[derive(Debug)]
pub(super) struct Scope {
    pub(super) v: RwLock<Value>,
    pub(super) s: Value,
}

impl Scope {
    /// The name `key` (`v` or `s`).
    pub(super) fn name(&self, key: &str) -> Option<Value> {
        match key {
            "v" => Some(self.v.read().unwrap_or_else(|e| e.into_inner()).clone()),
            "s" => Some(self.s.clone()),
            _ => None,
        }
    }
}

impl Object for Scope {
    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        self.name(key.as_str()?)
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        Enumerator::Str(&["v", "s"])
    }
}

/// A scope over a fixed event and state (aggregates, end checks).
pub(super) fn scope(v: &Value, s: &Value) -> Value {
    Value::from_object(Scope {
        v: RwLock::new(v.clone()),
        s: s.clone(),
    })
}
