//! Settings planted into a real package (issue 16): every folder of
//! `tests/fixtures/policy/planted/hit/` is a small implementation whose
//! configs set something the closed division forbids or a reviewer must
//! see, written as a framework documents it (DeepSpeed JSON, Lightning and
//! Hydra YAML, launcher command lines, Kubernetes env lists, `.env`, TOML,
//! INI); every folder of `quiet/` holds an allowed neighbour or a setting
//! that is off. Each is copied into v5.1 AMD's `llama2_70b_lora` (every
//! third one into `benchmarks/<bm>/<name>/` rather than
//! `implementations/<name>/`), the package is checked, and each hit folder
//! must give an error or a warning while no quiet folder, and nothing else
//! in the package, gives any.

mod common;

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

fn cases(side: &str) -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/policy/planted")
        .join(side);
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Every finding of a JSON report with a path: (path, code, severity).
fn findings(v: &Value, out: &mut Vec<(String, String, String)>) {
    match v {
        Value::Object(m) => {
            if let (Some(Value::String(p)), Some(Value::String(c)), Some(Value::String(s))) =
                (m.get("path"), m.get("code"), m.get("severity"))
            {
                out.push((p.clone(), c.clone(), s.clone()));
                return;
            }
            m.values().for_each(|x| findings(x, out));
        }
        Value::Array(a) => a.iter().for_each(|x| findings(x, out)),
        _ => {}
    }
}

#[test]
fn planted_settings_in_a_real_package() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let tmp = tempfile::tempdir().expect("tempdir");
    let pkg = tmp.path().join("AMD");
    common::copy_dir(&corpus.join("v5.1/AMD"), &pkg);
    let bm = pkg.join("benchmarks/llama2_70b_lora");
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/policy/planted");
    // Folder of each case in the package (relative to it) -> (case, hit?).
    let mut planted: BTreeMap<String, (String, bool)> = BTreeMap::new();
    let mut i = 0;
    for (side, hit) in [("hit", true), ("quiet", false)] {
        for name in cases(side) {
            let rel = if i % 3 == 0 {
                format!("benchmarks/llama2_70b_lora/{name}")
            } else {
                format!("benchmarks/llama2_70b_lora/implementations/{name}")
            };
            i += 1;
            common::copy_dir(&fixtures.join(side).join(&name), &pkg.join(&rel));
            planted.insert(format!("AMD/{rel}/"), (name, hit));
        }
    }
    assert!(bm.is_dir());
    let out = Command::new(env!("CARGO_BIN_EXE_mlaudit"))
        .current_dir(tmp.path())
        .args([
            "check",
            "AMD",
            "--ruleset",
            "5.1.0",
            "--format",
            "json",
            "--no-cache",
        ])
        .output()
        .expect("mlaudit runs");
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    let mut all = Vec::new();
    findings(&report, &mut all);
    let mut flagged: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    let mut elsewhere = Vec::new();
    for (path, code, severity) in &all {
        if !code.starts_with("POL") || !(severity == "error" || severity == "warning") {
            continue;
        }
        match planted.keys().find(|k| path.starts_with(k.as_str())) {
            Some(k) => flagged
                .entry(k)
                .or_default()
                .push(format!("{code} {severity}")),
            None => elsewhere.push(format!("{path} {code} {severity}")),
        }
    }
    let mut wrong = Vec::new();
    let (mut hits, mut quiet) = (0, 0);
    for (folder, (name, hit)) in &planted {
        let got = flagged.get(folder.as_str());
        match (hit, got) {
            (true, Some(_)) => hits += 1,
            (false, None) => quiet += 1,
            (true, None) => wrong.push(format!("missed: {name}")),
            (false, Some(f)) => wrong.push(format!("flagged: {name} {f:?}")),
        }
    }
    common::say(&format!(
        "policy_planted: {hits} planted settings found, {quiet} neighbours quiet, {} wrong",
        wrong.len()
    ));
    assert!(wrong.is_empty(), "{wrong:#?}");
    assert!(
        elsewhere.is_empty(),
        "findings outside the planted folders: {elsewhere:#?}"
    );
    assert!(hits >= 60 && quiet >= 40, "{hits} hits, {quiet} quiet");
}
