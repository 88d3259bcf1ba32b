//! `--format json`: the report as the documented JSON contract.

use super::Report;
use std::io::{self, Write};

pub fn render(report: &Report, out: &mut dyn Write) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, report).map_err(io::Error::other)?;
    writeln!(out)
}
