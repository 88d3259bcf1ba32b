//! Escaping for human-readable output (text, GitHub annotations, the
//! hook's refusal, error messages): a value read from a log or a file name
//! must not move the cursor, set the terminal title, start a new line that
//! looks like mlaudit's own, or reorder text with bidirectional controls.
//!
//! Control characters (C0, DEL, C1) and Unicode bidirectional and
//! invisible formatting characters are written as escapes: `\n`, `\r`,
//! `\t`, `\x1b`, `\u{202e}`. Everything else, including non-ASCII text,
//! is kept as it is. Machine formats (JSON, SARIF, JUnit) keep the raw
//! value: their own encoding already makes it inert.

use std::borrow::Cow;

/// Whether `c` is written as an escape.
pub fn is_unsafe(c: char) -> bool {
    c.is_control()
        || matches!(c,
            '\u{200b}'..='\u{200f}'   // zero-width spaces and joiners, LRM, RLM
            | '\u{2028}' | '\u{2029}' // line and paragraph separators
            | '\u{202a}'..='\u{202e}' // bidi embeddings and overrides
            | '\u{2060}'..='\u{2069}' // word joiner, bidi isolates
            | '\u{feff}'              // byte order mark
        )
}

/// `s` with every unsafe character escaped; borrowed when there is none.
pub fn text(s: &str) -> Cow<'_, str> {
    if !s.chars().any(is_unsafe) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        push(&mut out, c);
    }
    Cow::Owned(out)
}

/// Appends `c` to `out`, escaped when unsafe.
pub fn push(out: &mut String, c: char) {
    match c {
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        c if is_unsafe(c) && (c as u32) < 0x80 => {
            out.push_str(&format!("\\x{:02x}", c as u32));
        }
        c if is_unsafe(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
        c => out.push(c),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_controls_and_keeps_the_rest() {
        assert_eq!(text("plain é ✓"), "plain é ✓");
        assert!(matches!(text("plain"), Cow::Borrowed(_)));
        assert_eq!(text("a\nPASS\x1b[2J"), "a\\nPASS\\x1b[2J");
        assert_eq!(text("\u{9b}x\u{202e}"), "\\u{9b}x\\u{202e}");
        assert_eq!(text("\t\r\x7f"), "\\t\\r\\x7f");
    }
}
