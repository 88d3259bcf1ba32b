//! The `check` command that reproduces a verdict, shown in the HTML report:
//! the options that change the verdict, not the output options (`--format`,
//! `--html`), each word quoted for a POSIX shell.

use crate::app::cli::CheckArgs;
use crate::rulebook::source::RuleSource;

/// `mlaudit [--rules DIR] check [--usage U] --ruleset V [bypasses] -- PATH...`.
/// Paths come after `--`, so one that starts with `-` stays a path.
pub fn command_line(args: &CheckArgs, usage: &str, ruleset: &str, source: &RuleSource) -> String {
    let mut words: Vec<String> = vec!["mlaudit".into()];
    if let RuleSource::Dir(dir) = source {
        words.push("--rules".into());
        words.push(dir.display().to_string());
    }
    words.push("check".into());
    if usage != "training" {
        words.push("--usage".into());
        words.push(usage.to_string());
    }
    words.push("--ruleset".into());
    words.push(ruleset.to_string());
    for (on, flag) in [
        (args.rcp_bypass, "--rcp-bypass"),
        (args.seed_checker_bypass, "--seed-checker-bypass"),
        (args.rcp_bert_train_samples, "--rcp-bert-train-samples"),
    ] {
        if on {
            words.push(flag.into());
        }
    }
    if args
        .paths
        .iter()
        .any(|p| p.to_string_lossy().starts_with('-'))
    {
        words.push("--".into());
    }
    let mut quoted: Vec<String> = words.iter().map(|w| shell_word(w)).collect();
    quoted.extend(
        args.paths
            .iter()
            .map(|p| shell_path(p.as_os_str().as_encoded_bytes())),
    );
    quoted.join(" ")
}

/// A path's bytes as one shell word: [`shell_word`] when they are UTF-8,
/// else bash's `$'…'` with each other byte as `\xNN` (the path itself, not
/// a look-alike, so the command can be copied).
pub fn shell_path(bytes: &[u8]) -> String {
    if let Ok(s) = std::str::from_utf8(bytes) {
        return shell_word(s);
    }
    let mut out = String::from("$'");
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                '\\' => out.push_str("\\\\"),
                '\'' => out.push_str("\\'"),
                c if c.is_ascii_control() => out.push_str(&format!("\\x{:02x}", c as u32)),
                c if c.is_control() => out.push_str(&format!("\\u{:04x}", c as u32)),
                c => out.push(c),
            }
        }
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    out.push('\'');
    out
}

/// A display path (see [`crate::discover::paths::display_name`]: a byte
/// that is not UTF-8 shown as `\xNN`, `\` as `\\`) as one shell word
/// naming the real path.
pub fn shell_display_path(display: &str) -> String {
    if !display.contains('\\') {
        return shell_word(display);
    }
    let mut bytes = Vec::with_capacity(display.len());
    let mut rest = display.as_bytes();
    while let Some((&b, tail)) = rest.split_first() {
        if b == b'\\' {
            if let Some((b'\\', t)) = tail.split_first() {
                bytes.push(b'\\');
                rest = t;
                continue;
            }
            if let [b'x', h, l, t @ ..] = tail {
                let hex = [*h, *l];
                if let Some(v) = std::str::from_utf8(&hex)
                    .ok()
                    .and_then(|h| u8::from_str_radix(h, 16).ok())
                {
                    bytes.push(v);
                    rest = t;
                    continue;
                }
            }
        }
        bytes.push(b);
        rest = tail;
    }
    shell_path(&bytes)
}

/// `w` quoted for a POSIX shell when it needs to be (shlex, which refuses
/// only a NUL byte: no path or flag holds one, and it is shown as a
/// replacement character then).
pub fn shell_word(w: &str) -> String {
    match shlex::try_quote(w) {
        Ok(q) => q.into_owned(),
        Err(_) => shell_word(&w.replace('\0', "\u{fffd}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_words() {
        assert_eq!(shell_word("NVIDIA/results"), "NVIDIA/results");
        assert_eq!(shell_word("a b"), "'a b'");
        assert_eq!(shell_word("it's"), "\"it's\"");
        assert_eq!(shell_word(""), "''");
        assert_eq!(shell_word("a\0b"), "'a\u{fffd}b'");
    }

    #[test]
    fn paths_that_are_not_utf8_are_quoted_as_bytes() {
        assert_eq!(shell_path(b"P\xff/r"), "$'P\\xff/r'");
        assert_eq!(shell_path(b"it's\xfe"), "$'it\\'s\\xfe'");
        assert_eq!(shell_display_path("P\\xff/r"), "$'P\\xff/r'");
        assert_eq!(shell_display_path("a b"), "'a b'");
        // `\\` in a display path is one backslash of a UTF-8 name.
        assert_eq!(shell_display_path("a\\\\b"), shell_word("a\\b"));
    }
}
