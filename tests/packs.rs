//! Every training ruleset under `rules/training/` loads, every code a pack
//! uses is documented, and every documented CMN/BMK code is used by a pack.

use mlaudit::check::rules::{available_versions, Ruleset};
use mlaudit::rulebook::codes::CodeRegistry;
use mlaudit::rulebook::source::RuleSource;
use std::collections::BTreeSet;
use std::path::Path;

/// Ruleset versions found on disk, so a new directory cannot be missed by the
/// embedded listing going stale.
fn versions_on_disk() -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("rules/training");
    let mut v: Vec<String> = std::fs::read_dir(&dir)
        .expect("read rules/training")
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("compliance").is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

fn used_codes(rs: &Ruleset) -> BTreeSet<String> {
    let mut used = BTreeSet::new();
    for pack in rs.packs.values() {
        for r in &pack.rules {
            used.insert(r.code.clone());
            for c in r.check.iter().chain(&r.first_check) {
                if let Some(code) = &c.code {
                    used.insert(code.code.clone());
                }
            }
        }
        for e in &pack.end {
            used.insert(e.code.clone());
        }
    }
    used
}

#[test]
fn every_training_ruleset_loads() {
    let on_disk = versions_on_disk();
    assert!(on_disk.contains(&"6.0.0".to_string()), "{on_disk:?}");
    assert!(on_disk.contains(&"6.1.0".to_string()), "{on_disk:?}");
    assert_eq!(
        on_disk,
        available_versions(&RuleSource::Embedded, "training"),
        "embedded rules differ from rules/training on disk"
    );
    for v in &on_disk {
        let rs = Ruleset::load(&RuleSource::Embedded, "training", v)
            .unwrap_or_else(|e| panic!("training {v} does not load: {e}"));
        assert!(rs.packs.contains_key("common"), "{v}: no common pack");
        // Training 0.6.0 has no division packs (officially neither).
        if v != "0.6.0" {
            assert!(rs.packs.contains_key("closed_common"), "{v}");
            assert!(rs.packs.contains_key("open_common"), "{v}");
        }
    }
}

#[test]
fn round_6_packs_cover_the_official_benchmarks() {
    let expect = [
        (
            "6.0.0",
            &[
                "dlrm_dcnv2",
                "llama2_70b_lora",
                "llama31_405b",
                "flux1",
                "llama31_8b",
                "gpt_oss_20b",
                "deepseekv3_671b",
            ][..],
        ),
        (
            "6.1.0",
            &[
                "llama2_70b_lora",
                "flux1",
                "llama31_8b",
                "gpt_oss_20b",
                "deepseekv3_671b",
                "qwen35_397b_grpo",
                "dlrmv4",
            ][..],
        ),
    ];
    for (v, benchmarks) in expect {
        let rs = Ruleset::load(&RuleSource::Embedded, "training", v).unwrap();
        let want: BTreeSet<String> = ["common", "closed_common", "open_common"]
            .iter()
            .map(|s| s.to_string())
            .chain(
                benchmarks
                    .iter()
                    .flat_map(|b| [format!("closed_{b}"), format!("open_{b}")]),
            )
            .collect();
        let have: BTreeSet<String> = rs.packs.keys().cloned().collect();
        assert_eq!(have, want, "training {v} packs");
    }
}

#[test]
fn codes_are_documented_and_used() {
    let registry = CodeRegistry::load(&RuleSource::Embedded).expect("codes load");
    let mut used = BTreeSet::new();
    // Every usage's rulesets (training, hpc).
    for (u, v) in mlaudit::check::rules::available_rulesets(&RuleSource::Embedded) {
        let rs = Ruleset::load(&RuleSource::Embedded, &u, &v).unwrap();
        for code in used_codes(&rs) {
            assert!(
                registry.get(&code).is_some(),
                "{u} {v} uses undocumented code {code}"
            );
            used.insert(code);
        }
    }
    let unused: Vec<&String> = registry
        .codes
        .keys()
        .filter(|c| c.starts_with("CMN") || c.starts_with("BMK"))
        .filter(|c| !used.contains(*c))
        .collect();
    assert!(
        unused.is_empty(),
        "documented but used by no pack: {unused:?}"
    );
}
