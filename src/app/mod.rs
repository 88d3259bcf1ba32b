//! The command line: the only code that knows clap, standard input and
//! output, colour, progress bars and exit codes.
//!
//! - [`cli`]: the arguments;
//! - [`commands`]: one function per subcommand, each running the library
//!   pipeline and handing its report to [`output`];
//! - [`settings`]: flags merged with `.mlaudit.toml`;
//! - [`ci`] and [`hook`]: changed-only checks and git hooks.

pub mod ci;
pub mod cli;
pub mod commands;
pub mod hook;
pub mod output;
pub mod progress;
pub mod reproduce;
pub mod settings;

use std::io::Write;

/// Exit status: 0 everything passed, 1 findings, 2 the tool could not do its job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    Success = 0,
    Findings = 1,
    Error = 2,
}

/// Output settings decided by the binary.
pub struct Io<'a> {
    pub out: &'a mut dyn Write,
    pub err: &'a mut dyn Write,
    pub color: bool,
    /// Draw a progress bar on standard error (only when it is a terminal).
    pub progress: bool,
    /// `-q`: only the findings that fail the run, no notes.
    pub quiet: bool,
}
