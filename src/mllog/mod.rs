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

mod line;

pub use line::{decode, record_text, RawRecord, RecordError};

use std::io::{self, BufRead, BufReader, Read};

/// The marker that starts an MLLOG record.
pub const MARKER: &[u8] = b":::MLLOG ";

/// One decoded MLLOG event, owned, ready for the rules engine.
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

/// What a scan of a log produced besides the events.
#[derive(Debug, Default, Clone)]
pub struct ScanSummary {
    pub lines: u64,
    pub records: u64,
    pub bytes: u64,
    pub malformed: Vec<Malformed>,
    /// Records whose `key` is not a string: ignored, as the official tool does.
    pub non_string_keys: Vec<u64>,
}

/// Streams `reader` once, calling `on_event` for every well-formed record
/// whose key `wanted` accepts. Other records are still validated.
pub fn scan<R: Read>(
    reader: R,
    mut wanted: impl FnMut(&str) -> bool,
    mut on_event: impl FnMut(Event),
) -> io::Result<ScanSummary> {
    let mut reader = BufReader::with_capacity(1 << 16, reader);
    let mut buf: Vec<u8> = Vec::with_capacity(1024);
    let mut summary = ScanSummary::default();
    let mut line_no: u64 = 0;
    loop {
        buf.clear();
        let n = reader.read_until(b'\n', &mut buf)?;
        if n == 0 {
            break;
        }
        summary.bytes += n as u64;
        line_no += 1;
        let mut text: &[u8] = &buf;
        if let Some(rest) = text.strip_suffix(b"\n") {
            text = rest;
        }
        if memchr::memmem::find(text, MARKER).is_none() {
            continue;
        }
        // A lone '\r' ends a line for the official reader: treat each
        // '\r'-separated piece of this physical line as its own line.
        if memchr::memchr(b'\r', text).is_some() {
            for piece in text.split(|&b| b == b'\r') {
                handle_piece(piece, line_no, &mut summary, &mut wanted, &mut on_event);
            }
        } else {
            handle_piece(text, line_no, &mut summary, &mut wanted, &mut on_event);
        }
    }
    summary.lines = line_no;
    Ok(summary)
}

fn handle_piece(
    piece: &[u8],
    line_no: u64,
    summary: &mut ScanSummary,
    wanted: &mut impl FnMut(&str) -> bool,
    on_event: &mut impl FnMut(Event),
) {
    let Some(pos) = memchr::memmem::rfind(piece, MARKER) else {
        return;
    };
    summary.records += 1;
    let body = &piece[pos + MARKER.len()..];
    let text = record_text(body);
    match decode(&text) {
        Ok(raw) => {
            let Some(key) = raw.key.as_deref() else {
                summary.non_string_keys.push(line_no);
                return;
            };
            if !wanted(key) {
                return;
            }
            match raw.into_event(line_no) {
                Ok(event) => on_event(event),
                Err(error) => summary.malformed.push(Malformed {
                    line: line_no,
                    error: error.to_string(),
                    excerpt: excerpt(body),
                }),
            }
        }
        Err(error) => summary.malformed.push(Malformed {
            line: line_no,
            error: error.to_string(),
            excerpt: excerpt(body),
        }),
    }
}

fn excerpt(body: &[u8]) -> String {
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
}
