//! YAML files of named configs: one top-level block per config, of which a
//! launcher picks one by name. Graphcore's TensorFlow CNNs keep every
//! config in one `configs.yml` (ResNet-50 with momentum SGD or LARS,
//! EfficientNet with RMSprop) and `run_and_time.sh` runs
//! `train.py --config mk2_resnet50_mlperf_pod16_lars`: only the blocks a
//! launcher names are a run's settings, and a block's own keys replace
//! what it merges from another (`<<: *mk2_resnet50_mlperf_pod16`).
//!
//! The flags that name a block are data (`config_log.yaml`
//! `named_config_flags`).

use super::configs::{Entry, EntryKind};
use super::interpolate::{self, Env};
use super::parsed::ParsedConfigs;
use super::signals::normalize;
use super::PolicyRules;
use crate::discover::tree::ImplFile;
use std::collections::{BTreeMap, BTreeSet};

/// One named config of a file: its name and its settings (each key once,
/// a block's own value before one it merges).
#[derive(Debug, Clone, PartialEq)]
pub struct Section {
    pub name: String,
    pub entries: Vec<Entry>,
}

/// The names benchmark `bm`'s own (not vendored) files pick a named config
/// by: the values of the flags `flags` (normal form) on their command
/// lines.
pub fn picked_names(
    flags: &[String],
    files: &[ImplFile],
    parsed: &ParsedConfigs,
    bm: &str,
) -> BTreeSet<String> {
    if flags.is_empty() {
        return BTreeSet::new();
    }
    let own: Vec<&[Entry]> = files
        .iter()
        .enumerate()
        .filter(|(i, f)| f.benchmark == bm && !parsed.vendored(*i))
        .filter_map(|(i, _)| parsed.entries(i))
        .collect();
    let picks: Vec<&Entry> = own
        .iter()
        .flat_map(|entries| entries.iter())
        .filter(|e| {
            e.kind == EntryKind::Flag
                && !e.value.is_empty()
                && e.path.last().is_some_and(|k| flags.contains(&normalize(k)))
        })
        .collect();
    if picks.is_empty() {
        return BTreeSet::new();
    }
    // A name given through a variable (`--config ${CONFIG}`, the
    // benchmark's scripts assigning CONFIG): each value it can take.
    let mut env = Env::default();
    for entries in &own {
        env.add(entries);
    }
    picks
        .iter()
        .flat_map(|e| interpolate::expand(&e.value, &env, &BTreeMap::new()))
        .map(|v| v.trim().trim_matches(['"', '\'']).to_string())
        .filter(|v| !v.is_empty() && !v.contains('$'))
        .collect()
}

/// Whether `path` names a YAML file.
fn is_yaml(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    lower.ends_with(".yml") || lower.ends_with(".yaml")
}

/// The named configs of the YAML `entries` that `names` picks, in the
/// file's order; `None` when the file has fewer than two top-level blocks
/// or none of them is picked.
pub fn sections(path: &str, entries: &[Entry], names: &BTreeSet<String>) -> Option<Vec<Section>> {
    if names.is_empty() || !is_yaml(path) {
        return None;
    }
    // Top-level blocks, with the line each starts on.
    let blocks: Vec<(&str, u64)> = entries
        .iter()
        .filter(|e| e.path.len() == 1 && e.kind == (EntryKind::Key { header: true }))
        .map(|e| (e.path[0].as_str(), e.line))
        .collect();
    if blocks.len() < 2 || !blocks.iter().any(|(n, _)| names.contains(*n)) {
        return None;
    }
    let mut starts: Vec<u64> = entries
        .iter()
        .filter(|e| e.path.len() == 1)
        .map(|e| e.line)
        .collect();
    starts.sort_unstable();
    let out = blocks
        .iter()
        .filter(|(n, _)| names.contains(*n))
        .map(|&(name, line)| {
            let end = starts
                .iter()
                .copied()
                .find(|&s| s > line)
                .unwrap_or(u64::MAX);
            let own = |e: &Entry| e.line >= line && e.line < end;
            let inside: Vec<&Entry> = entries
                .iter()
                .filter(|e| e.path.len() > 1 && e.path[0] == name)
                .collect();
            // A key the block writes itself replaces what it merges.
            let written: BTreeSet<&[String]> = inside
                .iter()
                .filter(|e| own(e))
                .map(|e| e.path.as_slice())
                .collect();
            let setting = |e: &Entry| e.kind == (EntryKind::Key { header: false });
            // Of a key set several times, the last: a block merged into
            // the one merged here comes before the keys that replace it.
            let mut last: BTreeMap<&[String], usize> = BTreeMap::new();
            for (k, e) in inside.iter().enumerate() {
                if setting(e) && (own(e) || !written.contains(e.path.as_slice())) {
                    last.insert(e.path.as_slice(), k);
                }
            }
            let kept: Vec<Entry> = inside
                .iter()
                .enumerate()
                .filter(|&(k, e)| {
                    if setting(e) {
                        last.get(e.path.as_slice()) == Some(&k)
                    } else {
                        own(e) || !written.contains(e.path.as_slice())
                    }
                })
                .map(|(_, e)| (*e).clone())
                .collect();
            Section {
                name: name.to_string(),
                entries: kept,
            }
        })
        .collect();
    Some(out)
}

/// For each own YAML file of named configs that the benchmark's launchers
/// pick from: its picked configs, by index into `files`.
pub fn picked_sections(
    rules: &PolicyRules,
    files: &[ImplFile],
    parsed: &ParsedConfigs,
) -> BTreeMap<usize, Vec<Section>> {
    let flags = rules.config_log.named_config_flags();
    let mut names_of: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
    let mut out = BTreeMap::new();
    for (i, f) in files.iter().enumerate() {
        if parsed.vendored(i) || !is_yaml(&f.file.path) {
            continue;
        }
        let Some(entries) = parsed.entries(i) else {
            continue;
        };
        let names = names_of
            .entry(f.benchmark.as_str())
            .or_insert_with(|| picked_names(flags, files, parsed, &f.benchmark));
        if let Some(s) = sections(&f.file.path, entries, names) {
            out.insert(i, s);
        }
    }
    out
}

/// The settings of the picked configs of a file, together (lines of the
/// blocks not picked left out).
pub fn together(sections: &[Section]) -> Vec<Entry> {
    sections.iter().flat_map(|s| s.entries.clone()).collect()
}

/// The lines a file's picked configs hold settings on (their own, and
/// those of the blocks they merge).
pub fn lines(sections: &[Section]) -> BTreeSet<u64> {
    sections
        .iter()
        .flat_map(|s| s.entries.iter().map(|e| e.line))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::policy::configs::{parse, Format};

    const YAML: &str = "\
base: &base
  optimiser: momentum
  batch_size: 16
  weight_decay: 0.0001

effnet:
  optimiser: RMSprop

lars16: &lars16
  <<: *base
  optimiser: LARS
  batch_size: 20

lars64:
  <<: *lars16
  replicas: 64
";

    fn names(n: &[&str]) -> BTreeSet<String> {
        n.iter().map(|s| s.to_string()).collect()
    }

    fn values(s: &Section, key: &str) -> Vec<String> {
        s.entries
            .iter()
            .filter(|e| e.path.last().is_some_and(|k| k == key))
            .map(|e| e.value.clone())
            .collect()
    }

    #[test]
    fn picked_blocks_with_their_own_keys_over_merged_ones() {
        let entries = parse(YAML, Format::Yaml);
        let got = sections("configs.yml", &entries, &names(&["lars16", "lars64"]))
            .unwrap_or_else(|| panic!("no sections"));
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].name, "lars16");
        assert_eq!(values(&got[0], "optimiser"), ["LARS"]);
        assert_eq!(values(&got[0], "batch_size"), ["20"]);
        // Merged from base, not written by the block.
        assert_eq!(values(&got[0], "weight_decay"), ["0.0001"]);
        assert_eq!(got[1].name, "lars64");
        assert_eq!(values(&got[1], "replicas"), ["64"]);
        // Through two merges: lars16's own optimiser, not base's.
        assert_eq!(values(&got[1], "optimiser"), ["LARS"]);
        assert_eq!(values(&got[1], "batch_size"), ["20"]);
        assert!(
            !lines(&got).contains(&7),
            "effnet's line is no picked block's"
        );
    }

    #[test]
    fn names_given_through_a_variable() {
        use crate::discover::tree::FileRef;
        let file = |p: &str| ImplFile {
            benchmark: "resnet".into(),
            implementation: None,
            file: FileRef {
                path: p.to_string(),
                fs: std::path::PathBuf::from(p),
            },
        };
        let files = [file("tf/run_and_time.sh"), file("tf/configs.yml")];
        let sh = "if [ \"$N\" = 16 ]; then CONFIG=lars16; else CONFIG=lars64; fi\n\
                  python train.py --config \"${CONFIG}\" --seed 1\n";
        let rules = crate::check::policy::test_support::rules();
        let parsed = ParsedConfigs::from_entries(
            &rules,
            &files,
            vec![
                (0, parse(sh, Format::Shell)),
                (1, parse(YAML, Format::Yaml)),
            ],
            vec![false, false],
        );
        let got = picked_names(&["config".to_string()], &files, &parsed, "resnet");
        assert_eq!(got, names(&["lars16", "lars64"]));
        assert!(picked_names(&["config".to_string()], &files, &parsed, "bert").is_empty());
    }

    #[test]
    fn no_sections_without_a_picked_block_or_outside_yaml() {
        let entries = parse(YAML, Format::Yaml);
        assert_eq!(sections("configs.yml", &entries, &names(&["other"])), None);
        assert_eq!(
            sections("configs.json", &entries, &names(&["lars16"])),
            None
        );
        let one = parse("lars16:\n  optimiser: LARS\n", Format::Yaml);
        assert_eq!(sections("c.yaml", &one, &names(&["lars16"])), None);
    }
}
