use clap::Parser;
use mlaudit::app::cli::{Cli, ColorWhen};
use mlaudit::app::commands::run;
use mlaudit::app::Io;
use std::io::IsTerminal;
use std::process::ExitCode;

/// Bounds the memory one rule expression may build (see `rules::budget`).
#[global_allocator]
static ALLOC: mlaudit::check::rules::budget::BoundedAlloc =
    mlaudit::check::rules::budget::BoundedAlloc;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let stdout = std::io::stdout();
    // anstream resolves `auto` the way other command-line tools do: a
    // terminal, NO_COLOR, CLICOLOR, CLICOLOR_FORCE, TERM=dumb.
    let choice = match cli.color {
        ColorWhen::Auto => anstream::ColorChoice::Auto,
        ColorWhen::Always => anstream::ColorChoice::Always,
        ColorWhen::Never => anstream::ColorChoice::Never,
    };
    choice.write_global();
    let color = anstream::AutoStream::choice(&stdout) != anstream::ColorChoice::Never;
    let mut out = std::io::BufWriter::new(mlaudit::app::output::PipeWatch(stdout.lock()));
    let progress = std::io::stderr().is_terminal() && !cli.quiet;
    let quiet = cli.quiet;
    let mut err = std::io::stderr();
    let exit = run(
        cli,
        &mut Io {
            out: &mut out,
            err: &mut err,
            color,
            progress,
            quiet,
        },
    );
    let _ = std::io::Write::flush(&mut out);
    ExitCode::from(exit as u8)
}
