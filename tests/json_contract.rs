//! The JSON report against its documentation (`docs/json-report.md`):
//! every documented field is in the output (unless the table marks it
//! *omitted when empty*), and every field of the output is documented.
//! Run on the bundled example and on package fixtures that carry the
//! rarer parts (an `official` field, a bypass).

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_mlaudit");

/// Section (`benchmarks[].rcp`) → (field → may be omitted).
fn documented() -> BTreeMap<String, BTreeMap<String, bool>> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/json-report.md");
    let text = std::fs::read_to_string(path).expect("docs/json-report.md");
    let mut out: BTreeMap<String, BTreeMap<String, bool>> = BTreeMap::new();
    let mut section: Option<String> = None;
    for line in text.lines() {
        if let Some(h) = line.strip_prefix("### ") {
            section = Some(h.trim().to_string());
            continue;
        }
        if line.starts_with("## ") {
            section = None;
        }
        let (Some(sec), Some(rest)) = (&section, line.strip_prefix("| `")) else {
            continue;
        };
        let Some((field, meaning)) = rest.split_once("` |") else {
            continue;
        };
        out.entry(sec.clone())
            .or_default()
            .insert(field.to_string(), meaning.contains("*omitted when empty*"));
    }
    out
}

/// The objects of `report` a section documents.
fn objects<'a>(report: &'a Value, section: &str) -> Vec<&'a Value> {
    let mut cur: Vec<&Value> = vec![report];
    if section == "report" {
        return cur;
    }
    for part in section.split('.') {
        let (name, many) = match part.strip_suffix("[]") {
            Some(n) => (n, true),
            None => (part, false),
        };
        cur = cur
            .into_iter()
            .filter_map(|v| v.get(name))
            .flat_map(|v| match (many, v) {
                (true, Value::Array(a)) => a.iter().collect::<Vec<_>>(),
                (false, Value::Object(_)) => vec![v],
                _ => vec![],
            })
            .collect();
    }
    cur
}

fn report(target: &Path) -> Value {
    let out = Command::new(BIN)
        .args(["check", "--ruleset", "5.0.0", "--format", "json"])
        .arg(target)
        .output()
        .expect("mlaudit runs");
    assert!(matches!(out.status.code(), Some(0 | 1)));
    serde_json::from_slice(&out.stdout).expect("JSON")
}

#[test]
fn the_json_report_is_its_documentation() {
    let docs = documented();
    for s in [
        "report",
        "summary",
        "logs[]",
        "benchmarks[]",
        "benchmarks[].rcp",
        "benchmarks[].score",
        "benchmarks[].stats",
        "packages[]",
        "findings[]",
        "bypasses[]",
        "repeatability[]",
    ] {
        assert!(
            docs.contains_key(s),
            "docs/json-report.md has no section {s}"
        );
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    let mut optional_seen: BTreeSet<(String, String)> = BTreeSet::new();
    for target in [
        "examples/Example",
        "tests/fixtures/package/unknown_files/Org",
        "tests/fixtures/package/params_no_newline/Org",
        // Implementation configs with repeatability settings.
        "tests/fixtures/policy/repeatability/Org",
    ] {
        let r = report(&root.join(target));
        for (section, fields) in &docs {
            for obj in objects(&r, section) {
                *seen.entry(section.as_str()).or_default() += 1;
                let Value::Object(map) = obj else {
                    panic!("{target}: {section} is not an object: {obj}")
                };
                let have: BTreeSet<&str> = map.keys().map(String::as_str).collect();
                for (field, optional) in fields {
                    if have.contains(field.as_str()) {
                        if *optional {
                            optional_seen.insert((section.clone(), field.clone()));
                        }
                    } else {
                        assert!(*optional, "{target}: {section} lacks documented `{field}`");
                    }
                }
                for field in have {
                    assert!(
                        fields.contains_key(field),
                        "{target}: {section} has `{field}`, not in docs/json-report.md"
                    );
                }
            }
        }
        // `root` is never empty; paths are as typed.
        assert!(!r["root"].as_str().unwrap().is_empty());
    }
    for section in docs.keys() {
        assert!(
            seen.get(section.as_str()).copied().unwrap_or(0) > 0,
            "no output had a {section} to check"
        );
    }
    assert!(optional_seen.contains(&("findings[]".to_string(), "official".to_string())));
}

#[test]
fn root_is_a_dot_for_the_current_folder() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/Example");
    let out = Command::new(BIN)
        .current_dir(&dir)
        .args(["check", "--ruleset", "5.0.0", "--format", "json", "."])
        .output()
        .expect("mlaudit runs");
    let r: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(r["root"], ".");
    assert_eq!(r["packages"][0]["path"], ".");
    assert!(r["logs"][0]["path"]
        .as_str()
        .unwrap()
        .starts_with("results/example_system/retinanet/"));
}
