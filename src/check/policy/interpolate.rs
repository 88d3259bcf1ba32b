//! Variables in config values: `${VAR:-default}`, `${VAR:=default}`,
//! `${VAR}`, `$VAR` (shell), `${oc.env:VAR,default}`,
//! `${oc.select:a.b,default}` and `${oc.decode:...}` (OmegaConf), `${a.b}`
//! (a key of the same YAML file).
//! A value becomes the few values it can take: the default and every value
//! the package's own configs assign to the variable. Bounded: a few
//! references per value, a few values per variable.

use super::configs::{Entry, EntryKind};
use std::collections::{BTreeMap, BTreeSet};

/// Most values kept per variable.
pub const MAX_VALUES_PER_VAR: usize = 8;
/// Most values one setting expands to.
pub const MAX_EXPANSIONS: usize = 8;

/// Values the configs assign to each environment variable.
#[derive(Debug, Default, Clone)]
pub struct Env {
    vars: BTreeMap<String, BTreeSet<String>>,
}

fn is_env_name(k: &str) -> bool {
    !k.is_empty()
        && k.bytes()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == b'_')
        && k.bytes().next().is_some_and(|c| !c.is_ascii_digit())
}

impl Env {
    /// Adds the assignments among `entries` (keys spelled as environment
    /// variables, with a value that is not itself a reference).
    pub fn add(&mut self, entries: &[Entry]) {
        self.add_where(entries, |_| true);
    }

    /// [`Env::add`] of the entries `keep` accepts.
    /// An assignment whose value refers to variables
    /// (`WEIGHT_DECAY=${WEIGHT_DECAY:-0.1}`, `LR=${BASE_LR}`) adds what
    /// that value resolves to once the rest are in, defaults included: the
    /// variable holds its default when nothing else sets it.
    pub fn add_where(&mut self, entries: &[Entry], keep: impl Fn(&Entry) -> bool) {
        let mut referring: Vec<(&String, &String)> = Vec::new();
        for e in entries {
            if e.kind != (EntryKind::Key { header: false }) || !keep(e) {
                continue;
            }
            let Some(k) = e.path.last() else { continue };
            if !is_env_name(k) || e.value.len() > 256 {
                continue;
            }
            if e.value.contains('$') {
                referring.push((k, &e.value));
                continue;
            }
            self.insert(k, &e.value);
        }
        let none = BTreeMap::new();
        let resolved: Vec<(&String, Vec<String>)> = referring
            .into_iter()
            .map(|(k, v)| (k, expand_with(v, self, &none, true)))
            .collect();
        for (k, values) in resolved {
            for v in values.iter().filter(|v| !v.contains('$')) {
                self.insert(k, v);
            }
        }
    }

    fn insert(&mut self, k: &str, v: &str) {
        let set = self.vars.entry(k.to_string()).or_default();
        if set.len() < MAX_VALUES_PER_VAR {
            set.insert(v.to_string());
        }
    }

    pub fn merge(&mut self, other: Env) {
        for (k, vs) in other.vars {
            let set = self.vars.entry(k).or_default();
            for v in vs {
                if set.len() < MAX_VALUES_PER_VAR {
                    set.insert(v);
                }
            }
        }
    }

    /// Whether some config assigns `k` a value.
    /// Adds every value `other` assigns (each variable's values capped as
    /// [`Env::add`] caps them).
    pub fn extend(&mut self, other: &Env) {
        for (k, values) in &other.vars {
            let set = self.vars.entry(k.clone()).or_default();
            for v in values {
                if set.len() < MAX_VALUES_PER_VAR {
                    set.insert(v.clone());
                }
            }
        }
    }

    pub fn assigns(&self, k: &str) -> bool {
        self.vars.get(k).is_some_and(|v| !v.is_empty())
    }

    fn get(&self, k: &str) -> impl Iterator<Item = &String> {
        self.vars.get(k).into_iter().flatten()
    }
}

/// Most variable names [`env_references`] returns for one text.
const MAX_REFERENCES: usize = 64;

/// The environment variables `text` refers to (`${oc.env:NAME`, `${NAME`,
/// `$NAME`), named as [`Env`] holds them (upper case), each once, in
/// order, at most [`MAX_REFERENCES`]. A config the prefilter rules out
/// can still take a forbidden value from one of these.
pub fn env_references(text: &[u8]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for at in memchr::memchr_iter(b'$', text) {
        let mut rest = &text[at + 1..];
        if let Some(r) = rest.strip_prefix(b"{") {
            rest = r.strip_prefix(b"oc.env:").unwrap_or(r);
        }
        let len = rest
            .iter()
            .position(|&c| !(c.is_ascii_alphanumeric() || c == b'_'))
            .unwrap_or(rest.len());
        let Ok(name) = std::str::from_utf8(&rest[..len]) else {
            continue;
        };
        if is_env_name(name) && !out.iter().any(|n| n == name) {
            out.push(name.to_string());
            if out.len() == MAX_REFERENCES {
                break;
            }
        }
    }
    out
}

/// One reference in a value: where it is, the variable it names and its
/// default, when it has one.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Ref<'a> {
    start: usize,
    end: usize,
    name: &'a str,
    default: Option<&'a str>,
}

fn name_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_'
}

/// The length of the name at the start of `b`: a letter or `_`, then
/// letters, digits, `_` (and `.` when `dots`).
fn name_len(b: &[u8], dots: bool) -> usize {
    match b.first() {
        Some(&c) if name_start(c) => {
            1 + b[1..]
                .iter()
                .take_while(|&&c| c.is_ascii_alphanumeric() || c == b'_' || (dots && c == b'.'))
                .count()
        }
        _ => 0,
    }
}

/// The leftmost reference of `v`, the first form that fits where several
/// start at one `$`: `${oc.env:NAME}` or `${oc.env:NAME,default}` (or
/// `oc.select:` with a dotted key), then
/// `${NAME}`, `${NAME-d}`, `${NAME:-d}`, `${NAME=d}`, `${NAME:=d}` (NAME
/// may hold dots: `${model.lr}`), then `$NAME`. A default runs to the
/// first `}`.
fn next_ref(v: &str) -> Option<Ref<'_>> {
    let b = v.as_bytes();
    for at in memchr::memchr_iter(b'$', b) {
        let rest = &b[at + 1..];
        if let Some(r) = rest.strip_prefix(b"{") {
            let inner = at + 2;
            // ${oc.env:NAME[,default]}, and ${oc.select:KEY[,default]}
            // (OmegaConf: the config's key KEY, a dotted path, else the
            // default).
            let resolver = [(&b"oc.env:"[..], false), (&b"oc.select:"[..], true)]
                .into_iter()
                .find_map(|(p, dots)| r.strip_prefix(p).map(|r2| (r2, p.len(), dots)));
            if let Some((r2, plen, dots)) = resolver {
                let n = name_len(r2, dots);
                if n > 0 {
                    let name_at = inner + plen;
                    let after = name_at + n;
                    match b.get(after) {
                        Some(b'}') => {
                            return Some(Ref {
                                start: at,
                                end: after + 1,
                                name: &v[name_at..after],
                                default: None,
                            })
                        }
                        Some(b',') => {
                            if let Some(close) = memchr::memchr(b'}', &b[after + 1..]) {
                                let close = after + 1 + close;
                                return Some(Ref {
                                    start: at,
                                    end: close + 1,
                                    name: &v[name_at..after],
                                    default: Some(&v[after + 1..close]),
                                });
                            }
                        }
                        _ => {}
                    }
                }
            }
            // ${NAME}, ${NAME:-d}, ${NAME-d}, ${NAME:=d}, ${NAME=d}
            let n = name_len(r, true);
            if n > 0 {
                let after = inner + n;
                let default_at = match (b.get(after), b.get(after + 1)) {
                    (Some(b'}'), _) => {
                        return Some(Ref {
                            start: at,
                            end: after + 1,
                            name: &v[inner..after],
                            default: None,
                        })
                    }
                    (Some(b':'), Some(b'-' | b'=')) => Some(after + 2),
                    (Some(b'-' | b'='), _) => Some(after + 1),
                    _ => None,
                };
                if let Some(d) = default_at {
                    if let Some(close) = memchr::memchr(b'}', &b[d..]) {
                        return Some(Ref {
                            start: at,
                            end: d + close + 1,
                            name: &v[inner..after],
                            default: Some(&v[d..d + close]),
                        });
                    }
                }
            }
            continue;
        }
        // $NAME
        let n = name_len(rest, false);
        if n > 0 {
            return Some(Ref {
                start: at,
                end: at + 1 + n,
                name: &v[at + 1..at + 1 + n],
                default: None,
            });
        }
    }
    None
}

/// `${oc.decode:${...}}` read as the `${...}` it holds.
fn undecode(value: &str) -> String {
    const OPEN: &str = "${oc.decode:${";
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(i) = rest.find(OPEN) {
        let inner = &rest[i + OPEN.len()..];
        // `${oc.decode:` + `${` + anything but `}` + `}` + `}`.
        match inner.find('}') {
            Some(close) if inner[close + 1..].starts_with('}') => {
                out.push_str(&rest[..i]);
                out.push_str("${");
                out.push_str(&inner[..=close]);
                rest = &inner[close + 2..];
            }
            _ => {
                out.push_str(&rest[..i + 1]);
                rest = &rest[i + 1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// Whether `value` (as [`expand`] leaves it) is nothing but one reference
/// without a default that nothing resolved: a setting whose value the
/// package never gives (`--x ${X}` with no config assigning `X`).
pub fn unresolved(value: &str) -> bool {
    let v = value.trim();
    next_ref(v).is_some_and(|r| r.start == 0 && r.end == v.len() && r.default.is_none())
}

/// The values `value` can take. Without a reference, itself; a reference
/// nothing resolves stays as written.
pub fn expand(value: &str, env: &Env, local: &BTreeMap<String, String>) -> Vec<String> {
    expand_with(value, env, local, true)
}

/// As [`expand`], but a reference's default counts only when no config
/// assigns the variable: the values a run can take once the configs'
/// assignments override the defaults (`${WD:-0.01}` with `WD=0.0001`
/// assigned is `0.0001` alone).
pub fn expand_assigned(value: &str, env: &Env, local: &BTreeMap<String, String>) -> Vec<String> {
    expand_with(value, env, local, false)
}

fn expand_with(
    value: &str,
    env: &Env,
    local: &BTreeMap<String, String>,
    defaults: bool,
) -> Vec<String> {
    if !value.contains('$') {
        return vec![value.to_string()];
    }
    let mut cur: Vec<String> = vec![undecode(value)];
    // Up to three references, left to right.
    for _ in 0..3 {
        let mut next: Vec<String> = Vec::new();
        let mut changed = false;
        for v in &cur {
            let Some(r) = next_ref(v) else {
                next.push(v.clone());
                continue;
            };
            let (name, default) = (r.name, r.default.map(str::trim));
            let mut options: BTreeSet<String> = BTreeSet::new();
            if let Some(l) = local.get(name) {
                // A key whose value refers on (`kvstore: ${mode}`, `mode:
                // ${oc.env:M,dist_async}`) is expanded in the next round.
                if !l.contains(&v[r.start..r.end]) {
                    options.insert(l.clone());
                }
            }
            for x in env.get(name) {
                options.insert(x.clone());
            }
            if let Some(d) = default {
                if defaults || options.is_empty() {
                    options.insert(super::signals::unquote(d).to_string());
                }
            }
            if options.is_empty() {
                // Unresolved: keep the text, stop expanding this value.
                next.push(v.clone());
                continue;
            }
            changed = true;
            for o in options {
                let mut s = String::with_capacity(v.len());
                s.push_str(&v[..r.start]);
                s.push_str(&o);
                s.push_str(&v[r.end..]);
                next.push(s);
            }
        }
        next.dedup();
        next.truncate(MAX_EXPANSIONS);
        cur = next;
        if !changed {
            break;
        }
    }
    cur
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_of_the_file_refer_on() {
        let local: BTreeMap<String, String> = [
            ("mode", "${oc.env:KV_MODE,dist_async}"),
            ("loop", "${loop}"),
            ("a.b", "x"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let env = Env::default();
        assert_eq!(expand("${mode}", &env, &local), ["dist_async"]);
        assert_eq!(expand("${a.b}_${mode}", &env, &local), ["x_dist_async"]);
        // A key that refers to itself stays unresolved.
        assert!(expand("${loop}", &env, &local)
            .iter()
            .all(|v| unresolved(v)));
    }

    #[test]
    fn unresolved_references() {
        assert!(unresolved("${X}"));
        assert!(unresolved(" $X "));
        assert!(unresolved("${oc.env:X}"));
        assert!(!unresolved("${X:-1}"));
        assert!(!unresolved("${oc.env:X,0}"));
        assert!(!unresolved("a${X}"));
        assert!(!unresolved("${X}${Y}"));
        assert!(!unresolved("1"));
        assert!(!unresolved(""));
    }

    /// The references as a regex reads them (what `next_ref` replaced).
    fn by_regex<'a>(r: &regex::Regex, v: &'a str) -> Option<Ref<'a>> {
        let c = r.captures(v)?;
        let all = c.get(0)?;
        let (name, default) = match (c.get(1), c.get(3), c.get(5)) {
            (Some(n), _, _) => (n.as_str(), c.get(2).map(|d| d.as_str())),
            (_, Some(n), _) => (n.as_str(), c.get(4).map(|d| d.as_str())),
            (_, _, Some(n)) => (n.as_str(), None),
            _ => return None,
        };
        Some(Ref {
            start: all.start(),
            end: all.end(),
            name,
            default,
        })
    }

    /// Every string of up to four pieces from a set that holds each part
    /// of the forms (and their near misses) reads as the regex reads it.
    #[test]
    fn references_read_as_the_regex_reads_them() {
        let pieces = [
            "$",
            "${",
            "}",
            "oc.env:",
            "oc.decode:",
            "A",
            "a.b",
            "_x9",
            "9",
            ":-",
            "-",
            ":=",
            "=",
            ":",
            ",",
            " d ",
            "é",
            "x}",
            "$$",
            "${oc.decode:${",
            "}}",
        ];
        let mut n = 0;
        // Every sequence of exactly k pieces, k = 0..=4 (204,000 texts).
        let mut texts = vec![String::new()];
        let mut last = vec![String::new()];
        for _ in 0..4 {
            last = last
                .iter()
                .flat_map(|t| pieces.iter().map(move |p| format!("{t}{p}")))
                .collect();
            texts.extend(last.iter().cloned());
        }
        let r = regex::Regex::new(
            r"\$\{oc\.env:([A-Za-z_][A-Za-z0-9_]*)(?:,([^}]*))?\}|\$\{([A-Za-z_][A-Za-z0-9_.]*)(?::?[-=]([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)",
        )
        .unwrap();
        let d = regex::Regex::new(r"\$\{oc\.decode:(\$\{[^}]*\})\}").unwrap();
        for t in &texts {
            assert_eq!(next_ref(t), by_regex(&r, t), "{t:?}");
            assert_eq!(undecode(t), d.replace_all(t, "$1"), "{t:?}");
            n += 1;
        }
        assert!(n > 100_000, "{n}");
    }

    fn env(pairs: &[(&str, &str)]) -> Env {
        let mut e = Env::default();
        for (k, v) in pairs {
            e.vars
                .entry(k.to_string())
                .or_default()
                .insert(v.to_string());
        }
        e
    }

    #[test]
    fn forms() {
        let none = BTreeMap::new();
        let e = env(&[("ALGO", "async")]);
        assert_eq!(
            expand("${ALGO:-gradient_allreduce}", &e, &none),
            vec!["async", "gradient_allreduce"]
        );
        assert_eq!(expand("${X:-0}", &e, &none), vec!["0"]);
        assert_eq!(expand("${oc.env:Y,False}", &e, &none), vec!["False"]);
        assert_eq!(
            expand("${oc.decode:${oc.env:Y,True}}", &e, &none),
            vec!["True"]
        );
        assert_eq!(expand("--a=$ALGO", &e, &none), vec!["--a=async"]);
        assert_eq!(expand("$UNKNOWN", &e, &none), vec!["$UNKNOWN"]);
        let local = BTreeMap::from([("model.k".to_string(), "7".to_string())]);
        assert_eq!(expand("${model.k}", &e, &local), vec!["7"]);
        // oc.select: the key's value and the default; the default alone
        // when the file has no such key.
        assert_eq!(
            expand("${oc.select:model.k,lamb}", &e, &local),
            vec!["7", "lamb"]
        );
        assert_eq!(
            expand("${oc.select:opt.name,lamb}", &e, &none),
            vec!["lamb"]
        );
        // Assigned variables override their defaults.
        assert_eq!(
            expand_assigned("${ALGO:-gradient_allreduce}", &e, &none),
            vec!["async"]
        );
        assert_eq!(expand_assigned("${X:-0}", &e, &none), vec!["0"]);
        assert_eq!(
            expand_assigned("${oc.env:Y}", &e, &none),
            vec!["${oc.env:Y}"]
        );
        let mut lr = Env::default();
        lr.insert("LR", "0.0005");
        assert_eq!(
            expand_assigned("${oc.decode:${oc.env:LR,0.0004}}", &lr, &none),
            vec!["0.0005"]
        );
    }
}
