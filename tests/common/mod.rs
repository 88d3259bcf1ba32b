//! Helpers the corpus tests share: where the shared corpus is, how its
//! expected TSV files read, and a fingerprint to prove it was not modified.
#![allow(dead_code)]

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

/// `../shared/corpus` beside the checkout, or `None` after saying the test
/// is skipped.
pub fn corpus() -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus");
    if p.join("expected/package.tsv").is_file() {
        Some(p)
    } else {
        println!("skipped: ../shared/corpus not found");
        eprintln!("skipped: ../shared/corpus not found");
        None
    }
}

/// Rows of a TSV file as maps from column name to value (missing trailing
/// cells read as empty).
pub fn tsv(path: &Path) -> Vec<HashMap<String, String>> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut lines = text.lines();
    let head: Vec<&str> = lines.next().unwrap_or_default().split('\t').collect();
    lines
        .filter(|l| !l.is_empty())
        .map(|l| {
            head.iter()
                .map(|h| h.to_string())
                .zip(
                    l.split('\t')
                        .map(str::to_string)
                        .chain(std::iter::repeat(String::new())),
                )
                .collect()
        })
        .collect()
}

/// The ruleset of a corpus round folder: `v5.0` → `5.0.0`.
pub fn ruleset(round: &str) -> String {
    format!("{}.0", round.trim_start_matches('v'))
}

/// Path, length and modification time of every file below `root`.
pub fn fingerprint(root: &Path) -> BTreeMap<PathBuf, (u64, Option<std::time::SystemTime>)> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let Ok(m) = e.path().symlink_metadata() else {
                continue;
            };
            if m.is_dir() {
                stack.push(e.path());
            } else {
                out.insert(e.path(), (m.len(), m.modified().ok()));
            }
        }
    }
    out
}

/// `a` is within `rel` of `b`, relatively.
pub fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * b.abs()
}
