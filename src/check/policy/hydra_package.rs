//! Where a Hydra config group file's keys sit in the config the run
//! composes (its *package*).
//!
//! A file of a config group (`conf/optim/fused_adam.yaml`, chosen by a
//! defaults list's `- optim@model.optim: fused_adam`) holds its keys
//! without the group's name: NeMo's optimizer files say `name: fused_adam`
//! at their top level, which the run reads as `model.optim.name`. Read
//! alone, `name` is no optimizer key. Hydra puts a group file's keys under
//! the group's name unless the file says otherwise in a `# @package`
//! header (`_global_`: at the top level; `_group_`: the group's name; any
//! other: that dotted path). The folders read as groups are data
//! (`config_files.hydra_groups` in `rules/policy/signals.yaml`); a header
//! counts in any folder.

use super::configs::{Entry, EntryKind};

/// Lines at the top of a file looked at for a `# @package` header (Hydra
/// reads it from the file's first comment lines).
const HEADER_LINES: usize = 10;

/// Longest package path read from a header, in parts: every key of the
/// file gets them, so a hostile header of thousands of parts would
/// multiply the file's size; a real one has a few.
const MAX_PARTS: usize = 16;

/// The key path a YAML config at `path` (its folders separated by `/`)
/// puts its keys under, or `None` for the top level. `groups`: folder names
/// read as config groups (lower-cased).
pub fn package(path: &str, text: &[u8], groups: &[String]) -> Option<Vec<String>> {
    let folder = path
        .rsplit_once('/')
        .map(|(dir, _)| dir.rsplit_once('/').map_or(dir, |(_, d)| d))
        .unwrap_or("");
    match header(text) {
        Some(Header::Global) => None,
        Some(Header::At(p)) => Some(p),
        Some(Header::Group) => (!folder.is_empty()).then(|| vec![folder.to_string()]),
        None => groups
            .iter()
            .any(|g| g.eq_ignore_ascii_case(folder))
            .then(|| vec![folder.to_string()]),
    }
}

/// `entries` with `package` before each key path (see [`package`]).
pub fn under(mut entries: Vec<Entry>, package: Option<&[String]>) -> Vec<Entry> {
    if let Some(p) = package {
        for e in &mut entries {
            e.path.splice(0..0, p.iter().cloned());
        }
    }
    entries
}

/// Whether what the config at path `a` sets stands for what the config at
/// `b` sets (a base config's value that another file overrides, or the
/// reverse): always within one file, never when `a` is an option of a
/// Hydra config group (a file in a folder `groups` names). A run composes
/// one option of a group, so one option does not stand for another; and it
/// composes the option under the primary config, whose own values win
/// (Hydra's `_self_` comes last in a defaults list), under the command
/// line's overrides too, so an option does not stand for them either.
pub fn stands_for(a: &str, b: &str, groups: &[String]) -> bool {
    a == b || !group_option(a, groups)
}

/// How a config's values stand in a run, for a value every run must have
/// (a fixed hyperparameter): a command line or shell config (`shell`)
/// overrides the YAML, JSON and INI files the program reads, whose
/// primary configs override an option of a Hydra config group.
pub fn precedence(path: &str, shell: bool, groups: &[String]) -> u8 {
    if shell {
        3
    } else if group_option(path, groups) {
        1
    } else {
        2
    }
}

/// Whether the config at `path` is an option of a Hydra config group: a
/// file in a folder `groups` names.
fn group_option(path: &str, groups: &[String]) -> bool {
    group_of(path, groups).is_some()
}

/// The config group the config at `path` is an option of (its folder's
/// name, lower case), if its folder is one `groups` names.
pub fn group_of(path: &str, groups: &[String]) -> Option<String> {
    let (dir, _) = path.rsplit_once('/')?;
    let folder = dir.rsplit_once('/').map_or(dir, |(_, d)| d);
    groups
        .iter()
        .any(|g| g.eq_ignore_ascii_case(folder))
        .then(|| folder.to_ascii_lowercase())
}

/// The config groups a primary config's defaults list composes
/// (`- optim@model.optim: fused_adam`, `- override /optim: x`,
/// `- model/optim: x` give `optim`), lower case.
pub fn composed_groups(entries: &[Entry]) -> Vec<String> {
    entries
        .iter()
        .filter(|e| {
            e.kind == (EntryKind::Key { header: false })
                && e.path.len() == 2
                && e.path[0] == "defaults"
        })
        .filter_map(|e| {
            let k = e.path[1].trim();
            let k = k.strip_prefix("override ").unwrap_or(k).trim();
            let k = k.split('@').next().unwrap_or(k).trim_matches('/');
            let g = k.rsplit('/').next().unwrap_or(k);
            (!g.is_empty()).then(|| g.to_ascii_lowercase())
        })
        .collect()
}

enum Header {
    Global,
    Group,
    At(Vec<String>),
}

/// The `# @package X` line among the file's first comment lines (only
/// those are looked at: the file's bytes are not all read as text).
fn header(text: &[u8]) -> Option<Header> {
    for line in text.split(|&b| b == b'\n').take(HEADER_LINES) {
        let line = line.trim_ascii();
        if line.is_empty() {
            continue;
        }
        let Some(comment) = line.strip_prefix(b"#") else {
            // Hydra reads the header only before the first key.
            return None;
        };
        let Some(rest) = comment.trim_ascii_start().strip_prefix(b"@package") else {
            continue;
        };
        let rest = String::from_utf8_lossy(rest);
        let p = rest.trim();
        return match p {
            "" => None,
            "_global_" => Some(Header::Global),
            "_group_" => Some(Header::Group),
            _ => {
                // `_global_.model.optim` is `model.optim` from the top.
                let p = p.strip_prefix("_global_.").unwrap_or(p);
                let parts: Vec<String> = p
                    .split('.')
                    .filter(|s| !s.is_empty())
                    .take(MAX_PARTS + 1)
                    .map(str::to_string)
                    .collect();
                (!parts.is_empty() && parts.len() <= MAX_PARTS).then_some(Header::At(parts))
            }
        };
    }
    None
}

#[cfg(test)]
mod tests {
    use super::package;

    fn groups() -> Vec<String> {
        vec!["optim".into(), "optimizer".into()]
    }

    #[test]
    fn a_group_folder_puts_keys_under_its_name() {
        let p = package("X/conf/optim/lion.yaml", b"name: lion\n", &groups());
        assert_eq!(p, Some(vec!["optim".to_string()]));
        // Compared without case; the folder's own spelling is the key.
        let p = package("X/conf/Optimizer/a.yaml", b"name: a\n", &groups());
        assert_eq!(p, Some(vec!["Optimizer".to_string()]));
        // Another folder: the top level.
        assert_eq!(
            package("X/conf/model/a.yaml", b"name: a\n", &groups()),
            None
        );
        assert_eq!(package("a.yaml", b"name: a\n", &groups()), None);
    }

    #[test]
    fn a_group_option_stands_for_its_own_file_only() {
        let g = groups();
        // Another option of the group, the primary config, a run script.
        assert!(!super::stands_for("c/optim/a.yaml", "c/optim/b.yaml", &g));
        assert!(!super::stands_for("c/optim/a.yaml", "c/train.yaml", &g));
        assert!(!super::stands_for("c/optim/a.yaml", "config_X.sh", &g));
        assert!(super::stands_for("c/optim/a.yaml", "c/optim/a.yaml", &g));
        // A file that is no group option stands for any other.
        assert!(super::stands_for("c/train.yaml", "c/optim/a.yaml", &g));
        assert!(super::stands_for("c/conf/a.yaml", "c/conf/b.yaml", &g));
        assert!(super::stands_for("config_common.sh", "config_X.sh", &g));
    }

    #[test]
    fn a_package_header_says_where() {
        let g = groups();
        let global = b"# Copyright\n\n# @package _global_\nname: lion\n";
        assert_eq!(package("X/conf/optim/a.yaml", global, &g), None);
        let at = b"# @package model.optim\nname: lion\n";
        assert_eq!(
            package("X/conf/other/a.yaml", at, &g),
            Some(vec!["model".to_string(), "optim".to_string()])
        );
        let from_top = b"# @package _global_.model.optim\nname: lion\n";
        assert_eq!(
            package("X/conf/a.yaml", from_top, &g),
            Some(vec!["model".to_string(), "optim".to_string()])
        );
        let group = b"# @package _group_\nname: lion\n";
        assert_eq!(
            package("X/conf/sched/a.yaml", group, &g),
            Some(vec!["sched".to_string()])
        );
        // A package of more parts than any real one is not read.
        let long = format!("# @package {}b\nname: lion\n", "a.".repeat(100));
        assert_eq!(package("X/conf/other/a.yaml", long.as_bytes(), &g), None);
        // After the first key a comment is no header.
        let late = b"name: lion\n# @package _global_\n";
        assert_eq!(
            package("X/conf/optim/a.yaml", late, &g),
            Some(vec!["optim".to_string()])
        );
    }
}
