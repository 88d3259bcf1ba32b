//! Update-consistency signals: names and values that point at stale
//! gradients, asynchronous or parameter-server updates, local SGD, eventual
//! consistency or gradient compression. The patterns are data
//! (`rules/policy/signals.yaml`); this module normalises names and runs them.

use super::forward::{Finder, Matcher};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::collections::BTreeSet;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SignalsFile {
    off_values: Vec<String>,
    negation_prefixes: Vec<String>,
    enable_keys: Vec<String>,
    /// Keys whose values are prose (`description`, `help`): never settings.
    #[serde(default)]
    prose_keys: Vec<String>,
    /// Sections whose keys name loggers, handlers and formats (Python
    /// logging's dictConfig): never settings of the run.
    #[serde(default)]
    logging_sections: Vec<String>,
    /// Keys that choose a section's technique (`type`, `method`): one set
    /// to none switches its section off.
    #[serde(default)]
    selector_keys: Vec<String>,
    allowed: Vec<AllowedFile>,
    families: Vec<FamilyFile>,
    config_files: ConfigFiles,
    /// The end of a config key path that names the optimizer (normal form).
    pub optimizer_key: String,
    /// Folder of the framework files, relative to the rules root.
    pub frameworks: String,
    /// The file of config keys and the MLLOG keys runs log them under
    /// (`config_log.rs`), relative to the rules root.
    pub config_log: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct AllowedFile {
    pattern: String,
    #[allow(dead_code)]
    why: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FamilyFile {
    name: String,
    code: String,
    title: String,
    patterns: Vec<String>,
}

/// Which implementation files are scanned.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFiles {
    pub extensions: Vec<String>,
    pub names: Vec<String>,
    pub max_bytes: u64,
    /// Folder names of vendored framework trees (compared lower-cased).
    #[serde(default)]
    pub vendored: Vec<String>,
    /// File names that are never configs although their extension says so
    /// (package manager lock files), compared lower-cased (lower-cased as
    /// they are read); `*` stands for any run of characters.
    #[serde(default, deserialize_with = "lower_case_names")]
    pub skip_names: Vec<String>,
    /// How often words occur in configs (percent of config files), for
    /// the prefilter to look for the rarest word of each pattern.
    #[serde(default)]
    pub word_frequency: BTreeMap<String, f64>,
    /// Endings of config templates (`config.yaml.j2`): such a file is read
    /// as what the rest of its name says it renders to.
    #[serde(default, deserialize_with = "lower_case_names")]
    pub template_suffixes: Vec<String>,
    /// Names of an implementation's own run scripts (compared lower-cased;
    /// `*` stands for any run of characters): a folder holding one is the
    /// implementation's, whatever its name (see
    /// [`super::vendored_files`]).
    #[serde(default, deserialize_with = "lower_case_names")]
    pub implementation_markers: Vec<String>,
    /// Folder names read as Hydra config groups (compared without case):
    /// a YAML file in one puts its keys under the folder's name (see
    /// [`super::hydra_package`]).
    #[serde(default, deserialize_with = "lower_case_names")]
    pub hydra_groups: Vec<String>,
    /// Interpreters (a `#!` line's program, or what `env` runs) of shell
    /// scripts whose name has no ending (`run_multinode`): such a file is
    /// read as shell when its first line names one.
    #[serde(default)]
    pub shebang_shells: Vec<String>,
}

fn lower_case_names<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    let names: Vec<String> = serde::Deserialize::deserialize(d)?;
    Ok(names.iter().map(|n| n.to_ascii_lowercase()).collect())
}

impl ConfigFiles {
    /// Whether a file of this name, not a config by its name, is one when
    /// its first line says it is a shell script ([`Self::shebang_shells`]):
    /// a name without an ending.
    pub fn may_be_script(&self, name: &str) -> bool {
        !self.shebang_shells.is_empty() && !name.contains('.')
    }

    /// Whether `bytes` open with a `#!` line whose program is a shell of
    /// [`Self::shebang_shells`] (`#!/bin/bash`, `#!/usr/bin/env bash`).
    pub fn is_shell_script(&self, bytes: &[u8]) -> bool {
        let Some(rest) = bytes.strip_prefix(b"#!") else {
            return false;
        };
        let line = &rest[..memchr::memchr(b'\n', rest).unwrap_or(rest.len())];
        let line = String::from_utf8_lossy(line);
        let mut words = line.split_whitespace();
        let Some(program) = words.next() else {
            return false;
        };
        let mut name = program.rsplit('/').next().unwrap_or(program);
        if name == "env" {
            // `env -S bash -e`: the first word that is no option.
            name = words.find(|w| !w.starts_with('-')).unwrap_or("");
        }
        self.shebang_shells.iter().any(|s| s == name)
    }

    /// The format a file of this name is read in: by its name or ending,
    /// else, for a template, by the name it renders to; `None`: not a
    /// config.
    pub fn format(&self, name: &str) -> Option<super::configs::Format> {
        use super::configs::format_of;
        if let Some(f) = format_of(name, &self.extensions, &self.names) {
            return Some(f);
        }
        let (stem, ext) = name.rsplit_once('.')?;
        self.template_suffixes
            .iter()
            .any(|s| s.eq_ignore_ascii_case(ext))
            .then(|| format_of(stem, &self.extensions, &self.names))
            .flatten()
    }

    /// Whether a file of this name is never read (`skip_names`; asked of
    /// every implementation file).
    pub fn skipped(&self, name: &str) -> bool {
        let name = name.to_ascii_lowercase();
        self.skip_names.iter().any(|p| wildcard(p, &name))
    }

    /// Whether a file of this name is one of an implementation's own run
    /// scripts ([`ConfigFiles::implementation_markers`]).
    pub fn marks_implementation(&self, name: &str) -> bool {
        let name = name.to_ascii_lowercase();
        self.implementation_markers
            .iter()
            .any(|p| wildcard(p, &name))
    }
}

/// Whether `name` matches `pattern`, where `*` stands for any run of
/// characters (possibly none) and everything else for itself.
pub(super) fn wildcard(pattern: &str, name: &str) -> bool {
    let mut parts = pattern.split('*');
    let Some(first) = parts.next() else {
        return name.is_empty();
    };
    let Some(mut rest) = name.strip_prefix(first) else {
        return false;
    };
    let Some(last) = parts.next_back() else {
        // No `*`: the whole name.
        return rest.is_empty();
    };
    for part in parts {
        match rest.find(part) {
            Some(i) => rest = &rest[i + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

/// One family of signals, with its code.
#[derive(Debug)]
pub struct Family {
    pub name: String,
    pub code: String,
    pub title: String,
    /// Its word patterns, as written (for `rules explain`).
    pub patterns: Vec<String>,
}

/// What a name matched.
#[derive(Debug, Clone, PartialEq)]
pub struct SignalMatch {
    /// Index into [`SignalMatcher::families`].
    pub family: usize,
    /// The matched words of the normalised name.
    pub word: String,
    /// Byte range of the match in the normalised name (without the `_` around it).
    pub start: usize,
    pub end: usize,
}

#[derive(Debug)]
pub struct SignalMatcher {
    pub families: Vec<Family>,
    /// Every family pattern, for the text prefilter.
    pub(crate) patterns: Vec<String>,
    /// Every family pattern: most names match none, and one pass of this
    /// tells so before the allowed neighbours are stripped.
    any: Matcher,
    /// Each family's patterns as one pattern, in family order: the
    /// leftmost match, ties to the earlier family.
    by_family: Finder,
    allowed: Option<Finder>,
    off_values: BTreeSet<String>,
    negation_prefixes: Vec<String>,
    enable_keys: BTreeSet<String>,
    prose_keys: BTreeSet<String>,
    logging_sections: BTreeSet<String>,
    selector_keys: BTreeSet<String>,
    pub config_files: ConfigFiles,
}

/// `(?:^|_)(P1|P2|...)(?:_|$)`: the patterns as whole words, group 1 the
/// words matched.
fn word_pattern(patterns: &[String]) -> String {
    let alts: Vec<String> = patterns.iter().map(|p| format!("(?:{p})")).collect();
    format!("(?:^|_)({})(?:_|$)", alts.join("|"))
}

/// The normal form names are matched in: camelCase split into words,
/// lower case, every run of other characters one `_`, no `_` at the ends.
/// `PowerSGD` → `power_sgd`, `--stale-gradients` → `stale_gradients`,
/// `HTTPServer` → `http_server`.
pub fn normalize(s: &str) -> String {
    let mut out = Vec::new();
    super::prefilter::normalize_into(s.as_bytes(), &mut out);
    let end = out.iter().rposition(|c| *c != b'_').map_or(0, |e| e + 1);
    out.truncate(end);
    let start = out.iter().position(|c| *c != b'_').unwrap_or(out.len());
    out.drain(..start);
    // Only ASCII letters, digits and `_` were written.
    String::from_utf8(out).unwrap_or_default()
}

impl SignalMatcher {
    pub fn new(file: SignalsFile) -> Result<SignalMatcher, String> {
        let all: Vec<String> = file
            .families
            .iter()
            .flat_map(|f| f.patterns.iter().cloned())
            .collect();
        let mut families = Vec::new();
        let mut family_patterns = Vec::new();
        for f in file.families {
            if f.patterns.is_empty() {
                return Err(format!("family {}: no patterns", f.name));
            }
            family_patterns.push(word_pattern(&f.patterns));
            families.push(Family {
                name: f.name,
                code: f.code,
                title: f.title,
                patterns: f.patterns,
            });
        }
        let by_family = Finder::new(&family_patterns).map_err(|e| {
            // Name the family whose pattern is broken.
            families
                .iter()
                .zip(&family_patterns)
                .find_map(|(f, p)| {
                    Finder::new(std::slice::from_ref(p))
                        .err()
                        .map(|e| format!("family {}: {e}", f.name))
                })
                .unwrap_or(e)
        })?;
        let any =
            Matcher::new(&[word_pattern(&all)], false).map_err(|e| format!("families: {e}"))?;
        let allowed = if file.allowed.is_empty() {
            None
        } else {
            let pats: Vec<String> = file.allowed.into_iter().map(|a| a.pattern).collect();
            Some(Finder::new(&[word_pattern(&pats)]).map_err(|e| format!("allowed: {e}"))?)
        };
        if file.config_files.max_bytes == 0 {
            return Err("config_files.max_bytes must be at least 1".into());
        }
        Ok(SignalMatcher {
            families,
            patterns: all,
            any,
            allowed,
            by_family,
            off_values: file
                .off_values
                .iter()
                .map(|v| v.trim().to_lowercase())
                .collect(),
            negation_prefixes: file
                .negation_prefixes
                .iter()
                .map(|p| normalize(p))
                .collect(),
            enable_keys: file.enable_keys.iter().map(|k| normalize(k)).collect(),
            prose_keys: file.prose_keys.iter().map(|k| normalize(k)).collect(),
            logging_sections: file.logging_sections.iter().map(|k| normalize(k)).collect(),
            selector_keys: file.selector_keys.iter().map(|k| normalize(k)).collect(),
            config_files: file.config_files,
        })
    }

    /// The codes of the families, in order.
    pub fn codes(&self) -> impl Iterator<Item = &str> {
        self.families.iter().map(|f| f.code.as_str())
    }

    /// Removes the allowed neighbours from a normalised name (each becomes
    /// one `_`, so the words around them stay apart).
    fn strip_allowed(&self, norm: &str) -> String {
        let Some(allowed) = &self.allowed else {
            return norm.to_string();
        };
        let mut cur = norm.to_string();
        // Adjacent allowed words share a '_': repeat until nothing changes.
        for _ in 0..8 {
            let next = replace_all(allowed, &cur, "_");
            if next == cur {
                break;
            }
            cur = next;
        }
        cur
    }

    /// The first family (in file order) whose patterns match `norm`, a name
    /// already in normal form, once allowed neighbours are removed: the
    /// leftmost match wins, ties go to the earlier family.
    pub fn match_normalized(&self, norm: &str) -> Option<SignalMatch> {
        if norm.is_empty() || !self.any.is_match(norm.as_bytes()) {
            return None;
        }
        let stripped = self.strip_allowed(norm);
        let found = self.by_family.leftmost(stripped.as_bytes())?;
        let word = stripped.get(found.start..found.end)?.to_string();
        let mut best = SignalMatch {
            family: found.pattern,
            word,
            start: found.start,
            end: found.end,
        };
        // Offsets refer to `stripped`; map them back only when unchanged.
        if stripped != norm {
            if let Some(pos) = norm.find(&best.word) {
                best.start = pos;
                best.end = pos + best.word.len();
            }
        }
        Some(best)
    }

    pub fn match_name(&self, name: &str) -> Option<SignalMatch> {
        self.match_normalized(&normalize(name))
    }

    /// Whether `value` turns a feature off (`0`, `false`, `none`, ...).
    pub fn is_off(&self, value: &str) -> bool {
        let v = unquote(value.trim()).trim().to_lowercase();
        self.off_values.contains(&v)
    }

    /// Whether a normalised name starts with a negation (`no_`, `disable_`).
    pub fn is_negated(&self, norm: &str) -> bool {
        self.negation_prefixes.iter().any(|p| {
            norm.len() > p.len() && norm.starts_with(p.as_str()) && norm[p.len()..].starts_with('_')
        })
    }

    /// Whether a normalised key is an on/off switch of its section (`enabled`).
    pub fn is_enable_key(&self, norm: &str) -> bool {
        self.enable_keys.contains(norm)
    }

    /// Whether a normalised key chooses its section's technique (`type`,
    /// `method`): set to a word that is off (`none`), the section is off.
    pub fn is_selector_key(&self, norm: &str) -> bool {
        self.selector_keys.contains(norm)
    }

    /// Whether a normalised key holds prose (`description`, `help`): what
    /// its value says is read by people, not by the run.
    pub fn is_prose_key(&self, norm: &str) -> bool {
        self.prose_keys.contains(norm)
    }

    /// Whether a normalised key is a logging section (`loggers`): the keys
    /// under it name modules whose log level is set.
    pub fn is_logging_section(&self, norm: &str) -> bool {
        self.logging_sections.contains(norm)
    }
}

/// Every match of `finder` in `text` (leftmost-first, not overlapping)
/// replaced by `with`.
fn replace_all(finder: &Finder, text: &str, with: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for m in finder.find_all(text.as_bytes()) {
        out.push_str(text.get(last..m.start).unwrap_or_default());
        out.push_str(with);
        last = m.end;
    }
    out.push_str(text.get(last..).unwrap_or_default());
    out
}

/// `"x"` or `'x'` → `x`.
pub fn unquote(s: &str) -> &str {
    let b = s.as_bytes();
    if b.len() >= 2 && (b[0] == b'"' || b[0] == b'\'') && b[b.len() - 1] == b[0] {
        &s[1..s.len() - 1]
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::normalize;

    #[test]
    fn skip_names_with_wildcards() {
        use super::wildcard;
        assert!(wildcard(
            "golden_values*.json",
            "golden_values_dev_dgx_a100.json"
        ));
        assert!(wildcard("golden_values*.json", "golden_values.json"));
        assert!(!wildcard("golden_values*.json", "golden_values.yaml"));
        assert!(!wildcard("golden_values*.json", "my_golden_values.json"));
        assert!(wildcard("package-lock.json", "package-lock.json"));
        assert!(!wildcard("package-lock.json", "package-lock.json5"));
        assert!(wildcard("a*b*c", "a_x_b_y_c"));
        assert!(!wildcard("a*b*c", "a_c_b"));
        // The ends may not overlap: `ab` is not `ab*b`.
        assert!(!wildcard("ab*b", "ab"));
        assert!(wildcard("*", ""));
        // Names and patterns are compared lower-cased.
        let cf: super::ConfigFiles = serde_yaml::from_str(
            "{extensions: [json], names: [], max_bytes: 1, skip_names: [Package-Lock.JSON, 'Golden*.json']}",
        )
        .unwrap();
        assert!(cf.skipped("package-lock.json"));
        assert!(cf.skipped("PACKAGE-LOCK.json"));
        assert!(cf.skipped("golden_values.JSON"));
        assert!(!cf.skipped("config.json"));
    }

    #[test]
    fn normal_form() {
        assert_eq!(normalize("PowerSGD"), "power_sgd");
        assert_eq!(normalize("staleGradients"), "stale_gradients");
        assert_eq!(normalize("STALE_GRADIENTS"), "stale_gradients");
        assert_eq!(normalize("--stale-gradients"), "stale_gradients");
        assert_eq!(normalize("HTTPServer"), "http_server");
        assert_eq!(normalize("1bitAdam"), "1bit_adam");
        assert_eq!(
            normalize("model.optim.async_update"),
            "model_optim_async_update"
        );
        assert_eq!(normalize(""), "");
    }
}
