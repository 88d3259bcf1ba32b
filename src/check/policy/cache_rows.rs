//! The settings part of a cache entry ([`super::cache`]), in a binary
//! form of our own: the package's own configs' settings are most of an
//! entry (v5.1 GigaComputing: 2,300 settings, 180 KB), and reading them
//! back as JSON cost 6 million instructions, more than the rest of a run
//! with the configs kept. Here a string is its length and its bytes.
//!
//! Layout (integers little-endian):
//! - the vendored flags: `u32` count, one byte each (0 or 1);
//! - the files: `u32` count, then each file's index (`u32`) and its
//!   settings: `u32` count, then each setting's line (`u64`), kind (`u8`),
//!   key path (`u32` count of parts, each a string), value and display.
//! - a string: `u32` byte length, then UTF-8 bytes.
//!
//! Reading checks every length against the bytes left before it
//! allocates, and every string for UTF-8: a truncated or corrupt entry is
//! `None` (a miss), never a panic or an allocation the bytes cannot back.

use super::configs::{Entry, EntryKind};

/// The settings of some files, by file index.
pub type Own = Vec<(usize, Vec<Entry>)>;

fn kind_code(k: EntryKind) -> u8 {
    match k {
        EntryKind::Key { header: false } => 0,
        EntryKind::Key { header: true } => 1,
        EntryKind::Flag => 2,
        EntryKind::Value => 3,
        EntryKind::Guard => 4,
        EntryKind::GuardEnd => 5,
        EntryKind::Source => 6,
    }
}

fn kind_of(c: u8) -> Option<EntryKind> {
    Some(match c {
        0 => EntryKind::Key { header: false },
        1 => EntryKind::Key { header: true },
        2 => EntryKind::Flag,
        3 => EntryKind::Value,
        4 => EntryKind::Guard,
        5 => EntryKind::GuardEnd,
        6 => EntryKind::Source,
        _ => return None,
    })
}

/// Appends the vendored flags and the settings to `out`; `None` when a
/// count or length does not fit in 32 bits (nothing is kept then).
pub fn write(vendored: &[bool], own: &[(usize, Vec<Entry>)], out: &mut Vec<u8>) -> Option<()> {
    fn n(out: &mut Vec<u8>, x: usize) -> Option<()> {
        out.extend_from_slice(&u32::try_from(x).ok()?.to_le_bytes());
        Some(())
    }
    fn s(out: &mut Vec<u8>, x: &str) -> Option<()> {
        n(out, x.len())?;
        out.extend_from_slice(x.as_bytes());
        Some(())
    }
    n(out, vendored.len())?;
    out.extend(vendored.iter().map(|&v| u8::from(v)));
    n(out, own.len())?;
    for (i, entries) in own {
        n(out, *i)?;
        n(out, entries.len())?;
        for e in entries {
            out.extend_from_slice(&e.line.to_le_bytes());
            out.push(kind_code(e.kind));
            n(out, e.path.len())?;
            for p in &e.path {
                s(out, p)?;
            }
            s(out, &e.value)?;
            s(out, &e.display)?;
        }
    }
    Some(())
}

/// What [`write`] wrote, read back from `b`, which must hold nothing else.
pub fn read(b: &[u8]) -> Option<(Vec<bool>, Own)> {
    let mut r = Reader { b };
    let n = r.count(1)?;
    let vendored = r
        .take(n)?
        .iter()
        .map(|&x| match x {
            0 => Some(false),
            1 => Some(true),
            _ => None,
        })
        .collect::<Option<Vec<bool>>>()?;
    // A file takes at least 8 bytes (index, count), a setting 21 (line,
    // kind, part count, two string lengths), a part 4.
    let files = r.count(8)?;
    let mut own = Vec::with_capacity(files);
    for _ in 0..files {
        let i = r.u32()? as usize;
        let count = r.count(21)?;
        let mut entries = Vec::with_capacity(count);
        for _ in 0..count {
            let line = u64::from_le_bytes(r.take(8)?.try_into().ok()?);
            let kind = kind_of(*r.take(1)?.first()?)?;
            let parts = r.count(4)?;
            let mut path = Vec::with_capacity(parts);
            for _ in 0..parts {
                path.push(r.string()?);
            }
            let value = r.string()?;
            let display = r.string()?;
            entries.push(Entry {
                line,
                path,
                value,
                kind,
                display,
            });
        }
        own.push((i, entries));
    }
    r.b.is_empty().then_some((vendored, own))
}

struct Reader<'a> {
    b: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if n > self.b.len() {
            return None;
        }
        let (head, rest) = self.b.split_at(n);
        self.b = rest;
        Some(head)
    }

    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }

    /// A count of items of at least `min` bytes each: `None` when the
    /// bytes left cannot hold them.
    fn count(&mut self, min: usize) -> Option<usize> {
        let n = self.u32()? as usize;
        (n.checked_mul(min)? <= self.b.len()).then_some(n)
    }

    fn string(&mut self) -> Option<String> {
        let n = self.u32()? as usize;
        let bytes = self.take(n)?;
        std::str::from_utf8(bytes).ok().map(str::to_string)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::policy::configs::{parse, Format};

    fn sample() -> Own {
        vec![
            (
                0,
                parse(
                    "if [ \"${X:-0}\" = 1 ]; then\n  export A=1\nfi\nrun --b 2 --c\n",
                    Format::Shell,
                ),
            ),
            (
                3,
                parse("a:\n  b: 1\n  c:\n    - x\n  d: \"é\"\n", Format::Yaml),
            ),
            (4, Vec::new()),
        ]
    }

    /// The smallest setting (no key path, no value, no display) takes 21
    /// bytes: a blob of only such settings is read back too.
    #[test]
    fn the_smallest_settings_round_trip() {
        let bare = Entry {
            line: 1,
            path: Vec::new(),
            value: String::new(),
            kind: EntryKind::Value,
            display: String::new(),
        };
        let own = vec![(0, vec![bare.clone(), bare])];
        let mut b = Vec::new();
        write(&[], &own, &mut b).unwrap();
        assert_eq!(b.len(), 4 + 4 + 8 + 2 * 21);
        assert_eq!(read(&b), Some((Vec::new(), own)));
    }

    /// Settings of every kind are written and read back the same.
    #[test]
    fn settings_round_trip() {
        let own = sample();
        let kinds: std::collections::BTreeSet<String> = own
            .iter()
            .flat_map(|(_, e)| e.iter().map(|e| format!("{:?}", e.kind)))
            .collect();
        assert!(kinds.len() >= 5, "{kinds:?}");
        let vendored = vec![false, true, false, false, true];
        let mut b = Vec::new();
        write(&vendored, &own, &mut b).unwrap();
        assert_eq!(read(&b), Some((vendored, own)));
    }

    /// A cut, a stray byte, an unknown kind, a length past the end or
    /// bytes that are not UTF-8: each is a miss.
    #[test]
    fn corrupt_rows_are_a_miss() {
        let own = sample();
        let mut b = Vec::new();
        write(&[true, false], &own, &mut b).unwrap();
        for cut in 0..b.len() {
            assert_eq!(read(&b[..cut]), None, "cut at {cut}");
        }
        let mut more = b.clone();
        more.push(0);
        assert_eq!(read(&more), None);
        // The first setting's kind sits after the flags (4 + 2 bytes),
        // the file count (4), index (4), setting count (4) and line (8).
        let at = 4 + 2 + 4 + 4 + 4 + 8;
        let mut bad = b.clone();
        assert!(bad[at] <= 5);
        bad[at] = 9;
        assert_eq!(read(&bad), None);
        let mut flag = b.clone();
        flag[4] = 2;
        assert_eq!(read(&flag), None);
        // A count of files no bytes can back: no allocation, a miss.
        let mut huge = b.clone();
        huge[6..10].copy_from_slice(&u32::MAX.to_le_bytes());
        assert_eq!(read(&huge), None);
        // Not UTF-8: the last byte, the end of the only setting's display.
        let mut utf = Vec::new();
        write(&[], &[(0, parse("a: b\n", Format::Yaml))], &mut utf).unwrap();
        assert!(read(&utf).is_some());
        let last = utf.len() - 1;
        utf[last] = 0xff;
        assert_eq!(read(&utf), None);
    }
}
