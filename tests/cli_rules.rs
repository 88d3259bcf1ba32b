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

/// A policy finding's rule (a framework setting, a signal family) is
/// explained as its findings name it, or by `file#id` for short.
#[test]
fn explain_a_framework_setting() {
    let o = run(&["rules", "explain", "torchrec#semi_sync_pipeline_option"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    insta::assert_snapshot!("explain_torchrec_semi_sync", text(&o.stdout));
    let whole = run(&[
        "rules",
        "explain",
        "rules/policy/frameworks/torchrec.yaml#semi_sync_pipeline_option",
    ]);
    assert_eq!(text(&whole.stdout), text(&o.stdout));
    let out = text(&run(&["rules", "explain", "signals.yaml#local_sgd"]).stdout);
    assert!(
        out.starts_with("rules/policy/signals.yaml#local_sgd: ") && out.contains("code: POL012"),
        "{out}"
    );
    let o = run(&["rules", "explain", "torchrec#no_such_setting"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("unknown rule 'torchrec#no_such_setting'"));
}

/// Every rule the framework fixtures' findings name is explained, with the
/// code and severity they carry.
#[test]
fn every_framework_finding_rule_is_explained() {
    let expected = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/policy/frameworks/expected.txt"
    ))
    .expect("expected.txt");
    let mut seen = std::collections::BTreeSet::new();
    let mut n = 0;
    for line in expected.lines().filter(|l| !l.starts_with('#')) {
        let f: Vec<&str> = line.split_whitespace().collect();
        let [_, code, severity, rule] = f.as_slice() else {
            continue;
        };
        if !seen.insert(*rule) {
            continue;
        }
        let o = run(&["rules", "explain", rule]);
        let out = text(&o.stdout);
        assert_eq!(o.status.code(), Some(0), "{rule}: {}", text(&o.stderr));
        assert!(out.contains(&format!("code: {code} (")), "{rule}: {out}");
        if rule.contains(".yaml#") || !rule.starts_with("signals") {
            assert!(
                out.contains(&format!("severity: {severity}")),
                "{rule}: {out}"
            );
        }
        n += 1;
    }
    assert!(n > 50, "{n} rules explained");
}

/// A round's list holds its policy pack's rules too, HPC rounds included.
#[test]
fn list_holds_the_policy_rules() {
    for (usage, version) in [("training", "5.1.0"), ("hpc", "3.0.0")] {
        let out = text(&run(&["rules", "list", "--usage", usage, "--ruleset", version]).stdout);
        assert!(
            out.lines().any(|l| l.starts_with("POL011")
                && l.contains("rules/policy/frameworks/bagua.yaml#async_algorithm")),
            "{usage} {version}: {out}"
        );
        assert!(
            out.lines()
                .any(|l| l.starts_with("POL010") && l.contains("rules/policy/signals.yaml#stale")),
            "{usage} {version}"
        );
    }
    let json = run(&["rules", "list", "--ruleset", "5.1.0", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).expect("json");
    let pol012 = v
        .as_array()
        .and_then(|a| a.iter().find(|e| e["code"] == "POL012"))
        .expect("POL012 listed");
    assert!(
        pol012["rules"].as_array().is_some_and(|r| r
            .iter()
            .any(|x| x["pack"] == "rules/policy/frameworks/pytorch_ddp.yaml"
                && x["severity"] == "error")),
        "{pol012}"
    );
}

/// A compliance rule is explained by the name findings and `rules list`
/// give it (pack#key): its code, severity and checks.
#[test]
fn explain_a_compliance_rule() {
    let list = text(&run(&["rules", "list", "--ruleset", "5.1.0"]).stdout);
    let mut n = 0;
    for line in list.lines().filter(|l| l.contains("/compliance/")).take(40) {
        let mut f = line.split_whitespace();
        let (Some(code), Some(rule)) = (f.next(), f.next()) else {
            continue;
        };
        let o = run(&["rules", "explain", rule]);
        assert_eq!(o.status.code(), Some(0), "{rule}: {}", text(&o.stderr));
        let out = text(&o.stdout);
        assert!(
            out.starts_with(&format!("{rule}: ")) && out.contains(&format!("code: {code}\n")),
            "{rule}: {out}"
        );
        n += 1;
    }
    assert!(n >= 20, "{n} rules explained");
    let out = text(
        &run(&[
            "rules",
            "explain",
            "training/5.1.0/compliance/closed_llama2_70b_lora.yaml#opt_gradient_clip_norm",
        ])
        .stdout,
    );
    assert!(
        out.contains("code: BMK005") && out.contains("severity: error"),
        "{out}"
    );
    let o = run(&[
        "rules",
        "explain",
        "training/5.1.0/compliance/closed_common.yaml#nope",
    ]);
    assert_eq!(o.status.code(), Some(2));
}
