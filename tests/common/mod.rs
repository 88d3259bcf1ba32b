//! Helpers the corpus tests share: where the shared corpus is, how its
//! expected TSV files read, and a fingerprint to prove it was not modified.
#![allow(dead_code)]

pub mod bounded;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

/// `../shared/corpus` beside the checkout, or `None` after saying, on the
/// terminal past the harness's capture, that the test is skipped. With `CI`
/// set a missing corpus fails the test: CI always has it beside the checkout.
pub fn corpus() -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus");
    if p.join("expected/package.tsv").is_file() {
        return Some(p);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "../shared/corpus not found beside the checkout ({}), and CI is set: the corpus tests cannot run",
        p.display()
    );
    say("skipped: ../shared/corpus not found, corpus test not run");
    None
}

/// A line on stderr that the test harness does not capture: `eprintln!` is
/// swallowed for passing tests, a direct write to the stream is not.
pub fn say(line: &str) {
    use std::io::Write;
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{line}");
}

/// The (usage, ruleset) of a corpus round folder: `v5.0` → training
/// `5.0.0`, `hpc-v3.0` → hpc `3.0.0`.
pub fn round_ruleset(round: &str) -> (&'static str, String) {
    match round.strip_prefix("hpc-v") {
        Some(v) => ("hpc", format!("{v}.0")),
        None => ("training", format!("{}.0", round.trim_start_matches('v'))),
    }
}

/// Which rounds of the corpus mlaudit has rules for, asked of the built-in
/// rules themselves, and a per-round count of the rows a test had to leave
/// unchecked for want of rules. `report` prints that count, so a gap stays
/// visible in every run; once a round's rules exist its rows are checked
/// with no change to the tests.
pub struct Coverage {
    test: &'static str,
    available: Vec<(String, String)>,
    checked: BTreeMap<String, usize>,
    unchecked: BTreeMap<String, usize>,
}

impl Coverage {
    pub fn new(test: &'static str) -> Coverage {
        Coverage {
            test,
            available: mlaudit::check::rules::available_rulesets(
                &mlaudit::rulebook::source::RuleSource::Embedded,
            ),
            checked: BTreeMap::new(),
            unchecked: BTreeMap::new(),
        }
    }

    /// Whether mlaudit has rules for `round`; counts the row either way.
    pub fn covers(&mut self, round: &str) -> bool {
        let (usage, version) = round_ruleset(round);
        let ok = self
            .available
            .iter()
            .any(|(u, v)| u == usage && *v == version);
        let counts = if ok {
            &mut self.checked
        } else {
            &mut self.unchecked
        };
        *counts.entry(round.to_string()).or_default() += 1;
        ok
    }

    /// Rows checked, over all rounds.
    pub fn checked(&self) -> usize {
        self.checked.values().sum()
    }

    /// Prints, past the capture, what was checked and, per round, what was
    /// not and why.
    pub fn report(&self, what: &str) {
        let rounds: Vec<String> = self
            .checked
            .iter()
            .map(|(r, n)| format!("{r} {n}"))
            .collect();
        say(&format!(
            "{}: {} {what} checked ({})",
            self.test,
            self.checked(),
            rounds.join(", ")
        ));
        for (round, n) in &self.unchecked {
            let (usage, version) = round_ruleset(round);
            say(&format!(
                "{}: {round}: {n} {what} not checked: no rules for {usage} {version}",
                self.test
            ));
        }
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

/// The ruleset of a corpus round folder: `v5.0` → `5.0.0`, `hpc-v3.0` →
/// `3.0.0` (see [`round_ruleset`] for the usage).
pub fn ruleset(round: &str) -> String {
    round_ruleset(round).1
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

/// Runs git in `dir`, untouched by the user's or the system's git config
/// and by a surrounding repository's environment; panics with git's
/// message when it fails.
pub fn git(dir: &Path, args: &[&str]) {
    let out = std::process::Command::new("git")
        .current_dir(dir)
        .args(args)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE")
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Copies the folder `from` to `to`, recursively (a corpus package into a
/// temporary folder, before a test plants files in the copy).
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap_or_else(|e| panic!("{}: {e}", to.display()));
    for e in std::fs::read_dir(from).unwrap_or_else(|e| panic!("{}: {e}", from.display())) {
        let e = e.unwrap_or_else(|e| panic!("{e}"));
        let target = to.join(e.file_name());
        if e.path().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), &target).unwrap_or_else(|e| panic!("{e}"));
        }
    }
}
