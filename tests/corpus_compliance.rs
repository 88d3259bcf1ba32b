//! Every log of the shared corpus gets the official compliance verdict, and
//! each official failure fails for the same reasons.
//!
//! Reads `../shared/corpus` beside the checkout; says so and passes when it
//! is absent.

use mlaudit::finding::Severity;
use mlaudit::ruledata::RuleSource;
use mlaudit::rules::{check_file, Ruleset, Verdict};
use rayon::prelude::*;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn corpus() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus");
    if dir.join("expected/compliance.tsv").is_file() {
        Some(dir)
    } else {
        eprintln!("skipped: ../shared/corpus not found, corpus compliance test not run");
        None
    }
}

fn ruleset_of(round: &str) -> &'static str {
    match round {
        "v4.1" => "4.1.0",
        "v5.0" => "5.0.0",
        "v5.1" => "5.1.0",
        other => panic!("unknown round {other} in expected/compliance.tsv"),
    }
}

struct Row {
    round: String,
    path: PathBuf,
    pass: bool,
    messages: Vec<String>,
}

fn rows(dir: &Path) -> Vec<Row> {
    let text =
        std::fs::read_to_string(dir.join("expected/compliance.tsv")).expect("read compliance.tsv");
    text.lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let c: Vec<&str> = l.split('\t').collect();
            Row {
                round: c[0].to_string(),
                path: dir
                    .join(c[0])
                    .join(c[1])
                    .join("results")
                    .join(c[2])
                    .join(c[3])
                    .join(c[4]),
                pass: c[5] == "PASS",
                messages: c
                    .get(6)
                    .map(|m| m.split(" | ").map(str::to_string).collect())
                    .unwrap_or_default(),
            }
        })
        .collect()
}

/// The (kind, key) an official message is about.
fn official_reason(msg: &str) -> (String, String) {
    let quoted = |s: &str| s.split('\'').nth(1).unwrap_or_default().to_string();
    if msg.starts_with("Required AT_LEAST_ONE occurrence of") && msg.contains(" or ") {
        ("alternatives".into(), quoted(msg))
    } else if msg.starts_with("Required") {
        ("count".into(), quoted(msg))
    } else if let Some(rest) = msg.strip_prefix("Failed checks for ") {
        (
            "at_least_one".into(),
            rest.split(' ').next().unwrap_or_default().to_string(),
        )
    } else if msg.starts_with("CHECK for") {
        ("check".into(), quoted(msg))
    } else {
        ("other".into(), msg.to_string())
    }
}

/// The (kind, key) one of our error messages is about.
fn our_reason(msg: &str) -> (String, String) {
    let quoted = |s: &str| s.split('\'').nth(1).unwrap_or_default().to_string();
    if msg.starts_with("required at least one of") {
        ("alternatives".into(), quoted(msg))
    } else if msg.starts_with("required") {
        ("count".into(), quoted(msg))
    } else if msg.starts_with("no '") {
        ("at_least_one".into(), quoted(msg))
    } else if msg.starts_with('\'') && msg.contains(" fails `") {
        ("check".into(), quoted(msg))
    } else {
        ("other".into(), msg.to_string())
    }
}

#[test]
fn corpus_logs_get_the_official_verdict() {
    let Some(dir) = corpus() else { return };
    let rows = rows(&dir);
    assert_eq!(
        rows.len(),
        1306,
        "expected/compliance.tsv should list 1306 logs"
    );
    let mut rulesets = BTreeMap::new();
    for r in &rows {
        let v = ruleset_of(&r.round);
        rulesets.entry(v).or_insert_with(|| {
            Ruleset::load(&RuleSource::Embedded, "training", v).expect("load ruleset")
        });
    }
    let results: Vec<(usize, bool, Vec<String>)> = rows
        .par_iter()
        .enumerate()
        .map(|(i, r)| {
            let rs = &rulesets[ruleset_of(&r.round)];
            let check = check_file(rs, &r.path, &r.path.to_string_lossy());
            let errors = check
                .findings
                .iter()
                .filter(|f| f.severity == Severity::Error)
                .map(|f| format!("{}: {}", f.code, f.message))
                .collect();
            (i, check.verdict == Verdict::Pass, errors)
        })
        .collect();

    let mut disagreements = Vec::new();
    for (i, pass, errors) in &results {
        let row = &rows[*i];
        if *pass != row.pass {
            disagreements.push(format!(
                "{}: official {} but mlaudit {}: {:?}",
                row.path.display(),
                if row.pass { "PASS" } else { "FAIL" },
                if *pass { "PASS" } else { "FAIL" },
                errors
            ));
            continue;
        }
        if !row.pass {
            // A CHECK message spans lines; its "failed test:" line is not a reason of its own.
            let official: BTreeSet<_> = row
                .messages
                .iter()
                .filter(|m| !m.starts_with("failed test:"))
                .map(|m| official_reason(m))
                .collect();
            let ours: BTreeSet<_> = errors
                .iter()
                .map(|e| our_reason(e.split_once(": ").map(|x| x.1).unwrap_or(e)))
                .collect();
            if official != ours {
                disagreements.push(format!(
                    "{}: fails for other reasons: official {official:?}, mlaudit {ours:?}",
                    row.path.display()
                ));
            }
        }
    }
    let agree = rows.len() - disagreements.len();
    eprintln!(
        "corpus compliance: {agree}/{} logs agree with the official checker",
        rows.len()
    );
    assert!(disagreements.is_empty(), "{}", disagreements.join("\n"));
    assert_eq!(rows.iter().filter(|r| !r.pass).count(), 5);
}
