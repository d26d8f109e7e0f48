//! `coalprof compare A B [C…]`: read each input as `check` does, label its column group, match
//! the rows in the frame, and render the comparison. One run whose rows were measured on
//! several GPUs or partitions (`run --gpus`, `run --slurm --partition …`) splits into one
//! column group per GPU, so a single spread run gives the cross-GPU table.

use std::path::Path;

use crate::compare::{shown, Comparison, Input};
use crate::error::{Error, Result};
use crate::exit::Exit;
use crate::frame::side_by_side::side_by_side;
use crate::results::{Results, Row};
use crate::settings::{Common, CompareSettings};

pub(crate) fn run(common: &Common, s: &CompareSettings) -> Result<Exit> {
    let loaded = super::load(common, &s.inputs)?;
    let mut sides: Vec<(Input, Vec<Row>)> = Vec::new();
    for (path, results) in s.inputs.iter().zip(loaded) {
        sides.extend(split(path, results));
    }
    if sides.len() < 2 {
        return Err(Error::usage(
            "compare needs two inputs, or one run measured on several GPUs (`run --gpus`, `--slurm`) or ranks (`profile --per-rank`)",
        ));
    }
    if s.labels.len() > sides.len() {
        return Err(Error::usage(format!(
            "{} `--label`s for {} column groups: give at most one label per input (per GPU of a spread run)",
            s.labels.len(),
            sides.len()
        )));
    }
    for ((input, _), label) in sides.iter_mut().zip(&s.labels) {
        input.label = label.clone();
    }
    let mut inputs: Vec<Input> = sides.iter().map(|(i, _)| i.clone()).collect();
    distinct_labels(&mut inputs);
    let rows: Vec<&[Row]> = sides.iter().map(|(_, r)| r.as_slice()).collect();
    let matched = side_by_side(&rows, s.match_by)?;
    let shown = shown(&matched, &s.metrics, &common.style.columns);
    let comparison = Comparison { inputs, rows: matched, shown };
    super::print(&crate::render::render_compare(&comparison, common.format, &common.style)?)?;
    Ok(Exit::Ok)
}

/// One column group per GPU and per rank of the input (one group when its rows name none or
/// one): ranks of one `profile --per-rank` run side by side, matched by kernel.
fn split(path: &Path, results: Results) -> Vec<(Input, Vec<Row>)> {
    let p = &results.provenance;
    let arch = p.compute_capability.as_ref().map(|_| p.arch());
    let label = match (&p.gpu, &arch) {
        (Some(g), Some(a)) => format!("{g} {a}"),
        (Some(g), None) => g.clone(),
        _ => p.backend.to_string(),
    };
    let whole = Input { label, gpu: p.gpu.clone(), arch, path: path.display().to_string() };
    type Key = (Option<crate::results::Placement>, Option<u32>);
    let mut groups: Vec<(Key, Vec<Row>)> = Vec::new();
    for r in results.rows {
        let place = r.placement.clone().filter(|p| p.label().is_some()).map(|mut p| {
            // The same GPU on two nodes or two GPUs of one model are one column group.
            (p.uuid, p.index, p.node) = (None, None, None);
            p
        });
        let key = (place, r.rank);
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, rows)) => rows.push(r),
            None => groups.push((key, vec![r])),
        }
    }
    if groups.len() <= 1 {
        return vec![(whole, groups.into_iter().flat_map(|(_, r)| r).collect())];
    }
    (groups.into_iter())
        .map(|((place, rank), rows)| {
            let mut input = match place {
                Some(pl) => Input {
                    label: pl.label().unwrap_or_default(),
                    gpu: pl.gpu.clone(),
                    arch: pl.arch.clone(),
                    path: whole.path.clone(),
                },
                None => whole.clone(),
            };
            if let Some(n) = rank {
                input.label = format!("{} rank {n}", input.label);
            }
            (input, rows)
        })
        .collect()
}

/// Labels that would read the same get the input's name (`model (l2-64)`), then a number.
fn distinct_labels(inputs: &mut [Input]) {
    let dup = |inputs: &[Input], i: usize| inputs.iter().filter(|x| x.label == inputs[i].label).count() > 1;
    let marked: Vec<bool> = (0..inputs.len()).map(|i| dup(inputs, i)).collect();
    for (i, m) in marked.into_iter().enumerate() {
        if m {
            let name = run_name(Path::new(&inputs[i].path));
            inputs[i].label = format!("{} ({name})", inputs[i].label);
        }
    }
    let marked: Vec<bool> = (0..inputs.len()).map(|i| dup(inputs, i)).collect();
    for (i, m) in marked.into_iter().enumerate() {
        if m {
            inputs[i].label = format!("{} #{}", inputs[i].label, i + 1);
        }
    }
}

/// A run folder's name, a results.json's folder's name, else the file's name.
fn run_name(path: &Path) -> String {
    let named = if path.file_name().is_some_and(|f| f == "results.json") { path.parent() } else { Some(path) };
    named.and_then(Path::file_name).map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(label: &str, path: &str) -> Input {
        Input { label: label.into(), gpu: None, arch: None, path: path.into() }
    }

    #[test]
    fn labels_that_read_the_same_get_the_run_name_then_a_number() {
        let mut i =
            vec![input("model", "profiles/l2-32"), input("model", "profiles/l2-64/results.json"), input("H200", "x")];
        distinct_labels(&mut i);
        let labels: Vec<&str> = i.iter().map(|i| i.label.as_str()).collect();
        assert_eq!(labels, ["model (l2-32)", "model (l2-64)", "H200"]);
        let mut i = vec![input("model", "a/run"), input("model", "b/run")];
        distinct_labels(&mut i);
        assert_eq!(i[1].label, "model (run) #2");
    }
}
