//! HPC package layout (`results/<system>/{strong,weak}/<benchmark>`), one
//! synthetic package per rule, built in a temporary folder from the oc20
//! log of `tests/fixtures/log/CMN016/pass.txt` (hpc-v3.0 NVIDIA eos_n80
//! result_0), each copy with its own seed, and a system description with
//! every required field.
//!
//! Oracle: `python -m mlperf_logging.package_checker Org hpc 3.0.0`
//! (mlperf_logging 4.1.68) on the same packages; each test quotes it.

use mlaudit::aggregate::package::check::count_codes;
use mlaudit::aggregate::package::{
    check_package, LogOutcome, PackageOptions, PackageReport, PackageRules, Verdict,
};
use mlaudit::discover::discover;
use mlaudit::finding::Severity;
use mlaudit::rulebook::source::RuleSource;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

const SYSTEM: &str = "sys";

fn log_text(seed: usize) -> String {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/log/CMN016/pass.txt");
    let text = std::fs::read_to_string(src).expect("fixture log");
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            if l.contains(r#""key": "seed""#) {
                l.replace("1695576128", &(1000 + seed).to_string())
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

/// `Org/` with one system and the given `(folder under results/sys, logs)`.
fn package(root: &Path, folders: &[(&str, usize)]) -> std::path::PathBuf {
    let org = root.join("Org");
    std::fs::create_dir_all(org.join("systems")).expect("mkdir");
    let fields = [
        "host_processors_per_node",
        "host_processor_model_name",
        "host_processor_core_count",
        "host_processor_vcpu_count",
        "host_processor_frequency",
        "host_processor_caches",
        "host_processor_interconnect",
        "host_memory_capacity",
        "host_storage_type",
        "host_storage_capacity",
        "host_networking",
        "host_networking_topology",
        "host_memory_configuration",
        "accelerator_model_name",
        "accelerator_host_interconnect",
        "accelerator_frequency",
        "accelerator_on-chip_memories",
        "accelerator_memory_configuration",
        "accelerator_memory_capacity",
        "accelerator_interconnect",
        "accelerator_interconnect_topology",
        "cooling",
        "hw_notes",
        "framework",
        "other_software_stack",
        "operating_system",
        "sw_notes",
    ];
    let mut json = serde_json::json!({
        "submitter": "NVIDIA", "division": "closed", "status": "onprem", "system_name": SYSTEM,
        "number_of_nodes": "80", "accelerators_per_node": "8",
    });
    for f in fields {
        json[f] = serde_json::Value::String("1".into());
    }
    std::fs::write(org.join(format!("systems/{SYSTEM}.json")), json.to_string()).expect("write");
    let mut seed = 0;
    for (folder, n) in folders {
        let dir = org.join("results").join(SYSTEM).join(folder);
        std::fs::create_dir_all(&dir).expect("mkdir");
        for i in 0..*n {
            seed += 1;
            std::fs::write(dir.join(format!("result_{i}.txt")), log_text(seed)).expect("write");
        }
    }
    org
}

fn check(org: &Path, usage: &str, version: &str) -> PackageReport {
    let rules = PackageRules::load(&RuleSource::Embedded, usage, version).expect("rules");
    check_package(
        &discover(org),
        &rules,
        &PackageOptions::default(),
        &|_: &str| LogOutcome::PASS,
    )
}

fn codes(r: &PackageReport) -> BTreeMap<String, usize> {
    let loud: Vec<_> = r
        .findings
        .iter()
        .filter(|f| f.severity != Severity::Note)
        .cloned()
        .collect();
    count_codes(&loud)
}

/// Official: "PACKAGE CHECKER FOUND NO ERRORS" (strong 5 logs, weak 7:
/// "at least" the strong count).
#[test]
fn strong_and_weak_folders_pass() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let org = package(tmp.path(), &[("strong/oc20", 5), ("weak/oc20", 7)]);
    let r = check(&org, "hpc", "3.0.0");
    assert_eq!(r.verdict, Verdict::Pass, "{:#?}", r.findings);
    let labels: Vec<(Option<&str>, &str)> = r
        .benchmarks
        .iter()
        .map(|b| (b.scaling.as_deref(), b.benchmark.as_str()))
        .collect();
    assert_eq!(labels, [(Some("strong"), "oc20"), (Some("weak"), "oc20")]);
    assert!(r.benchmarks.iter().all(|b| b.seeds_checked));
}

/// Official: "Expected at least 5 runs, but detected 4 runs." (weak) and
/// "Incorrect number of files in dir, ... found 6, expected 5" (strong).
#[test]
fn weak_needs_at_least_the_strong_count_and_strong_exactly() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let org = package(tmp.path(), &[("strong/oc20", 6), ("weak/oc20", 4)]);
    let r = check(&org, "hpc", "3.0.0");
    assert_eq!(r.verdict, Verdict::Fail);
    assert_eq!(codes(&r), BTreeMap::from([("PKG001".to_string(), 2)]));
    let weak = r.findings.iter().find(|f| f.path.contains("/weak/"));
    assert!(
        weak.is_some_and(|f| f.message.contains("at least 5")),
        "{weak:?}"
    );
}

/// Official: "PACKAGE CHECKER FOUND NO ERRORS": it takes `oc20` for a
/// scaling folder and checks its sub-folders (none). mlaudit fails it on
/// PKG031, an `extra` code (official_verdict keeps the pass).
#[test]
fn an_hpc_folder_outside_strong_or_weak_fails() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let org = package(tmp.path(), &[("oc20", 5)]);
    let r = check(&org, "hpc", "3.0.0");
    assert_eq!(r.verdict, Verdict::Fail);
    assert_eq!(codes(&r), BTreeMap::from([("PKG031".to_string(), 1)]));
}

/// Official (`Org training 5.0.0`): "Skipping benchmark: strong", a pass;
/// mlaudit fails it on PKG004 (an `extra` code) and names the folder.
#[test]
fn strong_and_weak_are_not_training_benchmarks() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let org = package(tmp.path(), &[("strong/oc20", 5)]);
    let r = check(&org, "training", "5.0.0");
    assert_eq!(codes(&r).get("PKG004"), Some(&1));
    assert!(r
        .findings
        .iter()
        .any(|f| f.message.contains("'strong/oc20'")));
}

fn mlaudit(dir: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_mlaudit"))
        .current_dir(dir)
        .args(args)
        .output()
        .expect("run mlaudit");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// An `hpc-v3.0` folder in the path names usage and ruleset; the weak
/// folder gets the weak-scaling score, the strong one the olympic score.
#[test]
fn check_infers_hpc_from_the_round_folder_and_scores_weak_scaling() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let round = tmp.path().join("hpc-v3.0");
    package(&round, &[("strong/oc20", 5), ("weak/oc20", 5)]);
    let (code, out, err) = mlaudit(&round, &["check", "--format", "json", "Org"]);
    assert!(err.contains("using ruleset hpc 3.0.0"), "{err}");
    let j: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(j["usage"], "hpc", "{out}");
    assert_eq!(j["ruleset"], "3.0.0");
    let b = j["benchmarks"].as_array().expect("benchmarks");
    let weak = b.iter().find(|b| b["scaling"] == "weak").expect("weak");
    assert_eq!(weak["weak_score"]["number_of_models"], 5);
    assert_eq!(weak["weak_score"]["instance_scale"], 640);
    assert!(weak["score"].is_null());
    let strong = b.iter().find(|b| b["scaling"] == "strong").expect("strong");
    assert!(strong["score"]["minutes"].as_f64().is_some());
    // Copies of one log with their own seeds: the RCP check passes.
    assert_eq!(code, Some(0), "{out}");
}

/// A wrong `--ruleset` names the rulesets of every usage.
#[test]
fn a_wrong_ruleset_names_the_available_ones() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let (code, _, err) = mlaudit(
        tmp.path(),
        &["check", "--usage", "hpc", "--ruleset", "9.0.0", "."],
    );
    assert_eq!(code, Some(2));
    assert!(
        err.contains("unknown ruleset 'hpc 9.0.0'")
            && err.contains("hpc 1.0.0, 2.0.0, 3.0.0")
            && err.contains("(--usage training)"),
        "{err}"
    );
}
