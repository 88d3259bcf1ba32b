//! `--format sarif`: SARIF 2.1.0, as GitHub code scanning reads it
//! (`github/codeql-action/upload-sarif`).
//!
//! One run; `tool.driver.rules` holds every code the results use, with its
//! title and how to fix it from `rules/codes/`; each result has `ruleId`,
//! `ruleIndex`, `level`, `message.text` and one location whose URI is
//! relative to the repository top (`uriBaseId` `%SRCROOT%`), with `/`
//! separators and percent-encoding. A finding about a folder points at the
//! folder; `region.startLine` is there only when the line is known.

use super::Report;
use crate::finding::Severity;
use crate::rulebook::codes::CodeRegistry;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::io::{self, Write};

pub const SCHEMA_URI: &str = "https://json.schemastore.org/sarif-2.1.0.json";
pub const SRCROOT: &str = "%SRCROOT%";

/// Renders `report`. `repo_prefix` is the current directory relative to the
/// repository top (`git rev-parse --show-prefix`, empty outside a
/// repository): finding paths are relative to the current directory.
pub fn render(
    report: &Report,
    codes: &CodeRegistry,
    repo_prefix: &str,
    out: &mut dyn Write,
) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, &document(report, codes, repo_prefix))
        .map_err(io::Error::other)?;
    writeln!(out)
}

/// The SARIF document as a JSON value.
pub fn document(report: &Report, codes: &CodeRegistry, repo_prefix: &str) -> Value {
    // Rules: the codes used, sorted, indexed for `ruleIndex`.
    let used: BTreeMap<&str, usize> = {
        let mut ids: Vec<&str> = report.findings.iter().map(|f| f.code.as_str()).collect();
        ids.sort_unstable();
        ids.dedup();
        ids.into_iter().enumerate().map(|(i, c)| (c, i)).collect()
    };
    let rules: Vec<Value> = used.keys().map(|code| rule(code, codes)).collect();
    let results: Vec<Value> = report
        .findings
        .iter()
        .map(|f| {
            let mut physical = Map::new();
            let path = crate::discover::git::repo_relative(repo_prefix, &f.path);
            physical.insert("artifactLocation".into(), artifact(&path));
            if let Some(line) = f.line.filter(|l| *l > 0) {
                physical.insert("region".into(), json!({ "startLine": line }));
            }
            json!({
                "ruleId": f.code,
                "ruleIndex": used.get(f.code.as_str()).copied().unwrap_or(0),
                "level": level(f.severity),
                "message": { "text": f.message },
                "locations": [ { "physicalLocation": Value::Object(physical) } ],
            })
        })
        .collect();
    let mut driver = Map::new();
    driver.insert("name".into(), json!(report.tool));
    driver.insert("version".into(), json!(report.version));
    driver.insert("semanticVersion".into(), json!(report.version));
    if let Some(uri) = information_uri() {
        driver.insert("informationUri".into(), json!(uri));
    }
    driver.insert("rules".into(), Value::Array(rules));
    json!({
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [ {
            "tool": { "driver": Value::Object(driver) },
            "columnKind": "unicodeCodePoints",
            "results": results,
            "properties": {
                "usage": report.usage,
                "ruleset": report.ruleset,
                "verdict": report.verdict,
                "official_verdict": report.official_verdict,
            },
        } ],
    })
}

/// Where the tool is documented: the package's repository or homepage
/// (`Cargo.toml`), when it names one.
pub fn information_uri() -> Option<&'static str> {
    [env!("CARGO_PKG_REPOSITORY"), env!("CARGO_PKG_HOMEPAGE")]
        .into_iter()
        .find(|s| !s.is_empty())
}

fn level(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Note => "note",
    }
}

fn rule(code: &str, codes: &CodeRegistry) -> Value {
    let Some(doc) = codes.get(code) else {
        return json!({ "id": code, "shortDescription": { "text": code } });
    };
    let mut help = doc.help.clone();
    if let Some(p) = &doc.policy {
        help.push_str(&format!("\n\nPolicy: {p}"));
    }
    help.push_str(&format!("\n\nMore: `mlaudit rules explain {code}`"));
    let level = Severity::parse(&doc.severity).map_or("warning", level);
    json!({
        "id": code,
        "name": code,
        "shortDescription": { "text": doc.title },
        "fullDescription": { "text": doc.title },
        "help": { "text": help, "markdown": help },
        "defaultConfiguration": { "level": level },
        "properties": { "extra": doc.extra },
    })
}

/// `artifactLocation` of a repository-relative (or absolute) path.
fn artifact(path: &str) -> Value {
    if path.starts_with('/') {
        json!({ "uri": format!("file://{}", encode_uri_path(path)) })
    } else {
        json!({ "uri": encode_uri_path(path), "uriBaseId": SRCROOT })
    }
}

/// Percent-encodes everything but unreserved characters and `/`.
pub fn encode_uri_path(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_are_percent_encoded() {
        assert_eq!(
            encode_uri_path("A/results/my sys/bm/result_0.txt"),
            "A/results/my%20sys/bm/result_0.txt"
        );
        assert_eq!(encode_uri_path("a%b#c"), "a%25b%23c");
        assert_eq!(encode_uri_path("é"), "%C3%A9");
    }

    #[test]
    fn absolute_paths_become_file_uris() {
        assert_eq!(artifact("/tmp/x y")["uri"], "file:///tmp/x%20y");
        assert_eq!(artifact("a/b")["uriBaseId"], SRCROOT);
    }
}
