use clap::Parser;
use mlaudit::cli::Cli;
use mlaudit::commands::{run, Io};
use std::io::IsTerminal;
use std::process::ExitCode;

/// Bounds the memory one rule expression may build (see `rules::budget`).
#[global_allocator]
static ALLOC: mlaudit::rules::budget::BoundedAlloc = mlaudit::rules::budget::BoundedAlloc;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let stdout = std::io::stdout();
    let color = stdout.is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let mut out = std::io::BufWriter::new(stdout.lock());
    let progress = std::io::stderr().is_terminal();
    let mut err = std::io::stderr();
    let exit = run(
        cli,
        &mut Io {
            out: &mut out,
            err: &mut err,
            color,
            progress,
        },
    );
    let _ = std::io::Write::flush(&mut out);
    ExitCode::from(exit as u8)
}
