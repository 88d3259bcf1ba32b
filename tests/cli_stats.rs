//! `mlaudit rcp`, `mlaudit score` and `mlaudit repeat` on the bundled example
//! and on synthetic logs written in a temporary folder.

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

fn manifest() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn mlaudit(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mlaudit"))
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run mlaudit: {e}"))
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

const EXAMPLE: &str = "examples/Example";

#[test]
fn rcp_reports_the_example_folder() {
    let out = mlaudit(&["rcp", "--ruleset", "5.0.0", EXAMPLE], manifest());
    let t = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{t}");
    assert!(
        t.contains("examples/Example/results/example_system/retinanet: RCP pass: RCP found"),
        "{t}"
    );
    assert!(
        t.contains("submission mean 4; RCP mean 4; minimum acceptable 4"),
        "{t}"
    );
}

#[test]
fn score_writes_the_summary_csv() {
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let csv_path = tmp.path().join("scores.csv");
    let csv_arg = csv_path.to_string_lossy().into_owned();
    let out = mlaudit(
        &["score", "--ruleset", "5.0.0", "--csv", &csv_arg, EXAMPLE],
        manifest(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("1 of 1 folder scored"));
    let mut reader = csv::Reader::from_path(&csv_path).unwrap_or_else(|e| panic!("{e}"));
    let headers = reader.headers().unwrap_or_else(|e| panic!("{e}")).clone();
    let rows: Vec<csv::StringRecord> = reader.records().map(|r| r.unwrap_or_default()).collect();
    assert_eq!(rows.len(), 1);
    let get = |name: &str| {
        let i = headers.iter().position(|h| h == name).unwrap_or(usize::MAX);
        rows[0].get(i).unwrap_or_default().to_string()
    };
    assert_eq!(get("submitter"), "Example");
    assert_eq!(get("benchmark"), "retinanet");
    assert_eq!(get("accelerators_count"), "8");
    assert_eq!(get("RCP"), "Pass");
    assert_eq!(get("GBS"), "256");
    assert_eq!(get("samples_to_converge"), "4");
    assert_eq!(get("runs_failed"), "1");
    // The same olympic words as the text and JSON reports.
    assert_eq!(get("runs_read"), "5");
    assert_eq!(get("runs_counted"), "3");
    assert_eq!(get("runs_dropped"), "1");
    let minutes: f64 = get("time_to_train_min").parse().unwrap_or(f64::NAN);
    assert!((minutes - 5.0857833333).abs() < 1e-6, "{minutes}");
}

/// A log of `evals` (epoch, accuracy) and train losses.
fn log(seed: u64, evals: &[(u32, f64)], losses: &[f64]) -> String {
    let mut out = String::new();
    let mut t = 1_000u64;
    let mut rec = |key: &str, value: String, meta: String| {
        t += 10;
        out.push_str(&format!(
            ":::MLLOG {{\"namespace\": \"\", \"time_ms\": {t}, \"event_type\": \"POINT_IN_TIME\", \"key\": \"{key}\", \"value\": {value}, \"metadata\": {{\"file\": \"t.py\", \"lineno\": 1{meta}}}}}\n"
        ));
    };
    rec("seed", seed.to_string(), String::new());
    for (i, l) in losses.iter().enumerate() {
        rec(
            "train_loss",
            format!("{l:?}"),
            format!(", \"step\": {}", i * 10),
        );
    }
    for (e, a) in evals {
        rec(
            "eval_accuracy",
            format!("{a:?}"),
            format!(", \"epoch_num\": {e}"),
        );
    }
    out
}

fn write(dir: &Path, name: &str, body: &str) -> String {
    std::fs::write(dir.join(name), body).unwrap_or_else(|e| panic!("{e}"));
    name.to_string()
}

#[test]
fn repeat_identical_runs_pass() {
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let body = log(7, &[(1, 0.5), (2, 0.7)], &[2.0, 1.5, 1.2]);
    let a = write(tmp.path(), "a.txt", &body);
    let b = write(tmp.path(), "b.txt", &body);
    let out = mlaudit(&["repeat", &a, &b], tmp.path());
    assert_eq!(out.status.code(), Some(0));
    assert!(text(&out.stdout).starts_with("b.txt vs a.txt: identical"));
}

#[test]
fn repeat_names_the_first_divergence_and_honours_the_tolerance() {
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let a = write(
        tmp.path(),
        "a.txt",
        &log(7, &[(1, 0.5), (2, 0.7)], &[2.0, 1.5, 1.2]),
    );
    // Third loss off by 1e-7 relative, second eval off by 2e-3 relative.
    let b = write(
        tmp.path(),
        "b.txt",
        &log(7, &[(1, 0.5), (2, 0.7014)], &[2.0, 1.5, 1.2000001200000001]),
    );
    let out = mlaudit(&["repeat", "--format", "json", &a, &b], tmp.path());
    assert_eq!(out.status.code(), Some(1));
    let j: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}"));
    let c = &j["comparisons"][0];
    assert_eq!(c["identical"], false);
    // The loss record comes first in the log: line 4 (seed, loss 0, 1, 2).
    let d = &c["first_divergence"];
    assert_eq!(d["key"], "train_loss");
    assert_eq!(d["position"], "step=20");
    assert_eq!(d["reference"]["line"], 4);
    assert_eq!(d["other"]["line"], 4);
    assert!(d["other"]["text"]
        .as_str()
        .is_some_and(|t| t.contains("1.2000001200000001")));
    // Largest relative deviation: |0.7 - 0.7014| / 0.7014.
    let want = 0.0014 / 0.7014;
    let got = c["max_rel"].as_f64().unwrap_or(f64::NAN);
    assert!((got - want).abs() < 1e-12, "{got} vs {want}");
    assert_eq!(c["max_rel_at"]["key"], "eval_accuracy");

    // Within 1e-6 the loss is repeated but the eval is not.
    let out = mlaudit(&["repeat", "--tolerance", "1e-6", &a, &b], tmp.path());
    assert_eq!(out.status.code(), Some(1));
    let t = text(&out.stdout);
    assert!(
        t.contains("first difference: eval_accuracy at epoch_num=2"),
        "{t}"
    );
    // Within 1e-2 both are.
    let out = mlaudit(&["repeat", "--tolerance", "1e-2", &a, &b], tmp.path());
    assert_eq!(out.status.code(), Some(0));
    assert!(text(&out.stdout).contains("repeatable within 0.01"));
}

#[test]
fn repeat_counts_a_missing_point_as_a_difference() {
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let a = write(tmp.path(), "a.txt", &log(7, &[(1, 0.5), (2, 0.7)], &[2.0]));
    let b = write(tmp.path(), "b.txt", &log(7, &[(1, 0.5)], &[2.0]));
    let out = mlaudit(&["repeat", "--tolerance", "0.5", &a, &b], tmp.path());
    assert_eq!(out.status.code(), Some(1));
    let t = text(&out.stdout);
    assert!(t.contains("eval_accuracy at epoch_num=2"), "{t}");
    assert!(t.contains("b.txt: no such point"), "{t}");
}

#[test]
fn repeat_rejects_bad_input_with_exit_2() {
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let a = write(tmp.path(), "a.txt", &log(7, &[(1, 0.5)], &[2.0]));
    let empty = write(tmp.path(), "empty.txt", "no records here\n");
    for (args, needle) in [
        (vec!["repeat", a.as_str(), "missing.txt"], "missing.txt"),
        (vec!["repeat", a.as_str(), "."], "is a folder"),
        (
            vec!["repeat", a.as_str(), empty.as_str()],
            "empty.txt: no MLLOG records",
        ),
        (
            vec!["repeat", "--tolerance=-1", a.as_str(), a.as_str()],
            "--tolerance",
        ),
    ] {
        let out = mlaudit(&args, tmp.path());
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(
            text(&out.stderr).contains(needle),
            "{args:?}: {}",
            text(&out.stderr)
        );
    }
    let out = mlaudit(&["repeat", a.as_str()], tmp.path());
    assert_eq!(out.status.code(), Some(2), "one log is not a comparison");
}

/// What users read of `score` and `repeat` on the example: the olympic
/// words, and two runs that are not a test-retest pair said so up front.
#[test]
fn score_and_repeat_text_match_snapshots() {
    let out = mlaudit(
        &["score", "--ruleset", "5.0.0", "examples/Example"],
        manifest(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    insta::assert_snapshot!("score_example", text(&out.stdout));
    let folder = manifest().join("examples/Example/results/example_system/retinanet");
    let out = mlaudit(&["repeat", "result_0.txt", "result_2.txt"], &folder);
    assert_eq!(out.status.code(), Some(1));
    let t = text(&out.stdout);
    assert!(
        t.lines()
            .nth(1)
            .is_some_and(|l| l.contains("NOT a test-retest pair: different seeds")),
        "{t}"
    );
    insta::assert_snapshot!("repeat_different_seeds", t);
}
