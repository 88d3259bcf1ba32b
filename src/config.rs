//! The project config `.mlaudit.toml` at the root of a repository or
//! submission package:
//!
//! ```toml
//! ruleset = "5.0.0"        # optional defaults; command-line flags win
//! usage = "training"
//! format = "text"
//!
//! [[waiver]]
//! code = "POL014"                                  # required
//! path = "benchmarks/bert/implementations/**"      # optional: glob or prefix
//! line = 12                                        # optional
//! reason = "PowerSGD hook is defined but never registered (review 2025-05-02)"  # required
//! ```
//!
//! A waiver moves the findings it matches out of the report into a
//! "waived" list; a waiver that matches nothing is a CFG001 warning. A
//! waiver without a reason, or any other mistake, is a [`ConfigError`]
//! naming the file and line.

use crate::finding::code;
use crate::finding::Finding;
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// The file name looked for.
pub const FILE_NAME: &str = ".mlaudit.toml";

#[derive(Debug, Clone)]
pub struct Waiver {
    pub code: String,
    /// Glob (`*`, `**`, `?`) or path prefix, compared with the finding's path.
    pub path: Option<String>,
    pub line: Option<u64>,
    pub reason: String,
    /// Line of the `[[waiver]]` entry in the config file.
    pub config_line: u64,
    /// `path` compiled once when the config is read (not once per finding).
    glob: Option<Glob>,
}

impl PartialEq for Waiver {
    fn eq(&self, o: &Waiver) -> bool {
        (
            &self.code,
            &self.path,
            self.line,
            &self.reason,
            self.config_line,
        ) == (&o.code, &o.path, o.line, &o.reason, o.config_line)
    }
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Config {
    /// Where it was read from.
    pub path: PathBuf,
    pub ruleset: Option<String>,
    pub usage: Option<String>,
    pub format: Option<String>,
    pub waivers: Vec<Waiver>,
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{path}: cannot read: {message}")]
    Read { path: String, message: String },
    #[error("{path}:{line}: {message}")]
    Invalid {
        path: String,
        line: u64,
        message: String,
    },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    #[serde(default)]
    ruleset: Option<String>,
    #[serde(default)]
    usage: Option<String>,
    #[serde(default)]
    format: Option<String>,
    #[serde(default)]
    waiver: Vec<toml::Spanned<RawWaiver>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawWaiver {
    code: String,
    #[serde(default)]
    path: Option<String>,
    #[serde(default)]
    line: Option<u64>,
    #[serde(default)]
    reason: Option<String>,
}

/// Line numbers of byte offsets, by binary search over the line starts
/// (`line_of` for every waiver of a big config was quadratic).
struct Lines(Vec<usize>);

impl Lines {
    fn new(text: &str) -> Lines {
        Lines(memchr::memchr_iter(b'\n', text.as_bytes()).collect())
    }

    fn line(&self, offset: usize) -> u64 {
        self.0.partition_point(|&nl| nl < offset) as u64 + 1
    }
}

fn line_of(text: &str, offset: usize) -> u64 {
    let end = offset.min(text.len());
    text.as_bytes()[..end]
        .iter()
        .filter(|&&b| b == b'\n')
        .count() as u64
        + 1
}

impl Config {
    /// Reads `dir/.mlaudit.toml`; `Ok(None)` when there is none.
    pub fn load(dir: &Path) -> Result<Option<Config>, ConfigError> {
        let path = dir.join(FILE_NAME);
        if !path.exists() {
            return Ok(None);
        }
        let display = path.display().to_string();
        // A regular file of bounded size: the config may be a link to
        // /dev/zero or a FIFO committed to the checked repository.
        let text = crate::safe_io::read_regular_string(&path, crate::safe_io::MAX_CONFIG_BYTES)
            .map_err(|e| ConfigError::Read {
                path: display.clone(),
                message: e.to_string(),
            })?;
        Config::parse(&text, &path).map(Some)
    }

    /// The project config: `.mlaudit.toml` in `start` or the nearest folder
    /// above it, not looking above the root of the git repository (the
    /// first folder that has a `.git`). `Ok(None)` when there is none.
    pub fn find(start: &Path) -> Result<Option<Config>, ConfigError> {
        let start = start.canonicalize().unwrap_or_else(|_| start.to_path_buf());
        for dir in start.ancestors() {
            if let Some(c) = Config::load(dir)? {
                return Ok(Some(c));
            }
            if dir.join(".git").exists() {
                break;
            }
        }
        Ok(None)
    }

    /// Parses the text of a config file; `path` names it in errors.
    pub fn parse(text: &str, path: &Path) -> Result<Config, ConfigError> {
        let display = path.display().to_string();
        let invalid = |line: u64, message: String| ConfigError::Invalid {
            path: display.clone(),
            line,
            message,
        };
        let raw: RawConfig = toml::from_str(text).map_err(|e| {
            let line = e.span().map(|s| line_of(text, s.start)).unwrap_or(1);
            invalid(line, e.message().to_string())
        })?;
        let mut waivers = Vec::new();
        let lines = Lines::new(text);
        for w in raw.waiver {
            let line = lines.line(w.span().start);
            let w = w.into_inner();
            let reason = w.reason.unwrap_or_default();
            if reason.trim().is_empty() {
                return Err(invalid(
                    line,
                    format!(
                        "waiver for {} has no reason: say why the finding is accepted (reason = \"...\")",
                        w.code
                    ),
                ));
            }
            if w.code.trim().is_empty() {
                return Err(invalid(line, "waiver has an empty code".into()));
            }
            if let Some(p) = &w.path {
                if p.trim().is_empty() {
                    return Err(invalid(
                        line,
                        "waiver path is empty; leave it out to match every path".into(),
                    ));
                }
                glob_matcher(p).map_err(|e| invalid(line, format!("waiver path '{p}': {e}")))?;
            }
            let glob = w.path.as_deref().and_then(|p| compiled_glob(clean(p)));
            waivers.push(Waiver {
                code: w.code,
                path: w.path,
                line: w.line,
                reason,
                config_line: line,
                glob,
            });
        }
        Ok(Config {
            path: path.to_path_buf(),
            ruleset: raw.ruleset,
            usage: raw.usage,
            format: raw.format,
            waivers,
        })
    }
}

/// A waiver glob compiled by `globset`: `*` and `?` stay inside one path
/// component, `**/`, `/**/` and `/**` span any run of folders. `[`, `]`,
/// `{`, `}` and `\` are escaped, so they are literal as they always were
/// in a waiver path (no classes, no alternatives).
fn glob_matcher(glob: &str) -> Result<globset::GlobMatcher, globset::Error> {
    let mut escaped = String::with_capacity(glob.len() + 4);
    for c in glob.chars() {
        if matches!(c, '[' | ']' | '{' | '}' | '\\') {
            escaped.push('\\');
        }
        escaped.push(c);
    }
    Ok(globset::GlobBuilder::new(&escaped)
        .literal_separator(true)
        .backslash_escape(true)
        .build()?
        .compile_matcher())
}

/// The compiled glob of a waiver path; `None` for a path without glob
/// characters, which is compared as text.
fn compiled_glob(pattern: &str) -> Option<Glob> {
    let wild = pattern.find(['*', '?'])?;
    Some(Glob {
        matcher: glob_matcher(pattern).ok()?,
        prefix: pattern[..wild].to_string(),
    })
}

/// A compiled waiver glob and the text every match starts with (a cheap
/// test before the glob: thousands of waivers meet every finding).
#[derive(Debug, Clone)]
struct Glob {
    matcher: globset::GlobMatcher,
    prefix: String,
}

fn clean(p: &str) -> &str {
    let mut p = p;
    while let Some(rest) = p.strip_prefix("./") {
        p = rest;
    }
    p.trim_end_matches('/')
}

/// Whether a waiver path selects `path`: equal, a folder prefix of it, or a
/// glob matching it, compared with the whole path and with every tail that
/// starts after a `/` (so `benchmarks/x` matches `../pkg/benchmarks/x`
/// whatever root the user typed).
pub fn path_matches(pattern: &str, path: &str) -> bool {
    let pattern = clean(pattern);
    matches_with(pattern, compiled_glob(pattern).as_ref(), path)
}

fn matches_with(pattern: &str, glob: Option<&Glob>, path: &str) -> bool {
    let path = clean(path);
    std::iter::once(path)
        .chain(path.match_indices('/').map(|(i, _)| &path[i + 1..]))
        .any(|t| {
            t == pattern
                || t.strip_prefix(pattern)
                    .is_some_and(|rest| rest.starts_with('/'))
                || glob.is_some_and(|g| t.starts_with(g.prefix.as_str()) && g.matcher.is_match(t))
        })
}

impl Waiver {
    pub fn matches(&self, f: &Finding) -> bool {
        f.code == self.code
            && self.line.is_none_or(|l| f.line == Some(l))
            && self
                .path
                .as_deref()
                .is_none_or(|p| matches_with(clean(p), self.glob.as_ref(), &f.path))
    }
}

/// Splits `findings` into the ones kept and the ones a waiver of `cfg`
/// matches. A waiver that matches nothing adds a CFG001 warning to the
/// kept findings, at its line of `config_path`. Both lists stay sorted.
pub fn apply_waivers(
    findings: Vec<Finding>,
    cfg: &Config,
    config_path: &str,
) -> (Vec<Finding>, Vec<Finding>) {
    let mut used = vec![false; cfg.waivers.len()];
    let mut kept = Vec::new();
    let mut waived = Vec::new();
    for f in findings {
        match cfg.waivers.iter().position(|w| w.matches(&f)) {
            Some(i) => {
                used[i] = true;
                waived.push(f);
            }
            None => kept.push(f),
        }
    }
    kept.extend(unused_waivers(cfg, &used, config_path));
    crate::finding::sort_findings(&mut kept);
    crate::finding::sort_findings(&mut waived);
    (kept, waived)
}

/// A CFG001 warning, at its line of `config_path`, for each waiver of `cfg`
/// whose `used` flag is not set (it matched no finding).
pub fn unused_waivers(cfg: &Config, used: &[bool], config_path: &str) -> Vec<Finding> {
    let mut out = Vec::new();
    for (w, &used) in cfg.waivers.iter().zip(used) {
        if !used {
            let mut what = w.code.clone();
            if let Some(p) = &w.path {
                what.push_str(&format!(" at {p}"));
            }
            if let Some(l) = w.line {
                what.push_str(&format!(" line {l}"));
            }
            out.push(
                Finding::of(
                    code::CFG001,
                    config_path,
                    format!("waiver for {what} matches no finding (reason given: {})", w.reason),
                )
                .at_line(Some(w.config_line))
                .with_help(
                    "remove the waiver if the finding is gone, or fix its path or line so that it still covers the reviewed exception",
                ),
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::finding::Severity;

    #[test]
    fn thousands_of_waivers_on_hundreds_of_findings_are_quick() {
        let text: String = (0..3000)
            .map(|i| {
                format!(
                    "[[waiver]]\ncode = \"X001\"\npath = \"pkg/results/sys{i}/*.txt\"\nreason = \"r\"\n"
                )
            })
            .collect();
        let cfg = Config::parse(&text, Path::new(".mlaudit.toml")).unwrap();
        let findings: Vec<Finding> = (0..400)
            .map(|i| {
                Finding::new(
                    "X001",
                    Severity::Error,
                    &format!("pkg/results/sys{}/result_0.txt", i * 7),
                    "m".to_string(),
                )
            })
            .collect();
        let start = std::time::Instant::now();
        let (kept, waived) = apply_waivers(findings, &cfg, ".mlaudit.toml");
        assert_eq!(waived.len(), 400);
        assert!(kept.iter().all(|f| f.code == code::CFG001));
        // Compiling a glob per finding took about a minute here.
        assert!(
            start.elapsed() < std::time::Duration::from_secs(10),
            "{:?}",
            start.elapsed()
        );
    }

    #[test]
    fn globs_and_prefixes() {
        assert!(path_matches(
            "benchmarks/bert",
            "../pkg/benchmarks/bert/implementations/a.sh"
        ));
        assert!(path_matches(
            "benchmarks/**/*.sh",
            "pkg/benchmarks/bert/x/a.sh"
        ));
        assert!(path_matches("benchmarks/*/a.sh", "benchmarks/bert/a.sh"));
        assert!(!path_matches("benchmarks/*/a.sh", "benchmarks/bert/x/a.sh"));
        assert!(!path_matches("benchmarks/ber", "benchmarks/bert/a.sh"));
        assert!(path_matches("./results/", "results/sys/bert/result_0.txt"));
        assert!(path_matches(
            "**/result_?.txt",
            "pkg/results/s/b/result_0.txt"
        ));
        assert!(path_matches("results/**", "pkg/results/s/b/result_0.txt"));
        // Brackets and braces are literal, as they were with the
        // hand-written matcher.
        assert!(path_matches("b/[x]{y}*.sh", "b/[x]{y}run.sh"));
        assert!(!path_matches("b/[x]*.sh", "b/xrun.sh"));
    }
}
