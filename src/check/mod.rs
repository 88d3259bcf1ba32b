//! Check: one log (or one implementation config) at a time.
//!
//! - [`rules`]: the compliance engine over a log's events, with the rule
//!   packs of `rules/<usage>/<version>/compliance/`;
//! - [`policy`]: closed-division policy signals in logs and configs.

pub mod policy;
pub mod rules;
pub mod runcheck;

/// A map keyed by MLLOG key, looked up once per record and pack run.
///
/// foldhash rather than the standard SipHash: on a v5.0 NVIDIA check these
/// lookups hashed about 400,000 keys, 3% of all instructions with SipHash.
/// The seed is still random per process (`RandomState`), so a log cannot
/// choose keys that collide.
pub type KeyMap<V> = std::collections::HashMap<String, V, foldhash::fast::RandomState>;
