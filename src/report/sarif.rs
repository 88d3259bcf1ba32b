//! `--format sarif`: SARIF 2.1.0, as GitHub code scanning reads it
//! (`github/codeql-action/upload-sarif`).
//!
//! One run; `tool.driver.rules` holds every code the results use, with its
//! title and how to fix it from `rules/codes/`; each result has `ruleId`,
//! `ruleIndex`, `level`, `message.text` and one location whose URI is
//! relative to the repository top (`uriBaseId` `%SRCROOT%`), with `/`
//! separators and percent-encoding. Every result is on a file and a line
//! (`place.rs`): a finding about a folder is placed on line 1 of its first
//! result log (or its system description), its message starts with the
//! folder and `properties.path` keeps it. `partialFingerprints` identify a
//! result across runs; every rule has a `helpUri`.

use super::Report;
use crate::finding::Severity;
use crate::rulebook::codes::CodeRegistry;
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::io::{self, Write};

pub const SCHEMA_URI: &str = "https://json.schemastore.org/sarif-2.1.0.json";
pub const SRCROOT: &str = "%SRCROOT%";
/// The `partialFingerprints` key: code, path and message of the finding,
/// without its line, so a result keeps its identity when lines move.
pub const FINGERPRINT: &str = "mlauditFinding/v1";

/// SHA-256 of code, path and message, first 32 hex digits.
pub fn fingerprint(f: &crate::finding::Finding) -> String {
    let mut h = Sha256::new();
    for part in [&f.code, &f.path, &f.message] {
        h.update(part.as_bytes());
        h.update([0u8]);
    }
    h.finalize()
        .iter()
        .take(16)
        .map(|b| format!("{b:02x}"))
        .collect()
}

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
            let at = super::place::place(report, f);
            let path = crate::discover::git::repo_relative(repo_prefix, &at.path);
            let text = match &at.moved_from {
                Some(folder) => format!(
                    "{}: {}",
                    crate::discover::git::repo_relative(repo_prefix, folder),
                    f.message
                ),
                None => f.message.clone(),
            };
            let mut result = json!({
                "ruleId": f.code,
                "ruleIndex": used.get(f.code.as_str()).copied().unwrap_or(0),
                "level": level(f.severity),
                "message": { "text": text },
                "locations": [ { "physicalLocation": {
                    "artifactLocation": artifact(&path),
                    "region": { "startLine": at.line },
                } } ],
                "partialFingerprints": { FINGERPRINT: fingerprint(f) },
            });
            if let Some(folder) = &at.moved_from {
                result["properties"] =
                    json!({ "path": crate::discover::git::repo_relative(repo_prefix, folder) });
            }
            result
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

/// The page documenting a code: its registry file in the repository
/// (`rules/codes/run.yaml`, the text `mlaudit rules explain` prints).
fn help_uri(file: &str) -> Option<String> {
    let base = information_uri()?.trim_end_matches('/');
    let kind = if file.ends_with(".yaml") {
        "blob"
    } else {
        "tree"
    };
    Some(format!("{base}/{kind}/main/{file}"))
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
        let mut rule = json!({ "id": code, "shortDescription": { "text": code } });
        if let Some(uri) = help_uri("rules/codes") {
            rule["helpUri"] = json!(uri);
        }
        return rule;
    };
    let mut help = doc.help.clone();
    if let Some(p) = &doc.policy {
        help.push_str(&format!("\n\nPolicy: {p}"));
    }
    help.push_str(&format!("\n\nMore: `mlaudit rules explain {code}`"));
    let level = Severity::parse(&doc.severity).map_or("warning", level);
    let mut rule = json!({
        "id": code,
        "name": code,
        "shortDescription": { "text": doc.title },
        "fullDescription": { "text": doc.title },
        "help": { "text": help, "markdown": help },
        "defaultConfiguration": { "level": level },
        "properties": { "extra": doc.extra },
    });
    if let Some(uri) = help_uri(&doc.file) {
        rule["helpUri"] = json!(uri);
    }
    rule
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
