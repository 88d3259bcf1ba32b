//! A quick look at a whole config text before it is parsed: vendored
//! framework trees hold thousands of configs, and almost none mention
//! anything the policy data looks for. The word patterns (signal families,
//! framework settings' keys, values and triggers, optimizer keys) are
//! matched in normal form (camelCase split, lower case, every other run of
//! characters one `_`, the form names and values are matched in). Words
//! every match must hold are looked for in the raw bytes first (see
//! [`super::anchors`]); only the text around one found is put in normal
//! form and tried with the patterns that word anchors. No match: no
//! setting of the file can match, so it is not parsed. The test is
//! conservative by construction: a name or value is a run of the text, so
//! its normal form is a run of the text's normal form.

use super::anchors::{Analyses, Anchors};
use super::forward::Matcher;
use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

/// A set of word patterns tried on text, its search built the first time
/// it is used (a `check` with no implementation config never pays for it)
/// and each pattern's regex the first time a word anchoring it is found.
/// Used twice: on a config's whole text before it is parsed, and on each
/// setting (key path and value, in normal form) before the framework data
/// is tried.
#[derive(Debug)]
pub struct Prefilter {
    base: Part,
    /// Only the `own` patterns: a file outside vendored trees may match
    /// either.
    own: Part,
}

/// Patterns with their anchors and regexes. A regex that cannot be built
/// lets everything through: the prefilter may only save work, never lose
/// a finding.
#[derive(Debug)]
struct Part {
    patterns: Vec<String>,
    /// How often words occur in configs (percent of files).
    frequency: BTreeMap<String, f64>,
    /// Shared with the other prefilters of the same rules.
    analyses: Arc<Analyses>,
    anchors: OnceLock<Anchors>,
    /// Each pattern's regex (`(?:^|_)(?:p)(?:_|$)`), built on first use.
    regexes: Vec<OnceLock<Option<Matcher>>>,
    /// The patterns without anchors, in one regex, tried on the whole text.
    unanchored: OnceLock<Option<Matcher>>,
}

impl Part {
    fn new(pats: &[String], frequency: &BTreeMap<String, f64>, analyses: &Arc<Analyses>) -> Part {
        Part {
            patterns: pats.to_vec(),
            frequency: frequency.clone(),
            analyses: Arc::clone(analyses),
            anchors: OnceLock::new(),
            regexes: pats.iter().map(|_| OnceLock::new()).collect(),
            unanchored: OnceLock::new(),
        }
    }

    fn anchors(&self) -> &Anchors {
        self.anchors
            .get_or_init(|| Anchors::new(&self.patterns, &self.frequency, &self.analyses))
    }

    /// Whether `text` may match; `normal`: it is in normal form already.
    fn may_match(&self, text: &[u8], normal: bool) -> bool {
        if self.patterns.is_empty() {
            return false;
        }
        let a = self.anchors();
        let anchored = a.any_span(text, normal, |span, pats| {
            with_normal(span, normal, |norm| {
                pats.iter().any(|&p| self.tried(a, p as usize, norm))
            })
        });
        match anchored {
            Some(true) => true,
            Some(false) => {
                !a.unanchored.is_empty()
                    && with_normal(text, normal, |norm| {
                        self.unanchored
                            .get_or_init(|| {
                                let pats: Vec<String> = a
                                    .unanchored
                                    .iter()
                                    .filter_map(|&i| self.patterns.get(i).cloned())
                                    .collect();
                                build(&words(&pats)).ok()
                            })
                            .as_ref()
                            .is_none_or(|r| r.is_match(norm))
                    })
            }
            // No search: every pattern on the whole text.
            None => with_normal(text, normal, |norm| {
                (0..self.patterns.len()).any(|p| self.tried(a, p, norm))
            }),
        }
    }

    /// Whether pattern `i` matches `norm`: by its literals when they are
    /// the whole pattern, else by its regex.
    fn tried(&self, a: &Anchors, i: usize, norm: &[u8]) -> bool {
        a.exact_match(i, norm)
            .unwrap_or_else(|| self.pattern_matches(i, norm))
    }

    fn pattern_matches(&self, i: usize, norm: &[u8]) -> bool {
        let (Some(cell), Some(p)) = (self.regexes.get(i), self.patterns.get(i)) else {
            return true;
        };
        cell.get_or_init(|| build(&words(std::slice::from_ref(p))).ok())
            .as_ref()
            .is_none_or(|r| r.is_match(norm))
    }
}

/// Calls `f` with `text` in normal form (put there in a buffer kept per
/// thread, unless `normal` says it is already).
fn with_normal(text: &[u8], normal: bool, f: impl FnOnce(&[u8]) -> bool) -> bool {
    if normal {
        return f(text);
    }
    thread_local! {
        static BUF: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    BUF.with(|buf| {
        let mut norm = buf.borrow_mut();
        normalize_into(text, &mut norm);
        let hit = f(&norm);
        if norm.capacity() > 1 << 20 {
            // Do not keep a large file's buffer for the rest of the run.
            *norm = Vec::new();
        }
        hit
    })
}

/// The text it runs on is normalised to ASCII `[a-z0-9_]`, and only
/// `is_match` is asked: a forward lazy DFA without capture groups
/// ([`super::forward::Matcher`]). Every alternative starts at a `_`, the
/// most common byte of the text: a literal prefilter would cost more to
/// build than it saves.
fn build(p: &str) -> Result<Matcher, String> {
    Matcher::new(&[p.to_string()], false)
}

fn words(pats: &[String]) -> String {
    let alts: Vec<String> = pats.iter().map(|p| format!("(?:{p})")).collect();
    format!("(?:^|_)(?:{})(?:_|$)", alts.join("|"))
}

impl Prefilter {
    /// `own`: patterns of what is reported only outside vendored trees
    /// (optimizer keys, repeatability settings); `frequency`: how often
    /// words occur in configs (percent of files), to look for rare ones;
    /// `analyses`: what is worked out of each pattern, shared by the
    /// prefilters of one set of rules.
    /// Each pattern was compiled where it is matched (signals,
    /// frameworks), so rule data errors are reported there.
    pub(super) fn new(
        patterns: &[String],
        own: &[String],
        frequency: &BTreeMap<String, f64>,
        analyses: &Arc<Analyses>,
    ) -> Prefilter {
        Prefilter {
            base: Part::new(patterns, frequency, analyses),
            own: Part::new(own, frequency, analyses),
        }
    }

    /// Whether anything in raw `text` may match; `own`: the file is not in
    /// a vendored tree, so the `own` patterns count too.
    pub fn may_match(&self, text: &[u8], own: bool) -> bool {
        self.base.may_match(text, false) || (own && self.own.may_match(text, false))
    }

    /// [`Prefilter::may_match`] on text already in normal form.
    pub fn may_match_normalized(&self, norm: &[u8], own: bool) -> bool {
        self.base.may_match(norm, true) || (own && self.own.may_match(norm, true))
    }
}

const SEP: u8 = 0;
const LOWER: u8 = 1;
const UPPER: u8 = 2;
const DIGIT: u8 = 3;

/// Byte classes of the normal form: every byte that is not an ASCII letter
/// or digit (non-ASCII bytes included) separates words.
static CLASS: [u8; 256] = {
    let mut t = [SEP; 256];
    let mut c = 0;
    while c < 256 {
        let b = c as u8;
        t[c] = if b.is_ascii_lowercase() {
            LOWER
        } else if b.is_ascii_uppercase() {
            UPPER
        } else if b.is_ascii_digit() {
            DIGIT
        } else {
            SEP
        };
        c += 1;
    }
    t
};

/// [`super::signals::normalize`] over a whole text, byte by byte (every
/// non-ASCII byte is a separator, as every non-alphanumeric character is).
pub fn normalize_text(b: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    normalize_into(b, &mut out);
    out
}

/// [`normalize_text`] into a buffer (cleared first): a table per byte,
/// written by index into a buffer sized for the worst case (two bytes out
/// per byte in), no allocation when the buffer is large enough. Only ASCII
/// bytes are written.
pub fn normalize_into(b: &[u8], out: &mut Vec<u8>) {
    out.clear();
    if out.capacity() < 2 * b.len() {
        // A new buffer: growing the old one would copy its bytes.
        *out = Vec::with_capacity(2 * b.len());
    }
    out.resize(2 * b.len(), 0);
    let buf = out.as_mut_slice();
    let mut o = 0;
    // The class of the previous byte; a separator there means the output
    // ends with `_` (a letter or digit is always written last otherwise).
    // Not a separator at the start, so a leading separator gives one `_`.
    let mut prev = LOWER;
    for (i, &c) in b.iter().enumerate() {
        let k = CLASS[c as usize];
        if k == SEP {
            if prev != SEP {
                buf[o] = b'_';
                o += 1;
            }
        } else {
            if k == UPPER
                && i > 0
                && (prev == LOWER
                    || prev == DIGIT
                    || (prev == UPPER && b.get(i + 1).is_some_and(|n| n.is_ascii_lowercase())))
            {
                buf[o] = b'_';
                o += 1;
            }
            buf[o] = if k == UPPER { c | 0x20 } else { c };
            o += 1;
        }
        prev = k;
    }
    out.truncate(o);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::policy::signals::normalize;

    /// The char-by-char normal form the byte tables must reproduce.
    fn reference(s: &str) -> String {
        let chars: Vec<char> = s.chars().collect();
        let mut out = String::new();
        for (i, &c) in chars.iter().enumerate() {
            if c.is_ascii_alphanumeric() {
                if c.is_ascii_uppercase() && i > 0 {
                    let prev = chars[i - 1];
                    let next_lower = chars.get(i + 1).is_some_and(|n| n.is_ascii_lowercase());
                    if prev.is_ascii_lowercase()
                        || prev.is_ascii_digit()
                        || (prev.is_ascii_uppercase() && next_lower)
                    {
                        out.push('_');
                    }
                }
                out.push(c.to_ascii_lowercase());
            } else if !out.ends_with('_') {
                out.push('_');
            }
        }
        out
    }

    #[test]
    fn bytes_as_chars() {
        for s in [
            "PowerSGD",
            "--a",
            "aÜB",
            "ÜBer",
            "x€Y",
            "  Ab  cD9E",
            "",
            "_",
            "HTTPServerX",
            "a1B",
            "é",
            "ABc",
            "AB",
            "aB_",
            "日本Adam",
        ] {
            assert_eq!(
                String::from_utf8(normalize_text(s.as_bytes())).unwrap_or_default(),
                reference(s),
                "{s}"
            );
            assert_eq!(normalize(s), reference(s).trim_matches('_'), "{s}");
        }
    }

    #[test]
    fn same_form_as_names() {
        for s in [
            "PowerSGD",
            "--stale-gradients",
            "HTTPServer",
            "1bitAdam",
            "a.b_C",
            "-x",
            "aÜB",
            "  Ab  cD9E",
            "",
        ] {
            let text = String::from_utf8(normalize_text(s.as_bytes())).unwrap_or_default();
            assert_eq!(text.trim_matches('_'), normalize(s));
        }
        let p = Prefilter::new(
            &["power_?sgd([a-z0-9]*)".into()],
            &["optim".into()],
            &BTreeMap::new(),
            &Default::default(),
        );
        assert!(p.may_match(b"hook: x.powerSGD_hook", false));
        assert!(!p.may_match(b"hook: allreduce_hook\noptim: sgd", false));
        assert!(p.may_match(b"optim:\n  name: sgd", true));
    }
}

#[cfg(test)]
mod equivalence {
    use super::*;

    /// The whole text in normal form, tried with one regex of every
    /// pattern: what the prefilter did before it looked for anchors.
    fn whole(part: &Part, text: &[u8]) -> bool {
        if part.patterns.is_empty() {
            return false;
        }
        let re = build(&words(&part.patterns)).unwrap_or_else(|e| panic!("{e}"));
        re.is_match(&normalize_text(text))
    }

    /// `stale_grad` as `staleGrad`: separators dropped, the next letter
    /// upper-cased.
    fn camel(s: &str) -> String {
        let mut out = String::new();
        let mut up = false;
        for c in s.chars() {
            if c == '_' || c == '-' {
                up = true;
            } else if up {
                out.push(c.to_ascii_uppercase());
                up = false;
            } else {
                out.push(c);
            }
        }
        out
    }

    /// Looking for anchors first loses nothing: on every policy fixture,
    /// as written, upper-cased, in camelCase and with dashes, the verdict
    /// is the one the whole text in normal form gives.
    #[test]
    fn anchors_lose_nothing() {
        use crate::check::policy::test_support::{files_under, fixtures, rules};
        let rules = rules();
        let p = &rules.prefilter;
        let (mut texts, mut hits) = (0, 0);
        for path in files_under(&fixtures()) {
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            for variant in [
                text.clone(),
                text.to_uppercase(),
                camel(&text),
                text.replace('_', "-"),
            ] {
                texts += 1;
                let b = variant.as_bytes();
                for (part, own) in [(&p.base, false), (&p.own, true)] {
                    let want = whole(part, b);
                    assert_eq!(
                        part.may_match(b, false),
                        want,
                        "{} (own {own}): {variant:?}",
                        path.display()
                    );
                    hits += usize::from(want);
                }
            }
        }
        assert!(texts > 200 && hits > 100, "{texts} texts, {hits} hits");
    }
}

#[cfg(test)]
mod corpus_equivalence {
    use super::*;

    use crate::check::policy::test_support::rules;
    use crate::check::policy::PolicyRules;
    use std::path::PathBuf;

    /// Every config of the shared corpus the policy reads (its name is a
    /// config's, it is not over the size limit), with its bytes; `None`
    /// when the corpus is not beside the checkout (an error under CI).
    fn corpus_configs(rules: &PolicyRules) -> Option<Vec<(PathBuf, Vec<u8>)>> {
        use crate::check::policy::test_support::files_under;
        let root = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/corpus"));
        if !root.is_dir() {
            assert!(
                std::env::var_os("CI").is_none(),
                "../shared/corpus not found beside the checkout, and CI is set"
            );
            eprintln!("../shared/corpus not found: test skipped");
            return None;
        }
        let cf = &rules.signals.config_files;
        let mut out = Vec::new();
        for path in files_under(root) {
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            if crate::check::policy::configs::format_of(&name, &cf.extensions, &cf.names).is_none()
            {
                continue;
            }
            let Ok(bytes) = std::fs::read(&path) else {
                continue;
            };
            if bytes.len() as u64 <= cf.max_bytes {
                out.push((path, bytes));
            }
        }
        Some(out)
    }

    /// The same on every config of the shared corpus (about 10,000 real
    /// files, vendored NeMo and Megatron-LM trees among them).
    #[test]
    fn anchors_lose_nothing_on_the_corpus() {
        let rules = rules();
        let Some(configs) = corpus_configs(&rules) else {
            return;
        };
        let p = &rules.prefilter;
        let whole = [&p.base, &p.own]
            .map(|part| build(&words(&part.patterns)).unwrap_or_else(|e| panic!("{e}")));
        let (mut files, mut hits) = (0, 0);
        for (path, bytes) in &configs {
            files += 1;
            let norm = normalize_text(bytes);
            for (k, part) in [&p.base, &p.own].into_iter().enumerate() {
                let want = whole[k].is_match(&norm);
                assert_eq!(part.may_match(bytes, false), want, "{}", path.display());
                hits += usize::from(want);
            }
        }
        assert!(files > 5000 && hits > 100, "{files} files, {hits} hits");
    }

    /// Most of a first `check`'s work on a package that vendors NeMo or
    /// Megatron-LM is parsing the configs the prefilter lets through. A
    /// pattern found in many configs (a setting's key as common as
    /// `pipeline`, which every Megatron config holds) parses most of them:
    /// each pattern of the vendored-tree part matches under 5% of the
    /// corpus configs. A setting whose key is that common needs a
    /// `trigger` (its value's words).
    #[test]
    fn every_pattern_is_rare_in_the_corpus() {
        let rules = rules();
        let Some(configs) = corpus_configs(&rules) else {
            return;
        };
        let base = &rules.prefilter.base.patterns;
        let each: Vec<String> = base
            .iter()
            .map(|p| words(std::slice::from_ref(p)))
            .collect();
        let m = Matcher::new(&each, true).unwrap_or_else(|e| panic!("{e}"));
        let mut counts = vec![0usize; base.len()];
        let files = configs.len();
        for (_, bytes) in &configs {
            for i in m.which(&normalize_text(bytes)) {
                counts[i] += 1;
            }
        }
        assert!(files > 5000, "{files} files");
        let common: Vec<String> = base
            .iter()
            .zip(&counts)
            .filter(|(_, &c)| c * 20 >= files)
            .map(|(p, c)| format!("{p}: {c} of {files} configs"))
            .collect();
        assert!(
            common.is_empty(),
            "patterns in 5% of configs or more: {common:#?}"
        );
    }
}
