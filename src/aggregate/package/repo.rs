//! Repository checks of a package, as the official `repo_checker` makes
//! them (`rules/repo.yaml`): names git dislikes (REPO001), files over the
//! size limit (REPO002), broken symbolic links (REPO003).
//!
//! The walk ([`Listing`], shared with discovery) reads names and metadata
//! only, never contents, does not follow links, and stops after
//! `max_entries` entries. Findings come back sorted
//! by path; nothing is printed.

use crate::discover::listing::Listing;
use crate::finding::{code, Finding, Severity};
use crate::rulebook::source::{load_yaml, DataError, RuleSource};
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

/// `rules/repo.yaml`.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RepoRules {
    pub max_file_mib: u64,
    pub bad_name_prefixes: Vec<String>,
    pub bad_name_chars: Vec<String>,
    pub official_rulesets: Vec<String>,
    pub max_entries: usize,
    pub max_listed: usize,
}

impl RepoRules {
    pub fn load(source: &RuleSource) -> Result<RepoRules, DataError> {
        let rel = "repo.yaml";
        load_yaml(source, rel)?.ok_or_else(|| DataError::new(source, rel, "not found"))
    }

    /// The severity of a REPO finding for `version`: an error where the
    /// official repo_checker runs, a warning where it refuses the ruleset.
    pub fn severity(&self, version: &str) -> Severity {
        if self.official_rulesets.iter().any(|v| v == version) {
            Severity::Error
        } else {
            Severity::Warning
        }
    }

    fn bad_name(&self, name: &str) -> bool {
        self.bad_name_prefixes
            .iter()
            .any(|p| !p.is_empty() && name.starts_with(p.as_str()))
            || self
                .bad_name_chars
                .iter()
                .any(|c| !c.is_empty() && name.contains(c.as_str()))
    }
}

/// Checks the package at `root` (shown as `shown`) for ruleset `version`.
pub fn check_repo(rules: &RepoRules, root: &Path, shown: &str, version: &str) -> Vec<Finding> {
    let listing = Listing::read(root, rules.max_entries);
    check_repo_listed(rules, &listing, root, shown, version)
}

/// [`check_repo`] over a listing already read (the one discovery reads
/// too): `listing` must come from `Listing::read(root, rules.max_entries)`.
pub fn check_repo_listed(
    rules: &RepoRules,
    listing: &Listing,
    root: &Path,
    shown: &str,
    version: &str,
) -> Vec<Finding> {
    let severity = rules.severity(version);
    let limit = rules.max_file_mib.saturating_mul(1024 * 1024);
    let mut hits: BTreeMap<&'static str, Vec<(String, String)>> = BTreeMap::new();
    let mut stack: Vec<(PathBuf, String)> = vec![(root.to_path_buf(), shown.to_string())];
    let mut seen = 0usize;
    let mut truncated = false;
    while let Some((dir, dir_shown)) = stack.pop() {
        let Some(Ok(entries)) = listing.folder(&dir) else {
            continue;
        };
        for entry in entries.iter().flatten() {
            seen += 1;
            if seen > rules.max_entries {
                truncated = true;
                break;
            }
            // Paths are made only for what needs one (a folder to walk, a
            // link to follow, a finding): most entries are files that
            // pass.
            let name = entry.name.to_string_lossy();
            let entry_shown = || join(&dir_shown, &name);
            // The entry's own type (not following a link), from the
            // listing itself; its metadata (looked up from its open folder)
            // only for the size of what is neither a folder nor a link.
            let Ok(kind) = &entry.kind else {
                continue;
            };
            let meta = match &entry.meta {
                None => None,
                Some(Ok(m)) => Some(m),
                Some(Err(_)) => continue,
            };
            if rules.bad_name(&name) {
                hits.entry(code::REPO001.id)
                    .or_default()
                    .push((entry_shown(), format!("'{name}'")));
            }
            if kind.is_symlink() {
                let path = dir.join(&entry.name);
                // Relative targets resolve from the link's folder, as in a
                // clone (the official tool resolves them from its working
                // directory).
                if fs::metadata(&path).is_err() {
                    let target = fs::read_link(&path)
                        .map(|t| t.display().to_string())
                        .unwrap_or_default();
                    hits.entry(code::REPO003.id).or_default().push((
                        entry_shown(),
                        format!("points at '{target}', which does not exist"),
                    ));
                }
            } else if kind.is_dir() {
                stack.push((dir.join(&entry.name), entry_shown()));
            } else if let Some(meta) = meta.filter(|m| m.len() > limit) {
                hits.entry(code::REPO002.id).or_default().push((
                    entry_shown(),
                    format!(
                        "{} bytes, over the limit of {limit} bytes ({} MiB)",
                        meta.len(),
                        rules.max_file_mib
                    ),
                ));
            }
        }
        if truncated {
            break;
        }
    }
    let mut findings = Vec::new();
    for (id, mut list) in hits {
        list.sort();
        let total = list.len();
        for (path, what) in list.into_iter().take(rules.max_listed) {
            let message = if id == code::REPO001.id {
                format!("name {what} starts with '.' or contains a space; git and the official repo_checker reject it")
            } else {
                what
            };
            findings.push(Finding::new(id, severity, &path, message));
        }
        if total > rules.max_listed {
            findings.push(Finding::new(
                id,
                severity,
                shown,
                format!(
                    "{} more such entries (only the first {} are listed)",
                    total - rules.max_listed,
                    rules.max_listed
                ),
            ));
        }
    }
    if truncated {
        findings.push(Finding::new(
            code::REPO001.id,
            Severity::Warning,
            shown,
            format!(
                "repository checks stopped after {} entries; the rest of the package was not looked at",
                rules.max_entries
            ),
        ));
    }
    findings
}

fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() || dir == "." {
        name.to_string()
    } else if dir.ends_with('/') {
        format!("{dir}{name}")
    } else {
        format!("{dir}/{name}")
    }
}
