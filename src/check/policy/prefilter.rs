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

use regex::bytes::{Regex, RegexBuilder};

#[derive(Debug)]
pub struct Prefilter {
    base: Regex,
    with_optimizer: Regex,
}

fn words(pats: &[String]) -> String {
    let alts: Vec<String> = pats.iter().map(|p| format!("(?:{p})")).collect();
    format!("(?:^|_)(?:{})(?:_|$)", alts.join("|"))
}

impl Prefilter {
    /// `own`: patterns of what is reported only outside vendored trees
    /// (optimizer keys, repeatability settings).
    pub fn new(patterns: &[String], own: &[String]) -> Result<Prefilter, String> {
        // The text it runs on is normalised to ASCII `[a-z0-9_]`: byte
        // classes, not Unicode ones, keep the automaton (and its build,
        // paid by every `check`) small.
        let build = |p: &str| {
            RegexBuilder::new(p)
                .unicode(false)
                .build()
                .map_err(|e| e.to_string())
        };
        let base = build(&words(patterns))?;
        let mut all = patterns.to_vec();
        all.extend(own.iter().cloned());
        let with_optimizer = build(&words(&all))?;
        Ok(Prefilter {
            base,
            with_optimizer,
        })
    }

    /// Whether anything in `text` may match; `own`: the file is not in a
    /// vendored tree, so the `own` patterns count too.
    pub fn may_match(&self, text: &[u8], own: bool) -> bool {
        let norm = normalize_text(text);
        if own {
            self.with_optimizer.is_match(&norm)
        } else {
            self.base.is_match(&norm)
        }
    }
}

/// [`super::signals::normalize`] over a whole text, byte by byte (every
/// non-ASCII byte is a separator, as every non-alphanumeric character is).
pub fn normalize_text(b: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(b.len() + b.len() / 8);
    for (i, &c) in b.iter().enumerate() {
        if c.is_ascii_alphanumeric() {
            if c.is_ascii_uppercase() && i > 0 {
                let prev = b[i - 1];
                let next_lower = b.get(i + 1).is_some_and(|n| n.is_ascii_lowercase());
                if prev.is_ascii_lowercase()
                    || prev.is_ascii_digit()
                    || (prev.is_ascii_uppercase() && next_lower)
                {
                    out.push(b'_');
                }
            }
            out.push(c.to_ascii_lowercase());
        } else if out.last() != Some(&b'_') {
            out.push(b'_');
        }
    }
    // Only ASCII bytes were pushed.
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::policy::signals::normalize;

    #[test]
    fn same_form_as_names() {
        for s in [
            "PowerSGD",
            "--stale-gradients",
            "HTTPServer",
            "1bitAdam",
            "a.b_C",
        ] {
            let text = String::from_utf8(normalize_text(s.as_bytes())).unwrap_or_default();
            assert_eq!(text.trim_matches('_'), normalize(s));
        }
        let p = Prefilter::new(&["power_?sgd([a-z0-9]*)".into()], &["optim".into()])
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(p.may_match(b"hook: x.powerSGD_hook", false));
        assert!(!p.may_match(b"hook: allreduce_hook\noptim: sgd", false));
        assert!(p.may_match(b"optim:\n  name: sgd", true));
    }
}
