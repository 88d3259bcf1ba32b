//! The progress bar the command line draws on a terminal; the pipeline
//! reports through [`crate::audit::progress::Progress`].

use crate::audit::progress::Progress;

/// A progress bar on standard error, drawn only once the run has at least
/// [`TerminalBar::MIN_LOGS`] logs (shorter runs end before it would help).
/// Create it only when standard error is a terminal.
pub struct TerminalBar {
    bar: indicatif::ProgressBar,
}

impl TerminalBar {
    pub const MIN_LOGS: u64 = 40;

    pub fn new() -> TerminalBar {
        let bar = indicatif::ProgressBar::with_draw_target(
            Some(0),
            indicatif::ProgressDrawTarget::hidden(),
        );
        if let Ok(style) = indicatif::ProgressStyle::with_template(
            "{spinner} checking logs {bar:30} {pos}/{len} ({elapsed})",
        ) {
            bar.set_style(style);
        }
        TerminalBar { bar }
    }
}

impl Default for TerminalBar {
    fn default() -> Self {
        TerminalBar::new()
    }
}

impl Progress for TerminalBar {
    fn start(&self, total: usize) {
        self.bar.inc_length(total as u64);
        if self.bar.is_hidden() && self.bar.length().unwrap_or(0) >= Self::MIN_LOGS {
            self.bar
                .set_draw_target(indicatif::ProgressDrawTarget::stderr());
        }
    }

    fn advance(&self) {
        self.bar.inc(1);
    }

    fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bar_counts_every_batch_and_stays_hidden_for_short_runs() {
        let b = TerminalBar::new();
        b.start(3);
        b.start(2);
        b.advance();
        assert_eq!(b.bar.length(), Some(5));
        assert_eq!(b.bar.position(), 1);
        assert!(b.bar.is_hidden());
        b.finish();
    }
}
