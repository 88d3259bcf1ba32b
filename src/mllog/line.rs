//! Decoding the JSON object of one MLLOG record.

use super::json::{self, JsonError};
use super::Event;
use std::borrow::Cow;

/// Why a record could not be decoded.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error("invalid JSON after ':::MLLOG': {0}")]
    Json(JsonError),
    #[error("MLLOG record has no '{0}' field")]
    Missing(&'static str),
    #[error("'time_ms' is not a number: {0}")]
    BadTime(String),
}

/// A record whose JSON is valid, with `value` and `metadata` still raw JSON
/// text: most records are read by no rule, and decoding is paid only for
/// those that are.
#[derive(Debug, Clone)]
pub struct Record<'a> {
    /// 1-based physical line number in the file.
    pub line: u64,
    pub time_ms: f64,
    pub key: Cow<'a, str>,
    pub event_type: Option<Cow<'a, str>>,
    /// The JSON text of `value` (validated).
    pub value: &'a str,
    /// The JSON text of `metadata` (validated).
    pub metadata: &'a str,
}

impl Record<'_> {
    /// `value` as a rule value (Python's reading: `NaN` and `1e999` are floats).
    pub fn value(&self) -> minijinja::Value {
        json::parse(self.value).unwrap_or_default()
    }

    /// `metadata` as a rule value.
    pub fn metadata(&self) -> minijinja::Value {
        json::parse(self.metadata).unwrap_or_default()
    }

    /// An owned copy with `serde_json` values. `serde_json` has no NaN or
    /// infinity: such numbers become `null` there.
    pub fn to_event(&self) -> Event {
        Event {
            line: self.line,
            time_ms: self.time_ms,
            key: self.key.clone().into_owned(),
            event_type: self.event_type.clone().map(Cow::into_owned),
            value: to_serde(self.value),
            metadata: to_serde(self.metadata),
        }
    }
}

fn to_serde(raw: &str) -> serde_json::Value {
    serde_json::from_str(raw).unwrap_or_else(|_| {
        json::parse(raw)
            .ok()
            .and_then(|v| serde_json::to_value(&v).ok())
            .unwrap_or(serde_json::Value::Null)
    })
}

/// Bytes Python's `str.strip()` removes from a latin-1 decoded line.
fn is_py_space(b: u8) -> bool {
    matches!(
        b,
        b'\t' | b'\n' | 0x0b | 0x0c | b'\r' | 0x1c..=0x1f | b' ' | 0x85 | 0xa0
    )
}

fn trim(mut body: &[u8]) -> &[u8] {
    while let [first, rest @ ..] = body {
        if is_py_space(*first) {
            body = rest;
        } else {
            break;
        }
    }
    while let [rest @ .., last] = body {
        if is_py_space(*last) {
            body = rest;
        } else {
            break;
        }
    }
    body
}

/// The text of a record: borrowed when it is UTF-8, converted from latin-1
/// (as the official tool reads every file) otherwise.
pub fn record_text(body: &[u8]) -> Cow<'_, str> {
    let body = trim(body);
    match std::str::from_utf8(body) {
        Ok(s) => Cow::Borrowed(s),
        Err(_) => Cow::Owned(body.iter().map(|&b| b as char).collect()),
    }
}

/// Validates the whole object and picks out the fields the engine needs.
/// `Ok(None)`: a valid record whose `key` is not a string (ignored, as the
/// official tool ignores it).
pub fn decode(text: &str, line: u64) -> Result<Option<Record<'_>>, RecordError> {
    let f = json::record_fields(text).map_err(RecordError::Json)?;
    let time = f.time_ms.ok_or(RecordError::Missing("time_ms"))?;
    let key = f.key.ok_or(RecordError::Missing("key"))?;
    let value = f.value.ok_or(RecordError::Missing("value"))?;
    let metadata = f.metadata.ok_or(RecordError::Missing("metadata"))?;
    let time_ms = parse_time(time)?;
    let Some(key) = as_string(key) else {
        return Ok(None);
    };
    Ok(Some(Record {
        line,
        time_ms,
        key,
        event_type: f.event_type.and_then(as_string),
        value,
        metadata,
    }))
}

fn as_string(raw: &str) -> Option<Cow<'_, str>> {
    if !raw.starts_with('"') || raw.len() < 2 {
        return None;
    }
    if !raw.contains('\\') {
        return Some(Cow::Borrowed(&raw[1..raw.len() - 1]));
    }
    Some(Cow::Owned(json::unescape(raw)))
}

/// `time_ms` as the official tool reads it: `float()` of a number or of a
/// numeric string (`NaN`, `Infinity` and `"inf"` included, as in Python).
fn parse_time(raw: &str) -> Result<f64, RecordError> {
    let bad = || RecordError::BadTime(raw.chars().take(40).collect());
    if let Some(s) = as_string(raw) {
        return py_float(&s).ok_or_else(bad);
    }
    match json::parse(raw) {
        Ok(v) if v.kind() == minijinja::value::ValueKind::Number => f64::try_from(v.clone())
            .ok()
            .or_else(|| i128::try_from(v).ok().map(|i| i as f64))
            .ok_or_else(bad),
        _ => Err(bad()),
    }
}

/// Python's `float(str)`: surrounding whitespace, `_` between digits is not
/// handled (rare in logs), `inf`/`nan`/`infinity` in any case.
fn py_float(s: &str) -> Option<f64> {
    let t = s.trim();
    t.parse::<f64>().ok()
}
