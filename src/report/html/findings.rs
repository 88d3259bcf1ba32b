//! The findings section of the HTML page, shaped for a reviewer: findings
//! grouped by code (the help text once, in the glossary), and within a
//! code by folder, one line per finding; an index by folder with the
//! counts per code; and for each benchmark folder the links to its
//! findings and why its non-compliant runs failed.

use crate::finding::{Finding, Severity};
use crate::report::BenchmarkReport;
use crate::rulebook::codes::CodeRegistry;
use serde::Serialize;
use std::collections::BTreeMap;

/// Findings listed per code; the rest are counted (the JSON report has
/// them all).
pub const MAX_PER_CODE: usize = 400;

/// A path cut at its slashes, so the page can offer a line break after
/// each `/` (and nowhere inside a name).
pub fn segments(path: &str) -> Vec<String> {
    path.split('/').map(str::to_string).collect()
}

/// All the findings of one code.
#[derive(Debug, Serialize)]
pub struct CodeGroup {
    pub code: String,
    /// `findings-<code>`: the group's own anchor.
    pub id: String,
    /// The glossary entry's anchor.
    pub code_anchor: String,
    pub severity: &'static str,
    pub title: String,
    pub count: usize,
    /// The message, when every finding of the code says the same thing
    /// about a folder (shown once, then the folders in one paragraph).
    pub common: Option<String>,
    /// The rule that reports them, when one rule reports them all (then
    /// not repeated per finding).
    pub rule: String,
    pub folders: Vec<FolderGroup>,
    /// Findings beyond [`MAX_PER_CODE`].
    pub more: usize,
}

/// The findings of one code in one folder.
#[derive(Debug, Serialize)]
pub struct FolderGroup {
    /// `findings-<code>-<n>`: what a folder card links to.
    pub id: String,
    pub path: Vec<String>,
    /// The folder card's anchor, when the folder has one.
    pub card: Option<String>,
    pub count: usize,
    /// Some of them are not in the `--baseline` report.
    pub new: bool,
    /// The rule that reports them, when one rule reports them all in this
    /// folder and not all of the code's.
    pub rule: String,
    pub items: Vec<Item>,
}

/// One finding, on one line.
#[derive(Debug, Serialize)]
pub struct Item {
    /// The path below the folder (`result_3.txt:572`), or empty for the
    /// folder itself.
    pub location: String,
    pub message: String,
    pub rule: String,
    /// Not in the `--baseline` report.
    pub new: bool,
}

/// One line of the index by folder.
#[derive(Debug, Serialize)]
pub struct FolderIndex {
    pub path: Vec<String>,
    pub card: Option<String>,
    pub errors: usize,
    pub warnings: usize,
    pub notes: usize,
    pub codes: Vec<CodeLink>,
}

/// A code and how often it was found somewhere, linking to those findings.
#[derive(Debug, Clone, Serialize)]
pub struct CodeLink {
    pub code: String,
    pub severity: &'static str,
    pub count: usize,
    pub href: String,
}

/// Why a run failed: its error findings, each in one line.
#[derive(Debug, Clone, Serialize)]
pub struct Why {
    pub code: String,
    pub href: String,
    pub text: String,
}

/// Everything the findings section and the folder cards need.
#[derive(Debug, Default, Serialize)]
pub struct FindingsView {
    pub groups: Vec<CodeGroup>,
    pub by_folder: Vec<FolderIndex>,
    /// Per benchmark folder (by index in the report): its code links.
    #[serde(skip)]
    pub folder_links: BTreeMap<usize, Vec<CodeLink>>,
    /// Per log path: the error findings that made it non-compliant.
    #[serde(skip)]
    pub why: BTreeMap<String, Vec<Why>>,
}

fn severity_rank(s: Severity) -> u8 {
    match s {
        Severity::Error => 0,
        Severity::Warning => 1,
        Severity::Note => 2,
    }
}

/// The folder a finding belongs to: the benchmark folder that covers it,
/// else the folder of a file, else the path itself.
fn folder_of(f: &Finding, benchmarks: &[BenchmarkReport]) -> (String, Option<usize>) {
    if let Some(i) = benchmarks.iter().position(|b| b.covers(&f.path)) {
        return (benchmarks[i].path.clone(), Some(i));
    }
    let last = f.path.rsplit('/').next().unwrap_or("");
    match f.path.rsplit_once('/') {
        Some((dir, _)) if last.contains('.') => (dir.to_string(), None),
        _ => (f.path.clone(), None),
    }
}

fn location(f: &Finding, folder: &str) -> String {
    let below = f
        .path
        .strip_prefix(folder)
        .map(|r| r.trim_start_matches('/'))
        .unwrap_or(&f.path);
    match (below.is_empty(), f.line) {
        (true, Some(l)) => format!("line {l}"),
        (true, None) => String::new(),
        (false, Some(l)) => format!("{below}:{l}"),
        (false, None) => below.to_string(),
    }
}

/// The findings of one folder, and the index of its benchmark folder.
type Placed<'a> = (Option<usize>, Vec<&'a Finding>);

/// The rule of every item, taken off the items; empty (and the items
/// left alone) when they differ.
fn common_rule(items: &mut [Item]) -> String {
    let Some(rule) = items.first().map(|i| i.rule.clone()) else {
        return String::new();
    };
    if items.iter().all(|i| i.rule == rule) {
        for i in items.iter_mut() {
            i.rule.clear();
        }
        rule
    } else {
        String::new()
    }
}

/// Groups `findings` (sorted by path, line, code) for the page.
pub fn build(
    findings: &[Finding],
    benchmarks: &[BenchmarkReport],
    codes: &CodeRegistry,
    card_anchor: &dyn Fn(usize) -> String,
    code_anchor: &dyn Fn(&str) -> String,
    is_new: &dyn Fn(&Finding) -> bool,
) -> FindingsView {
    // code -> folder -> findings, in severity then code order.
    let mut by_code: BTreeMap<(u8, &str), BTreeMap<String, Placed<'_>>> = BTreeMap::new();
    for f in findings {
        let (folder, bench) = folder_of(f, benchmarks);
        by_code
            .entry((severity_rank(f.severity), f.code.as_str()))
            .or_default()
            .entry(folder)
            .or_insert_with(|| (bench, Vec::new()))
            .1
            .push(f);
    }
    let mut view = FindingsView::default();
    // folder -> (card, counts by severity, links)
    let mut index: BTreeMap<String, FolderIndex> = BTreeMap::new();
    for ((_, code), folders) in &by_code {
        let doc = codes.get(code);
        let id = format!("findings-{}", code_anchor(code).trim_start_matches("code-"));
        let count: usize = folders.values().map(|(_, v)| v.len()).sum();
        let severity = folders
            .values()
            .flat_map(|(_, v)| v.first())
            .map(|f| f.severity.as_str())
            .next()
            .unwrap_or("note");
        let mut shown = 0usize;
        let mut groups = Vec::new();
        for (n, (folder, (bench, list))) in folders.iter().enumerate() {
            let gid = format!("{id}-{n}");
            let card = bench.map(card_anchor);
            let link = CodeLink {
                code: code.to_string(),
                severity,
                count: list.len(),
                href: format!("#{gid}"),
            };
            let entry = index.entry(folder.clone()).or_insert_with(|| FolderIndex {
                path: segments(folder),
                card: card.clone(),
                errors: 0,
                warnings: 0,
                notes: 0,
                codes: Vec::new(),
            });
            for f in list {
                match f.severity {
                    Severity::Error => entry.errors += 1,
                    Severity::Warning => entry.warnings += 1,
                    Severity::Note => entry.notes += 1,
                }
                if f.severity == Severity::Error {
                    view.why.entry(f.path.clone()).or_default().push(Why {
                        code: f.code.clone(),
                        href: format!("#{gid}"),
                        text: match f.line {
                            Some(l) => format!("line {l}: {}", f.message),
                            None => f.message.clone(),
                        },
                    });
                }
            }
            entry.codes.push(link.clone());
            if let Some(b) = bench {
                view.folder_links.entry(*b).or_default().push(link);
            }
            let room = MAX_PER_CODE.saturating_sub(shown);
            let items: Vec<Item> = list
                .iter()
                .take(room)
                .map(|f| Item {
                    location: location(f, folder),
                    message: f.message.clone(),
                    rule: f.rule.clone().unwrap_or_default(),
                    new: is_new(f),
                })
                .collect();
            shown += items.len();
            let mut items = items;
            let rule = common_rule(&mut items);
            if !items.is_empty() {
                groups.push(FolderGroup {
                    id: gid,
                    path: segments(folder),
                    card,
                    count: list.len(),
                    new: items.iter().any(|i| i.new),
                    rule,
                    items,
                });
            }
        }
        let first = groups.first().and_then(|g| g.items.first());
        let common = first
            .filter(|f| {
                groups
                    .iter()
                    .flat_map(|g| &g.items)
                    .all(|i| i.message == f.message && i.location.is_empty())
            })
            .map(|f| f.message.clone());
        let rule = groups.first().map(|g| g.rule.clone()).unwrap_or_default();
        let rule = if groups.iter().all(|g| g.rule == rule) {
            for g in &mut groups {
                g.rule.clear();
            }
            rule
        } else {
            String::new()
        };
        view.groups.push(CodeGroup {
            common,
            rule,
            code: code.to_string(),
            id,
            code_anchor: code_anchor(code),
            severity,
            title: doc.map(|d| d.title.clone()).unwrap_or_default(),
            count,
            folders: groups,
            more: count.saturating_sub(shown),
        });
    }
    view.by_folder = index.into_values().collect();
    view
}
