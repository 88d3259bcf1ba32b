//! `rules list` and `rules explain` know every round and usage, and a wrong
//! `--ruleset` names the available ones.

mod common;

use std::process::{Command, Output};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mlaudit"))
        .args(args)
        .output()
        .expect("run mlaudit")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn explain_names_the_rounds_whose_packs_report_a_code() {
    let o = run(&["rules", "explain", "CMN018"]);
    assert_eq!(o.status.code(), Some(0));
    let out = text(&o.stdout);
    assert!(
        out.lines()
            .any(|l| l == "rule packs that report it: training 0.6.0"),
        "{out}"
    );
    let out = text(&run(&["rules", "explain", "CMN001"]).stdout);
    assert!(out.contains("training 0.6.0, training 0.7.0,"), "{out}");
    // A repository code is reported by no pack.
    let out = text(&run(&["rules", "explain", "REPO002"]).stdout);
    assert!(
        out.contains("50 MiB") && !out.contains("rule packs"),
        "{out}"
    );
}

#[test]
fn list_names_every_ruleset_and_lists_the_oldest() {
    let o = run(&["rules", "list"]);
    assert_eq!(o.status.code(), Some(0));
    let err = text(&o.stderr);
    assert!(
        err.contains("training 0.6.0") && err.contains("training 6.1.0"),
        "{err}"
    );
    let out = text(&run(&["rules", "list", "--ruleset", "0.6.0"]).stdout);
    assert!(
        out.contains("training/0.6.0/compliance/minigo.yaml#eval_result"),
        "{out}"
    );
    assert!(
        out.contains("training/0.6.0/compliance/resnet.yaml#end"),
        "{out}"
    );
}

#[test]
fn a_wrong_ruleset_names_the_available_ones() {
    let o = run(&["rules", "list", "--ruleset", "0.5.0"]);
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    assert!(err.contains("available: training 0.6.0, 0.7.0"), "{err}");
    // A usage with no rulesets at all names every usage's.
    let o = run(&["rules", "list", "--usage", "nope", "--ruleset", "1.0.0"]);
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    assert!(
        err.contains("hpc 1.0.0") && err.contains("training 0.6.0,"),
        "{err}"
    );
}

/// The round folder `v0.6` in the path is enough to pick training 0.6.0.
#[test]
fn the_v06_round_folder_infers_training_060() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let pkg = corpus.join("v0.6/NVIDIA");
    let o = run(&["check", "--format", "json", &pkg.to_string_lossy()]);
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(j["ruleset_source"], "inferred", "{j}");
    assert_eq!(j["ruleset"], "0.6.0", "{}", j["ruleset"]);
}
