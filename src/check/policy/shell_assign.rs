//! A shell assignment line (`export NAME=value`, `local`, `readonly`,
//! `declare -x NAME=value`, `NAME=value`), read without a regex: the
//! capturing regex it replaces,
//! `^\s*(?:export\s+|local\s+|readonly\s+|declare\s+(?:-[A-Za-z]+\s+)*)?([A-Za-z_][A-Za-z0-9_]*)=(.*)$`,
//! cost about 9,000 instructions per line of every shell config (callgrind),
//! and shell configs are always read. Same answers (the test below compares
//! both): `\s` is Unicode white space, as `char::is_whitespace`; the
//! repetitions are greedy over classes disjoint from what follows them, so
//! the only retry is without the keyword; `.*$` stops at no newline but
//! needs none to follow.

/// The name and the value (the rest of the line) of an assignment.
pub(super) fn shell_assign(code: &str) -> Option<(&str, &str)> {
    let rest = code.trim_start_matches(char::is_whitespace);
    after_keyword(rest)
        .and_then(name_value)
        .or_else(|| name_value(rest))
}

/// The text after a leading `export`, `local`, `readonly` or `declare`
/// keyword and its white space (and `declare`'s `-x` options), if any.
fn after_keyword(s: &str) -> Option<&str> {
    for kw in ["export", "local", "readonly", "declare"] {
        let Some(r) = s.strip_prefix(kw) else {
            continue;
        };
        let mut r = spaces(r)?;
        if kw == "declare" {
            // (?:-[A-Za-z]+\s+)*
            while let Some(o) = r.strip_prefix('-') {
                let letters = o.len()
                    - o.trim_start_matches(|c: char| c.is_ascii_alphabetic())
                        .len();
                if letters == 0 {
                    break;
                }
                match spaces(&o[letters..]) {
                    Some(next) => r = next,
                    None => break,
                }
            }
        }
        return Some(r);
    }
    None
}

/// `s` after one or more white space characters, `None` without any.
fn spaces(s: &str) -> Option<&str> {
    let t = s.trim_start_matches(char::is_whitespace);
    (t.len() < s.len()).then_some(t)
}

/// `NAME=value` at the start of `s`: `[A-Za-z_][A-Za-z0-9_]*=`, then a
/// value with no newline.
fn name_value(s: &str) -> Option<(&str, &str)> {
    let b = s.as_bytes();
    if !b
        .first()
        .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_')
    {
        return None;
    }
    let end = b
        .iter()
        .position(|c| !(c.is_ascii_alphanumeric() || *c == b'_'))?;
    let value = if b[end] == b'=' {
        &s[end + 1..]
    } else {
        // make's `NAME := value`, `NAME ::= value`, `NAME ?= value` (a
        // Makefile's variables; blanks around the operator allowed):
        // never a shell command.
        let op = s[end..].trim_start();
        let rest = ["::=", ":=", "?="]
            .iter()
            .find_map(|o| op.strip_prefix(o))?;
        rest.trim_start()
    };
    if value.contains('\n') {
        return None;
    }
    Some((&s[..end], value))
}

#[cfg(test)]
mod tests {
    use super::shell_assign;
    use regex::Regex;

    #[test]
    fn same_as_the_regex() {
        let re = Regex::new(
            r#"^\s*(?:export\s+|local\s+|readonly\s+|declare\s+(?:-[A-Za-z]+\s+)*)?([A-Za-z_][A-Za-z0-9_]*)=(.*)$"#,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        for line in [
            "export A=1",
            "  export\tA=\"x y\" # c",
            "A=1",
            "_a9=",
            "9A=1",
            "export=1",
            "export A B=1",
            "exportA=1",
            "export  A=1",
            "local x=2",
            "readonly Y=3",
            "declare -x -r Z=4",
            "declare -x- Z=4",
            "declare - Z=4",
            "declare -1 Z=4",
            "declare  Z=4",
            "declare -xZ=4",
            "declare=5",
            "declare -x",
            "\u{3000}export\u{a0}A=1",
            "A=1\nB=2",
            "A=x\r",
            "A==",
            "A =1",
            "",
            "   ",
            "export",
            "python train.py --lr=1",
            "X=${Y:-3}",
            "é=1",
            "Aé=1",
            "export é=1",
            "local -a A=1",
        ] {
            let want = re.captures(line).map(|c| {
                (
                    c.get(1).map_or("", |m| m.as_str()),
                    c.get(2).map_or("", |m| m.as_str()),
                )
            });
            assert_eq!(shell_assign(line), want, "{line:?}");
        }
    }

    /// A Makefile's variables: `:=`, `::=` and `?=`, blanks around.
    #[test]
    fn make_variables() {
        for (line, want) in [
            ("LORA_RANK ?= 8", Some(("LORA_RANK", "8"))),
            (
                "export BYTEPS_ENABLE_ASYNC := 1",
                Some(("BYTEPS_ENABLE_ASYNC", "1")),
            ),
            ("X::=a b", Some(("X", "a b"))),
            ("X != date", None),
            ("X = 1", None),
            ("x: y", None),
        ] {
            assert_eq!(shell_assign(line), want, "{line:?}");
        }
    }
}
