//! A JSON reader that accepts what Python's `json.loads` accepts, as the
//! official checker reads MLLOG records with it.
//!
//! Besides RFC 8259 JSON it takes the bare tokens `NaN`, `Infinity` and
//! `-Infinity`, reads a number with a fraction or an exponent as a float
//! (`1e999` is infinity, as `float('1e999')` is), an integer of any size
//! (beyond 128 bits it becomes the nearest float), a lone UTF-16 surrogate
//! escape (read as U+FFFD, Rust strings cannot hold it), and a repeated
//! object key (the last one wins). Nesting deeper than [`MAX_DEPTH`] is an
//! error, as Python's recursion limit makes it one; nothing here recurses
//! without that bound or panics on any input.
//!
//! Two modes share one grammar: [`skip`] validates without allocating (used
//! for every record, most of which no rule reads), [`parse`] builds the rule
//! engine's value.

use minijinja::Value;
use std::fmt;

/// Deepest nesting of arrays and objects accepted. Python's `json` gives up
/// at its recursion limit (1000 by default) with a `RecursionError`.
pub const MAX_DEPTH: usize = 1000;

/// Why a text is not JSON as Python reads it; `at` is a 0-based byte offset.
#[derive(Debug, Clone, PartialEq)]
pub struct JsonError {
    pub at: usize,
    pub what: &'static str,
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at column {}", self.what, self.at + 1)
    }
}

type R<T> = Result<T, JsonError>;

struct Cursor<'a> {
    b: &'a [u8],
    i: usize,
}

/// The fields of a top-level object, as raw JSON slices (last one wins).
#[derive(Debug, Default, Clone, Copy)]
pub struct Fields<'a> {
    pub time_ms: Option<&'a str>,
    pub key: Option<&'a str>,
    pub event_type: Option<&'a str>,
    pub value: Option<&'a str>,
    pub metadata: Option<&'a str>,
}

/// Validates `text` as one JSON object and returns the raw text of the
/// fields an MLLOG record has. Not an object, bad JSON or trailing text is
/// an error.
/// The error [`record_fields`] gives for valid JSON that is not an object.
pub const NOT_AN_OBJECT: &str = "the record is not a JSON object";

pub fn record_fields(text: &str) -> R<Fields<'_>> {
    let mut c = Cursor {
        b: text.as_bytes(),
        i: 0,
    };
    c.ws();
    if c.peek() != Some(b'{') {
        // Valid JSON that is not an object is still a broken record.
        c.skip_value(0)?;
        c.ws();
        if c.i < c.b.len() {
            return Err(c.err("extra data after the JSON value"));
        }
        return Err(JsonError {
            at: 0,
            what: NOT_AN_OBJECT,
        });
    }
    c.i += 1;
    let mut fields = Fields::default();
    c.ws();
    if c.peek() == Some(b'}') {
        c.i += 1;
    } else {
        loop {
            c.ws();
            if c.peek() != Some(b'"') {
                return Err(c.err("expected a string key"));
            }
            let (ks, ke, escaped) = c.string_span()?;
            c.ws();
            c.expect(b':', "expected ':' after an object key")?;
            c.ws();
            let vs = c.i;
            c.skip_value(1)?;
            let raw = &text[vs..c.i];
            let name = if escaped { None } else { Some(&text[ks..ke]) };
            let name = match name {
                Some(n) => std::borrow::Cow::Borrowed(n),
                None => std::borrow::Cow::Owned(unescape(&text[ks - 1..ke + 1])),
            };
            match name.as_ref() {
                "time_ms" => fields.time_ms = Some(raw),
                "key" => fields.key = Some(raw),
                "event_type" => fields.event_type = Some(raw),
                "value" => fields.value = Some(raw),
                "metadata" => fields.metadata = Some(raw),
                _ => {}
            }
            c.ws();
            match c.next() {
                Some(b',') => continue,
                Some(b'}') => break,
                _ => {
                    c.i = c.i.saturating_sub(1);
                    return Err(c.err("expected ',' or '}' in an object"));
                }
            }
        }
    }
    c.ws();
    if c.i < c.b.len() {
        return Err(c.err("extra data after the JSON object"));
    }
    Ok(fields)
}

/// Checks that `text` is exactly one JSON value.
pub fn skip(text: &str) -> R<()> {
    let mut c = Cursor {
        b: text.as_bytes(),
        i: 0,
    };
    c.ws();
    c.skip_value(0)?;
    c.ws();
    if c.i < c.b.len() {
        return Err(c.err("extra data after the JSON value"));
    }
    Ok(())
}

/// Reads `text` (one JSON value) into a rule value.
pub fn parse(text: &str) -> R<Value> {
    let mut c = Cursor {
        b: text.as_bytes(),
        i: 0,
    };
    c.ws();
    let v = c.value(0)?;
    c.ws();
    if c.i < c.b.len() {
        return Err(c.err("extra data after the JSON value"));
    }
    Ok(v)
}

/// The string a JSON string literal (quotes included) stands for; any
/// problem yields the text between the quotes unchanged.
pub fn unescape(lit: &str) -> String {
    let mut c = Cursor {
        b: lit.as_bytes(),
        i: 0,
    };
    match c.string() {
        Ok(s) => s,
        Err(_) => lit.trim_matches('"').to_string(),
    }
}

/// A rule value read by [`parse`] as the `serde_json` value
/// `serde_json::from_str` gives for the same text, without reading the text
/// again: integers beyond 64 bits become floats, as serde_json reads them;
/// `NaN` and the infinities, which serde_json cannot hold, become `null`.
/// One difference: serde_json reads the integer `-0` as the float `-0.0`,
/// and the rule value cannot tell `-0` from `0` (the caller keeps the text).
pub fn to_serde(v: &Value) -> serde_json::Value {
    use minijinja::value::ValueKind;
    use serde_json::Value as J;
    let float = |f: f64| serde_json::Number::from_f64(f).map_or(J::Null, J::Number);
    match v.kind() {
        ValueKind::Bool => J::Bool(v.is_true()),
        ValueKind::Number if v.is_integer() => {
            if let Ok(i) = i64::try_from(v.clone()) {
                J::from(i)
            } else if let Ok(u) = u64::try_from(v.clone()) {
                J::from(u)
            } else {
                i128::try_from(v.clone()).map_or(J::Null, |i| float(i as f64))
            }
        }
        ValueKind::Number => f64::try_from(v.clone()).map_or(J::Null, float),
        ValueKind::String => J::String(v.as_str().unwrap_or_default().to_string()),
        ValueKind::Seq => J::Array(
            v.try_iter()
                .map(|items| items.map(|x| to_serde(&x)).collect())
                .unwrap_or_default(),
        ),
        ValueKind::Map => J::Object(
            v.as_object()
                .and_then(|o| o.try_iter_pairs())
                .map(|pairs| {
                    pairs
                        .map(|(k, x)| {
                            let k = k.as_str().map_or_else(|| k.to_string(), str::to_string);
                            (k, to_serde(&x))
                        })
                        .collect()
                })
                .unwrap_or_default(),
        ),
        _ => J::Null,
    }
}

/// A JSON string literal's text if it is one (quotes included).
pub fn as_string_literal(raw: &str) -> Option<String> {
    raw.starts_with('"').then(|| unescape(raw))
}

impl<'a> Cursor<'a> {
    fn err(&self, what: &'static str) -> JsonError {
        JsonError { at: self.i, what }
    }

    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn next(&mut self) -> Option<u8> {
        let c = self.peek();
        if c.is_some() {
            self.i += 1;
        }
        c
    }

    fn expect(&mut self, want: u8, what: &'static str) -> R<()> {
        if self.peek() == Some(want) {
            self.i += 1;
            Ok(())
        } else {
            Err(self.err(what))
        }
    }

    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.i += 1;
        }
    }

    fn word(&mut self, w: &[u8]) -> bool {
        if self.b[self.i..].starts_with(w) {
            self.i += w.len();
            true
        } else {
            false
        }
    }

    fn depth(&self, depth: usize) -> R<()> {
        if depth >= MAX_DEPTH {
            Err(self.err("JSON nested too deeply (Python's recursion limit)"))
        } else {
            Ok(())
        }
    }

    /// Skips one value, validating it.
    fn skip_value(&mut self, depth: usize) -> R<()> {
        match self.peek() {
            Some(b'{') => {
                self.depth(depth)?;
                self.i += 1;
                self.ws();
                if self.peek() == Some(b'}') {
                    self.i += 1;
                    return Ok(());
                }
                loop {
                    self.ws();
                    if self.peek() != Some(b'"') {
                        return Err(self.err("expected a string key"));
                    }
                    self.string_span()?;
                    self.ws();
                    self.expect(b':', "expected ':' after an object key")?;
                    self.ws();
                    self.skip_value(depth + 1)?;
                    self.ws();
                    match self.peek() {
                        Some(b',') => self.i += 1,
                        Some(b'}') => {
                            self.i += 1;
                            return Ok(());
                        }
                        _ => return Err(self.err("expected ',' or '}' in an object")),
                    }
                }
            }
            Some(b'[') => {
                self.depth(depth)?;
                self.i += 1;
                self.ws();
                if self.peek() == Some(b']') {
                    self.i += 1;
                    return Ok(());
                }
                loop {
                    self.ws();
                    self.skip_value(depth + 1)?;
                    self.ws();
                    match self.peek() {
                        Some(b',') => self.i += 1,
                        Some(b']') => {
                            self.i += 1;
                            return Ok(());
                        }
                        _ => return Err(self.err("expected ',' or ']' in an array")),
                    }
                }
            }
            Some(b'"') => self.string_span().map(|_| ()),
            _ => self.skip_scalar(),
        }
    }

    fn value(&mut self, depth: usize) -> R<Value> {
        match self.peek() {
            Some(b'{') => {
                self.depth(depth)?;
                self.i += 1;
                let mut items: Vec<(Value, Value)> = Vec::new();
                self.ws();
                if self.peek() == Some(b'}') {
                    self.i += 1;
                    return Ok(Value::from_iter(items));
                }
                loop {
                    self.ws();
                    if self.peek() != Some(b'"') {
                        return Err(self.err("expected a string key"));
                    }
                    let k = self.string()?;
                    self.ws();
                    self.expect(b':', "expected ':' after an object key")?;
                    self.ws();
                    let v = self.value(depth + 1)?;
                    items.push((Value::from(k), v));
                    self.ws();
                    match self.peek() {
                        Some(b',') => self.i += 1,
                        Some(b'}') => {
                            self.i += 1;
                            // Collecting into a map keeps the last of
                            // repeated keys, as Python's dict does.
                            return Ok(Value::from_iter(items));
                        }
                        _ => return Err(self.err("expected ',' or '}' in an object")),
                    }
                }
            }
            Some(b'[') => {
                self.depth(depth)?;
                self.i += 1;
                let mut items: Vec<Value> = Vec::new();
                self.ws();
                if self.peek() == Some(b']') {
                    self.i += 1;
                    return Ok(Value::from(items));
                }
                loop {
                    self.ws();
                    items.push(self.value(depth + 1)?);
                    self.ws();
                    match self.peek() {
                        Some(b',') => self.i += 1,
                        Some(b']') => {
                            self.i += 1;
                            return Ok(Value::from(items));
                        }
                        _ => return Err(self.err("expected ',' or ']' in an array")),
                    }
                }
            }
            Some(b'"') => self.string().map(Value::from),
            _ => self.scalar(),
        }
    }

    /// The word scalar (`true`, `false`, `null`, `NaN`, `Infinity`,
    /// `-Infinity`) at the cursor, consumed; `None` (nothing consumed) when
    /// there is none and a number may follow. The first byte picks the one
    /// word to compare.
    fn word_scalar(&mut self) -> Option<Value> {
        let (w, v): (&[u8], Value) = match self.peek()? {
            b't' => (b"true", Value::from(true)),
            b'f' => (b"false", Value::from(false)),
            b'n' => (b"null", Value::from(())),
            b'N' => (b"NaN", Value::from(f64::NAN)),
            b'I' => (b"Infinity", Value::from(f64::INFINITY)),
            b'-' if self.b.get(self.i + 1) == Some(&b'I') => {
                (b"-Infinity", Value::from(f64::NEG_INFINITY))
            }
            _ => return None,
        };
        self.word(w).then_some(v)
    }

    /// `true`, `false`, `null`, a number, `NaN`, `Infinity`, `-Infinity`.
    fn scalar(&mut self) -> R<Value> {
        match self.word_scalar() {
            Some(v) => Ok(v),
            None => self.number(),
        }
    }

    fn digits(&mut self) -> usize {
        let start = self.i;
        while let Some(b'0'..=b'9') = self.peek() {
            self.i += 1;
        }
        self.i - start
    }

    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?`, as Python's scanner.
    /// Returns its start and whether it is a float.
    fn number_span(&mut self) -> R<(usize, bool)> {
        let start = self.i;
        if self.peek() == Some(b'-') {
            self.i += 1;
        }
        match self.peek() {
            Some(b'0') => self.i += 1,
            Some(b'1'..=b'9') => {
                self.digits();
            }
            _ => {
                self.i = start;
                return Err(self.err("expected a JSON value"));
            }
        }
        let mut float = false;
        if self.peek() == Some(b'.') && matches!(self.b.get(self.i + 1), Some(b'0'..=b'9')) {
            self.i += 1;
            self.digits();
            float = true;
        }
        if let Some(b'e' | b'E') = self.peek() {
            let save = self.i;
            self.i += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.i += 1;
            }
            if self.digits() == 0 {
                // Python stops the number before a bare 'e'.
                self.i = save;
            } else {
                float = true;
            }
        }
        Ok((start, float))
    }

    fn number(&mut self) -> R<Value> {
        let (start, float) = self.number_span()?;
        // Only ASCII bytes were consumed, so this slice is valid UTF-8.
        let text = std::str::from_utf8(&self.b[start..self.i]).unwrap_or("0");
        if !float {
            if let Ok(i) = text.parse::<i64>() {
                return Ok(Value::from(i));
            }
            if let Ok(u) = text.parse::<u64>() {
                return Ok(Value::from(u));
            }
            if let Ok(i) = text.parse::<i128>() {
                return Ok(Value::from(i));
            }
        }
        // Rust's parser rounds like Python's float() and overflows to ±inf.
        Ok(Value::from(text.parse::<f64>().unwrap_or(f64::NAN)))
    }

    /// Skips a scalar without building it (a word's value has no heap part).
    fn skip_scalar(&mut self) -> R<()> {
        match self.word_scalar() {
            Some(_) => Ok(()),
            None => self.number_span().map(|_| ()),
        }
    }

    /// Skips a string literal; returns the span of its contents and whether
    /// it has escapes.
    fn string_span(&mut self) -> R<(usize, usize, bool)> {
        self.expect(b'"', "expected a string")?;
        let start = self.i;
        let mut escaped = false;
        loop {
            self.i += plain_run(&self.b[self.i.min(self.b.len())..]);
            let Some(&c) = self.b.get(self.i) else { break };
            match c {
                b'"' => {
                    let end = self.i;
                    self.i += 1;
                    return Ok((start, end, escaped));
                }
                b'\\' => {
                    escaped = true;
                    self.escape(&mut None)?;
                }
                // Control characters are not allowed in strings (strict mode).
                0..=0x1f => return Err(self.err("control character in a string")),
                _ => self.i += 1,
            }
        }
        Err(self.err("unterminated string"))
    }

    /// Reads a string literal into a Rust string.
    fn string(&mut self) -> R<String> {
        let save = self.i;
        let (s, e, escaped) = self.string_span()?;
        if !escaped {
            // The input is a &str and the span sits between ASCII quotes.
            return Ok(String::from_utf8_lossy(&self.b[s..e]).into_owned());
        }
        self.i = save + 1;
        let mut out = String::with_capacity(e - s);
        loop {
            let rest = &self.b[self.i..];
            let j = memchr::memchr2(b'"', b'\\', rest).unwrap_or(rest.len());
            out.push_str(&String::from_utf8_lossy(&rest[..j]));
            self.i += j;
            match self.peek() {
                Some(b'"') => {
                    self.i += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    let mut sink = Some(&mut out);
                    self.escape(&mut sink)?;
                }
                _ => return Err(self.err("unterminated string")),
            }
        }
    }

    fn hex4(&mut self) -> R<u32> {
        let Some(h) = self.b.get(self.i..self.i + 4) else {
            return Err(self.err("bad \\u escape"));
        };
        let mut n = 0u32;
        for &c in h {
            let d = (c as char)
                .to_digit(16)
                .ok_or_else(|| self.err("bad \\u escape"))?;
            n = n * 16 + d;
        }
        self.i += 4;
        Ok(n)
    }

    /// Reads one escape sequence (at a backslash), appending it to `out`.
    fn escape(&mut self, out: &mut Option<&mut String>) -> R<()> {
        self.i += 1;
        let c = match self.next() {
            Some(b'"') => '"',
            Some(b'\\') => '\\',
            Some(b'/') => '/',
            Some(b'b') => '\u{8}',
            Some(b'f') => '\u{c}',
            Some(b'n') => '\n',
            Some(b'r') => '\r',
            Some(b't') => '\t',
            Some(b'u') => {
                let hi = self.hex4()?;
                let code = if (0xd800..0xdc00).contains(&hi)
                    && self.b.get(self.i..self.i + 2) == Some(b"\\u")
                {
                    let save = self.i;
                    self.i += 2;
                    let lo = self.hex4()?;
                    if (0xdc00..0xe000).contains(&lo) {
                        0x10000 + ((hi - 0xd800) << 10) + (lo - 0xdc00)
                    } else {
                        self.i = save;
                        hi
                    }
                } else {
                    hi
                };
                char::from_u32(code).unwrap_or('\u{fffd}')
            }
            _ => {
                self.i = self.i.saturating_sub(1);
                return Err(self.err("invalid escape in a string"));
            }
        };
        if let Some(o) = out {
            o.push(c);
        }
        Ok(())
    }
}

/// How many bytes at the start of `b` a string literal holds before its
/// first `"`, `\\` or control character, eight bytes at a time (the
/// classic "has a zero byte" / "has a byte less than" word tests); the
/// last few bytes (fewer than eight) are left to the caller's byte loop.
/// MLLOG metadata is mostly plain strings (file names, messages).
#[inline]
fn plain_run(b: &[u8]) -> usize {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    let mut n = 0;
    while let Some(chunk) = b.get(n..n + 8) {
        let mut w = [0u8; 8];
        w.copy_from_slice(chunk);
        let x = u64::from_le_bytes(w);
        // A byte below 0x20, or equal to '"' or '\\'. Bytes >= 0x80 never
        // count as below 0x20: their high bit is masked out by `!x`.
        let lt = x.wrapping_sub(LO * 0x20) & !x & HI;
        let q = x ^ (LO * u64::from(b'"'));
        let bs = x ^ (LO * u64::from(b'\\'));
        let eq_q = q.wrapping_sub(LO) & !q & HI;
        let eq_bs = bs.wrapping_sub(LO) & !bs & HI;
        let hit = lt | eq_q | eq_bs;
        if hit != 0 {
            // A borrow can only flag bytes above (after) a special one, so
            // the lowest flag is the first special byte.
            return n + (hit.trailing_zeros() / 8) as usize;
        }
        n += 8;
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_runs_stop_at_the_first_special_byte() {
        // The word-at-a-time scan against the plain definition, for every
        // position of every special byte and a few neighbours.
        let slow = |b: &[u8]| {
            b.iter()
                .position(|&c| c == b'"' || c == b'\\' || c < 0x20)
                .unwrap_or(b.len())
        };
        for special in [b'"', b'\\', 0x00, 0x1f, b'\n'] {
            for len in 0..40 {
                for at in 0..len {
                    for fill in [b'a', 0x21, 0x7f, 0x80, 0xff, b'!', b'#', b'[', b']'] {
                        let mut b = vec![fill; len];
                        b[at] = special;
                        let fast = plain_run(&b);
                        let tail = len - len % 8;
                        let want = slow(&b);
                        // Exact within whole words; the tail is the caller's.
                        if want < tail {
                            assert_eq!(fast, want, "{b:?}");
                        } else {
                            assert_eq!(fast, tail, "{b:?}");
                        }
                    }
                }
            }
        }
        // Two special bytes in one word: the first counts.
        assert_eq!(plain_run(b"ab\x01c\"defgh"), 2);
        assert_eq!(plain_run("aé€\u{1F600}xxxxxxxx".as_bytes()), 16);
    }

    #[test]
    fn python_extensions() {
        let v = parse("[NaN, Infinity, -Infinity, 1e999, -1e999, 1.5, 7]").unwrap_or_default();
        let items: Vec<Value> = v.try_iter().map(|i| i.collect()).unwrap_or_default();
        let f = |i: usize| f64::try_from(items[i].clone()).unwrap_or(0.0);
        assert!(f(0).is_nan());
        assert_eq!(f(1), f64::INFINITY);
        assert_eq!(f(2), f64::NEG_INFINITY);
        assert_eq!(f(3), f64::INFINITY);
        assert_eq!(f(4), f64::NEG_INFINITY);
        assert_eq!(f(5), 1.5);
        assert_eq!(items[6], Value::from(7));
        assert!(skip("[NaN, -Infinity]").is_ok());
    }

    #[test]
    fn strict_like_python() {
        for bad in [
            "",
            "[",
            "{",
            "[1,]",
            "{\"a\":1,}",
            "01",
            "1.",
            "-",
            "nan",
            "'a'",
            "\"a\nb\"",
            "[1] x",
            "\"\\x\"",
            "{\"a\" 1}",
            "-NaN",
            "\"\\u12\"",
        ] {
            assert!(parse(bad).is_err(), "{bad:?} should not parse");
            assert!(skip(bad).is_err(), "{bad:?} should not validate");
        }
    }

    #[test]
    fn strings_and_objects() {
        let v = parse(r#"{"a": "x\u00e9\ud83d\ude00\ud800", "a": 2, "b": [true, null]}"#)
            .unwrap_or_default();
        assert_eq!(v.get_attr("a").ok(), Some(Value::from(2)));
        let v = parse(r#""x\u00e9\ud83d\ude00\ud800\n""#).unwrap_or_default();
        assert_eq!(v.as_str(), Some("x\u{e9}\u{1f600}\u{fffd}\n"));
        assert_eq!(
            parse("123456789012345678901234567890")
                .ok()
                .map(|v| v.kind()),
            Some(minijinja::value::ValueKind::Number)
        );
    }

    #[test]
    fn depth_is_bounded() {
        let deep = "[".repeat(200_000);
        assert!(parse(&deep).is_err());
        assert!(skip(&deep).is_err());
        let ok = format!("{}{}", "[".repeat(MAX_DEPTH - 1), "]".repeat(MAX_DEPTH - 1));
        assert!(parse(&ok).is_ok());
    }

    #[test]
    fn to_serde_reads_as_serde_json_does() {
        for text in [
            "null",
            "true",
            "-0.0",
            "1.0",
            "7",
            "18446744073709551615",
            "-9223372036854775808",
            "123456789012345678901234567890",
            "1.5e3",
            "0.7512345",
            "\"caf\\u00e9 \\\"q\\\"\"",
            "[1, [2.5, \"x\"], {}]",
            "{\"b\": 1, \"a\": {\"c\": [null, false]}, \"b\": 2}",
        ] {
            let ours = to_serde(&parse(text).unwrap_or_default());
            let theirs: serde_json::Value = serde_json::from_str(text).unwrap_or_default();
            assert_eq!(ours, theirs, "{text}");
            assert_eq!(ours.to_string(), theirs.to_string(), "{text}");
        }
        // What serde_json cannot read, it read through the rule value: null.
        let v = to_serde(&parse("[NaN, Infinity, 1e999, 2]").unwrap_or_default());
        assert_eq!(v, serde_json::json!([null, null, null, 2]));
    }

    #[test]
    fn record_fields_last_wins_and_rejects_non_objects() {
        let f = record_fields(r#"{"key": "a", "k\u0065y": "b", "value": NaN, "metadata": {}}"#);
        let f = f.unwrap_or_default();
        assert_eq!(f.key, Some("\"b\""));
        assert_eq!(f.value, Some("NaN"));
        assert!(record_fields("[1]").is_err());
        assert!(record_fields("{} extra").is_err());
    }
}
