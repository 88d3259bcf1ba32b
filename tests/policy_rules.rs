//! The policy data itself: every round's pack loads, every code it can
//! emit is documented (so `mlaudit rules explain` prints it), and nothing in
//! it repeats a check of the official compliance packs: `fixed`/`checks`
//! keys are not checked by the closed pack of the same benchmark, and
//! `optimizer_checked_by_compliance` says exactly whether the pack checks
//! opt_name.

use mlaudit::check::policy::{PolicyRules, CODES};
use mlaudit::config::{apply_waivers, Config};
use mlaudit::finding::{Finding, Severity};
use mlaudit::rulebook::codes::CodeRegistry;
use mlaudit::rulebook::source::RuleSource;
use std::collections::BTreeSet;
use std::path::Path;

fn versions() -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("rules/training");
    let mut v: Vec<String> = std::fs::read_dir(&dir)
        .expect("rules/training")
        .flatten()
        .filter(|e| e.path().join("compliance").is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Keys the closed compliance pack of `bm` has a rule with a `check` for.
fn checked_keys(version: &str, bm: &str) -> BTreeSet<String> {
    // Through the rule source: a round may inherit the pack (inherit.yaml).
    // Rounds before 0.7.0 have no division packs: `compliance/<bm>.yaml`.
    let read = |rel: &str| {
        RuleSource::Embedded
            .read(rel)
            .unwrap_or_else(|e| panic!("{rel}: {e}"))
    };
    let rel = format!("training/{version}/compliance/closed_{bm}.yaml");
    // A benchmark of the roster without a pack of its own (0.6.0 ncf: the
    // official rules have none) has only the common checks: no key of its own.
    let Some(text) =
        read(&rel).or_else(|| read(&format!("training/{version}/compliance/{bm}.yaml")))
    else {
        assert_eq!(version, "0.6.0", "{rel}: no such pack");
        return BTreeSet::new();
    };
    let doc: serde_yaml::Value = serde_yaml::from_str(&text).expect("pack yaml");
    doc.get("rules")
        .and_then(|r| r.as_sequence())
        .map(|rules| {
            rules
                .iter()
                .filter(|r| r.get("check").is_some() || r.get("first_check").is_some())
                .filter_map(|r| r.get("key").and_then(|k| k.as_str()).map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn every_round_has_a_policy_pack_that_does_not_repeat_the_compliance_packs() {
    let registry = CodeRegistry::load(&RuleSource::Embedded).expect("codes");
    let vs = versions();
    assert!(vs.len() >= 5, "{vs:?}");
    for v in &vs {
        let r = PolicyRules::load(&RuleSource::Embedded, "training", v)
            .unwrap_or_else(|e| panic!("policy {v}: {e}"));
        assert_eq!(r.ruleset, format!("training/{v}"));
        let package =
            mlaudit::aggregate::package::PackageRules::load(&RuleSource::Embedded, "training", v)
                .expect("package rules");
        let roster: BTreeSet<&String> = package.benchmarks.keys().collect();
        let mine: BTreeSet<&String> = r.benchmarks.keys().collect();
        assert_eq!(
            mine, roster,
            "training {v}: policy benchmarks differ from the roster"
        );
        for (bm, p) in &r.benchmarks {
            let checked = checked_keys(v, bm);
            assert_eq!(
                p.optimizer_checked_by_compliance,
                checked.contains("opt_name"),
                "training {v} {bm}: optimizer_checked_by_compliance"
            );
            for c in &p.checks {
                assert!(
                    !checked.contains(&c.key),
                    "training {v} {bm}: {} is already checked by the compliance pack",
                    c.key
                );
                // A tunable key may be bounded (LoRA GA > 0), never fixed.
                assert!(
                    !p.tunable.contains(&c.key) || !c.source.contains("=="),
                    "training {v} {bm}: {} is both tunable and fixed",
                    c.key
                );
            }
        }
        for code in r.signals.codes().chain(CODES.iter().copied()) {
            let doc = registry
                .get(code)
                .unwrap_or_else(|| panic!("{code} undocumented"));
            assert!(
                doc.policy.is_some()
                    || code.starts_with("CFG")
                    || code == "POL040"
                    || code == "POL041"
                    || code == "POL006",
                "{code} cites no policy"
            );
        }
    }
    // Every POL/CFG code documented is one the policy can emit.
    let r = PolicyRules::load(&RuleSource::Embedded, "training", "6.1.0").expect("6.1.0");
    // Signals, the policy's own codes and the framework files' settings.
    let emitted: BTreeSet<&str> = r
        .signals
        .codes()
        .chain(CODES.iter().copied())
        .chain(r.frameworks.settings.iter().map(|s| s.code.as_str()))
        .collect();
    for code in registry.codes.keys() {
        if code.starts_with("POL") || code.starts_with("CFG") {
            assert!(
                emitted.contains(code.as_str()),
                "{code} documented but never emitted"
            );
        }
    }
}

#[test]
fn a_missing_round_is_an_error_naming_the_known_ones() {
    let e = PolicyRules::load(&RuleSource::Embedded, "training", "9.9.9").expect_err("missing");
    let msg = e.to_string();
    assert!(
        msg.contains("training/9.9.9/policy.yaml") && msg.contains("5.0.0"),
        "{msg}"
    );
}

/// A folder holding the code docs and round 5.0.0's policy pack (the rest
/// of a rule folder a test writes itself), and the project's `rules/`.
fn rules_5_0_0() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("rules");
    for rel in ["codes/policy.yaml", "training/5.0.0/policy.yaml"] {
        let to = dir.path().join(rel);
        std::fs::create_dir_all(to.parent().expect("parent")).expect("mkdir");
        std::fs::copy(root.join(rel), &to).expect("copy");
    }
    (dir, root)
}

#[test]
fn a_broken_pattern_fails_the_load_naming_the_file() {
    let (dir, root) = rules_5_0_0();
    let signals = std::fs::read_to_string(root.join("policy/signals.yaml")).expect("signals");
    std::fs::create_dir_all(dir.path().join("policy")).expect("mkdir");
    std::fs::write(
        dir.path().join("policy/signals.yaml"),
        signals.replace("'hogwild'", "'hog(wild'"),
    )
    .expect("write");
    let src = RuleSource::Dir(dir.path().to_path_buf());
    let e = PolicyRules::load(&src, "training", "5.0.0").expect_err("broken regex");
    let msg = e.to_string();
    assert!(
        msg.contains("signals.yaml") && msg.contains("async_updates"),
        "{msg}"
    );
}

fn finding(code: &str, path: &str, line: Option<u64>) -> Finding {
    Finding::new(code, Severity::Warning, path, "m").at_line(line)
}

#[test]
fn waivers_need_a_reason_and_unused_ones_are_reported() {
    let p = Path::new("pkg/.mlaudit.toml");
    let text = "ruleset = \"5.0.0\"\n\n[[waiver]]\ncode = \"POL014\"\npath = \"benchmarks/bert\"\n\n[[waiver]]\ncode = \"POL011\"\nline = 3\n";
    let e = Config::parse(text, p).expect_err("no reason");
    assert_eq!(
        e.to_string(),
        "pkg/.mlaudit.toml:3: waiver for POL014 has no reason: say why the finding is accepted (reason = \"...\")"
    );
    let bad = "[[waiver]]\ncode = \"POL014\"\nreason = \"x\"\nlien = 4\n";
    let e = Config::parse(bad, p).expect_err("unknown field");
    assert!(e.to_string().starts_with("pkg/.mlaudit.toml:"), "{e}");
    let syntax = "ruleset = \n";
    assert!(Config::parse(syntax, p)
        .expect_err("syntax")
        .to_string()
        .starts_with("pkg/.mlaudit.toml:1:"));

    let ok = "ruleset = \"5.0.0\"\nformat = \"json\"\n[[waiver]]\ncode = \"POL014\"\npath = \"benchmarks/**/*.sh\"\nreason = \"hook defined, never registered\"\n\n[[waiver]]\ncode = \"POL011\"\nline = 3\nreason = \"gone\"\n";
    let cfg = Config::parse(ok, p).expect("valid");
    assert_eq!(cfg.ruleset.as_deref(), Some("5.0.0"));
    assert_eq!(cfg.format.as_deref(), Some("json"));
    assert_eq!(cfg.waivers[1].config_line, 8);
    let findings = vec![
        finding("POL014", "../pkg/benchmarks/bert/impl/run.sh", Some(4)),
        finding("POL014", "../pkg/benchmarks/bert/impl/c.yaml", Some(4)),
        finding("POL011", "x.sh", Some(2)),
    ];
    let (kept, waived) = apply_waivers(findings, &cfg, "pkg/.mlaudit.toml");
    assert_eq!(waived.len(), 1);
    assert_eq!(waived[0].path, "../pkg/benchmarks/bert/impl/run.sh");
    let kept: Vec<(String, Option<u64>)> = kept.iter().map(|f| (f.code.clone(), f.line)).collect();
    assert_eq!(
        kept,
        vec![
            ("POL014".to_string(), Some(4)),
            ("CFG001".to_string(), Some(8)),
            ("POL011".to_string(), Some(2)),
        ]
    );
}

#[test]
fn config_load_from_a_folder() {
    let dir = tempfile::tempdir().expect("tempdir");
    assert!(Config::load(dir.path()).expect("no file").is_none());
    std::fs::write(dir.path().join(".mlaudit.toml"), "usage = \"training\"\n").expect("write");
    let cfg = Config::load(dir.path()).expect("ok").expect("some");
    assert_eq!(cfg.usage.as_deref(), Some("training"));
    assert!(cfg.waivers.is_empty());
}

/// Every benchmark a round's package rules know has a policy entry (its
/// reference optimizer): a benchmark left out got no optimizer check at
/// all (HPC 3.0.0 listed OpenFold only, not the three benchmarks it keeps
/// from 2.0.0).
#[test]
fn every_benchmark_of_a_round_has_a_policy() {
    use mlaudit::aggregate::package::PackageRules;
    let mut checked = 0;
    for usage in ["training", "hpc"] {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("rules")
            .join(usage);
        let mut versions: Vec<String> = std::fs::read_dir(&dir)
            .expect("rules/<usage>")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        versions.sort();
        for v in &versions {
            let (Ok(pkg), Ok(policy)) = (
                PackageRules::load(&RuleSource::Embedded, usage, v),
                PolicyRules::load(&RuleSource::Embedded, usage, v),
            ) else {
                continue;
            };
            for bm in pkg.benchmarks.keys() {
                checked += 1;
                assert!(
                    policy.benchmarks.contains_key(bm),
                    "{usage} {v}: {bm} has no entry in policy.yaml"
                );
            }
        }
    }
    assert!(checked > 50, "{checked} benchmarks checked");
}

/// Copies folder `from` into `to`, files and folders, recursively.
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("read_dir").flatten() {
        let (src, dst) = (e.path(), to.join(e.file_name()));
        if src.is_dir() {
            copy_tree(&src, &dst);
        } else {
            std::fs::copy(&src, &dst).expect("copy");
        }
    }
}

#[test]
fn optimizer_spellings_that_differ_only_in_separators_must_agree() {
    let (dir, root) = rules_5_0_0();
    copy_tree(&root.join("policy"), &dir.path().join("policy"));
    let src = RuleSource::Dir(dir.path().to_path_buf());
    // The real data loads: its spellings agree.
    PolicyRules::load(&src, "training", "5.0.0").expect("the real data loads");
    // PyTorch's class name RMSprop is common.yaml's rmsprop.
    std::fs::write(
        dir.path().join("policy/frameworks/zz_home.yaml"),
        "framework: Home\ndocs: https://example.org\noptimizers:\n  RMSprop: sgd\n",
    )
    .expect("write");
    let e = PolicyRules::load(&src, "training", "5.0.0").expect_err("spellings disagree");
    let msg = e.to_string();
    assert!(
        msg.contains("zz_home") && msg.contains("RMSprop") && msg.contains("rmsprop"),
        "{msg}"
    );
}
