//! `mlaudit check ROUND_FOLDER`: a folder of packages checked in one run.
//!
//! - on every round of `../shared/corpus` mlaudit has rules for, one
//!   `mlaudit check --format json .` run from the round folder (ruleset
//!   inferred) lists every package of the round in `packages[]`, each with
//!   the official package verdict of `expected/package.tsv`;
//! - on a synthetic round (two copies of `examples/Example`, one broken),
//!   the text report has one line per package, verdict first, then the
//!   totals, and the exit status is 1.

mod common;

use common::{copy_dir, corpus, fingerprint, round_ruleset, tsv, Coverage};

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

fn mlaudit(args: &[&str], dir: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_mlaudit"))
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run mlaudit: {e}"))
}

#[test]
fn a_round_folder_gives_every_package_its_official_verdict() {
    let Some(corpus) = corpus() else { return };
    let before = fingerprint(&corpus);
    let mut coverage = Coverage::new("cli_round");
    // round -> submitter -> official verdict (a crash is a failure).
    let mut want: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    for row in tsv(&corpus.join("expected/package.tsv")) {
        if coverage.covers(&row["round"]) {
            want.entry(row["round"].clone()).or_default().insert(
                row["submitter"].clone(),
                row["verdict"].replace("CRASH", "FAIL").to_lowercase(),
            );
        }
    }
    coverage.report("packages");
    assert!(!want.is_empty(), "no corpus round has rules");
    let runs: Vec<(String, Option<i32>, Value, String)> = std::thread::scope(|s| {
        let handles: Vec<_> = want
            .keys()
            .map(|round| {
                let corpus = &corpus;
                s.spawn(move || {
                    let (usage, _) = round_ruleset(round);
                    let out = mlaudit(
                        &["check", "--usage", usage, "--format", "json", "."],
                        &corpus.join(round),
                    );
                    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
                    let json: Value = serde_json::from_slice(&out.stdout)
                        .unwrap_or_else(|e| panic!("{round}: not JSON ({e}); stderr: {stderr}"));
                    (round.clone(), out.status.code(), json, stderr)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| panic!("a round thread panicked"))
            })
            .collect()
    });
    let mut bad = Vec::new();
    for (round, code, j, stderr) in &runs {
        let expected = &want[round];
        let (_, version) = round_ruleset(round);
        if j["ruleset"] != version.as_str() {
            bad.push(format!(
                "{round}: ruleset {} (stderr: {stderr})",
                j["ruleset"]
            ));
        }
        let packages = j["packages"].as_array().cloned().unwrap_or_default();
        let listed: BTreeSet<String> = packages
            .iter()
            .filter_map(|p| p["path"].as_str().map(str::to_string))
            .collect();
        let on_disk: BTreeSet<String> = std::fs::read_dir(corpus.join(round))
            .map(|rd| {
                rd.filter_map(|e| e.ok())
                    .filter(|e| e.path().is_dir())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        let in_tsv: BTreeSet<String> = expected.keys().cloned().collect();
        if listed != in_tsv || listed != on_disk {
            bad.push(format!(
                "{round}: packages[] {listed:?}, package.tsv {in_tsv:?}, on disk {on_disk:?}"
            ));
        }
        let mut any_fail = false;
        for p in &packages {
            let path = p["path"].as_str().unwrap_or_default();
            if p["verdict"] == "fail" {
                any_fail = true;
            }
            // mlaudit's own verdict is never a PASS where the official tools
            // fail (or crash).
            if expected.get(path).is_some_and(|v| v == "fail") && p["verdict"] != "fail" {
                bad.push(format!(
                    "{round}/{path}: verdict {} where the official tool fails",
                    p["verdict"]
                ));
            }
            match expected.get(path) {
                Some(v) if p["official_verdict"] == v.as_str() => {}
                Some(v) => bad.push(format!(
                    "{round}/{path}: official_verdict {} but the official tool says {v}",
                    p["official_verdict"]
                )),
                None => {}
            }
            for key in ["logs", "folders", "errors", "warnings"] {
                if !p[key].is_u64() {
                    bad.push(format!("{round}/{path}: no count '{key}'"));
                }
            }
        }
        // The round's verdicts fail when a package's do.
        let official_fail = expected.values().any(|v| v == "fail");
        let want_official = if official_fail { "fail" } else { "pass" };
        if j["official_verdict"] != want_official {
            bad.push(format!(
                "{round}: official_verdict {}, want {want_official}",
                j["official_verdict"]
            ));
        }
        let want_verdict = if any_fail { "fail" } else { "pass" };
        if j["verdict"] != want_verdict || *code != Some(i32::from(any_fail)) {
            bad.push(format!(
                "{round}: verdict {} exit {code:?}, want {want_verdict}",
                j["verdict"]
            ));
        }
        let logs: u64 = packages.iter().filter_map(|p| p["logs"].as_u64()).sum();
        if j["summary"]["logs"].as_u64() != Some(logs) {
            bad.push(format!(
                "{round}: summary.logs {} but the packages hold {logs}",
                j["summary"]["logs"]
            ));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    assert!(before == fingerprint(&corpus), "the corpus was modified");
}

/// A temporary round: `Good` and `Broken`, copies of `examples/Example`;
/// `Broken` keeps 2 of its 5 retinanet runs (too few results: it fails).
fn synthetic_round() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/Example");
    copy_dir(&example, &dir.path().join("Good"));
    copy_dir(&example, &dir.path().join("Broken"));
    let logs = dir.path().join("Broken/results/example_system/retinanet");
    for n in 2..5 {
        std::fs::remove_file(logs.join(format!("result_{n}.txt")))
            .unwrap_or_else(|e| panic!("{e}"));
    }
    dir
}

#[test]
fn a_synthetic_round_gives_one_line_per_package_and_fails() {
    let round = synthetic_round();
    let out = mlaudit(&["check", "--ruleset", "5.0.0", "."], round.path());
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    let at = |prefix: &str| {
        lines
            .iter()
            .position(|l| l.starts_with(prefix))
            .unwrap_or_else(|| panic!("no line starting {prefix:?} in:\n{text}"))
    };
    let broken = at("FAIL package Broken: 2 logs in 1 benchmark folder; ");
    let good = at("PASS package Good: 5 logs in 1 benchmark folder; ");
    let total =
        at("FAIL: 7 logs in 2 benchmark folders of 2 packages checked with training 5.0.0 rules");
    assert!(broken < good && good < total, "order:\n{text}");
    assert_eq!(out.status.code(), Some(1), "{text}");

    // The same verdicts as one call per package.
    let json = mlaudit(
        &["check", "--ruleset", "5.0.0", "--format", "json", "."],
        round.path(),
    );
    let j: Value = serde_json::from_slice(&json.stdout).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(j["verdict"], "fail");
    assert_eq!(j["official_verdict"], "fail");
    for p in j["packages"].as_array().into_iter().flatten() {
        let name = p["path"].as_str().unwrap_or_default();
        let alone = mlaudit(
            &["check", "--ruleset", "5.0.0", "--format", "json", name],
            round.path(),
        );
        let a: Value = serde_json::from_slice(&alone.stdout).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(p["verdict"], a["verdict"], "{name}");
        assert_eq!(p["official_verdict"], a["official_verdict"], "{name}");
        assert_eq!(p["logs"], a["summary"]["logs"], "{name}");
        assert_eq!(p["errors"], a["summary"]["errors"], "{name}");
        assert_eq!(p["warnings"], a["summary"]["warnings"], "{name}");
        assert_eq!(a["packages"].as_array().map(Vec::len), Some(1), "{name}");
        // A single package prints no package line: its output is unchanged.
        let alone_text = mlaudit(&["check", "--ruleset", "5.0.0", name], round.path());
        assert!(
            !String::from_utf8_lossy(&alone_text.stdout).contains(" package "),
            "{name}"
        );
    }
    assert_eq!(j["packages"].as_array().map(Vec::len), Some(2));

    // Two packages named one by one give the same report as their folder.
    let named = mlaudit(
        &[
            "check",
            "--ruleset",
            "5.0.0",
            "--format",
            "json",
            "Broken",
            "Good",
        ],
        round.path(),
    );
    let n: Value = serde_json::from_slice(&named.stdout).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(n["packages"], j["packages"]);
    assert_eq!(named.status.code(), Some(1));
}
