//! The policy pack over the 23 real packages of `../shared/corpus`: no
//! policy error on any result log or implementation config (false errors on
//! real packages are the worst outcome), and the warning counts per code,
//! printed for the review in the issue (`cargo test --release --test
//! policy_corpus -- --nocapture`).

use mlaudit::check::policy::{check_configs, check_log, PolicyRules};
use mlaudit::discover::discover;
use mlaudit::finding::{Finding, Severity};
use mlaudit::rulebook::source::RuleSource;
use rayon::prelude::*;
use std::collections::BTreeMap;

mod common;
use common::{corpus, round_ruleset, Coverage};

#[test]
fn no_policy_errors_on_real_packages() {
    let Some(root) = corpus() else { return };
    // Round folders are the ones `expected/package.tsv` names.
    let mut coverage = Coverage::new("policy_corpus");
    let mut packages = Vec::new();
    for row in common::tsv(&root.join("expected/package.tsv")) {
        if coverage.covers(&row["round"]) {
            packages.push((
                round_ruleset(&row["round"]),
                root.join(&row["round"]).join(&row["submitter"]),
            ));
        }
    }
    coverage.report("packages");
    // HPC rounds have no policy pack (`check` runs none there); say so.
    let (packages, no_pack): (Vec<_>, Vec<_>) = packages.into_iter().partition(|(k, _)| {
        !matches!(
            PolicyRules::find(&RuleSource::Embedded, k.0, &k.1),
            Ok(None)
        )
    });
    if !no_pack.is_empty() {
        common::say(&format!(
            "policy_corpus: {} packages of rounds without a policy pack not checked",
            no_pack.len()
        ));
    }
    assert!(!packages.is_empty(), "no corpus package has rules");
    let mut rules: BTreeMap<(&str, String), PolicyRules> = BTreeMap::new();
    for (k, _) in &packages {
        rules.entry(k.clone()).or_insert_with(|| {
            PolicyRules::load(&RuleSource::Embedded, k.0, &k.1)
                .unwrap_or_else(|e| panic!("policy {} {}: {e}", k.0, k.1))
        });
    }
    let results: Vec<(String, Vec<Finding>, usize, usize)> = packages
        .par_iter()
        .map(|(v, pkg)| {
            let r = &rules[v];
            let sub = discover(pkg);
            let mut findings = Vec::new();
            let mut logs = 0;
            for b in &sub.benchmarks {
                for log in &b.result_logs {
                    logs += 1;
                    findings.extend(check_log(r, Some(&b.benchmark), None, &log.path, &log.fs));
                }
            }
            // The configs `check` reads: not those of an open system's
            // implementation.
            let configs = mlaudit::audit::policy_configs(&sub);
            let named = r.round_benchmarks(&configs);
            findings.extend(check_configs(r, named.as_deref().unwrap_or(&configs)));
            (
                pkg.display().to_string(),
                findings,
                logs,
                sub.implementation_files.len(),
            )
        })
        .collect();
    let mut per_code: BTreeMap<(String, Severity), usize> = BTreeMap::new();
    let mut errors = Vec::new();
    let (mut logs, mut files) = (0, 0);
    for (pkg, findings, l, f) in &results {
        logs += l;
        files += f;
        let mut mine: BTreeMap<&str, usize> = BTreeMap::new();
        for f in findings {
            *per_code.entry((f.code.clone(), f.severity)).or_default() += 1;
            *mine.entry(&f.code).or_default() += 1;
            if f.severity == Severity::Error {
                errors.push(format!("{}:{:?}: {} {}", f.path, f.line, f.code, f.message));
            }
        }
        println!("{pkg}: {mine:?}");
        if std::env::var("POLICY_SAMPLES").is_ok() {
            let mut shown: BTreeMap<&str, usize> = BTreeMap::new();
            for f in findings {
                let n = shown.entry(&f.code).or_default();
                *n += 1;
                if *n <= 2 {
                    println!(
                        "  {}:{} {} {}",
                        f.path,
                        f.line.unwrap_or(0),
                        f.code,
                        f.message
                    );
                }
            }
        }
    }
    println!("{logs} logs, {files} implementation files");
    for ((code, sev), n) in &per_code {
        println!("{code} {sev}: {n}");
    }
    assert!(logs > 1000 && files > 5000, "{logs} logs, {files} files");
    assert!(
        errors.is_empty(),
        "{} policy errors:\n{}",
        errors.len(),
        errors.join("\n")
    );
    // No warning a reviewer would call noise (issue 16): no update-
    // consistency, config-optimizer or fixed-hyperparameter warning on real
    // packages (vendored example configs are notes), and POL030 warns only where evaluation is
    // earlier than the written schedule: today the 20 LoRA logs at GBS 16
    // (v5.0 HPE, v5.1 Krai) evaluating first at 1536 where the rule says 1920.
    let warned = |code: &str| {
        per_code
            .get(&(code.to_string(), Severity::Warning))
            .copied()
            .unwrap_or(0)
    };
    for code in ["POL007", "POL010", "POL011", "POL012", "POL013", "POL014"] {
        assert_eq!(warned(code), 0, "{code} warnings on real packages");
    }
    // POL009 (a config sets a fixed hyperparameter to another value): only
    // v4.0 Quanta's stable diffusion, whose NeMo optim configs set
    // weight_decay 0. where the rules (and its own log, 0.01) say 0.01: the
    // value its closed compliance pack pins in logs, found in the configs.
    // The later NVIDIA-derived SD packages set 0.01. The configs NeMo saves
    // with a checkpoint (conf/base/model_config.yaml, weight_decay 0.01 in
    // 15 LoRA implementations) are not the run's.
    let pol009: Vec<String> = results
        .iter()
        .flat_map(|(_, findings, _, _)| findings)
        .filter(|f| f.code == "POL009" && f.severity == Severity::Warning)
        .map(|f| format!("{}:{}", f.path, f.line.unwrap_or(0)))
        .collect();
    assert_eq!(pol009.len(), 3, "{pol009:#?}");
    assert!(
        pol009.iter().all(|p| p.contains(
            "v4.0/Quanta_Cloud_Technology/benchmark/stable_diffusion/implementations/pytorch/conf/"
        )),
        "{pol009:#?}"
    );
    assert!(
        warned("POL030") <= 20,
        "POL030 warnings: {}",
        warned("POL030")
    );
}
