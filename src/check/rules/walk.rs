//! The walk of one pack over a log's events: an *instance* (one run of one
//! pack, with its own state), the bookkeeping of each rule, aggregates, the
//! replay of events for packs included part-way, and the voiding of
//! earlier errors by later packs. [`super::engine`] drives it.

use super::engine::{
    scope, to_ev, Ev, EventObj, Facts, Observer, Scope, StateObj, MAX_FINDINGS_PER_RULE,
    MAX_GROUPS, MAX_PACK_RUNS, REPLAY_BYTES, REPLAY_EVENTS,
};
use super::expr::Expr;
use super::load::{Check, Pack, Rule, Ruleset};
use super::pack::Require;
use super::tally::{err_text, short, state_fits, Group, Groups, Phase, Seen};
use crate::finding::code;
use crate::finding::{Finding, Severity};
use crate::mllog::{self, ScanSummary};
use minijinja::Value;
use std::collections::{HashMap, VecDeque};
use std::io::Read;
use std::sync::{Arc, OnceLock, RwLock};

pub(super) struct Tagged {
    /// The key an error is about, when a later pack may void it.
    pub(super) key: Option<String>,
    pub(super) finding: Finding,
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

pub(super) struct Run<'a, 'r> {
    ruleset: &'r Ruleset,
    display: &'a str,
    insts: Vec<Inst<'r>>,
    /// Findings about the run itself (limits reached).
    pub(super) extra: Vec<Finding>,
}

impl<'a, 'r> Run<'a, 'r> {
    pub(super) fn new(ruleset: &'r Ruleset, display: &'a str) -> Self {
        Run {
            ruleset,
            display,
            insts: Vec::new(),
            extra: Vec::new(),
        }
    }

    /// Adds a pack run; `None` when the limit of pack runs is reached.
    pub(super) fn new_instance(
        &mut self,
        name: &str,
        from_line: Option<u64>,
        parent: Option<usize>,
    ) -> Option<usize> {
        if self.insts.len() >= MAX_PACK_RUNS {
            if self.insts.len() == MAX_PACK_RUNS {
                self.extra.push(
                    Finding::of(
                        code::LOG008,
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
    /// Line of the first record of `key` that met its rule's
    /// `at_least_one` (the benchmark's quality target, for
    /// `eval_accuracy`), in any pack.
    pub(super) fn first_satisfied(&self, key: &str) -> Option<u64> {
        self.insts
            .iter()
            .filter_map(|inst| {
                let ri = *inst.pack?.by_key.get(key)?;
                inst.seen.get(ri)?.first_satisfied
            })
            .min()
    }

    pub(super) fn passes<'s>(
        &mut self,
        open: &mut dyn FnMut() -> std::io::Result<Box<dyn Read + 's>>,
        mut facts: Option<&mut Facts>,
        mut observer: Option<&mut dyn Observer>,
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
            let reader = match open() {
                Ok(r) => r,
                Err(e) => {
                    if let Some(o) = observer.take() {
                        o.done(Err(&e));
                    }
                    return Err(e);
                }
            };
            // The observer sees the first read only, through a RefCell:
            // the scan's three callbacks each need it.
            let obs = std::cell::RefCell::new(observer.take());
            let mut buffer: Vec<Ev> = Vec::new();
            let mut buffer_bytes = 0usize;
            let mut buffering = true;
            let keys = &self.ruleset.keys;
            let summary = mllog::scan_records_raw_in(
                self.ruleset.format,
                reader,
                |k| keys.contains(k) || obs.borrow_mut().as_mut().is_some_and(|o| o.wants(k)),
                |r| {
                    // The one decode of the record's value (and metadata,
                    // when the observer reads it), shared with the observer.
                    let value = r.value();
                    let mut metadata = None;
                    if let Some(o) = obs.borrow_mut().as_mut() {
                        if o.wants_metadata(&r.key) {
                            metadata = Some(r.metadata());
                        }
                        o.record(r, &value, metadata.as_ref());
                        if !keys.contains(r.key.as_ref()) {
                            return;
                        }
                    }
                    if let Some(f) = facts.as_deref_mut() {
                        f.note(r);
                    }
                    let ev = to_ev(r, value, metadata);
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
                |raw| {
                    if let Some(o) = obs.borrow_mut().as_mut() {
                        o.raw(raw);
                    }
                },
            );
            if let Some(o) = obs.into_inner() {
                o.done(summary.as_ref());
            }
            let summary = summary?;
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
    pub(super) fn finish_all<'s>(
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
                        finding: Finding::of(
                            code::LOG003,
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
                self.passes(open, None, None)?;
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
                self.passes(open, None, None)?;
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
                    let f = Finding::of(
                        code::LOG006,
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
            let f = Finding::of(code::LOG008, display, msg);
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
                let sn = &mut self.seen[ri];
                sn.satisfied += 1;
                sn.first_satisfied.get_or_insert(ev.line);
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
                            format!("; last logged {} at line {l}", short(v))
                        }
                        _ => String::new(),
                    };
                    let msg = match super::plain::expected(src) {
                        Some(want) => format!(
                            "no '{}' reached the expected value: expected {want}{last}",
                            rule.key
                        ),
                        None => format!("no '{}' satisfies `{src}`{last}", rule.key),
                    };
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
                    if !self.room(code::LOG009.id, Some(ev.key()), Severity::Error) {
                        continue;
                    }
                    let msg = format!(
                        "state update '{name}' for '{}' builds a value larger than {} bytes (MAX_STATE_VALUE_BYTES); the value is not kept",
                        ev.key(),
                        super::budget::MAX_STATE_VALUE_BYTES
                    );
                    let mut f =
                        Self::rule_finding(display, rule, Severity::Error, Some(ev.line), msg);
                    f.code = code::LOG009.id.to_string();
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
                    match super::plain::expected(src) {
                        Some(want) => {
                            format!("'{}' logged {}, expected {want}", ev.key(), short(&value))
                        }
                        None => format!("'{}' = {} fails `{src}`", ev.key(), short(&value)),
                    }
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
