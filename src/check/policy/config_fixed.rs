//! Fixed hyperparameters set in configs (issue 16, item 3; POL009): a
//! config of the package's own implementation that sets a hyperparameter
//! the round fixes to another number than the reference, whatever the log
//! says. Fixed are the rules table's values (`policy.yaml`, `fixed:`), the
//! values the benchmark's closed compliance pack pins in logs (`v.value ==
//! NUMBER`: a config can set them where no log shows it) and the
//! reference's own values the table does not make tunable (`reference:`).
//!
//! Config keys map to MLLOG keys as for POL008 (`rules/policy/
//! config_log.yaml`), and settings are read the same way
//! ([`super::config_log::settings`]): variables resolved across the linked
//! configs, every value they can take, unresolved ones left out. The
//! linked configs here are those of one implementation: the non-vendored
//! configs of the benchmark in one folder under `benchmarks/<bm>/`
//! (`implementations/<impl>/` or the older `<bm>/<impl>/`), with the files
//! directly in `implementations/` in every implementation's set; a
//! benchmark folder that holds configs itself (`benchmarks/<bm>/
//! config_*.sh`) is one implementation with its folders outside
//! `implementations/`. Configs saved with a checkpoint (NeMo's
//! `model_config.yaml`, see `checkpoint_keys` in the data) are not the
//! run's and are not read. A key is reported only when no linked config gives
//! it the reference value (a `config_common.sh` default overridden by the
//! system's config to the reference is quiet; an option of a Hydra config
//! group counts for its own file only: a run composes one option, under the
//! primary config and the command line, whose values win), once per file,
//! at the first line that sets another value.

use super::config_log::{self, Set};
use super::configs::{self, Entry};
use super::interpolate;
use super::parsed::ParsedConfigs;
use super::rules::{Constraint, Pinned};
use super::scope;
use super::PolicyRules;
use crate::discover::tree::ImplFile;
use crate::finding::{code, Finding};
use std::collections::{BTreeMap, BTreeSet};

/// The linked configs of each implementation of a benchmark with fixed
/// values, by index into `files`: the non-vendored configs of one
/// implementation folder and the shared ones; in a benchmark folder that
/// holds configs itself, all its configs outside `implementations/`.
/// Configs saved with a checkpoint are left out.
fn implementations<'a>(
    rules: &PolicyRules,
    files: &'a [ImplFile],
    parsed: &ParsedConfigs,
) -> BTreeMap<scope::Key<'a>, Vec<usize>> {
    let linked = files.iter().enumerate().filter_map(|(i, f)| {
        let fixes = rules
            .benchmarks
            .get(f.benchmark.as_str())
            .is_some_and(|p| !p.config_fixed.get().is_empty());
        let entries = parsed.entries(i).filter(|_| fixes)?;
        (!parsed.vendored(i)
            && !rules.config_log.is_checkpoint(entries)
            && !rules.config_log.declares_open(entries))
        .then_some(i)
    });
    scope::implementations(files, linked)
}

/// POL009 findings over the configs of a check (`parsed` was read from
/// `files`). The caller decides whether the division is closed.
pub fn check(rules: &PolicyRules, files: &[ImplFile], parsed: &ParsedConfigs) -> Vec<Finding> {
    let mut out = Vec::new();
    // Scripts by their `#!` line though their name says INI.
    let shell_text: BTreeSet<&str> = (0..files.len())
        .filter(|&i| parsed.shell_text(i))
        .map(|i| files[i].file.path.as_str())
        .collect();
    for ((bm, _), linked) in implementations(rules, files, parsed) {
        let Some(policy) = rules.benchmarks.get(bm) else {
            continue;
        };
        let all: Vec<(&ImplFile, &[Entry])> = linked
            .iter()
            .filter_map(|&i| parsed.entries(i).map(|e| (&files[i], e)))
            .collect();
        let kept = overridden_defaults_out(&all);
        let mine: Vec<(&ImplFile, &[Entry])> = all
            .iter()
            .zip(&kept)
            .map(|((f, _), e)| (*f, e.as_slice()))
            .collect();
        let sets = config_log::settings(rules, &mine, interpolate::expand_assigned);
        // The primary configs that compose each config group.
        let mut composers: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (f, e) in &mine {
            for g in super::hydra_package::composed_groups(e) {
                composers.entry(g).or_default().insert(f.file.path.clone());
            }
        }
        let pins = policy.config_fixed.get();
        for (key, pinned) in pins {
            let want = &pinned.value;
            // A setting answers to the first of its MLLOG keys the
            // benchmark pins (ResNet pins both LARS' and SGD's end
            // learning rate: END_LEARNING_RATE is one setting).
            let given: Vec<&Set> = sets
                .iter()
                .filter(|(tag, _)| tag.split('|').find(|k| pins.contains_key(*k)) == Some(key))
                .flat_map(|(_, v)| v)
                .collect();
            // Reported where no config the run may compose with it gives
            // the reference value.
            let agrees = |s: &Set| rules.config_log.agrees(&s.value, want);
            let bad = config_log::unanswered_by_precedence(rules, &given, agrees, &composers);
            // What gives the reference, if anything: an option of a
            // config group.
            let option = given.iter().find(|s| agrees(s)).copied();
            let mut reported: BTreeSet<&str> = BTreeSet::new();
            for s in bad {
                if reported.insert(s.path.as_str()) {
                    out.push(finding(rules, bm, key, pinned, s, option));
                }
            }
        }
        out.extend(constrained(
            rules,
            bm,
            policy.config_fixed.constraints(),
            &sets,
            (&mine, &shell_text),
        ));
    }
    crate::finding::sort_findings(&mut out);
    out.dedup();
    out
}

/// The settings that fail a closed pack's check of their key
/// ([`Constraint`]: Mask R-CNN's base learning rate a multiple of 0.02,
/// ResNet's weight decay 0.0001 times a power of two, DeepCAM's scheduler
/// one of two, Llama 3.1 405B's learning rate proportional to the global
/// batch size). A check that reads another key's value (`s.global_batch_size`)
/// takes it from the same config (a setting, or a measure of scale it
/// gives), else from the implementation's configs when they agree on one;
/// without it the check is not tried. A word is tried only when the data
/// knows it as a value (`named_values`), in normal form and as every logged
/// word it means. Tried on shell configs only (the NVIDIA-style scripts a
/// run sources and the scripts that launch it, and a `.cfg` whose `#!`
/// line names a shell): a library's YAML tree
/// (maskrcnn-benchmark's `configs/` for other datasets) holds other
/// recipes' values. Not tried: a value per so many samples (not the logged
/// one), the implementations of open-division systems.
fn constrained(
    rules: &PolicyRules,
    bm: &str,
    constraints: &[Constraint],
    sets: &BTreeMap<String, Vec<Set>>,
    (mine, shell_text): (&[(&ImplFile, &[Entry])], &BTreeSet<&str>),
) -> Vec<Finding> {
    let mut out = Vec::new();
    let shell = |path: &str| {
        let name = path.rsplit('/').next().unwrap_or(path);
        shell_text.contains(path)
            || rules.signals.config_files.format(name) == Some(configs::Format::Shell)
    };
    for (tag, given) in sets {
        // The tag's keys are one setting's alternatives (ResNet logs LARS'
        // or SGD's weight decay): it fails when every check tried fails.
        let of_tag: Vec<&Constraint> = tag
            .split('|')
            .filter_map(|k| constraints.iter().find(|c| c.key == k))
            .collect();
        if of_tag.is_empty() {
            continue;
        }
        for s in given {
            if !s.per_samples.is_empty()
                || !shell(&s.path)
                || rules.config_log.open_division(&s.path)
            {
                continue;
            }
            let tried: Vec<(&Constraint, Tried)> = of_tag
                .iter()
                .filter_map(|c| try_constraint(rules, c, s, sets, mine).map(|t| (*c, t)))
                .collect();
            if tried.iter().any(|(_, t)| matches!(t, Tried::Passes)) {
                continue;
            }
            let Some((c, Tried::Fails(state_vars))) = tried.into_iter().next() else {
                continue;
            };
            let file = s.path.rsplit('/').next().unwrap_or(&s.path);
            let with = if state_vars.is_empty() {
                String::new()
            } else {
                let vars: Vec<String> =
                    state_vars.iter().map(|(k, v)| format!("{k} {v}")).collect();
                format!(" with {}", vars.join(", "))
            };
            out.push(
                Finding::of(
                    code::POL009,
                    &s.path,
                    format!(
                        "{}: {file}:{} sets {} to {}, which the closed rules of {bm} do not allow: they require `{}`{with}",
                        s.display, s.line, c.key, s.value, c.check.source()
                    ),
                )
                .at_line(Some(s.line))
                .with_help(rules.help(code::POL009))
                .with_rule(c.rule.clone()),
            );
        }
    }
    out
}

/// What a [`Constraint`] said of a setting.
enum Tried {
    Passes,
    /// Fails, with the state variables it read.
    Fails(serde_json::Map<String, serde_json::Value>),
}

/// A config value as a number (an integer stays one).
fn number(v: &str) -> Option<serde_json::Value> {
    let v = v.trim().trim_matches(['"', '\'']);
    match v.parse::<i64>() {
        Ok(i) => Some(serde_json::Value::from(i)),
        Err(_) => v
            .parse::<f64>()
            .ok()
            .filter(|f| f.is_finite())
            .map(serde_json::Value::from),
    }
}

/// `c` tried on setting `s`; `None` when it cannot be (a word the data
/// does not know, a state variable no config gives).
fn try_constraint(
    rules: &PolicyRules,
    c: &Constraint,
    s: &Set,
    sets: &BTreeMap<String, Vec<Set>>,
    mine: &[(&ImplFile, &[Entry])],
) -> Option<Tried> {
    // What the value is tried as: a number, or a known word in normal form
    // and every logged word it means.
    let tries: Vec<serde_json::Value> = match number(&s.value) {
        Some(n) => vec![n],
        None => {
            let word = super::signals::normalize(s.value.trim().trim_matches(['"', '\'']));
            // A list of numbers a key's words know (step boundaries
            // where a schedule is named) is tried as written, unless it
            // is a default a run script keeps (`LRSCHED=${LRSCHED:-"30,60,80"}`
            // takes what the config the run sources says).
            let means = match rules.config_log.known_word(&word) {
                Some(m) => m,
                None if !s.default && rules.config_log.known_number_list(&s.value) => Vec::new(),
                None => return None,
            };
            std::iter::once(word.clone())
                .chain(means.iter().map(|m| m.to_string()))
                .map(serde_json::Value::String)
                .collect()
        }
    };
    let mut state_vars = serde_json::Map::new();
    for (var, key) in &c.reads {
        state_vars.insert(var.clone(), state(rules, key, &s.path, sets, mine)?);
    }
    let passes = |v: &serde_json::Value| {
        let ctx = serde_json::json!({"v": {"value": v}, "s": state_vars});
        // An error (a word where the check wants a number) is no finding.
        c.check
            .eval(minijinja::Value::from_serialize(&ctx))
            .map_or(true, |r| r.is_true())
    };
    Some(if tries.iter().any(passes) {
        Tried::Passes
    } else {
        Tried::Fails(state_vars)
    })
}

/// The value MLLOG key `key` has for the config at `path`: a setting of
/// that file, a measure of scale it gives, else the one value the
/// implementation's configs agree on.
fn state(
    rules: &PolicyRules,
    key: &str,
    path: &str,
    sets: &BTreeMap<String, Vec<Set>>,
    mine: &[(&ImplFile, &[Entry])],
) -> Option<serde_json::Value> {
    let given: Vec<&Set> = sets
        .iter()
        .filter(|(tag, _)| tag.split('|').any(|k| k == key))
        .flat_map(|(_, v)| v)
        .filter(|s| s.per_samples.is_empty())
        .collect();
    if let Some(v) = given
        .iter()
        .filter(|s| s.path == path)
        .find_map(|s| number(&s.value))
    {
        return Some(v);
    }
    let entries = mine
        .iter()
        .find(|(f, _)| f.file.path == path)
        .map(|x| x.1)?;
    if let Some(n) = rules.config_log.scale_number(key, entries) {
        return number(&n.to_string());
    }
    let mut all: Vec<f64> = given
        .iter()
        .filter_map(|s| s.value.trim().parse::<f64>().ok())
        .chain(
            mine.iter()
                .filter_map(|(_, e)| rules.config_log.scale_number(key, e)),
        )
        .collect();
    all.sort_by(f64::total_cmp);
    all.dedup();
    match all.as_slice() {
        [one] => number(&one.to_string()),
        _ => None,
    }
}

/// The settings of `group` less the defaults of the variables its configs
/// assign (`${WEIGHT_DECAY:-0.01}` is no value of its own when a config
/// sets `WEIGHT_DECAY=0.0001`).
fn overridden_defaults_out(group: &[(&ImplFile, &[Entry])]) -> Vec<Vec<Entry>> {
    let mut assigned = interpolate::Env::default();
    for (_, e) in group {
        assigned.add_where(e, |x| {
            !configs::is_default(x) || configs::is_assigning_default(x)
        });
    }
    group
        .iter()
        .map(|(_, e)| {
            e.iter()
                .filter(|x| {
                    !(configs::is_default(x)
                        && !configs::is_assigning_default(x)
                        && x.path.last().is_some_and(|k| assigned.assigns(k)))
                })
                .cloned()
                .collect()
        })
        .collect()
}

/// `option`: the setting of an option of a config group that gives the
/// reference value, if one does.
fn finding(
    rules: &PolicyRules,
    bm: &str,
    key: &str,
    pinned: &Pinned,
    s: &Set,
    option: Option<&Set>,
) -> Finding {
    let want = &pinned.value;
    let name = |p: &str| p.rsplit('/').next().unwrap_or(p).to_string();
    let file = name(&s.path);
    let folder = |p: &str| p.rsplit_once('/').map(|(d, _)| d.to_string());
    let groups = &rules.signals.config_files.hydra_groups;
    let is_option = |p: &str| super::hydra_package::group_of(p, groups).is_some();
    let given = match option {
        Some(o) if o.path == s.path => format!(
            "only {} (line {}), another setting of the same file, gives it",
            o.display, o.line
        ),
        Some(o) if !is_option(&o.path) => format!(
            "only {}:{} gives it, and a run may read this config rather than that one, or this one overrides it",
            name(&o.path),
            o.line
        ),
        Some(o) if folder(&o.path) == folder(&s.path) => format!(
            "only {}:{}, another option of its config group, gives it",
            name(&o.path),
            o.line
        ),
        Some(o) => format!(
            "only {}:{}, an option of a Hydra config group, gives it (what \
             composes an option overrides it)",
            name(&o.path),
            o.line
        ),
        None => "no config of the implementation gives it".to_string(),
    };
    Finding::of(
        code::POL009,
        &s.path,
        format!(
            "{}: {file}:{} sets {key} to {}; the reference of {bm} is {want} and {given}",
            s.display, s.line, s.value
        ),
    )
    .at_line(Some(s.line))
    .with_help(rules.help(code::POL009))
    .with_rule(pinned.rule.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rulebook::source::RuleSource;

    /// Every value a round fixes can be found in configs: its MLLOG key has
    /// a config key in `config_log.yaml`.
    #[test]
    fn every_fixed_key_has_a_config_key() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("rules/training");
        let mut versions: Vec<String> = std::fs::read_dir(dir)
            .expect("rules/training")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        versions.sort();
        let mut fixed = 0;
        for v in &versions {
            let Ok(r) = PolicyRules::load(&RuleSource::Embedded, "training", v) else {
                continue;
            };
            for (bm, p) in &r.benchmarks {
                for key in p.fixed.keys() {
                    fixed += 1;
                    assert!(r.config_log.maps(key), "{v} {bm}: {key} has no config key");
                }
                // So does every reference value (`reference:`).
                for (key, pinned) in p.config_fixed.get() {
                    if pinned.rule.contains(".reference.") {
                        assert!(r.config_log.maps(key), "{v} {bm}: {key} has no config key");
                    }
                }
            }
        }
        assert!(fixed >= 4, "{fixed} fixed values");
    }
}
