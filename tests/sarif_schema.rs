//! The SARIF output validates against the OASIS SARIF 2.1.0 JSON schema
//! (`tests/fixtures/sarif/sarif-schema-2.1.0.json`, the OASIS schema as
//! the `serde-sarif` 0.8.0 crate ships it, `$id`
//! oasis-tcs/sarif-spec `Schemata/sarif-schema-2.1.0.json`), and every
//! result is on a file and a line with a fingerprint: on the bundled
//! example, and on a real package of the shared corpus (folder findings
//! included) when the corpus is there.

mod common;

use serde_json::Value;
use std::path::Path;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_mlaudit");

fn validator() -> jsonschema::Validator {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sarif/sarif-schema-2.1.0.json");
    let text = std::fs::read_to_string(&path).expect("the SARIF schema fixture");
    let schema: Value = serde_json::from_str(&text).expect("the schema is JSON");
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft7)
        .build(&schema)
        .expect("the SARIF schema compiles")
}

fn sarif(dir: &Path, ruleset: &str, target: &str) -> Value {
    let out = Command::new(BIN)
        .current_dir(dir)
        .args(["check", "--ruleset", ruleset, "--format", "sarif", target])
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .expect("mlaudit runs");
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("SARIF is JSON")
}

/// Schema errors, and results without a line, a fingerprint or a rule
/// with a `helpUri`.
fn problems(doc: &Value) -> Vec<String> {
    let mut out: Vec<String> = validator()
        .iter_errors(doc)
        .take(20)
        .map(|e| format!("schema: {e} at {}", e.instance_path))
        .collect();
    let run = &doc["runs"][0];
    for rule in run["tool"]["driver"]["rules"]
        .as_array()
        .into_iter()
        .flatten()
    {
        if rule["helpUri"].as_str().is_none() {
            out.push(format!("rule without helpUri: {}", rule["id"]));
        }
    }
    for r in run["results"].as_array().into_iter().flatten() {
        let loc = &r["locations"][0]["physicalLocation"];
        if loc["region"]["startLine"].as_u64().is_none_or(|l| l < 1) {
            out.push(format!("result without a line: {r}"));
        }
        if loc["artifactLocation"]["uri"].as_str().is_none() {
            out.push(format!("result without a file: {r}"));
        }
        if r["partialFingerprints"]
            .as_object()
            .is_none_or(|m| m.is_empty())
        {
            out.push(format!("result without partialFingerprints: {r}"));
        }
    }
    out
}

#[test]
fn the_schema_rejects_what_it_should() {
    // The check can fail: a result with a line 0 and an unknown level.
    let bad = serde_json::json!({
        "version": "2.1.0",
        "runs": [{ "tool": { "driver": { "name": "x" } },
                   "results": [{ "message": { "text": "m" }, "level": "fatal",
                                 "locations": [{ "physicalLocation": {
                                     "artifactLocation": { "uri": "a" },
                                     "region": { "startLine": 0 } } }] }] }]
    });
    assert!(validator().iter_errors(&bad).count() >= 2);
}

#[test]
fn example_sarif_is_valid_and_every_result_is_on_a_line() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let doc = sarif(&root, "5.0.0", "Example");
    assert!(!doc["runs"][0]["results"].as_array().unwrap().is_empty());
    let p = problems(&doc);
    assert!(p.is_empty(), "{}", p.join("\n"));
}

#[test]
fn corpus_package_sarif_is_valid_and_every_result_is_on_a_line() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let round = corpus.join("v5.0");
    let doc = sarif(&round, "5.0.0", "NVIDIA");
    let results = doc["runs"][0]["results"].as_array().unwrap();
    // NVIDIA has folder findings (PKG020 is on a log; PKG040 and RCP on folders).
    assert!(results.len() > 10, "{}", results.len());
    assert!(results
        .iter()
        .any(|r| r["properties"]["path"].as_str().is_some()));
    let p = problems(&doc);
    assert!(p.is_empty(), "{}", p.join("\n"));
}
