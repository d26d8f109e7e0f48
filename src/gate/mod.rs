//! The PR gate: rules from `metrics.toml`, an optional checked-in baseline, one list of check
//! results, and the renderers that turn that list into a terminal table, JUnit XML, GitHub
//! annotations and a step-summary markdown.
//!
//! Evaluation is a pure function over files, so CPU CI exercises the whole gate on fixtures; the
//! exit code is decided by `commands::check` only after every output is written.

pub mod baseline;
pub mod github;
pub mod identity;
pub mod junit;
pub mod markdown;
pub mod rules;
pub mod table;
pub mod verdict;

pub use baseline::Baseline;
pub use rules::{parse_rules, Direction, Directions, Rule, RuleSpec, Severity};
pub use verdict::{evaluate, Check, Report, Verdict};
