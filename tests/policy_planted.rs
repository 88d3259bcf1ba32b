//! Settings planted into real packages (issue 16): every folder of
//! `tests/fixtures/policy/planted/hit/` is a small implementation whose
//! configs set something the closed division forbids or a reviewer must
//! see, written as a framework documents it (DeepSpeed JSON, Lightning and
//! Hydra YAML, launcher command lines, Kubernetes env lists, `.env`, TOML,
//! INI); every folder of `quiet/` holds an allowed neighbour or a setting
//! that is off. `llama2_70b_lora/{hit,quiet}/` hold the cases that depend
//! on that benchmark's reference (optimizer, fixed values). The cases are
//! copied into a benchmark of a real package (every fourth one into
//! `benchmarks/<bm>/<name>/` and every fourth into a framework folder
//! `implementations/<name>/nemo/` rather than
//! `implementations/<name>/`), the
//! package is checked, and each hit folder must give an error or a warning
//! while no quiet folder, and nothing else in the package, gives any.

mod common;

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

fn cases(side: &str) -> Vec<String> {
    let dir = fixtures().join(side);
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn fixtures() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/policy/planted")
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

/// `mlaudit check ORG --format json --no-cache ARGS` run in `dir`: every
/// finding of its report with a path.
fn check(dir: &Path, org: &str, args: &[&str]) -> Vec<(String, String, String)> {
    let out = Command::new(env!("CARGO_BIN_EXE_mlaudit"))
        .current_dir(dir)
        .args(["check", org, "--format", "json", "--no-cache"])
        .args(args)
        .output()
        .expect("mlaudit runs");
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    let mut all = Vec::new();
    findings(&report, &mut all);
    all
}

/// Where every fourth case is planted, below its implementation folder: a
/// framework folder whose name is also a vendored tree's, holding the
/// implementation's run script (v5.1 GigaComputing's `MI355X/nemo/`).
const FRAMEWORK_FOLDER: &str = "nemo";

/// Plants the cases of `sides` (folder, expected to hit) into benchmark
/// `bm` of a copy of corpus package `package` (`<round>/<org>`), checks it
/// with `args`, and returns (found, quiet) after asserting every case.
fn planted(package: &str, bm: &str, sides: &[(&str, bool)], args: &[&str]) -> (usize, usize) {
    let Some(corpus) = common::corpus() else {
        return (0, 0);
    };
    let tmp = tempfile::tempdir().expect("tempdir");
    let org = package.rsplit('/').next().unwrap_or(package);
    let pkg = tmp.path().join(org);
    common::copy_dir(&corpus.join(package), &pkg);
    // Folder of each case in the package (relative to it) -> (case, hit?).
    let mut planted: BTreeMap<String, (String, bool)> = BTreeMap::new();
    let mut i = 0;
    for &(side, hit) in sides {
        for name in cases(side) {
            let framework = i % 4 == 1;
            let rel = match i % 4 {
                0 => format!("benchmarks/{bm}/{name}"),
                1 => format!("benchmarks/{bm}/implementations/{name}/{FRAMEWORK_FOLDER}"),
                _ => format!("benchmarks/{bm}/implementations/{name}"),
            };
            i += 1;
            common::copy_dir(&fixtures().join(side).join(&name), &pkg.join(&rel));
            let run = pkg.join(&rel).join("run_and_time.sh");
            if framework && !run.exists() {
                // The implementation's run script makes the folder its own
                // (a case's own run script is kept).
                std::fs::write(run, "#!/bin/bash\n").expect("write");
            }
            planted.insert(format!("{org}/{rel}/"), (name, hit));
        }
    }
    let all = check(tmp.path(), org, args);
    let mut flagged: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    let mut elsewhere = Vec::new();
    for (path, code, severity) in &all {
        if !code.starts_with("POL") || !(severity == "error" || severity == "warning") {
            continue;
        }
        if code == "POL008" && path.contains("/results/") {
            // The log's side of a planted config that contradicts it (the
            // config-against-log check reports at both places).
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
        match (hit, flagged.get(folder.as_str())) {
            (true, Some(_)) => hits += 1,
            (false, None) => quiet += 1,
            (true, None) => wrong.push(format!("missed: {name}")),
            (false, Some(f)) => wrong.push(format!("flagged: {name} {f:?}")),
        }
    }
    common::say(&format!(
        "policy_planted: {package} {bm}: {hits} planted settings found, {quiet} neighbours quiet, {} wrong",
        wrong.len()
    ));
    assert!(wrong.is_empty(), "{package}: {wrong:#?}");
    assert!(
        elsewhere.is_empty(),
        "{package}: findings outside the planted folders: {elsewhere:#?}"
    );
    (hits, quiet)
}

#[test]
fn planted_settings_in_a_training_package() {
    let sides = [
        ("hit", true),
        ("quiet", false),
        ("llama2_70b_lora/hit", true),
        ("llama2_70b_lora/quiet", false),
    ];
    let (hits, quiet) = planted(
        "v5.1/AMD",
        "llama2_70b_lora",
        &sides,
        &["--ruleset", "5.1.0"],
    );
    assert!(
        common::corpus().is_none() || (hits >= 70 && quiet >= 45),
        "{hits} hits, {quiet} quiet"
    );
}

/// HPC's closed division forbids the same: the cases that do not depend on
/// a benchmark's reference, in HelmholtzAI's HPC v2.0 CosmoFlow.
#[test]
fn planted_settings_in_an_hpc_package() {
    let sides = [("hit", true), ("quiet", false)];
    let args = ["--usage", "hpc", "--ruleset", "2.0.0"];
    let (hits, quiet) = planted("hpc-v2.0/HelmholtzAI", "cosmoflow", &sides, &args);
    assert!(
        common::corpus().is_none() || (hits >= 60 && quiet >= 40),
        "{hits} hits, {quiet} quiet"
    );
}

/// An implementation named after a system of the open division is not
/// held to the closed division's policy (Google's v1.0 ResNet
/// `tpu-v4-256-JAX-Distributed-Shampoo`, an open system, names Shampoo);
/// the same settings in an implementation of no open system are found.
#[test]
fn an_open_systems_implementation_is_not_checked() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let tmp = tempfile::tempdir().expect("tempdir");
    let pkg = tmp.path().join("AMD");
    common::copy_dir(&corpus.join("v5.1/AMD"), &pkg);
    let systems = pkg.join("systems");
    let any = std::fs::read_dir(&systems)
        .expect("systems")
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "json"))
        .expect("a system description");
    let mut open: Value =
        serde_json::from_slice(&std::fs::read(&any).expect("read")).expect("system json");
    open["division"] = Value::String("open".into());
    std::fs::write(
        systems.join("MI300X_open_research.json"),
        serde_json::to_vec_pretty(&open).expect("json"),
    )
    .expect("write");
    let case = fixtures().join("hit/async_sgd_flag");
    let impls = pkg.join("benchmarks/llama2_70b_lora/implementations");
    for name in ["MI300X_open_research", "MI300X_closed_twin"] {
        common::copy_dir(&case, &impls.join(name));
    }
    let all = check(tmp.path(), "AMD", &["--ruleset", "5.1.0"]);
    let pol = |name: &str| {
        all.iter()
            .filter(|(p, c, _)| c.starts_with("POL") && p.contains(&format!("/{name}/")))
            .count()
    };
    assert!(pol("MI300X_closed_twin") > 0, "{all:#?}");
    assert_eq!(pol("MI300X_open_research"), 0, "{all:#?}");
}

/// A system description without a division (SIAT's v0.7 ones spell the
/// key "divison"): the division its runs log decides. The same
/// parameter-server TF_CONFIG is found in the implementation of the system
/// whose runs log `closed`, not in the one whose runs log `open`.
#[test]
fn a_systems_logged_division_stands_in_for_a_missing_one() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let tmp = tempfile::tempdir().expect("tempdir");
    let pkg = tmp.path().join("SIAT");
    common::copy_dir(&corpus.join("v0.7/SIAT"), &pkg);
    let ps = "export TF_CONFIG='{\"cluster\": {\"worker\": [\"w0:2222\", \"w1:2222\"], \
              \"ps\": [\"ps0:2222\"]}, \"task\": {\"type\": \"worker\", \"index\": 0}}'\n";
    let impls = pkg.join("benchmarks/resnet/implementations");
    for name in [
        "modelarts_512_tensorflow_open",
        "modelarts_512_tensorflow_close",
    ] {
        std::fs::write(impls.join(name).join("run_ps.sh"), ps).expect("write");
    }
    let all = check(tmp.path(), "SIAT", &["--ruleset", "0.7.0"]);
    let pol = |name: &str| {
        all.iter()
            .filter(|(p, c, s)| {
                c == "POL011" && s != "note" && p.ends_with(&format!("/{name}/run_ps.sh"))
            })
            .count()
    };
    assert!(pol("modelarts_512_tensorflow_close") > 0, "{all:#?}");
    assert_eq!(pol("modelarts_512_tensorflow_open"), 0, "{all:#?}");
}
