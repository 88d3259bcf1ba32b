//! Display paths: how a path is printed in findings and reports.
//!
//! A path is printed relative to what the user typed, with `/` separators:
//! `mlaudit check NVIDIA` reports `NVIDIA/results/...`, `mlaudit check .`
//! reports `results/...`, an absolute argument gives absolute paths.

/// The printable form of the root argument: `/` separators, no trailing `/`,
/// and `.`/`./` shown as the empty string (children then print bare).
pub fn display_root(arg: &std::path::Path) -> String {
    let mut s = match arg.to_str() {
        Some(text) => text.replace('\\', "/"),
        // Not UTF-8: each name shown unambiguously, as its files are.
        None => arg
            .as_os_str()
            .as_encoded_bytes()
            .split(|b| *b == b'/')
            .map(display_bytes)
            .collect::<Vec<_>>()
            .join("/"),
    };
    while s.len() > 1 && s.ends_with('/') {
        s.pop();
    }
    while let Some(rest) = s.strip_prefix("./") {
        s = rest.to_string();
    }
    if s == "." {
        s.clear();
    }
    s
}

/// A file name for display, unambiguous: valid UTF-8 as it is, each byte
/// that is not as `\xNN`, and so `\` as `\\` (`sys\xff` and `sys\xfe`
/// never both show as `sys\u{fffd}` and are never taken for one folder).
pub fn display_name(name: &std::ffi::OsStr) -> String {
    display_bytes(name.as_encoded_bytes())
}

/// [`display_name`] of a name's bytes.
fn display_bytes(bytes: &[u8]) -> String {
    if let Ok(s) = std::str::from_utf8(bytes) {
        if !s.contains('\\') {
            return s.to_string();
        }
    }
    let mut out = String::with_capacity(bytes.len() + 8);
    for chunk in bytes.utf8_chunks() {
        out.push_str(&chunk.valid().replace('\\', "\\\\"));
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    out
}

/// Most names a finding lists (files of a folder, runs); the rest are
/// counted: a folder of 100,000 files made one line of megabytes.
pub const MAX_NAMES_LISTED: usize = 20;

/// `a, b, c`, at most [`MAX_NAMES_LISTED`] names, then `and N more`.
pub fn name_list<S: AsRef<str>>(names: impl IntoIterator<Item = S>) -> String {
    let mut shown: Vec<String> = Vec::new();
    let mut more = 0usize;
    for n in names {
        if shown.len() < MAX_NAMES_LISTED {
            shown.push(n.as_ref().to_string());
        } else {
            more += 1;
        }
    }
    let mut out = shown.join(", ");
    if more > 0 {
        out.push_str(&format!(" and {more} more"));
    }
    out
}

/// `base` joined with `name` for display.
pub fn join(base: &str, name: &str) -> String {
    // Pushed, not formatted: a package walk joins every one of its
    // thousands of entries.
    let mut out = String::with_capacity(base.len() + 1 + name.len());
    out.push_str(base);
    if !base.is_empty() && !base.ends_with('/') {
        out.push('/');
    }
    out.push_str(name);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn roots_print_as_typed() {
        assert_eq!(display_root(Path::new("NVIDIA/")), "NVIDIA");
        assert_eq!(display_root(Path::new("./NVIDIA")), "NVIDIA");
        assert_eq!(display_root(Path::new(".")), "");
        assert_eq!(display_root(Path::new("/")), "/");
        assert_eq!(join("", "results"), "results");
        assert_eq!(join("/", "x"), "/x");
        assert_eq!(join("a/b", "c"), "a/b/c");
    }
}
