//! Progress of a long check, reported by the pipeline and drawn (or not)
//! by whoever asked for it. The library never draws on its own: callers
//! pass [`Silent`] unless they decided a bar belongs on a terminal.

/// Told how many logs are about to be checked and when each is done.
/// Called from the worker threads, hence `Sync`.
pub trait Progress: Sync {
    /// `total` more logs are about to be checked.
    fn start(&self, total: usize);
    /// One more log is done.
    fn advance(&self);
    /// The run is over: remove whatever was drawn.
    fn finish(&self);
}

/// Reports nothing.
pub struct Silent;

impl Progress for Silent {
    fn start(&self, _total: usize) {}
    fn advance(&self) {}
    fn finish(&self) {}
}
