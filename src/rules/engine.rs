//! Running a ruleset over one log.
//!
//! The log is scanned once; the events whose key some pack cares about are
//! kept. Then, as the official checker does, the root pack walks them with a
//! fresh state, and every pack it includes (by division, by benchmark) walks
//! them again with its own fresh state, in the order they were included.
//! When a later pack has a rule for a key, the errors earlier packs raised for
//! that key are dropped: benchmark rules replace common rules.

use super::expr::Expr;
use super::load::{Check, Pack, Rule, Ruleset, ROOT_PACK};
use super::pack::Require;
use crate::finding::{Finding, Severity};
use crate::mllog::{self, Event};
use minijinja::value::{Enumerator, Object};
use minijinja::Value;
use serde::Serialize;
use std::collections::VecDeque;
use std::io::Read;
use std::path::Path;
use std::sync::Arc;

/// Codes of the findings the engine itself raises (documented in
/// `rules/codes/log.yaml`).
pub mod codes {
    pub const MALFORMED: &str = "LOG001";
    pub const NO_RECORDS: &str = "LOG002";
    pub const MISSING_PACK: &str = "LOG003";
    pub const NON_STRING_KEY: &str = "LOG004";
    pub const UNREADABLE: &str = "LOG005";
    pub const RULE_ERROR: &str = "LOG006";
}

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
struct Ev {
    line: u64,
    key: String,
    v: Value,
}

/// Checks the log at `path`, reporting it as `display`. An unreadable file
/// is a failing check with an `LOG005` finding, not an error.
pub fn check_file(ruleset: &Ruleset, path: &Path, display: &str) -> LogCheck {
    match std::fs::File::open(path) {
        Ok(f) => check_reader(ruleset, f, display),
        Err(e) => unreadable(display, &e),
    }
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

/// Checks a log read from `reader`, reporting it as `display`.
pub fn check_reader<R: Read>(ruleset: &Ruleset, reader: R, display: &str) -> LogCheck {
    let mut events: Vec<Ev> = Vec::new();
    let mut division = None;
    let mut benchmark = None;
    let (mut run_start, mut run_stop) = (None, None);
    let scanned = mllog::scan(
        reader,
        |k| ruleset.keys.contains(k),
        |e: Event| {
            match e.key.as_str() {
                "submission_division" if division.is_none() => division = as_text(&e.value),
                "submission_benchmark" if benchmark.is_none() => benchmark = as_text(&e.value),
                "run_start" if run_start.is_none() => run_start = Some(e.time_ms),
                "run_stop" => run_stop = Some(e.time_ms),
                _ => {}
            }
            events.push(to_ev(e));
        },
    );
    let summary = match scanned {
        Ok(s) => s,
        Err(e) => return unreadable(display, &e),
    };
    let seconds = match (run_start, run_stop) {
        (Some(a), Some(b)) => Some((b - a) / 1000.0),
        _ => None,
    };

    let mut findings: Vec<Finding> = Vec::new();
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
    let parsed = summary.records - summary.malformed.len() as u64;
    if parsed == 0 {
        findings.push(Finding::new(
            codes::NO_RECORDS,
            Severity::Error,
            display,
            "no ':::MLLOG' records found in the log",
        ));
        return finish(display, findings, division, benchmark, seconds);
    }

    let mut run = Run {
        display,
        findings: Vec::new(),
        alternatives_reported: Vec::new(),
    };
    let mut queue: VecDeque<(String, Option<u64>)> =
        VecDeque::from([(ROOT_PACK.to_string(), None)]);
    let mut pack_index = 0usize;
    // `pack_index` numbers the packs in the order they run (for messages).
    while let Some((name, from_line)) = queue.pop_front() {
        let Some(pack) = ruleset.packs.get(&name) else {
            run.findings.push(Tagged {
                key: None,
                finding: Finding::new(
                    codes::MISSING_PACK,
                    Severity::Error,
                    display,
                    format!(
                        "the log asks for rule pack '{name}', which ruleset {} {} does not have",
                        ruleset.usage, ruleset.version
                    ),
                )
                .at_line(from_line),
            });
            pack_index += 1;
            continue;
        };
        // Errors earlier packs raised for keys this pack redefines are void.
        run.findings.retain(|t| {
            t.finding.severity != Severity::Error
                || t.key.as_ref().is_none_or(|k| !pack.by_key.contains_key(k))
        });
        for include in run.pack(pack, pack_index, &mut events) {
            queue.push_back(include);
        }
        pack_index += 1;
    }
    findings.extend(run.findings.into_iter().map(|t| t.finding));
    finish(display, findings, division, benchmark, seconds)
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

fn as_text(v: &serde_json::Value) -> Option<String> {
    match v {
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Null => None,
        other => Some(other.to_string()),
    }
}

fn to_ev(e: Event) -> Ev {
    let v = Value::from_object(EventObj {
        key: Value::from(e.key.as_str()),
        value: json_to_value(&e.value),
        metadata: json_to_value(&e.metadata),
        time_ms: Value::from(e.time_ms),
        line: Value::from(e.line),
        event_type: e.event_type.map(Value::from).unwrap_or_default(),
    });
    Ev {
        line: e.line,
        key: e.key,
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

/// The event object `v` of rule expressions.
#[derive(Debug)]
struct EventObj {
    key: Value,
    value: Value,
    metadata: Value,
    time_ms: Value,
    line: Value,
    event_type: Value,
}

impl Object for EventObj {
    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        Some(match key.as_str()? {
            "key" => self.key.clone(),
            "value" => self.value.clone(),
            "metadata" => self.metadata.clone(),
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

/// The names in scope of a rule expression: `v` and `s`.
#[derive(Debug)]
struct Scope {
    v: Value,
    s: Value,
}

impl Object for Scope {
    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        match key.as_str()? {
            "v" => Some(self.v.clone()),
            "s" => Some(self.s.clone()),
            _ => None,
        }
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        Enumerator::Str(&["v", "s"])
    }
}

fn scope(v: &Value, s: &Value) -> Value {
    Value::from_object(Scope {
        v: v.clone(),
        s: s.clone(),
    })
}

struct Tagged {
    /// The key an error is about, when a later pack may void it.
    key: Option<String>,
    finding: Finding,
}

struct Run<'a> {
    display: &'a str,
    findings: Vec<Tagged>,
    /// Alternative sets already reported by the current pack.
    alternatives_reported: Vec<String>,
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

struct State {
    vars: indexmap::IndexMap<String, Value>,
    value: Value,
}

impl State {
    fn set(&mut self, name: &str, v: Value) {
        self.vars.insert(name.to_string(), v);
        self.value = Value::from_iter(self.vars.iter().map(|(k, v)| (k.clone(), v.clone())));
    }
}

impl Run<'_> {
    fn push(&mut self, pack: &Pack, _pack_index: usize, key: Option<&str>, f: Finding) {
        let rule_id = match key {
            Some(k) => format!("{}#{}", pack.id, k),
            None => pack.id.clone(),
        };
        self.findings.push(Tagged {
            key: key.map(str::to_string),
            finding: f.with_rule(rule_id),
        });
    }

    fn rule_finding(
        &self,
        rule: &Rule,
        severity: Severity,
        line: Option<u64>,
        msg: String,
    ) -> Finding {
        Finding::new(&rule.code, severity, self.display, msg)
            .at_line(line)
            .with_help(rule.help.clone())
    }

    /// Walks the events with one pack; returns the packs it includes.
    fn pack(
        &mut self,
        pack: &Pack,
        idx: usize,
        events: &mut Vec<Ev>,
    ) -> Vec<(String, Option<u64>)> {
        let mut state = State {
            vars: indexmap::IndexMap::new(),
            value: Value::from_iter(std::iter::empty::<(String, Value)>()),
        };
        let none = Value::from(());
        for (name, e) in &pack.state {
            match e.eval(scope(&none, &state.value)) {
                Ok(v) => state.set(name, v),
                Err(err) => {
                    let f = Finding::new(
                        codes::RULE_ERROR,
                        Severity::Error,
                        self.display,
                        format!(
                            "rule pack state '{name}' could not be evaluated: {}",
                            err_text(&err)
                        ),
                    );
                    self.push(pack, idx, None, f);
                }
            }
        }
        for agg in &pack.aggregates {
            let virt = aggregate(agg, events, &state.value);
            events.extend(virt);
        }

        self.alternatives_reported.clear();
        let mut seen: Vec<Seen> = pack.rules.iter().map(|_| Seen::default()).collect();
        let mut includes = Vec::new();
        for ev in events.iter() {
            let Some(&ri) = pack.by_key.get(&ev.key) else {
                continue;
            };
            let rule = &pack.rules[ri];
            let value = ev.v.get_attr("value").unwrap_or_default();
            let sn = &mut seen[ri];
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
                        let text = value.to_string();
                        if sn.distinct.len() < 8 && !sn.distinct.contains(&text) {
                            sn.distinct.push(text);
                        }
                    }
                }
            }
            sn.last_line = Some(ev.line);
            sn.last_value = Some(value.clone());
            let run_main = !(rule.once && sn.executed);
            let run_first = !sn.first_checked && !rule.first_check.is_empty();
            sn.executed = true;
            sn.first_checked = true;

            if run_main {
                self.assign(pack, idx, rule, &rule.before, ev, &mut state);
                self.checks(pack, idx, rule, &rule.check, ev, &state);
                self.assign(pack, idx, rule, &rule.set, ev, &mut state);
                if let Some(inc) = &rule.include {
                    match inc.eval(scope(&ev.v, &state.value)) {
                        Ok(name) if name.is_true() => {
                            includes.push((name.to_string(), Some(ev.line)))
                        }
                        Ok(_) => {}
                        Err(err) => {
                            let msg = format!(
                                "could not work out which rule pack '{}' selects: {err}",
                                ev.key
                            );
                            let f = self.rule_finding(rule, Severity::Error, Some(ev.line), msg);
                            self.push(pack, idx, Some(&ev.key), f);
                        }
                    }
                }
            }
            if run_first {
                self.checks(pack, idx, rule, &rule.first_check, ev, &state);
            }
            if let Some((_, e)) = &rule.at_least_one {
                // The official tool crashes when this expression raises; we
                // count such an occurrence as not satisfying it.
                if e.eval(scope(&ev.v, &state.value))
                    .is_ok_and(|r| r.is_true())
                {
                    seen[ri].satisfied += 1;
                }
            }
        }

        for (rule, sn) in pack.rules.iter().zip(&seen) {
            if let Some((src, _)) = &rule.at_least_one {
                if sn.count > 0 && sn.satisfied == 0 {
                    let last = match (&sn.last_value, sn.last_line) {
                        (Some(v), Some(l)) => {
                            format!(" (last logged value {} at line {l})", short(v))
                        }
                        _ => String::new(),
                    };
                    let msg = format!("no '{}' satisfies `{src}`{last}", rule.key);
                    let f = self.rule_finding(rule, rule.severity, None, msg);
                    self.push(pack, idx, None, f);
                }
            }
            self.requirement(pack, idx, rule, sn, &seen);
        }

        for end in &pack.end {
            let ctx_ev = Value::from(());
            for (name, e) in &end.before {
                if let Ok(v) = e.eval(scope(&ctx_ev, &state.value)) {
                    state.set(name, v);
                }
            }
            for (src, e) in &end.check {
                let outcome = e.eval(scope(&ctx_ev, &state.value));
                let msg = match outcome {
                    Ok(r) if r.is_true() => continue,
                    Ok(_) => format!("end-of-log check failed: `{src}`"),
                    Err(err) => format!("end-of-log check could not be evaluated: `{src}`: {err}"),
                };
                let f = Finding::new(&end.code, end.severity, self.display, msg)
                    .with_help(end.help.clone());
                self.push(pack, idx, None, f);
            }
        }
        includes
    }

    fn requirement(&mut self, pack: &Pack, idx: usize, rule: &Rule, sn: &Seen, seen: &[Seen]) {
        let Some(req) = &rule.require else { return };
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
                    .any(|a| pack.by_key.get(a).is_some_and(|&i| seen[i].count > 0));
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
                let f = self.rule_finding(rule, rule.severity, None, msg);
                self.push(pack, idx, None, f);
                return;
            }
        };
        let f = self.rule_finding(rule, severity, line, msg);
        self.push(pack, idx, Some(key), f);
    }

    fn assign(
        &mut self,
        pack: &Pack,
        idx: usize,
        rule: &Rule,
        list: &[(String, Expr)],
        ev: &Ev,
        state: &mut State,
    ) {
        for (name, e) in list {
            match e.eval(scope(&ev.v, &state.value)) {
                Ok(v) => state.set(name, v),
                Err(err) => {
                    let msg = format!(
                        "state update '{name}' for '{}' could not be evaluated: {err}",
                        ev.key
                    );
                    let f = self.rule_finding(rule, Severity::Error, Some(ev.line), msg);
                    self.push(pack, idx, Some(&ev.key), f);
                }
            }
        }
    }

    fn checks(
        &mut self,
        pack: &Pack,
        idx: usize,
        rule: &Rule,
        list: &[Check],
        ev: &Ev,
        state: &State,
    ) {
        for Check { src, expr: e, code } in list {
            let msg = match e.eval(scope(&ev.v, &state.value)) {
                Ok(r) if r.is_true() => continue,
                Ok(_) => {
                    let value = ev.v.get_attr("value").unwrap_or_default();
                    format!("'{}' = {} fails `{src}`", ev.key, short(&value))
                }
                Err(err) => format!(
                    "check on '{}' could not be evaluated: `{src}`: {}",
                    ev.key,
                    err_text(&err)
                ),
            };
            let f = match code {
                Some(c) => Finding::new(&c.code, c.severity, self.display, msg)
                    .at_line(Some(ev.line))
                    .with_help(c.help.clone()),
                None => self.rule_finding(rule, rule.severity, Some(ev.line), msg),
            };
            self.push(pack, idx, Some(&ev.key), f);
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

/// Builds the virtual events of one aggregate, in order of first appearance
/// of each group; each takes the latest time of its members.
fn aggregate(agg: &super::load::Aggregate, events: &[Ev], state: &Value) -> Vec<Ev> {
    struct Group {
        group: Value,
        fields: Vec<(String, Value)>,
        time_ms: f64,
        line: u64,
    }
    let mut groups: Vec<Group> = Vec::new();
    for ev in events.iter().filter(|e| e.key == agg.from) {
        let ctx = scope(&ev.v, state);
        if let Some(when) = &agg.when {
            if !when.eval(ctx.clone()).is_ok_and(|r| r.is_true()) {
                continue;
            }
        }
        let (Ok(group), Ok(field)) = (agg.group_by.eval(ctx.clone()), agg.field.eval(ctx)) else {
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
        let g = match groups.iter_mut().position(|g| g.group == group) {
            Some(i) => &mut groups[i],
            None => {
                groups.push(Group {
                    fields: vec![(agg.group_field.clone(), group.clone())],
                    group,
                    time_ms: time,
                    line: ev.line,
                });
                let last = groups.len() - 1;
                &mut groups[last]
            }
        };
        g.time_ms = g.time_ms.max(time);
        match g.fields.iter_mut().find(|(k, _)| *k == field) {
            Some(slot) => slot.1 = value,
            None => g.fields.push((field, value)),
        }
    }
    groups
        .into_iter()
        .map(|g| {
            let value = Value::from_iter(g.fields);
            let v = Value::from_object(EventObj {
                key: Value::from(agg.key.as_str()),
                value,
                metadata: Value::from_iter(std::iter::empty::<(String, Value)>()),
                time_ms: Value::from(g.time_ms),
                line: Value::from(g.line),
                event_type: Value::from(()),
            });
            Ev {
                line: g.line,
                key: agg.key.clone(),
                v,
            }
        })
        .collect()
}
