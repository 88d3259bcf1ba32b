//! The findings of a check as they are made: what the verdicts need of
//! every one is counted at once, waived ones are set aside, and of the
//! rest only what the report lists is kept.
//!
//! A folder of 100,000 broken logs makes about five findings a log; they
//! used to be held, all of them, until the end of the run, to list 100 of
//! each code per folder (505 MB peak at 100,000 logs). Now each (code,
//! folder) group keeps its first [`MAX_FINDINGS_PER_FOLDER`] findings in
//! the report's order and, of the ones past them, only a 64-bit hash each,
//! to say how many different ones were not listed. The report is the same
//! as when everything was kept and capped at the end.

use crate::config::Config;
use crate::finding::{sort_findings, Finding, Severity};
use crate::rulebook::codes::CodeRegistry;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::hash::{Hash, Hasher};

/// Most findings of one code listed for the files of one folder; verdicts
/// are decided before, from all of them. A folder of 100,000 broken logs
/// made 89 MB of text and a 53 MB HTML page.
pub const MAX_FINDINGS_PER_FOLDER: usize = 100;

/// Findings of one code in one folder.
#[derive(Default)]
struct Group {
    /// At most twice the cap between compactions; the first
    /// [`MAX_FINDINGS_PER_FOLDER`] in sorted order after one.
    kept: Vec<Finding>,
    /// Hashes of the ones sorted past the cap.
    past: HashSet<u64>,
}

impl Group {
    fn push(&mut self, f: Finding) {
        self.kept.push(f);
        if self.kept.len() >= 2 * MAX_FINDINGS_PER_FOLDER {
            self.compact();
        }
    }

    /// Sorts (and removes duplicates), keeps the first ones, hashes the rest.
    fn compact(&mut self) {
        sort_findings(&mut self.kept);
        if self.kept.len() > MAX_FINDINGS_PER_FOLDER {
            for f in self.kept.drain(MAX_FINDINGS_PER_FOLDER..) {
                self.past.insert(hash(&f));
            }
        }
    }

    /// The listed findings, and how many different ones are not listed.
    fn finish(mut self) -> (Vec<Finding>, usize) {
        self.compact();
        if self.past.is_empty() {
            return (self.kept, 0);
        }
        // A finding evicted early may have come again and be listed.
        let listed: HashSet<u64> = self.kept.iter().map(hash).collect();
        let more = self.past.iter().filter(|h| !listed.contains(h)).count();
        (self.kept, more)
    }
}

/// A hash of every field: two findings hash alike when they are equal
/// (the duplicates the report drops), and, but for a 64-bit collision,
/// only then.
fn hash(f: &Finding) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    f.code.hash(&mut h);
    f.severity.hash(&mut h);
    f.message.hash(&mut h);
    f.path.hash(&mut h);
    f.line.hash(&mut h);
    f.rule.hash(&mut h);
    f.help.hash(&mut h);
    f.official.hash(&mut h);
    h.finish()
}

/// The folder a finding's file is in (`""` for a bare name).
fn folder_of(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(d, _)| d)
}

/// The findings of one check, gathered as they are made.
pub struct Listed<'a> {
    codes: &'a CodeRegistry,
    config: Option<&'a Config>,
    /// An error the official tools would report too.
    official_fail: bool,
    /// An error, unless only mlaudit checks it and a waiver silences it.
    fail: bool,
    /// `path: message` of each finding the official tools fail on and
    /// mlaudit does not, in the order they came.
    official_only: Vec<String>,
    /// `CODE (title)` of the unwaived errors only mlaudit reports.
    extra_codes: BTreeSet<String>,
    /// Each benchmark folder, with the errors and warnings of the
    /// folder-level findings about it.
    folders: Vec<(String, usize, usize)>,
    /// Which waivers of the config matched a finding.
    used: Vec<bool>,
    waived: Vec<Finding>,
    groups: HashMap<(String, String), Group>,
}

/// What the verdicts need, and the findings the report lists.
pub struct Done {
    pub fail: bool,
    pub official_fail: bool,
    /// Why the two verdicts differ, in one line.
    pub difference: Option<String>,
    /// Errors and warnings of the folder-level findings of each benchmark
    /// folder, in the order given to [`Listed::new`].
    pub folders: Vec<(usize, usize)>,
    pub waived: Vec<Finding>,
    /// Sorted, without duplicates, capped per folder and code with a note
    /// saying how many more there were.
    pub findings: Vec<Finding>,
}

impl<'a> Listed<'a> {
    /// `folders`: the benchmark folders whose findings are counted (see
    /// [`count_folders`](Self::count_folders)).
    pub fn new(
        codes: &'a CodeRegistry,
        config: Option<&'a Config>,
        folders: &[&str],
    ) -> Listed<'a> {
        Listed {
            codes,
            config,
            official_fail: false,
            fail: false,
            official_only: Vec::new(),
            extra_codes: BTreeSet::new(),
            folders: folders.iter().map(|p| (p.to_string(), 0, 0)).collect(),
            used: vec![false; config.map_or(0, |c| c.waivers.len())],
            waived: Vec::new(),
            groups: HashMap::new(),
        }
    }

    /// Counts the folder-level findings added from now on for `folders`.
    pub fn count_folders(&mut self, folders: &[&str]) {
        self.folders = folders.iter().map(|p| (p.to_string(), 0, 0)).collect();
    }

    /// A new, empty gathering for the same check (to gather on another
    /// thread and [`merge`](Self::merge) after).
    pub fn fork(&self) -> Listed<'a> {
        let folders: Vec<&str> = self.folders.iter().map(|(p, _, _)| p.as_str()).collect();
        Listed::new(self.codes, self.config, &folders)
    }

    /// A finding of the package rules, the policy checks or the
    /// statistics: it counts for the verdicts and its folder.
    pub fn add(&mut self, f: Finding) {
        self.judge(&f);
        if self.codes.is_official_fail(&f.code) {
            self.official_fail = true;
            self.official_only
                .push(format!("{}: {}", f.path, f.message));
        }
        for (path, errors, warnings) in &mut self.folders {
            let covers = f.path == *path
                || f.path
                    .strip_prefix(path.as_str())
                    .is_some_and(|rest| rest.starts_with('/'));
            if covers {
                match f.severity {
                    Severity::Error => *errors += 1,
                    Severity::Warning => *warnings += 1,
                    _ => {}
                }
            }
        }
        self.keep(f);
    }

    /// A log's own compliance finding: it reaches the verdicts through the
    /// package rules (PKG005), unless the log was given on its own (`loose`).
    pub fn add_log(&mut self, f: Finding, loose: bool) {
        if loose {
            self.judge(&f);
        }
        self.keep(f);
    }

    fn waived_by(&self, f: &Finding) -> bool {
        self.config
            .is_some_and(|c| c.waivers.iter().any(|w| w.matches(f)))
    }

    /// The verdicts: an error fails the official verdict unless only
    /// mlaudit checks it; mlaudit's verdict, unless only mlaudit checks it
    /// and a waiver of the config silences it.
    fn judge(&mut self, f: &Finding) {
        if f.severity != Severity::Error {
            return;
        }
        let extra = self.codes.is_extra(&f.code);
        if !extra {
            self.official_fail = true;
            self.fail = true;
        } else if !self.waived_by(f) {
            self.fail = true;
            let title = self.codes.get(&f.code).map_or("", |d| d.title.as_str());
            self.extra_codes.insert(format!("{} ({title})", f.code));
        }
    }

    /// Sets a waived finding aside, lists the others.
    fn keep(&mut self, f: Finding) {
        if let Some(cfg) = self.config {
            if let Some(i) = cfg.waivers.iter().position(|w| w.matches(&f)) {
                self.used[i] = true;
                self.waived.push(f);
                return;
            }
        }
        self.list(f);
    }

    fn list(&mut self, f: Finding) {
        let key = (f.code.clone(), folder_of(&f.path).to_string());
        self.groups.entry(key).or_default().push(f);
    }

    /// Adds what `other` gathered after what this one did.
    pub fn merge(&mut self, other: Listed<'a>) {
        self.official_fail |= other.official_fail;
        self.fail |= other.fail;
        self.official_only.extend(other.official_only);
        self.extra_codes.extend(other.extra_codes);
        for (mine, theirs) in self.folders.iter_mut().zip(other.folders) {
            mine.1 += theirs.1;
            mine.2 += theirs.2;
        }
        for (mine, theirs) in self.used.iter_mut().zip(other.used) {
            *mine |= theirs;
        }
        self.waived.extend(other.waived);
        for (key, g) in other.groups {
            let group = self.groups.entry(key).or_default();
            group.past.extend(g.past);
            for f in g.kept {
                group.push(f);
            }
        }
    }

    /// The verdicts and the findings to list. `config_path`: the config as
    /// shown, where an unused waiver's CFG001 warning is.
    pub fn finish(mut self, config_path: &str) -> Done {
        let official_only = std::mem::take(&mut self.official_only);
        let difference = if !self.fail && self.official_fail && !official_only.is_empty() {
            Some(official_only.join("; "))
        } else if self.fail && !self.official_fail {
            let codes: Vec<String> = std::mem::take(&mut self.extra_codes).into_iter().collect();
            Some(format!(
                "mlaudit fails on {}, which the official tools do not check",
                codes.join(", ")
            ))
        } else {
            None
        };
        if let Some(cfg) = self.config {
            for f in crate::config::unused_waivers(cfg, &self.used, config_path) {
                self.list(f);
            }
        }
        let mut waived = std::mem::take(&mut self.waived);
        sort_findings(&mut waived);
        let mut findings = Vec::new();
        let mut notes = Vec::new();
        for ((code, dir), g) in std::mem::take(&mut self.groups) {
            let (kept, more) = g.finish();
            findings.extend(kept);
            if more > 0 {
                notes.push(Finding::new(
                    &code,
                    Severity::Note,
                    &dir,
                    format!(
                        "{more} more {code} findings in the files of this folder are not listed (the first {MAX_FINDINGS_PER_FOLDER} are)"
                    ),
                ));
            }
        }
        findings.extend(notes);
        sort_findings(&mut findings);
        Done {
            fail: self.fail,
            official_fail: self.official_fail,
            difference,
            folders: self.folders.iter().map(|(_, e, w)| (*e, *w)).collect(),
            waived,
            findings,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rulebook::source::RuleSource;

    /// What the report listed when every finding was kept to the end:
    /// sorted, duplicates dropped, the first ones of each group, and how
    /// many more.
    fn reference(mut all: Vec<Finding>) -> (Vec<Finding>, usize) {
        sort_findings(&mut all);
        let more = all.len().saturating_sub(MAX_FINDINGS_PER_FOLDER);
        all.truncate(MAX_FINDINGS_PER_FOLDER);
        (all, more)
    }

    #[test]
    fn a_group_lists_what_keeping_everything_listed() {
        // 700 findings, 350 distinct, in an order that evicts some early
        // and brings their duplicates back after.
        let make = |i: usize| {
            Finding::new(
                "LOG002",
                Severity::Error,
                &format!("d/r_{:03}.txt", i % 350),
                "x",
            )
        };
        let order: Vec<usize> = (0..700).map(|i| (i * 337) % 700).collect();
        let all: Vec<Finding> = order.iter().map(|&i| make(i)).collect();
        let mut g = Group::default();
        for f in all.clone() {
            g.push(f);
        }
        assert_eq!(g.finish(), reference(all));
    }

    #[test]
    fn merged_gatherings_list_and_count_as_one() {
        let codes = CodeRegistry::load(&RuleSource::Embedded).expect("codes");
        let make = |i: usize| {
            Finding::new(
                "STA001",
                Severity::Error,
                &format!("d/r_{i:03}.txt"),
                "copy",
            )
        };
        let mut one = Listed::new(&codes, None, &["d"]);
        let mut other = one.fork();
        for i in 0..300 {
            one.add(make(i));
            other.add(make(i + 150));
        }
        one.merge(other);
        let done = one.finish("");
        assert!(done.fail);
        assert_eq!(done.folders, vec![(600, 0)]);
        let listed = done
            .findings
            .iter()
            .filter(|f| f.severity == Severity::Error);
        assert_eq!(listed.count(), MAX_FINDINGS_PER_FOLDER);
        assert!(
            done.findings
                .iter()
                .any(|f| f.message.starts_with("350 more STA001 findings")),
            "{:?}",
            done.findings.iter().map(|f| &f.message).collect::<Vec<_>>()
        );
    }
}
