//! The JSON reader of implementation configs (DeepSpeed configs, JSON held
//! in a shell variable such as `TF_CONFIG`): nested keys become paths, with
//! line numbers; see `configs.rs` for what a setting is.

use super::configs::{flags, Entry, EntryKind};

/// Deepest JSON nesting whose keys are kept in paths.
const MAX_JSON_DEPTH: usize = 64;

/// A JSON (or JSON-like) text, nested keys as paths. A forgiving scanner,
/// not a validator: broken JSON gives fewer settings, never an error.
/// `prefix` goes before every path (the shell variable a JSON string is
/// held in); `line0` is added to every line (0 for a file).
/// Numbers and literals listed in an array are items up to this many
/// (`"betas": [0.9, 0.999]`); a long array of numbers (a test's golden
/// values) gives no more.
const LISTED: usize = 4;

pub(super) fn json_entries(text: &str, prefix: &[String], line0: u64, out: &mut Vec<Entry>) {
    scan(text, prefix, line0, false, out);
}

/// The settings of a protobuf text-format file (`.pbtxt`, `.prototxt`:
/// Paddle Fleet's `DistributedStrategy.save_to_prototxt`, TensorFlow's
/// text protos): `name: value` fields, `name { ... }` and `name < ... >`
/// messages, `#` comments. Read by the JSON scanner, whose bare keys,
/// literals and nesting are the same.
pub(super) fn parse_proto(text: &str) -> Vec<Entry> {
    let mut out = Vec::new();
    scan(text, &[], 0, true, &mut out);
    out
}

/// The JSON scanner; `proto`: read protobuf's text format instead (`#`
/// comments, a message's name before its `{` or `<` without `:`, fields
/// shown as `name: value`).
fn scan(text: &str, prefix: &[String], line0: u64, proto: bool, out: &mut Vec<Entry>) {
    let b = text.as_bytes();
    let mut line = 1u64;
    // Open containers: the key that opened each (None for array items or
    // the top level).
    let mut stack: Vec<Option<String>> = Vec::new();
    let mut pending: Option<(String, u64)> = None;
    // Beside `stack`: whether each open container is an array, and the
    // items it has had.
    let mut arrays: Vec<(bool, usize)> = Vec::new();
    let path_of = |stack: &[Option<String>], key: Option<&str>| -> Vec<String> {
        let mut p = prefix.to_vec();
        p.extend(stack.iter().flatten().cloned());
        if let Some(k) = key {
            p.push(k.to_string());
        }
        p
    };
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match c {
            b'\n' => line += 1,
            b'#' if proto => {
                while i + 1 < b.len() && b[i + 1] != b'\n' {
                    i += 1;
                }
            }
            // Comments (JSONC, JSON5, Jsonnet), outside strings only: what
            // they say is no setting.
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i + 1 < b.len() && b[i + 1] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i < b.len() && !(b[i] == b'*' && b.get(i + 1) == Some(&b'/')) {
                    if b[i] == b'\n' {
                        line += 1;
                    }
                    i += 1;
                }
                i += 1;
            }
            // JSON5 and Jsonnet quote strings with ' as well.
            b'"' | b'\'' => {
                let start = i + 1;
                let mut j = start;
                while j < b.len() && b[j] != c {
                    if b[j] == b'\\' {
                        j += 1;
                    } else if b[j] == b'\n' {
                        break;
                    }
                    j += 1;
                }
                let end = j.min(b.len());
                let s = unescape(text.get(start..end).unwrap_or(""));
                i = end;
                // A key when a ':' follows.
                let mut k = end + 1;
                while k < b.len() && (b[k] == b' ' || b[k] == b'\t' || b[k] == b'\r') {
                    k += 1;
                }
                if k < b.len() && b[k] == b':' {
                    pending = Some((s, line));
                    i = k;
                } else {
                    let key = pending.take();
                    let display = match &key {
                        Some((k, _)) if proto => format!("{k}: \"{s}\""),
                        Some((k, _)) => format!("\"{k}\": \"{s}\""),
                        None => format!("\"{s}\""),
                    };
                    out.push(Entry {
                        line: line0 + line,
                        path: path_of(&stack, key.as_ref().map(|(k, _)| k.as_str())),
                        value: s,
                        kind: if key.is_some() {
                            EntryKind::Key { header: false }
                        } else {
                            EntryKind::Value
                        },
                        display,
                    });
                }
            }
            _ if c == b'{' || c == b'[' || (proto && c == b'<') => {
                let key = pending.take();
                if let Some((k, l)) = &key {
                    out.push(Entry {
                        line: line0 + l,
                        path: path_of(&stack, Some(k)),
                        value: String::new(),
                        kind: EntryKind::Key { header: true },
                        display: if proto {
                            format!("{k}:")
                        } else {
                            format!("\"{k}\"")
                        },
                    });
                }
                if stack.len() < MAX_JSON_DEPTH {
                    stack.push(key.map(|(k, _)| k));
                } else {
                    stack.push(None);
                }
                arrays.push((c == b'[', 0));
            }
            _ if c == b'}' || c == b']' || (proto && c == b'>') => {
                pending = None;
                stack.pop();
                arrays.pop();
            }
            b',' => {
                pending = None;
                if let Some(top) = arrays.last_mut() {
                    top.1 += 1;
                }
            }
            // A shell variable in a JSON a script writes (`"x":
            // ${X:-false}` in a here-document): the value as written, for
            // the variables to resolve; its braces are no object.
            b'$' => {
                let end = variable_end(b, i);
                let lit = text.get(i..end).unwrap_or("").to_string();
                i = end - 1;
                if let Some((k, l)) = pending.take() {
                    out.push(Entry {
                        line: line0 + l,
                        path: path_of(&stack, Some(&k)),
                        display: format!("\"{k}\": {lit}"),
                        value: lit,
                        kind: EntryKind::Key { header: false },
                    });
                }
            }
            _ if c.is_ascii_alphanumeric() || b"-+._".contains(&c) => {
                let start = i;
                while i + 1 < b.len()
                    && (b[i + 1].is_ascii_alphanumeric() || b"-+._".contains(&b[i + 1]))
                {
                    i += 1;
                }
                let lit = text.get(start..=i).unwrap_or("").to_string();
                // A bare name before ':' in an object is a key (JSON5,
                // Jsonnet: `optimizer: {type: 'lamb'}`; Jsonnet's `+:`
                // merges into the key).
                let mut k = i + 1;
                while k < b.len() && (b[k] == b' ' || b[k] == b'\t' || b[k] == b'\r') {
                    k += 1;
                }
                let name = pending.is_none()
                    && !arrays.last().is_some_and(|&(array, _)| array)
                    && (c.is_ascii_alphabetic() || c == b'_');
                if name && k < b.len() && b[k] == b':' {
                    pending = Some((lit.trim_end_matches('+').to_string(), line));
                    i = k;
                } else if name && proto && k < b.len() && (b[k] == b'{' || b[k] == b'<') {
                    // A message field: `localsgd_configs { k_steps: 4 }`.
                    pending = Some((lit, line));
                    i = k - 1;
                } else if let Some((k, l)) = pending.take() {
                    out.push(Entry {
                        line: line0 + l,
                        path: path_of(&stack, Some(&k)),
                        display: if proto {
                            format!("{k}: {lit}")
                        } else {
                            format!("\"{k}\": {lit}")
                        },
                        value: lit,
                        kind: EntryKind::Key { header: false },
                    });
                } else if arrays.last().is_some_and(|&(array, n)| array && n < LISTED) {
                    // A number or literal listed in an array (`"betas":
                    // [0.9, 0.999]`): an item, as a string in one is.
                    out.push(Entry {
                        line: line0 + line,
                        path: path_of(&stack, None),
                        display: lit.clone(),
                        value: lit,
                        kind: EntryKind::Value,
                    });
                }
            }
            _ => {}
        }
        i += 1;
    }
}

/// Where the shell variable reference at `b[at]` (`$`) ends: after the
/// `}` that closes `${...}` (nested ones included, on one line), or after
/// the name of `$NAME`.
fn variable_end(b: &[u8], at: usize) -> usize {
    let mut j = at + 1;
    if b.get(j) == Some(&b'{') {
        let mut depth = 0usize;
        while j < b.len() && b[j] != b'\n' {
            match b[j] {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        return j + 1;
                    }
                }
                _ => {}
            }
            j += 1;
        }
        return j;
    }
    while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_') {
        j += 1;
    }
    j
}

/// A JSON string's text with its escapes read (`\"`, `\n`, `\u0042`, a
/// surrogate pair): `"One\u0042itAdam"` is OneBitAdam to the reader that
/// loads it. An escape that is not one is kept as written.
fn unescape(s: &str) -> String {
    if !s.contains('\\') {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    let mut units: Vec<u16> = Vec::new();
    let flush = |units: &mut Vec<u16>, out: &mut String| {
        out.extend(char::decode_utf16(units.drain(..)).map(|c| c.unwrap_or('\u{FFFD}')));
    };
    while let Some(c) = chars.next() {
        if c != '\\' {
            flush(&mut units, &mut out);
            out.push(c);
            continue;
        }
        match chars.peek().copied() {
            Some('u') => {
                let hex: String = chars.clone().skip(1).take(4).collect();
                match u16::from_str_radix(&hex, 16) {
                    Ok(u) if hex.len() == 4 => {
                        units.push(u);
                        for _ in 0..5 {
                            chars.next();
                        }
                    }
                    _ => {
                        flush(&mut units, &mut out);
                        out.push(c);
                    }
                }
            }
            Some(e) => {
                flush(&mut units, &mut out);
                chars.next();
                out.push(match e {
                    'n' => '\n',
                    't' => '\t',
                    'r' => '\r',
                    'b' => '\u{8}',
                    'f' => '\u{C}',
                    other => other,
                });
            }
            None => {
                flush(&mut units, &mut out);
                out.push(c);
            }
        }
    }
    flush(&mut units, &mut out);
    out
}

pub(super) fn parse_json(text: &str) -> Vec<Entry> {
    let mut out = Vec::new();
    json_entries(text, &[], 0, &mut out);
    if text.contains("--") {
        for (i, line) in text.lines().enumerate() {
            // The flags of a string value sit under its key ("args":
            // "--kv-store dist_async" is args.kv-store), so that what is
            // under a prose key ("help": "...") is known as such.
            let parents: Vec<String> = line_key(line).into_iter().collect();
            flags(line, i as u64 + 1, &parents, &mut out);
        }
    }
    out
}

/// The key a JSON line opens with (`"help": ...` gives `help`), when it
/// opens with one.
fn line_key(line: &str) -> Option<String> {
    let rest = line.trim_start().strip_prefix('"')?;
    let end = rest.find('"')?;
    let (key, after) = rest.split_at(end);
    (!key.contains('\\') && after[1..].trim_start().starts_with(':')).then(|| key.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_are_read() {
        assert_eq!(unescape(r"One\u0042itAdam"), "OneBitAdam");
        assert_eq!(unescape(r#"a\"b\\c\/d"#), "a\"b\\c/d");
        assert_eq!(unescape(r"\ud83d\ude00x"), "\u{1F600}x");
        assert_eq!(unescape(r"\uZZZZ"), r"\uZZZZ");
        assert_eq!(unescape("plain"), "plain");
        let e = parse_json("{\"optimizer\": {\"type\": \"One\\u0042itAdam\"}}");
        assert!(e.iter().any(|x| x.value == "OneBitAdam"), "{e:#?}");
    }

    /// Numbers listed in an array are items of its key, the first
    /// [`LISTED`] of them: `"betas": [0.9, 0.999]` gives both; a long
    /// array of golden values gives no more than four; an object's values
    /// are never items.
    #[test]
    fn numbers_listed_in_arrays() {
        let text = r#"{"params": {"betas": [0.9, 0.999], "eps": 1e-8},
  "values": [1, 2, 3, 4, 5, 6, 7],
  "nested": [[0.5, 0.25], {"k": 3}]}"#;
        let items: Vec<(String, String)> = parse_json(text)
            .into_iter()
            .filter(|e| e.kind == EntryKind::Value)
            .map(|e| (e.path.join("."), e.value))
            .collect();
        let want: Vec<(String, String)> = [
            ("params.betas", "0.9"),
            ("params.betas", "0.999"),
            ("values", "1"),
            ("values", "2"),
            ("values", "3"),
            ("values", "4"),
            ("nested", "0.5"),
            ("nested", "0.25"),
        ]
        .into_iter()
        .map(|(p, v)| (p.to_string(), v.to_string()))
        .collect();
        assert_eq!(items, want);
    }

    /// Every (path, value, line) of a text's settings with a key.
    fn keyed(text: &str) -> Vec<(String, String, u64)> {
        parse_json(text)
            .into_iter()
            .filter(|e| matches!(e.kind, EntryKind::Key { header: false }))
            .map(|e| (e.path.join("."), e.value, e.line))
            .collect()
    }

    /// JSON5 and Jsonnet: bare keys, ' strings, Jsonnet's `+:` and `::`;
    /// comments of every kind say nothing, not even a word in an array.
    #[test]
    fn json5_jsonnet_and_comments() {
        let text = "// AllenNLP trainer\n{\n  trainer+: {\n    optimizer: { type: 'lamb', lr: 4e-4 },\n    /* 'a quoted',\n       two-line comment */\n    hidden:: 'x',\n  },\n  'quoted key': \"v\",\n  list: [1, /* two */ 3], # not JSON\n}\n";
        let want: Vec<(String, String, u64)> = [
            ("trainer.optimizer.type", "lamb", 4),
            ("trainer.optimizer.lr", "4e-4", 4),
            ("trainer.hidden", "x", 7),
            ("quoted key", "v", 9),
        ]
        .into_iter()
        .map(|(p, v, l)| (p.to_string(), v.to_string(), l))
        .collect();
        assert_eq!(keyed(text), want);
        let items: Vec<String> = parse_json(text)
            .into_iter()
            .filter(|e| e.kind == EntryKind::Value)
            .map(|e| e.value)
            .collect();
        assert_eq!(items, ["1", "3"]);
        // An apostrophe inside a "string" is text, and a URL's // too.
        let text = "{\"help\": \"don't use it\", \"url\": \"http://x/y\", \"a\": 1}";
        assert_eq!(
            keyed(text),
            [
                ("help".to_string(), "don't use it".to_string(), 1),
                ("url".to_string(), "http://x/y".to_string(), 1),
                ("a".to_string(), "1".to_string(), 1),
            ]
        );
    }
}
