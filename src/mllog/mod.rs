//! The MLLOG parser: turns the bytes of a training log into `:::MLLOG` records.
//!
//! A record is the JSON object after the `:::MLLOG ` marker. The marker may
//! sit anywhere on a line (launchers prefix `0: `, `[1,0]<stdout>:`,
//! timestamps); like the official parser we take the text after the *last*
//! marker on the line. Lines end at `\n`, `\r\n` or a lone `\r` (Python's
//! universal newlines, which the official tool uses), but line numbers count
//! `\n` only, as editors do. Bytes that are not UTF-8 are read as latin-1.
//! A line we cannot decode becomes a [`Malformed`] record; nothing here
//! panics or stops at bad input.

pub mod json;
mod line;
mod split;

pub use line::{decode, decode_mll, record_text, Record, RecordError};
pub use split::{MAX_LINE_BYTES, READ_CHUNK};

use std::borrow::Cow;
use std::io::{self, Read};

/// The marker that starts an MLLOG record.
pub const MARKER: &[u8] = b":::MLLOG ";

/// The marker of the old line format (training 0.6.0):
/// `:::MLL <seconds> <key>: {"value": ..., "metadata": {...}}`.
pub const MLL_MARKER: &[u8] = b":::MLL";

/// Which line format a ruleset reads (`rules/<usage>/<version>/log_format.yaml`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// `:::MLLOG {json}` (training 0.7.0 on, HPC).
    #[default]
    Mllog,
    /// `:::MLL <seconds> <key>: {json}` (training 0.6.0), read as the
    /// official `mlp_parser/ruleset_060.py` reads it.
    Mll,
}

impl Format {
    pub fn marker(self) -> &'static [u8] {
        match self {
            Format::Mllog => MARKER,
            Format::Mll => MLL_MARKER,
        }
    }

    /// What the reader says of a record it ignores.
    pub fn ignored_record(self) -> &'static str {
        match self {
            Format::Mllog => "MLLOG record whose 'key' is not a string; the record is ignored",
            Format::Mll => {
                ":::MLL record whose JSON is not an object with a 'value' field; the record is ignored"
            }
        }
    }
}

/// How many malformed records, non-string keys and over-long lines a scan
/// keeps in detail; the rest are only counted, so a log of a million broken
/// lines does not take a million entries of memory.
pub const MAX_KEPT: usize = 100;

/// One decoded MLLOG event, owned, for callers that want `serde_json` values
/// (package checks, statistics). The rules engine reads [`Record`]s.
#[derive(Debug, Clone)]
pub struct Event {
    /// 1-based physical line number in the file.
    pub line: u64,
    pub time_ms: f64,
    pub key: String,
    pub event_type: Option<String>,
    pub value: serde_json::Value,
    pub metadata: serde_json::Value,
}

/// A line that carries the marker but could not be decoded.
#[derive(Debug, Clone, PartialEq)]
pub struct Malformed {
    pub line: u64,
    pub error: String,
    /// The start of the offending text (at most 120 characters).
    pub excerpt: String,
}

/// A line longer than [`MAX_LINE_BYTES`] that carries the marker: it is not
/// read, and reported instead.
#[derive(Debug, Clone, PartialEq)]
pub struct LongLine {
    pub line: u64,
    pub bytes: u64,
}

/// What a scan of a log produced besides the events.
#[derive(Debug, Default, Clone)]
pub struct ScanSummary {
    pub lines: u64,
    /// Pieces that carry the marker (well-formed or not, over-long included).
    pub records: u64,
    pub bytes: u64,
    /// The first [`MAX_KEPT`] malformed records; `malformed_total` counts all.
    pub malformed: Vec<Malformed>,
    pub malformed_total: u64,
    /// Records whose `key` is not a string (`:::MLL`: whose JSON has no
    /// `value`): ignored, as the official tool does (first [`MAX_KEPT`] lines; `non_string_total` counts all).
    pub non_string_keys: Vec<u64>,
    pub non_string_total: u64,
    /// Marker lines longer than [`MAX_LINE_BYTES`] (first [`MAX_KEPT`]).
    pub long_lines: Vec<LongLine>,
    pub long_total: u64,
}

impl ScanSummary {
    /// Records that decoded (whatever their key).
    pub fn well_formed(&self) -> u64 {
        self.records
            .saturating_sub(self.malformed_total + self.long_total)
    }

    fn malformed(&mut self, line: u64, error: String, body: &[u8]) {
        self.malformed_total += 1;
        if self.malformed.len() < MAX_KEPT {
            self.malformed.push(Malformed {
                line,
                error,
                excerpt: excerpt(body),
            });
        }
    }
}

/// Streams `reader` once with bounded memory, calling `on_record` for every
/// well-formed record whose (string) key `wanted` accepts. Other records
/// are still validated and counted.
pub fn scan_records<R: Read>(
    reader: R,
    wanted: impl FnMut(&str) -> bool,
    on_record: impl FnMut(&Record<'_>),
) -> io::Result<ScanSummary> {
    scan_records_raw(reader, wanted, on_record, |_| {})
}

/// [`scan_records`], also handing `on_raw` the bytes from the marker to the
/// end of every line that carries one (line ending excluded), whether or
/// not the record is well formed: what a content hash of the MLLOG part of
/// a log needs.
pub fn scan_records_raw<R: Read>(
    reader: R,
    wanted: impl FnMut(&str) -> bool,
    on_record: impl FnMut(&Record<'_>),
    on_raw: impl FnMut(&[u8]),
) -> io::Result<ScanSummary> {
    scan_records_raw_in(Format::Mllog, reader, wanted, on_record, on_raw)
}

/// [`scan_records_raw`] for the line format `format`.
pub fn scan_records_raw_in<R: Read>(
    format: Format,
    reader: R,
    mut wanted: impl FnMut(&str) -> bool,
    mut on_record: impl FnMut(&Record<'_>),
    mut on_raw: impl FnMut(&[u8]),
) -> io::Result<ScanSummary> {
    let mut summary = ScanSummary::default();
    let stats = split::pieces(reader, format.marker(), |item, line| match item {
        split::Item::Piece(piece) => handle_piece(
            format,
            piece,
            line,
            &mut summary,
            &mut wanted,
            &mut on_record,
            &mut on_raw,
        ),
        split::Item::Long(bytes) => {
            summary.records += 1;
            summary.long_total += 1;
            if summary.long_lines.len() < MAX_KEPT {
                summary.long_lines.push(LongLine { line, bytes });
            }
        }
    })?;
    summary.lines = stats.lines;
    summary.bytes = stats.bytes;
    Ok(summary)
}

/// Like [`scan_records`], with each wanted record decoded into an owned
/// [`Event`] of `serde_json` values.
pub fn scan<R: Read>(
    reader: R,
    wanted: impl FnMut(&str) -> bool,
    on_event: impl FnMut(Event),
) -> io::Result<ScanSummary> {
    scan_in(Format::Mllog, reader, wanted, on_event)
}

/// [`scan`] for the line format `format`.
pub fn scan_in<R: Read>(
    format: Format,
    reader: R,
    wanted: impl FnMut(&str) -> bool,
    mut on_event: impl FnMut(Event),
) -> io::Result<ScanSummary> {
    scan_records_raw_in(format, reader, wanted, |r| on_event(r.to_event()), |_| {})
}

fn handle_piece(
    format: Format,
    piece: &[u8],
    line_no: u64,
    summary: &mut ScanSummary,
    wanted: &mut impl FnMut(&str) -> bool,
    on_record: &mut impl FnMut(&Record<'_>),
    on_raw: &mut impl FnMut(&[u8]),
) {
    let marker = format.marker();
    let Some(pos) = last_marker(format, piece) else {
        return;
    };
    on_raw(&piece[pos..]);
    summary.records += 1;
    let body = &piece[pos + marker.len()..];
    let text: Cow<'_, str> = match format {
        Format::Mllog => record_text(body),
        // The space after `:::MLL` is part of the pattern: keep it; the
        // line's end is stripped.
        Format::Mll => match body {
            [b' ', next, ..] if !next.is_ascii_whitespace() => {
                let mut t = String::from(" ");
                t.push_str(&record_text(&body[1..]));
                Cow::Owned(t)
            }
            _ => record_text(body),
        },
    };
    let decoded = match format {
        Format::Mllog => decode(&text, line_no),
        Format::Mll => decode_mll(&text, line_no),
    };
    match decoded {
        Ok(Some(record)) => {
            if wanted(&record.key) {
                on_record(&record);
            }
        }
        Ok(None) => {
            summary.non_string_total += 1;
            if summary.non_string_keys.len() < MAX_KEPT {
                summary.non_string_keys.push(line_no);
            }
        }
        Err(error) => summary.malformed(line_no, error.to_string(), body),
    }
}

/// Where the last marker of `piece` starts. A forward search, repeated
/// after each hit, beats `memmem::rfind` (no vector prefilter backwards)
/// several times over on real lines, which hold one marker.
fn last_marker(format: Format, piece: &[u8]) -> Option<usize> {
    static FINDERS: std::sync::OnceLock<[memchr::memmem::Finder<'static>; 2]> =
        std::sync::OnceLock::new();
    let [mllog, mll] = FINDERS.get_or_init(|| {
        [
            memchr::memmem::Finder::new(MARKER),
            memchr::memmem::Finder::new(MLL_MARKER),
        ]
    });
    let finder = match format {
        Format::Mllog => mllog,
        Format::Mll => mll,
    };
    let mut last = None;
    let mut from = 0;
    while let Some(i) = finder.find(&piece[from..]) {
        last = Some(from + i);
        from += i + 1;
    }
    last
}

fn excerpt(body: &[u8]) -> String {
    let body = &body[..body.len().min(4 * 120)];
    let text = String::from_utf8_lossy(body);
    let mut out: String = text.chars().take(120).collect();
    if text.chars().count() > 120 {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan_all(input: &[u8]) -> (Vec<Event>, ScanSummary) {
        let mut events = Vec::new();
        let summary = scan(input, |_| true, |e| events.push(e)).unwrap_or_default();
        (events, summary)
    }

    const REC: &str = r#":::MLLOG {"namespace": "", "time_ms": 17, "event_type": "POINT_IN_TIME", "key": "seed", "value": 42, "metadata": {"file": "t.py", "lineno": 5}}"#;

    #[test]
    fn finds_marker_after_prefixes_and_keeps_physical_lines() {
        let input = format!("hello\n0: {REC}\r\n[1,0]<stdout>:{REC}\nnoise\n{REC}");
        let (events, summary) = scan_all(input.as_bytes());
        assert_eq!(
            events.iter().map(|e| e.line).collect::<Vec<_>>(),
            vec![2, 3, 5]
        );
        assert_eq!(events[0].key, "seed");
        assert_eq!(events[0].value, serde_json::json!(42));
        assert_eq!(events[0].time_ms, 17.0);
        assert!(summary.malformed.is_empty());
        assert_eq!(summary.lines, 5);
    }

    #[test]
    fn takes_text_after_the_last_marker() {
        let input = format!(":::MLLOG garbage {REC}\n");
        let (events, summary) = scan_all(input.as_bytes());
        assert_eq!(events.len(), 1);
        assert!(summary.malformed.is_empty());
    }

    #[test]
    fn lone_carriage_return_splits_a_line() {
        let input = format!("{REC}\rprogress 50%\r{REC}\n");
        let (events, summary) = scan_all(input.as_bytes());
        assert_eq!(events.len(), 2);
        assert!(events.iter().all(|e| e.line == 1));
        assert!(summary.malformed.is_empty());
    }

    #[test]
    fn malformed_json_is_reported_with_its_line() {
        let input = format!("{REC}\n:::MLLOG {{\"key\": \n{REC} trailing\n");
        let (events, summary) = scan_all(input.as_bytes());
        assert_eq!(events.len(), 1);
        let lines: Vec<u64> = summary.malformed.iter().map(|m| m.line).collect();
        assert_eq!(lines, vec![2, 3]);
    }

    #[test]
    fn latin1_bytes_are_decoded() {
        let mut input =
            br#":::MLLOG {"time_ms": 1, "key": "submission_org", "value": "Caf"#.to_vec();
        input.push(0xe9);
        input.extend_from_slice(br#"", "metadata": {}}"#);
        let (events, summary) = scan_all(&input);
        assert!(summary.malformed.is_empty(), "{:?}", summary.malformed);
        assert_eq!(events[0].value, serde_json::json!("Caf\u{e9}"));
    }

    #[test]
    fn empty_and_truncated_input() {
        let (events, summary) = scan_all(b"");
        assert!(events.is_empty());
        assert_eq!(summary.lines, 0);
        let (events, summary) = scan_all(br#":::MLLOG {"time_ms": 1, "key": "x", "val"#);
        assert!(events.is_empty());
        assert_eq!(summary.malformed.len(), 1);
    }

    #[test]
    fn non_string_key_is_ignored_and_counted() {
        let (events, summary) =
            scan_all(br#":::MLLOG {"time_ms": 1, "key": 5, "value": 1, "metadata": {}}"#);
        assert!(events.is_empty());
        assert_eq!(summary.non_string_keys, vec![1]);
    }

    #[test]
    fn unwanted_keys_are_skipped() {
        let input = format!("{REC}\n");
        let mut events = Vec::new();
        let summary = scan(input.as_bytes(), |k| k != "seed", |e| events.push(e));
        assert!(events.is_empty());
        assert_eq!(summary.map(|s| s.records).unwrap_or(0), 1);
    }

    fn scan_mll(input: &[u8]) -> (Vec<Event>, ScanSummary) {
        let mut events = Vec::new();
        let summary = scan_in(Format::Mll, input, |_| true, |e| events.push(e)).unwrap_or_default();
        (events, summary)
    }

    #[test]
    fn old_mll_lines_are_read_as_the_060_parser_reads_them() {
        let input = concat!(
            "noise\n",
            "0: :::MLL 1558581093.479 run_start: {\"value\": null, \"metadata\": {\"lineno\": 3}}\r\n",
            ":::MLL 12.5 eval_accuracy : \t{\"value\": 0.5, \"metadata\": {\"epoch_num\": 1}}  \n",
            ":::MLL 7 seed: {\"value\": 3}\n",
        );
        let (events, summary) = scan_mll(input.as_bytes());
        assert!(summary.malformed.is_empty(), "{:?}", summary.malformed);
        let keys: Vec<&str> = events.iter().map(|e| e.key.as_str()).collect();
        assert_eq!(keys, vec!["run_start", "eval_accuracy", "seed"]);
        assert_eq!(events[0].time_ms, 1558581093479.0);
        assert_eq!(events[0].line, 2);
        assert_eq!(events[1].metadata, serde_json::json!({"epoch_num": 1}));
        assert_eq!(events[2].metadata, serde_json::json!({}));
    }

    #[test]
    fn old_mll_lines_that_do_not_match_are_malformed_or_ignored() {
        let bad = [
            ":::MLL  1 k: {\"value\": 1}",
            ":::MLL 1.2.3 k: {\"value\": 1}",
            ":::MLL 1 k-x: {\"value\": 1}",
            ":::MLL 1 k {\"value\": 1}",
            ":::MLL 1 k:{\"value\": 1}",
            ":::MLL 1 k: {\"value\": ",
            ":::MLLOG {\"key\": \"k\", \"value\": 1, \"time_ms\": 1, \"metadata\": {}}",
        ];
        for line in bad {
            let (events, summary) = scan_mll(line.as_bytes());
            assert!(events.is_empty(), "{line}");
            assert_eq!(summary.malformed_total, 1, "{line}");
        }
        // Valid JSON that is not an object with a value: skipped, as the
        // official checker skips it.
        for line in [
            ":::MLL 1 k: [1]",
            ":::MLL 1 k: {\"metadata\": {}}",
            ":::MLL 1 k: 5",
        ] {
            let (events, summary) = scan_mll(line.as_bytes());
            assert!(events.is_empty(), "{line}");
            assert_eq!(summary.malformed_total, 0, "{line}");
            assert_eq!(summary.non_string_total, 1, "{line}");
        }
        // The new format ignores old lines altogether.
        let (events, summary) = scan_all(b":::MLL 1 k: {\"value\": 1}");
        assert!(events.is_empty());
        assert_eq!(summary.records, 0);
    }
}
