//! Seed checks of a closed-division benchmark folder (official
//! `seed_checker.py`, training rules since v4.1): every run logs at least one
//! seed convertible with Python's `int()`, and no `(metadata.file,
//! metadata.lineno, seed)` occurs twice, across runs or within one run.

use super::logscan::LogFacts;
use crate::finding::code;
use crate::finding::Finding;
use serde_json::Value;
use std::collections::HashMap;

/// Python's `int(v)` on a decoded JSON value.
pub fn python_int(v: &Value) -> Result<i128, String> {
    match v {
        Value::Bool(b) => Ok(i128::from(*b)),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                Ok(i128::from(i))
            } else if let Some(u) = n.as_u64() {
                Ok(i128::from(u))
            } else {
                let f = n.as_f64().unwrap_or(f64::NAN);
                if f.is_finite() && f.abs() < 1e38 {
                    Ok(f.trunc() as i128)
                } else {
                    Err(format!("cannot convert float {f} to integer"))
                }
            }
        }
        Value::String(s) => {
            parse_int_str(s).ok_or_else(|| format!("invalid literal for int() with base 10: {s:?}"))
        }
        Value::Null => Err("null is not a number".into()),
        Value::Array(_) | Value::Object(_) => Err(format!("{} is not a number", short(v))),
    }
}

/// `int("...")`: surrounding whitespace, an optional sign, decimal digits
/// with single underscores between them.
fn parse_int_str(s: &str) -> Option<i128> {
    let t = s.trim();
    let (neg, digits) = match t.as_bytes().first()? {
        b'-' => (true, &t[1..]),
        b'+' => (false, &t[1..]),
        _ => (false, t),
    };
    if digits.is_empty()
        || digits.starts_with('_')
        || digits.ends_with('_')
        || digits.contains("__")
        || !digits.chars().all(|c| c.is_ascii_digit() || c == '_')
    {
        return None;
    }
    let n: i128 = digits.replace('_', "").parse().ok()?;
    Some(if neg { -n } else { n })
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 60 {
        format!("{}…", s.chars().take(60).collect::<String>())
    } else {
        s
    }
}

/// A comparable form of `metadata.file` / `metadata.lineno` (`12` and
/// `12.0` are the same key, as in Python).
fn key_part(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Number(n) => match n.as_f64() {
            Some(f) if f.fract() == 0.0 && f.abs() < 1e15 => format!("{}", f as i64),
            _ => n.to_string(),
        },
        other => other.to_string(),
    }
}

const HELP_UNIQUE: &str = "seed every run from an allowed entropy source (clock, /dev/urandom); \
two runs must not log the same seed from the same source line";

/// Checks the seeds of the logs of one folder, in log order.
pub fn check_seeds(logs: &[&LogFacts], out: &mut Vec<Finding>) {
    let mut seen: HashMap<(String, String, i128), String> = HashMap::new();
    for log in logs {
        if log.read_error.is_some() {
            continue; // reported by the caller (PKG010)
        }
        let malformed: Vec<_> = log.malformed.iter().collect();
        if let Some(m) = malformed.first() {
            out.push(
                Finding::of(
                    code::SEED006,
                    &log.path,
                    format!(
                        "seeds cannot be read: {} malformed MLLOG record(s), first: {}",
                        malformed.len(),
                        m.error
                    ),
                )
                .at_line(Some(m.line))
                .with_help("fix or remove the malformed :::MLLOG lines"),
            );
            continue;
        }
        let mut records = Vec::new();
        let mut bad = false;
        for s in &log.seeds {
            let value = match python_int(&s.value) {
                Ok(v) => v,
                Err(e) => {
                    out.push(
                        Finding::of(
                            code::SEED002,
                            &log.path,
                            format!("seed {} is not an integer: {e}", short(&s.value)),
                        )
                        .at_line(Some(s.line))
                        .with_help("log the seed as an integer"),
                    );
                    bad = true;
                    continue;
                }
            };
            let file = s.metadata.get("file");
            let lineno = s.metadata.get("lineno");
            let (Some(file), Some(lineno)) = (file, lineno) else {
                let missing = if file.is_none() { "file" } else { "lineno" };
                out.push(
                    Finding::of(
                        code::SEED005,
                        &log.path,
                        format!("seed record has no metadata.{missing}"),
                    )
                    .at_line(Some(s.line))
                    .with_help("log the seed with mllog, which records the source file and line"),
                );
                bad = true;
                continue;
            };
            records.push((key_part(file), key_part(lineno), value, s.line));
        }
        if bad {
            // The official checker abandons the whole file on the first bad record.
            continue;
        }
        if records.is_empty() {
            out.push(
                Finding::of(code::SEED001, &log.path, "run logs no seed").with_help(
                    "log the seed with mllog key 'seed' (required in closed division since v4.1)",
                ),
            );
            continue;
        }
        if records.len() > 1 {
            out.push(
                Finding::of(
                    code::SEED004,
                    &log.path,
                    format!("run logs {} seeds; one is expected", records.len()),
                )
                .at_line(records.get(1).map(|r| r.3))
                .with_help("log one seed per run"),
            );
        }
        for (file, lineno, value, line) in records {
            let key = (file, lineno, value);
            if let Some(first) = seen.get(&key) {
                let other = if *first == log.path {
                    "this log already logs it".to_string()
                } else {
                    format!("{first} already logs it")
                };
                out.push(
                    Finding::of(
                        code::SEED003,
                        &log.path,
                        format!(
                            "seed {} logged from {}:{}, and {other} from the same line",
                            key.2, key.0, key.1
                        ),
                    )
                    .at_line(Some(line))
                    .with_help(HELP_UNIQUE),
                );
            } else {
                seen.insert(key, log.path.clone());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn python_int_rules() {
        assert_eq!(python_int(&json!(42)), Ok(42));
        assert_eq!(python_int(&json!(3.9)), Ok(3));
        assert_eq!(python_int(&json!(" -1_000 ")), Ok(-1000));
        assert_eq!(python_int(&json!(true)), Ok(1));
        assert!(python_int(&json!("1.5")).is_err());
        assert!(python_int(&json!("")).is_err());
        assert!(python_int(&json!("1__0")).is_err());
        assert!(python_int(&json!(null)).is_err());
        assert!(python_int(&json!([1])).is_err());
    }
}
