//! The bookkeeping of one pack run over a log: what each rule has seen,
//! the phase of the run, the groups an aggregate builds, and the small
//! helpers that word a rule's findings. [`super::walk`] uses them.

use minijinja::Value;
use std::collections::HashMap;

/// Per-rule bookkeeping during one pack's walk.
#[derive(Default)]
pub(super) struct Seen {
    pub(super) count: usize,
    pub(super) first_value: Option<Value>,
    pub(super) all_same: bool,
    pub(super) distinct: Vec<String>,
    pub(super) second_line: Option<u64>,
    pub(super) executed: bool,
    pub(super) first_checked: bool,
    pub(super) satisfied: usize,
    /// Line of the first event that met the rule's `at_least_one`.
    pub(super) first_satisfied: Option<u64>,
    pub(super) last_line: Option<u64>,
    pub(super) last_value: Option<Value>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Phase {
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
pub(super) struct Group {
    pub(super) group: Value,
    pub(super) fields: Vec<(String, Value)>,
    pub(super) time_ms: f64,
    pub(super) line: u64,
}

#[derive(Default)]
pub(super) struct Groups {
    pub(super) list: Vec<Group>,
    pub(super) index: HashMap<Value, usize>,
    pub(super) dropped: u64,
}

pub(super) fn err_text(err: &minijinja::Error) -> String {
    match err.detail() {
        Some(d) => format!("{}: {d}", err.kind()),
        None => err.kind().to_string(),
    }
}

/// A value rendered for a message: JSON-like, at most 80 characters.
pub(super) fn short(v: &Value) -> String {
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
pub(super) fn state_fits(v: &Value) -> bool {
    let cap = super::budget::MAX_STATE_VALUE_BYTES;
    super::budget::value_size(v, cap) <= cap
}
