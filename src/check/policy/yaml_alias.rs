//! YAML anchors and aliases in implementation configs: `eps: &eps 1e-6`
//! anchors a value that `*eps` repeats elsewhere, `base: &base` anchors a
//! block that `optim: *base` copies and `<<: *base` (a merge key) merges
//! into the block it sits in. The YAML reader ([`super::configs`]) reads a
//! file line by line; this keeps what the anchors hold so that an alias
//! reads as the value or block it stands for.
//!
//! Bounded: a file whose aliases copy more than [`MAX_COPIED`] settings in
//! all (a "billion laughs" file, each block aliasing the one before it
//! many times) gets no more copies.

use super::configs::{Entry, EntryKind};
use std::collections::HashMap;

/// Most settings the aliases of one file copy.
const MAX_COPIED: usize = 4096;

/// The anchors of one YAML file, in the order its lines define them.
#[derive(Debug, Default)]
pub(super) struct Aliases {
    /// Anchored values (`&eps 1e-6`), as written after the anchor.
    scalars: HashMap<String, String>,
    /// Anchored blocks (`base: &base`): where the block's key entry is in
    /// the reader's output, and its key path.
    blocks: HashMap<String, (usize, Vec<String>)>,
    copied: usize,
}

/// A value without its anchor: `&name rest` gives (`name`, `rest`); any
/// other value is itself, without a name.
pub(super) fn split_anchor(v: &str) -> (Option<&str>, &str) {
    let Some(rest) = v.strip_prefix('&') else {
        return (None, v);
    };
    let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
    let name = &rest[..end];
    if name.is_empty() {
        return (None, v);
    }
    (Some(name), rest[end..].trim_start())
}

/// The anchor an alias names (`*base` gives `base`).
fn alias(v: &str) -> Option<&str> {
    let name = v.strip_prefix('*')?;
    (!name.is_empty() && !name.contains(char::is_whitespace)).then_some(name)
}

impl Aliases {
    /// Records what `anchor` holds: the value of the entry `out[at]`, or,
    /// when that entry opens a block, the block.
    pub(super) fn define(&mut self, anchor: &str, out: &[Entry], at: usize) {
        let Some(e) = out.get(at) else { return };
        if e.kind == (EntryKind::Key { header: true }) {
            self.blocks.insert(anchor.to_string(), (at, e.path.clone()));
        } else {
            self.scalars.insert(anchor.to_string(), e.value.clone());
        }
    }

    /// The value an alias of an anchored value stands for (`*eps`), if
    /// `v` is one.
    pub(super) fn scalar(&self, v: &str) -> Option<&str> {
        self.scalars.get(alias(v)?).map(String::as_str)
    }

    /// Whether `v` is an alias of an anchored block.
    pub(super) fn is_block(&self, v: &str) -> bool {
        alias(v).is_some_and(|n| self.blocks.contains_key(n))
    }

    /// Copies the settings of the blocks `v` aliases (`*base`, or a merge
    /// key's `[*a, *b]`) under the key path `to`, at the lines they are
    /// written on.
    pub(super) fn copy(&mut self, v: &str, to: &[String], out: &mut Vec<Entry>) {
        let names: Vec<&str> = v
            .trim_start_matches('[')
            .trim_end_matches(']')
            .split(',')
            .filter_map(|n| alias(n.trim()))
            .collect();
        for name in names {
            let Some((at, from)) = self.blocks.get(name) else {
                continue;
            };
            let mut add: Vec<Entry> = Vec::new();
            for e in out.iter().skip(at + 1) {
                if e.path.len() <= from.len() || !e.path.starts_with(from) {
                    break;
                }
                if self.copied + add.len() >= MAX_COPIED {
                    break;
                }
                let mut path = to.to_vec();
                path.extend_from_slice(&e.path[from.len()..]);
                add.push(Entry { path, ..e.clone() });
            }
            self.copied += add.len();
            out.extend(add);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anchors_split_off_values() {
        assert_eq!(split_anchor("&eps 1e-6"), (Some("eps"), "1e-6"));
        assert_eq!(split_anchor("&base"), (Some("base"), ""));
        assert_eq!(split_anchor("& x"), (None, "& x"));
        assert_eq!(split_anchor("lamb"), (None, "lamb"));
        assert_eq!(alias("*wd"), Some("wd"));
        assert_eq!(alias("*"), None);
        assert_eq!(alias("2*3"), None);
    }
}
