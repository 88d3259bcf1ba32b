//! `mlaudit check --baseline OLD.json` (issue 18 item 3): a corpus package
//! is copied, checked (`--format json`), changed, and checked again
//! against the first report, in every format.
//!
//! The change: in one folder `scaling.json` goes away (its PKG040 note
//! resolved) and a line is inserted at the top of `result_1.txt` (every
//! line below moves: its findings must stay `unchanged`); in the other two
//! runs lose their `run_stop` (new errors, the package fails).

mod common;

use common::copy_dir;
use std::path::Path;
use std::process::{Command, Output};

fn mlaudit(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mlaudit"))
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run mlaudit: {e}"))
}

const N64: &str = "Nebius/results/nebius_soperator_8xH200_n64_ngc25.01_nemo/llama31_405b";
const N128: &str = "Nebius/results/nebius_soperator_8xH200_n128_ngc25.01_nemo/llama31_405b";

/// The copied package (under `tmp/v5.0/`, so the round is inferred) and
/// the first report, `tmp/old.json`.
fn before(tmp: &Path) -> Option<std::path::PathBuf> {
    let corpus = common::corpus()?;
    let round = tmp.join("v5.0");
    copy_dir(&corpus.join("v5.0/Nebius"), &round.join("Nebius"));
    let old = tmp.join("old.json");
    let run = mlaudit(
        &[
            "check",
            "Nebius",
            "--format",
            "json",
            "-o",
            &old.to_string_lossy(),
        ],
        &round,
    );
    assert_eq!(
        run.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    Some(round)
}

fn change(round: &Path) {
    let n64 = round.join(N64);
    std::fs::remove_file(n64.join("scaling.json")).unwrap_or_else(|e| panic!("{e}"));
    let log = n64.join("result_1.txt");
    let text = std::fs::read_to_string(&log).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(&log, format!("a line that is not a log record\n{text}"))
        .unwrap_or_else(|e| panic!("{e}"));
    for r in ["result_2.txt", "result_3.txt"] {
        let log = round.join(N128).join(r);
        let text = std::fs::read_to_string(&log).unwrap_or_else(|e| panic!("{e}"));
        let kept: Vec<&str> = text
            .lines()
            .filter(|l| !l.contains("\"key\": \"run_stop\""))
            .collect();
        assert!(kept.len() < text.lines().count(), "{r} has no run_stop");
        std::fs::write(&log, kept.join("\n")).unwrap_or_else(|e| panic!("{e}"));
    }
}

#[test]
fn a_changed_package_is_compared_with_its_baseline() {
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let Some(round) = before(tmp.path()) else {
        return;
    };
    let old = tmp.path().join("old.json");
    let old_text = std::fs::read_to_string(&old).unwrap_or_else(|e| panic!("{e}"));
    let old_report: serde_json::Value =
        serde_json::from_str(&old_text).unwrap_or_else(|e| panic!("{e}"));
    let old_findings = old_report["findings"].as_array().map_or(0, |a| a.len());
    change(&round);
    let o = old.to_string_lossy();

    // JSON.
    let run = mlaudit(
        &["check", "Nebius", "--baseline", &o, "--format", "json"],
        &round,
    );
    assert_eq!(
        run.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let now: serde_json::Value =
        serde_json::from_slice(&run.stdout).unwrap_or_else(|e| panic!("{e}"));
    let d = &now["baseline"];
    assert_eq!(d["file"], o.as_ref());
    assert_eq!(d["verdict_before"], "pass");
    assert_eq!(d["verdict_after"], "fail");
    let resolved: Vec<(String, String)> = d["resolved"]
        .as_array()
        .unwrap_or_else(|| panic!("no resolved[]"))
        .iter()
        .map(|f| {
            (
                f["code"].as_str().unwrap_or("").into(),
                f["path"].as_str().unwrap_or("").into(),
            )
        })
        .collect();
    assert_eq!(resolved, vec![("PKG040".into(), N64.into())]);
    let new = d["new"].as_array().unwrap_or_else(|| panic!("no new[]"));
    assert!(!new.is_empty());
    assert!(
        new.iter()
            .all(|f| f["path"].as_str().is_some_and(|p| p.starts_with(N128))),
        "a finding outside the broken folder is new: {new:?}"
    );
    assert!(new
        .iter()
        .any(|f| f["code"] == "CMN008" && f["path"] == format!("{N128}/result_2.txt")));
    // The findings of the shifted log kept their identity.
    let unchanged = d["unchanged"].as_u64().unwrap_or(0) as usize;
    assert_eq!(unchanged + resolved.len(), old_findings);
    let now_findings = now["findings"].as_array().map_or(0, |a| a.len());
    assert_eq!(unchanged + new.len(), now_findings);
    let shifted = format!("{N64}/result_1.txt");
    assert!(
        old_report["findings"]
            .as_array()
            .is_some_and(|a| a.iter().any(|f| f["path"] == shifted.as_str())),
        "the baseline has no finding in the shifted log"
    );
    assert!(!new.iter().any(|f| f["path"] == shifted.as_str()));
    assert_eq!(
        d["packages"],
        serde_json::json!([{"path": "Nebius", "before": "pass", "after": "fail"}])
    );

    // Text.
    let run = mlaudit(&["check", "Nebius", "--baseline", &o], &round);
    let text = String::from_utf8_lossy(&run.stdout);
    let summary = format!(
        "since the baseline {o}: {} new, 1 resolved, {unchanged} unchanged findings; verdict pass -> fail",
        new.len()
    );
    assert!(text.contains(&summary), "{text}");
    assert!(text.contains("  package Nebius: pass -> fail"), "{text}");
    assert!(
        text.contains(&format!("  resolved note PKG040 {N64} ")),
        "{text}"
    );

    // HTML.
    let page = tmp.path().join("review.html");
    let run = mlaudit(
        &[
            "check",
            "Nebius",
            "--baseline",
            &o,
            "--html",
            &page.to_string_lossy(),
        ],
        &round,
    );
    assert_eq!(run.status.code(), Some(1));
    let html = std::fs::read_to_string(&page).unwrap_or_else(|e| panic!("{e}"));
    assert!(html.contains("<section id=\"baseline\">"));
    assert!(html.contains(&format!(
        "<span class=\"badge new\">{} new</span>",
        new.len()
    )));
    assert!(html.contains("<span class=\"badge resolved\">1 resolved</span>"));
    assert_eq!(
        html.matches("<ul class=\"items baseline-resolved\">")
            .count(),
        1
    );
}

#[test]
fn an_unusable_baseline_is_a_tool_error_naming_it() {
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let Some(round) = before(tmp.path()) else {
        return;
    };
    let bad = tmp.path().join("bad.json");
    std::fs::write(&bad, "{\"schema\": 1}").unwrap_or_else(|e| panic!("{e}"));
    let other = tmp.path().join("other.json");
    std::fs::write(
        &other,
        r#"{"schema": 7, "tool": "x", "verdict": "pass", "findings": []}"#,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    for file in [
        bad,
        other,
        tmp.path().join("missing.json"),
        tmp.path().to_path_buf(),
    ] {
        let f = file.to_string_lossy();
        let run = mlaudit(&["check", "Nebius", "--baseline", &f], &round);
        assert_eq!(run.status.code(), Some(2), "{f}");
        let err = String::from_utf8_lossy(&run.stderr);
        assert!(
            err.contains(&format!("{f}: cannot use as --baseline")),
            "{err}"
        );
        assert!(run.stdout.is_empty(), "a report was written for {f}");
    }
}
