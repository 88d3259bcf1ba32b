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
    scripts(code)
        .into_iter()
        .filter_map(|s| {
            let new = resolve(&s.old, &s.new, s.delimiter, s.extended)?;
            Some(Substitution {
                display: s.display,
                new,
            })
        })
        .collect()
}

/// One `s<d>OLD<d>NEW<d>FLAGS` script of a `sed` line, as written.
struct Script {
    display: String,
    old: String,
    new: String,
    flags: String,
    delimiter: char,
    extended: bool,
}

/// The `s` scripts of the `sed` commands of `code`.
fn scripts(code: &str) -> Vec<Script> {
    if !code.contains("sed") || !runs_sed(code) {
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
        let flags: String = b[end..]
            .iter()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect();
        out.push(Script {
            display: b[i..end].iter().collect(),
            old,
            new,
            flags,
            delimiter: d,
            extended,
        });
        i = end;
    }
    out
}

fn runs_sed(code: &str) -> bool {
    let word = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/');
    code.split(|c: char| !word(c))
        .any(|w| w.rsplit('/').next() == Some("sed"))
}

/// A substitution a `sed -i` line makes in the files it names, as a regex
/// and a replacement the `regex` crate runs ([`Edit::apply`]).
#[derive(Debug)]
pub(super) struct Edit {
    /// The script as written: `s/OLD/NEW/`.
    pub display: String,
    regex: regex::Regex,
    /// NEW in the `regex` crate's replacement syntax (`${1}`, `$$`).
    replacement: String,
    global: bool,
}

impl Edit {
    /// `line` as the substitution leaves it (sed works line by line).
    pub fn apply<'a>(&self, line: &'a str) -> std::borrow::Cow<'a, str> {
        if self.global {
            self.regex.replace_all(line, self.replacement.as_str())
        } else {
            self.regex.replace(line, self.replacement.as_str())
        }
    }
}

/// The in-place edits of a `sed -i` line (`-i`, `-i.bak`, `--in-place`)
/// and the files it names, when every script can be run here: a script
/// with a back reference in OLD, GNU case conversion in NEW or an
/// occurrence number gives nothing (what it writes is not told).
pub(super) fn in_place(code: &str) -> Option<(Vec<Edit>, Vec<String>)> {
    let found = scripts(code);
    if found.is_empty() {
        return None;
    }
    // The command's own words: from `sed` up to a pipe, a redirection or
    // the next command.
    let words = shell_words(code);
    let at = words
        .iter()
        .position(|(w, op)| !op && w.rsplit('/').next() == Some("sed"))?;
    let words: Vec<&str> = words[at + 1..]
        .iter()
        .take_while(|(_, op)| !op)
        .map(|(w, _)| w.as_str())
        .collect();
    let in_place = words.iter().any(|w| {
        (w.starts_with('-') && !w.starts_with("--") && w.contains('i'))
            || w.starts_with("--in-place")
    });
    if !in_place {
        return None;
    }
    let edits = found
        .iter()
        .map(|s| {
            let global = s.flags.contains('g');
            if s.flags
                .chars()
                .any(|c| c.is_ascii_digit() || c == 'e' || c == 'w')
            {
                return None;
            }
            let mut pattern = to_regex(&s.old, s.delimiter, s.extended)?;
            if s.flags.contains('I') || s.flags.contains('i') {
                pattern = format!("(?i){pattern}");
            }
            Some(Edit {
                display: s.display.clone(),
                regex: regex::Regex::new(&pattern).ok()?,
                replacement: to_replacement(&s.new)?,
                global,
            })
        })
        .collect::<Option<Vec<Edit>>>()?;
    let scripts: Vec<&str> = found.iter().map(|s| s.display.as_str()).collect();
    let targets = words
        .iter()
        .filter(|w| {
            !w.is_empty()
                && !w.starts_with('-')
                && !scripts.iter().any(|s| w.contains(s))
                && !w.contains(['$', '*', '?', '`', '{'])
        })
        .map(|w| w.to_string())
        .collect();
    Some((edits, targets))
}

/// The words of a shell line, quotes removed, and its operators (`|`,
/// `;`, `&`, `>`, `<`) as words of their own (`true`).
fn shell_words(code: &str) -> Vec<(String, bool)> {
    let mut out: Vec<(String, bool)> = Vec::new();
    let mut word = String::new();
    let mut quoted = false;
    let mut quote: Option<char> = None;
    let flush = |word: &mut String, quoted: &mut bool, out: &mut Vec<(String, bool)>| {
        if !word.is_empty() || *quoted {
            out.push((std::mem::take(word), false));
        }
        *quoted = false;
    };
    for c in code.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => word.push(c),
            None => match c {
                '\'' | '"' => {
                    quote = Some(c);
                    quoted = true;
                }
                '|' | ';' | '&' | '>' | '<' => {
                    flush(&mut word, &mut quoted, &mut out);
                    out.push((c.to_string(), true));
                }
                c if c.is_whitespace() => flush(&mut word, &mut quoted, &mut out),
                c => word.push(c),
            },
        }
    }
    flush(&mut word, &mut quoted, &mut out);
    out
}

/// OLD, a basic (or, with `extended`, an extended) POSIX regex, in the
/// `regex` crate's syntax; `None` for a back reference, which it lacks.
fn to_regex(old: &str, d: char, extended: bool) -> Option<String> {
    let mut out = String::new();
    let b: Vec<char> = old.chars().collect();
    let mut i = 0;
    // Whether a `*` here is a literal (at the start of a basic regex or
    // of a group).
    let mut at_start = true;
    while i < b.len() {
        let c = b[i];
        i += 1;
        let was_start = at_start;
        at_start = false;
        match c {
            '\\' => {
                let Some(&n) = b.get(i) else {
                    out.push_str("\\\\");
                    break;
                };
                i += 1;
                match n {
                    '1'..='9' => return None,
                    'n' => out.push_str("\\n"),
                    't' => out.push_str("\\t"),
                    'w' | 'W' | 's' | 'S' | 'b' | 'B' => {
                        out.push('\\');
                        out.push(n);
                    }
                    '<' => out.push_str("\\b{start}"),
                    '>' => out.push_str("\\b{end}"),
                    '(' | ')' | '{' | '}' | '+' | '?' | '|' if !extended && n != d => {
                        out.push(n);
                        at_start = n == '(' || n == '|';
                    }
                    _ => out.push_str(&regex::escape(&n.to_string())),
                }
            }
            '(' | ')' | '{' | '}' | '+' | '?' | '|' if !extended => {
                out.push_str(&regex::escape(&c.to_string()));
            }
            '(' | '|' => {
                out.push(c);
                at_start = true;
            }
            ')' | '{' | '}' | '+' | '?' => out.push(c),
            '*' if was_start && !extended => out.push_str("\\*"),
            '^' => {
                out.push(c);
                at_start = true;
            }
            '[' => {
                // A bracket expression: a `]` first is a member; POSIX
                // classes (`[:space:]`) are kept; a backslash is itself.
                out.push('[');
                if b.get(i) == Some(&'^') {
                    out.push('^');
                    i += 1;
                }
                let mut first = true;
                loop {
                    let &m = b.get(i)?;
                    i += 1;
                    match m {
                        ']' if !first => break,
                        '[' if matches!(b.get(i), Some(':' | '.' | '=')) => {
                            let close = [b[i], ']'];
                            let rest: String = b[i..].iter().collect();
                            let end = rest.find(close.iter().collect::<String>().as_str())?;
                            let class: String = b[i - 1..i + end + 2].iter().collect();
                            out.push_str(&class);
                            i += end + 2;
                        }
                        '\\' | '[' | ']' | '&' | '~' => {
                            out.push('\\');
                            out.push(m);
                        }
                        m => out.push(m),
                    }
                    first = false;
                }
                out.push(']');
            }
            '.' | '*' | '$' => out.push(c),
            c => out.push_str(&regex::escape(&c.to_string())),
        }
    }
    Some(out)
}

/// NEW in the `regex` crate's replacement syntax: `\1` is `${1}`, `&` is
/// `${0}`, a `$` is itself; `None` for GNU case conversion (`\U`).
fn to_replacement(new: &str) -> Option<String> {
    let mut out = String::new();
    let mut chars = new.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some(n @ '0'..='9') => out.push_str(&format!("${{{n}}}")),
                Some('U' | 'L' | 'u' | 'l' | 'E') => return None,
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some('$') => out.push_str("$$"),
                Some(other) => out.push(other),
                None => {}
            },
            '&' => out.push_str("${0}"),
            '$' => out.push_str("$$"),
            c => out.push(c),
        }
    }
    Some(out)
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
