//! Regexes that only ever run forwards, for the policy patterns: every
//! name, value and text they see is in normal form (ASCII `[a-z0-9_]`),
//! a few dozen bytes long, and the questions asked are "does anything
//! match", "which patterns match" and "where is the leftmost match and its
//! word". None of them needs the reverse automaton and the extra engines
//! `regex::Regex` (and regex-automata's meta regex) build beside the
//! forward one, which were half of what compiling the policy patterns cost
//! on every `check` that reads a config.
//!
//! - [`Matcher`]: one lazy DFA over a forward NFA without capture groups
//!   (is there a match; which of several patterns match).
//! - [`Finder`]: a PikeVM over a forward NFA with capture groups (the
//!   leftmost match of several patterns, with the span of group 1; every
//!   match in turn). It is only asked after a [`Matcher`] said yes.
//!
//! Both keep their scratch space in a pool, so they are shared between
//! threads as the meta regex is.

use regex_automata::hybrid::dfa::{Cache as DfaCache, DFA};
use regex_automata::nfa::thompson::pikevm::{Cache as VmCache, PikeVM};
use regex_automata::nfa::thompson::{self, WhichCaptures};
use regex_automata::util::captures::Captures;
use regex_automata::util::pool::Pool;
use regex_automata::util::syntax;
use regex_automata::{Anchored, Input, MatchKind, PatternSet};

type Make<T> = Box<dyn Fn() -> T + Send + Sync>;

/// Byte classes, not Unicode ones: the texts are ASCII in normal form.
fn syntax_config() -> syntax::Config {
    syntax::Config::new().unicode(false).utf8(false)
}

/// Is there a match, and of which patterns.
pub struct Matcher {
    dfa: DFA,
    caches: Pool<DfaCache, Make<DfaCache>>,
    /// Every pattern starts with `(?:^|_)`: a match starts at the text's
    /// start or at a `_`, so a short text is searched anchored at each of
    /// those places (see [`Matcher::starts`]).
    at_words: bool,
}

impl std::fmt::Debug for Matcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Matcher")
            .field("patterns", &self.dfa.pattern_len())
            .finish()
    }
}

impl Matcher {
    /// `all`: every pattern that matches is reported (for
    /// [`Matcher::which`]); else leftmost-first, for [`Matcher::is_match`]
    /// only.
    pub fn new(patterns: &[String], all: bool) -> Result<Matcher, String> {
        let kind = if all {
            MatchKind::All
        } else {
            MatchKind::LeftmostFirst
        };
        let dfa = DFA::builder()
            .configure(DFA::config().match_kind(kind))
            .syntax(syntax_config())
            .thompson(thompson::Config::new().which_captures(WhichCaptures::None))
            .build_many(patterns)
            .map_err(|e| e.to_string())?;
        let for_pool = dfa.clone();
        let make: Make<DfaCache> = Box::new(move || for_pool.create_cache());
        Ok(Matcher {
            dfa,
            caches: Pool::new(make),
            at_words: patterns.iter().all(|p| p.starts_with(WORD_START)),
        })
    }

    /// Where a search runs in `text`: `None` for one unanchored search;
    /// else anchored at its start and at every `_` (texts of at most
    /// [`ANCHORED_MAX`] bytes, for patterns that all start at a word).
    /// An unanchored lazy DFA tracks every place a match may have begun,
    /// and builds a state for each new mix of them: on the key paths and
    /// values of a config, most of a search's cost. Anchored searches see
    /// one place each and stop where no pattern can go on.
    fn starts<'t>(&self, text: &'t [u8]) -> Option<impl Iterator<Item = usize> + 't> {
        (self.at_words && text.len() <= ANCHORED_MAX)
            .then(|| std::iter::once(0).chain(memchr::memchr_iter(b'_', text).filter(|&i| i > 0)))
    }

    /// Whether any pattern matches `text`.
    pub fn is_match(&self, text: &[u8]) -> bool {
        let mut cache = self.caches.get();
        // Without quit bytes and with the default cache settings (never
        // giving up), the lazy DFA cannot fail; were it to, "maybe" is the
        // answer that loses nothing.
        let found = |input: &Input| {
            self.dfa
                .try_search_fwd(&mut cache, input)
                .map_or(true, |m| m.is_some())
        };
        let mut found = found;
        match self.starts(text) {
            Some(mut at) => at.any(|i| {
                found(
                    &Input::new(text)
                        .range(i..)
                        .anchored(Anchored::Yes)
                        .earliest(true),
                )
            }),
            None => found(&Input::new(text).earliest(true)),
        }
    }

    /// The indices of the patterns that match `text`, in order (built with
    /// `all`).
    pub fn which(&self, text: &[u8]) -> Vec<usize> {
        let mut cache = self.caches.get();
        let mut set = PatternSet::new(self.dfa.pattern_len());
        let mut search = |input: &Input| {
            self.dfa
                .try_which_overlapping_matches(&mut cache, input, &mut set)
                .is_ok()
        };
        let ok = match self.starts(text) {
            Some(mut at) => {
                at.all(|i| search(&Input::new(text).range(i..).anchored(Anchored::Yes)))
            }
            None => search(&Input::new(text)),
        };
        if ok {
            set.iter().map(|p| p.as_usize()).collect()
        } else {
            // See `is_match`: cannot happen; every pattern is the answer
            // that loses nothing.
            (0..self.dfa.pattern_len()).collect()
        }
    }
}

/// How every word pattern starts: at the text's start or after a `_`.
const WORD_START: &str = "(?:^|_)";

/// Longest text searched anchored at each word (a setting's key path or
/// value; whole config texts take one unanchored search).
const ANCHORED_MAX: usize = 512;

/// Where the leftmost match is, with its group 1.
pub struct Finder {
    vm: PikeVM,
    caches: Pool<(VmCache, Captures), Make<(VmCache, Captures)>>,
}

impl std::fmt::Debug for Finder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Finder")
            .field("patterns", &self.vm.pattern_len())
            .finish()
    }
}

/// A match [`Finder::leftmost`] found: which pattern, and the span of its
/// group 1 (the whole match when the pattern has no group).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Found {
    pub pattern: usize,
    pub start: usize,
    pub end: usize,
}

impl Finder {
    /// Leftmost-first, as `regex::Regex`: among matches starting at the
    /// same place, the earlier pattern (and alternative) wins.
    pub fn new(patterns: &[String]) -> Result<Finder, String> {
        let vm = PikeVM::builder()
            .syntax(syntax_config())
            .thompson(thompson::Config::new().which_captures(WhichCaptures::All))
            .build_many(patterns)
            .map_err(|e| e.to_string())?;
        let for_pool = vm.clone();
        let make: Make<(VmCache, Captures)> =
            Box::new(move || (for_pool.create_cache(), for_pool.create_captures()));
        Ok(Finder {
            vm,
            caches: Pool::new(make),
        })
    }

    /// The leftmost match in `text`.
    pub fn leftmost(&self, text: &[u8]) -> Option<Found> {
        let mut guard = self.caches.get();
        let (cache, caps) = &mut *guard;
        self.vm.search(cache, &Input::new(text), caps);
        let pattern = caps.pattern()?;
        let span = caps
            .get_group(1)
            .or_else(|| caps.get_match().map(|m| m.span()))?;
        Some(Found {
            pattern: pattern.as_usize(),
            start: span.start,
            end: span.end,
        })
    }

    /// Every match in turn, leftmost-first and not overlapping (as
    /// `regex::Regex::find_iter`): the whole match's byte range.
    pub fn find_all(&self, text: &[u8]) -> Vec<std::ops::Range<usize>> {
        let mut guard = self.caches.get();
        let (cache, _) = &mut *guard;
        self.vm.find_iter(cache, text).map(|m| m.range()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pats(p: &[&str]) -> Vec<String> {
        p.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn which_patterns_match() {
        let m = Matcher::new(&pats(&["(?:^|_)ab$", "b$", "zz"]), true).unwrap();
        assert_eq!(m.which(b"x_ab"), vec![0, 1]);
        assert_eq!(m.which(b"xab"), vec![1]);
        assert!(m.which(b"q").is_empty());
        let any = Matcher::new(&pats(&["(?:^|_)(?:ab|cd)(?:_|$)"]), false).unwrap();
        assert!(any.is_match(b"x_cd_y"));
        assert!(!any.is_match(b"xcd_y"));
    }

    /// Searching anchored at each word start answers as one unanchored
    /// search does (the same patterns, wrapped so that they do not start
    /// with `(?:^|_)`, take the unanchored path), on short texts and on
    /// one past the anchored limit.
    #[test]
    fn anchored_at_words_is_unanchored() {
        let words = pats(&[
            "(?:^|_)(?:ab|a_b)$",
            "(?:^|_)(?:b_?c)(?:_|$)",
            "(?:^|_)(?:c[a-z0-9]*)(?:_|$)",
            "(?:^|_)(?:_x)(?:_|$)",
        ]);
        let wrapped: Vec<String> = words.iter().map(|p| format!("(?:{p})")).collect();
        let long = format!("{}_bc", "q_".repeat(ANCHORED_MAX / 2));
        let texts: Vec<&[u8]> = vec![
            b"ab",
            b"x_ab",
            b"xab",
            b"a_b",
            b"_a_b",
            b"bc",
            b"b_c_d",
            b"abc",
            b"x_c9_y",
            b"cx",
            b"__x",
            b"_x",
            b"x__x_",
            b"",
            b"_",
            b"zz_c",
            long.as_bytes(),
        ];
        for all in [true, false] {
            let a = Matcher::new(&words, all).unwrap();
            let u = Matcher::new(&wrapped, all).unwrap();
            assert!(a.at_words && !u.at_words);
            for t in &texts {
                let shown = String::from_utf8_lossy(t);
                assert_eq!(a.is_match(t), u.is_match(t), "{shown}");
                if all {
                    assert_eq!(a.which(t), u.which(t), "{shown}");
                }
            }
        }
    }

    #[test]
    fn leftmost_and_earlier_pattern_win() {
        let f = Finder::new(&pats(&["(?:^|_)(b_c)(?:_|$)", "(?:^|_)(a|b)(?:_|$)"])).unwrap();
        // `a` at 0 is the leftmost match.
        assert_eq!(
            f.leftmost(b"a_b_c"),
            Some(Found {
                pattern: 1,
                start: 0,
                end: 1
            })
        );
        // Both match from the `_` at 1: the earlier pattern wins.
        assert_eq!(
            f.leftmost(b"x_b_c"),
            Some(Found {
                pattern: 0,
                start: 2,
                end: 5
            })
        );
        assert_eq!(f.leftmost(b"zz"), None);
        assert_eq!(f.find_all(b"a_x_b"), vec![0..2, 3..5]);
    }

    #[test]
    fn errors_name_the_problem() {
        assert!(Matcher::new(&pats(&["(unclosed"]), true).is_err());
        assert!(Finder::new(&pats(&["[z-a]"])).is_err());
    }
}
