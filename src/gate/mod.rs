//! The PR gate: rules from `metrics.toml`, an optional checked-in baseline, and one list of
//! check results (`Report`). `render/gate/` turns that list into a terminal table, JUnit XML,
//! GitHub annotations and a step-summary markdown; `render::render_check` chooses.
//!
//! Evaluation is a pure function over files, so CPU CI exercises the whole gate on fixtures; the
//! exit code is decided by `commands::check` only after every output is written.

pub(crate) mod baseline;
pub(crate) mod identity;
pub(crate) mod rules;
pub(crate) mod verdict;

pub(crate) use baseline::Baseline;
pub(crate) use rules::compile_rules;
pub use rules::{parse_rules, Rule};
pub(crate) use verdict::{evaluate, Report, Verdict};
