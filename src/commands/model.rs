//! `coalprof model EXPR NAME=VALUE…`: the address model on the user's own layout.

use crate::error::{Error, Result};
use crate::exit::Exit;
use crate::model::expr::{analyze_layout, ExprError};
use crate::render::render;
use crate::results::{Provenance, Results, Row, Source};
use crate::settings::{Common, ExprSettings};

pub(crate) fn run(common: &Common, m: &ExprSettings) -> Result<Exit> {
    let p = analyze_layout(&m.expr, &m.bindings, m.element_bytes, m.shared).map_err(|e| expr_error(&m.expr, &e))?;
    let mut params = std::collections::BTreeMap::new();
    for (k, v) in &m.bindings {
        params.insert(k.clone(), serde_json::Value::String(v.clone()));
    }
    params.insert("element_bytes".into(), m.element_bytes.into());
    params.insert("memory".into(), if m.shared { "shared" } else { "global" }.into());
    let mut rows = [Row { params, metrics: p.metrics, notes: p.notes, ..Row::new(m.expr.clone(), Source::Predicted) }];
    common.derivation.apply(&mut rows)?;
    let prov = Provenance {
        coalprof: env!("CARGO_PKG_VERSION").into(),
        backend: crate::results::Backend::Model,
        ..Provenance::default()
    };
    super::print(&render(&Results::new(prov, rows.into()), common.format, &common.style.summarising("model", None))?)?;
    Ok(Exit::Ok)
}

/// The error with the expression under it and a caret at the column (binding errors name the binding).
fn expr_error(expr: &str, e: &ExprError) -> Error {
    match (e.column, &e.context) {
        (Some(col), None) => Error::usage(format!("{e}\n  {expr}\n  {:>width$}", "^", width = col)),
        _ => Error::usage(e.to_string()),
    }
}
