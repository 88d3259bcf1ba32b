//! Splitting a log into the pieces that carry the MLLOG marker, reading it
//! in fixed chunks so memory does not grow with the length of the log or of
//! a line.
//!
//! A piece ends at `\n` or `\r` (Python's universal newlines, which the
//! official reader uses); line numbers count `\n` only. The marker is
//! searched with `memmem` over whole chunks, so bytes of lines without a
//! marker are only looked at by that search and by a newline count.

use memchr::memmem::Finder;
use std::io::{self, Read};

/// Bytes read from the file at a time.
pub const READ_CHUNK: usize = 1 << 16;

/// Longest line (piece between line ends) that is read as a record: 1 MiB.
/// The longest MLLOG line of the 1306 corpus logs is 473 bytes, so this is
/// 2000 times the longest real record, and it bounds the memory one log
/// takes (a chunk plus at most one such line) whatever the file holds. A
/// longer line that carries the marker is reported, not read.
pub const MAX_LINE_BYTES: usize = 1 << 20;

const _: () = assert!(MAX_LINE_BYTES >= READ_CHUNK);

pub struct Stats {
    pub lines: u64,
    pub bytes: u64,
}

/// A piece that started in an earlier chunk.
#[derive(Default)]
struct Carry {
    buf: Vec<u8>,
    active: bool,
    /// Total length, including what was dropped past the limit.
    len: u64,
    overflow: bool,
    /// Marker seen in the dropped part.
    marker: bool,
    /// Last bytes appended, to find a marker across two appends.
    tail: Vec<u8>,
}

fn is_end(b: u8) -> bool {
    b == b'\n' || b == b'\r'
}

fn count_nl(b: &[u8]) -> u64 {
    memchr::memchr_iter(b'\n', b).count() as u64
}

/// What [`pieces`] hands out, with the 1-based line it is on.
pub enum Item<'a> {
    /// A piece that contains the marker, at most [`MAX_LINE_BYTES`] long.
    Piece(&'a [u8]),
    /// A longer piece that contains the marker: its length.
    Long(u64),
}

/// Calls `f` for every piece that contains `marker`.
pub fn pieces<R: Read>(
    mut reader: R,
    marker: &[u8],
    mut f: impl FnMut(Item<'_>, u64),
) -> io::Result<Stats> {
    let finder = Finder::new(marker);
    let mut buf = vec![0u8; READ_CHUNK];
    let mut carry = Carry::default();
    let mut newlines: u64 = 0;
    let mut bytes: u64 = 0;
    let mut last: Option<u8> = None;
    loop {
        let n = match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        bytes += n as u64;
        let chunk = &buf[..n];
        last = chunk.last().copied();
        let mut pos = 0;
        if carry.active {
            match memchr::memchr2(b'\n', b'\r', chunk) {
                None => {
                    carry.append(chunk, &finder);
                    continue;
                }
                Some(i) => {
                    carry.append(&chunk[..i], &finder);
                    carry.finish(newlines + 1, &finder, &mut f);
                    pos = i;
                }
            }
        }
        loop {
            let rest = &chunk[pos..];
            match finder.find(rest) {
                None => {
                    // Keep the unfinished last piece: a marker may straddle
                    // the chunk boundary.
                    let tail = memchr::memrchr2(b'\n', b'\r', rest).map_or(0, |i| i + 1);
                    newlines += count_nl(&rest[..tail]);
                    if tail < rest.len() {
                        carry.start(&rest[tail..], &finder);
                    }
                    break;
                }
                Some(m) => {
                    let start = memchr::memrchr2(b'\n', b'\r', &rest[..m]).map_or(0, |i| i + 1);
                    newlines += count_nl(&rest[..start]);
                    match memchr::memchr2(b'\n', b'\r', &rest[m..]) {
                        Some(e) => {
                            f(Item::Piece(&rest[start..m + e]), newlines + 1);
                            pos += m + e;
                        }
                        None => {
                            carry.start(&rest[start..], &finder);
                            break;
                        }
                    }
                }
            }
        }
    }
    if carry.active {
        carry.finish(newlines + 1, &finder, &mut f);
    }
    let lines = newlines + u64::from(last.is_some_and(|b| b != b'\n'));
    Ok(Stats { lines, bytes })
}

impl Carry {
    fn start(&mut self, data: &[u8], finder: &Finder<'_>) {
        debug_assert!(!data.iter().any(|&b| is_end(b)));
        self.active = true;
        self.buf.clear();
        self.len = 0;
        self.overflow = false;
        self.marker = false;
        self.tail.clear();
        self.append(data, finder);
    }

    fn append(&mut self, data: &[u8], finder: &Finder<'_>) {
        self.len += data.len() as u64;
        if !self.overflow {
            let room = MAX_LINE_BYTES.saturating_sub(self.buf.len());
            if data.len() <= room {
                self.buf.extend_from_slice(data);
                return;
            }
            self.overflow = true;
            self.marker = finder.find(&self.buf).is_some();
            self.tail.clear();
            let keep = self.buf.len().min(finder.needle().len());
            self.tail
                .extend_from_slice(&self.buf[self.buf.len() - keep..]);
            // The kept part is of no further use: free it.
            self.buf = Vec::new();
        }
        if !self.marker {
            let mut joint = self.tail.clone();
            joint.extend_from_slice(&data[..data.len().min(finder.needle().len())]);
            self.marker = finder.find(&joint).is_some() || finder.find(data).is_some();
        }
        // Keep the last few bytes for the next joint.
        let mut t = std::mem::take(&mut self.tail);
        t.extend_from_slice(&data[data.len().saturating_sub(finder.needle().len())..]);
        let cut = t.len().saturating_sub(finder.needle().len());
        t.drain(..cut);
        self.tail = t;
    }

    fn finish(&mut self, line: u64, finder: &Finder<'_>, f: &mut impl FnMut(Item<'_>, u64)) {
        self.active = false;
        if self.overflow {
            if self.marker {
                f(Item::Long(self.len), line);
            }
        } else if finder.find(&self.buf).is_some() {
            f(Item::Piece(&self.buf), line);
        }
        self.buf.clear();
        if self.buf.capacity() > 4 * READ_CHUNK {
            self.buf = Vec::new();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that hands out at most `n` bytes per read.
    struct Dribble<'a>(&'a [u8], usize);
    impl Read for Dribble<'_> {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            let k = self.0.len().min(self.1).min(out.len());
            out[..k].copy_from_slice(&self.0[..k]);
            self.0 = &self.0[k..];
            Ok(k)
        }
    }

    type Found = (Vec<(String, u64)>, Vec<(u64, u64)>, u64);

    fn collect(input: &[u8], step: usize) -> Found {
        let mut got = Vec::new();
        let mut longs = Vec::new();
        let stats = pieces(
            Dribble(input, step),
            crate::mllog::MARKER,
            |item, l| match item {
                Item::Piece(p) => got.push((String::from_utf8_lossy(p).into_owned(), l)),
                Item::Long(n) => longs.push((l, n)),
            },
        );
        (got, longs, stats.map(|s| s.lines).unwrap_or(0))
    }

    #[test]
    fn same_pieces_whatever_the_read_size() {
        let input = b"a\n:::MLLOG {1}\r\nx :::MLLOG {2}\rprogress\r:::MLLOG {3}\n\nnoise :::MLL\n:::MLLOG {4}";
        let expected = vec![
            (":::MLLOG {1}".to_string(), 2),
            ("x :::MLLOG {2}".to_string(), 3),
            (":::MLLOG {3}".to_string(), 3),
            (":::MLLOG {4}".to_string(), 6),
        ];
        for step in [1, 2, 3, 5, 7, 64, 1 << 16] {
            let (got, longs, lines) = collect(input, step);
            assert_eq!(got, expected, "read size {step}");
            assert!(longs.is_empty());
            assert_eq!(lines, 6);
        }
    }

    #[test]
    fn long_pieces_are_reported_not_kept() {
        let mut input = b"ok\n".to_vec();
        input.extend(std::iter::repeat_n(b'x', MAX_LINE_BYTES + 10));
        input.extend_from_slice(b":::MLLOG {}\n");
        input.extend(std::iter::repeat_n(b'y', MAX_LINE_BYTES * 2));
        input.extend_from_slice(b"\n:::MLLOG {5}\n");
        let (got, longs, lines) = collect(&input, READ_CHUNK);
        assert_eq!(got, vec![(":::MLLOG {5}".to_string(), 4)]);
        assert_eq!(longs, vec![(2, (MAX_LINE_BYTES + 10 + 11) as u64)]);
        assert_eq!(lines, 4);
    }
}
