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

use super::expr::Expr;
use super::load::{Check, Pack, Rule, Ruleset, ROOT_PACK};
use super::pack::Require;
use crate::finding::{Finding, Severity};
use crate::mllog::{self, Record, ScanSummary};
use minijinja::value::{Enumerator, Object};
use minijinja::Value;
use serde::Serialize;
use std::collections::{HashMap, VecDeque};
use std::io::Read;
use std::path::Path;
use std::sync::{Arc, OnceLock, RwLock};

/// Codes of the findings the engine itself raises (documented in
/// `rules/codes/log.yaml`).
pub mod codes {
    pub const MALFORMED: &str = "LOG001";
    pub const NO_RECORDS: &str = "LOG002";
    pub const MISSING_PACK: &str = "LOG003";
    pub const NON_STRING_KEY: &str = "LOG004";
    pub const UNREADABLE: &str = "LOG005";
    pub const RULE_ERROR: &str = "LOG006";
    pub const LONG_LINE: &str = "LOG007";
    pub const LIMIT: &str = "LOG008";
    pub const VALUE_TOO_BIG: &str = "LOG009";
}

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
    #[serde(skip)]
    pub findings: Vec<Finding>,
}

/// One event as the rules see it.
#[derive(Clone)]
struct Ev {
    line: u64,
    key: Value,
    v: Value,
}

impl Ev {
    fn key(&self) -> &str {
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
    check_source(ruleset, &mut open, display)
}

/// Checks a log held in memory, reporting it as `display`.
pub fn check_bytes(ruleset: &Ruleset, bytes: &[u8], display: &str) -> LogCheck {
    let mut open = || -> std::io::Result<Box<dyn Read + '_>> { Ok(Box::new(bytes)) };
    check_source(ruleset, &mut open, display)
}

fn unreadable(display: &str, e: &std::io::Error) -> LogCheck {
    let finding = Finding::new(
        codes::UNREADABLE,
        Severity::Error,
        display,
        format!("cannot read the log: {e}"),
    );
    finish(display, vec![finding], None, None, None)
}

/// Facts read in the first pass besides the rule walk.
#[derive(Default)]
struct Facts {
    division: Option<String>,
    benchmark: Option<String>,
    run_start: Option<f64>,
    run_stop: Option<f64>,
}

impl Facts {
    fn note(&mut self, r: &Record<'_>) {
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
) -> LogCheck {
    let mut run = Run {
        ruleset,
        display,
        insts: Vec::new(),
        extra: Vec::new(),
    };
    run.new_instance(ROOT_PACK, None, None);
    let mut facts = Facts::default();
    let summary = match run.passes(open, Some(&mut facts)) {
        Ok(Some(s)) => s,
        Ok(None) => ScanSummary::default(),
        Err(e) => return unreadable(display, &e),
    };
    let seconds = match (facts.run_start, facts.run_stop) {
        (Some(a), Some(b)) => Some((b - a) / 1000.0),
        _ => None,
    };
    let mut findings = scan_findings(&summary, display);
    if summary.well_formed() == 0 {
        if summary.long_total == 0 {
            findings.push(Finding::new(
                codes::NO_RECORDS,
                Severity::Error,
                display,
                "no ':::MLLOG' records found in the log",
            ));
        }
        return finish(display, findings, facts.division, facts.benchmark, seconds);
    }
    match run.finish_all(open) {
        Ok(tagged) => findings.extend(tagged.into_iter().map(|t| t.finding)),
        Err(e) => return unreadable(display, &e),
    }
    findings.append(&mut run.extra);
    finish(display, findings, facts.division, facts.benchmark, seconds)
}

/// Findings about the bytes of the log: malformed records, non-string keys,
/// over-long lines.
fn scan_findings(summary: &ScanSummary, display: &str) -> Vec<Finding> {
    let mut findings = Vec::new();
    for m in &summary.malformed {
        findings.push(
            Finding::new(
                codes::MALFORMED,
                Severity::Error,
                display,
                format!("malformed MLLOG record: {}: {}", m.error, m.excerpt),
            )
            .at_line(Some(m.line)),
        );
    }
    let more = summary.malformed_total - summary.malformed.len() as u64;
    if more > 0 {
        findings.push(Finding::new(
            codes::MALFORMED,
            Severity::Error,
            display,
            format!(
                "{more} more malformed MLLOG records (only the first {} are listed)",
                mllog::MAX_KEPT
            ),
        ));
    }
    for &line in &summary.non_string_keys {
        findings.push(
            Finding::new(
                codes::NON_STRING_KEY,
                Severity::Warning,
                display,
                "MLLOG record whose 'key' is not a string; the record is ignored",
            )
            .at_line(Some(line)),
        );
    }
    let more = summary.non_string_total - summary.non_string_keys.len() as u64;
    if more > 0 {
        findings.push(Finding::new(
            codes::NON_STRING_KEY,
            Severity::Warning,
            display,
            format!("{more} more records whose 'key' is not a string"),
        ));
    }
    for l in &summary.long_lines {
        findings.push(
            Finding::new(
                codes::LONG_LINE,
                Severity::Error,
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
        findings.push(Finding::new(
            codes::LONG_LINE,
            Severity::Error,
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

fn to_ev(r: &Record<'_>) -> Ev {
    let key = Value::from(r.key.as_ref());
    let v = Value::from_object(EventObj {
        key: key.clone(),
        value: r.value(),
        metadata_raw: r.metadata.into(),
        metadata: OnceLock::new(),
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
struct EventObj {
    key: Value,
    value: Value,
    metadata_raw: Box<str>,
    metadata: OnceLock<Value>,
    time_ms: Value,
    line: Value,
    event_type: Value,
}

impl Object for EventObj {
    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        Some(match key.as_str()? {
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

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        Enumerator::Str(&["key", "value", "metadata", "time_ms", "line", "event_type"])
    }
}

/// The state `s` of one pack run, updated in place (rebuilding a map on
/// every assignment was a quarter of the run time).
/// A pack has about ten state variables: a list beats a hash map.
#[derive(Debug, Default)]
struct StateObj {
    vars: RwLock<Vec<(String, Value)>>,
}

impl StateObj {
    fn set(&self, name: &str, v: Value) {
        let mut vars = self.vars.write().unwrap_or_else(|e| e.into_inner());
        match vars.iter_mut().find(|(k, _)| k == name) {
            Some(slot) => slot.1 = v,
            None => vars.push((name.to_string(), v)),
        }
    }

    /// A frozen copy, for aggregates (which see the state before the walk).
    fn snapshot(&self) -> Value {
        let vars = self.vars.read().unwrap_or_else(|e| e.into_inner());
        Value::from_iter(vars.iter().map(|(k, v)| (k.clone(), v.clone())))
    }
}

impl Object for StateObj {
    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        let vars = self.vars.read().unwrap_or_else(|e| e.into_inner());
        let key = key.as_str()?;
        vars.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone())
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        let vars = self.vars.read().unwrap_or_else(|e| e.into_inner());
        Enumerator::Values(vars.iter().map(|(k, _)| Value::from(k.as_str())).collect())
    }
}

/// The names in scope of a rule expression: `v` and `s`. One per pack run,
/// with `v` swapped for each event.
#[derive(Debug)]
struct Scope {
    v: RwLock<Value>,
    s: Value,
}

impl Object for Scope {
    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        match key.as_str()? {
            "v" => Some(self.v.read().unwrap_or_else(|e| e.into_inner()).clone()),
            "s" => Some(self.s.clone()),
            _ => None,
        }
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        Enumerator::Str(&["v", "s"])
    }
}

/// A scope over a fixed event and state (aggregates, end checks).
fn scope(v: &Value, s: &Value) -> Value {
    Value::from_object(Scope {
        v: RwLock::new(v.clone()),
        s: s.clone(),
    })
}

struct Tagged {
    /// The key an error is about, when a later pack may void it.
    key: Option<String>,
    finding: Finding,
}

/// Per-rule bookkeeping during one pack's walk.
#[derive(Default)]
struct Seen {
    count: usize,
    first_value: Option<Value>,
    all_same: bool,
    distinct: Vec<String>,
    second_line: Option<u64>,
    executed: bool,
    first_checked: bool,
    satisfied: usize,
    last_line: Option<u64>,
    last_value: Option<Value>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Needs a read of the log from its first line.
    Fresh,
    /// Seeing the events of the current read.
    Live,
    /// Has seen every real event.
    Read,
    /// Virtual events and end checks done.
    Done,
}

/// One group of an aggregate.
struct Group {
    group: Value,
    fields: Vec<(String, Value)>,
    time_ms: f64,
    line: u64,
}

#[derive(Default)]
struct Groups {
    list: Vec<Group>,
    index: HashMap<Value, usize>,
    dropped: u64,
}

/// One run of one pack over the log.
struct Inst<'r> {
    name: String,
    /// `None`: the ruleset has no such pack.
    pack: Option<&'r Pack>,
    /// Line of the event that included it.
    from_line: Option<u64>,
    phase: Phase,
    state: Arc<StateObj>,
    scope: Arc<Scope>,
    scope_value: Value,
    /// The state before the walk, for aggregates.
    start_state: Value,
    seen: Vec<Seen>,
    groups: Vec<Groups>,
    children: Vec<usize>,
    findings: Vec<Tagged>,
    /// Findings not kept, by (code, key).
    dropped: HashMap<(String, Option<String>), (usize, Severity)>,
    kept: HashMap<(String, Option<String>), usize>,
    alternatives_reported: Vec<String>,
}

struct Run<'a, 'r> {
    ruleset: &'r Ruleset,
    display: &'a str,
    insts: Vec<Inst<'r>>,
    /// Findings about the run itself (limits reached).
    extra: Vec<Finding>,
}

impl<'r> Run<'_, 'r> {
    /// Adds a pack run; `None` when the limit of pack runs is reached.
    fn new_instance(
        &mut self,
        name: &str,
        from_line: Option<u64>,
        parent: Option<usize>,
    ) -> Option<usize> {
        if self.insts.len() >= MAX_PACK_RUNS {
            if self.insts.len() == MAX_PACK_RUNS {
                self.extra.push(
                    Finding::new(
                        codes::LIMIT,
                        Severity::Error,
                        self.display,
                        format!(
                            "the rule packs include more than {MAX_PACK_RUNS} packs (last: '{name}'); the rest are not run"
                        ),
                    )
                    .at_line(from_line),
                );
                // Count it once.
                self.insts.push(Inst::missing(name, from_line));
                if let Some(last) = self.insts.last_mut() {
                    last.phase = Phase::Done;
                    last.pack = None;
                }
            }
            return None;
        }
        let pack = self.ruleset.packs.get(name);
        let mut inst = Inst::missing(name, from_line);
        if let Some(pack) = pack {
            inst.pack = Some(pack);
            inst.phase = Phase::Fresh;
            inst.seen = pack.rules.iter().map(|_| Seen::default()).collect();
            inst.groups = pack.aggregates.iter().map(|_| Groups::default()).collect();
            inst.init_state(self.display);
        }
        let idx = self.insts.len();
        self.insts.push(inst);
        if let Some(p) = parent {
            self.insts[p].children.push(idx);
        }
        Some(idx)
    }

    /// Reads the log as many times as instances need it (once, normally).
    /// Returns the summary of the first read, if this call made one.
    fn passes<'s>(
        &mut self,
        open: &mut dyn FnMut() -> std::io::Result<Box<dyn Read + 's>>,
        mut facts: Option<&mut Facts>,
    ) -> std::io::Result<Option<ScanSummary>> {
        let mut first = None;
        loop {
            let mut live: Vec<usize> = Vec::new();
            for (i, inst) in self.insts.iter_mut().enumerate() {
                if inst.phase == Phase::Fresh {
                    inst.phase = Phase::Live;
                    live.push(i);
                }
            }
            if live.is_empty() {
                return Ok(first);
            }
            let reader = open()?;
            let mut buffer: Vec<Ev> = Vec::new();
            let mut buffer_bytes = 0usize;
            let mut buffering = true;
            let keys = &self.ruleset.keys;
            let summary = mllog::scan_records(
                reader,
                |k| keys.contains(k),
                |r| {
                    if let Some(f) = facts.as_deref_mut() {
                        f.note(r);
                    }
                    let ev = to_ev(r);
                    if buffering {
                        buffer_bytes += r.value.len() + r.metadata.len() + 64;
                        if buffer.len() < REPLAY_EVENTS && buffer_bytes < REPLAY_BYTES {
                            buffer.push(ev.clone());
                        } else {
                            buffering = false;
                            buffer = Vec::new();
                        }
                    }
                    let mut born: VecDeque<usize> = VecDeque::new();
                    for &i in &live {
                        self.feed(i, &ev, true, &mut born);
                    }
                    // Instances included just now see what came before.
                    while let Some(c) = born.pop_front() {
                        if self.insts[c].phase != Phase::Fresh {
                            continue;
                        }
                        if !buffering {
                            continue; // read again in the next pass
                        }
                        self.insts[c].phase = Phase::Live;
                        for e in &buffer {
                            self.feed(c, e, true, &mut born);
                        }
                        live.push(c);
                    }
                },
            )?;
            for &i in &live {
                self.insts[i].phase = Phase::Read;
            }
            facts = None;
            if first.is_none() {
                first = Some(summary);
            }
        }
    }

    /// Virtual events and end checks of every run, in include order, and
    /// the voiding of errors later packs redefine. Returns the findings.
    fn finish_all<'s>(
        &mut self,
        open: &mut dyn FnMut() -> std::io::Result<Box<dyn Read + 's>>,
    ) -> std::io::Result<Vec<Tagged>> {
        let mut out: Vec<Tagged> = Vec::new();
        let mut virt_all: Vec<Ev> = Vec::new();
        let mut queue: VecDeque<usize> = VecDeque::from([0]);
        while let Some(j) = queue.pop_front() {
            let Some(pack) = self.insts[j].pack else {
                if self.insts[j].phase != Phase::Done || j < MAX_PACK_RUNS {
                    let inst = &self.insts[j];
                    out.push(Tagged {
                        key: None,
                        finding: Finding::new(
                            codes::MISSING_PACK,
                            Severity::Error,
                            self.display,
                            format!(
                                "the log asks for rule pack '{}', which ruleset {} {} does not have",
                                inst.name, self.ruleset.usage, self.ruleset.version
                            ),
                        )
                        .at_line(inst.from_line),
                    });
                }
                continue;
            };
            // Errors earlier packs raised for keys this pack redefines are void.
            out.retain(|t| {
                t.finding.severity != Severity::Error
                    || t.key.as_ref().is_none_or(|k| !pack.by_key.contains_key(k))
            });
            if self.insts[j].phase == Phase::Fresh {
                self.passes(open, None)?;
            }
            // This run's aggregates also see earlier runs' virtual events.
            for ev in &virt_all {
                self.insts[j].aggregate(ev);
            }
            virt_all.extend(self.insts[j].virtual_events(self.display));
            let mut born = VecDeque::new();
            for ev in &virt_all {
                self.feed(j, ev, false, &mut born);
            }
            if self.insts.iter().any(|i| i.phase == Phase::Fresh) {
                self.passes(open, None)?;
            }
            self.insts[j].end(self.display);
            self.insts[j].phase = Phase::Done;
            out.append(&mut self.insts[j].take_findings());
            queue.extend(self.insts[j].children.iter().copied());
        }
        Ok(out)
    }

    /// One event through instance `i`; instances it includes are added to
    /// `born`.
    fn feed(&mut self, i: usize, ev: &Ev, real: bool, born: &mut VecDeque<usize>) {
        let includes = self.insts[i].walk(ev, real, self.display);
        for (name, line) in includes {
            if let Some(c) = self.new_instance(&name, line, Some(i)) {
                born.push_back(c);
            }
        }
    }
}

impl<'r> Inst<'r> {
    fn missing(name: &str, from_line: Option<u64>) -> Inst<'r> {
        let state = Arc::new(StateObj::default());
        let scope = Arc::new(Scope {
            v: RwLock::new(Value::from(())),
            s: Value::from_dyn_object(state.clone()),
        });
        Inst {
            name: name.to_string(),
            pack: None,
            from_line,
            phase: Phase::Done,
            scope_value: Value::from_dyn_object(scope.clone()),
            state,
            scope,
            start_state: Value::from(()),
            seen: Vec::new(),
            groups: Vec::new(),
            children: Vec::new(),
            findings: Vec::new(),
            dropped: HashMap::new(),
            kept: HashMap::new(),
            alternatives_reported: Vec::new(),
        }
    }

    fn init_state(&mut self, display: &str) {
        let Some(pack) = self.pack else { return };
        for (name, e) in &pack.state {
            match e.eval(self.scope_value.clone()) {
                Ok(v) => self.state.set(name, v),
                Err(err) => {
                    let f = Finding::new(
                        codes::RULE_ERROR,
                        Severity::Error,
                        display,
                        format!(
                            "rule pack state '{name}' could not be evaluated: {}",
                            err_text(&err)
                        ),
                    );
                    self.push(None, f);
                }
            }
        }
        self.start_state = self.state.snapshot();
    }

    fn set_event(&self, v: &Value) {
        *self.scope.v.write().unwrap_or_else(|e| e.into_inner()) = v.clone();
    }

    fn eval(&self, e: &Expr) -> Result<Value, minijinja::Error> {
        e.eval(self.scope_value.clone())
    }

    /// Keeps a finding unless its rule already reported
    /// [`MAX_FINDINGS_PER_RULE`]; returns whether it was kept.
    fn room(&mut self, code: &str, key: Option<&str>, severity: Severity) -> bool {
        let id = (code.to_string(), key.map(str::to_string));
        let n = self.kept.entry(id.clone()).or_insert(0);
        if *n < MAX_FINDINGS_PER_RULE {
            *n += 1;
            return true;
        }
        let d = self.dropped.entry(id).or_insert((0, severity));
        d.0 += 1;
        d.1 = d.1.max(severity);
        false
    }

    fn push(&mut self, key: Option<&str>, f: Finding) {
        let Some(pack) = self.pack else { return };
        let rule_id = match key {
            Some(k) => format!("{}#{}", pack.id, k),
            None => pack.id.clone(),
        };
        self.findings.push(Tagged {
            key: key.map(str::to_string),
            finding: f.with_rule(rule_id),
        });
    }

    fn take_findings(&mut self) -> Vec<Tagged> {
        let mut out = std::mem::take(&mut self.findings);
        let display = out
            .first()
            .map(|t| t.finding.path.clone())
            .unwrap_or_default();
        let mut dropped: Vec<_> = self.dropped.drain().collect();
        dropped.sort_by(|a, b| a.0.cmp(&b.0));
        for ((code, key), (n, severity)) in dropped {
            let what = key
                .as_deref()
                .map_or(String::new(), |k| format!(" about '{k}'"));
            let f = Finding::new(
                &code,
                severity,
                &display,
                format!("{n} more {code} findings{what} (only the first {MAX_FINDINGS_PER_RULE} are listed)"),
            );
            let rule_id = match (&key, self.pack) {
                (Some(k), Some(p)) => format!("{}#{}", p.id, k),
                (None, Some(p)) => p.id.clone(),
                _ => String::new(),
            };
            out.push(Tagged {
                key,
                finding: f.with_rule(rule_id),
            });
        }
        out
    }

    fn rule_finding(
        display: &str,
        rule: &Rule,
        severity: Severity,
        line: Option<u64>,
        msg: String,
    ) -> Finding {
        Finding::new(&rule.code, severity, display, msg)
            .at_line(line)
            .with_help(rule.help.clone())
    }

    /// Adds a real event to the groups of this run's aggregates.
    fn aggregate(&mut self, ev: &Ev) {
        let Some(pack) = self.pack else { return };
        for (agg, groups) in pack.aggregates.iter().zip(self.groups.iter_mut()) {
            if agg.from != ev.key() {
                continue;
            }
            let ctx = scope(&ev.v, &self.start_state);
            if let Some(when) = &agg.when {
                if !when.eval(ctx.clone()).is_ok_and(|r| r.is_true()) {
                    continue;
                }
            }
            let (Ok(group), Ok(field)) = (agg.group_by.eval(ctx.clone()), agg.field.eval(ctx))
            else {
                continue;
            };
            let field = field
                .as_str()
                .map(str::to_string)
                .unwrap_or_else(|| field.to_string());
            let value = ev.v.get_attr("value").unwrap_or_default();
            let time =
                ev.v.get_attr("time_ms")
                    .ok()
                    .and_then(|t| f64::try_from(t).ok())
                    .unwrap_or(0.0);
            // NaN is not equal to itself: as in a linear search, it never
            // joins an existing group.
            let found = groups
                .index
                .get(&group)
                .copied()
                .filter(|&i| groups.list[i].group == group);
            let g = match found {
                Some(i) => &mut groups.list[i],
                None => {
                    if groups.list.len() >= MAX_GROUPS {
                        groups.dropped += 1;
                        continue;
                    }
                    groups.index.insert(group.clone(), groups.list.len());
                    groups.list.push(Group {
                        fields: vec![(agg.group_field.clone(), group.clone())],
                        group,
                        time_ms: time,
                        line: ev.line,
                    });
                    let last = groups.list.len() - 1;
                    &mut groups.list[last]
                }
            };
            g.time_ms = g.time_ms.max(time);
            match g.fields.iter_mut().find(|(k, _)| *k == field) {
                Some(slot) => slot.1 = value,
                None => g.fields.push((field, value)),
            }
        }
    }

    /// The virtual events of this run's aggregates, in order of first
    /// appearance of each group; each takes the latest time of its members.
    fn virtual_events(&mut self, display: &str) -> Vec<Ev> {
        let Some(pack) = self.pack else {
            return Vec::new();
        };
        let mut out = Vec::new();
        let mut limit = Vec::new();
        for (agg, groups) in pack.aggregates.iter().zip(std::mem::take(&mut self.groups)) {
            if groups.dropped > 0 {
                limit.push(format!(
                    "aggregate '{}' has more than {MAX_GROUPS} groups; {} events were not grouped",
                    agg.key, groups.dropped
                ));
            }
            for g in groups.list {
                let value = Value::from_iter(g.fields);
                let key = Value::from(agg.key.as_str());
                let v = Value::from_object(EventObj {
                    key: key.clone(),
                    value,
                    metadata_raw: "{}".into(),
                    metadata: OnceLock::new(),
                    time_ms: Value::from(g.time_ms),
                    line: Value::from(g.line),
                    event_type: Value::from(()),
                });
                out.push(Ev {
                    line: g.line,
                    key,
                    v,
                });
            }
        }
        for msg in limit {
            let f = Finding::new(codes::LIMIT, Severity::Error, display, msg);
            self.push(None, f);
        }
        out
    }

    /// One event through this run's rules; returns the packs it includes.
    fn walk(&mut self, ev: &Ev, real: bool, display: &str) -> Vec<(String, Option<u64>)> {
        let Some(pack) = self.pack else {
            return Vec::new();
        };
        if real && !pack.aggregates.is_empty() {
            self.aggregate(ev);
        }
        let mut includes = Vec::new();
        let Some(&ri) = pack.by_key.get(ev.key()) else {
            return includes;
        };
        let rule = &pack.rules[ri];
        let value = ev.v.get_attr("value").unwrap_or_default();
        let sn = &mut self.seen[ri];
        sn.count += 1;
        match &sn.first_value {
            None => {
                sn.first_value = Some(value.clone());
                sn.all_same = true;
                sn.distinct.push(value.to_string());
            }
            Some(first) => {
                if sn.second_line.is_none() {
                    sn.second_line = Some(ev.line);
                }
                if *first != value {
                    sn.all_same = false;
                    if sn.distinct.len() < 8 {
                        let text = value.to_string();
                        if !sn.distinct.contains(&text) {
                            sn.distinct.push(text);
                        }
                    }
                }
            }
        }
        sn.last_line = Some(ev.line);
        sn.last_value = Some(value);
        let run_main = !(rule.once && sn.executed);
        let run_first = !sn.first_checked && !rule.first_check.is_empty();
        sn.executed = true;
        sn.first_checked = true;

        self.set_event(&ev.v);
        if run_main {
            self.assign(display, rule, &rule.before, ev);
            self.checks(display, rule, &rule.check, ev);
            self.assign(display, rule, &rule.set, ev);
            if let Some(inc) = &rule.include {
                match self.eval(inc) {
                    Ok(name) if name.is_true() => includes.push((name.to_string(), Some(ev.line))),
                    Ok(_) => {}
                    Err(err) => {
                        let msg = format!(
                            "could not work out which rule pack '{}' selects: {err}",
                            ev.key()
                        );
                        if self.room(&rule.code, Some(ev.key()), Severity::Error) {
                            let f = Self::rule_finding(
                                display,
                                rule,
                                Severity::Error,
                                Some(ev.line),
                                msg,
                            );
                            self.push(Some(ev.key()), f);
                        }
                    }
                }
            }
        }
        if run_first {
            self.checks(display, rule, &rule.first_check, ev);
        }
        if let Some((_, e)) = &rule.at_least_one {
            // The official tool crashes when this expression raises; we
            // count such an occurrence as not satisfying it.
            if self.eval(e).is_ok_and(|r| r.is_true()) {
                self.seen[ri].satisfied += 1;
            }
        }
        includes
    }

    /// Requirements, `at_least_one` and end-of-log checks.
    fn end(&mut self, display: &str) {
        let Some(pack) = self.pack else { return };
        self.alternatives_reported.clear();
        for (ri, rule) in pack.rules.iter().enumerate() {
            let sn = &self.seen[ri];
            if let Some((src, _)) = &rule.at_least_one {
                if sn.count > 0 && sn.satisfied == 0 {
                    let last = match (&sn.last_value, sn.last_line) {
                        (Some(v), Some(l)) => {
                            format!(" (last logged value {} at line {l})", short(v))
                        }
                        _ => String::new(),
                    };
                    let msg = format!("no '{}' satisfies `{src}`{last}", rule.key);
                    let f = Self::rule_finding(display, rule, rule.severity, None, msg);
                    self.push(None, f);
                }
            }
            self.requirement(display, pack, rule, ri);
        }

        self.set_event(&Value::from(()));
        for end in &pack.end {
            for (name, e) in &end.before {
                if let Ok(v) = self.eval(e) {
                    self.state.set(name, v);
                }
            }
            for (src, e) in &end.check {
                let msg = match self.eval(e) {
                    Ok(r) if r.is_true() => continue,
                    Ok(_) => format!("end-of-log check failed: `{src}`"),
                    Err(err) => format!("end-of-log check could not be evaluated: `{src}`: {err}"),
                };
                let f =
                    Finding::new(&end.code, end.severity, display, msg).with_help(end.help.clone());
                self.push(None, f);
            }
        }
    }

    fn requirement(&mut self, display: &str, pack: &Pack, rule: &Rule, ri: usize) {
        let Some(req) = &rule.require else { return };
        let sn = &self.seen[ri];
        let key = rule.key.as_str();
        let n = sn.count;
        let (severity, msg, line) = match req {
            Require::Optional => return,
            Require::ExactlyOne if n == 1 => return,
            Require::ExactlyOne if n == 0 => (
                rule.severity,
                format!("required exactly one '{key}' but found 0"),
                None,
            ),
            Require::ExactlyOne if sn.all_same => (
                Severity::Warning.min(rule.severity),
                format!("'{key}' logged {n} times with the same value (exactly one expected)"),
                sn.second_line,
            ),
            Require::ExactlyOne => (
                rule.severity,
                format!(
                    "required exactly one '{key}' but found {n} with different values: [{}]",
                    sn.distinct.join(", ")
                ),
                sn.second_line,
            ),
            Require::AtLeastOne if n >= 1 => return,
            Require::AtLeastOne => (
                rule.severity,
                format!("required at least one '{key}' but found 0"),
                None,
            ),
            Require::AtLeast(m) if n >= *m as usize => return,
            Require::AtLeast(m) => (
                rule.severity,
                format!("required at least {m} '{key}' but found {n}"),
                None,
            ),
            Require::AtLeastOneOf(alts) => {
                let any_alt = alts
                    .iter()
                    .any(|a| pack.by_key.get(a).is_some_and(|&i| self.seen[i].count > 0));
                if n > 0 || any_alt {
                    return;
                }
                // `block_stop or epoch_stop` and `epoch_stop or block_stop`
                // are one requirement: report it once.
                let mut set: Vec<&str> = alts.iter().map(String::as_str).collect();
                set.push(key);
                set.sort_unstable();
                set.dedup();
                let id = set.join(",");
                if self.alternatives_reported.contains(&id) {
                    return;
                }
                self.alternatives_reported.push(id);
                let mut names = vec![format!("'{key}'")];
                names.extend(alts.iter().map(|a| format!("'{a}'")));
                let msg = format!("required at least one of {}", names.join(" or "));
                // Not tied to the key: a later pack does not void it.
                let f = Self::rule_finding(display, rule, rule.severity, None, msg);
                self.push(None, f);
                return;
            }
        };
        let f = Self::rule_finding(display, rule, severity, line, msg);
        self.push(Some(key), f);
    }

    fn assign(&mut self, display: &str, rule: &Rule, list: &[(String, Expr)], ev: &Ev) {
        for (name, e) in list {
            match self.eval(e) {
                Ok(v) if !state_fits(&v) => {
                    // Refused: state that grows on every event (`s.x ~ s.x`)
                    // would exhaust memory. LOG009 makes the run exit 2.
                    if !self.room(codes::VALUE_TOO_BIG, Some(ev.key()), Severity::Error) {
                        continue;
                    }
                    let msg = format!(
                        "state update '{name}' for '{}' builds a value larger than {} bytes (MAX_STATE_VALUE_BYTES); the value is not kept",
                        ev.key(),
                        super::budget::MAX_STATE_VALUE_BYTES
                    );
                    let mut f =
                        Self::rule_finding(display, rule, Severity::Error, Some(ev.line), msg);
                    f.code = codes::VALUE_TOO_BIG.to_string();
                    f.help = None;
                    self.push(Some(ev.key()), f);
                }
                Ok(v) => self.state.set(name, v),
                Err(err) => {
                    if !self.room(&rule.code, Some(ev.key()), Severity::Error) {
                        continue;
                    }
                    let msg = format!(
                        "state update '{name}' for '{}' could not be evaluated: {err}",
                        ev.key()
                    );
                    let f = Self::rule_finding(display, rule, Severity::Error, Some(ev.line), msg);
                    self.push(Some(ev.key()), f);
                }
            }
        }
    }

    fn checks(&mut self, display: &str, rule: &Rule, list: &[Check], ev: &Ev) {
        for Check { src, expr: e, code } in list {
            let outcome = self.eval(e);
            if matches!(&outcome, Ok(r) if r.is_true()) {
                continue;
            }
            let (c, severity) = match code {
                Some(c) => (c.code.as_str(), c.severity),
                None => (rule.code.as_str(), rule.severity),
            };
            if !self.room(c, Some(ev.key()), severity) {
                continue;
            }
            let msg = match outcome {
                Ok(_) => {
                    let value = ev.v.get_attr("value").unwrap_or_default();
                    format!("'{}' = {} fails `{src}`", ev.key(), short(&value))
                }
                Err(err) => format!(
                    "check on '{}' could not be evaluated: `{src}`: {}",
                    ev.key(),
                    err_text(&err)
                ),
            };
            let f = match code {
                Some(c) => Finding::new(&c.code, c.severity, display, msg)
                    .at_line(Some(ev.line))
                    .with_help(c.help.clone()),
                None => Self::rule_finding(display, rule, rule.severity, Some(ev.line), msg),
            };
            self.push(Some(ev.key()), f);
        }
    }
}

fn err_text(err: &minijinja::Error) -> String {
    match err.detail() {
        Some(d) => format!("{}: {d}", err.kind()),
        None => err.kind().to_string(),
    }
}

/// A value rendered for a message: JSON-like, at most 80 characters.
fn short(v: &Value) -> String {
    let text = match v.as_str() {
        Some(s) => format!("{s:?}"),
        None if v.is_none() => "null".to_string(),
        None => v.to_string(),
    };
    if text.chars().count() > 80 {
        let mut t: String = text.chars().take(77).collect();
        t.push_str("...");
        t
    } else {
        text
    }
}

/// Whether a value may be kept in a pack's state.
fn state_fits(v: &Value) -> bool {
    let cap = super::budget::MAX_STATE_VALUE_BYTES;
    super::budget::value_size(v, cap) <= cap
}
