//! `coalprof patterns`: the built-in patterns, their variants, and what each one shows.

use crate::error::Result;
use crate::exit::Exit;
use crate::patterns::{variants, Pattern, Sizing};
use crate::render::Format;
use crate::settings::{Common, PatternsSettings};

pub(crate) fn run(common: &Common, s: &PatternsSettings) -> Result<Exit> {
    let sizing = s.sizing.unwrap_or_default();
    let text = match common.format {
        Format::Json => {
            let all: Vec<_> = Pattern::ALL
                .iter()
                .map(|&p| serde_json::json!({ "pattern": p.name(), "lesson": p.lesson(), "variants": variants(p, sizing) }))
                .collect();
            serde_json::to_string_pretty(&all).unwrap_or_default() + "\n"
        }
        Format::Table | Format::Markdown => listing(sizing, s.sizing.is_some()),
        other @ (Format::Csv
        | Format::Html
        | Format::Bencher
        | Format::GithubBenchmark
        | Format::GithubBenchmarkBigger
        | Format::Svg
        | Format::Summary
        | Format::SummaryMd) => return Err(other.unsupported("patterns")),
    };
    super::print(&text)?;
    Ok(Exit::Ok)
}

fn listing(sizing: Sizing, with_params: bool) -> String {
    let mut out = String::new();
    for p in Pattern::ALL {
        out.push_str(&format!("{:<15} {}\n", p.name(), p.lesson()));
        for v in variants(p, sizing) {
            out.push_str(&format!("    {:<26} {}", v.name, v.kernel));
            if with_params {
                let params: Vec<String> = v.params().iter().map(|(k, v)| format!("{k}={v}")).collect();
                out.push_str(&format!("  {}", params.join(" ")));
            }
            out.push('\n');
        }
    }
    out
}
