//! A quick look at a whole config text before it is parsed: vendored
//! framework trees hold thousands of configs, and almost none mention
//! anything the policy data looks for. The text is put in normal form
//! (camelCase split, lower case, every other run of characters one `_`,
//! the form names and values are matched in) and one regex of every word
//! pattern (signal families, framework settings' keys, values and
//! triggers, optimizer keys) is tried on it. No match: no setting of the
//! file can match, so it is not parsed. The test is conservative by
//! construction: a name or value is a run of the text, so its normal form
//! is a run of the text's normal form.

use regex_automata::meta::Regex;
use regex_automata::util::syntax;
use std::sync::OnceLock;

/// A set of word patterns tried on text in normal form, compiled the first
/// time it is used: a `check` with no implementation config never pays for
/// it. Used twice: on a config's whole text before it is parsed, and on
/// each setting (key path and value) before the framework data is tried.
#[derive(Debug)]
pub struct Prefilter {
    base: Lazy,
    /// Only the `own` patterns: a file outside vendored trees may match
    /// either (one regex of both cost another 19M instructions to build on
    /// every run).
    own: Lazy,
}

/// One regex of alternatives, built on first use. A regex that cannot be
/// built (too large for the automaton) lets everything through: the
/// prefilter may only save work, never lose a finding.
#[derive(Debug)]
struct Lazy {
    source: Option<String>,
    built: OnceLock<Option<Regex>>,
}

impl Lazy {
    fn new(pats: &[String]) -> Lazy {
        Lazy {
            source: (!pats.is_empty()).then(|| words(pats)),
            built: OnceLock::new(),
        }
    }

    /// `None`: no patterns. `Some(true)` when the text may match.
    fn is_match(&self, text: &[u8]) -> Option<bool> {
        let source = self.source.as_deref()?;
        let re = self.built.get_or_init(|| build(source).ok());
        Some(re.as_ref().is_none_or(|r| r.is_match(text)))
    }
}

/// The text it runs on is normalised to ASCII `[a-z0-9_]`: byte classes,
/// not Unicode ones, keep the automaton (and its build) small. Only
/// `is_match` is asked: no capture groups, and only the lazy DFA (with the
/// NFA it needs), which `regex::Regex` would build the other engines
/// beside (half the build cost).
fn build(p: &str) -> Result<Regex, String> {
    Regex::builder()
        .syntax(syntax::Config::new().unicode(false).utf8(false))
        .configure(
            Regex::config()
                .utf8_empty(false)
                .which_captures(regex_automata::nfa::thompson::WhichCaptures::None)
                .onepass(false)
                .backtrack(false)
                // Every alternative starts at a `_`, the most common byte
                // of the text: a literal prefilter costs more to build
                // (an Aho-Corasick automaton of hundreds of literals) than
                // it saves.
                .auto_prefilter(false),
        )
        .build(p)
        .map_err(|e| e.to_string())
}

fn words(pats: &[String]) -> String {
    let alts: Vec<String> = pats.iter().map(|p| format!("(?:{p})")).collect();
    format!("(?:^|_)(?:{})(?:_|$)", alts.join("|"))
}

impl Prefilter {
    /// `own`: patterns of what is reported only outside vendored trees
    /// (optimizer keys, repeatability settings). Each pattern was compiled
    /// where it is matched (signals, frameworks), so rule data errors are
    /// reported there; these regexes are built on first use.
    pub fn new(patterns: &[String], own: &[String]) -> Prefilter {
        Prefilter {
            base: Lazy::new(patterns),
            own: Lazy::new(own),
        }
    }

    /// Whether anything in `text` may match; `own`: the file is not in a
    /// vendored tree, so the `own` patterns count too.
    pub fn may_match(&self, text: &[u8], own: bool) -> bool {
        thread_local! {
            // One buffer per thread for the normal form of every file.
            static BUF: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
        }
        BUF.with(|buf| {
            let mut norm = buf.borrow_mut();
            normalize_into(text, &mut norm);
            let hit = self.may_match_normalized(&norm, own);
            if norm.capacity() > 1 << 20 {
                // Do not keep a large file's buffer for the rest of the run.
                *norm = Vec::new();
            }
            hit
        })
    }

    /// [`Prefilter::may_match`] on text already in normal form.
    pub fn may_match_normalized(&self, norm: &[u8], own: bool) -> bool {
        self.base.is_match(norm) == Some(true) || (own && self.own.is_match(norm) == Some(true))
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
        let p = Prefilter::new(&["power_?sgd([a-z0-9]*)".into()], &["optim".into()]);
        assert!(p.may_match(b"hook: x.powerSGD_hook", false));
        assert!(!p.may_match(b"hook: allreduce_hook\noptim: sgd", false));
        assert!(p.may_match(b"optim:\n  name: sgd", true));
    }
}
