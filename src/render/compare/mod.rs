//! The formats of `coalprof compare` ([`crate::compare::Comparison`]): the JSON contract in
//! [`json`], long CSV in [`csv`], the human formats over one grid in [`grid`], and the HTML
//! page's model in [`html`] (laid out by `render::html`). Chosen in `render::render_compare`.

pub(super) mod csv;
pub(super) mod grid;
pub(super) mod html;
pub(super) mod json;
