//! Every log of the shared corpus gets the official compliance verdict, and
//! each official failure fails for the same reasons.
//!
//! Reads `../shared/corpus` beside the checkout; says so and passes when it
//! is absent (fails when `CI` is set). Rows of rounds mlaudit has no rules
//! for are counted and reported per round, not checked.

mod common;
use common::{corpus, round_ruleset, Coverage};

use mlaudit::check::rules::{check_file, Ruleset, Verdict};
use mlaudit::finding::Severity;
use mlaudit::rulebook::source::RuleSource;
use rayon::prelude::*;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A row's (usage, ruleset).
type Key = (&'static str, String);

struct Row {
    round: String,
    path: PathBuf,
    pass: bool,
    messages: Vec<String>,
}

/// The rows of `expected/compliance.tsv`, read by column name so that new
/// columns do not move them.
fn rows(dir: &Path) -> Vec<Row> {
    common::tsv(&dir.join("expected/compliance.tsv"))
        .into_iter()
        .map(|c| Row {
            path: dir
                .join(&c["round"])
                .join(&c["submitter"])
                .join("results")
                .join(&c["system"])
                .join(&c["benchmark"])
                .join(&c["file"]),
            round: c["round"].clone(),
            // CRASH (the official checker died) is not a pass.
            pass: c["compliance_verdict"] == "PASS",
            messages: c
                .get("compliance_messages")
                .filter(|m| !m.is_empty())
                .map(|m| m.split(" | ").map(str::to_string).collect())
                .unwrap_or_default(),
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

/// "Required EXACTLY_ONE occurrence of 'k' but found N" with N > 0 and no
/// "with different values": the official warning for a key logged several
/// times with one value (v0.6 Google ssd `max_samples`), not a failure.
fn is_repeat_warning(msg: &str) -> bool {
    msg.starts_with("Required EXACTLY_ONE occurrence of")
        && !msg.contains("with different values")
        && msg
            .rsplit(' ')
            .next()
            .and_then(|n| n.parse::<u64>().ok())
            .is_some_and(|n| n > 0)
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
    } else if msg.starts_with("end-of-log check failed") {
        ("end".into(), String::new())
    } else if msg.starts_with('\'') && (msg.contains(" fails `") || msg.contains(" logged ")) {
        ("check".into(), quoted(msg))
    } else {
        ("other".into(), msg.to_string())
    }
}

#[test]
fn corpus_logs_get_the_official_verdict() {
    let Some(dir) = corpus() else { return };
    let mut coverage = Coverage::new("corpus_compliance");
    let rows: Vec<Row> = rows(&dir)
        .into_iter()
        .filter(|r| coverage.covers(&r.round))
        .collect();
    coverage.report("logs");
    assert!(!rows.is_empty(), "no corpus round has rules");
    let mut rulesets: BTreeMap<Key, Ruleset> = BTreeMap::new();
    for r in &rows {
        let (usage, version) = round_ruleset(&r.round);
        rulesets.entry((usage, version.clone())).or_insert_with(|| {
            Ruleset::load(&RuleSource::Embedded, usage, &version).expect("load ruleset")
        });
    }
    let results: Vec<(usize, bool, Vec<String>)> = rows
        .par_iter()
        .enumerate()
        .map(|(i, r)| {
            let rs = &rulesets[&round_ruleset(&r.round)];
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
        // A CRASH row (v0.6 Google `mask`: the official checker opens the
        // missing `training_0.6.0/mask.yaml`) has no reasons to compare:
        // the verdict (a crash is a failure) is.
        let crashed = row.messages.iter().any(|m| m.starts_with("CRASH: "));
        if !row.pass && !crashed {
            // A CHECK message spans lines; its "failed test:" line is not a
            // reason of its own. A "failed test:" line after anything else is
            // a failed END check (training 1.1.0-2.1.0 weights_initialization
            // lists), which the official checker prints bare.
            let official: BTreeSet<_> = row
                .messages
                .iter()
                .enumerate()
                .filter(|(_, m)| !is_repeat_warning(m))
                .filter_map(|(i, m)| {
                    if !m.starts_with("failed test:") {
                        return Some(official_reason(m));
                    }
                    let after_check = i > 0 && row.messages[i - 1].starts_with("CHECK for");
                    (!after_check).then(|| ("end".to_string(), String::new()))
                })
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
    common::say(&format!(
        "corpus compliance: {agree}/{} logs agree with the official checker ({} official failures)",
        rows.len(),
        rows.iter().filter(|r| !r.pass).count()
    ));
    assert!(disagreements.is_empty(), "{}", disagreements.join("\n"));
}
