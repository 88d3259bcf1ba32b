//! The progress bar the command line draws on a terminal; the pipeline
//! reports through [`crate::audit::progress::Progress`].

use crate::audit::progress::Progress;

/// A progress bar on standard error, drawn only once the run has at least
/// [`TerminalBar::MIN_LOGS`] logs (shorter runs end before it would help).
/// Create it only when standard error is a terminal.
pub struct TerminalBar {
    bar: indicatif::ProgressBar,
    /// Packages of the run and how many are done (a round); 0 when the run
    /// is not counted in packages.
    packages: std::sync::atomic::AtomicUsize,
    packages_done: std::sync::atomic::AtomicUsize,
}

impl TerminalBar {
    pub const MIN_LOGS: u64 = 40;

    pub fn new() -> TerminalBar {
        let bar = indicatif::ProgressBar::with_draw_target(
            Some(0),
            indicatif::ProgressDrawTarget::hidden(),
        );
        if let Ok(style) = indicatif::ProgressStyle::with_template(
            "{spinner} checking logs {bar:30} {pos}/{len}{msg} ({elapsed})",
        ) {
            bar.set_style(style);
        }
        TerminalBar {
            bar,
            packages: Default::default(),
            packages_done: Default::default(),
        }
    }

    /// The run checks `total` packages (more than one: a round); the bar
    /// then also says how many of them are done.
    pub fn packages(&self, total: usize) {
        use std::sync::atomic::Ordering;
        if total > 1 {
            self.packages.store(total, Ordering::Relaxed);
            self.bar.set_message(format!(", packages 0/{total}"));
        }
    }

    /// One more package is done.
    pub fn package_done(&self) {
        use std::sync::atomic::Ordering;
        let done = self.packages_done.fetch_add(1, Ordering::Relaxed) + 1;
        let total = self.packages.load(Ordering::Relaxed);
        if total > 1 {
            self.bar
                .set_message(format!(", packages {}/{total}", done.min(total)));
        }
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

    #[test]
    fn a_round_counts_packages_done() {
        let b = TerminalBar::new();
        b.packages(3);
        b.package_done();
        assert_eq!(b.bar.message(), ", packages 1/3");
        let one = TerminalBar::new();
        one.packages(1);
        one.package_done();
        assert_eq!(one.bar.message(), "", "one package: logs only");
    }
}
