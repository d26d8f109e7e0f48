//! The comparison's JSON contract: `{"schema", "inputs": [{"label", "gpu", "arch", "path"}],
//! "rows": [{"key", "kernel", "name", "shapes": [shape or null, one per input], "values":
//! [{metric: number} or null, one per input], "kernels": [signature or null, one per input],
//! "matched_by_base_name"}]}`, the first input being the reference. `/2`: user kernels match by
//! function name (`key` is the normalised name), with each input's shape; kernels left unmatched
//! pair by base name where it is unique on each side (`matched_by_base_name`: true; `kernels`
//! then differ in their template arguments). A row missing from an input has `null` there. Bump
//! [`SCHEMA`] on any change that could break a reader (a new field does not).

use serde::Serialize;

use crate::compare::Comparison;
use crate::error::{Error, Result};
use crate::results::Metrics;

pub(crate) const SCHEMA: &str = "coalprof-compare/2";

#[derive(Serialize)]
struct Doc<'a> {
    schema: &'static str,
    inputs: Vec<InputDoc<'a>>,
    rows: Vec<RowDoc<'a>>,
}

#[derive(Serialize)]
struct InputDoc<'a> {
    label: &'a str,
    gpu: Option<&'a str>,
    arch: Option<&'a str>,
    path: &'a str,
}

#[derive(Serialize)]
struct RowDoc<'a> {
    key: &'a str,
    /// The full signature.
    kernel: &'a str,
    /// The bare function name.
    name: &'a str,
    shapes: Vec<Option<&'a str>>,
    values: Vec<Option<&'a Metrics>>,
    /// Each input's full signature.
    kernels: Vec<Option<&'a str>>,
    /// Paired by base name only: the same function, other template arguments.
    matched_by_base_name: bool,
}

pub(crate) fn render(c: &Comparison) -> Result<String> {
    let doc = Doc {
        schema: SCHEMA,
        inputs: (c.inputs.iter())
            .map(|i| InputDoc { label: &i.label, gpu: i.gpu.as_deref(), arch: i.arch.as_deref(), path: &i.path })
            .collect(),
        rows: c
            .rows
            .iter()
            .map(|r| RowDoc {
                key: &r.key,
                kernel: &r.kernel,
                name: &r.name,
                shapes: r.shapes.iter().map(Option::as_deref).collect(),
                values: r.values.iter().map(Option::as_ref).collect(),
                kernels: r.kernels.iter().map(Option::as_deref).collect(),
                matched_by_base_name: r.by_base_name.iter().any(|b| *b),
            })
            .collect(),
    };
    let mut s = serde_json::to_string_pretty(&doc).map_err(|e| Error::encoding("JSON", e))?;
    s.push('\n');
    Ok(s)
}
