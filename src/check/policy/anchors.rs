//! Anchors: for the word patterns of a prefilter, words one of which every
//! match must hold, looked for in a config's raw bytes before anything is
//! put in normal form.
//!
//! Vendored framework trees hold megabytes of configs and almost none of
//! their bytes can match. Putting every byte in normal form (camelCase
//! split, lower case, separators as `_`) cost about 20 instructions a byte;
//! a SIMD search for a few dozen words over the lower-cased bytes costs a
//! fraction of that. Only the text around a word found (as many runs of
//! letters and digits on each side as a match can span) is put in normal
//! form and tried, with the patterns that word anchors.
//!
//! Why it loses nothing:
//! - A run of letters and digits of the normal form (no `_` in it) is a run
//!   of the raw text, lower-cased: normal form only inserts `_` and folds
//!   case. So a word of a match is found in the lower-cased raw bytes; where
//!   the pattern puts it at a word start or end, it sits at one in the raw
//!   text too (a separator or a camelCase boundary).
//! - Every match holds one of its pattern's anchors: the anchors come from
//!   the pattern's literal prefixes (or suffixes), every match starts (or
//!   ends) with one of them, and one word of each literal is an anchor.
//! - A match spans at most `reach` separators (counted in the pattern), so
//!   it lies within `reach` runs on either side of the runs holding the
//!   anchor. Spans are cut at separators, where the normal form of a span
//!   is the normal form of the whole text at that place, and `^`/`$` of the
//!   pattern stand for the `_` the whole text has there.
//! - Every place an anchor starts is visited: the search restarts one byte
//!   after each place found. Where several anchors start at one place, the
//!   search reports the longest (they are given longest first) and the
//!   others are its prefixes, tried with it.
//! - A pattern none of this can be said of (no literal, an empty word, a
//!   repetition that can hold `_` without bound) is left out: the caller
//!   tries it on the whole text in normal form.

use aho_corasick::packed;
use aho_corasick::{AhoCorasick, AhoCorasickKind, Input, MatchKind, Span};
use regex_syntax::hir::literal::{ExtractKind, Extractor};
use regex_syntax::hir::{Class, Hir, HirKind};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Mutex, OnceLock};

/// The words to look for, and what each anchors.
#[derive(Debug)]
pub(super) struct Anchors {
    /// Searches over runs of `needles` (longest words first), each a pass
    /// over the text: a search is fastest with a few dozen words whose
    /// first bytes are many (words of one or two letters search alone).
    /// Built on first use; `None` when a search cannot be built.
    groups: OnceLock<Option<Vec<Group>>>,
    /// Every word in one automaton, for text in normal form (a setting's
    /// key path and value: short, where a search's setup would cost more
    /// than the bytes). Built on first use.
    short: OnceLock<Option<AhoCorasick>>,
    /// The words, longest first; word `k` is needle `k`.
    words: Vec<String>,
    needles: Vec<Needle>,
    /// Patterns (by index) with no anchor.
    pub(super) unanchored: Vec<usize>,
    /// Each pattern's every match (in normal form), when its literals are
    /// the whole pattern: tried without a regex.
    exact: Vec<Option<Exact>>,
}

#[derive(Debug)]
struct Group {
    searcher: Searcher,
    /// Its needles: word `k` of the search is needle `first + k`.
    first: usize,
    end: usize,
}

/// Most words in one search. Teddy takes up to 64 at full speed; fewer
/// words per search cost less in all (callgrind on check of v5.1
/// GigaComputing, whose 71 long words make two searches either way: 64
/// words 431.4M instructions, 56 426.9M, 48 426.4M, 40 431.2M, 32 433.6M).
const GROUP: usize = 48;

/// Shortest word that longer words starting with it are folded into.
const FOLD: usize = 5;

/// Which group of lengths a word searches with.
fn length_class(len: usize) -> u8 {
    match len {
        0..=2 => 0,
        3..=4 => 1,
        _ => 2,
    }
}

#[derive(Debug)]
enum Searcher {
    /// Teddy (SIMD) when the words allow it.
    Packed(packed::Searcher),
    Automaton(AhoCorasick),
}

impl Searcher {
    fn new(words: &[String]) -> Option<Searcher> {
        let teddy = packed::Config::new()
            .match_kind(packed::MatchKind::LeftmostFirst)
            .heuristic_pattern_limits(false)
            .builder()
            .extend(words)
            .build();
        if let Some(s) = teddy {
            return Some(Searcher::Packed(s));
        }
        AhoCorasick::builder()
            .kind(Some(AhoCorasickKind::DFA))
            .match_kind(MatchKind::LeftmostFirst)
            .build(words)
            .ok()
            .map(Searcher::Automaton)
    }

    /// The leftmost word starting at or after `at`: (start, end, word).
    fn find_at(&self, hay: &[u8], at: usize) -> Option<(usize, usize, usize)> {
        let m = match self {
            Searcher::Packed(s) => s.find_in(hay, Span::from(at..hay.len()))?,
            Searcher::Automaton(a) => a.find(Input::new(hay).span(at..hay.len()))?,
        };
        Some((m.start(), m.end(), m.pattern().as_usize()))
    }
}

/// One word to look for.
#[derive(Debug, Clone)]
struct Needle {
    /// Must the word start a word of the normal form, and end one?
    starts: bool,
    ends: bool,
    /// Runs of letters and digits a match of its patterns can reach
    /// beyond the anchor's own.
    reach: usize,
    /// The patterns it anchors, by index.
    patterns: Vec<u32>,
    len: usize,
    /// The other words that are prefixes of this one (found at the same
    /// places).
    shorter: Vec<usize>,
}

/// A word one literal holds, with where it sits.
#[derive(Debug, Clone)]
struct Word {
    text: String,
    starts: bool,
    ends: bool,
}

impl Anchors {
    /// The anchors of word patterns (in normal form). `frequency`: how
    /// often words occur in configs (percent of files), to choose rare
    /// ones.
    pub(super) fn new(
        patterns: &[String],
        frequency: &BTreeMap<String, f64>,
        analyses: &Analyses,
    ) -> Anchors {
        let mut unanchored = Vec::new();
        // Every literal of every pattern: (pattern, its words).
        let mut lits: Vec<(usize, Vec<Word>)> = Vec::new();
        let mut reach = vec![0; patterns.len()];
        let mut exact: Vec<Option<Exact>> = patterns.iter().map(|_| None).collect();
        for (i, p) in patterns.iter().enumerate() {
            match analyses.of(p) {
                Some((r, found)) => {
                    reach[i] = r;
                    exact[i] = found.exact.map(Exact::new);
                    lits.extend(found.words.into_iter().map(|w| (i, w)));
                }
                None => unanchored.push(i),
            }
        }
        let chosen = cover(&lits, frequency);
        let mut by_text: BTreeMap<String, Needle> = BTreeMap::new();
        for (text, w, pattern) in chosen {
            let n = by_text.entry(text).or_insert(Needle {
                starts: true,
                ends: true,
                reach: 0,
                patterns: Vec::new(),
                len: 0,
                shorter: Vec::new(),
            });
            n.starts &= w.starts;
            n.ends &= w.ends;
            n.reach = n.reach.max(reach[pattern]);
            n.patterns.push(pattern as u32);
        }
        // A word that starts with another word of [`FOLD`] letters or more
        // is looked for by that one (`compress` finds `compression` too):
        // fewer words, each as rare.
        let mut texts: Vec<String> = by_text.keys().cloned().collect();
        texts.sort_by(|a, b| b.len().cmp(&a.len()).then(a.cmp(b)));
        for t in &texts {
            let Some(short) = texts
                .iter()
                .filter(|s| s.len() >= FOLD && s.len() < t.len() && t.starts_with(s.as_str()))
                .min_by_key(|s| s.len())
            else {
                continue;
            };
            let Some(long) = by_text.remove(t) else {
                continue;
            };
            if let Some(n) = by_text.get_mut(short) {
                n.starts &= long.starts;
                n.ends = false;
                n.reach = n.reach.max(long.reach);
                n.patterns.extend(long.patterns);
            }
        }
        // Longest first: where several words start at one place, the
        // search reports the longest, and the others are its prefixes.
        let mut entries: Vec<(String, Needle)> = by_text.into_iter().collect();
        entries.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then(a.0.cmp(&b.0)));
        let words: Vec<String> = entries.iter().map(|(t, _)| t.clone()).collect();
        let mut needles: Vec<Needle> = Vec::new();
        for (t, mut n) in entries {
            n.patterns.sort_unstable();
            n.patterns.dedup();
            n.len = t.len();
            n.shorter = words
                .iter()
                .enumerate()
                .filter(|(_, s)| s.len() < t.len() && t.starts_with(s.as_str()))
                .map(|(j, _)| j)
                .collect();
            needles.push(n);
        }
        Anchors {
            groups: OnceLock::new(),
            short: OnceLock::new(),
            words,
            needles,
            unanchored,
            exact,
        }
    }

    /// The searches over raw text: runs of up to [`GROUP`] words of one
    /// length class, longest first.
    fn groups(&self) -> Option<&[Group]> {
        self.groups
            .get_or_init(|| {
                let words = &self.words;
                let mut groups = Vec::new();
                let mut first = 0;
                while first < words.len() {
                    let class = length_class(words[first].len());
                    let mut end = first;
                    while end < words.len()
                        && end - first < GROUP
                        && length_class(words[end].len()) == class
                    {
                        end += 1;
                    }
                    let searcher = Searcher::new(&words[first..end])?;
                    groups.push(Group {
                        searcher,
                        first,
                        end,
                    });
                    first = end;
                }
                Some(groups)
            })
            .as_deref()
    }

    fn short(&self) -> Option<&AhoCorasick> {
        self.short
            .get_or_init(|| {
                AhoCorasick::builder()
                    .kind(Some(AhoCorasickKind::DFA))
                    .match_kind(MatchKind::Standard)
                    .prefilter(false)
                    .build(&self.words)
                    .ok()
            })
            .as_ref()
    }

    /// Whether `verify` holds on one of the spans of `text` around an
    /// anchor found, with the patterns the anchors in it stand for. Spans
    /// that overlap are joined first; each is cut at separators. `normal`:
    /// `text` is in normal form already. `None` when no search could be
    /// built (nothing can be said).
    pub(super) fn any_span(
        &self,
        text: &[u8],
        normal: bool,
        mut verify: impl FnMut(&[u8], &[u32]) -> bool,
    ) -> Option<bool> {
        if self.words.is_empty() {
            return Some(false);
        }
        if normal {
            // A setting's key path and value: short, tried whole with the
            // patterns of every word found.
            let mut pats: Vec<u32> = Vec::new();
            for m in self.short()?.find_overlapping_iter(text) {
                let n = &self.needles[m.pattern().as_usize()];
                let s = m.start();
                if (!n.starts || word_start(text, s)) && (!n.ends || word_start(text, s + n.len)) {
                    pats.extend_from_slice(&n.patterns);
                }
            }
            return Some(!pats.is_empty() && check(text, &mut pats, &mut verify));
        }
        let groups = self.groups()?;
        thread_local! {
            static LOWER: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
        }
        LOWER.with(|buf| {
            let mut buf = buf.borrow_mut();
            buf.clear();
            buf.extend_from_slice(text);
            buf.make_ascii_lowercase();
            let hay: &[u8] = &buf;
            // Every place a word starts, with the needles found there.
            let mut found: Vec<(usize, usize)> = Vec::new();
            let mut keep = |s: usize, j: usize| {
                let n = &self.needles[j];
                if (!n.starts || word_start(text, s)) && (!n.ends || word_start(text, s + n.len)) {
                    found.push((s, j));
                }
            };
            for g in groups {
                let mut at = 0;
                while let Some((s, _, k)) = g.searcher.find_at(hay, at) {
                    at = s + 1;
                    let k = g.first + k;
                    let Some(n) = self.needles.get(k) else {
                        continue;
                    };
                    // Prefixes in other groups are found by their searches.
                    let same = n
                        .shorter
                        .iter()
                        .copied()
                        .filter(|&j| j >= g.first && j < g.end);
                    for j in std::iter::once(k).chain(same) {
                        keep(s, j);
                    }
                }
            }
            found.sort_unstable();
            let mut span: Option<(usize, usize)> = None;
            let mut pats: Vec<u32> = Vec::new();
            for (s, j) in found {
                let n = &self.needles[j];
                let (ws, we) = around(text, s, s + n.len, n.reach);
                match span {
                    Some((s0, e0)) if ws <= e0 => span = Some((s0.min(ws), e0.max(we))),
                    Some((s0, e0)) => {
                        if check(&text[s0..e0], &mut pats, &mut verify) {
                            return Some(true);
                        }
                        span = Some((ws, we));
                    }
                    None => span = Some((ws, we)),
                }
                pats.extend_from_slice(&n.patterns);
            }
            let hit = span.is_some_and(|(s, e)| check(&text[s..e], &mut pats, &mut verify));
            if buf.capacity() > 1 << 20 {
                // Do not keep a large file's buffer for the rest of the run.
                *buf = Vec::new();
            }
            Some(hit)
        })
    }
}

/// Tries a span with the patterns gathered for it, and clears them.
fn check(span: &[u8], pats: &mut Vec<u32>, verify: &mut impl FnMut(&[u8], &[u32]) -> bool) -> bool {
    pats.sort_unstable();
    pats.dedup();
    let hit = verify(span, pats);
    pats.clear();
    hit
}

impl Anchors {
    /// Whether pattern `i` matches `norm` (text in normal form): its
    /// literals are looked for between separators when they are the whole
    /// pattern (`Some`), else `None` (the caller's regex decides).
    pub(super) fn exact_match(&self, i: usize, norm: &[u8]) -> Option<bool> {
        let exact = self.exact.get(i)?.as_ref()?;
        // Spans are short: every word start is tried, with the literals
        // that start with its first byte.
        let starts = std::iter::once(0).chain(memchr::memchr_iter(b'_', norm).map(|u| u + 1));
        Some(starts.into_iter().any(|at| {
            let rest = &norm[at..];
            exact
                .starting(rest.first().copied())
                .iter()
                .any(|l| rest.starts_with(l) && rest.get(l.len()).is_none_or(|&b| b == b'_'))
        }))
    }
}

/// A pattern's every match, sorted, with where each first byte starts.
#[derive(Debug)]
struct Exact {
    lits: Vec<Vec<u8>>,
    /// (first byte, start, end) in `lits`; an empty literal has none.
    index: Vec<(u8, usize, usize)>,
}

impl Exact {
    fn new(mut lits: Vec<Vec<u8>>) -> Exact {
        lits.sort_unstable();
        lits.dedup();
        let mut index: Vec<(u8, usize, usize)> = Vec::new();
        for (i, l) in lits.iter().enumerate() {
            let Some(&b) = l.first() else { continue };
            match index.last_mut() {
                Some(last) if last.0 == b => last.2 = i + 1,
                _ => index.push((b, i, i + 1)),
            }
        }
        Exact { lits, index }
    }

    /// The literals that can start text whose first byte is `b` (the empty
    /// literal, first when sorted, fits any text).
    fn starting(&self, b: Option<u8>) -> &[Vec<u8>] {
        if self.lits.first().is_some_and(Vec::is_empty) {
            return &self.lits;
        }
        let Some(b) = b else { return &[] };
        match self.index.binary_search_by_key(&b, |e| e.0) {
            Ok(k) => &self.lits[self.index[k].1..self.index[k].2],
            Err(_) => &[],
        }
    }
}

fn alnum(b: u8) -> bool {
    b.is_ascii_alphanumeric()
}

/// Whether the normal form has a word boundary before byte `i` of `t`
/// (at the ends, after or before a separator, or at a camelCase boundary:
/// the rules of [`super::prefilter::normalize_into`]).
fn word_start(t: &[u8], i: usize) -> bool {
    if i == 0 || i >= t.len() {
        return true;
    }
    let (p, c) = (t[i - 1], t[i]);
    if !alnum(p) || !alnum(c) {
        return true;
    }
    c.is_ascii_uppercase()
        && (p.is_ascii_lowercase()
            || p.is_ascii_digit()
            || (p.is_ascii_uppercase() && t.get(i + 1).is_some_and(u8::is_ascii_lowercase)))
}

/// The span from `reach` runs of letters and digits before the run holding
/// byte `s` to `reach` runs after the one holding byte `e - 1`, cut at
/// separators (or the ends of the text).
fn around(t: &[u8], s: usize, e: usize, reach: usize) -> (usize, usize) {
    let mut i = s;
    while i > 0 && alnum(t[i - 1]) {
        i -= 1;
    }
    for _ in 0..reach {
        while i > 0 && !alnum(t[i - 1]) {
            i -= 1;
        }
        while i > 0 && alnum(t[i - 1]) {
            i -= 1;
        }
    }
    let mut j = e;
    while j < t.len() && alnum(t[j]) {
        j += 1;
    }
    for _ in 0..reach {
        while j < t.len() && !alnum(t[j]) {
            j += 1;
        }
        while j < t.len() && alnum(t[j]) {
            j += 1;
        }
    }
    (i, j)
}

/// The most `_` a match of `h` can hold, `None` without bound.
fn max_separators(h: &Hir) -> Option<usize> {
    match h.kind() {
        HirKind::Empty | HirKind::Look(_) => Some(0),
        HirKind::Literal(l) => Some(l.0.iter().filter(|&&b| b == b'_').count()),
        HirKind::Class(Class::Bytes(c)) => Some(
            c.ranges()
                .iter()
                .any(|r| r.start() <= b'_' && b'_' <= r.end())
                .into(),
        ),
        HirKind::Class(Class::Unicode(c)) => Some(
            c.ranges()
                .iter()
                .any(|r| r.start() <= '_' && '_' <= r.end())
                .into(),
        ),
        HirKind::Repetition(r) => match max_separators(&r.sub)? {
            0 => Some(0),
            n => n.checked_mul(usize::try_from(r.max?).ok()?),
        },
        HirKind::Capture(c) => max_separators(&c.sub),
        HirKind::Concat(v) => v
            .iter()
            .try_fold(0usize, |acc, h| acc.checked_add(max_separators(h)?)),
        HirKind::Alternation(v) => v
            .iter()
            .try_fold(0usize, |acc, h| Some(acc.max(max_separators(h)?))),
    }
}

/// What a pattern's literals say: the words of each literal prefix (or
/// suffix, whichever has the longer shortest word), and every match when
/// the literals are the whole pattern.
#[derive(Debug, Clone)]
struct Literals {
    words: Vec<Vec<Word>>,
    exact: Option<Vec<Vec<u8>>>,
}

/// What the anchors need of each pattern (how far a match reaches, its
/// literals), worked out once per distinct pattern: the file prefilter and
/// the setting gate share most of theirs.
#[derive(Debug, Default)]
pub(super) struct Analyses(Mutex<HashMap<String, Option<(usize, Literals)>>>);

impl Analyses {
    fn of(&self, pattern: &str) -> Option<(usize, Literals)> {
        if let Some(found) = self.0.lock().ok().and_then(|m| m.get(pattern).cloned()) {
            return found;
        }
        let found = regex_syntax::ParserBuilder::new()
            .unicode(false)
            .utf8(false)
            .build()
            .parse(pattern)
            .ok()
            .and_then(|hir| Some((max_separators(&hir)?, literal_words(&hir)?)));
        if let Ok(mut m) = self.0.lock() {
            m.insert(pattern.to_string(), found.clone());
        }
        found
    }
}

/// The [`Literals`] of a pattern; `None` when neither its prefixes nor
/// its suffixes are a finite set of literals each holding a word.
fn literal_words(hir: &Hir) -> Option<Literals> {
    let mut best: Option<(usize, Literals)> = None;
    for prefix in [true, false] {
        let mut ex = Extractor::new();
        // Large enough for the alternations of the policy data: past the
        // limit, literals are cut short (words of two letters).
        ex.kind(if prefix {
            ExtractKind::Prefix
        } else {
            ExtractKind::Suffix
        })
        .limit_total(10_000);
        let seq = ex.extract(hir);
        let Some(lits) = seq.literals() else {
            continue;
        };
        let mut all = Vec::new();
        let mut worst = usize::MAX;
        for lit in lits {
            let Ok(text) = std::str::from_utf8(lit.as_bytes()) else {
                return None;
            };
            let parts: Vec<&str> = text.split('_').collect();
            let n = parts.len();
            let words: Vec<Word> = parts
                .iter()
                .enumerate()
                .filter(|(_, p)| !p.is_empty())
                .map(|(i, p)| Word {
                    text: p.to_string(),
                    // Prefix literals start a match, so their first word
                    // starts a word of the text; each word but the last
                    // ends one, and the last too when the literal is the
                    // whole match. Suffix literals mirror that.
                    starts: i > 0 || prefix || lit.is_exact(),
                    ends: i + 1 < n || !prefix || lit.is_exact(),
                })
                .collect();
            let longest = words.iter().map(|w| w.text.len()).max().unwrap_or(0);
            if longest == 0 {
                worst = 0;
                break;
            }
            worst = worst.min(longest);
            all.push(words);
        }
        if worst > 0 && best.as_ref().is_none_or(|(b, _)| worst > *b) {
            let exact = seq
                .is_exact()
                .then(|| lits.iter().map(|l| l.as_bytes().to_vec()).collect());
            best = Some((worst, Literals { words: all, exact }));
        }
    }
    best.map(|(_, l)| l)
}

/// What looking for a word costs: how often it is found in configs, in
/// tenths of a percent of files, from `frequency`, else a guess from its
/// length (a word left out of `frequency` is in under 1% of files), with
/// a floor for short words.
fn cost(w: &str, frequency: &BTreeMap<String, f64>) -> u64 {
    // The search looks at the first bytes of every word at once: a word
    // of one or two letters makes it stop at many places, for every word.
    // Three- and four-letter words (`bit`, `top`, `lag`, `sync`) are rare
    // as words but common inside others (`bitmap`, `stop`, `flag`), and
    // the search stops at each of those too: a longer word of the same
    // literal is looked for instead where there is one (floors chosen by
    // callgrind on v5.1 GigaComputing: 3 => 5, 4 => 3 gave 409.1M
    // instructions; 200 and 30, 400.7M; 1000 and 100, 417.3M).
    let floor = match w.len() {
        0 => return u64::MAX / 4,
        1 => 2000,
        2 => 300,
        3 => 200,
        4 => 30,
        _ => 2,
    };
    match frequency.get(w) {
        // Saturating cast: a negative or NaN percent costs nothing extra.
        Some(p) => floor.max(10 + (p * 10.0) as u64),
        None => floor,
    }
}

/// A word in [`cover`]'s heap: the greatest is the one to pick.
#[derive(Clone, Copy)]
struct Pick<'a> {
    cost: u128,
    /// Open literals holding it, when it was pushed.
    n: u64,
    len: usize,
    text: &'a str,
    id: usize,
}

impl Ord for Pick<'_> {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        // Less cost per literal is greater; then the longer word, then the
        // first in order.
        (other.cost * u128::from(self.n))
            .cmp(&(self.cost * u128::from(other.n)))
            .then(self.len.cmp(&other.len))
            .then(other.text.cmp(self.text))
    }
}

impl PartialOrd for Pick<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Pick<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other).is_eq()
    }
}

impl Eq for Pick<'_> {}

/// One word of every literal, chosen greedily over all patterns (weighted
/// set cover): the word with the least cost per literal it would take,
/// until every literal has one. Returns (word, where it sits in the
/// literal, pattern).
fn cover(
    lits: &[(usize, Vec<Word>)],
    frequency: &BTreeMap<String, f64>,
) -> Vec<(String, Word, usize)> {
    // Words by number, with the literals that hold each and how many of
    // those are still open.
    let mut ids: BTreeMap<&str, usize> = BTreeMap::new();
    let mut texts: Vec<&str> = Vec::new();
    let mut holders: Vec<Vec<usize>> = Vec::new();
    let mut lit_words: Vec<Vec<usize>> = Vec::with_capacity(lits.len());
    for (li, (_, words)) in lits.iter().enumerate() {
        let mut mine = Vec::new();
        for w in words {
            let id = *ids.entry(w.text.as_str()).or_insert_with(|| {
                texts.push(w.text.as_str());
                holders.push(Vec::new());
                texts.len() - 1
            });
            if !mine.contains(&id) {
                mine.push(id);
                holders[id].push(li);
            }
        }
        lit_words.push(mine);
    }
    let costs: Vec<u128> = texts
        .iter()
        .map(|t| u128::from(cost(t, frequency)))
        .collect();
    let mut open_count: Vec<u64> = holders.iter().map(|h| h.len() as u64).collect();
    let mut open = vec![true; lits.len()];
    let mut left = lits.len();
    let mut out = Vec::new();
    // Lazy greedy: a word's open count only falls, so its key in the heap
    // is never worse than its true one; the top, once its key is brought
    // up to date and it is still the top, is the word a full scan picks.
    // Least cost per literal taken: cost_a / n_a < cost_b / n_b, in
    // integers; ties to the longer word, then the first in order.
    let mut heap: std::collections::BinaryHeap<Pick> = (0..texts.len())
        .filter(|&id| open_count[id] > 0)
        .map(|id| Pick {
            cost: costs[id],
            n: open_count[id],
            len: texts[id].len(),
            text: texts[id],
            id,
        })
        .collect();
    while left > 0 {
        let Some(top) = heap.pop() else {
            break;
        };
        let n = open_count[top.id];
        if n == 0 {
            continue;
        }
        if n != top.n {
            heap.push(Pick { n, ..top });
            continue;
        }
        let pick = top.id;
        for &l in &holders[pick] {
            if !open[l] {
                continue;
            }
            open[l] = false;
            left -= 1;
            for &w in &lit_words[l] {
                open_count[w] -= 1;
            }
            let (pattern, words) = &lits[l];
            for w in words.iter().filter(|w| w.text == texts[pick]) {
                out.push((texts[pick].to_string(), w.clone(), *pattern));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn anchors(p: &[&str]) -> Anchors {
        Anchors::new(
            &p.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
            &BTreeMap::new(),
            &Analyses::default(),
        )
    }

    fn spans(a: &Anchors, t: &str) -> Vec<(String, Vec<u32>)> {
        let mut out = Vec::new();
        let found = a.any_span(t.as_bytes(), false, |s, p| {
            out.push((String::from_utf8_lossy(s).into_owned(), p.to_vec()));
            false
        });
        assert_eq!(found, Some(false));
        out
    }

    fn texts(v: Vec<(String, Vec<u32>)>) -> Vec<String> {
        v.into_iter().map(|(s, _)| s).collect()
    }

    #[test]
    fn words_found_in_raw_text() {
        let a = anchors(&["stale_(grad|grads|weights)", "power_?sgd([a-z0-9]*)"]);
        assert!(a.unanchored.is_empty());
        // camelCase, upper case, separators of every kind.
        assert_eq!(
            spans(&a, "x: 1\nuse: StaleGrads\ny: 2"),
            [("use: StaleGrads\ny".to_string(), vec![0])]
        );
        assert_eq!(
            spans(&a, "hook=PowerSGD"),
            [("hook=PowerSGD".to_string(), vec![1])]
        );
        assert_eq!(
            texts(spans(&a, "hook=powersgd_hook")),
            ["hook=powersgd_hook"]
        );
        // Not at a word start: passed over.
        assert!(spans(&a, "unstalegrads xpowers").is_empty());
        // Spans that overlap are joined.
        assert_eq!(texts(spans(&a, "stale stale stale")), ["stale stale stale"]);
        // Far apart: one span each.
        assert_eq!(
            texts(spans(&a, "stale a b c d power")),
            ["stale a", "d power"]
        );
    }

    #[test]
    fn words_that_start_alike() {
        // `sync` starts `synchronous`: both are tried where the longer is
        // found.
        let a = anchors(&["sync", "synchronous"]);
        assert_eq!(a.needles.len(), 2);
        assert_eq!(
            spans(&a, "x synchronous y"),
            [("synchronous".to_string(), vec![1])]
        );
        assert_eq!(
            spans(&a, "x SyncHronous y"),
            [("SyncHronous".to_string(), vec![0, 1])]
        );
    }

    #[test]
    fn longer_words_fold_into_a_prefix() {
        let a = anchors(&["compress", "compression_fp16"]);
        assert_eq!(a.words, ["compress"]);
        assert_eq!(
            spans(&a, "x: CompressionFP16"),
            [("x: CompressionFP16".to_string(), vec![0, 1])]
        );
    }

    #[test]
    fn unanchorable_patterns() {
        assert_eq!(anchors(&["[a-z0-9_]*"]).unanchored, [0]);
        assert_eq!(anchors(&["stale", "foo(_bar)*"]).unanchored, [1]);
        assert_eq!(anchors(&["_"]).unanchored, [0]);
        let a = anchors(&["foo(_bar){0,3}"]);
        assert!(a.unanchored.is_empty());
        assert_eq!(a.needles[0].reach, 3);
    }

    #[test]
    fn common_words_last() {
        let frequency = BTreeMap::from([("grad".to_string(), 30.0)]);
        let a = Anchors::new(
            &["grad_delay".to_string(), "grad".to_string()],
            &frequency,
            &Analyses::default(),
        );
        // `delay` anchors the first pattern, `grad` only the one that has
        // nothing else.
        assert_eq!(a.needles.len(), 2);
        assert_eq!(spans(&a, "a grad b"), [("grad".to_string(), vec![1])]);
    }

    #[test]
    fn word_starts() {
        let t = b"aB1cDEf g";
        let starts: Vec<usize> = (0..=t.len()).filter(|&i| word_start(t, i)).collect();
        assert_eq!(starts, [0, 1, 4, 5, 7, 8, 9]);
    }
}
