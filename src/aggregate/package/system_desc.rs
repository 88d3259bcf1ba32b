//! System description checks (`systems/<id>.json`), after the official
//! `system_desc_checker`, with its bugs fixed: an invalid `status` no longer
//! hides the missing-field messages, and values that crash the official tool
//! (a number where it joins strings) are findings.

use super::rules::SystemDescRules;
use crate::discover::tree::SystemFile;
use crate::finding::code;
use crate::finding::Finding;
use serde_json::{Map, Value};

/// What later checks need from a system description.
#[derive(Debug, Clone, Default)]
pub struct SystemInfo {
    pub id: String,
    pub path: String,
    /// `None` when the file could not be read as a JSON object.
    pub json: Option<Map<String, Value>>,
}

impl SystemInfo {
    pub fn str_field(&self, name: &str) -> Option<&str> {
        self.json.as_ref()?.get(name)?.as_str()
    }
    pub fn division(&self) -> Option<&str> {
        self.str_field("division")
    }
}

fn python_int_ok(v: &Value) -> bool {
    super::seeds::python_int(v).is_ok() && !v.is_boolean()
}

pub fn check_system(
    sys: &SystemFile,
    rules: &SystemDescRules,
    out: &mut Vec<Finding>,
) -> SystemInfo {
    let mut info = SystemInfo {
        id: sys.id.clone(),
        path: sys.file.path.clone(),
        json: None,
    };
    let path = &sys.file.path;
    let bytes =
        match crate::safe_io::read_regular(&sys.file.fs, crate::safe_io::MAX_SYSTEM_JSON_BYTES) {
            Ok(b) => b,
            Err(e) => {
                out.push(Finding::of(
                    code::PKG010,
                    path,
                    format!("cannot read file: {e}"),
                ));
                return info;
            }
        };
    let parsed: Result<Value, _> = serde_json::from_slice(&bytes);
    let obj = match parsed {
        Ok(Value::Object(m)) => m,
        Ok(other) => {
            out.push(
                Finding::of(
                    code::SYS003,
                    path,
                    format!(
                        "system description must be a JSON object, not {}",
                        kind(&other)
                    ),
                )
                .with_help("write the system description as one JSON object of fields"),
            );
            return info;
        }
        Err(e) => {
            out.push(
                Finding::of(code::SYS003, path, format!("invalid JSON: {e}"))
                    .at_line(Some(e.line() as u64))
                    .with_help("fix the JSON syntax"),
            );
            return info;
        }
    };
    let missing: Vec<&str> = rules
        .required_fields
        .iter()
        .filter(|f| !obj.contains_key(f.as_str()))
        .map(String::as_str)
        .collect();
    if !missing.is_empty() {
        out.push(
            Finding::of(
                code::SYS001,
                path,
                format!("missing field(s): {}", missing.join(", ")),
            )
            .with_help("add every required field; an empty string is accepted where a value does not apply"),
        );
    }
    if !rules.status_values.is_empty() {
        if let Some(status) = obj.get("status") {
            if !status
                .as_str()
                .is_some_and(|s| rules.status_values.iter().any(|a| a == s))
            {
                out.push(
                    Finding::of(
                        code::SYS002,
                        path,
                        format!(
                            "status {} is not one of: {}",
                            status,
                            rules.status_values.join(" | ")
                        ),
                    )
                    .with_help("use one of the listed status strings exactly"),
                );
            }
        }
    }
    for f in &rules.string_fields {
        if let Some(v) = obj.get(f) {
            if !v.is_string() {
                out.push(
                    Finding::of(
                        code::SYS004,
                        path,
                        format!(
                            "field {f} must be a string, not {} ({v}); the official package_checker crashes on it (TypeError in ','.join)",
                            kind(v)
                        ),
                    )
                    .with_help(format!("quote the value: \"{f}\": \"...\"")),
                );
            }
        }
    }
    for f in &rules.integer_fields {
        if let Some(v) = obj.get(f) {
            if !python_int_ok(v) {
                out.push(
                    Finding::of(
                        code::SYS005,
                        path,
                        format!("field {f} ({v}) is not a whole number; the result summarizer cannot score this system"),
                    )
                    .with_help(format!("give {f} as a whole number, e.g. \"8\"")),
                );
            }
        }
    }
    info.json = Some(obj);
    info
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
