//! A memory bound on rule expressions.
//!
//! Fuel bounds the instructions an expression runs, not the size of what
//! one instruction builds: `'x' * 100000000` is one instruction and 100 MB,
//! `s.x ~ s.x` doubles a string on every event. Two bounds:
//!
//! - [`value_size`]: the approximate size of a value; the engine refuses a
//!   state value larger than [`MAX_STATE_VALUE_BYTES`] (a LOG009 finding
//!   naming the rule; the run exits 2).
//! - [`BoundedAlloc`]: a global allocator (installed by the `mlaudit`
//!   binary) that counts the bytes a thread allocates while it evaluates an
//!   expression ([`Scope`]). When one evaluation holds more than
//!   [`MAX_EVAL_BYTES`], the process stops with exit status 2 and the
//!   expression named, before the allocation is made. Outside an
//!   evaluation it costs one thread-local read per allocation.

use mimalloc::MiMalloc;
use minijinja::value::{Value, ValueKind};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// Most bytes one expression evaluation may hold at once.
pub const MAX_EVAL_BYTES: usize = 64 << 20;
/// Largest value a rule may keep in its pack's state.
pub const MAX_STATE_VALUE_BYTES: usize = 1 << 20;

thread_local! {
    /// Bytes held by the evaluation in progress on this thread.
    static HELD: Cell<isize> = const { Cell::new(0) };
    /// Whether an evaluation is in progress (and counted) on this thread.
    static ACTIVE: Cell<bool> = const { Cell::new(false) };
    /// The source of the expression being evaluated, for the message.
    static SOURCE: Cell<(*const u8, usize)> = const { Cell::new((std::ptr::null(), 0)) };
}

/// Counts allocations while it lives on this thread; `source` names the
/// expression if it is stopped. Nested scopes count into the outer one.
pub struct Scope {
    outer: bool,
}

impl Scope {
    #[inline]
    pub fn enter(source: &str) -> Scope {
        let outer = ACTIVE.with(|a| a.replace(true));
        if !outer {
            HELD.with(|h| h.set(0));
            SOURCE.with(|s| s.set((source.as_ptr(), source.len())));
        }
        Scope { outer }
    }
}

impl Drop for Scope {
    #[inline]
    fn drop(&mut self) {
        if !self.outer {
            ACTIVE.with(|a| a.set(false));
            SOURCE.with(|s| s.set((std::ptr::null(), 0)));
        }
    }
}

/// Records `delta` bytes; stops the process when the evaluation in
/// progress would hold more than [`MAX_EVAL_BYTES`].
#[inline]
fn account(delta: isize) {
    let Ok(true) = ACTIVE.try_with(Cell::get) else {
        return;
    };
    let held = HELD.with(|h| {
        let n = h.get().saturating_add(delta);
        h.set(n);
        n
    });
    if held > MAX_EVAL_BYTES as isize {
        stop();
    }
}

#[cold]
fn stop() -> ! {
    use std::io::Write;
    // No more counting: what follows may allocate.
    ACTIVE.with(|a| a.set(false));
    let (ptr, len) = SOURCE.with(Cell::get);
    // SAFETY: the source string outlives the evaluation that set it, and
    // this runs inside that evaluation.
    let source: &[u8] = if ptr.is_null() {
        b""
    } else {
        unsafe { std::slice::from_raw_parts(ptr, len.min(200)) }
    };
    let shown = String::from_utf8_lossy(source);
    let shown = crate::report::escape::text(&shown);
    let _ = writeln!(
        std::io::stderr(),
        "mlaudit: error: the rule expression `{shown}` builds a value larger than {} MiB (MAX_EVAL_BYTES); stopped",
        MAX_EVAL_BYTES >> 20
    );
    std::process::exit(2);
}

/// mimalloc for small blocks and the system allocator for large ones,
/// counting the bytes of expression evaluations.
///
/// mimalloc rather than the system allocator: a `check` allocates and frees
/// millions of small values (record fields, rule-engine values), and glibc's
/// malloc/free were 16% of the instructions of a v5.0 NVIDIA check
/// (callgrind, one thread: 2,718M in all; 2,423M with mimalloc). Built with
/// `no_thp`: with transparent huge pages the peak RSS of that check doubled
/// (26 MB -> 60 MB); without them it is 29 MB.
///
/// Blocks of [`LARGE`] bytes or more stay with the system allocator: glibc
/// grows them in place (`mremap`) and returns them on free, where mimalloc
/// copies a growing vector into a new block and keeps the old one for a
/// while. `repeat` on two logs of 600,000 points peaked at 99 MB with glibc
/// and 168 MB with mimalloc alone.
pub struct BoundedAlloc;

/// Blocks at least this large go to the system allocator.
pub const LARGE: usize = 256 << 10;

#[inline]
fn large(size: usize) -> bool {
    size >= LARGE
}

// SAFETY: every block is allocated, resized and freed by the allocator its
// size picks (the same size is given back on free and resize); a resize
// that crosses the threshold allocates with the other allocator, copies
// and frees. Counting only reads and writes thread-local cells.
unsafe impl GlobalAlloc for BoundedAlloc {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        account(layout.size() as isize);
        if large(layout.size()) {
            System.alloc(layout)
        } else {
            MiMalloc.alloc(layout)
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        account(layout.size() as isize);
        if large(layout.size()) {
            System.alloc_zeroed(layout)
        } else {
            MiMalloc.alloc_zeroed(layout)
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        account(-(layout.size() as isize));
        if large(layout.size()) {
            System.dealloc(ptr, layout)
        } else {
            MiMalloc.dealloc(ptr, layout)
        }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        account(new_size as isize - layout.size() as isize);
        match (large(layout.size()), large(new_size)) {
            (false, false) => MiMalloc.realloc(ptr, layout, new_size),
            (true, true) => System.realloc(ptr, layout, new_size),
            (was_large, _) => {
                // SAFETY: the caller guarantees `new_size`, rounded up to
                // the alignment, does not overflow (GlobalAlloc::realloc).
                let new_layout = Layout::from_size_align_unchecked(new_size, layout.align());
                let new = if was_large {
                    MiMalloc.alloc(new_layout)
                } else {
                    System.alloc(new_layout)
                };
                if !new.is_null() {
                    std::ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size));
                    if was_large {
                        System.dealloc(ptr, layout)
                    } else {
                        MiMalloc.dealloc(ptr, layout)
                    }
                }
                new
            }
        }
    }
}

/// Approximate bytes of `v` (strings and bytes by length, 16 bytes per
/// other value), counted only up to a little past `cap`: a lazily repeated
/// sequence of 10**15 items costs no more than `cap / 16` steps.
pub fn value_size(v: &Value, cap: usize) -> usize {
    let mut total = 0usize;
    let mut stack = vec![v.clone()];
    while let Some(v) = stack.pop() {
        if total > cap {
            break;
        }
        total += 16;
        match v.kind() {
            ValueKind::String => total += v.as_str().map_or(0, str::len),
            ValueKind::Bytes => total += v.as_bytes().map_or(0, <[u8]>::len),
            ValueKind::Seq | ValueKind::Map | ValueKind::Iterable => {
                if v.len().is_some_and(|n| n.saturating_mul(16) > cap) {
                    return cap.saturating_add(1);
                }
                let Ok(items) = v.try_iter() else { continue };
                for item in items {
                    if total > cap || stack.len() * 16 > cap {
                        return total.max(cap.saturating_add(1));
                    }
                    if v.kind() == ValueKind::Map {
                        if let Ok(value) = v.get_item(&item) {
                            stack.push(value);
                        }
                    }
                    stack.push(item);
                }
            }
            _ => {}
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_grow_with_content_and_stop_at_the_cap() {
        assert!(value_size(&Value::from("x".repeat(1000)), 1 << 20) >= 1000);
        let list = Value::from(vec![Value::from("abc"); 100]);
        let n = value_size(&list, 1 << 20);
        assert!((1600..10_000).contains(&n), "{n}");
        assert!(value_size(&list, 100) > 100);
    }
}
