//! A time bound on rule expressions of user rule packs (`--rules DIR`).
//!
//! Fuel bounds the instructions minijinja executes, but not every loop it
//! runs for us: a sequence repeated lazily (`[1] * 10**15`) and then
//! searched with `in` iterates without spending fuel. Once armed, a
//! watchdog thread calls the caller's `on_timeout` when an expression
//! evaluation is in flight and no evaluation has finished for `limit` (the
//! command line prints a message naming the rule source and exits 2: a
//! runaway evaluation cannot be cancelled from outside). The built-in packs are never that slow, so it is armed only for
//! user packs, and costs the built-in path one relaxed atomic load per
//! evaluation.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

static ARMED: AtomicBool = AtomicBool::new(false);
static IN_FLIGHT: AtomicUsize = AtomicUsize::new(0);
static FINISHED: AtomicU64 = AtomicU64::new(0);

/// How long one evaluation may run with no other finishing: far above any
/// real expression (microseconds), well below what a user would wait for.
pub const LIMIT: Duration = Duration::from_secs(10);

/// Starts the watchdog (once per process); `on_timeout` runs on its thread
/// when an evaluation has been stuck for `limit`, and is expected to end
/// the process.
pub fn arm(limit: Duration, on_timeout: impl FnOnce(Duration) + Send + 'static) {
    if ARMED.swap(true, Ordering::SeqCst) {
        return;
    }
    let spawned = std::thread::Builder::new()
        .name("mlaudit-watchdog".into())
        .spawn(move || {
            let tick = (limit / 20).max(Duration::from_millis(10));
            let mut last = FINISHED.load(Ordering::Relaxed);
            let mut still = Duration::ZERO;
            loop {
                std::thread::sleep(tick);
                let now = FINISHED.load(Ordering::Relaxed);
                if now != last || IN_FLIGHT.load(Ordering::Relaxed) == 0 {
                    last = now;
                    still = Duration::ZERO;
                    continue;
                }
                still += tick;
                if still >= limit {
                    on_timeout(limit);
                    return;
                }
            }
        });
    if spawned.is_err() {
        // Without a thread there is no watchdog; fuel still bounds most
        // expressions.
        ARMED.store(false, Ordering::SeqCst);
    }
}

/// Marks an evaluation in flight while it lives.
pub struct Guard(bool);

impl Guard {
    #[inline]
    pub fn enter() -> Guard {
        if ARMED.load(Ordering::Relaxed) {
            IN_FLIGHT.fetch_add(1, Ordering::Relaxed);
            Guard(true)
        } else {
            Guard(false)
        }
    }
}

impl Drop for Guard {
    #[inline]
    fn drop(&mut self) {
        if self.0 {
            FINISHED.fetch_add(1, Ordering::Relaxed);
            IN_FLIGHT.fetch_sub(1, Ordering::Relaxed);
        }
    }
}
