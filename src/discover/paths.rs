//! Display paths: how a path is printed in findings and reports.
//!
//! A path is printed relative to what the user typed, with `/` separators:
//! `mlaudit check NVIDIA` reports `NVIDIA/results/...`, `mlaudit check .`
//! reports `results/...`, an absolute argument gives absolute paths.

/// The printable form of the root argument: `/` separators, no trailing `/`,
/// and `.`/`./` shown as the empty string (children then print bare).
pub fn display_root(arg: &std::path::Path) -> String {
    let mut s = arg.to_string_lossy().replace('\\', "/");
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

/// `base` joined with `name` for display.
pub fn join(base: &str, name: &str) -> String {
    if base.is_empty() {
        name.to_string()
    } else if base.ends_with('/') {
        format!("{base}{name}")
    } else {
        format!("{base}/{name}")
    }
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
