//! Reading implementation configs (shell, YAML, JSON, TOML, INI, `.env`,
//! Dockerfile) into settings with line numbers, and finding the
//! update-consistency signals in them.
//!
//! The readers are line based and forgiving: they never fail on odd input,
//! they only find fewer settings. What they produce:
//! - a key with its path of parent keys (YAML nesting, TOML/INI sections)
//!   and its value; a key whose value is a nested block is a *header*;
//! - a command-line flag (`--name value`, `--name=value`), anywhere in any
//!   file (shell scripts, YAML argument lists, JSON arrays);
//! - an environment assignment (`export NAME=value`, `NAME=value`,
//!   `${NAME:-value}`, Dockerfile `ENV`/`ARG`).

use super::config_json::{json_entries, parse_json, parse_proto};
use super::frameworks::Frameworks;
use super::interpolate::{expand, unresolved, Env};
use super::prefilter::Prefilter;
use super::shell_assign::shell_assign;
use super::signals::{normalize, unquote, SignalMatcher};
use super::yaml_alias::{split_anchor, Aliases};
use regex::Regex;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::OnceLock;

/// What kind of setting an entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum EntryKind {
    /// A key with a value; `header` when its value is a nested block.
    Key { header: bool },
    /// A command-line flag; an empty value means the flag is given alone.
    Flag,
    /// A value with no key of its own (a YAML list item).
    Value,
    /// A shell condition over one variable (`if [ "${X:-0}" = 1 ]; then`,
    /// an `else`, `[ ... ] &&`): the settings up to the matching
    /// [`EntryKind::GuardEnd`] apply only when it holds. `value` is the
    /// condition as [`super::shell_guard::condition`] stores it.
    Guard,
    /// The end of the innermost guard (`fi`).
    GuardEnd,
    /// A shell script reads another (`source FILE`, `. FILE`); `value`
    /// is the file as written. No setting: what the file it names sets
    /// is the run's too, and a package that lacks it leaves the defaults
    /// of its variables open ([`super::config_log`]).
    Source,
}

/// One setting found in a config file.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Entry {
    /// 1-based line.
    pub line: u64,
    /// Parent keys and the key itself; for a flag, its name without dashes;
    /// for a value, the parent keys.
    pub path: Vec<String>,
    /// The value as written, quotes removed; empty when there is none.
    pub value: String,
    pub kind: EntryKind,
    /// How the setting reads in the file, for messages.
    pub display: String,
}

/// How a file is read, from its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    Shell,
    Yaml,
    Json,
    /// TOML, INI, `.cfg`, `.conf`: `[section]` and `key = value`.
    Ini,
    /// Protobuf's text format (`.pbtxt`, `.prototxt`): `name: value` and
    /// `name { ... }`.
    Proto,
}

/// The format of a file by its name, or `None` when it is not a config the
/// signal data lists.
pub fn format_of(name: &str, extensions: &[String], names: &[String]) -> Option<Format> {
    let lower = name.to_lowercase();
    // A name with `*` (`Dockerfile.*`) is a pattern, compared lower-cased.
    let named = |n: &String| {
        n == name || (n.contains('*') && super::signals::wildcard(&n.to_lowercase(), &lower))
    };
    if names.iter().any(named) {
        return Some(
            if lower == "dockerfile" || lower.ends_with(".env") || lower == ".env" {
                Format::Shell
            } else {
                by_extension(&lower)
            },
        );
    }
    let ext = lower.rsplit_once('.').map(|(_, e)| e)?;
    if !extensions.iter().any(|e| e.eq_ignore_ascii_case(ext)) {
        return None;
    }
    Some(by_extension(&lower))
}

fn by_extension(lower: &str) -> Format {
    match lower.rsplit_once('.').map(|(_, e)| e).unwrap_or("") {
        "yaml" | "yml" => Format::Yaml,
        // JSON with comments, JSON5 and Jsonnet (AllenNLP's configs) read
        // as the forgiving JSON scanner reads them: bare keys, ' strings.
        "json" | "jsonc" | "json5" | "jsonnet" | "libsonnet" => Format::Json,
        // A gin file's bindings are `scope/fn.param = value` lines; Java
        // properties are `a.b = value` lines.
        "toml" | "ini" | "cfg" | "conf" | "gin" | "properties" => Format::Ini,
        "pbtxt" | "prototxt" | "textproto" | "txtpb" | "textpb" => Format::Proto,
        _ => Format::Shell,
    }
}

fn re(cell: &'static OnceLock<Option<Regex>>, src: &str) -> Option<&'static Regex> {
    cell.get_or_init(|| Regex::new(src).ok()).as_ref()
}

fn flag_re() -> Option<&'static Regex> {
    static R: OnceLock<Option<Regex>> = OnceLock::new();
    re(
        &R,
        r#"(?:^|[\s"'\[,(=])--([A-Za-z][A-Za-z0-9_.\-]*)(?:=(\\"[^"\\]*\\"|\\'[^'\\]*\\'|"[^"]*"|'[^']*'|[^\s"',\])]+)|[ \t]+(\\"[^"\\]*\\"|\\'[^'\\]*\\'|"[^"]*"|'[^']*'|[^\s"',\])\\\-][^\s"',\])]*))?"#,
    )
}

fn docker_env_re() -> Option<&'static Regex> {
    static R: OnceLock<Option<Regex>> = OnceLock::new();
    re(
        &R,
        r#"^\s*(?:ENV|ARG)\s+([A-Za-z_][A-Za-z0-9_]*)(?:=|\s+)(.*)$"#,
    )
}

fn default_re() -> Option<&'static Regex> {
    static R: OnceLock<Option<Regex>> = OnceLock::new();
    re(&R, r#"\$\{([A-Za-z_][A-Za-z0-9_]*)(:?[-=])([^}]*)\}"#)
}

/// A YAML `key: value` line (content after indentation and list dashes):
/// the key (quotes kept) and the value, `None` for a header (`key:`).
/// What `^("(?:[^"\\]|\\.)*"|'[^']*'|[^\s:#'"\[{][^:]*?)\s*:(?:\s+(.*)|\s*)$`
/// matches, without a regex: a line is read once.
fn yaml_key(content: &str) -> Option<(&str, Option<&str>)> {
    let b = content.as_bytes();
    let first = *b.first()?;
    let key_end = match first {
        b'"' => {
            let mut j = 1;
            while j < b.len() && b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            if j >= b.len() {
                return None;
            }
            j + 1
        }
        b'\'' => 1 + content[1..].find('\'')? + 1,
        b':' | b'#' | b'[' | b'{' => return None,
        _ if content.starts_with(char::is_whitespace) => return None,
        _ => content.find(':')?,
    };
    let key = &content[..key_end];
    let rest = &content[key_end..];
    let after_key = rest.trim_start();
    let rest = after_key.strip_prefix(':')?;
    let value = rest.trim_start();
    if value.is_empty() {
        // `key:` or `key:   `: a header.
        return Some((key.trim_end(), None));
    }
    if !rest.starts_with(char::is_whitespace) {
        // `http://x`: not a key.
        return None;
    }
    Some((key.trim_end(), Some(value)))
}

fn ini_key_re() -> Option<&'static Regex> {
    static R: OnceLock<Option<Regex>> = OnceLock::new();
    re(
        &R,
        r#"^\s*("[^"]*"|'[^']*'|[A-Za-z0-9_.\-]+)\s*[=:]\s*(.*)$"#,
    )
}

/// Cuts a `#` comment that starts outside quotes (at the line start or after
/// white space).
fn strip_comment(line: &str) -> &str {
    let mut quote: Option<char> = None;
    let mut prev_space = true;
    for (i, c) in line.char_indices() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '"' || c == '\'' => quote = Some(c),
            None if c == '#' && prev_space => return &line[..i],
            None => {}
        }
        prev_space = c.is_whitespace();
    }
    line
}

/// Batch schedulers' directives and the command each stands for: a
/// comment to the shell, the job's options to the scheduler (Slurm, PBS,
/// LSF, Grid Engine, Cobalt, Flux).
const BATCH_DIRECTIVES: [(&str, &str); 6] = [
    ("#SBATCH", "sbatch"),
    ("#PBS", "qsub"),
    ("#BSUB", "bsub"),
    ("#$", "qsub"),
    ("#COBALT", "qsub"),
    ("#FLUX:", "flux"),
];

/// A scheduler directive line (`#SBATCH --export=ALL,NAME=1`) as the
/// command line it stands for (`sbatch --export=ALL,NAME=1`), its own
/// comment left out. The scheduler reads only the directives before the
/// script's first command, and `##SBATCH` is one switched off: the caller
/// asks only in the header, and a second `#` is no directive.
fn batch_directive(line: &str) -> Option<String> {
    BATCH_DIRECTIVES.iter().find_map(|(prefix, command)| {
        let rest = line.trim_start().strip_prefix(prefix)?;
        if !(rest.is_empty() || rest.starts_with(char::is_whitespace)) {
            return None;
        }
        Some(format!("{command} {}", strip_comment(rest).trim()))
    })
}

/// The first word of a shell value: a quoted string, or text up to white space.
fn first_word(v: &str) -> std::borrow::Cow<'_, str> {
    let v = v.trim();
    if let Some(inner) = v.strip_prefix('\'') {
        return inner.split('\'').next().unwrap_or(inner).into();
    }
    if let Some(inner) = v.strip_prefix('"') {
        // Inside double quotes a backslash escapes `"`, `\`, `$` and
        // `` ` ``: `"{\"optimizer\": ...}"` holds a JSON object.
        let mut end = inner.len();
        let mut escaped = false;
        for (i, c) in inner.char_indices() {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => {
                    end = i;
                    break;
                }
                _ => {}
            }
        }
        let body = &inner[..end];
        if !body.contains('\\') {
            return body.into();
        }
        let mut out = String::with_capacity(body.len());
        let mut chars = body.chars().peekable();
        while let Some(c) = chars.next() {
            match (c, chars.peek()) {
                ('\\', Some(&n)) if matches!(n, '"' | '\\' | '$' | '`') => {
                    out.push(n);
                    chars.next();
                }
                _ => out.push(c),
            }
        }
        return out.into();
    }
    v.split_whitespace().next().unwrap_or("").into()
}

pub(super) fn flags(line: &str, lineno: u64, parents: &[String], out: &mut Vec<Entry>) {
    if !line.contains("--") {
        return;
    }
    let Some(r) = flag_re() else { return };
    for c in r.captures_iter(line) {
        let Some(name) = c.get(1) else { continue };
        let written = c.get(2).or_else(|| c.get(3));
        let item = match (written, c.get(0)) {
            (None, Some(m)) => list_item_after(&line[m.end()..]),
            _ => None,
        };
        let mut display = match c.get(0) {
            Some(m) => m
                .as_str()
                .trim_start_matches([' ', '\t', '"', '\'', '[', ',', '(', '='])
                .trim()
                .to_string(),
            None => format!("--{}", name.as_str()),
        };
        let value = match (written, item) {
            // Quoted inside a quoted string: `CMD="t.py --x=\"v\""`.
            (Some(m), _) => match m.as_str().strip_prefix('\\') {
                Some(q) => unquote(q).trim_end_matches('\\').to_string(),
                None => unquote(m.as_str()).to_string(),
            },
            (None, Some(item)) => {
                display = format!("{} {item}", display.trim_end_matches(['"', '\'']));
                item
            }
            (None, None) => String::new(),
        };
        // A call's parentheses end an unquoted value (`)` ends one):
        // `--gin.OPTIMIZER=@adafactor.Adafactor()` names the class.
        let value = match value.strip_suffix('(') {
            Some(v) if written.is_some_and(|m| !m.as_str().starts_with(['"', '\'', '\\'])) => {
                v.to_string()
            }
            _ => value,
        };
        // A dotted name is a path (jsonargparse's `--model.optim.lr`, T5X's
        // `--gin.OPTIMIZER`, Fiddle's `--fdl.task.optimizer.beta2`).
        let mut path = parents.to_vec();
        path.extend(
            name.as_str()
                .split('.')
                .filter(|p| !p.is_empty())
                .map(str::to_string),
        );
        let binding = gin_binding(&value).map(|(k, v)| (k.to_string(), v.to_string()));
        // A JSON object or a Python dict as the flag's value, whose spaces
        // the value above stops at: `--strategy-kwargs '{"algorithm":
        // "async"}'`, escaped inside a quoted string too (`\"{'a': 1}\"`).
        let object = c
            .get(0)
            .map(|m| written.map_or(m.end(), |w| w.start()))
            .and_then(|at| braced_object(&line[at..]));
        let json_path = object.as_ref().map(|_| path.clone());
        out.push(Entry {
            line: lineno,
            path,
            value,
            kind: EntryKind::Flag,
            display,
        });
        if let (Some(obj), Some(p)) = (object, json_path) {
            json_entries(
                &python_dict_as_json(&obj),
                &p,
                lineno.saturating_sub(1),
                out,
            );
        }
        // A flag whose value is a binding written with spaces (gin's
        // `--gin_bindings='optax.adamw.b2 = 0.999'`) sets that key too; one
        // without spaces is a `key=value` word ([`overrides`]).
        if let Some((key, v)) = binding {
            let mut path = parents.to_vec();
            path.extend(key.split('.').filter(|p| !p.is_empty()).map(str::to_string));
            out.push(Entry {
                line: lineno,
                path,
                display: format!("{key} = {v}"),
                value: v,
                kind: EntryKind::Key { header: false },
            });
        }
    }
}

/// The object `{...}` a flag's value opens with (after blanks, quotes and
/// backslashes), its braces balanced, escaped quotes unescaped; none when
/// the value is no object or does not close on the line.
fn braced_object(s: &str) -> Option<String> {
    let t = s.trim_start_matches([' ', '\t', '=', '"', '\'', '\\']);
    if !t.starts_with('{') {
        return None;
    }
    let mut depth = 0usize;
    for (i, ch) in t.char_indices() {
        match ch {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    let obj = &t[..=i];
                    return (obj.len() > 2).then(|| obj.replace("\\\"", "\"").replace("\\'", "'"));
                }
            }
            _ => {}
        }
    }
    None
}

/// A gin binding with spaces around its `=` (`optax.adamw.b2 = 0.999`,
/// `@x/Class.param = 1`): its dotted key and value.
fn gin_binding(value: &str) -> Option<(&str, &str)> {
    let (k, v) = value.split_once('=')?;
    let (key, v) = (k.trim(), v.trim());
    let spaced = k.ends_with([' ', '\t']) || v.len() < value.len() - k.len() - 1;
    let name = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '/' | '@');
    (spaced
        && !v.is_empty()
        && key.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_' || c == '@')
        && key.chars().all(name)
        && !key.ends_with('.'))
    .then(|| {
        (
            key.rsplit('/')
                .next()
                .unwrap_or(key)
                .trim_start_matches('@'),
            v,
        )
    })
}

/// The next item of an argument list after a flag (`", "value"` in
/// `["--name", "value"]`, `, value` in `[--name, value]`), unless it is a
/// flag itself.
fn list_item_after(rest: &str) -> Option<String> {
    let closed = rest.strip_prefix(['"', '\'']);
    let rest = closed.unwrap_or(rest);
    let after = rest.trim_start_matches([' ', '\t']);
    let rest = match after.strip_prefix(',') {
        Some(r) => r.trim_start_matches([' ', '\t']),
        // A bash array of quoted words: `( "--name" "value" )`.
        None if closed.is_some() && after.len() < rest.len() && after.starts_with(['"', '\'']) => {
            after
        }
        None => return None,
    };
    let rest = rest.strip_prefix(['"', '\'']).unwrap_or(rest);
    let first = rest.chars().next()?;
    if !(first.is_ascii_alphanumeric() || first == '_' || first == '.' || first == '/') {
        return None;
    }
    let end = rest
        .find(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | ',' | ']'))
        .unwrap_or(rest.len());
    Some(rest[..end].to_string())
}

/// Commands that print their words (`echo`, `printf`, `logger`) and the
/// logging functions scripts define (`log`, `log_msg`, `print_log`,
/// `info`, `warn`, `die`): what they say is text for a reader.
fn prints(word: &str) -> bool {
    let w = word.rsplit('/').next().unwrap_or(word);
    matches!(
        w,
        "echo" | "printf" | "logger" | "log" | "info" | "warn" | "warning" | "die" | "msg" | "say"
    ) || w.starts_with("log_")
        || w.ends_with("_log")
}

/// Whether a shell line only prints text: its command prints
/// ([`prints`]; `cat` too, for a here-document) and nothing takes the
/// text on: no pipe, no redirection to a file (`>&2`, `>/dev/stderr` still
/// print). Such text is read by people (`echo "--dwu-e5m2-allgather is
/// not used"`), not by the run.
fn only_prints(code: &str, cat: bool) -> bool {
    let t = code.trim_start();
    let first = t
        .split(|c: char| c.is_whitespace() || c == ';')
        .next()
        .unwrap_or("");
    if !(prints(first) || (cat && first == "cat")) {
        return false;
    }
    let b = t.as_bytes();
    let mut quote: Option<u8> = None;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match quote {
            Some(q) if c == q => quote = None,
            Some(b'"') if c == b'\\' => i += 1,
            Some(_) => {}
            None => match c {
                b'"' | b'\'' => quote = Some(c),
                b'\\' => i += 1,
                b'|' if b.get(i + 1) != Some(&b'|') => return false,
                b'|' => i += 1,
                b'>' => {
                    let rest = t[i + 1..].trim_start_matches('>').trim_start();
                    if let Some(fd) = rest.strip_prefix('&') {
                        // `>&2`: to the terminal still.
                        let skip =
                            t.len() - fd.trim_start_matches(|c: char| c.is_ascii_digit()).len();
                        i = skip;
                        continue;
                    }
                    if !(rest.starts_with("/dev/std") || rest.starts_with("/dev/null")) {
                        return false;
                    }
                }
                // A next command on the line (`echo x; python t.py ...`,
                // `echo x && ...`): the line is read as usual.
                b';' | b'&' => return t[i + 1..].trim().is_empty(),
                _ => {}
            },
        }
        i += 1;
    }
    true
}

fn shell_line(line: &str, lineno: u64, parents: &[String], out: &mut Vec<Entry>) {
    let code = strip_comment(line);
    if code.trim().is_empty() || only_prints(code, false) {
        return;
    }
    if let Some(rest) = without_probes(code) {
        // What a search looks for (`grep -q 'X=1' config_*.sh`) and what a
        // `--help` probe asks about are no settings; the line's other
        // commands still are.
        if !rest.trim().is_empty() {
            shell_line(&rest, lineno, parents, out);
        }
        return;
    }
    // Cheap tests first: most lines are neither assignments nor `ENV`.
    let t = code.trim_start();
    if let Some(file) = sourced(t) {
        out.push(Entry {
            line: lineno,
            path: parents.to_vec(),
            value: file.to_string(),
            kind: EntryKind::Source,
            display: t.trim_end().to_string(),
        });
        return;
    }
    let assign = if code.contains('=') {
        shell_assign(code)
    } else {
        None
    }
    .or_else(|| {
        if t.starts_with("ENV") || t.starts_with("ARG") {
            docker_env_re()
                .and_then(|r| r.captures(code))
                .and_then(|c| Some((c.get(1)?.as_str(), c.get(2)?.as_str())))
        } else {
            None
        }
    });
    let assigned = assign.map(|(k, _)| k);
    if let Some((k, v)) = assign {
        let value = first_word(v).to_string();
        let mut path = parents.to_vec();
        path.push(k.to_string());
        let t = value.trim();
        // An unquoted value is cut at its first blank; a `.env` file's
        // `TF_CONFIG={"cluster": ...}` is the rest of the line.
        let raw = v.trim();
        let t = if !t.ends_with('}') && raw.starts_with('{') && raw.ends_with('}') {
            raw
        } else {
            t
        };
        if t.starts_with('{') && t.ends_with('}') {
            // JSON held in a shell variable (TF_CONFIG='{"cluster": ...}').
            json_entries(t, &path, lineno.saturating_sub(1), out);
        }
        out.push(Entry {
            line: lineno,
            path,
            display: format!("{k}={value}"),
            value,
            kind: EntryKind::Key { header: false },
        });
    }
    if let Some(r) = default_re().filter(|_| code.contains("${")) {
        // `${X:=d}` assigns X its default (a later `$X` reads it), and
        // says so in its display ([`is_assigning_default`]).
        defaults(r, code, lineno, parents, out, |k, op, v| {
            let op = if op.ends_with('=') { ":=" } else { ":-" };
            format!("${{{k}{op}{v}}}")
        });
    }
    oc_env_defaults(code, lineno, parents, out);
    if t.starts_with("for ") {
        loop_values(t, lineno, parents, out);
    }
    flags(code, lineno, parents, out);
    hydra_env(code, lineno, parents, out);
    overrides(code, lineno, parents, assigned, out);
    yacs_options(code, lineno, parents, out);
    jq_assignments(code, lineno, parents, out);
    python_kwargs(code, lineno, parents, out);
    sed_settings(code, lineno, parents, out);
}

/// The environment MPICH's and Intel MPI's launcher (Hydra's `mpiexec`)
/// passes to every rank, `-genv NAME VALUE` (and `-env NAME VALUE` for
/// one group of ranks): the name and its value are two words, where Open
/// MPI's `-x NAME=VALUE` is one.
fn hydra_env(code: &str, lineno: u64, parents: &[String], out: &mut Vec<Entry>) {
    if !code.contains("env ") {
        return;
    }
    let words: Vec<&str> = code.split_whitespace().collect();
    for w in words.windows(3) {
        let [flag, name, value] = [w[0], w[1], w[2]];
        if !matches!(flag, "-genv" | "-env")
            || name.is_empty()
            || name.starts_with(|c: char| c.is_ascii_digit())
            || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            || value.starts_with('-')
        {
            continue;
        }
        let value = value.trim_matches(['"', '\'']).to_string();
        let mut path = parents.to_vec();
        path.push(name.to_string());
        out.push(Entry {
            line: lineno,
            path,
            display: format!("{flag} {name} {value}"),
            value,
            kind: EntryKind::Key { header: false },
        });
    }
}

/// Commands whose arguments are text to look for, not settings.
const SEARCHES: &[&str] = &["grep", "egrep", "fgrep", "zgrep", "rg", "ag", "ack"];

/// Words that open a command of a compound one (`if grep ...`).
const OPENERS: &[&str] = &[
    "if", "elif", "while", "until", "then", "do", "else", "!", "{", "(", "time",
];

/// A shell line with its probes taken out, when it holds one: a search
/// (`grep -q 'BYTEPS_ENABLE_ASYNC=1' config_*.sh`, `env | grep X=1`) or a
/// command asked for its help (`python train.py --help | grep -q --
/// --deterministic-mode`). The commands left (what follows `&&` or
/// `then`) are joined with `;`, those that only print dropped too.
fn without_probes(code: &str) -> Option<String> {
    if !(code.contains("grep")
        || code.contains("--help")
        || SEARCHES.iter().any(|s| code.contains(&format!("{s} "))))
    {
        return None;
    }
    let commands = split_commands(code);
    let probe = |c: &str| {
        let mut words = c.split_whitespace().skip_while(|w| OPENERS.contains(w));
        let Some(first) = words.next() else {
            return false;
        };
        let first = first.rsplit('/').next().unwrap_or(first);
        SEARCHES.contains(&first)
            || (first == "git" && words.next() == Some("grep"))
            || c.split_whitespace().any(|w| w == "--help")
    };
    if !commands.iter().any(|c| probe(c)) {
        return None;
    }
    let kept: Vec<&str> = commands
        .into_iter()
        .filter(|c| !probe(c))
        .map(|c| {
            let mut t = c.trim_start();
            while let Some(w) = OPENERS.iter().find(|w| {
                t.strip_prefix(**w)
                    .is_some_and(|r| r.is_empty() || r.starts_with(char::is_whitespace))
            }) {
                t = t[w.len()..].trim_start();
            }
            t.trim_end()
        })
        .filter(|c| !c.is_empty() && *c != "fi" && *c != "done" && !only_prints(c, false))
        .collect();
    Some(kept.join(" ; "))
}

/// The commands of a shell line: split at `;`, `&&`, `||` and `|` outside
/// quotes, `$(...)` and `${...}`.
fn split_commands(code: &str) -> Vec<&str> {
    let b = code.as_bytes();
    let mut out = Vec::new();
    let (mut quote, mut depth, mut start, mut i) = (None::<u8>, 0usize, 0usize, 0usize);
    while i < b.len() {
        let c = b[i];
        match quote {
            Some(q) if c == q => quote = None,
            Some(b'"') if c == b'\\' => i += 1,
            Some(_) => {}
            None => match c {
                b'"' | b'\'' => quote = Some(c),
                b'\\' => i += 1,
                b'(' | b'{' => depth += 1,
                b')' | b'}' => depth = depth.saturating_sub(1),
                b';' | b'|' | b'&' if depth == 0 => {
                    out.push(&code[start..i]);
                    // `&&`, `||`: one separator.
                    if b.get(i + 1) == Some(&c) && c != b';' {
                        i += 1;
                    }
                    start = i + 1;
                }
                _ => {}
            },
        }
        i += 1;
    }
    out.push(&code[start.min(code.len())..]);
    out
}

/// yacs options, `KEY VALUE` pairs whose key is an upper-case dotted
/// path (maskrcnn-benchmark's and Detectron's command-line `opts`, kept in
/// a shell string: `EXTRA_CONFIG='SOLVER.BASE_LR 0.12 SOLVER.GAMMA 0.1'`,
/// or after the script's name): each sets that path (`SOLVER`, `GAMMA`).
fn yacs_options(code: &str, lineno: u64, parents: &[String], out: &mut Vec<Entry>) {
    // Cheap test first: a dot between upper-case letters.
    if !code
        .as_bytes()
        .windows(3)
        .any(|w| w[0].is_ascii_uppercase() && w[1] == b'.' && w[2].is_ascii_uppercase())
    {
        return;
    }
    let is_key = |w: &str| {
        let mut parts = w.split('.');
        w.contains('.')
            && parts
                .next()
                .is_some_and(|p| p.starts_with(|c: char| c.is_ascii_uppercase()))
            && w.split('.').all(|p| {
                !p.is_empty()
                    && p.bytes()
                        .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
            })
    };
    // The first pair may be glued to the assignment that holds the
    // options (`EXTRA_CONFIG='SOLVER.BASE_LR 0.12 ...`).
    fn after_assignment(w: &str) -> &str {
        match w.split_once('=') {
            Some((name, rest))
                if !name.is_empty()
                    && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
                    && rest.starts_with(['"', '\'']) =>
            {
                rest
            }
            _ => w,
        }
    }
    let words: Vec<&str> = code
        .split_whitespace()
        .map(after_assignment)
        .map(|w| w.trim_matches(|c: char| matches!(c, '"' | '\'' | ';' | '\\')))
        .collect();
    let mut i = 0;
    while i + 1 < words.len() {
        let (k, v) = (words[i], words[i + 1]);
        if is_key(k) && !v.is_empty() && !is_key(v) {
            let mut path = parents.to_vec();
            path.extend(k.split('.').map(str::to_string));
            out.push(Entry {
                line: lineno,
                path,
                value: v.to_string(),
                kind: EntryKind::Key { header: false },
                display: format!("{k} {v}"),
            });
            i += 2;
        } else {
            i += 1;
        }
    }
}

/// Words a `for NAME in WORDS; do` loop gives its variable, at most this
/// many (a loop over many seeds gives no more).
const LOOP_VALUES: usize = 4;

/// `for NAME in WORDS; do`: each literal word is a value of `NAME`, as an
/// assignment is (`for opt in lamb; do python t.py --optimizer $opt`).
/// Words with a reference, a substitution, a glob or a brace expansion
/// are not literal and are left out.
fn loop_values(t: &str, lineno: u64, parents: &[String], out: &mut Vec<Entry>) {
    let mut words = t.split_whitespace().skip(1);
    let (Some(name), Some("in")) = (words.next(), words.next()) else {
        return;
    };
    if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        return;
    }
    let mut path = parents.to_vec();
    path.push(name.to_string());
    for w in words
        .take_while(|w| *w != "do" && *w != ";" && !w.starts_with(';'))
        .map(|w| w.trim_end_matches(';'))
        .filter(|w| !w.is_empty() && !w.contains(['$', '`', '*', '?', '{', '(']))
        .take(LOOP_VALUES)
    {
        out.push(Entry {
            line: lineno,
            path: path.clone(),
            value: unquote(w).to_string(),
            kind: EntryKind::Key { header: false },
            display: format!("for {name} in {w}"),
        });
    }
}

/// What a `sed` substitution on the line writes ([`shell_sed`]), read as
/// a config fragment: flags (`--optimizer lamb`), an assignment or
/// override (`OPT=lamb`, `model.optim.name=lamb`), or a YAML or JSON pair
/// (`optimizer: lamb`, `"type": "OneBitAdam"`). Its settings sit at the
/// line of the `sed` command and show the script.
fn sed_settings(code: &str, lineno: u64, parents: &[String], out: &mut Vec<Entry>) {
    let subs = super::shell_sed::substitutions(code);
    // A YAML pair sits under the edited file's folder: the name of a Hydra
    // group when the file is one of its options (`name: lamb` written into
    // `conf/optim/adam.yaml` is `optim.name`); any other folder is one more
    // parent, which no setting's key (matched at the end of the path)
    // minds.
    let folder = if subs.is_empty() {
        None
    } else {
        super::shell_sed::target_folder(code)
    };
    for sub in subs {
        let new = sub.new.trim();
        if new.is_empty() {
            continue;
        }
        let start = out.len();
        flags(new, lineno, parents, out);
        if out.len() == start {
            if new.contains('=') {
                // An assignment written whole (`export LORA_DIM=8`).
                let assigned = ["export ", "readonly ", "declare -x ", "local "]
                    .iter()
                    .find_map(|k| new.strip_prefix(k))
                    .map_or(new, str::trim_start);
                assignment(assigned, lineno, parents, None, out);
            } else if let Some((key, value)) = yaml_pair(new) {
                let mut path = parents.to_vec();
                path.extend(folder.iter().cloned());
                path.push(key.to_string());
                out.push(Entry {
                    line: lineno,
                    path,
                    value: value.to_string(),
                    kind: EntryKind::Key { header: false },
                    display: String::new(),
                });
            }
        }
        for e in &mut out[start..] {
            e.display.clone_from(&sub.display);
        }
    }
}

/// `key: value` of one YAML or JSON line (`optimizer: lamb`, `"type":
/// "OneBitAdam",`), quotes and a trailing comma removed.
fn yaml_pair(text: &str) -> Option<(&str, &str)> {
    let (key, value) = text.trim_start_matches(['-', ' ']).split_once(':')?;
    let key = key.trim().trim_matches(['"', '\'']);
    let plain = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-');
    if key.is_empty()
        || !key.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        || !key.chars().all(plain)
    {
        return None;
    }
    let value = value
        .trim()
        .trim_end_matches(',')
        .trim()
        .trim_matches(['"', '\'']);
    (!value.is_empty()).then_some((key, value))
}

/// Keyword arguments in the program of a `python -c` line (`python3 -c
/// "import t; t.run(optimizer='lamb', lr=4e-4)"`): each `name=value`
/// right after a `(` or a `,` is a setting `name`. A comparison (`==`)
/// is none, and nor is text outside a Python program.
fn python_kwargs(code: &str, lineno: u64, parents: &[String], out: &mut Vec<Entry>) {
    if !(code.contains("python") && code.contains("-c")) {
        return;
    }
    let word = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/');
    let mut words = code.split(|c: char| !word(c)).filter(|w| !w.is_empty());
    let python = |w: &str| {
        let n = w.rsplit('/').next().unwrap_or(w);
        n == "python"
            || n.strip_prefix("python3")
                .is_some_and(|v| v.is_empty() || v.starts_with('.'))
    };
    // The program: what follows `-c` after the interpreter.
    let Some(_) = words.position(python) else {
        return;
    };
    let Some(at) = code
        .find(" -c ")
        .or_else(|| code.find(" -c\""))
        .or_else(|| code.find(" -c'"))
    else {
        return;
    };
    python_statements(&code[at + 3..], lineno, parents, out);
    let Some(r) = kwargs_re() else {
        return;
    };
    for c in r.captures_iter(&code[at + 3..]) {
        let (Some(key), Some(value)) = (c.get(1), c.get(2)) else {
            continue;
        };
        let value = value
            .as_str()
            .trim_matches(|c| c == '\'' || c == '"' || c == '\\');
        let mut path = parents.to_vec();
        path.push(key.as_str().to_string());
        out.push(Entry {
            line: lineno,
            path,
            value: value.to_string(),
            kind: EntryKind::Key { header: false },
            display: c
                .get(0)
                .map_or("", |m| m.as_str())
                .trim_start_matches(['(', ',', ' '])
                .to_string(),
        });
    }
}

/// Statements of a Python program the script runs (`python -c "..."`, a
/// `python - <<EOF` here-document), one line of it: an attribute set to a
/// literal (`torch.backends.cudnn.benchmark = True`) is a setting of its
/// dotted name, and a call with a literal first argument or none
/// (`torch.use_deterministic_algorithms(True)`,
/// `tf.config.experimental.enable_op_determinism()`) a setting of the
/// function's dotted name, with that argument (none: on). A plain
/// variable, a value that is not a literal (`cudnn.benchmark = args.b`),
/// a comparison and a call with keyword arguments first are none (the
/// keyword arguments are read by [`python_kwargs`]), except PyTorch's
/// switch keyword `mode=` / `debug_mode=`
/// (`torch.use_deterministic_algorithms(mode=True)`): the function's value.
fn python_statements(program: &str, lineno: u64, parents: &[String], out: &mut Vec<Entry>) {
    let Some(r) = python_statement_re() else {
        return;
    };
    let program = program.trim().trim_matches(['"', '\'', '\\']);
    for stmt in program.split(';') {
        // The quote that closes the shell string (`-c '...'`), a `\"`, a
        // `)` of `$(python -c ...)` may follow the program: taken off
        // while unbalanced, so `f("error")` keeps its own quotes.
        let mut stmt = stmt.trim();
        while let Some(c) = stmt.chars().last() {
            let odd = |q: char| stmt.matches(q).count() % 2 == 1;
            let extra = match c {
                '\\' => true,
                '"' | '\'' => odd(c),
                ')' => stmt.matches(')').count() > stmt.matches('(').count(),
                _ => false,
            };
            if !extra {
                break;
            }
            stmt = stmt[..stmt.len() - 1].trim_end();
        }
        let open = stmt
            .matches('(')
            .count()
            .saturating_sub(stmt.matches(')').count());
        let stmt = if open > 0 {
            // A call cut short by the line's end.
            std::borrow::Cow::Owned(format!("{stmt}{}", ")".repeat(open)))
        } else {
            std::borrow::Cow::Borrowed(stmt)
        };
        let Some(c) = r.captures(&stmt) else {
            continue;
        };
        let Some(name) = c.get(1).map(|m| m.as_str()) else {
            continue;
        };
        let value = match (c.get(2), c.get(3)) {
            (Some(v), _) => v.as_str().trim(),
            (None, Some(arg)) if arg.as_str().trim().is_empty() => "true",
            (None, Some(arg)) => arg.as_str().trim(),
            _ => continue,
        };
        let value = value.trim_matches(['"', '\'']);
        let mut path = parents.to_vec();
        path.push(name.to_string());
        let written = path.join(".");
        // The same setting read from the line already (a spaceless
        // `a.b=True` is a command-line override too).
        if out
            .iter()
            .rev()
            .take_while(|e| e.line == lineno)
            .any(|e| e.path.join(".") == written && e.value == value)
        {
            continue;
        }
        out.push(Entry {
            line: lineno,
            path,
            value: value.to_string(),
            kind: EntryKind::Key { header: false },
            display: stmt.to_string(),
        });
    }
}

fn python_statement_re() -> Option<&'static Regex> {
    static R: OnceLock<Option<Regex>> = OnceLock::new();
    // A literal: True/False/None, a number, a quoted string.
    re(
        &R,
        r#"^([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+)\s*(?:=\s*(True|False|None|true|false|[-+]?[0-9][0-9_.eE+-]*|'[^']*'|"[^"]*")|\(\s*(?:(?:mode|debug_mode)\s*=\s*)?(True|False|None|[-+]?[0-9][0-9_.eE+-]*|'[^']*'|"[^"]*"|)\s*(?:,[^()]*)?\))$"#,
    )
}

fn kwargs_re() -> Option<&'static Regex> {
    static R: OnceLock<Option<Regex>> = OnceLock::new();
    re(
        &R,
        r#"[(,]\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*('[^']*'|\\?"[^"\\]*\\?"|[A-Za-z0-9_.+-]+)"#,
    )
}

/// `.a.b = value` assignments of a `jq` or `yq` program on the line (a
/// run script editing its DeepSpeed JSON or its YAML before the run:
/// `jq '.optimizer.type = "OneBitAdam"' ds.json`): the dotted path is a
/// setting's key path.
fn jq_assignments(code: &str, lineno: u64, parents: &[String], out: &mut Vec<Entry>) {
    if !(code.contains("jq") || code.contains("yq")) {
        return;
    }
    let word = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/');
    let tool = code
        .split(|c: char| !word(c))
        .any(|w| matches!(w.rsplit('/').next(), Some("jq" | "yq")));
    let Some(r) = jq_re().filter(|_| tool) else {
        return;
    };
    for c in r.captures_iter(code) {
        let (Some(key), Some(value)) = (c.get(1), c.get(2)) else {
            continue;
        };
        let value = value.as_str();
        let value = value
            .strip_prefix('"')
            .and_then(|v| v.strip_suffix('"'))
            .unwrap_or(value);
        let mut path = parents.to_vec();
        path.extend(key.as_str().split('.').map(str::to_string));
        out.push(Entry {
            line: lineno,
            path,
            value: value.to_string(),
            kind: EntryKind::Key { header: false },
            display: c.get(0).map_or("", |m| m.as_str()).trim().to_string(),
        });
    }
}

fn jq_re() -> Option<&'static Regex> {
    static R: OnceLock<Option<Regex>> = OnceLock::new();
    re(
        &R,
        r#"(?:^|[\s'"|(])\.([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)\s*\|?=\s*("[^"]*"|[A-Za-z0-9_.+-]+)"#,
    )
}

fn object_argument_re() -> Option<&'static Regex> {
    static R: OnceLock<Option<Regex>> = OnceLock::new();
    re(&R, r#"(?:^|[\s,])([A-Za-z_][A-Za-z0-9_]*)=\\?['"]?\{"#)
}

/// `key=value` arguments of a command line (Hydra overrides
/// `model.optim.name=lamb`, `+trainer.x=1`, `key=value` argument parsers):
/// the dotted key is a path. The first word is the command or an
/// assignment ([`shell_assign`], `assigned` the variable it set, not read
/// again); a word that starts with `-` is a flag.
fn overrides(
    code: &str,
    lineno: u64,
    parents: &[String],
    assigned: Option<&str>,
    out: &mut Vec<Entry>,
) {
    if !code.contains('=') {
        return;
    }
    // The first word is the command, unless it is a dotted `key=value`,
    // which no shell assignment is, or a flag: an argument on a continued
    // line (`    model.optim.weight_decay=0.01 \`).
    let mut words = code.split_whitespace();
    let first = words.next().filter(|w| {
        w.split_once('=').is_some_and(|(k, v)| {
            k.contains('.')
                // A flag opening a continued line is an argument, never
                // the command (`  --fdl_set=task.optimizer.beta2=0.999 \`).
                || k.starts_with('-')
                // The line's own assignment, whose quoted value opens with
                // an argument (`OPTIMIZER_CONF="optim@model.optim=lamb"`).
                || (assigned == Some(k) && v.trim_start_matches(['"', '\'']).contains('='))
        })
    });
    // `NAME='{...}'` as an argument (`docker run -e TF_CONFIG='{"cluster":
    // ...}'`, `mpirun -x`, `srun --export`): the object, spaces and all, is
    // read as JSON under NAME (the words below stop at its first blank).
    if code.contains("{") {
        if let Some(r) = object_argument_re() {
            for c in r.captures_iter(code) {
                let (Some(k), Some(m)) = (c.get(1), c.get(0)) else {
                    continue;
                };
                if assigned == Some(k.as_str()) {
                    continue;
                }
                let at = m.end() - 1;
                if let Some(obj) = braced_object(&code[at..]) {
                    let mut path = parents.to_vec();
                    path.push(k.as_str().to_string());
                    json_entries(
                        &python_dict_as_json(&obj),
                        &path,
                        lineno.saturating_sub(1),
                        out,
                    );
                }
            }
        }
    }
    for word in first.into_iter().chain(words) {
        let word = word.trim_matches(|c: char| matches!(c, '"' | '\'' | '(' | ')' | ';' | '\\'));
        // `NAME=value` items of a flag's value or of a comma-separated
        // list: Slurm's `--export=ALL,NAME=1` (or `--export ALL,NAME=1`),
        // Docker's `--env=NAME=1`.
        let items: Vec<&str> = match word.split_once('=') {
            Some((flag, value)) if flag.starts_with('-') => {
                if !value.contains('=') {
                    continue;
                }
                value.split(',').collect()
            }
            Some((key, _)) if key.contains(',') => word.split(',').collect(),
            _ => vec![word],
        };
        for item in items {
            assignment(item, lineno, parents, assigned, out);
        }
    }
}

/// One `key=value` word of a command line (see [`overrides`]).
fn assignment(
    word: &str,
    lineno: u64,
    parents: &[String],
    assigned: Option<&str>,
    out: &mut Vec<Entry>,
) {
    // A flag's quoted value (`--fdl_set="optimizer=lion"`) opens with its
    // quote.
    let word = word.trim_start_matches(['"', '\'']);
    let Some((key, value)) = word.split_once('=') else {
        return;
    };
    let key = key.trim_start_matches(['+', '~']);
    if assigned == Some(key) {
        // The variable's own assignment, glued to the first word of its
        // quoted value (`ARGS="model.optim.name=sgd model.optim.lr=0.1"`):
        // that word is an argument like the others.
        let inner = value.trim_start_matches(['"', '\'']);
        if inner.contains('=') {
            assignment(inner, lineno, parents, None, out);
        }
        return;
    }
    let value = value.trim_matches(['"', '\'']);
    // (`@` places a Hydra config group: `optim@model.optim=lamb`.)
    let plain = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-' | '@');
    if value.is_empty()
        || value.starts_with('=')
        || !key.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        || !key.chars().all(plain)
        || key.ends_with('.')
    {
        return;
    }
    let mut path = parents.to_vec();
    path.extend(key.split('.').filter(|p| !p.is_empty()).map(str::to_string));
    out.push(Entry {
        line: lineno,
        path,
        value: value.to_string(),
        kind: EntryKind::Key { header: false },
        display: word.to_string(),
    });
}

/// A dict written in a string: JSON as it is; a Python dict literal
/// (single quotes and no double quote, `{'name': 'lion'}`) with its quotes
/// made JSON's.
fn python_dict_as_json(s: &str) -> String {
    if s.contains('"') || !s.contains('\'') {
        s.to_string()
    } else {
        s.replace('\'', "\"")
    }
}

/// `${oc.env:NAME,default}` (OmegaConf): the variable with its default, as
/// a setting of its own.
fn oc_env_defaults(code: &str, lineno: u64, parents: &[String], out: &mut Vec<Entry>) {
    if !code.contains("oc.env") {
        return;
    }
    let Some(r) = oc_env_re() else { return };
    defaults(r, code, lineno, parents, out, |k, _, v| {
        format!("${{oc.env:{k},{v}}}")
    });
}

/// Whether `e` is the default of a variable reference (`${VAR:-0.01}`,
/// `${oc.env:VAR,0.01}`), a setting of its own that [`defaults`] writes,
/// rather than an assignment.
/// The file a shell line reads (`source FILE`, `. FILE`), as written,
/// quotes removed.
fn sourced(t: &str) -> Option<std::borrow::Cow<'_, str>> {
    let rest = t
        .strip_prefix("source ")
        .or_else(|| t.strip_prefix(". "))?
        .trim_start();
    let file = if rest.starts_with(['"', '\'']) {
        first_word(rest)
    } else {
        // One word of the shell's: a blank inside `$(dirname ...)` or
        // `${...}` does not end it.
        let mut depth = 0usize;
        let end = rest
            .char_indices()
            .find(|&(_, c)| {
                match c {
                    '(' | '{' => depth += 1,
                    ')' | '}' => depth = depth.saturating_sub(1),
                    _ => {}
                }
                depth == 0 && (c.is_whitespace() || c == ';' || c == '&' || c == '|')
            })
            .map_or(rest.len(), |(i, _)| i);
        rest[..end].into()
    };
    (!file.is_empty()).then_some(file)
}

pub fn is_default(e: &Entry) -> bool {
    e.kind == (EntryKind::Key { header: false }) && e.display.starts_with("${")
}

/// Which entries of a shell script a later assignment of the same
/// variable overrides: after `X=0.3` and `X=1.0` outside any condition, X
/// is 1.0, whatever came before (a conditional assignment before it too).
/// A later assignment that reads the variable (`X=${X:-1.0}`) or is empty
/// (`export X` lists it) overrides nothing; one under a condition may not
/// run, and overrides nothing either. A default (`${X:-d}`, `${X:=d}`)
/// after such an assignment of X (outside any condition, not empty, not
/// reading X) is never taken: X is set.
pub fn shadowed(entries: &[Entry]) -> Vec<bool> {
    let mut out = vec![false; entries.len()];
    let mut depth = 0usize;
    let mut earlier: HashMap<&str, Vec<usize>> = HashMap::new();
    let mut set: BTreeSet<&str> = BTreeSet::new();
    for (i, e) in entries.iter().enumerate() {
        match e.kind {
            EntryKind::Guard => depth += 1,
            EntryKind::GuardEnd => depth = depth.saturating_sub(1),
            EntryKind::Key { header: false }
                if e.path.len() == 1 && is_default(e) && set.contains(e.path[0].as_str()) =>
            {
                out[i] = true;
            }
            EntryKind::Key { header: false } if e.path.len() == 1 && is_default(e) => {}
            EntryKind::Key { header: false } if e.path.len() == 1 => {
                let var = e.path[0].as_str();
                let reads_itself = e.value.contains('$') && e.value.contains(var);
                if depth == 0 && !e.value.is_empty() && !reads_itself {
                    for j in earlier.remove(var).unwrap_or_default() {
                        out[j] = true;
                    }
                    set.insert(var);
                }
                earlier.entry(var).or_default().push(i);
            }
            _ => {}
        }
    }
    out
}

/// [`shadowed`]'s entries left out, and in the rest a reference's default
/// to a variable the script set before (outside any condition, not empty,
/// not reading itself) dropped: after `KVSTORE=dist_sync`,
/// `--kv-store ${KVSTORE:-dist_async}` is `--kv-store ${KVSTORE}`. `None`
/// when neither changes anything.
pub fn settled(entries: &[Entry]) -> Option<Vec<Entry>> {
    let gone = shadowed(entries);
    let mut out: Vec<Entry> = Vec::new();
    let mut changed = gone.contains(&true);
    let mut depth = 0usize;
    let mut set: BTreeSet<String> = BTreeSet::new();
    for (e, g) in entries.iter().zip(&gone) {
        if *g {
            continue;
        }
        let mut e = e.clone();
        if !set.is_empty() && e.value.contains("${") {
            if let Some(v) = without_defaults(&e.value, &set) {
                e.value = v;
                changed = true;
            }
        }
        match e.kind {
            EntryKind::Guard => depth += 1,
            EntryKind::GuardEnd => depth = depth.saturating_sub(1),
            EntryKind::Key { header: false } if e.path.len() == 1 && !is_default(&e) => {
                let var = e.path[0].as_str();
                let reads_itself = e.value.contains('$') && e.value.contains(var);
                if depth == 0 && !e.value.is_empty() && !reads_itself {
                    set.insert(var.to_string());
                }
            }
            _ => {}
        }
        out.push(e);
    }
    changed.then_some(out)
}

/// `value` with the defaults of its `${NAME:-d}`, `${NAME-d}`,
/// `${NAME:=d}` and `${NAME=d}` references to a variable of `set` dropped
/// (`${NAME}`), or `None` when it has none.
fn without_defaults(value: &str, set: &BTreeSet<String>) -> Option<String> {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    let mut changed = false;
    while let Some(at) = rest.find("${") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        let name_len = after
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(after.len());
        let (name, tail) = after.split_at(name_len);
        let op = [":-", ":=", "-", "="]
            .into_iter()
            .find(|o| tail.starts_with(o));
        if let (true, Some(op)) = (set.contains(name), op) {
            // The default runs to the matching `}`.
            let body = &tail[op.len()..];
            let mut depth = 1usize;
            let end = body.char_indices().find_map(|(i, c)| {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    _ => {}
                }
                (depth == 0).then_some(i)
            });
            if let Some(end) = end {
                out.push_str("${");
                out.push_str(name);
                out.push('}');
                rest = &body[end + 1..];
                changed = true;
                continue;
            }
        }
        out.push_str("${");
        rest = after;
    }
    out.push_str(rest);
    changed.then_some(out)
}

/// Whether `e` is a shell default that assigns its variable (`${X:=d}`,
/// `: "${X:=d}"`): the variable holds it from then on, as after `X=d`
/// when nothing set it before, whatever a YAML's `${oc.env:X,...}`
/// default says.
pub fn is_assigning_default(e: &Entry) -> bool {
    is_default(e)
        && e.path.last().is_some_and(|k| {
            e.display
                .get(2..)
                .is_some_and(|d| d.starts_with(k.as_str()) && d[k.len()..].starts_with(":="))
        })
}

/// One setting per match of `r` (group 1 the variable, the last group its
/// default, a group between them the operator), shown as `display` writes
/// it from the three (`${...}`, see [`is_default`]).
fn defaults(
    r: &Regex,
    code: &str,
    lineno: u64,
    parents: &[String],
    out: &mut Vec<Entry>,
    display: impl Fn(&str, &str, &str) -> String,
) {
    for c in r.captures_iter(code) {
        let op = if c.len() > 3 { c.get(2) } else { None };
        if let (Some(k), Some(v)) = (c.get(1), c.get(c.len() - 1)) {
            let value = unquote(v.as_str().trim()).to_string();
            let mut path = parents.to_vec();
            path.push(k.as_str().to_string());
            out.push(Entry {
                line: lineno,
                path,
                display: display(k.as_str(), op.map_or("", |o| o.as_str()), &value),
                value,
                kind: EntryKind::Key { header: false },
            });
        }
    }
}

fn oc_env_re() -> Option<&'static Regex> {
    static R: OnceLock<Option<Regex>> = OnceLock::new();
    re(&R, r#"\$\{oc\.env:([A-Za-z_][A-Za-z0-9_]*),([^}]*)\}"#)
}

fn parse_shell(text: &str) -> Vec<Entry> {
    let mut out = Vec::new();
    let lines: Vec<&str> = text.lines().collect();
    // Where each word stands alone on a line, built at the first
    // here-document: finding each one's end by a scan of the lines after
    // it would take time quadratic in a file of unterminated `<<`s.
    let mut ends: Option<HashMap<&str, Vec<usize>>> = None;
    // Open `if`s: the condition of the branch being read, when it is one
    // the scan can decide (see [`super::shell_guard`]).
    let mut ifs: Vec<Option<String>> = Vec::new();
    // Open `case`s: the word each compares, and whether an arm is open.
    let mut cases: Vec<(String, bool)> = Vec::new();
    // Before the script's first command: where batch schedulers read
    // their directives.
    let mut header = true;
    // Inside a bash array that spans lines.
    let mut in_array = false;
    // The last line that ran a command (see [`super::shell_unset`]).
    let mut last_command = 0u64;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let lineno = i as u64 + 1;
        let closes = guard_line(line, lineno, &mut ifs, &mut out)
            + case_line(line, lineno, &mut cases, &mut out);
        let next = lines.get(i + 1).copied();
        let opens = !in_array && opens_array(line);
        // `printf 'A=1\nB=2\n' > run.env`: the file it writes, read as a
        // here-document's body would be (its quote may span lines).
        let printed = if in_array {
            None
        } else {
            printed_to_file(&lines[i..], i as u64)
        };
        let used = printed.as_ref().map_or(1, |(_, n)| *n);
        match (printed, batch_directive(line).filter(|_| header)) {
            (Some((body, _)), _) => out.extend(body),
            (None, Some(command)) => shell_line(&command, lineno, &[], &mut out),
            (None, None) => match continued_value(line, next).or_else(|| {
                (in_array || opens)
                    .then(|| array_value(line, next))
                    .flatten()
            }) {
                Some(joined) => shell_line(&joined, lineno, &[], &mut out),
                None => shell_line(line, lineno, &[], &mut out),
            },
        }
        if in_array {
            let c = strip_comment(line).trim();
            in_array = !(c.starts_with(')') || c.ends_with(')'));
        } else {
            in_array = opens;
        }
        // `unset X` at the top level drops the assignments of X that no
        // command could have read ([`super::shell_unset`]).
        let code = strip_comment(line);
        if used == 1 && !line.starts_with([' ', '\t']) && ifs.is_empty() && cases.is_empty() {
            if let Some(names) = super::shell_unset::names(code) {
                super::shell_unset::apply(&mut out, &names, last_command);
            }
        }
        if used > 1 || !super::shell_unset::runs_nothing(code) {
            last_command = lineno + used as u64 - 1;
        }
        let t = line.trim_start();
        header &= t.is_empty() || t.starts_with('#');
        for _ in 0..closes {
            out.push(guard_entry(EntryKind::GuardEnd, lineno, String::new(), ""));
        }
        i += used;
        let Some(word) = heredoc_word(line) else {
            continue;
        };
        // A here-document: its body up to the line that is the word. One
        // that never ends is no here-document (`x << y` arithmetic): its
        // lines are read as lines of the script.
        let ends = ends.get_or_insert_with(|| {
            let mut m: HashMap<&str, Vec<usize>> = HashMap::new();
            for (k, l) in lines.iter().enumerate() {
                let t = l.trim();
                if !t.is_empty() && t.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_') {
                    m.entry(t).or_default().push(k);
                }
            }
            m
        });
        let Some(end) = ends.get(word).and_then(|at| {
            let k = at.partition_point(|&k| k < i);
            at.get(k).copied()
        }) else {
            continue;
        };
        heredoc(&lines[i..end], i as u64, line, &mut out);
        // What the here-document writes is another file's: an `unset`
        // after it does not reach it.
        last_command = end as u64 + 1;
        i = end + 1;
    }
    // An `if` never closed: its guard ends with the file.
    for _ in ifs.into_iter().flatten() {
        out.push(guard_entry(
            EntryKind::GuardEnd,
            lines.len() as u64,
            String::new(),
            "",
        ));
    }
    out
}

/// A line that ends in a flag and a `\\` continuation, with the word that
/// opens the next line when that word is the flag's value (`--kv-store \\`
/// then `dist_async`): the line read as if the value stood on it, as the
/// shell joins them. The next line is read on its own as well; its first
/// word alone gives no setting.
fn continued_value(line: &str, next: Option<&str>) -> Option<String> {
    let body = line.trim_end().strip_suffix('\\')?;
    next_line_value(body, next)
}

/// The same for a line of a bash array that spans lines (`ARGS=(` ...
/// `)`), whose items need no `\\`: `--optim` then `sgd`, quoted or not.
fn array_value(line: &str, next: Option<&str>) -> Option<String> {
    next_line_value(strip_comment(line).trim_end(), next)
}

fn next_line_value(body: &str, next: Option<&str>) -> Option<String> {
    let flag = body
        .split_whitespace()
        .next_back()?
        .trim_matches(['"', '\'']);
    if !flag.starts_with("--") || flag.contains('=') {
        return None;
    }
    let value = next?.split_whitespace().next()?;
    let plain = !value
        .trim_start_matches(['"', '\''])
        .starts_with(['-', '#', '\\', '|', '&', ';', '>', '<', ')']);
    let body = body.trim_end_matches(['"', '\'']);
    let value = value.trim_matches(['"', '\'']);
    (plain && !value.is_empty()).then(|| format!("{body} {value}"))
}

/// Whether `line` opens a bash array that goes on over the next lines
/// (`ARGS=(`, `CMD+=( --x`, `declare -a A=(`), not closed on it.
fn opens_array(line: &str) -> bool {
    let c = strip_comment(line).trim();
    let Some(at) = c.find("=(") else {
        return false;
    };
    let name = c[..at].trim_end_matches('+');
    let name = name.rsplit(char::is_whitespace).next().unwrap_or(name);
    !name.is_empty()
        && name
            .chars()
            .all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
        && !c[at..].contains(')')
}

fn guard_entry(kind: EntryKind, line: u64, value: String, display: &str) -> Entry {
    Entry {
        line,
        path: Vec::new(),
        value,
        kind,
        display: display.chars().take(120).collect(),
    }
}

/// The guards a shell line opens or closes (see [`super::shell_guard`]):
/// `if`/`elif`/`else`/`fi` keep `ifs`, the conditions of the open `if`s,
/// and push [`EntryKind::Guard`]/[`EntryKind::GuardEnd`] entries before
/// the line's own settings. Returns how many guards close after them (an
/// `if ...; then ...; fi` or a `[ ... ] && ...` on one line).
fn guard_line(
    line: &str,
    lineno: u64,
    ifs: &mut Vec<Option<String>>,
    out: &mut Vec<Entry>,
) -> usize {
    use super::shell_guard::{condition, negated};
    let code = strip_comment(line).trim();
    if code.is_empty() {
        return 0;
    }
    let word = code
        .split(|c: char| c.is_whitespace() || c == ';')
        .next()
        .unwrap_or("");
    let close = |ifs: &mut Vec<Option<String>>, out: &mut Vec<Entry>| {
        if let Some(Some(_)) = ifs.last() {
            out.push(guard_entry(EntryKind::GuardEnd, lineno, String::new(), ""));
        }
    };
    match word {
        "if" => {
            let rest = code[2..].trim_start();
            // A whole `if` on one line with an `else` in it: not guarded.
            let one_line = ends_with_fi(code);
            let cond = if one_line && (code.contains(" else") || code.contains(";else")) {
                None
            } else {
                condition(rest)
            };
            if let Some(c) = &cond {
                out.push(guard_entry(EntryKind::Guard, lineno, c.clone(), code));
            }
            if one_line {
                return usize::from(cond.is_some());
            }
            ifs.push(cond);
            0
        }
        "elif" => {
            // The branches after the first are on (no chain is decided).
            close(ifs, out);
            if let Some(top) = ifs.last_mut() {
                *top = None;
            }
            0
        }
        "else" => {
            close(ifs, out);
            if let Some(top) = ifs.last_mut() {
                if let Some(c) = top.take() {
                    let not = negated(&c);
                    out.push(guard_entry(EntryKind::Guard, lineno, not.clone(), code));
                    *top = Some(not);
                }
            }
            0
        }
        "fi" => {
            close(ifs, out);
            ifs.pop();
            0
        }
        _ if (word.starts_with('[') || word == "test") && code.contains("&&") => {
            // `[ "${X:-0}" = 1 ] && EXTRA=...`: the rest of the line.
            let (test, _) = code.split_once("&&").unwrap_or((code, ""));
            match condition(test) {
                Some(c) => {
                    out.push(guard_entry(EntryKind::Guard, lineno, c, code));
                    1
                }
                None => 0,
            }
        }
        _ => 0,
    }
}

/// Reads the `case` statements of a shell script: each arm is a guard
/// (its settings run only when the word matches its pattern), so two
/// arms' assignments of one variable do not override each other. An arm
/// of one literal pattern (`async)`) is the condition `[ WORD = async ]`,
/// decided as an `if`'s is; any other (`*)`, `a|b)`, a glob) is a guard
/// nothing decides. Returns how many guards end after this line's
/// settings (an arm that ends with `;;`).
fn case_line(
    line: &str,
    lineno: u64,
    cases: &mut Vec<(String, bool)>,
    out: &mut Vec<Entry>,
) -> usize {
    let code = strip_comment(line).trim();
    if code.is_empty() {
        return 0;
    }
    if let Some(rest) = code.strip_prefix("case ") {
        let Some(word) = rest.trim_end().strip_suffix(" in") else {
            // A whole `case` on one line: not read as arms.
            return 0;
        };
        cases.push((word.trim().to_string(), false));
        return 0;
    }
    let Some((word, open)) = cases.last_mut() else {
        return 0;
    };
    if code == "esac" || code.starts_with("esac ") || code.starts_with("esac;") {
        let was_open = *open;
        cases.pop();
        if was_open {
            out.push(guard_entry(EntryKind::GuardEnd, lineno, String::new(), ""));
        }
        return 0;
    }
    let ends_arm = |c: &str| c.contains(";;") || c.contains(";&");
    if *open {
        if ends_arm(code) {
            *open = false;
            return 1;
        }
        return 0;
    }
    // An arm's pattern: `PAT)` or `(PAT)`, then maybe its commands.
    let t = code.strip_prefix('(').unwrap_or(code);
    let Some((pattern, rest)) = t.split_once(')') else {
        return 0;
    };
    let pattern = pattern.trim();
    if pattern.is_empty() || pattern.contains(['(', '$', '`']) {
        return 0;
    }
    let literal = pattern.trim_matches(['"', '\'']);
    let cond = if literal.contains(['*', '?', '[', '|', ' ']) {
        String::new()
    } else {
        super::shell_guard::condition(&format!("[ {word} = {literal} ]")).unwrap_or_default()
    };
    out.push(guard_entry(EntryKind::Guard, lineno, cond, code));
    if ends_arm(rest) {
        return 1;
    }
    *open = true;
    0
}

/// Whether a line that starts an `if` also ends it (`...; fi`).
fn ends_with_fi(code: &str) -> bool {
    let t = code.trim_end().trim_end_matches(';').trim_end();
    t.strip_suffix("fi")
        .is_some_and(|rest| rest.ends_with(';') || rest.ends_with(char::is_whitespace))
}

/// The word that ends a here-document `line` starts (`<<EOF`, `<<-EOF`,
/// `<< 'EOF'`, `<<"EOF"`), outside comments; not a here-string (`<<<`).
fn heredoc_word(line: &str) -> Option<&str> {
    let code = strip_comment(line);
    let at = code.find("<<")?;
    let rest = &code[at + 2..];
    if rest.starts_with('<') {
        return None;
    }
    let rest = rest.strip_prefix('-').unwrap_or(rest).trim_start();
    let rest = rest.trim_start_matches(['\'', '"', '\\']);
    let len = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    let word = &rest[..len];
    word.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        .then_some(word)
}

/// The body of a here-document whose first line is line `before + 1`: a
/// config written by the script (`cat > ds_config.json <<EOF`) is read
/// as the JSON or YAML it is; any other body line by line, as the script.
fn heredoc(body: &[&str], before: u64, opener: &str, out: &mut Vec<Entry>) {
    // Text a script shows (`cat <<EOF` to the terminal, a usage message):
    // no settings.
    let command = opener.split("<<").next().unwrap_or("");
    let redirect = opener.split("<<").nth(1).unwrap_or("");
    let shown = redirect
        .split_once(char::is_whitespace)
        .map_or("", |(_, r)| r);
    if only_prints(&format!("{command} {shown}"), true) {
        return;
    }
    // A block comment (`: <<'COMMENT'` ... `COMMENT`): the no-op builtin
    // reads the body and does nothing with it.
    if matches!(command.trim(), ":" | "true") && heredoc_target(opener).is_none() {
        return;
    }
    let python = runs_python(opener);
    if let Some(format) = heredoc_target(opener).and_then(|t| embedded_format(t, &[])) {
        out.extend(embedded(body, format, before, &[]));
        return;
    }
    let first = body
        .iter()
        .map(|l| l.trim())
        .find(|l| !l.is_empty() && !l.starts_with('#'))
        .unwrap_or("");
    let text = body.join("\n");
    if first.starts_with('{') || first.starts_with('[') {
        json_entries(&text, &[], before, out);
        return;
    }
    let yaml = yaml_key(first).is_some_and(|(k, _)| !k.contains(['=', ' ', '$', '(']));
    if yaml {
        out.extend(parse_yaml(&text).into_iter().map(|mut e| {
            e.line += before;
            e
        }));
        return;
    }
    for (k, line) in body.iter().enumerate() {
        shell_line(line, before + k as u64 + 1, &[], out);
        if python {
            python_statements(strip_comment(line), before + k as u64 + 1, &[], out);
        }
    }
}

/// Most lines a quoted text a print command writes may span.
const PRINTED_LINES: usize = 64;

/// A `printf` or `echo` (with `-e`) that writes quoted text into a file
/// (`printf 'BYTEPS_ENABLE_ASYNC=1\nDMLC_ROLE=worker\n' > /tmp/bps.env`,
/// `echo "optimizer: lamb" >> conf.yaml`, the quote may span lines): the
/// settings of what it writes, read as the body of a here-document to
/// the same file is (by the file's format, else line by line as a
/// script), each at the line that holds it, and how many lines the
/// command takes (`lines` are those after line `before`). `None` for any
/// other line, and for text printed to the terminal.
fn printed_to_file(lines: &[&str], before: u64) -> Option<(Vec<Entry>, usize)> {
    let first = lines.first()?.trim_start();
    let (command, _) = first.split_once(char::is_whitespace)?;
    let printf = command == "printf";
    if !printf && command != "echo" {
        return None;
    }
    // The command's text up to where its quotes close.
    let mut code = String::new();
    let mut used = 0;
    let mut quote: Option<char> = None;
    for line in lines.iter().take(PRINTED_LINES) {
        if used > 0 {
            code.push('\n');
        }
        code.push_str(line);
        used += 1;
        let mut escaped = false;
        for c in line.chars() {
            match quote {
                Some('"') if escaped => escaped = false,
                Some('"') if c == '\\' => escaped = true,
                Some(q) if c == q => quote = None,
                Some(_) => {}
                None if escaped => escaped = false,
                None if c == '\\' => escaped = true,
                None if c == '#' => break,
                None if c == '\'' || c == '"' => quote = Some(c),
                None => {}
            }
        }
        if quote.is_none() {
            break;
        }
    }
    if quote.is_some() {
        return None;
    }
    // The quoted words after the command and its options, each with the
    // physical line it starts on; then what the output goes to.
    let mut words: Vec<(String, usize)> = Vec::new();
    let mut rest = String::new();
    let mut line_at = 0;
    let mut chars = code[command.len() + (code.len() - code.trim_start().len())..].chars();
    let mut escapes = printf;
    while let Some(c) = chars.next() {
        match c {
            '\n' => line_at += 1,
            '\'' | '"' => {
                let mut w = String::new();
                let start = line_at;
                for d in chars.by_ref() {
                    if d == c {
                        break;
                    }
                    if d == '\n' {
                        line_at += 1;
                    }
                    w.push(d);
                }
                words.push((w, start));
            }
            c if c.is_whitespace() => {}
            _ => {
                let mut w = String::from(c);
                for d in chars.by_ref() {
                    if d.is_whitespace() {
                        break;
                    }
                    w.push(d);
                }
                if words.is_empty() && w.starts_with('-') && !w.starts_with("--") {
                    escapes |= w.contains('e');
                    continue;
                }
                rest.push_str(&w);
                rest.push(' ');
                rest.extend(chars.by_ref());
                break;
            }
        }
    }
    let target = heredoc_target(&rest)?;
    if target.starts_with("/dev/") || words.is_empty() {
        return None;
    }
    // printf's format is its first word (the rest fill its `%s`).
    let taken = if printf { &words[..1] } else { &words[..] };
    let mut body: Vec<String> = Vec::new();
    let mut phys: Vec<usize> = Vec::new();
    for (w, start) in taken {
        for (k, piece) in w.split('\n').enumerate() {
            let pieces: Vec<&str> = if escapes {
                piece.split("\\n").collect()
            } else {
                vec![piece]
            };
            for p in pieces {
                body.push(p.to_string());
                phys.push(start + k);
            }
        }
    }
    let opener = format!("cat > {target} <<EOF");
    let refs: Vec<&str> = body.iter().map(String::as_str).collect();
    let mut out = Vec::new();
    heredoc(&refs, 0, &opener, &mut out);
    for e in &mut out {
        let k = usize::try_from(e.line).unwrap_or(1).saturating_sub(1);
        e.line = before + phys.get(k).or(phys.last()).map_or(1, |&p| p as u64 + 1);
    }
    Some((out, used))
}

/// Whether the command that opens a here-document on `line` is a Python
/// interpreter (`python - <<EOF`, `python3 <<'PY'`): its body is a program.
fn runs_python(line: &str) -> bool {
    let before = line.split("<<").next().unwrap_or("");
    before
        .split(|c: char| c.is_whitespace() || matches!(c, '(' | '$' | '|' | ';'))
        .any(|w| {
            let n = w.rsplit('/').next().unwrap_or(w);
            n == "python"
                || n.strip_prefix("python3")
                    .is_some_and(|v| v.is_empty() || v.starts_with('.'))
        })
}

/// The format of a file a block scalar or a here-document holds: by the
/// name it is written under (`ds_config.json: |`, `cat > t.toml <<EOF`),
/// else JSON when its text opens with `{`. `None`: read as a script.
fn embedded_format(name: &str, body: &[&str]) -> Option<Format> {
    let name = name.trim_matches(['"', '\'']);
    let by_name = name
        .rsplit('/')
        .next()
        .filter(|n| n.contains('.'))
        .map(|n| by_extension(&n.to_lowercase()))
        .filter(|f| *f != Format::Shell);
    by_name.or_else(|| {
        body.iter()
            .map(|l| l.trim())
            .find(|l| !l.is_empty())
            .filter(|l| l.starts_with('{'))
            .map(|_| Format::Json)
    })
}

/// The settings of a file held in `body` (lines after line `before`),
/// under key path `parents`.
fn embedded(body: &[&str], format: Format, before: u64, parents: &[String]) -> Vec<Entry> {
    let cut = body
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| indent_of(l))
        .min()
        .unwrap_or(0);
    let text: Vec<&str> = body.iter().map(|l| l.get(cut..).unwrap_or("")).collect();
    parse(&text.join("\n"), format)
        .into_iter()
        .map(|mut e| {
            e.line += before;
            if !parents.is_empty() && !e.path.is_empty() {
                let mut path = parents.to_vec();
                path.append(&mut e.path);
                e.path = path;
            }
            e
        })
        .collect()
}

/// The file a here-document opened on `line` is written to (`cat >
/// ds.json <<EOF`, `tee t.toml <<EOF`, `cat <<EOF > c.yaml`).
fn heredoc_target(line: &str) -> Option<&str> {
    let code = strip_comment(line);
    let words: Vec<&str> = code.split_whitespace().collect();
    words.iter().enumerate().find_map(|(k, w)| {
        let after = |p: &str| (k > 0 && words[k - 1] == p).then_some(*w);
        let t = w
            .strip_prefix(">>")
            .or_else(|| w.strip_prefix('>'))
            .filter(|t| !t.is_empty())
            .or_else(|| after(">"))
            .or_else(|| after(">>"))
            .or_else(|| after("tee"))
            .or_else(|| after("-a").filter(|_| k > 1 && words[k - 2] == "tee"))?;
        let t = t.trim_matches(['"', '\'']);
        (!t.starts_with("<<") && !t.starts_with('&')).then_some(t)
    })
}

fn indent_of(line: &str) -> usize {
    line.len() - line.trim_start_matches([' ', '\t']).len()
}

fn parse_yaml(text: &str) -> Vec<Entry> {
    let mut out = Vec::new();
    let mut aliases = Aliases::default();
    let mut stack: Vec<(usize, String)> = Vec::new();
    // Inside a block scalar (`key: |`): lines indented more than this.
    let mut block: Option<usize> = None;
    // The block's key (its entry in `out`) and how many lines of text the
    // block has had: a block of one word is the key's value (`kvstore: >-`
    // then `dist_async`).
    let mut block_key: Option<(usize, usize)> = None;
    // A block scalar read as the file it holds: its lines are skipped.
    let mut skip_to = 0;
    let all: Vec<&str> = text.lines().collect();
    for (i, raw) in all.iter().copied().enumerate() {
        let lineno = i as u64 + 1;
        if i < skip_to {
            continue;
        }
        let indent = indent_of(raw);
        if let Some(bi) = block {
            if raw.trim().is_empty() || indent > bi {
                // Text of a block scalar: usually a script.
                let parents: Vec<String> = stack.iter().map(|(_, k)| k.clone()).collect();
                shell_line(raw, lineno, &parents, &mut out);
                let word = raw.trim();
                if let Some((at, lines)) = block_key.as_mut().filter(|_| !word.is_empty()) {
                    *lines += 1;
                    if let Some(e) = out.get_mut(*at) {
                        let one = *lines == 1 && !word.contains(char::is_whitespace);
                        e.value = if one { word.to_string() } else { String::new() };
                    }
                }
                continue;
            }
            block = None;
            block_key = None;
        }
        let code = strip_comment(raw);
        let trimmed = code.trim();
        if trimmed.is_empty() || trimmed == "---" || trimmed == "..." {
            continue;
        }
        let mut content = trimmed;
        let mut indent = indent;
        while let Some(rest) =
            content
                .strip_prefix("- ")
                .or_else(|| if content == "-" { Some("") } else { None })
        {
            indent += 2;
            content = rest.trim_start();
        }
        while stack.last().is_some_and(|(ind, _)| *ind >= indent) {
            stack.pop();
        }
        let parents: Vec<String> = stack.iter().map(|(_, k)| k.clone()).collect();
        if content.is_empty() {
            continue;
        }
        match yaml_key(content) {
            Some((k, v)) => {
                let k = unquote(k.trim()).to_string();
                let (anchor, v) = split_anchor(untagged(v.map(str::trim).unwrap_or("")));
                // An alias of an anchored value reads as that value.
                let aliased = aliases.scalar(v).map(str::to_string);
                let v = aliased.as_deref().unwrap_or(v);
                if k == "<<" {
                    // A merge key: the aliased blocks' settings are the
                    // block's own.
                    aliases.copy(v, &parents, &mut out);
                    continue;
                }
                let is_block = v.starts_with('|') || v.starts_with('>');
                // An alias of an anchored block (`grad_compression: *gc`)
                // is that block, copied below: a header like the block
                // written out, whose `enabled: false` switches it off.
                let block_alias = anchor.is_none() && aliased.is_none() && aliases.is_block(v);
                let header = v.is_empty() || block_alias;
                let value = if is_block || block_alias {
                    String::new()
                } else {
                    unquote(v).to_string()
                };
                // JSON in a quoted string (`TF_CONFIG: '{"cluster": ...}'`),
                // or a Python dict written the same way with single quotes
                // (`optimizer_kwargs: "{'name': 'lion'}"`).
                let json = (!v.starts_with('{') && value.starts_with('{') && value.ends_with('}'))
                    .then(|| python_dict_as_json(&value));
                let mut path = parents.clone();
                path.push(k.clone());
                out.push(Entry {
                    line: lineno,
                    path,
                    display: if (header && !block_alias) || is_block {
                        format!("{k}:")
                    } else {
                        format!("{k}: {v}")
                    },
                    value,
                    kind: EntryKind::Key { header },
                });
                if let Some(a) = anchor {
                    aliases.define(a, &out, out.len() - 1);
                } else if block_alias {
                    let mut at = parents.clone();
                    at.push(k.clone());
                    aliases.copy(v, &at, &mut out);
                }
                if is_block {
                    let end = all[i + 1..]
                        .iter()
                        .position(|l| !l.trim().is_empty() && indent_of(l) <= indent)
                        .map_or(all.len(), |k| i + 1 + k);
                    let body = &all[i + 1..end];
                    match embedded_format(&k, body) {
                        // A file held in a block (a ConfigMap's
                        // `ds_config.json: |`): read as what it is.
                        Some(format) => {
                            let mut at = parents.clone();
                            at.push(k.clone());
                            out.extend(embedded(body, format, lineno, &at));
                            skip_to = end;
                        }
                        None => {
                            block = Some(indent);
                            block_key = Some((out.len() - 1, 0));
                        }
                    }
                }
                if v.starts_with('{') && v.ends_with('}') {
                    let mut at = parents.clone();
                    at.push(k.clone());
                    flow_map(v, &at, lineno, 0, &mut out);
                } else if let Some(inner) = v.strip_prefix('[').and_then(|x| x.strip_suffix(']')) {
                    // A flow sequence of flow maps (`env: [{name: X, value:
                    // "1"}]`): each map's keys sit under the sequence's key.
                    let mut at = parents.clone();
                    at.push(k.clone());
                    for item in top_level_items(inner) {
                        let item = item.trim();
                        if item.starts_with('{') && item.ends_with('}') {
                            flow_map(item, &at, lineno, 0, &mut out);
                        } else {
                            // An argument list's `model.optim.name=sgd` (a
                            // container's `args: ["python", ...]`), as in a
                            // block sequence.
                            let word = unquote(item);
                            if !word.contains(char::is_whitespace) && shell_assign(word).is_none() {
                                assignment(word, lineno, &at, None, &mut out);
                            }
                        }
                    }
                } else if let Some(json) = json {
                    let mut at = parents.clone();
                    at.push(k.clone());
                    json_entries(&json, &at, lineno.saturating_sub(1), &mut out);
                }
                stack.push((indent, k));
                if !v.is_empty() && !is_block {
                    oc_env_defaults(v, lineno, &parents, &mut out);
                    flags(v, lineno, &parents, &mut out);
                }
            }
            None => {
                let (_, content) = split_anchor(content);
                let aliased = aliases.scalar(content).map(str::to_string);
                let content = aliased.as_deref().unwrap_or(content);
                let item = unquote(content);
                let assign = shell_assign(item);
                if content.starts_with('{') && content.ends_with('}') {
                    // A flow map as a list item (`- {name: X, value: "1"}`).
                    flow_map(content, &parents, lineno, 0, &mut out);
                }
                if assign.is_none() {
                    // (`- NAME=value` is the variable's setting, not a word
                    // listed under the key: its value may switch it off.)
                    out.push(Entry {
                        line: lineno,
                        path: parents.clone(),
                        value: item.to_string(),
                        kind: EntryKind::Value,
                        display: content.to_string(),
                    });
                }
                if let Some((k, v)) = assign {
                    // `- NAME=value` (a Compose service's environment list).
                    let mut path = parents.clone();
                    path.push(k.to_string());
                    out.push(Entry {
                        line: lineno,
                        path,
                        value: first_word(v).to_string(),
                        kind: EntryKind::Key { header: false },
                        display: item.to_string(),
                    });
                } else if !item.contains(char::is_whitespace) {
                    // `- model.optim.name=lamb`: a Hydra override in a list
                    // (the `overrides.yaml` Hydra saves beside a run, its
                    // `hydra.overrides.task`), the dotted key a path.
                    assignment(item, lineno, &parents, None, &mut out);
                }
                flags(content, lineno, &parents, &mut out);
            }
        }
    }
    out
}

/// Deepest nesting of YAML flow maps read.
const MAX_FLOW_DEPTH: usize = 16;

/// A YAML flow map (`{algorithm: async, backend: nccl}`) on one line: each
/// `key: value` a setting under `path`, nested maps read the same way.
fn flow_map(v: &str, path: &[String], lineno: u64, depth: usize, out: &mut Vec<Entry>) {
    let Some(inner) = v.strip_prefix('{').and_then(|v| v.strip_suffix('}')) else {
        return;
    };
    if depth >= MAX_FLOW_DEPTH {
        return;
    }
    for part in top_level_items(inner) {
        let Some((k, value)) = yaml_key(part.trim()) else {
            continue;
        };
        let k = unquote(k.trim()).to_string();
        let value = value.map(str::trim).unwrap_or("");
        let mut at = path.to_vec();
        at.push(k.clone());
        if value.starts_with('{') && value.ends_with('}') {
            flow_map(value, &at, lineno, depth + 1, out);
            continue;
        }
        out.push(Entry {
            line: lineno,
            path: at,
            display: format!("{k}: {value}"),
            value: unquote(value).to_string(),
            kind: EntryKind::Key { header: false },
        });
    }
}

fn parse_ini(text: &str) -> Vec<Entry> {
    let mut out = Vec::new();
    let mut section: Vec<String> = Vec::new();
    // An open TOML multi-line string (`key = '''` ... `'''`): its key path,
    // delimiter, first line and the lines so far.
    let mut open: Option<(Vec<String>, &str, u64, String)> = None;
    for (i, raw) in text.lines().enumerate() {
        let lineno = i as u64 + 1;
        if let Some((path, delim, start, mut buf)) = open.take() {
            match raw.find(delim) {
                Some(end) => {
                    buf.push_str(&raw[..end]);
                    multiline_string(&path, start, &buf, &mut out);
                }
                None => {
                    buf.push_str(raw);
                    buf.push('\n');
                    open = Some((path, delim, start, buf));
                }
            }
            continue;
        }
        let code = strip_comment(raw);
        let t = code.trim();
        if t.is_empty() || t.starts_with(';') {
            continue;
        }
        if t.starts_with('[') && t.ends_with(']') {
            let name = t.trim_matches(|c| c == '[' || c == ']').trim();
            section = name
                .split('.')
                .map(|s| unquote(s.trim()).to_string())
                .collect();
            out.push(Entry {
                line: lineno,
                path: section.clone(),
                value: String::new(),
                kind: EntryKind::Key { header: true },
                display: t.to_string(),
            });
            continue;
        }
        let assign = ini_key_re().and_then(|r| r.captures(t));
        if let Some(c) = assign {
            let k = unquote(c.get(1).map(|m| m.as_str()).unwrap_or("")).to_string();
            let v = c.get(2).map(|m| m.as_str().trim()).unwrap_or("");
            let mut path = section.clone();
            path.extend(k.split('.').map(str::to_string));
            // A TOML multi-line string that does not close on its line
            // (what follows its opening quotes there is its first line).
            let opened = ["'''", "\"\"\""].into_iter().find_map(|d| {
                let rest = raw.split_once('=')?.1.trim_start().strip_prefix(d)?;
                (!rest.contains(d)).then_some((d, rest))
            });
            if let Some((d, rest)) = opened {
                let mut buf = rest.to_string();
                buf.push('\n');
                open = Some((path, d, lineno, buf));
                continue;
            }
            if v.starts_with('{') && v.ends_with('}') {
                // A TOML inline table: `optimizer = { name = "lamb" }`.
                inline_table(v, &path, lineno, 0, &mut out);
            } else if let Some(inner) = v.strip_prefix('[').and_then(|v| v.strip_suffix(']')) {
                // A TOML array on one line: its inline tables' keys sit
                // under the array's (`optimizers = [{name = "lamb"}]` is
                // optimizers.name, as an [[optimizers]] table is), its
                // first few other items are values of its key.
                let mut listed = 0;
                for item in top_level_items(inner) {
                    let item = item.trim();
                    if item.starts_with('{') && item.ends_with('}') {
                        inline_table(item, &path, lineno, 0, &mut out);
                    } else if !item.is_empty() && !item.starts_with('[') && listed < LISTED_ITEMS {
                        listed += 1;
                        out.push(Entry {
                            line: lineno,
                            path: path.clone(),
                            display: item.to_string(),
                            value: unquote(item).to_string(),
                            kind: EntryKind::Value,
                        });
                    }
                }
            }
            out.push(Entry {
                line: lineno,
                path,
                display: format!("{k} = {v}"),
                value: unquote(v).to_string(),
                kind: EntryKind::Key { header: false },
            });
        } else if let Some((k, v)) = shell_assign(t) {
            // `export NAME=value` in an .ini-like file.
            let mut path = section.clone();
            path.push(k.to_string());
            out.push(Entry {
                line: lineno,
                path,
                display: t.to_string(),
                value: first_word(v).to_string(),
                kind: EntryKind::Key { header: false },
            });
        }
        flags(t, lineno, &section, &mut out);
    }
    out
}

/// A TOML multi-line string that opened at line `start` (`ds_config =
/// '''` then a DeepSpeed config): JSON in it is read as settings under its
/// key; other text is the key's value.
fn multiline_string(path: &[String], start: u64, text: &str, out: &mut Vec<Entry>) {
    let t = text.trim();
    if t.starts_with('{') && t.ends_with('}') {
        // The string's first line is the key's. Its settings are the JSON's
        // (its words are not read again as one value).
        let before = out.len();
        json_entries(text, path, start.saturating_sub(1), out);
        if out.len() > before {
            return;
        }
    }
    out.push(Entry {
        line: start,
        path: path.to_vec(),
        display: format!(
            "{} = '''{}'''",
            path.last().map_or("", String::as_str),
            t.chars().take(60).collect::<String>()
        ),
        value: t.to_string(),
        kind: EntryKind::Key { header: false },
    });
}

/// The items of a flow map or inline table's inside: split at the commas
/// outside quotes, brackets and braces.
fn top_level_items(inner: &str) -> Vec<&str> {
    let (mut parts, mut start, mut level, mut quote) = (Vec::new(), 0, 0i32, None);
    for (i, c) in inner.char_indices() {
        match (quote, c) {
            (Some(q), _) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '{' | '[') => level += 1,
            (None, '}' | ']') => level -= 1,
            (None, ',') if level == 0 => {
                parts.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    parts
}

/// The keys of a TOML inline table `{ k = v, t = { ... } }` under `path`,
/// nested tables as deep as [`MAX_INLINE_DEPTH`].
/// Items of a one-line TOML array read as values of its key, at most (a
/// long array of numbers gives no more, as in the JSON reader).
const LISTED_ITEMS: usize = 4;

fn inline_table(v: &str, path: &[String], lineno: u64, depth: usize, out: &mut Vec<Entry>) {
    const MAX_INLINE_DEPTH: usize = 8;
    let Some(inner) = v.strip_prefix('{').and_then(|v| v.strip_suffix('}')) else {
        return;
    };
    if depth >= MAX_INLINE_DEPTH {
        return;
    }
    for part in top_level_items(inner) {
        let Some((k, val)) = part.split_once('=') else {
            continue;
        };
        let (k, val) = (unquote(k.trim()), val.trim());
        if k.is_empty() {
            continue;
        }
        let mut p = path.to_vec();
        p.extend(k.split('.').map(str::to_string));
        if val.starts_with('{') && val.ends_with('}') {
            inline_table(val, &p, lineno, depth + 1, out);
        }
        out.push(Entry {
            line: lineno,
            display: format!("{} = {val}", p.join(".")),
            value: unquote(val).to_string(),
            path: p,
            kind: EntryKind::Key { header: false },
        });
    }
}

/// Every setting of `text`, read as `format`, in line order.
pub fn parse(text: &str, format: Format) -> Vec<Entry> {
    let mut entries = match format {
        Format::Shell => parse_shell(text),
        Format::Yaml => {
            let mut e = parse_yaml(text);
            relative_refs(&mut e);
            e
        }
        Format::Json => parse_json(text),
        Format::Ini => parse_ini(text),
        Format::Proto => parse_proto(text),
    };
    name_value_pairs(&mut entries);
    described_values(&mut entries);
    entries.sort_by_key(|e| e.line);
    pair_list_flags(&mut entries);
    entries
}

/// OmegaConf's relative interpolations made absolute: in a value at key
/// path `a.b.c`, `${.x}` is `${a.b.x}` (a sibling) and every further dot
/// goes one level up (`${..x}` is `${a.x}`), so that they resolve as
/// `${a.b.x}` does. One that goes above the top is left as written.
fn relative_refs(entries: &mut [Entry]) {
    for e in entries.iter_mut().filter(|e| e.value.contains("${.")) {
        let mut out = String::with_capacity(e.value.len() + 16);
        let mut rest = e.value.as_str();
        while let Some(i) = rest.find("${.") {
            out.push_str(&rest[..i + 2]);
            let after = &rest[i + 2..];
            let dots = after.bytes().take_while(|b| *b == b'.').count();
            let name_end = after[dots..]
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '-'))
                .map_or(after.len(), |n| n + dots);
            let name = &after[dots..name_end];
            // The value's own key is the last part of its path: `.` is its
            // parent, each further dot one level higher.
            let keep = e.path.len().checked_sub(dots);
            match keep {
                Some(k) if !name.is_empty() && after[name_end..].starts_with('}') => {
                    for p in &e.path[..k] {
                        out.push_str(p);
                        out.push('.');
                    }
                    out.push_str(name);
                }
                _ => out.push_str(&after[..name_end]),
            }
            rest = &after[name_end..];
        }
        out.push_str(rest);
        e.value = out;
    }
}

/// A setting written as a block of its `value:` and a `desc:` and nothing
/// else, as Weights & Biases saves a run's config (`optimizer: {desc: null,
/// value: lamb}`): the value is its key's.
fn described_values(entries: &mut Vec<Entry>) {
    use std::collections::HashMap;
    let key = EntryKind::Key { header: false };
    let is_value = |e: &Entry| {
        e.kind == key && e.path.len() >= 2 && e.path.last().is_some_and(|k| k == "value")
    };
    // Each block that holds a `value:`: whether it holds a `desc` too, and
    // anything else (another key, or anything deeper). One pass, every
    // entry's parents looked up once.
    let mut blocks: HashMap<&[String], (bool, bool)> = entries
        .iter()
        .filter(|e| is_value(e) && !e.value.is_empty())
        .map(|e| (&e.path[..e.path.len() - 1], (false, false)))
        .collect();
    if blocks.is_empty() {
        return;
    }
    for e in entries.iter() {
        let n = e.path.len();
        for k in 1..n {
            if let Some((desc, other)) = blocks.get_mut(&e.path[..k]) {
                match (k + 1 == n, e.path[k].as_str()) {
                    (true, "desc") => *desc = true,
                    (true, "value") => {}
                    _ => *other = true,
                }
            }
        }
    }
    let mut found = Vec::new();
    for e in entries
        .iter()
        .filter(|e| is_value(e) && !e.value.is_empty())
    {
        let parent = &e.path[..e.path.len() - 1];
        if blocks.get(parent) != Some(&(true, false)) {
            continue;
        }
        let k = &parent[parent.len() - 1];
        found.push(Entry {
            line: e.line,
            path: parent.to_vec(),
            value: e.value.clone(),
            kind: key,
            display: format!("{k}: {}", e.value),
        });
    }
    entries.extend(found);
}

/// A variable given as a `name:` and a `value:` of one list item (a
/// Kubernetes container's `env`, a job spec's parameters): the pair is a
/// setting of its own, the name its key.
fn name_value_pairs(entries: &mut Vec<Entry>) {
    let key = EntryKind::Key { header: false };
    let last_is = |e: &Entry, k: &str| e.path.last().is_some_and(|l| l == k);
    let mut found = Vec::new();
    let mut i = 0;
    while i + 1 < entries.len() {
        let (a, b) = (&entries[i], &entries[i + 1]);
        let n = a.path.len();
        // `name:` then `value:`, or a k8s item written `value:` first
        // (key order means nothing in YAML), on the next line.
        let (name, value) = if last_is(a, "name") && last_is(b, "value") && b.line <= a.line + 2 {
            (a, b)
        } else if last_is(a, "value") && last_is(b, "name") && b.line == a.line + 1 {
            (b, a)
        } else {
            i += 1;
            continue;
        };
        if a.kind != key
            || b.kind != key
            || n == 0
            || b.path.len() != n
            || a.path[..n - 1] != b.path[..n - 1]
            || name.value.is_empty()
            || !name
                .value
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
        {
            i += 1;
            continue;
        }
        let mut path = name.path[..n - 1].to_vec();
        path.push(name.value.clone());
        found.push(Entry {
            line: value.line,
            path,
            value: value.value.clone(),
            kind: key,
            display: format!("{}={}", name.value, value.value),
        });
        // A variable a launcher passes on as arguments (`EXTRA_ARGS`
        // holding `model.optim.name=sgd`), as a shell assignment's value.
        overrides(
            &value.value,
            value.line,
            &name.path[..n - 1],
            None,
            &mut found,
        );
        // Each entry is one pair's: the next pair starts after both.
        i += 2;
    }
    entries.extend(found);
}

/// An argument list written one item per line (a YAML block sequence, a
/// JSON array over several lines): a bare `--name` item whose next item
/// (same list, same or next line) is not a flag takes it as its value, as
/// `--name value` on a command line does.
fn pair_list_flags(entries: &mut [Entry]) {
    let items: Vec<usize> = (0..entries.len())
        .filter(|&i| entries[i].kind == EntryKind::Value)
        .collect();
    for w in items.windows(2) {
        let (a, b) = (&entries[w[0]], &entries[w[1]]);
        let Some(name) = a.value.strip_prefix("--") else {
            continue;
        };
        if a.path != b.path
            || b.line > a.line + 1
            || name.is_empty()
            || !name
                .bytes()
                .all(|c| c.is_ascii_alphanumeric() || b"_.-".contains(&c))
            || b.value.is_empty()
            || b.value.starts_with('-')
            || b.value.contains(char::is_whitespace)
        {
            continue;
        }
        let (line, value) = (a.line, b.value.clone());
        let name = name.to_string();
        if let Some(flag) = entries.iter_mut().find(|e| {
            e.kind == EntryKind::Flag
                && e.line == line
                && e.value.is_empty()
                && e.path.last() == Some(&name)
        }) {
            flag.display = format!("{} {value}", flag.display);
            flag.value = value;
        }
    }
}

/// What was found at one entry.
#[derive(Debug, Clone, PartialEq)]
pub enum HitKind {
    /// A signal family of `signals.yaml` (a warning), by index.
    Family(usize),
    /// A framework setting of `frameworks/*.yaml`, by index.
    Setting(usize),
    /// A known framework optimizer: its mllog name.
    Optimizer(String),
}

/// A finding-to-be at one entry.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    pub line: u64,
    pub kind: HitKind,
    /// The matched words, or the value.
    pub word: String,
    pub display: String,
}

/// Longest value (as written) whose words are matched: long enough for a
/// dotted Python path (`torch.distributed.algorithms.ddp_comm_hooks...`).
const MAX_VALUE_MATCHED: usize = 256;

/// A YAML value without its standard tag (`!!str lamb` is `lamb`).
fn untagged(v: &str) -> &str {
    match v.strip_prefix("!!") {
        Some(rest) => match rest.split_once(char::is_whitespace) {
            Some((tag, value)) if tag.bytes().all(|b| b.is_ascii_alphabetic()) => {
                value.trim_start()
            }
            _ => v,
        },
        None => v,
    }
}

/// Whether the key `entries[at]` opens has anything under it: a nested
/// key or a listed item.
fn has_block(entries: &[Entry], at: usize) -> bool {
    let e = &entries[at];
    entries[at + 1..]
        .iter()
        .take_while(|n| n.line == e.line || n.path.starts_with(&e.path))
        .any(|n| n.path.len() > e.path.len() || n.kind == EntryKind::Value)
}

/// What a switch named after it switches: `enable_diloco`, `use_diloco`
/// and `diloco_enabled` give `diloco` (a name in normal form, an enable
/// key of the signal data before or after the rest).
fn switched<'a>(key: &'a str, m: &SignalMatcher) -> Option<&'a str> {
    let (head, rest) = key.split_once('_')?;
    if m.is_enable_key(head) && !rest.is_empty() {
        return Some(rest);
    }
    let (rest, tail) = key.rsplit_once('_')?;
    (m.is_enable_key(tail) && !rest.is_empty()).then_some(rest)
}

/// Dotted key paths of a file with their values, for `${a.b}` references.
/// Not a top-level key (`${a}`): in a shell file that is a variable, whose
/// values are the environment's ([`super::interpolate::Env`], which knows
/// which assignments a false condition guards).
pub fn local_values(entries: &[Entry]) -> BTreeMap<String, String> {
    local_values_with(entries, false)
}

/// [`local_values`], and the top-level keys too when `top_level` (a YAML,
/// JSON or INI file, where `${mode}` is OmegaConf's reference to a key).
pub fn local_values_with(entries: &[Entry], top_level: bool) -> BTreeMap<String, String> {
    let least = if top_level { 1 } else { 2 };
    entries
        .iter()
        .filter(|e| e.kind == (EntryKind::Key { header: false }) && e.path.len() >= least)
        .take(10_000)
        .map(|e| (e.path.join("."), e.value.clone()))
        .collect()
}

/// The signals, framework settings and optimizers among `entries`: at most
/// one hit per line and code (a framework setting wins over the family of
/// the same code).
/// `gate`: the word patterns a setting must contain for anything to match
/// it; `own`: the file is outside vendored trees, so what is reported only
/// there (optimizers, repeatability settings) is looked for too.
#[allow(clippy::too_many_arguments)]
pub fn scan(
    entries: &[Entry],
    m: &SignalMatcher,
    fw: &Frameworks,
    gate: Option<&Prefilter>,
    own: bool,
    env: &Env,
    local: &BTreeMap<String, String>,
    refs_only: bool,
) -> Vec<Hit> {
    // Sections switched off by an `enabled: false` inside them; a
    // `shared_parameters: {enabled: false}` (DeepSpeed compression) turns
    // off its parent too.
    let mut disabled: BTreeSet<Vec<String>> = BTreeSet::new();
    for e in entries {
        // A dotted flag is a path too (`--fault_tolerance.enable=false`);
        // one given alone is on.
        let keyed = match e.kind {
            EntryKind::Key { header: false } => true,
            EntryKind::Flag => !e.value.trim().is_empty(),
            _ => false,
        };
        if !keyed || e.path.len() < 2 {
            continue;
        }
        let Some(k) = e.path.last() else { continue };
        let k = normalize(k);
        let (enable, selector) = (m.is_enable_key(&k), m.is_selector_key(&k));
        if !enable && !selector {
            continue;
        }
        let values = expand(&e.value, env, local);
        // A selector is off by a word (`type: none`), not by a number: mode
        // 0 may choose a technique.
        let off = |v: &String| m.is_off(v) && (enable || v.trim().parse::<f64>().is_err());
        if !values.iter().all(off) {
            continue;
        }
        let section = e.path[..e.path.len() - 1].to_vec();
        if section.len() >= 2
            && section
                .last()
                .is_some_and(|s| normalize(s) == "shared_parameters")
        {
            disabled.insert(section[..section.len() - 1].to_vec());
        }
        disabled.insert(section);
    }
    // Switches named after what they switch (`enable_diloco: false`,
    // `USE_POWERSGD=0`, `diloco_enabled=false`) that are off: the settings
    // beside them whose names start with the same words (`diloco_outer_lr`,
    // `POWERSGD_RANK`) do nothing, as the keys under `diloco: {enabled:
    // false}` do nothing.
    let mut off_prefixes: Vec<(&[String], String)> = Vec::new();
    for e in entries {
        if !matches!(e.kind, EntryKind::Key { header: false } | EntryKind::Flag) {
            continue;
        }
        // Most settings are on: their keys are not put in normal form. A
        // variable's default (`${ENABLE_X:-0}`) is off only when every
        // value the configs give the variable is.
        let refers = e.value.contains('$') || is_default(e);
        // A flag given alone (`--fault_tolerance.enable`) is on.
        let bare_flag = e.kind == EntryKind::Flag && e.value.trim().is_empty();
        if bare_flag || (!refers && !m.is_off(&e.value)) {
            continue;
        }
        let Some((k, parent)) = e.path.split_last() else {
            continue;
        };
        let k = normalize(k);
        let Some(stem) = switched(&k, m) else {
            // A technique switched off by its own name (Fleet's `localsgd:
            // false` beside its `localsgd_configs { k_steps: 4 }`): the
            // settings named after it do nothing. Only a plain false, not
            // `none` (`compression: none` beside `compression_type`).
            let plain_off = matches!(
                e.value
                    .trim()
                    .trim_matches(['"', '\''])
                    .to_ascii_lowercase()
                    .as_str(),
                "false" | "0" | "no" | "off"
            );
            // (Only a name the signal families know: most keys switched
            // off are nothing of the kind, and every prefix kept is tried
            // on every setting of the file.)
            if !refers && plain_off && !k.is_empty() && m.match_normalized(&k).is_some() {
                off_prefixes.push((parent, format!("{k}_")));
            }
            continue;
        };
        let values = match e.path.last() {
            Some(var) if is_default(e) => expand(&format!("${{{var}:-{}}}", e.value), env, local),
            _ => expand(&e.value, env, local),
        };
        if refers && !values.iter().all(|v| m.is_off(v)) {
            continue;
        }
        off_prefixes.push((parent, format!("{stem}_")));
    }
    let under_disabled = |path: &[String]| (1..=path.len()).any(|n| disabled.contains(&path[..n]));
    let switched_off = |path: &[String]| {
        off_prefixes.iter().any(|(parent, stem)| {
            path.len() > parent.len()
                && path.starts_with(parent)
                && normalize(&path[parent.len()]).starts_with(stem.as_str())
        })
    };
    let mut hits: Vec<Hit> = Vec::new();
    // The key path in normal form, its parts joined by `_`.
    let mut key_n = String::new();
    // The previous setting's key path, raw and in normal form: settings
    // in a row share their parent keys, put in normal form once.
    let mut raw_path: Vec<&str> = Vec::new();
    let mut norm_path: Vec<String> = Vec::new();
    // Whether each open shell guard is off (no value the package gives
    // its variable makes its condition true): its settings are quiet.
    let mut guards: Vec<bool> = Vec::new();
    for (at, e) in entries.iter().enumerate() {
        match e.kind {
            EntryKind::Guard => {
                guards.push(super::shell_guard::is_off(&e.value, env, local));
                continue;
            }
            EntryKind::GuardEnd => {
                guards.pop();
                continue;
            }
            EntryKind::Source => continue,
            _ if guards.iter().any(|&off| off) => continue,
            _ => {}
        }
        if refs_only && !e.value.contains('$') {
            continue;
        }
        let mut found: Vec<(HitKind, String)> = Vec::new();
        let same = raw_path
            .iter()
            .zip(&e.path)
            .take_while(|(a, b)| **a == b.as_str())
            .count();
        raw_path.truncate(same);
        norm_path.truncate(same);
        for p in &e.path[same..] {
            raw_path.push(p);
            norm_path.push(normalize(p));
        }
        key_n.clear();
        for p in norm_path.iter().filter(|p| !p.is_empty()) {
            if !key_n.is_empty() {
                key_n.push('_');
            }
            key_n.push_str(p);
        }
        let own_n = norm_path.last().map_or("", String::as_str);
        if norm_path.iter().any(|p| m.is_prose_key(p)) {
            // A description or help text (or a flag read out of one):
            // words about settings, not one.
            continue;
        }
        // A logger named after a module under a logging section
        // (`loggers: {torch.distributed...powerSGD_hook: ERROR}`): how much
        // the module logs, not what the run does. The section's own keys
        // (`version`, `disable_existing_loggers`) sit beside it.
        if norm_path
            .iter()
            .take(norm_path.len().saturating_sub(1))
            .any(|p| m.is_logging_section(p))
        {
            continue;
        }
        let negated = m.is_negated(own_n);
        let keyed = e.kind != EntryKind::Value;
        let off_beside = !off_prefixes.is_empty() && switched_off(&e.path);
        let parent_disabled =
            off_beside || under_disabled(&e.path[..e.path.len().saturating_sub(1)]);
        let self_disabled = off_beside || under_disabled(&e.path);
        // Whether the gate passes the key path: tried once per setting,
        // when its value alone does not pass.
        let mut key_passes: Option<bool> = None;
        // The values it can take: itself, unless it refers to variables.
        let expanded: Vec<String>;
        let (mut one, mut many);
        let values: &mut dyn Iterator<Item = &str> = if e.value.contains('$') {
            expanded = expand(&e.value, env, local);
            many = expanded.iter().map(String::as_str);
            &mut many
        } else {
            one = std::iter::once(e.value.as_str());
            &mut one
        };
        for value in values {
            let v = value.trim();
            if unresolved(v) {
                // The package never gives this value: neither on nor off.
                continue;
            }
            let off = m.is_off(v);
            // Is a key-only setting on?
            let on = if negated {
                // --no-x, DISABLE_X=1: only an explicit off turns it on.
                !v.is_empty() && off
            } else {
                match e.kind {
                    // A key with nothing under it (`stale_gradients:`) is
                    // YAML's null, as `key: null` is.
                    EntryKind::Key { header: true } => {
                        !disabled.contains(&e.path) && has_block(entries, at)
                    }
                    EntryKind::Flag => v.is_empty() || !off,
                    _ => !off,
                }
            };
            let value_n = if v.len() <= 80
                || (v.len() <= MAX_VALUE_MATCHED && !v.contains(char::is_whitespace))
            {
                normalize(v)
            } else {
                String::new()
            };
            // Every match below is of a pattern of the gate in the key path
            // (or a run of it) or in the value, never across the two: a
            // setting that holds none is passed over (most settings of a
            // parsed file).
            let passes = gate.is_none_or(|gate| {
                (!value_n.is_empty() && gate.may_match_normalized(value_n.as_bytes(), own))
                    || *key_passes.get_or_insert_with(|| {
                        !key_n.is_empty() && gate.may_match_normalized(key_n.as_bytes(), own)
                    })
            });
            if !passes {
                continue;
            }
            // A list item is a value of the key it is listed under
            // (`algorithms: [sam]` as `algorithms:\n  - sam`), for the
            // settings that name a value; the key alone was the list's.
            let key_for_fw = key_n.as_str();
            let mut fw_hits = fw.matches(key_for_fw, &value_n);
            if !keyed {
                fw_hits.retain(|h| h.by_value);
            }
            if path_like(v) {
                // A file's path or a URL names a file, not a technique: a
                // setting known by its value alone (a hook's name, under any
                // key) is not looked for in one
                // (`LOGDIR=/results/powersgd_ablation_logs`).
                fw_hits.retain(|h| fw.settings.get(h.setting).is_some_and(|s| s.key.is_some()));
            }
            if !fw_hits.is_empty() && fw.allowed(key_for_fw, &value_n) {
                // An allowed neighbour's update is the reference's; whether
                // it makes runs repeat (NVTE_ALLOW_NONDETERMINISTIC_ALGO
                // among NVIDIA's allowed NVTE_* options) is still noted.
                fw_hits.retain(|h| {
                    fw.settings
                        .get(h.setting)
                        .is_some_and(|s| s.code == crate::finding::code::POL050)
                });
                if fw_hits.is_empty() {
                    continue;
                }
            }
            // A setting the framework data knows decides alone, on or off
            // (`--localsgd-frequency 1` is not local SGD).
            let known = !fw_hits.is_empty();
            for h in fw_hits {
                let Some(s) = fw.settings.get(h.setting) else {
                    continue;
                };
                if !own && s.code == crate::finding::code::POL050 {
                    // Repeatability is reported outside vendored trees only.
                    continue;
                }
                if s.written.as_ref().is_some_and(|w| !w.is_match(v)) {
                    continue;
                }
                let active = if h.by_value {
                    !self_disabled
                } else {
                    on && !parent_disabled
                        && match s.min {
                            Some(min) => v.parse::<f64>().is_ok_and(|x| x >= min),
                            None => true,
                        }
                };
                if active {
                    found.push((HitKind::Setting(h.setting), s.id.clone()));
                }
            }
            // Optimizers named by a config.
            // (Outside vendored trees only: an example config's optimizer
            // is not the run's.)
            if keyed && !self_disabled && own {
                if let Some(opt) = fw.optimizer(&key_n, &value_n, v) {
                    found.push((HitKind::Optimizer(opt.to_string()), v.to_string()));
                } else if let Some(opt) = fw
                    .optimizer_switch(&key_n)
                    .filter(|_| on && !parent_disabled)
                {
                    found.push((HitKind::Optimizer(opt.to_string()), own_n.to_string()));
                } else if let Some(opt) = fw
                    .optimizer_switch_off(&key_n)
                    .filter(|_| !v.is_empty() && m.is_off(v) && !negated && !parent_disabled)
                {
                    found.push((HitKind::Optimizer(opt.to_string()), format!("{own_n}: {v}")));
                }
            }
            // Signal families: the key with its parent, and short values.
            if keyed && !own_n.is_empty() && !known {
                let parent_n = if norm_path.len() >= 2 {
                    norm_path[norm_path.len() - 2].as_str()
                } else {
                    ""
                };
                let joined = if parent_n.is_empty() {
                    own_n.to_string()
                } else {
                    format!("{parent_n}_{own_n}")
                };
                let hit = m
                    .match_normalized(&joined)
                    .filter(|h| parent_n.is_empty() || h.end > parent_n.len() + 1);
                if let Some(h) = hit {
                    if on && !parent_disabled && !fw.allowed(&key_n, &value_n) {
                        found.push((HitKind::Family(h.family), h.word));
                    }
                }
            }
            // JSON held in a string (`DS_CONFIG='{...}'`) is read as the
            // settings it holds: `"zero_quantized_gradients": false` there
            // is off, whatever its words say together.
            // (Only where its settings were read: entries of the same line
            // sit under it. JSON that no reader took apart, such as a TOML
            // inline table written with `:`, still has its words tried.)
            let structured = ((v.starts_with('{') && v.ends_with('}'))
                || (v.starts_with('[') && v.ends_with(']') && v.contains(['{', '"'])))
                && entries.iter().any(|n| {
                    n.line == e.line && n.path.len() > e.path.len() && n.path.starts_with(&e.path)
                });
            if !known
                && !structured
                && !value_n.is_empty()
                && !v.starts_with('-')
                && !v.contains('/')
            {
                if let Some(h) = m.match_normalized(&value_n) {
                    if !self_disabled {
                        found.push((HitKind::Family(h.family), h.word));
                    }
                }
            }
        }
        let code_of = |k: &HitKind| -> Option<String> {
            match k {
                HitKind::Family(i) => m.families.get(*i).map(|f| f.code.clone()),
                HitKind::Setting(i) => fw.settings.get(*i).map(|s| s.code.clone()),
                HitKind::Optimizer(_) => None,
            }
        };
        let setting_codes: BTreeSet<String> = found
            .iter()
            .filter(|(k, _)| matches!(k, HitKind::Setting(_)))
            .filter_map(|(k, _)| code_of(k))
            .collect();
        let mut seen: BTreeSet<String> = BTreeSet::new();
        for (kind, word) in found {
            let tag = match &kind {
                HitKind::Family(_) => {
                    let c = code_of(&kind).unwrap_or_default();
                    if setting_codes.contains(&c) {
                        continue;
                    }
                    format!("family {c}")
                }
                HitKind::Setting(i) => format!("setting {i}"),
                HitKind::Optimizer(o) => format!("optimizer {o}"),
            };
            if seen.insert(tag) {
                hits.push(Hit {
                    line: e.line,
                    kind,
                    word,
                    display: e.display.chars().take(120).collect(),
                });
            }
        }
    }
    // Settings another setting of the file leaves unread (fairseq's
    // slowmo_* beside ddp_backend: pytorch_ddp).
    let inert = |h: &Hit| match h.kind {
        HitKind::Setting(i) => fw.settings.get(i).and_then(|s| s.inert_beside.as_ref()),
        _ => None,
    };
    // ... and those read only beside another (torchtitan's sync_steps
    // with a semi_sync_method).
    let read_only = |h: &Hit| match h.kind {
        HitKind::Setting(i) => fw.settings.get(i).and_then(|s| s.read_beside.as_ref()),
        _ => None,
    };
    if hits
        .iter()
        .any(|h| inert(h).is_some() || read_only(h).is_some())
    {
        let beside = |(k, v): &(super::forward::Matcher, super::forward::Matcher)| {
            entries.iter().any(|e| {
                if !matches!(e.kind, EntryKind::Key { header: false } | EntryKind::Flag) {
                    return false;
                }
                let key_n: Vec<String> = e
                    .path
                    .iter()
                    .map(|p| normalize(p))
                    .filter(|p| !p.is_empty())
                    .collect();
                if !k.is_match(key_n.join("_").as_bytes()) {
                    return false;
                }
                let values = expand(&e.value, env, local);
                !values.is_empty()
                    && values
                        .iter()
                        .all(|x| !unresolved(x) && v.is_match(normalize(x).as_bytes()))
            })
        };
        hits.retain(|h| inert(h).is_none_or(|b| !beside(b)));
        hits.retain(|h| read_only(h).is_none_or(&beside));
    }
    // One hit per line and code: the most severe, then the first
    // (settings in data order), so a generic setting never hides a
    // framework's own error on the same line.
    let tag_of = |h: &Hit| -> (u64, String, u8) {
        use crate::finding::Severity;
        let rank = |s: Severity| match s {
            Severity::Error => 2,
            Severity::Warning => 1,
            _ => 0,
        };
        let (tag, sev) = match &h.kind {
            HitKind::Family(i) => (
                m.families
                    .get(*i)
                    .map(|f| f.code.clone())
                    .unwrap_or_default(),
                1,
            ),
            // Repeatability notes are each their own: two settings on a
            // line (`NCCL_ALGO=Ring NCCL_PROTO=Simple torchrun ...`) are
            // two notes.
            HitKind::Setting(i) => fw
                .settings
                .get(*i)
                .map(|s| {
                    if s.code == crate::finding::code::POL050 {
                        (format!("{} {}", s.code, h.display), 0)
                    } else {
                        (s.code.clone(), rank(s.severity))
                    }
                })
                .unwrap_or_default(),
            HitKind::Optimizer(o) => (format!("optimizer {o}"), 0),
        };
        (h.line, tag, sev)
    };
    let mut best: std::collections::BTreeMap<(u64, String), (u8, usize)> =
        std::collections::BTreeMap::new();
    for (i, h) in hits.iter().enumerate() {
        let (line, tag, sev) = tag_of(h);
        let slot = best.entry((line, tag)).or_insert((sev, i));
        if sev > slot.0 {
            *slot = (sev, i);
        }
    }
    let keep: BTreeSet<usize> = best.values().map(|&(_, i)| i).collect();
    let mut i = 0;
    hits.retain(|_| {
        i += 1;
        keep.contains(&(i - 1))
    });
    hits
}

/// A value that is a file system path or a URL: a `/` in one word.
fn path_like(v: &str) -> bool {
    v.contains('/') && !v.contains(char::is_whitespace)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// After `X=sync` outside any condition, neither an earlier `X=async`
    /// nor the default of a later `${X:-async}` is X's value; under a
    /// condition an assignment settles nothing.
    #[test]
    fn settled_drops_replaced_assignments_and_dead_defaults() {
        let e = parse(
            "export X=async\nexport X=sync\nrun --kv ${X:-async} --y ${Y:-1}\n",
            Format::Shell,
        );
        let live = settled(&e).expect("changed");
        assert!(live.iter().all(|x| !x.value.contains("async")), "{live:#?}");
        assert!(live.iter().any(|x| x.value.contains("${X}")), "{live:#?}");
        assert!(live
            .iter()
            .any(|x| x.value == "1" || x.value.contains("${Y:-1}")));
        let guarded = parse(
            "if [ \"$A\" = 1 ]; then\n  export X=sync\nfi\nrun --kv ${X:-async}\n",
            Format::Shell,
        );
        let kept = settled(&guarded).unwrap_or(guarded);
        assert!(kept.iter().any(|x| x.value.contains("async")), "{kept:#?}");
    }

    /// The file a `source` or `.` line reads, one shell word (blanks
    /// inside `$(...)` and `${...}` included); other lines read none.
    #[test]
    fn sourced_files() {
        for (line, want) in [
            ("source config_common.sh", Some("config_common.sh")),
            (
                ". ./config_${DGXSYSTEM}.sh",
                Some("./config_${DGXSYSTEM}.sh"),
            ),
            (
                "source $(dirname ${BASH_SOURCE[0]})/hyperparameters_2048.sh",
                Some("$(dirname ${BASH_SOURCE[0]})/hyperparameters_2048.sh"),
            ),
            ("source \"my dir/x.sh\" arg", Some("my dir/x.sh")),
            ("source x.sh && echo ok", Some("x.sh")),
            ("sourced=1", None),
            ("./run.sh", None),
        ] {
            assert_eq!(sourced(line).as_deref(), want, "{line}");
        }
        let e = parse("#!/bin/bash\nsource a.sh\nexport LR=1\n", Format::Shell);
        assert_eq!(e[0].kind, EntryKind::Source);
        assert_eq!((e[0].line, e[0].value.as_str()), (2, "a.sh"));
    }

    /// A search's pattern and a `--help` probe are taken out of a line;
    /// what else the line runs is kept, and a line without one is not
    /// touched.
    #[test]
    fn probes_are_no_settings() {
        for (line, want) in [
            ("grep -q 'X=1' config_*.sh || echo no", Some("")),
            ("if grep -q 'X=1' a.sh; then exit 1; fi", Some("exit 1")),
            ("env | grep X=1", Some("env")),
            ("grep -q x f && export LR=0.1", Some("export LR=0.1")),
            ("python t.py --help | grep -q -- --det", Some("")),
            ("git grep -n 'X=1'", Some("")),
            ("export X=1; python t.py --lr 0.1", None),
            ("python grep_tool.py --async", None),
        ] {
            assert_eq!(without_probes(line).as_deref(), want, "{line}");
        }
        assert_eq!(
            split_commands("a 'x;y' && b $(c | d) || e | f; g"),
            vec!["a 'x;y' ", " b $(c | d) ", " e ", " f", " g"]
        );
    }

    /// The per-setting gate only saves work: on every policy fixture (and
    /// its files read as each format), the hits are those an open gate
    /// gives, inside and outside vendored trees.
    #[test]
    fn the_setting_gate_loses_nothing() {
        use crate::check::policy::test_support::{files_under, fixtures, rules};
        let rules = rules();
        let open = Prefilter::new(
            &[crate::check::policy::prefilter::Need::one("[a-z0-9_]*")],
            &[],
            &BTreeMap::new(),
            &Default::default(),
        );
        let (mut files, mut hits) = (0, 0);
        for path in files_under(&fixtures()) {
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            files += 1;
            for format in [Format::Shell, Format::Yaml, Format::Json, Format::Ini] {
                let entries = parse(&text, format);
                let mut env = Env::default();
                env.add(&entries);
                let local = local_values(&entries);
                for own in [true, false] {
                    let m = &rules.signals;
                    let fw = &rules.frameworks;
                    let gated = scan(
                        &entries,
                        m,
                        fw,
                        Some(&rules.entry_gate),
                        own,
                        &env,
                        &local,
                        false,
                    );
                    let all = scan(&entries, m, fw, Some(&open), own, &env, &local, false);
                    let ungated = scan(&entries, m, fw, None, own, &env, &local, false);
                    assert_eq!(all, ungated, "{} as {format:?}", path.display());
                    assert_eq!(gated, all, "{} as {format:?}", path.display());
                    hits += all.len();
                }
            }
        }
        assert!(files > 50 && hits > 100, "{files} files, {hits} hits");
    }

    #[test]
    fn yaml_paths_and_lines() {
        let t = "a:\n  b: 1 # note\n  c:\n    - --x=1\n    - d: true\nscript: |\n  export Y=2\nz: 'q'\n";
        let e = parse(t, Format::Yaml);
        let got: Vec<(u64, String, String)> = e
            .iter()
            .map(|e| (e.line, e.path.join("."), e.value.clone()))
            .collect();
        assert!(got.contains(&(2, "a.b".into(), "1".into())), "{got:?}");
        assert!(got.contains(&(4, "a.c.x".into(), "1".into())), "{got:?}");
        assert!(got.contains(&(5, "a.c.d".into(), "true".into())), "{got:?}");
        assert!(got.contains(&(7, "script.Y".into(), "2".into())), "{got:?}");
        assert!(got.contains(&(8, "z".into(), "q".into())), "{got:?}");
    }

    #[test]
    fn shell_forms() {
        let t =
            "export A=1\nB=\"x y\" # c\n: \"${C:-off}\"\npython t.py --d-e 3 --f=\"g\" --h \\\n";
        let got = got_where(&parse(t, Format::Shell), |_| true);
        assert_holds(
            &got,
            &[
                (1, "A", "1"),
                (2, "B", "x y"),
                (3, "C", "off"),
                (4, "d-e", "3"),
                (4, "f", "g"),
                (4, "h", ""),
            ],
        );
    }

    /// Argument lists: a flag's value is the next item, on one line or
    /// one per line, in YAML and JSON; a flag followed by a flag is bare.
    #[test]
    fn argument_lists() {
        let flag = |e: &[Entry], name: &str| -> Option<(u64, String)> {
            e.iter()
                .find(|x| {
                    x.kind == EntryKind::Flag && x.path.last().map(String::as_str) == Some(name)
                })
                .map(|x| (x.line, x.value.clone()))
        };
        let y = "a: [\"--kv-store\", \"dist_async\", \"--fp16\", \"--b\", \"2\"]\nc: [--d, e]\n";
        let e = parse(y, Format::Yaml);
        assert_eq!(flag(&e, "kv-store"), Some((1, "dist_async".into())));
        assert_eq!(flag(&e, "fp16"), Some((1, String::new())));
        assert_eq!(flag(&e, "b"), Some((1, "2".into())));
        assert_eq!(flag(&e, "d"), Some((2, "e".into())));
        let y = "args:\n  - --kv-store\n  - dist_async\n  - --x\n  - --y\nz:\n  - --w\nq: 1\n";
        let e = parse(y, Format::Yaml);
        assert_eq!(flag(&e, "kv-store"), Some((2, "dist_async".into())));
        assert_eq!(flag(&e, "x"), Some((4, String::new())));
        assert_eq!(flag(&e, "w"), Some((7, String::new())));
        let j = "{\"args\": [\n  \"--kv-store\",\n  \"dist_async\"\n], \"n\": [\"--a\", \"b\"]}\n";
        let e = parse(j, Format::Json);
        assert_eq!(flag(&e, "kv-store"), Some((2, "dist_async".into())));
        assert_eq!(flag(&e, "a"), Some((4, "b".into())));
        // A command line keeps its own pairs.
        let e = parse("python t.py --a 1, --b\n", Format::Shell);
        assert_eq!(flag(&e, "a"), Some((1, "1".into())));
    }

    /// The overrides Hydra saves beside a run (`.hydra/overrides.yaml`, a
    /// list of `key=value`) are settings; a list item that is no override
    /// (a pinned package, a URL, a flag) is not.
    #[test]
    fn hydra_override_lists() {
        let y = "- model.optim.name=lamb\n- +trainer.devices=8\n- pkg.sub==1.26\n- https://x.org/a.b=c\n- a.b c=d\n";
        let e = parse(y, Format::Yaml);
        let keyed: Vec<_> = got(&e).into_iter().filter(|x| !x.1.is_empty()).collect();
        assert_eq!(
            keyed,
            [
                (1, "model.optim.name".into(), "lamb".into()),
                (2, "trainer.devices".into(), "8".into()),
            ],
            "{e:#?}"
        );
        let nested = "hydra:\n  overrides:\n    task:\n      - model.optim.name=lamb\n";
        let e = parse(nested, Format::Yaml);
        assert!(
            got(&e).contains(&(
                4,
                "hydra.overrides.task.model.optim.name".into(),
                "lamb".into()
            )),
            "{e:#?}"
        );
    }

    /// A jq or yq program's assignments on a shell line are settings; the
    /// same text with no jq or yq on the line is not.
    #[test]
    fn jq_and_yq_assignments() {
        let sh =
            "jq '.optimizer.type = \"OneBitAdam\" | .train_batch_size = 512' ds.json > r.json\n\
                  /usr/bin/yq -i '.model.optim.name |= \"lamb\"' c.yaml\n\
                  echo '.optimizer.type = \"x\"'\n";
        let e = parse(sh, Format::Shell);
        let g = got(&e);
        assert!(
            g.contains(&(1, "optimizer.type".into(), "OneBitAdam".into())),
            "{g:?}"
        );
        assert!(
            g.contains(&(1, "train_batch_size".into(), "512".into())),
            "{g:?}"
        );
        assert!(
            g.contains(&(2, "model.optim.name".into(), "lamb".into())),
            "{g:?}"
        );
        assert!(!g.iter().any(|x| x.0 == 3), "{g:?}");
    }

    /// What a `sed` substitution writes is a setting at the `sed` line,
    /// in whatever form the replacement has.
    #[test]
    fn sed_replacements_are_settings() {
        let sh = "sed -i 's/optimizer: adamw/optimizer: lamb/' conf/c.yaml\n\
                  sed -i \"s|--opt adam|--opt lamb|g\" run.sh\n\
                  sed -i 's/\"type\": \"Adam\"/\"type\": \"OneBitAdam\",/' ds.json\n\
                  sed -i 's/model.optim.name=adamw/model.optim.name=lamb/' o.sh\n\
                  sed -i 's/\\(OPT=\\).*/\\1lamb/' c.sh\n\
                  export X=$(basename $0 | sed 's/^config_//')\n\
                  sed -i 's/DATALOADER.HYBRID\\sTrue/DATALOADER.HYBRID False/' c.yaml\n\
                  sed -i 's/name: adam/name: lamb/' conf/optim/adam.yaml\n\
                  sed -i \"s/optimizer: adam/optimizer: sgd/\" \"${D}/t.yaml\"\n";
        let e = parse(sh, Format::Shell);
        let g = got_where(&e, |x| {
            matches!(x.kind, EntryKind::Key { header: false } | EntryKind::Flag)
        });
        assert_holds(
            &g,
            &[
                // A YAML pair sits under the edited file's folder.
                (1, "conf.optimizer", "lamb"),
                (2, "opt", "lamb"),
                (3, "type", "OneBitAdam"),
                (4, "model.optim.name", "lamb"),
                (5, "OPT", "lamb"),
                (8, "optim.name", "lamb"),
                (9, "optimizer", "sgd"),
            ],
        );
        assert!(!g.iter().any(|x| x.0 == 7), "{g:?}");
        let shown = e
            .iter()
            .find(|x| x.line == 1 && x.path == ["conf", "optimizer"])
            .unwrap();
        assert_eq!(shown.display, "s/optimizer: adamw/optimizer: lamb/");
    }

    /// Keyword arguments of a `python -c` program are settings; a
    /// comparison, or the same text on a line that runs no Python, is
    /// none.
    #[test]
    fn python_c_keyword_arguments() {
        let sh = "python -c \"import t; t.run(optimizer='lamb', lr=4e-4, steps = 10)\"\n\
                  /usr/bin/python3.11 -c 'import t; t.go(name=\"sgd\")'\n\
                  python3 -c \"import t; assert t.cfg(x=1).opt == 'lamb'\"\n\
                  echo \"t.run(optimizer='lamb')\"\n\
                  python train.py --c 1 -- run(optimizer='lamb')\n";
        let e = parse(sh, Format::Shell);
        let g = got(&e);
        assert_holds(
            &g,
            &[
                (1, "optimizer", "lamb"),
                (1, "lr", "4e-4"),
                (1, "steps", "10"),
                (2, "name", "sgd"),
                (3, "x", "1"),
            ],
        );
        assert!(!g.iter().any(|x| x.0 == 3 && x.1 == "opt"), "{g:?}");
        assert!(!g.iter().any(|x| x.0 >= 4 && x.1 == "optimizer"), "{g:?}");
    }

    /// A file held in a YAML block scalar or written by a here-document
    /// is read as the format its name says (a ConfigMap's JSON, a TOML
    /// written by a run script), or as JSON when it opens with `{`.
    #[test]
    fn embedded_files_by_their_names() {
        let y = "kind: ConfigMap\ndata:\n  ds_config.json: |\n    {\n      \"optimizer\": {\"type\": \"OneBitAdam\"}\n    }\n  run.sh: |\n    python t.py --lr 1\nafter: 1\n";
        let g = got(&parse(y, Format::Yaml));
        assert_holds(
            &g,
            &[
                (5, "data.ds_config.json.optimizer.type", "OneBitAdam"),
                (9, "after", "1"),
            ],
        );
        let sh = "cat > job.toml <<EOF\n[fault_tolerance]\nsemi_sync_method = \"diloco\"\nEOF\n\
                  tee -a c.yaml <<'EOF'\noptim:\n  name: lamb\nEOF\nB=2\n";
        let g = got(&parse(sh, Format::Shell));
        assert_holds(
            &g,
            &[
                (3, "fault_tolerance.semi_sync_method", "diloco"),
                (7, "optim.name", "lamb"),
                (9, "B", "2"),
            ],
        );
    }

    /// Kubernetes `env` lists written as flow maps give each variable its
    /// value, as the block form does.
    #[test]
    fn flow_map_env_items() {
        for (y, line) in [
            (
                "env: [{name: DGXNGPU, value: \"8\"}, {name: BYTEPS_ENABLE_ASYNC, value: \"1\"}]\n",
                1,
            ),
            (
                "spec:\n  env:\n    - {name: BYTEPS_ENABLE_ASYNC, value: \"1\"}\n",
                3,
            ),
        ] {
            let g = got(&parse(y, Format::Yaml));
            assert!(
                g.iter()
                    .any(|x| x.0 == line && x.1.ends_with("env.BYTEPS_ENABLE_ASYNC") && x.2 == "1"),
                "{g:?}"
            );
        }
    }

    /// A variable whose quoted value is one Hydra override, with a config
    /// group placed by `@`, gives the override's setting.
    #[test]
    fn hydra_group_override_in_a_variable() {
        let sh = "OPTIMIZER_CONF=\"optim@model.optim=lamb\"\npython t.py ${OPTIMIZER_CONF}\nA=b\n";
        let g = got(&parse(sh, Format::Shell));
        assert_holds(&g, &[(1, "optim@model.optim", "lamb"), (3, "A", "b")]);
    }

    /// JSON held unquoted in a `.env` line is the rest of the line.
    #[test]
    fn unquoted_json_in_an_env_line() {
        let sh = "TF_CONFIG={\"cluster\": {\"ps\": [\"h:1\"]}, \"task\": {\"type\": \"worker\"}}\n";
        let g = got(&parse(sh, Format::Shell));
        assert!(
            g.iter()
                .any(|x| x.1 == "TF_CONFIG.task.type" && x.2 == "worker"),
            "{g:?}"
        );
    }

    /// Text a script prints (echo, printf, a logging function, a
    /// here-document shown with `cat`) holds no settings; the same text
    /// written to a file or piped on does, and so does the next command of
    /// the line.
    #[test]
    fn printed_text_is_no_setting() {
        let sh = "echo 'closed division: --dwu-e5m2-allgather is not used'\n\
                  log_msg \"no PowerSGD, no --optimizer sgd\" >&2\n\
                  printf '%s\\n' \"ddp_comm_hook=powerSGD_hook is NOT used\"\n\
                  cat <<'EOF'\n--kv-store dist_async\nEOF\n\
                  echo \"--optimizer lamb\" >> args.txt\n\
                  echo start; python t.py --optimizer adafactor\n\
                  cat <<EOF | python t.py\n--kv-store dist_sync\nEOF\n";
        let e = parse(sh, Format::Shell);
        let lines: BTreeSet<u64> = e.iter().map(|x| x.line).collect();
        assert_eq!(lines, BTreeSet::from([7, 8, 10]), "{e:#?}");
        assert!(only_prints("echo x 2>&1", false));
        assert!(!only_prints("echo x | tee f", false));
        assert!(!only_prints("python t.py", false));
        assert!(only_prints("cat", true) && !only_prints("cat", false));
    }

    /// Bash arrays: quoted words (`( "--optim" "sgd" )`) and items over
    /// several lines with no `\\` give each flag its value.
    #[test]
    fn bash_array_flags() {
        let sh = "declare -a A=(\"--optim\" \"sgd\" \"--bf16\")\n\
                  CMD=( 'torchrun' '--kv-store' 'dist_async' )\n\
                  ARGS=(\n  --bf16\n  --optim\n  adafactor\n  \"--kv-store\"\n  \"dist_async\"\n)\n\
                  --lr\n0.1\n\
                  echo \"--x\" \"--y\"\n";
        let e = parse(sh, Format::Shell);
        let g = got_where(&e, |x| x.kind == EntryKind::Flag);
        assert_holds(
            &g,
            &[
                (1, "optim", "sgd"),
                (2, "kv-store", "dist_async"),
                (5, "optim", "adafactor"),
                (7, "kv-store", "dist_async"),
            ],
        );
        // Outside an array, a flag alone on its line takes no value from the
        // next one; a flag is no flag's value.
        assert!(!g.iter().any(|x| x.1 == "lr" && x.2 == "0.1"), "{g:?}");
        assert!(!g.iter().any(|x| x.1 == "x" && x.2 == "--y"), "{g:?}");
        assert!(!g.iter().any(|x| x.1 == "bf16" && !x.2.is_empty()), "{g:?}");
    }

    /// Statements of a Python program the script runs: attributes set to
    /// literals and calls with a literal first argument (or none) are
    /// settings; a plain variable or a value read from elsewhere is not.
    #[test]
    fn python_statements_are_settings() {
        let sh = "python -c \"import torch; torch.backends.cudnn.benchmark = True\"\n\
                  python -c \"import torch.backends.cudnn as cudnn; cudnn.benchmark = True\"\n\
                  python3 -c \"import torch; torch.use_deterministic_algorithms(True, warn_only=True)\"\n\
                  python3 -c 'import tensorflow as tf; tf.config.experimental.enable_op_determinism()'\n\
                  python - <<'PY'\nimport torch\ntorch.backends.cudnn.deterministic = True\n\
                  x.y = args.z\nz = 1\nprint(a.b == 2)\nPY\n\
                  echo \"torch.backends.cudnn.benchmark = True\"\n\
                  python -c \"torch.backends.cudnn.benchmark=True\"\n";
        let e = parse(sh, Format::Shell);
        let g = got(&e);
        assert_holds(
            &g,
            &[
                (1, "torch.backends.cudnn.benchmark", "True"),
                (2, "cudnn.benchmark", "True"),
                (3, "torch.use_deterministic_algorithms", "True"),
                (4, "tf.config.experimental.enable_op_determinism", "true"),
                (7, "torch.backends.cudnn.deterministic", "True"),
            ],
        );
        assert!(
            !g.iter().any(|x| x.1 == "x.y" || x.1 == "z" || x.1 == "a.b"),
            "{g:?}"
        );
        // Text echoed, not run.
        assert!(!g.iter().any(|x| x.0 == 12), "{g:?}");
        // The spaceless form is read once.
        assert_eq!(g.iter().filter(|x| x.0 == 13).count(), 1, "{g:?}");
    }

    /// A Weights & Biases config (each setting a block of `desc` and
    /// `value`) gives each key its value; a section with a `value` child
    /// and other keys is left as it is.
    #[test]
    fn described_values_are_their_keys() {
        let y = "optimizer:\n  desc: null\n  value: lamb\nother:\n  value: 1\n  unit: s\n";
        let e = parse(y, Format::Yaml);
        let g = got(&e);
        assert!(g.contains(&(3, "optimizer".into(), "lamb".into())), "{g:?}");
        assert!(!g.iter().any(|x| x.1 == "other"), "{g:?}");
    }

    /// A Python dict in a YAML string is read as JSON in one is.
    #[test]
    fn python_dicts_in_strings() {
        let e = parse(
            "optimizer: \"{'type': 'lamb', 'lr': 4e-4}\"\n",
            Format::Yaml,
        );
        assert!(
            got(&e).contains(&(1, "optimizer.type".into(), "lamb".into())),
            "{e:#?}"
        );
        // Single quotes inside JSON's double quotes stay as they are.
        let e = parse("c: '{\"note\": \"it''s\"}'\n", Format::Yaml);
        assert!(got(&e).iter().any(|x| x.1 == "c.note"), "{e:#?}");
    }

    /// Hydra overrides on a command line, a Kubernetes `env` list and a
    /// YAML flow map are settings with key paths.
    #[test]
    fn overrides_env_lists_and_flow_maps() {
        let e = parse(
            "python t.py model.optim.name=lamb +x.y='a' ++z=1 --lr=2 a==b =c d.=e\nexport A=1 B=2\n",
            Format::Shell,
        );
        assert_eq!(
            got(&e),
            [
                (1, "model.optim.name".into(), "lamb".into()),
                (1, "x.y".into(), "a".into()),
                (1, "z".into(), "1".into()),
                (2, "A".into(), "1".into()),
                (2, "B".into(), "2".into()),
            ]
        );
        let y = "env:\n  - name: BYTEPS_ENABLE_ASYNC\n    value: \"1\"\n  - name: X\n    valueFrom: y\n";
        let e = parse(y, Format::Yaml);
        assert!(
            got(&e).contains(&(3, "env.BYTEPS_ENABLE_ASYNC".into(), "1".into())),
            "{e:#?}"
        );
        assert!(!got(&e).iter().any(|x| x.1 == "env.X"), "{e:#?}");
        let j = "{\"env\": [{\"name\": \"A_B\", \"value\": \"on\"}]}";
        let e = parse(j, Format::Json);
        assert!(
            got(&e).contains(&(1, "env.A_B".into(), "on".into())),
            "{e:#?}"
        );
        let e = parse(
            "d: {algorithm: async, b: {c: 'x, y'}, e: [1, 2]}\n",
            Format::Yaml,
        );
        let g = got(&e);
        assert!(
            g.contains(&(1, "d.algorithm".into(), "async".into())),
            "{g:?}"
        );
        assert!(g.contains(&(1, "d.b.c".into(), "x, y".into())), "{g:?}");
        assert!(g.contains(&(1, "d.e".into(), "[1, 2]".into())), "{g:?}");
        // A container's arguments as a flow sequence, and a variable of its
        // env that a launcher passes on as arguments.
        let y = "c:\n  args: [\"python\", \"t.py\", \"model.optim.name=sgd\"]\n  env:\n    - name: EXTRA_ARGS\n      value: \"trainer.x=1 model.optim.lr=2\"\n";
        let g = got(&parse(y, Format::Yaml));
        assert!(
            g.contains(&(2, "c.args.model.optim.name".into(), "sgd".into())),
            "{g:?}"
        );
        assert!(
            g.contains(&(5, "c.env.trainer.x".into(), "1".into())),
            "{g:?}"
        );
        assert!(
            g.contains(&(5, "c.env.model.optim.lr".into(), "2".into())),
            "{g:?}"
        );
    }

    /// Here-documents a script writes a config with, `NAME=value` list
    /// items, JSON in a quoted YAML string and `NAME=value` items of a
    /// flag's value: settings at their own lines.
    /// The settings of `e` as (line, key path, value).
    fn got(e: &[Entry]) -> Vec<(u64, String, String)> {
        got_where(e, |x| x.kind == (EntryKind::Key { header: false }))
    }

    /// The entries `keep` keeps, as (line, key path, value).
    fn got_where(e: &[Entry], keep: impl Fn(&Entry) -> bool) -> Vec<(u64, String, String)> {
        e.iter()
            .filter(|x| keep(x))
            .map(|x| (x.line, x.path.join("."), x.value.clone()))
            .collect()
    }

    /// Asserts that `got` holds every (line, key path, value) of `want`.
    fn assert_holds(got: &[(u64, String, String)], want: &[(u64, &str, &str)]) {
        for w in want {
            assert!(
                got.contains(&(w.0, w.1.to_string(), w.2.to_string())),
                "{w:?} not in {got:?}"
            );
        }
    }

    /// What `printf` (or `echo -e`) writes into a file is read as a
    /// here-document's body to that file, each setting at the line that
    /// holds it; text printed to the terminal holds none.
    #[test]
    fn text_printed_into_a_file() {
        let sh = "#!/bin/bash\n\
                  printf 'X=2\\nBYTEPS_ENABLE_ASYNC=1\\n' > /tmp/bps.env\n\
                  printf 'A=1\nB=2\n' >> run.env\n\
                  echo -e \"optimizer:\\n  name: sgd\" > conf/o.yaml\n\
                  printf 'C=3\\n' >&2\n\
                  echo \"D=4\"\n\
                  E=5\n";
        let g = got(&parse(sh, Format::Shell));
        assert_eq!(
            g,
            [
                (2, "X".into(), "2".into()),
                (2, "BYTEPS_ENABLE_ASYNC".into(), "1".into()),
                (3, "A".into(), "1".into()),
                (4, "B".into(), "2".into()),
                (6, "optimizer.name".into(), "sgd".into()),
                (9, "E".into(), "5".into()),
            ],
            "{g:#?}"
        );
    }

    #[test]
    fn heredocs_env_items_and_exports() {
        let sh = "cat > ds.json <<-'EOF'\n{\"optimizer\": {\"type\": \"OneBitAdam\"}}\nEOF\n\
                  cat > c.yaml << EOF\ntrain:\n  kvstore: dist_async\nEOF\n\
                  python - <<EOF\nA=1\nEOF\nx=$((1 << y))\nB=2\n";
        let g = got(&parse(sh, Format::Shell));
        assert_eq!(
            g,
            [
                (2, "optimizer.type".into(), "OneBitAdam".into()),
                (6, "train.kvstore".into(), "dist_async".into()),
                (9, "A".into(), "1".into()),
                (11, "x".into(), "$((1".into()),
                (12, "B".into(), "2".into()),
            ],
            "{g:#?}"
        );
        let y =
            "services:\n  t:\n    environment:\n      - BYTEPS_ENABLE_ASYNC=1\n      - \"X=y z\"\n\
                 env:\n  TF_CONFIG: '{\"cluster\": {\"ps\": [\"h:1\"]}}'\n";
        let e = parse(y, Format::Yaml);
        let g = got(&e);
        assert!(
            g.contains(&(
                4,
                "services.t.environment.BYTEPS_ENABLE_ASYNC".into(),
                "1".into()
            )),
            "{g:#?}"
        );
        assert!(
            g.contains(&(5, "services.t.environment.X".into(), "y".into())),
            "{g:#?}"
        );
        assert!(
            e.iter().any(|x| x.line == 7
                && x.path.join(".") == "env.TF_CONFIG.cluster.ps"
                && x.value == "h:1"),
            "{e:#?}"
        );
        let sh = "srun --export=ALL,A_B=1 --mpi=pmix t.py\nsrun --export ALL,C=2 t.py\ndocker run --env=D=3 -e E=4 i\n";
        let g = got(&parse(sh, Format::Shell));
        assert_eq!(
            g,
            [
                (1, "A_B".into(), "1".into()),
                (2, "C".into(), "2".into()),
                (3, "D".into(), "3".into()),
                (3, "E".into(), "4".into()),
            ],
            "{g:#?}"
        );
    }

    #[test]
    fn quoted_key_value_items_of_a_flag() {
        let sh = "python m.py --fdl_set=\"optimizer=lion\" --fdl_set='train.steps=100'\n";
        let g = got(&parse(sh, Format::Shell));
        assert!(g.contains(&(1, "optimizer".into(), "lion".into())), "{g:?}");
        assert!(
            g.contains(&(1, "train.steps".into(), "100".into())),
            "{g:?}"
        );
    }

    #[test]
    fn a_block_scalar_of_one_word_is_its_keys_value() {
        let y = "a: >-\n  dist_async\nb: |\n  python t.py\n  --x 1\nc: |\n  one\n  two\nd: 1\n";
        let g = got(&parse(y, Format::Yaml));
        assert!(g.contains(&(1, "a".into(), "dist_async".into())), "{g:?}");
        assert!(g.contains(&(3, "b".into(), "".into())), "{g:?}");
        assert!(g.contains(&(6, "c".into(), "".into())), "{g:?}");
        assert!(g.contains(&(9, "d".into(), "1".into())), "{g:?}");
    }

    #[test]
    fn yaml_tags_and_dotted_references() {
        let y = "optimizer: !!str lamb\nlr: !!float 1e-4\nt:\n  mode: dist_async\n";
        let e = parse(y, Format::Yaml);
        let g = got(&e);
        assert!(g.contains(&(1, "optimizer".into(), "lamb".into())), "{g:?}");
        assert!(g.contains(&(2, "lr".into(), "1e-4".into())), "{g:?}");
        assert_eq!(
            local_values(&e).get("t.mode").map(String::as_str),
            Some("dist_async")
        );
        // A top-level key only where it is one of the file's keys.
        assert_eq!(local_values(&e).get("optimizer"), None);
        assert_eq!(
            local_values_with(&e, true)
                .get("optimizer")
                .map(String::as_str),
            Some("lamb")
        );
    }

    #[test]
    fn flag_values_quoted_inside_a_quoted_string() {
        let sh = "CMD=\"t.py --kv-store \\\"dist_async\\\" --lr=\\'0.1\\' --x=\\\"\\\"\"\n";
        let flags = got_where(&parse(sh, Format::Shell), |x| x.kind == EntryKind::Flag);
        assert_eq!(
            flags,
            [
                (1, "kv-store".into(), "dist_async".into()),
                (1, "lr".into(), "0.1".into()),
                (1, "x".into(), "".into()),
            ],
            "{sh}"
        );
    }

    #[test]
    fn flag_values_on_a_continued_line() {
        let sh = "python t.py \\\n  --kv-store \\\n  dist_async \\\n  --fp16 \\\n  --lr 0.1\n\
                  python u.py --a \\\n --b 2 \\\n  | tee log\n";
        let flags = got_where(&parse(sh, Format::Shell), |x| x.kind == EntryKind::Flag);
        for want in [
            (2, "kv-store", "dist_async"),
            (5, "lr", "0.1"),
            (7, "b", "2"),
        ] {
            assert!(
                flags
                    .iter()
                    .any(|(l, p, v)| (*l, p.as_str(), v.as_str()) == want),
                "{want:?} in {flags:#?}"
            );
        }
        // A flag whose next line opens with another flag or an operator
        // stays bare.
        for bare in ["fp16", "a"] {
            assert!(
                flags
                    .iter()
                    .all(|(_, p, v)| p != bare || v.is_empty() || v == "true"),
                "{bare} in {flags:#?}"
            );
        }
    }

    #[test]
    fn batch_directives_in_the_header() {
        let sh = "#!/bin/bash\n#SBATCH --export=ALL,A=1 # a comment\n##SBATCH --export=ALL,B=1\n\n#PBS -v C=2\n#BSUB -env \"all, D=3\"\n#$ -v E=4\n#FLUX: --env=F=5\nsrun t.py\n#SBATCH --export=ALL,G=6\n";
        let g = got(&parse(sh, Format::Shell));
        assert_eq!(
            g,
            [
                (2, "A".into(), "1".into()),
                (5, "C".into(), "2".into()),
                (6, "D".into(), "3".into()),
                (7, "E".into(), "4".into()),
                (8, "F".into(), "5".into()),
            ],
            "{g:#?}"
        );
    }

    #[test]
    fn json_and_ini_lines() {
        let j = "{\n  \"a\": {\n    \"b\": false\n  }, \"c\": \"d\"\n}";
        let e = parse(j, Format::Json);
        assert!(e
            .iter()
            .any(|e| e.line == 3 && e.path == ["a", "b"] && e.value == "false"));
        assert!(e
            .iter()
            .any(|e| e.line == 4 && e.path == ["c"] && e.value == "d"));
        let t = "[x.y]\nk = \"v\"\n";
        let e = parse(t, Format::Ini);
        assert!(e
            .iter()
            .any(|e| e.line == 2 && e.path == ["x", "y", "k"] && e.value == "v"));
    }

    /// A TOML multi-line string holding JSON (a DeepSpeed config kept in
    /// a TOML file): its keys under the string's key, at their lines; the
    /// lines after it are read again as TOML.
    #[test]
    fn toml_multiline_strings_hold_json() {
        let t = "[train]\nds_config = '''\n{\n  \"optimizer\": {\"type\": \"ZeroOneAdam\"}\n}\n'''\nlr = 1e-4\nnote = \"\"\"a\nb\"\"\"\nk = 2\n";
        let e = parse(t, Format::Ini);
        assert_holds(
            &got(&e),
            &[
                (4, "train.ds_config.optimizer.type", "ZeroOneAdam"),
                (7, "train.lr", "1e-4"),
                (10, "train.k", "2"),
            ],
        );
        assert!(!e.iter().any(|x| x.path.last().is_some_and(|k| k == "b")));
    }

    /// A one-line TOML array: its inline tables' keys under the array's
    /// key, its first items values of it; nested arrays are no items.
    #[test]
    fn toml_arrays_on_one_line() {
        let t = "optimizers = [{name = \"lamb\", lr = 4e-4}, {name = \"adamw\"}]\n\
                 hooks = [\"powerSGD\", 'fp16', [1, 2], 3, 4, 5, 6]\n";
        let e = parse(t, Format::Ini);
        assert_holds(
            &got(&e),
            &[
                (1, "optimizers.name", "lamb"),
                (1, "optimizers.lr", "4e-4"),
                (1, "optimizers.name", "adamw"),
            ],
        );
        let items = got_where(&e, |x| x.kind == EntryKind::Value);
        assert_eq!(
            items,
            [
                (2, "hooks".to_string(), "powerSGD".to_string()),
                (2, "hooks".to_string(), "fp16".to_string()),
                (2, "hooks".to_string(), "3".to_string()),
                (2, "hooks".to_string(), "4".to_string()),
            ]
        );
    }

    /// The literal words of a `for` loop are values of its variable, the
    /// first four of them; words that are not literal are left out.
    #[test]
    fn for_loop_words_are_values_of_its_variable() {
        let sh = "for opt in lamb 'adamw'; do python t.py --optimizer $opt; done\n\
                  for f in *.yaml $(ls) ${A} {1..3}; do :; done\n\
                  for x in a b c d e f\ndo\n  echo $x\ndone\nfor in x\n";
        let g = got(&parse(sh, Format::Shell));
        assert_holds(
            &g,
            &[
                (1, "opt", "lamb"),
                (1, "opt", "adamw"),
                (3, "x", "a"),
                (3, "x", "d"),
            ],
        );
        assert!(!g.iter().any(|(_, k, _)| k == "f"), "{g:?}");
        assert!(!g.iter().any(|(_, k, v)| k == "x" && v == "e"), "{g:?}");
        assert!(!g.iter().any(|(l, _, _)| *l == 7), "{g:?}");
    }

    /// OmegaConf's relative interpolations: `${.x}` a sibling, `${..x}`
    /// one level up; one above the top stays as written.
    #[test]
    fn relative_interpolations_become_absolute() {
        let y = "choice: lamb\ntrainer:\n  pick: sgd\n  a: ${.pick}\n  b: ${..choice}\n  c: x${.pick}y\n  d: ${...top}\n  e: ${.}\n";
        let g = got(&parse(y, Format::Yaml));
        assert_holds(
            &g,
            &[
                (4, "trainer.a", "${trainer.pick}"),
                (5, "trainer.b", "${choice}"),
                (6, "trainer.c", "x${trainer.pick}y"),
                (7, "trainer.d", "${...top}"),
                (8, "trainer.e", "${.}"),
            ],
        );
    }

    /// A double-quoted shell value keeps its escaped quotes as quotes: a
    /// DeepSpeed config written `"{\"optimizer\": ...}"` is JSON.
    #[test]
    fn escaped_json_in_a_double_quoted_variable() {
        assert_eq!(first_word(r#""a \"b\" \$c" d"#), r#"a "b" $c"#);
        assert_eq!(first_word(r#""plain" d"#), "plain");
        assert_eq!(first_word("'a \\\"b' d"), "a \\\"b");
        let e = parse(
            "export DS_CONFIG=\"{\\\"optimizer\\\": {\\\"type\\\": \\\"ZeroOneAdam\\\"}}\"\n",
            Format::Shell,
        );
        let found = e
            .iter()
            .find(|x| x.path == ["DS_CONFIG", "optimizer", "type"])
            .expect("the JSON's key");
        assert_eq!((found.value.as_str(), found.line), ("ZeroOneAdam", 1));
    }
}
