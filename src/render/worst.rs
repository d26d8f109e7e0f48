//! The worst source lines under a pattern's (or the kernels') table: named in the terminal
//! table, listed with their code in the markdown review.

use crate::results::{Results, WorstLine};
use crate::text::{count, percent, visible};

/// The worst lines belonging to one table: those of `pattern`, or of no pattern.
pub(super) fn of<'a>(results: &'a Results, pattern: Option<&str>) -> Vec<&'a WorstLine> {
    results.worst_lines.iter().filter(|w| w.pattern.as_deref() == pattern).collect()
}

fn who(w: &WorstLine) -> String {
    w.variant.clone().unwrap_or_else(|| crate::results::ranked(&w.kernel, w.rank))
}

/// `kernels/app.cu:5`, and `(inside sm_32_intrinsics.hpp:302)` where the access was made
/// inside a library.
fn place(w: &WorstLine) -> String {
    match &w.via {
        Some(v) => format!("{} (inside {v})", w.location),
        None => w.location.clone(),
    }
}

fn numbers(w: &WorstLine) -> String {
    let mut parts = Vec::new();
    if let Some(s) = w.sectors_per_request {
        let ideal = w.ideal_sectors_per_request.map(|i| format!(" (ideal {i:.1})")).unwrap_or_default();
        parts.push(format!("{s:.1} sectors/request{ideal}"));
    }
    if let Some(e) = w.excess_sectors.filter(|&e| e > 0.0) {
        let share = w.excess_share.map(|s| format!(", {} of the kernel's", percent(s))).unwrap_or_default();
        parts.push(format!("{} excess sectors{share}", count(e)));
    }
    if let Some(n) = w.shared_ways.filter(|&n| n > 1.0) {
        parts.push(format!("{n:.1} shared wavefronts per ideal"));
    }
    parts.join("; ")
}

/// `worst line: stride_8: kernels/stride.cu:20 — 32.0 sectors/request …`, the first per launch,
/// wrapped to `width` (the location elided from the left where it alone would not fit).
pub(super) fn terminal(lines: &[&WorstLine], width: Option<usize>) -> String {
    let mut out = String::new();
    let mut seen = Vec::new();
    for w in lines {
        let key = (w.variant.clone(), w.kernel.clone(), w.rank);
        if seen.contains(&key) {
            continue;
        }
        seen.push(key);
        let place = place(w);
        let location = visible(&place);
        let location = match width {
            Some(width) => crate::text::elide_left(&location, width.saturating_sub(8).max(20)),
            None => location.into_owned(),
        };
        let text = format!("worst line: {}: {location} — {}", visible(&who(w)), numbers(w));
        out.push_str(&crate::text::wrap(&text, width, "", "  "));
    }
    out
}

/// A markdown table of the lines, code included, and the diagnoses under it.
pub(super) fn markdown(lines: &[&WorstLine]) -> String {
    if lines.is_empty() {
        return String::new();
    }
    let esc = crate::text::markdown;
    let mut out = String::from("**Worst lines**\n\n| launch | line | op | numbers | code |\n|:--|:--|:--|:--|:--|\n");
    for w in lines {
        let code = w.code.as_deref().map(|c| format!("`{}`", esc(c))).unwrap_or_default();
        out.push_str(&format!(
            "| `{}` | `{}` | {} | {} | {code} |\n",
            esc(&who(w)),
            esc(&place(w)),
            esc(w.op.as_deref().unwrap_or("–")),
            esc(&numbers(w))
        ));
    }
    out.push('\n');
    for w in lines.iter().filter(|w| w.diagnosis.is_some()) {
        out.push_str(&format!(
            "- `{}` {}: {}\n",
            esc(&who(w)),
            esc(&w.location),
            esc(w.diagnosis.as_deref().unwrap_or_default())
        ));
    }
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_access_made_inside_a_library_names_it_beside_the_users_line() {
        let w = |via: Option<&str>| WorstLine {
            pattern: None,
            variant: None,
            kernel: "k".into(),
            rank: None,
            location: "app.cu:5".into(),
            via: via.map(str::to_string),
            op: Some("global load".into()),
            sectors_per_request: Some(4.0),
            ideal_sectors_per_request: None,
            excess_sectors: None,
            excess_share: None,
            shared_ways: None,
            code: None,
            diagnosis: None,
        };
        let (moved, plain) = (w(Some("sm_32_intrinsics.hpp:302")), w(None));
        let text = terminal(&[&moved], None);
        assert!(text.starts_with("worst line: k: app.cu:5 (inside sm_32_intrinsics.hpp:302) — 4.0"), "{text}");
        assert!(markdown(&[&moved]).contains("| `app.cu:5 (inside sm_32_intrinsics.hpp:302)` |"));
        assert!(terminal(&[&plain], None).starts_with("worst line: k: app.cu:5 — "));
    }
}
