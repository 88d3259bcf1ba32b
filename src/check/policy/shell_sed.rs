//! The substitutions of a `sed` command on a shell line: a run script that
//! edits its config before the run (`sed -i 's/optimizer: adamw/optimizer:
//! lamb/' conf.yaml`, `sed -i "s|--opt adam|--opt lamb|" run.sh`) sets
//! what the replacement text says. This finds each `s<d>OLD<d>NEW<d>`
//! script and gives NEW as it will read in the edited file, for the shell
//! reader to read as a config fragment.
//!
//! Back references: `\1` to `\9` take the text of that group of OLD and
//! `&` the whole of OLD, when that text is literal (no regex operator in
//! it); a replacement that refers to anything else is left out, as what
//! it writes cannot be told from the line.

/// Characters that make a regex text more than a literal.
const OPERATORS: &[char] = &['.', '[', ']', '*', '^', '$', '+', '?', '{', '}', '|'];

/// A `sed` substitution found on a line.
#[derive(Debug, PartialEq)]
pub(super) struct Substitution {
    /// The script as written, for messages: `s/OLD/NEW/`.
    pub display: String,
    /// The replacement with its escapes and back references resolved.
    pub new: String,
}

/// The substitutions of the `sed` commands of `code` (none on a line that
/// runs no `sed`).
pub(super) fn substitutions(code: &str) -> Vec<Substitution> {
    if !code.contains("sed") {
        return Vec::new();
    }
    let word = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/');
    let runs_sed = code
        .split(|c: char| !word(c))
        .any(|w| w.rsplit('/').next() == Some("sed"));
    if !runs_sed {
        return Vec::new();
    }
    // Extended regexes (`-E`, `-r`): groups are `(...)`, not `\(...\)`.
    let extended = code.split_whitespace().any(|w| {
        w.starts_with('-') && !w.starts_with("--") && (w.contains('E') || w.contains('r'))
    });
    let b: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i + 1 < b.len() {
        let starts = b[i] == 's'
            && (i == 0 || matches!(b[i - 1], ' ' | '\'' | '"' | ';' | '{' | '\t'))
            && is_delimiter(b[i + 1]);
        if !starts {
            i += 1;
            continue;
        }
        let d = b[i + 1];
        let Some((old, after_old)) = part(&b, i + 2, d) else {
            break;
        };
        let Some((new, end)) = part(&b, after_old, d) else {
            break;
        };
        let display: String = b[i..end].iter().collect();
        if let Some(new) = resolve(&old, &new, d, extended) {
            out.push(Substitution { display, new });
        }
        i = end;
    }
    out
}

/// The folder holding the YAML file a `sed` line edits (its last word
/// that names a `.yaml` or `.yml` file): what the file's keys sit under
/// when it is an option of a Hydra config group (`conf/optim/adam.yaml`
/// is read as `optim`; see `hydra_package.rs`). `None` without such a
/// word, or when the file's folder is not named literally.
pub(super) fn target_folder(code: &str) -> Option<String> {
    let word = code
        .split_whitespace()
        .map(|w| w.trim_matches(['"', '\'', ';']))
        .rfind(|w| w.ends_with(".yaml") || w.ends_with(".yml"))?;
    let (dir, _) = word.rsplit_once('/')?;
    let folder = dir.rsplit('/').next()?;
    let literal = !folder.is_empty()
        && folder != "."
        && folder != ".."
        && folder
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
    literal.then(|| folder.to_string())
}

fn is_delimiter(c: char) -> bool {
    matches!(c, '/' | '|' | '#' | ',' | '@' | '!' | '%' | '+' | '~' | ':')
}

/// The text from `at` up to the next `d` not escaped by a backslash (kept
/// as written), and the index after that `d`.
fn part(b: &[char], at: usize, d: char) -> Option<(String, usize)> {
    let mut s = String::new();
    let mut i = at;
    while i < b.len() {
        match b[i] {
            '\\' if i + 1 < b.len() => {
                s.push('\\');
                s.push(b[i + 1]);
                i += 2;
            }
            c if c == d => return Some((s, i + 1)),
            c => {
                s.push(c);
                i += 1;
            }
        }
    }
    None
}

/// NEW as it will be written: escapes undone, back references replaced by
/// the literal text they stand for; `None` when one stands for more than
/// a literal.
fn resolve(old: &str, new: &str, d: char, extended: bool) -> Option<String> {
    let groups = groups(old, d, extended);
    let whole = literal(old, d, extended);
    let mut out = String::new();
    let mut chars = new.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some(n @ '1'..='9') => {
                    let k = n as usize - '1' as usize;
                    out.push_str(groups.get(k)?.as_deref()?);
                }
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some(other) => out.push(other),
                None => {}
            },
            '&' => out.push_str(whole.as_deref()?),
            c => out.push(c),
        }
    }
    Some(out)
}

/// The text of each group of `old`, in order, when it is a literal.
fn groups(old: &str, d: char, extended: bool) -> Vec<Option<String>> {
    let (open, close) = if extended { ("(", ")") } else { ("\\(", "\\)") };
    let mut out = Vec::new();
    let mut rest = old;
    while let Some(at) = rest.find(open) {
        // `\(` in an extended regex is a literal parenthesis.
        if extended && rest[..at].ends_with('\\') {
            rest = &rest[at + open.len()..];
            continue;
        }
        let inner = &rest[at + open.len()..];
        let Some(end) = inner.find(close) else {
            break;
        };
        out.push(literal(&inner[..end], d, extended));
        rest = &inner[end + close.len()..];
    }
    out
}

/// `text` as the literal it matches, when it has no regex operator (an
/// escaped one stands for itself); `None` otherwise.
fn literal(text: &str, d: char, extended: bool) -> Option<String> {
    let mut out = String::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                let n = chars.next()?;
                // `\(`, `\)`, `\s`, `\w`...: groups and classes of basic
                // regexes; an escaped operator or delimiter is itself.
                if OPERATORS.contains(&n) || n == d || n == '\\' || n == '/' {
                    out.push(n);
                } else if !extended && matches!(n, '(' | ')') {
                } else {
                    return None;
                }
            }
            c if OPERATORS.contains(&c) => return None,
            '(' | ')' if extended => {}
            c => out.push(c),
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn news(code: &str) -> Vec<String> {
        substitutions(code).into_iter().map(|s| s.new).collect()
    }

    #[test]
    fn replacements_of_a_sed_line() {
        assert_eq!(
            news("sed -i 's/name: fused_adam/name: lamb/' conf/c.yaml"),
            ["name: lamb"]
        );
        assert_eq!(
            news(r#"sed -i "s|--optimizer adam|--optimizer lamb|g" run.sh"#),
            ["--optimizer lamb"]
        );
        // Escaped delimiters, and two scripts with -e.
        assert_eq!(
            news(r"sed -e 's/a\/b: 1/a\/b: 2/' -e 's/x=1/x=2/' f"),
            ["a/b: 2", "x=2"]
        );
        // Back references to literal groups, and `&`.
        assert_eq!(
            news(r"sed -i 's/\(optimizer: \).*/\1lamb/' c.yaml"),
            ["optimizer: lamb"]
        );
        assert_eq!(
            news(r"sed -E 's/(opt_name=)adam/\1lamb/' c.sh"),
            ["opt_name=lamb"]
        );
        assert_eq!(news("sed 's/lamb/&_v2/' c"), ["lamb_v2"]);
        // A reference to a pattern, not a literal: left out.
        assert!(news(r"sed 's/\(opt.*\)=adam/\1=lamb/' c").is_empty());
        assert!(news(r"sed 's/.*adam/&x/' c").is_empty());
        // No sed on the line, or names edited to nothing.
        assert!(news("echo 's/name: a/name: lamb/'").is_empty());
        assert_eq!(news(r"x=$(basename $f | sed 's/^config_//')"), [""]);
        // `s` inside a word is no script.
        assert!(news("sed -n 'p;adds/a/b/' f").is_empty());
    }

    /// The folder of the YAML file a `sed` line edits, when it is named
    /// literally.
    #[test]
    fn the_edited_yaml_files_folder() {
        let t = |code: &str| target_folder(code);
        assert_eq!(
            t("sed -i 's/a/b/' conf/optim/adam.yaml").as_deref(),
            Some("optim")
        );
        assert_eq!(
            t("sed -i \"s/a/b/\" \"./conf/c.yml\";").as_deref(),
            Some("conf")
        );
        assert_eq!(t("sed -i 's/a/b/' c.yaml"), None);
        assert_eq!(t("sed -i 's/a/b/' ./c.yaml"), None);
        assert_eq!(t("sed -i 's/a/b/' ${D}/c.yaml"), None);
        assert_eq!(t("sed -i 's/a/b/' run.sh"), None);
    }
}
