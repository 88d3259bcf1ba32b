//! Anchors: for the word patterns of a prefilter, words one of which every
//! match must hold, looked for in a config's raw bytes before anything is
//! put in normal form.
//!
//! Vendored framework trees hold megabytes of configs and almost none of
//! their bytes can match. Putting every byte in normal form (camelCase
//! split, lower case, separators as `_`) cost about 20 instructions a byte.
//! Instead, one pass finds the places where a word of the normal form
//! starts (64 bytes at a time, with word arithmetic), and at each compares
//! only the anchor words that begin with the same two letters. Only the
//! text around a word found (as many runs of letters and digits on each
//! side as a match can span) is put in normal form and tried, with the
//! patterns that word anchors.
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
//! - Every place an anchor can start is visited: every anchor starts a
//!   word of the normal form (or, if one need not, every letter and digit
//!   is visited), and at each place every anchor with its first two
//!   letters is compared, so anchors that start alike are all found.
//! - A pattern none of this can be said of (no literal, an empty word, a
//!   repetition that can hold `_` without bound) is left out: the caller
//!   tries it on the whole text in normal form.

use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};
use regex_syntax::hir::literal::{ExtractKind, Extractor};
use regex_syntax::hir::{Class, Hir, HirKind};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Mutex, OnceLock};

/// The words to look for, and what each anchors.
#[derive(Debug)]
pub(super) struct Anchors {
    /// The pass over raw text, words by their first two letters. Built on
    /// first use; `None` when it cannot be built.
    table: OnceLock<Option<Table>>,
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

/// The words by their first two bytes, for the pass over raw text: at
/// each place a word of the normal form starts, only the words that start
/// with the same two letters are compared.
#[derive(Debug)]
struct Table {
    /// For each first byte's class and second byte's class (or [`NONE`]
    /// when the run of letters and digits ends after one byte): a range
    /// of `list`.
    slots: Vec<(u32, u32)>,
    /// The words of each slot, longest first.
    list: Vec<Cand>,
    /// Some needle need not start a word: every letter or digit is a
    /// place to look, not only word starts.
    anywhere: bool,
}

/// A word of [`Table`]: its first 8 bytes (fewer when it is shorter) as
/// a number, to compare 8 bytes of text with at once.
#[derive(Debug, Clone, Copy)]
struct Cand {
    head: u64,
    /// The bytes of `head` the word fills.
    mask: u64,
    needle: u32,
}

/// Up to 8 bytes of `t` from `at`, lower-cased where they are letters
/// (as numbers: zero bytes past the end).
fn load8(t: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    match t.get(at..at + 8) {
        Some(full) => w.copy_from_slice(full),
        None => {
            let rest = t.get(at..).unwrap_or_default();
            w[..rest.len()].copy_from_slice(rest);
        }
    }
    // `| 0x20` lower-cases letters; it can turn a control byte into a
    // digit, which the exact comparison after it rules out.
    u64::from_le_bytes(w) | (ONES * 0x20)
}

/// Classes of bytes: `a`-`z` (either case) 0..26, `0`-`9` 26..36.
const CLASSES: usize = 36;
/// The class after the last byte of a run of letters and digits.
const NONE: usize = CLASSES;

fn class(b: u8) -> Option<usize> {
    match b {
        b'a'..=b'z' => Some(usize::from(b - b'a')),
        b'A'..=b'Z' => Some(usize::from(b - b'A')),
        b'0'..=b'9' => Some(26 + usize::from(b - b'0')),
        _ => None,
    }
}

impl Table {
    /// `None` when a word holds a byte no run of the normal form does.
    fn new(words: &[String], needles: &[Needle]) -> Option<Table> {
        let mut by_slot: Vec<Vec<usize>> = vec![Vec::new(); CLASSES * (CLASSES + 1)];
        for (k, w) in words.iter().enumerate() {
            let b = w.as_bytes();
            if b.is_empty()
                || b.iter()
                    .any(|&c| !(c.is_ascii_lowercase() || c.is_ascii_digit()))
            {
                return None;
            }
            let c0 = class(b[0])?;
            match b.get(1) {
                // A word of one letter: whatever follows it.
                None => {
                    for c1 in 0..=CLASSES {
                        by_slot[c0 * (CLASSES + 1) + c1].push(k);
                    }
                }
                Some(&x) => by_slot[c0 * (CLASSES + 1) + class(x)?].push(k),
            }
        }
        let mut slots = Vec::with_capacity(by_slot.len());
        let mut list = Vec::new();
        for mut v in by_slot {
            // Words are given longest first; keep that order.
            v.sort_unstable();
            let a = list.len() as u32;
            list.extend(v.into_iter().map(|k| {
                let w = words[k].as_bytes();
                let n = w.len().min(8);
                Cand {
                    head: load8(&w[..n], 0) & (u64::MAX >> (64 - 8 * n)),
                    mask: u64::MAX >> (64 - 8 * n),
                    needle: k as u32,
                }
            }));
            slots.push((a, list.len() as u32));
        }
        Some(Table {
            slots,
            list,
            anywhere: needles.iter().any(|n| !n.starts),
        })
    }

    /// Calls `hit(start, needle)` for every needle found at a word start
    /// of `text` (raw bytes), in order of start. The word starts of 64
    /// bytes at a time are found with word arithmetic ([`starts64`]); at
    /// each, only the words with its first two letters are compared.
    fn each(
        &self,
        text: &[u8],
        words: &[String],
        needles: &[Needle],
        mut hit: impl FnMut(usize, usize),
    ) {
        let mut carry = Carry::default();
        let mut block = [0u8; 64];
        for (b, chunk) in text.chunks(64).enumerate() {
            let bytes: &[u8; 64] = match chunk.try_into() {
                Ok(full) => full,
                // The last block, shorter: the rest are zero bytes (no
                // letter or digit).
                Err(_) => {
                    block[..chunk.len()].copy_from_slice(chunk);
                    &block
                }
            };
            let next = text.get((b + 1) * 64).copied().unwrap_or(0);
            let (starts, alnum) = starts64(bytes, next, &mut carry);
            let mut m = if self.anywhere { alnum } else { starts };
            while m != 0 {
                let at = b * 64 + m.trailing_zeros() as usize;
                m &= m - 1;
                self.at(text, at, words, needles, &mut hit);
            }
        }
    }

    /// The needles found at byte `at`.
    fn at(
        &self,
        text: &[u8],
        at: usize,
        words: &[String],
        needles: &[Needle],
        hit: &mut impl FnMut(usize, usize),
    ) {
        let key = load8(text, at);
        let Some(c0) = class(key as u8) else { return };
        let c1 = class((key >> 8) as u8).unwrap_or(NONE);
        let (a, b) = self.slots[c0 * (CLASSES + 1) + c1];
        for c in &self.list[a as usize..b as usize] {
            if key & c.mask != c.head {
                continue;
            }
            let k = c.needle as usize;
            let (Some(w), Some(nd)) = (words.get(k), needles.get(k)) else {
                continue;
            };
            let w = w.as_bytes();
            // A word is letters and digits: equal bytes lie in one run.
            if text
                .get(at..at + w.len())
                .is_some_and(|t| t.eq_ignore_ascii_case(w))
                && (!nd.starts || word_start(text, at))
                && (!nd.ends || word_start(text, at + w.len()))
            {
                hit(at, k);
            }
        }
    }
}

/// Shortest word that longer words starting with it are folded into.
const FOLD: usize = 5;

/// What [`starts64`] carries from one block of bytes to the next: the
/// classes of the block's last byte.
#[derive(Default)]
struct Carry {
    alnum: u64,
    upper: u64,
    lower_digit: u64,
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = 0x8080_8080_8080_8080;

/// The high bit of each byte of `y` (bytes under 0x80) that is `b` or
/// more: no byte of the sum carries into the next.
fn at_least(y: u64, b: u8) -> u64 {
    y.wrapping_add(ONES * u64::from(0x80 - b)) & HIGH
}

/// The high bits of the 8 bytes as 8 bits, byte `i` at bit `i`.
fn gather(m: u64) -> u64 {
    (m >> 7).wrapping_mul(0x0102_0408_1020_4080) >> 56
}

/// Upper-case letters, lower-case letters and digits of 8 bytes, one bit
/// per byte.
fn classes8(x: u64) -> [u64; 3] {
    let ascii = !x & HIGH;
    let y = x & !HIGH;
    let folded = y | (ONES * 0x20);
    let letter = at_least(folded, b'a') & !at_least(folded, b'z' + 1);
    let digit = at_least(y, b'0') & !at_least(y, b'9' + 1);
    let upper = at_least(y, b'A') & !at_least(y, b'Z' + 1);
    [
        gather(upper & ascii),
        gather(letter & !upper & ascii),
        gather(digit & ascii),
    ]
}

/// The word starts of the normal form (see [`word_start`]) among 64
/// bytes, one bit per byte, and their letters and digits. `next`: the byte
/// after them (0 at the end of the text).
fn starts64(bytes: &[u8; 64], next: u8, carry: &mut Carry) -> (u64, u64) {
    let (mut upper, mut lower, mut digit) = (0u64, 0u64, 0u64);
    for (k, c) in bytes.chunks_exact(8).enumerate() {
        let mut w = [0u8; 8];
        w.copy_from_slice(c);
        let [u, l, d] = classes8(u64::from_le_bytes(w));
        upper |= u << (8 * k);
        lower |= l << (8 * k);
        digit |= d << (8 * k);
    }
    let (lower_digit, alnum) = (lower | digit, upper | lower | digit);
    let prev = |m: u64, c: u64| (m << 1) | c;
    let next_lower = (lower >> 1) | (u64::from(next.is_ascii_lowercase()) << 63);
    let starts = alnum
        & (!prev(alnum, carry.alnum)
            | (upper
                & (prev(lower_digit, carry.lower_digit)
                    | (prev(upper, carry.upper) & next_lower))));
    *carry = Carry {
        alnum: alnum >> 63,
        upper: upper >> 63,
        lower_digit: lower_digit >> 63,
    };
    (starts, alnum)
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
        // The shortest such word: each prefix looked up, shortest first (a
        // scan of every pair cost a few million instructions per run).
        let known: std::collections::HashSet<&str> = texts.iter().map(String::as_str).collect();
        for t in &texts {
            let Some(short) = (FOLD..t.len())
                .filter_map(|k| t.get(..k))
                .find(|s| known.contains(s))
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
            needles.push(n);
        }
        Anchors {
            table: OnceLock::new(),
            short: OnceLock::new(),
            words,
            needles,
            unanchored,
            exact,
        }
    }

    /// The words looked for, longest first.
    #[cfg(test)]
    pub(super) fn words(&self) -> &[String] {
        &self.words
    }

    /// The pass over raw text; `None` when it cannot be built.
    fn table(&self) -> Option<&Table> {
        self.table
            .get_or_init(|| Table::new(&self.words, &self.needles))
            .as_ref()
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
        let table = self.table()?;
        // Every place a word starts, with the needles found there, in
        // order.
        let mut found: Vec<(usize, usize)> = Vec::new();
        table.each(text, &self.words, &self.needles, |s, j| found.push((s, j)));
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
        Some(span.is_some_and(|(s, e)| check(&text[s..e], &mut pats, &mut verify)))
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
    // Every place an anchor is found, the text around it is put in normal
    // form and tried: short words are found often, and a word missing
    // from `frequency` may be common, so short words get a floor and a
    // longer word of the same literal is looked for where there is one.
    // The floors were chosen for an earlier search that stopped inside
    // words too; with the pass over word starts they matter little
    // (callgrind on v5.1 GigaComputing: these 430.2M instructions, floors
    // of 200, 50, 20 and 5 429.7M).
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
    fn words_inside_words() {
        // A suffix literal's word need not start a word of the normal
        // form: every letter and digit is a place to look.
        let a = anchors(&["[a-z]*sgd"]);
        assert!(a.needles.iter().any(|n| !n.starts));
        assert_eq!(texts(spans(&a, "hook: powersgd\n")), ["powersgd"]);
        assert_eq!(texts(spans(&a, "x: PowerSGD")), ["PowerSGD"]);
        assert!(spans(&a, "x: sgdm").is_empty());
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
    fn word_starts_64_bytes_at_a_time() {
        // Every byte value, and the camelCase cases, across block edges.
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let alphabet = b"aZ0_ Bq9\xffx\x80AAb";
        for round in 0..400 {
            let len = round % 200;
            let t: Vec<u8> = (0..len)
                .map(|_| {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    if round % 2 == 0 {
                        alphabet[(seed % alphabet.len() as u64) as usize]
                    } else {
                        (seed >> 24) as u8
                    }
                })
                .collect();
            let want: Vec<usize> = (0..t.len())
                .filter(|&i| alnum(t[i]) && word_start(&t, i))
                .collect();
            let mut got = Vec::new();
            let mut carry = Carry::default();
            for (b, chunk) in t.chunks(64).enumerate() {
                let mut block = [0u8; 64];
                block[..chunk.len()].copy_from_slice(chunk);
                let next = t.get((b + 1) * 64).copied().unwrap_or(0);
                let (mut m, a) = starts64(&block, next, &mut carry);
                let alnums = (0..64).filter(|i| a >> i & 1 == 1).count();
                assert_eq!(alnums, chunk.iter().filter(|&&c| alnum(c)).count());
                while m != 0 {
                    got.push(b * 64 + m.trailing_zeros() as usize);
                    m &= m - 1;
                }
            }
            assert_eq!(got, want, "{:?}", String::from_utf8_lossy(&t));
        }
    }

    #[test]
    fn word_starts() {
        let t = b"aB1cDEf g";
        let starts: Vec<usize> = (0..=t.len()).filter(|&i| word_start(t, i)).collect();
        assert_eq!(starts, [0, 1, 4, 5, 7, 8, 9]);
    }
}
