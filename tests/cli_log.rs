//! `mlaudit log` and `mlaudit rules` as a user runs them: exit codes,
//! output formats, and errors that name their input.

use std::process::{Command, Output};

fn mlaudit(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mlaudit"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("NO_COLOR")
        .output()
        .expect("run mlaudit")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

const EXAMPLE: [&str; 2] = [
    "examples/Example/results/example_system/retinanet/result_0.txt",
    "examples/Example/results/example_system/retinanet/result_1.txt",
];

#[test]
fn example_text_output_matches_snapshot() {
    let out = mlaudit(&["log", "--ruleset", "5.0.0", EXAMPLE[0], EXAMPLE[1]]);
    assert_eq!(out.status.code(), Some(1));
    insta::assert_snapshot!("log_example", text(&out.stdout));
    assert!(
        !text(&out.stdout).contains('\x1b'),
        "no colour when stdout is not a terminal"
    );
}

#[test]
fn json_output_follows_the_contract() {
    let out = mlaudit(&[
        "log",
        "--ruleset",
        "5.0.0",
        "--format",
        "json",
        EXAMPLE[0],
        EXAMPLE[1],
    ]);
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("valid JSON");
    assert_eq!(v["schema"], 1);
    assert_eq!(v["tool"], "mlaudit");
    assert_eq!(v["ruleset"], "5.0.0");
    assert_eq!(v["verdict"], "fail");
    assert_eq!(v["summary"]["logs"], 2);
    assert_eq!(v["logs"][0]["path"], EXAMPLE[0]);
    assert_eq!(v["logs"][0]["verdict"], "pass");
    assert_eq!(v["logs"][0]["benchmark"], "retinanet");
    assert_eq!(v["logs"][0]["division"], "closed");
    assert_eq!(v["logs"][1]["verdict"], "fail");
    let f = &v["findings"][0];
    assert_eq!(f["code"], "BMK004");
    assert_eq!(f["severity"], "error");
    assert_eq!(f["path"], EXAMPLE[1]);
    assert_eq!(f["line"], 16);
    assert_eq!(
        f["rule"],
        "training/5.0.0/compliance/closed_retinanet.yaml#opt_weight_decay"
    );
    assert!(f["help"].as_str().is_some_and(|h| !h.is_empty()));
}

#[test]
fn passing_logs_exit_zero() {
    let out = mlaudit(&["log", "--ruleset", "5.0.0", EXAMPLE[0]]);
    assert_eq!(out.status.code(), Some(0));
    assert!(text(&out.stdout).starts_with("PASS: 1 log checked"));
}

#[test]
fn missing_file_is_a_tool_error_naming_it() {
    let out = mlaudit(&["log", "--ruleset", "5.0.0", "no/such/result_0.txt"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("no/such/result_0.txt"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn folder_given_as_log_is_a_tool_error() {
    let out = mlaudit(&["log", "--ruleset", "5.0.0", "examples"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("examples: is a folder"));
}

#[test]
fn unknown_ruleset_lists_the_known_ones() {
    let out = mlaudit(&["log", "--ruleset", "9.9.9", EXAMPLE[0]]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains("9.9.9") && err.contains("5.0.0"), "{err}");
}

#[test]
fn empty_and_binary_files_fail_without_panicking() {
    let dir = tempfile::tempdir().expect("tempdir");
    let empty = dir.path().join("empty.txt");
    std::fs::write(&empty, b"").expect("write");
    let junk = dir.path().join("junk.txt");
    let bytes: Vec<u8> = (0..20_000u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    std::fs::write(&junk, [&bytes[..], b":::MLLOG {\xff\x00}\n"].concat()).expect("write");
    let out = mlaudit(&[
        "log",
        "--ruleset",
        "5.0.0",
        &empty.to_string_lossy(),
        &junk.to_string_lossy(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("empty.txt: error[LOG002]"), "{stdout}");
    assert!(stdout.contains("junk.txt: error[LOG002]"), "{stdout}");
    assert!(
        stdout
            .lines()
            .any(|l| l.contains("junk.txt:") && l.contains("error[LOG001]")),
        "{stdout}"
    );
}

/// A user rules folder for ruleset 1.0.0 with one code file and one
/// compliance pack.
fn user_rules(codes: &str, pack: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    std::fs::create_dir_all(root.join("codes")).expect("mkdir");
    std::fs::create_dir_all(root.join("training/1.0.0/compliance")).expect("mkdir");
    std::fs::write(root.join("codes/x.yaml"), codes).expect("write");
    std::fs::write(root.join("training/1.0.0/compliance/common.yaml"), pack).expect("write");
    dir
}

#[test]
fn broken_rule_pack_fails_at_load_naming_file_and_rule() {
    let dir = user_rules(
        "X001:\n  title: t\n  severity: error\n  help: h\n",
        "rules:\n  - key: seed\n    code: X001\n    check: \"v.value > undefined_name\"\n",
    );
    let root = dir.path();
    let out = mlaudit(&[
        "--rules",
        &root.to_string_lossy(),
        "log",
        "--ruleset",
        "1.0.0",
        EXAMPLE[0],
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains("common.yaml") && err.contains("'seed'") && err.contains("undefined_name"),
        "{err}"
    );
}

#[test]
fn user_rule_pack_is_loaded_with_rules_dir() {
    let dir = user_rules("X001:\n  title: seed must be small\n  severity: error\n  help: use a small seed\n", "rules:\n  - key: seed\n    code: X001\n    require: exactly_one\n    check: \"v.value < 2000\"\n");
    let root = dir.path();
    let rules = root.to_string_lossy().into_owned();
    let out = mlaudit(&[
        "--rules",
        &rules,
        "log",
        "--ruleset",
        "1.0.0",
        EXAMPLE[0],
        EXAMPLE[1],
    ]);
    assert_eq!(out.status.code(), Some(1));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("result_1.txt:9: error[X001] 'seed' logged 5678, expected below 2000"),
        "{stdout}"
    );
    assert!(!stdout.contains("result_0.txt:"), "{stdout}");
}

#[test]
fn rules_explain_and_list() {
    let out = mlaudit(&["rules", "explain", "BMK004"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(text(&out.stdout).starts_with("BMK004: fixed hyperparameter"));
    let out = mlaudit(&["rules", "explain", "NOPE1"]);
    assert_eq!(out.status.code(), Some(2));
    let out = mlaudit(&["rules", "list", "--ruleset", "5.0.0"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(text(&out.stdout)
        .contains("training/5.0.0/compliance/closed_retinanet.yaml#opt_weight_decay"));
}
