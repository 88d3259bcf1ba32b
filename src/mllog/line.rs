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
    #[error("does not match ':::MLL <seconds> <key>: <json>': {0}")]
    Mll(&'static str),
    #[error("invalid JSON in ':::MLL' record: {0}")]
    MllJson(JsonError),
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

    /// [`Record::to_event`] from the rule values the caller already
    /// decoded (converted, not read again); `metadata` `None`: not
    /// needed, `null`.
    pub fn to_event_with(
        &self,
        value: &minijinja::Value,
        metadata: Option<&minijinja::Value>,
    ) -> Event {
        Event {
            line: self.line,
            time_ms: self.time_ms,
            key: self.key.clone().into_owned(),
            event_type: self.event_type.clone().map(Cow::into_owned),
            value: convert(self.value, value),
            metadata: metadata.map_or(serde_json::Value::Null, |m| convert(self.metadata, m)),
        }
    }
}

/// The serde_json value of `raw`, from its rule value `decoded`; a text
/// with a `-0` (serde_json reads the integer `-0` as the float `-0.0`, the
/// rule value as `0`) is read again as before. Rare in logs.
fn convert(raw: &str, decoded: &minijinja::Value) -> serde_json::Value {
    if memchr::memmem::find(raw.as_bytes(), b"-0").is_some() {
        return to_serde(raw);
    }
    json::to_serde(decoded)
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

/// Python's `\s` on a latin-1 or UTF-8 decoded line.
fn is_py_ws(c: char) -> bool {
    c.is_whitespace() || ('\x1c'..='\x1f').contains(&c)
}

/// Decodes the old line format of training 0.6.0, as the official
/// `mlp_parser/ruleset_060.py` does: `text` is what follows `:::MLL` on the
/// line (the line stripped), and must be one space, a timestamp in seconds
/// (`[\d.]+`, read by `float()`), one space, a key (`[A-Za-z0-9_]+`), an
/// optional space, `:`, whitespace and a JSON value. The record's `value`
/// and `metadata` are the fields of that JSON object. `Ok(None)`: valid
/// JSON that is not an object with a `value` field, which the official
/// checker skips (its `line.value['value']` raises and the line is
/// ignored). A missing `metadata` reads as `{}`, so a rule that reads a
/// metadata field fails there, as the official `v['metadata']` does.
pub fn decode_mll(text: &str, line: u64) -> Result<Option<Record<'_>>, RecordError> {
    let rest = text
        .strip_prefix(' ')
        .ok_or(RecordError::Mll("no space after ':::MLL'"))?;
    let ts_end = rest
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(rest.len());
    if ts_end == 0 {
        return Err(RecordError::Mll("no timestamp"));
    }
    let seconds: f64 = rest[..ts_end]
        .parse()
        .map_err(|_| RecordError::Mll("timestamp is not a number"))?;
    let rest = rest[ts_end..]
        .strip_prefix(' ')
        .ok_or(RecordError::Mll("no space after the timestamp"))?;
    let key_end = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    if key_end == 0 {
        return Err(RecordError::Mll("no key"));
    }
    let key = &rest[..key_end];
    let after = &rest[key_end..];
    let after = after.strip_prefix(' ').unwrap_or(after);
    let after = after
        .strip_prefix(':')
        .ok_or(RecordError::Mll("no ':' after the key"))?;
    let json_text = after.trim_start_matches(is_py_ws);
    if json_text.len() == after.len() || json_text.is_empty() || json_text.contains('\n') {
        return Err(RecordError::Mll("no value after the key"));
    }
    let f = match json::record_fields(json_text) {
        Ok(f) => f,
        Err(e) if e.what == json::NOT_AN_OBJECT => return Ok(None),
        Err(e) => return Err(RecordError::MllJson(e)),
    };
    let Some(value) = f.value else {
        return Ok(None);
    };
    Ok(Some(Record {
        line,
        time_ms: seconds * 1e3,
        key: Cow::Borrowed(key),
        event_type: None,
        value,
        metadata: f.metadata.unwrap_or("{}"),
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
