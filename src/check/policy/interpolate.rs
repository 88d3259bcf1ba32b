//! Variables in config values: `${VAR:-default}`, `${VAR:=default}`,
//! `${VAR}`, `$VAR` (shell), `${oc.env:VAR,default}` and
//! `${oc.decode:...}` (OmegaConf), `${a.b}` (a key of the same YAML file).
//! A value becomes the few values it can take: the default and every value
//! the package's own configs assign to the variable. Bounded: a few
//! references per value, a few values per variable.

use super::configs::{Entry, EntryKind};
use regex::Regex;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::OnceLock;

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
    pub fn add_where(&mut self, entries: &[Entry], keep: impl Fn(&Entry) -> bool) {
        for e in entries {
            if e.kind != (EntryKind::Key { header: false }) || !keep(e) {
                continue;
            }
            let Some(k) = e.path.last() else { continue };
            if !is_env_name(k) || e.value.contains('$') || e.value.len() > 256 {
                continue;
            }
            let set = self.vars.entry(k.clone()).or_default();
            if set.len() < MAX_VALUES_PER_VAR {
                set.insert(e.value.clone());
            }
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

fn ref_re() -> Option<&'static Regex> {
    static R: OnceLock<Option<Regex>> = OnceLock::new();
    R.get_or_init(|| {
        Regex::new(
            r"\$\{oc\.env:([A-Za-z_][A-Za-z0-9_]*)(?:,([^}]*))?\}|\$\{([A-Za-z_][A-Za-z0-9_.]*)(?::?[-=]([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)",
        )
        .ok()
    })
    .as_ref()
}

fn decode_re() -> Option<&'static Regex> {
    static R: OnceLock<Option<Regex>> = OnceLock::new();
    R.get_or_init(|| Regex::new(r"\$\{oc\.decode:(\$\{[^}]*\})\}").ok())
        .as_ref()
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
    let Some(r) = ref_re() else {
        return vec![value.to_string()];
    };
    let mut cur: Vec<String> = vec![match decode_re() {
        Some(d) => d.replace_all(value, "$1").into_owned(),
        None => value.to_string(),
    }];
    // Up to three references, left to right.
    for _ in 0..3 {
        let mut next: Vec<String> = Vec::new();
        let mut changed = false;
        for v in &cur {
            let Some(c) = r.captures(v) else {
                next.push(v.clone());
                continue;
            };
            let Some(all) = c.get(0) else {
                next.push(v.clone());
                continue;
            };
            let (name, default) = match (c.get(1), c.get(3), c.get(5)) {
                (Some(n), _, _) => (n.as_str(), c.get(2).map(|d| d.as_str().trim())),
                (_, Some(n), _) => (n.as_str(), c.get(4).map(|d| d.as_str().trim())),
                (_, _, Some(n)) => (n.as_str(), None),
                _ => {
                    next.push(v.clone());
                    continue;
                }
            };
            let mut options: BTreeSet<String> = BTreeSet::new();
            if let Some(l) = local.get(name) {
                if !l.contains('$') {
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
                s.push_str(&v[..all.start()]);
                s.push_str(&o);
                s.push_str(&v[all.end()..]);
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
    }
}
