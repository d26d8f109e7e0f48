//! The formats of `coalprof compare` ([`crate::compare::Comparison`]): the JSON contract in
//! [`json`], long CSV in [`csv`], the human formats over one grid in [`grid`] (whose cell texts
//! the HTML page, `render/html/compare.rs`, shows too). Chosen in `render::render_compare`.

pub(super) mod csv;
pub(super) mod grid;
pub(super) mod json;
