//! Decoding the JSON object of one MLLOG record.

use super::Event;
use serde::Deserialize;
use serde_json::value::RawValue;
use std::borrow::Cow;

/// Why a record could not be decoded.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error("invalid JSON after ':::MLLOG': {0}")]
    Json(String),
    #[error("MLLOG record has no '{0}' field")]
    Missing(&'static str),
    #[error("'time_ms' is not a number: {0}")]
    BadTime(String),
}

/// A record whose JSON is valid, with `value` and `metadata` not yet decoded.
#[derive(Debug)]
pub struct RawRecord<'a> {
    pub time_ms: f64,
    /// `None` when the JSON `key` is not a string.
    pub key: Option<Cow<'a, str>>,
    pub event_type: Option<Cow<'a, str>>,
    pub value: &'a RawValue,
    pub metadata: &'a RawValue,
}

/// The fields of a record; `None` means absent (a JSON `null` is present).
#[derive(Deserialize)]
struct Wire<'a> {
    #[serde(borrow, default, deserialize_with = "present")]
    time_ms: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    key: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    event_type: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    value: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    metadata: Option<&'a RawValue>,
}

fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
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

impl RawRecord<'_> {
    /// Decodes `value` and `metadata` into an owned event.
    pub fn into_event(self, line: u64) -> Result<Event, RecordError> {
        Ok(Event {
            line,
            time_ms: self.time_ms,
            key: self.key.map(Cow::into_owned).unwrap_or_default(),
            event_type: self.event_type.map(Cow::into_owned),
            value: json_value(self.value.get())?,
            metadata: json_value(self.metadata.get())?,
        })
    }
}

fn json_value(text: &str) -> Result<serde_json::Value, RecordError> {
    serde_json::from_str(text).map_err(|e| RecordError::Json(e.to_string()))
}

/// Validates the whole object and picks out the fields the engine needs.
pub fn decode(text: &str) -> Result<RawRecord<'_>, RecordError> {
    let wire: Wire<'_> =
        serde_json::from_str(text).map_err(|e| RecordError::Json(e.to_string()))?;
    let time = wire.time_ms.ok_or(RecordError::Missing("time_ms"))?;
    let key = wire.key.ok_or(RecordError::Missing("key"))?;
    let value = wire.value.ok_or(RecordError::Missing("value"))?;
    let metadata = wire.metadata.ok_or(RecordError::Missing("metadata"))?;
    Ok(RawRecord {
        time_ms: parse_time(time)?,
        key: as_string(key),
        event_type: wire.event_type.and_then(as_string),
        value,
        metadata,
    })
}

fn as_string(raw: &RawValue) -> Option<Cow<'_, str>> {
    let text = raw.get();
    if !text.starts_with('"') {
        return None;
    }
    if !text.contains('\\') {
        return Some(Cow::Borrowed(&text[1..text.len() - 1]));
    }
    serde_json::from_str::<String>(text).ok().map(Cow::Owned)
}

/// `time_ms` as the official tool reads it: `float()` of a number or of a
/// numeric string.
fn parse_time(raw: &RawValue) -> Result<f64, RecordError> {
    let text = raw.get();
    let bad = || RecordError::BadTime(text.chars().take(40).collect());
    if let Some(s) = as_string(raw) {
        return s.trim().parse::<f64>().map_err(|_| bad());
    }
    match text.as_bytes().first() {
        Some(b'-' | b'0'..=b'9') => text.parse::<f64>().map_err(|_| bad()),
        _ => Err(bad()),
    }
}
