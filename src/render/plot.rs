//! Plots of the built-in patterns as SVG, drawn with `plotters` (text stays SVG `<text>`, so no
//! font files are read and the same results always give the same bytes).
//!
//! - Sweeps (`stride`, `offset`): sectors/request against the parameter (`<pattern>.svg`), and
//!   useful bandwidth in GB/s against it when any row has one (`<pattern>-bandwidth.svg`).
//!   Measured values are dots, the model's prediction a line, the ideal a grey line.
//! - `reuse`: DRAM bytes (read + written) of one attention pass against the sequence length S on
//!   log–log axes (`reuse.svg`): naive (its three kernels summed per S) and flash, measured dots
//!   beside the predicted lines; a doubling of S is one step right, ×4 two decades in … ×2.
//! - Every other pattern: horizontal bars of the headline metric per variant (`<pattern>.svg`):
//!   sectors/request, or shared wavefronts/instruction for `bank-conflicts`; measured and
//!   predicted side by side when both exist, the variant's ideal as a dark tick.
//!
//! [`plot_files`] names the files without drawing them, so the markdown report can link them.

use std::ops::Range;

use plotters::chart::MeshStyle;
use plotters::coord::ranged1d::{KeyPointHint, NoDefaultFormatting, ValueFormatter};
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::columns::{groups, label};
use crate::error::{Error, Result};
use crate::names::safe_name;
use crate::results::{Results, Row, Source};

/// Size of every plot, in pixels.
pub(super) const SIZE: (u32, u32) = (640, 400);

const MEASURED: RGBColor = RGBColor(31, 119, 180);
const PREDICTED: RGBColor = RGBColor(255, 127, 14);
const IDEAL: RGBColor = RGBColor(90, 90, 90);
const GRID: RGBColor = RGBColor(225, 225, 225);
const FONT: &str = "sans-serif";

/// The house style of every chart's mesh: the fonts of axis titles and labels, white minor
/// lines and grey major ones.
fn house_mesh<'m, 'a, 'b, X: Ranged, Y: Ranged, DB: DrawingBackend>(
    mesh: &'m mut MeshStyle<'a, 'b, X, Y, DB>,
) -> &'m mut MeshStyle<'a, 'b, X, Y, DB> {
    mesh.axis_desc_style((FONT, 16)).label_style((FONT, 15)).light_line_style(WHITE).bold_line_style(GRID)
}

const SECTORS: &str = "global_load_sectors_per_request";
const SECTORS_IDEAL: &str = "global_load_ideal_sectors_per_request";
const WAVEFRONTS: &str = "shared_load_wavefronts_per_instruction";
const WAVEFRONTS_IDEAL: &str = "shared_load_ideal_wavefronts_per_instruction";
const BANDWIDTH: &str = "useful_bandwidth";
const DRAM_BYTES: &str = "dram_bytes";

const NAIVE: RGBColor = RGBColor(214, 39, 40);
const FLASH: RGBColor = RGBColor(44, 160, 44);

/// One plot: its file name in a run folder and its SVG text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Plot {
    pub pattern: String,
    pub file: String,
    pub svg: String,
}

/// What a plot shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// The headline metric: against the parameter for sweeps, per variant otherwise.
    Headline,
    /// Useful bandwidth against the parameter (sweeps only).
    Bandwidth,
}

/// A sweep pattern's parameter and how its axis is drawn.
struct Sweep {
    param: &'static str,
    log2: bool,
    axis: &'static str,
}

fn sweep(pattern: &str) -> Option<Sweep> {
    match pattern {
        "stride" => {
            Some(Sweep { param: "stride", log2: true, axis: "stride between neighbouring lanes (floats, log2 axis)" })
        }
        "offset" => {
            Some(Sweep { param: "offset", log2: false, axis: "offset of the first element (floats, 4 B each)" })
        }
        _ => None,
    }
}

/// The headline metric of a pattern: key, its ideal's key, axis label, and a short name.
fn headline(pattern: &str) -> (&'static str, &'static str, &'static str, &'static str) {
    if pattern == "bank-conflicts" {
        (WAVEFRONTS, WAVEFRONTS_IDEAL, "shared wavefronts / load instruction", "shared wavefronts per load")
    } else {
        (SECTORS, SECTORS_IDEAL, "global load sectors / request (32 B sectors)", "load sectors per request")
    }
}

/// The measured value of `key` on `r`, if it was measured.
fn measured(r: &Row, key: &str) -> Option<f64> {
    (r.source != Source::Predicted).then(|| r.metric(key)).flatten().filter(|v| v.is_finite())
}

/// The model's value of `key` for `r`: the row itself when predicted, its `predicted` map else.
fn predicted(r: &Row, key: &str) -> Option<f64> {
    match r.source {
        Source::Predicted => r.metric(key),
        Source::Measured | Source::Simulated => r.predicted.as_ref().and_then(|p| p.get(key).copied()),
    }
    .filter(|v| v.is_finite())
}

/// Either value of `key` (the ideal is the same number whichever side carries it).
fn any(r: &Row, key: &str) -> Option<f64> {
    r.metric(key).or_else(|| predicted(r, key)).filter(|v| v.is_finite())
}

fn has(rows: &[&Row], key: &str) -> bool {
    rows.iter().any(|r| measured(r, key).is_some() || predicted(r, key).is_some())
}

fn param(r: &Row, name: &str) -> Option<f64> {
    r.params.get(name).and_then(serde_json::Value::as_f64)
}

/// The plots a pattern's rows make, in order.
fn kinds(pattern: &str, rows: &[&Row]) -> Vec<Kind> {
    let mut out = Vec::new();
    match sweep(pattern) {
        Some(s) => {
            let swept: Vec<&Row> =
                rows.iter().copied().filter(|r| param(r, s.param).is_some_and(|x| !s.log2 || x > 0.0)).collect();
            if has(&swept, SECTORS) {
                out.push(Kind::Headline);
            }
            if has(&swept, BANDWIDTH) {
                out.push(Kind::Bandwidth);
            }
        }
        None if pattern == "reuse" => {
            if has(rows, DRAM_BYTES) {
                out.push(Kind::Headline);
            }
        }
        None => {
            if has(rows, headline(pattern).0) {
                out.push(Kind::Headline);
            }
        }
    }
    out
}

fn file_name(pattern: &str, kind: Kind) -> String {
    let base = safe_name(pattern);
    match kind {
        Kind::Headline => format!("{base}.svg"),
        Kind::Bandwidth => format!("{base}-bandwidth.svg"),
    }
}

/// The plot files `results` makes, per pattern in the order of the rows: `stride.svg`,
/// `stride-bandwidth.svg`, `kv-layout.svg`. User kernels (no pattern) have none.
pub(crate) fn plot_files(results: &Results) -> Vec<(String, Vec<String>)> {
    groups(results)
        .into_iter()
        .filter_map(|(p, rows)| {
            let p = p?;
            let files: Vec<String> = kinds(p, &rows).into_iter().map(|k| file_name(p, k)).collect();
            (!files.is_empty()).then(|| (p.to_string(), files))
        })
        .collect()
}

/// Draw every plot of `results` (the files of [`plot_files`], in the same order).
pub(crate) fn plots(results: &Results) -> Result<Vec<Plot>> {
    let mut out = Vec::new();
    for (p, rows) in groups(results) {
        let Some(p) = p else { continue };
        for kind in kinds(p, &rows) {
            let file = file_name(p, kind);
            let svg = draw(p, &rows, kind).map_err(|e| Error::write(&file, e))?;
            out.push(Plot { pattern: p.to_string(), file, svg });
        }
    }
    Ok(out)
}

/// A drawing's failure is the plot file's write error (plotters' SVG backend writes into a string).
type DrawResult<T> = std::result::Result<T, std::io::Error>;

fn draw(pattern: &str, rows: &[&Row], kind: Kind) -> DrawResult<String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(drawing)?;
        match (sweep(pattern), kind) {
            (Some(s), _) => draw_sweep(&root, pattern, &s, rows, kind)?,
            (None, _) if pattern == "reuse" => draw_reuse(&root, rows)?,
            (None, _) => draw_bars(&root, pattern, rows)?,
        }
        root.present().map_err(drawing)?;
    }
    Ok(svg)
}

fn drawing(e: impl std::fmt::Display) -> std::io::Error {
    std::io::Error::other(e.to_string())
}

/// What the values are: the words in every title.
fn provenance(has_measured: bool, has_predicted: bool) -> &'static str {
    match (has_measured, has_predicted) {
        (true, true) => "measured vs predicted",
        (true, false) => "measured",
        _ => "predicted by the address model",
    }
}

/// A legend entry's swatch.
#[derive(Clone, Copy)]
enum Swatch {
    Dot(RGBColor),
    Line(RGBColor),
    Bar(RGBColor),
    Tick(RGBColor),
}

/// The title, then a legend row under it (outside the plot, so it never covers data); returns
/// the area left for the chart.
fn frame<'a>(
    root: &DrawingArea<SVGBackend<'a>, Shift>,
    title: &str,
    legend: &[(String, Swatch)],
) -> DrawResult<DrawingArea<SVGBackend<'a>, Shift>> {
    let body = root.titled(title, (FONT, 19).into_font().color(&BLACK)).map_err(drawing)?;
    let (strip, body) = body.split_vertically(22);
    let font = (FONT, 15).into_font().color(&BLACK).pos(Pos::new(HPos::Left, VPos::Center));
    // Right-aligned, estimating 6.6 px per character (plotters draws a size-15 font at 12 px).
    let widths: Vec<i32> = legend.iter().map(|(l, _)| 24 + (6.6 * l.chars().count() as f64) as i32 + 18).collect();
    let mut x = SIZE.0 as i32 - 12 - widths.iter().sum::<i32>();
    let y = 10;
    for ((label, swatch), w) in legend.iter().zip(&widths) {
        match *swatch {
            Swatch::Dot(c) => strip.draw(&Circle::new((x + 9, y), 4, c.filled())),
            Swatch::Line(c) => strip.draw(&PathElement::new(vec![(x, y), (x + 18, y)], c.stroke_width(2))),
            Swatch::Bar(c) => strip.draw(&Rectangle::new([(x + 2, y - 5), (x + 16, y + 5)], c.filled())),
            Swatch::Tick(c) => strip.draw(&PathElement::new(vec![(x + 9, y - 7), (x + 9, y + 7)], c.stroke_width(2))),
        }
        .map_err(drawing)?;
        strip.draw(&Text::new(label.clone(), (x + 24, y), font.clone())).map_err(drawing)?;
        x += w;
    }
    Ok(body)
}

/// A number as people read it on an axis or a bar: `4`, `4.5`, `0.25`, `1200`.
fn num(v: f64) -> String {
    if v == 0.0 {
        return "0".into();
    }
    let s = if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    };
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// The top of a value axis that starts at 0: a little above the largest value.
fn top(values: impl Iterator<Item = f64>) -> f64 {
    let max = values.fold(0.0_f64, f64::max);
    if max > 0.0 {
        max * 1.12
    } else {
        1.0
    }
}

/// An axis whose ticks and labels are given: the swept values (`1 2 4 … 128` on a log2 axis,
/// not plotters' own choice of round numbers) or the variants' names at their bars.
struct Keyed<R> {
    inner: R,
    ticks: Vec<(f64, String)>,
}

impl<R: Ranged<ValueType = f64>> Ranged for Keyed<R> {
    type FormatOption = NoDefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        self.inner.map(value, limit)
    }

    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        // Only bold ticks: a light grid line between variants would read as a bar edge.
        if hint.weight().allow_light_points() {
            return Vec::new();
        }
        self.ticks.iter().map(|t| t.0).collect()
    }

    fn range(&self) -> Range<f64> {
        self.inner.range()
    }
}

impl<R: Ranged<ValueType = f64>> ValueFormatter<f64> for Keyed<R> {
    fn format_ext(&self, value: &f64) -> String {
        self.ticks.iter().find(|t| t.0 == *value).map(|t| t.1.clone()).unwrap_or_default()
    }
}

fn draw_sweep(
    root: &DrawingArea<SVGBackend<'_>, Shift>,
    pattern: &str,
    s: &Sweep,
    rows: &[&Row],
    kind: Kind,
) -> DrawResult<()> {
    let (key, scale, y_desc, what) = match kind {
        Kind::Headline => (SECTORS, 1.0, "global load sectors / request (32 B sectors)", "load sectors per request"),
        Kind::Bandwidth => (BANDWIDTH, 1e-9, "useful bandwidth (GB/s)", "useful bandwidth"),
    };
    let mut pts: Vec<(f64, Option<f64>, Option<f64>)> = rows
        .iter()
        .filter_map(|r| {
            let x = param(r, s.param).filter(|x| !s.log2 || *x > 0.0)?;
            Some((x, measured(r, key).map(|v| v * scale), predicted(r, key).map(|v| v * scale)))
        })
        .collect();
    pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    let meas: Vec<(f64, f64)> = pts.iter().filter_map(|(x, m, _)| m.map(|m| (*x, m))).collect();
    let pred: Vec<(f64, f64)> = pts.iter().filter_map(|(x, _, p)| p.map(|p| (*x, p))).collect();
    // The ideal, when every row shares one (4 sectors for the 4-byte loads of a sweep).
    let ideal = match kind {
        Kind::Headline => {
            let ideals: Vec<f64> = rows.iter().filter_map(|r| any(r, SECTORS_IDEAL)).collect();
            ideals.first().copied().filter(|i| ideals.iter().all(|j| j == i))
        }
        Kind::Bandwidth => None,
    };

    let mut legend = Vec::new();
    if !meas.is_empty() {
        legend.push(("measured".to_string(), Swatch::Dot(MEASURED)));
    }
    if !pred.is_empty() {
        legend.push(("predicted (address model)".to_string(), Swatch::Line(PREDICTED)));
    }
    if let Some(i) = ideal {
        legend.push((format!("ideal ({})", num(i)), Swatch::Line(IDEAL)));
    }
    let title = format!("{pattern}: {what} ({})", provenance(!meas.is_empty(), !pred.is_empty()));
    let body = frame(root, &title, &legend)?;

    let xs: Vec<f64> = {
        let mut v: Vec<f64> = pts.iter().map(|p| p.0).collect();
        v.dedup();
        v
    };
    let (lo, hi) = (xs.first().copied().unwrap_or(0.0), xs.last().copied().unwrap_or(1.0));
    let ymax = top(meas.iter().chain(&pred).map(|p| p.1).chain(ideal));
    let y_fmt = |v: &f64| num(*v);
    let ticks: Vec<(f64, String)> = xs.iter().map(|x| (*x, num(*x))).collect();

    let mut builder = ChartBuilder::on(&body);
    builder.margin_left(8).margin_right(24).margin_top(6).margin_bottom(6).x_label_area_size(44).y_label_area_size(62);

    macro_rules! plot_on {
        ($chart:expr) => {{
            let mut chart = $chart;
            house_mesh(chart.configure_mesh().x_desc(s.axis).y_desc(y_desc).y_label_formatter(&y_fmt))
                .draw()
                .map_err(drawing)?;
            if let Some(i) = ideal {
                chart
                    .draw_series(std::iter::once(PathElement::new(vec![(lo, i), (hi, i)], IDEAL.stroke_width(1))))
                    .map_err(drawing)?;
            }
            if !pred.is_empty() {
                chart.draw_series(LineSeries::new(pred.iter().copied(), PREDICTED.stroke_width(2))).map_err(drawing)?;
                chart
                    .draw_series(pred.iter().map(|&p| TriangleMarker::new(p, 4, PREDICTED.filled())))
                    .map_err(drawing)?;
            }
            if !meas.is_empty() {
                chart.draw_series(meas.iter().map(|&p| Circle::new(p, 5, MEASURED.filled()))).map_err(drawing)?;
            }
        }};
    }

    if s.log2 {
        let chart = builder
            .build_cartesian_2d(
                Keyed { inner: LogCoord::from((lo / 1.3..hi * 1.3).log_scale().base(2.0)), ticks },
                0.0..ymax,
            )
            .map_err(drawing)?;
        plot_on!(chart);
    } else {
        let pad = ((hi - lo) * 0.04).max(0.5);
        let chart = builder
            .build_cartesian_2d(Keyed { inner: RangedCoordf64::from(lo - pad..hi + pad), ticks }, 0.0..ymax)
            .map_err(drawing)?;
        plot_on!(chart);
    }
    Ok(())
}

/// A byte count as an axis reads it: `64 MB`, `1 GB`, `200 kB` (powers of 1000).
fn bytes_label(v: f64) -> String {
    let (scale, unit) =
        [(1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "kB")].into_iter().find(|(s, _)| v >= *s).unwrap_or((1.0, "B"));
    format!("{} {unit}", num(v / scale))
}

/// Tick values of a log axis over `lo..hi`: the powers of ten, with 2 and 5 times them when
/// fewer than three powers fall inside.
fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let (a, b) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
    let pick = |ms: &[f64]| -> Vec<f64> {
        (a..=b).flat_map(|e| ms.iter().map(move |m| m * 10f64.powi(e))).filter(|v| *v >= lo && *v <= hi).collect()
    };
    let powers = pick(&[1.0]);
    if powers.len() >= 3 {
        powers
    } else {
        pick(&[1.0, 2.0, 5.0])
    }
}

/// The DRAM bytes of one attention pass per sequence length, for `side` (measured or
/// predicted): flash's row, or the sum of naive's three kernels when all three have a value.
fn attention_points(rows: &[&Row], flash: bool, side: fn(&Row, &str) -> Option<f64>) -> Vec<(f64, f64)> {
    let mut by_seq: Vec<(f64, f64, usize)> = Vec::new();
    for r in rows {
        let step = r.params.get("step").and_then(serde_json::Value::as_str);
        let is_flash = step == Some("flash");
        let (Some(seq), Some(bytes)) = (param(r, "seq_len"), side(r, DRAM_BYTES)) else { continue };
        if step.is_none() || is_flash != flash {
            continue;
        }
        match by_seq.iter_mut().find(|p| p.0 == seq) {
            Some(p) => {
                p.1 += bytes;
                p.2 += 1;
            }
            None => by_seq.push((seq, bytes, 1)),
        }
    }
    let kernels = if flash { 1 } else { 3 };
    let mut pts: Vec<(f64, f64)> = by_seq.into_iter().filter(|p| p.2 == kernels).map(|p| (p.0, p.1)).collect();
    pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    pts
}

fn draw_reuse(root: &DrawingArea<SVGBackend<'_>, Shift>, rows: &[&Row]) -> DrawResult<()> {
    let series = [
        ("naive (3 kernels)", NAIVE, attention_points(rows, false, measured), attention_points(rows, false, predicted)),
        ("flash (1 kernel)", FLASH, attention_points(rows, true, measured), attention_points(rows, true, predicted)),
    ];
    let has_m = series.iter().any(|s| !s.2.is_empty());
    let has_p = series.iter().any(|s| !s.3.is_empty());
    let mut legend: Vec<(String, Swatch)> = (series.iter())
        .filter(|s| !s.2.is_empty() || !s.3.is_empty())
        .map(|s| (s.0.to_string(), if s.3.is_empty() { Swatch::Dot(s.1) } else { Swatch::Line(s.1) }))
        .collect();
    if has_m && has_p {
        legend.push(("measured".to_string(), Swatch::Dot(IDEAL)));
    }
    let title = format!("reuse: DRAM bytes of one attention pass ({})", provenance(has_m, has_p));
    let body = frame(root, &title, &legend)?;

    let all: Vec<(f64, f64)> = series.iter().flat_map(|s| s.2.iter().chain(&s.3).copied()).collect();
    let mut xs: Vec<f64> = all.iter().map(|p| p.0).collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    let (xlo, xhi) = (xs.first().copied().unwrap_or(1.0), xs.last().copied().unwrap_or(2.0));
    let ylo = all.iter().map(|p| p.1).fold(f64::INFINITY, f64::min).max(1.0);
    let yhi = all.iter().map(|p| p.1).fold(0.0, f64::max).max(ylo * 2.0);
    let (ylo, yhi) = (ylo / 2.0, yhi * 2.0);
    let xticks: Vec<(f64, String)> = xs.iter().map(|x| (*x, num(*x))).collect();
    let yticks: Vec<(f64, String)> = log_ticks(ylo, yhi).into_iter().map(|v| (v, bytes_label(v))).collect();

    let mut chart = ChartBuilder::on(&body)
        .margin_left(8)
        .margin_right(24)
        .margin_top(6)
        .margin_bottom(6)
        .x_label_area_size(44)
        .y_label_area_size(78)
        .build_cartesian_2d(
            Keyed { inner: LogCoord::from((xlo / 1.3..xhi * 1.3).log_scale().base(2.0)), ticks: xticks },
            Keyed { inner: LogCoord::from((ylo..yhi).log_scale()), ticks: yticks },
        )
        .map_err(drawing)?;
    house_mesh(
        chart.configure_mesh().x_desc("sequence length S (log2 axis)").y_desc("DRAM bytes, read + written (log axis)"),
    )
    .draw()
    .map_err(drawing)?;
    for (_, color, meas, pred) in &series {
        if !pred.is_empty() {
            chart.draw_series(LineSeries::new(pred.iter().copied(), color.stroke_width(2))).map_err(drawing)?;
            chart.draw_series(pred.iter().map(|&p| TriangleMarker::new(p, 4, color.filled()))).map_err(drawing)?;
        }
        chart.draw_series(meas.iter().map(|&p| Circle::new(p, 5, color.filled()))).map_err(drawing)?;
    }
    Ok(())
}

/// One bar group: the row's label, its measured and predicted values, and its ideal.
type Bar = (String, Option<f64>, Option<f64>, Option<f64>);

fn draw_bars(root: &DrawingArea<SVGBackend<'_>, Shift>, pattern: &str, rows: &[&Row]) -> DrawResult<()> {
    let (key, ideal_key, axis, what) = headline(pattern);
    let bars: Vec<Bar> = rows
        .iter()
        .map(|r| (label(r), measured(r, key), predicted(r, key), any(r, ideal_key)))
        .filter(|b| b.1.is_some() || b.2.is_some())
        .collect();
    let (has_m, has_p) = (bars.iter().any(|b| b.1.is_some()), bars.iter().any(|b| b.2.is_some()));
    let has_ideal = bars.iter().any(|b| b.3.is_some());

    let mut legend = Vec::new();
    if has_m {
        legend.push(("measured".to_string(), Swatch::Bar(MEASURED)));
    }
    if has_p {
        legend.push(("predicted (address model)".to_string(), Swatch::Bar(PREDICTED)));
    }
    if has_ideal {
        legend.push(("ideal".to_string(), Swatch::Tick(IDEAL)));
    }
    let title = format!("{pattern}: {what} ({})", provenance(has_m, has_p));
    let body = frame(root, &title, &legend)?;

    let n = bars.len();
    // The first variant on top: variant i sits in the band [n-1-i, n-i).
    let band = |i: usize| (n - 1 - i) as f64;
    let names: Vec<String> = bars.iter().map(|b| b.0.clone()).collect();
    let longest = names.iter().map(|s| s.chars().count()).max().unwrap_or(4) as u32;
    let xmax = top(bars.iter().flat_map(|b| [b.1, b.2, b.3]).flatten()) * 1.08;
    let ticks: Vec<(f64, String)> = names.iter().enumerate().map(|(i, name)| (band(i) + 0.5, name.clone())).collect();
    let x_fmt = |v: &f64| num(*v);
    // Room for at least four bands, the bars centred: one or two variants get bars of the
    // usual thickness instead of slabs filling the plot.
    let pad = (4usize.saturating_sub(n)) as f64 / 2.0;

    let mut chart = ChartBuilder::on(&body)
        .margin_left(8)
        .margin_right(20)
        .margin_top(6)
        .margin_bottom(6)
        .x_label_area_size(44)
        .y_label_area_size((longest * 7 + 20).clamp(60, 250))
        .build_cartesian_2d(0.0..xmax, Keyed { inner: RangedCoordf64::from(-pad..n as f64 + pad), ticks })
        .map_err(drawing)?;
    house_mesh(chart.configure_mesh().x_desc(axis).x_label_formatter(&x_fmt).disable_y_mesh())
        .draw()
        .map_err(drawing)?;

    // Two bars share a band when both sides exist: measured above, predicted below.
    let both = has_m && has_p;
    let value_font = (FONT, 14).into_font().color(&BLACK).pos(Pos::new(HPos::Left, VPos::Center));
    for (i, (_, m, p, ideal)) in bars.iter().enumerate() {
        let b = band(i);
        let slots: Vec<(Option<f64>, RGBColor, f64, f64)> = if both {
            vec![(*m, MEASURED, b + 0.5, b + 0.88), (*p, PREDICTED, b + 0.12, b + 0.5)]
        } else if has_m {
            vec![(*m, MEASURED, b + 0.15, b + 0.85)]
        } else {
            vec![(*p, PREDICTED, b + 0.15, b + 0.85)]
        };
        for (v, color, y0, y1) in slots {
            let Some(v) = v else { continue };
            chart
                .draw_series(std::iter::once(Rectangle::new([(0.0, y0), (v, y1)], color.filled())))
                .map_err(drawing)?;
            chart
                .draw_series(std::iter::once(
                    EmptyElement::at((v, (y0 + y1) / 2.0)) + Text::new(num(v), (5, 0), value_font.clone()),
                ))
                .map_err(drawing)?;
        }
        if let Some(t) = ideal {
            chart
                .draw_series(std::iter::once(PathElement::new(
                    vec![(*t, b + 0.04), (*t, b + 0.96)],
                    IDEAL.stroke_width(2),
                )))
                .map_err(drawing)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde_json::json;

    use super::*;
    use crate::results::{Metrics, Provenance};

    fn row(
        pattern: &str,
        variant: &str,
        params: &[(&str, serde_json::Value)],
        source: Source,
        metrics: &[(&str, f64)],
        predicted: Option<&[(&str, f64)]>,
    ) -> Row {
        let m = |pairs: &[(&str, f64)]| pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect::<Metrics>();
        Row {
            pattern: Some(pattern.into()),
            variant: Some(variant.into()),
            params: params.iter().map(|(k, v)| (k.to_string(), v.clone())).collect::<BTreeMap<_, _>>(),
            metrics: m(metrics),
            predicted: predicted.map(m),
            ..Row::new(format!("{pattern}_kernel"), source)
        }
    }

    /// A stride sweep as the model predicts it.
    pub(crate) fn model_stride() -> Results {
        let rows = [1u32, 2, 4, 8, 16, 32]
            .iter()
            .map(|&s| {
                let spr = f64::from((4 * s).min(32));
                row(
                    "stride",
                    &format!("stride_{s}"),
                    &[("stride", json!(s))],
                    Source::Predicted,
                    &[(SECTORS, spr), (SECTORS_IDEAL, 4.0)],
                    None,
                )
            })
            .collect();
        Results::new(Provenance { backend: crate::results::Backend::Model, ..Provenance::default() }, rows)
    }

    /// Measured rows with the model's prediction beside them, for a sweep and a comparison.
    pub(crate) fn measured_and_predicted() -> Results {
        let mut rows: Vec<Row> = [1u32, 2, 4, 8, 16, 32, 64, 128]
            .iter()
            .map(|&s| {
                let spr = f64::from((4 * s).min(32));
                let bw = 3.9e12 / f64::from(s.min(8));
                row(
                    "stride",
                    &format!("stride_{s}"),
                    &[("stride", json!(s))],
                    Source::Measured,
                    &[(SECTORS, spr + if s == 2 { 0.4 } else { 0.0 }), (SECTORS_IDEAL, 4.0), (BANDWIDTH, bw * 0.93)],
                    Some(&[(SECTORS, spr), (SECTORS_IDEAL, 4.0), (BANDWIDTH, bw)]),
                )
            })
            .collect();
        for (v, layout, dtype, m, p) in [
            ("nhd_fp16", "NHD", "fp16", 2.0, 2.0),
            ("hnd_fp16", "HND", "fp16", 2.0, 2.0),
            ("hdn_fp16", "HDN", "fp16", 31.5, 32.0),
            ("hdn_fp32", "HDN", "fp32", 32.0, 32.0),
            ("vllm_fp16", "vLLM", "fp16", 2.1, 2.0),
        ] {
            rows.push(row(
                "kv-layout",
                v,
                &[("layout", json!(layout)), ("dtype", json!(dtype))],
                Source::Measured,
                &[(SECTORS, m), (SECTORS_IDEAL, 2.0)],
                Some(&[(SECTORS, p), (SECTORS_IDEAL, 2.0)]),
            ));
        }
        let prov = Provenance {
            backend: crate::results::Backend::Ncu,
            gpu: Some("NVIDIA H200".into()),
            ..Provenance::default()
        };
        Results::new(prov, rows)
    }

    /// The contents of the SVG's `<text>` elements, trimmed.
    fn texts(svg: &str) -> Vec<String> {
        svg.split("<text")
            .skip(1)
            .map(|t| t[t.find('>').unwrap() + 1..t.find("</text>").unwrap()].trim().to_string())
            .collect()
    }

    fn count(svg: &str, text: &str) -> usize {
        texts(svg).iter().filter(|t| *t == text).count()
    }

    /// The plot `file` of `results`; with `COALPROF_PLOT_DIR` set, every plot is also written
    /// there (`<dir>/<test>-<file>`) to be looked at.
    #[allow(clippy::disallowed_methods)] // a test's debugging aid: where to drop the SVGs to look at
    fn svg_of(results: &Results, file: &str) -> String {
        let all = plots(results).unwrap();
        if let Ok(dir) = std::env::var("COALPROF_PLOT_DIR") {
            let test = std::thread::current().name().unwrap_or("test").rsplit("::").next().unwrap().to_string();
            for p in &all {
                std::fs::write(std::path::Path::new(&dir).join(format!("{test}-{}", p.file)), &p.svg).unwrap();
            }
        }
        all.into_iter().find(|p| p.file == file).unwrap_or_else(|| panic!("no {file}")).svg
    }

    #[test]
    fn a_stride_sweep_has_title_axis_labels_and_one_point_per_variant() {
        let r = model_stride();
        assert_eq!(plot_files(&r), vec![("stride".to_string(), vec!["stride.svg".to_string()])]);
        let svg = svg_of(&r, "stride.svg");
        assert!(svg.starts_with("<svg"), "{svg}");
        assert_eq!(count(&svg, "stride: load sectors per request (predicted by the address model)"), 1, "{svg}");
        assert_eq!(count(&svg, "stride between neighbouring lanes (floats, log2 axis)"), 1, "{svg}");
        assert_eq!(count(&svg, "global load sectors / request (32 B sectors)"), 1, "{svg}");
        // One marker per variant (triangles are polygons), one tick label per stride.
        assert_eq!(svg.matches("<polygon").count(), 6, "{svg}");
        for s in ["1", "2", "4", "8", "16", "32"] {
            assert_eq!(count(&svg, s), 1, "tick {s}: {:?}", texts(&svg));
        }
        assert_eq!(count(&svg, "ideal (4)"), 1, "{svg}");
    }

    #[test]
    fn measured_points_sit_beside_the_predicted_line() {
        let r = measured_and_predicted();
        let files = plot_files(&r);
        assert_eq!(files[0].1, vec!["stride.svg", "stride-bandwidth.svg"]);
        assert_eq!(files[1].1, vec!["kv-layout.svg"]);
        let svg = svg_of(&r, "stride.svg");
        assert_eq!(count(&svg, "stride: load sectors per request (measured vs predicted)"), 1, "{svg}");
        assert_eq!(count(&svg, "measured") + count(&svg, "predicted (address model)"), 2, "the legend names both");
        assert_eq!(svg.matches("<circle").count(), 8 + 1, "8 measured dots and the legend's");
        assert_eq!(svg.matches("<polygon").count(), 8, "8 predicted markers");
        let bw = svg_of(&r, "stride-bandwidth.svg");
        assert_eq!(
            count(&bw, "useful bandwidth (GB/s)") + count(&bw, "stride: useful bandwidth (measured vs predicted)"),
            2,
            "{bw}"
        );
    }

    #[test]
    fn layouts_are_bars_per_variant_measured_beside_predicted() {
        let r = measured_and_predicted();
        let svg = svg_of(&r, "kv-layout.svg");
        assert_eq!(count(&svg, "kv-layout: load sectors per request (measured vs predicted)"), 1, "{svg}");
        for v in ["nhd_fp16", "hnd_fp16", "hdn_fp16", "hdn_fp32", "vllm_fp16"] {
            assert_eq!(count(&svg, v), 1, "{v}");
        }
        // Value labels on the bars: hdn_fp16 measured 31.5 beside the predicted 32.
        assert_eq!(count(&svg, "31.5"), 1, "{:?}", texts(&svg));
        assert_eq!(count(&svg, "2.1"), 1, "{:?}", texts(&svg));
        assert_eq!(svg.matches("<rect").count(), 1 + 5 * 2 + 2, "background, 5 variants x 2 bars, 2 legend swatches");
    }

    #[test]
    fn bank_conflicts_plot_shared_wavefronts() {
        let rows = vec![
            row(
                "bank-conflicts",
                "column_32x32",
                &[],
                Source::Predicted,
                &[(WAVEFRONTS, 32.0), (WAVEFRONTS_IDEAL, 1.0)],
                None,
            ),
            row(
                "bank-conflicts",
                "column_32x33",
                &[],
                Source::Predicted,
                &[(WAVEFRONTS, 1.0), (WAVEFRONTS_IDEAL, 1.0)],
                None,
            ),
        ];
        let r = Results::new(Provenance::default(), rows);
        let svg = svg_of(&r, "bank-conflicts.svg");
        assert_eq!(count(&svg, "shared wavefronts / load instruction"), 1, "{svg}");
        assert_eq!(
            count(&svg, "bank-conflicts: shared wavefronts per load (predicted by the address model)"),
            1,
            "{svg}"
        );
    }

    #[test]
    fn same_results_same_bytes_and_no_plot_without_a_pattern() {
        let r = measured_and_predicted();
        assert_eq!(plots(&r).unwrap(), plots(&r).unwrap());
        let mut user = row("x", "y", &[], Source::Measured, &[(SECTORS, 4.0)], None);
        user.pattern = None;
        assert!(plot_files(&Results::new(Provenance::default(), vec![user])).is_empty());
    }

    /// The `reuse` rows of one attention pass per length, predicted: naive's three kernels
    /// and flash, DRAM bytes from the kernels' arithmetic (16 S^2 + 1024 S, and 1024 S).
    fn model_reuse() -> Results {
        let mut rows = Vec::new();
        for s in [4096u64, 8192, 16384] {
            let total = (16 * s * s + 1024 * s) as f64;
            for (step, share) in [("scores", 0.25), ("softmax", 0.5), ("pv", 0.25)] {
                rows.push(row(
                    "reuse",
                    &format!("naive_s{s}_{step}"),
                    &[("step", json!(step)), ("seq_len", json!(s))],
                    Source::Predicted,
                    &[(DRAM_BYTES, total * share)],
                    None,
                ));
            }
            rows.push(row(
                "reuse",
                &format!("flash_s{s}"),
                &[("step", json!("flash")), ("seq_len", json!(s))],
                Source::Predicted,
                &[(DRAM_BYTES, (1024 * s) as f64)],
                None,
            ));
        }
        rows.push(row("reuse", "direct", &[("staged", json!(false))], Source::Predicted, &[(DRAM_BYTES, 8e9)], None));
        Results::new(Provenance { backend: crate::results::Backend::Model, ..Provenance::default() }, rows)
    }

    #[test]
    fn reuse_plots_dram_bytes_against_the_length_naive_summed_and_flash() {
        let r = model_reuse();
        assert_eq!(plot_files(&r), vec![("reuse".to_string(), vec!["reuse.svg".to_string()])]);
        let svg = svg_of(&r, "reuse.svg");
        let t = texts(&svg);
        assert_eq!(count(&svg, "reuse: DRAM bytes of one attention pass (predicted by the address model)"), 1, "{t:?}");
        assert_eq!(count(&svg, "sequence length S (log2 axis)"), 1, "{t:?}");
        assert_eq!(count(&svg, "naive (3 kernels)") + count(&svg, "flash (1 kernel)"), 2, "{t:?}");
        for s in ["4096", "8192", "16384"] {
            assert_eq!(count(&svg, s), 1, "tick {s}: {t:?}");
        }
        // One point per length and series (naive summed over its kernels), none for `direct`.
        assert_eq!(svg.matches("<polygon").count(), 6, "{svg}");
        // Log axis: decades from the smallest (4 MB for flash at 4096) to the largest (4.3 GB).
        for label in ["10 MB", "100 MB", "1 GB"] {
            assert_eq!(count(&svg, label), 1, "{label}: {t:?}");
        }
        let naive = attention_points(&r.rows.iter().collect::<Vec<_>>(), false, predicted);
        assert_eq!(naive.iter().map(|p| p.0).collect::<Vec<_>>(), [4096.0, 8192.0, 16384.0]);
        assert_eq!(naive[0].1, (16 * 4096 * 4096 + 1024 * 4096) as f64, "the three kernels summed");
    }

    #[test]
    fn byte_labels_and_log_ticks() {
        assert_eq!(bytes_label(1e9), "1 GB");
        assert_eq!(bytes_label(6.4e7), "64 MB");
        assert_eq!(bytes_label(512.0), "512 B");
        assert_eq!(log_ticks(2e6, 9e9), [1e7, 1e8, 1e9]);
        assert_eq!(log_ticks(3e6, 4e7), [5e6, 1e7, 2e7]);
    }

    #[test]
    fn numbers_read_plainly() {
        assert_eq!(num(4.0), "4");
        assert_eq!(num(31.5), "31.5");
        assert_eq!(num(0.25), "0.25");
        assert_eq!(num(3627.0), "3627");
        assert_eq!(num(0.0), "0");
    }
}
