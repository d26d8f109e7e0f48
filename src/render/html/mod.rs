//! HTML: one self-contained page per kind (results, lines, compare, check, history), built with
//! maud, which escapes every interpolated string, so a kernel called `<script>` stays text.
//!
//! Each page carries its CSS and its plots inline and a Content-Security-Policy that forbids
//! every fetch (`default-src 'none'`); the one inline script (sorting a table by a header) is
//! allowed by its hash and the page reads the same without it. Numbers are the JSON's:
//! each cell holds the exact value in `data-v` and shows the terminal's rounding.

mod check;
mod compare;
mod heat;
mod history;
mod lines;
mod results;

use maud::{html, Markup, PreEscaped, DOCTYPE};
use sha2::{Digest, Sha256};

use crate::render::columns::Severity;

pub(crate) use check::check;
pub(crate) use compare::compare;
pub(crate) use history::history;
pub(crate) use lines::{Context, Lines};
pub(crate) use results::Report;

const CSS: &str = include_str!("page.css");
const SCRIPT: &str = include_str!("sort.js");

/// The policy: nothing is fetched; inline style, and the one script by its hash.
fn policy() -> String {
    let hash = base64(&Sha256::digest(SCRIPT.as_bytes()));
    format!("default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-{hash}'; base-uri 'none'; form-action 'none'")
}

/// A whole page: `title`, the facts line under it, and `body`.
pub(crate) fn page(title: &str, facts: &[String], body: Markup) -> String {
    let doc = html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta http-equiv="Content-Security-Policy" content=(policy());
                meta name="viewport" content="width=device-width, initial-scale=1";
                meta name="generator" content={ "coalprof " (env!("CARGO_PKG_VERSION")) };
                title { (title) }
                style { (PreEscaped(CSS)) }
            }
            body {
                header {
                    h1 { (title) }
                    @if !facts.is_empty() { p.facts { (facts.join(" · ")) } }
                }
                main { (body) }
                footer.facts { "coalprof " (env!("CARGO_PKG_VERSION")) }
                script { (PreEscaped(SCRIPT)) }
            }
        }
    };
    doc.into_string() + "\n"
}

/// A numeric cell: the exact value in `data-v`, the text as people read it, and how it reads.
pub(crate) fn num(value: Option<f64>, text: &str, class: Option<Severity>) -> Markup {
    let v = value.filter(|v| v.is_finite()).map(|v| v.to_string());
    html! { td class=(cell_class(class)) data-v=[v] { (text) } }
}

/// The classes of a numeric cell: `n`, and `good`/`warn`/`bad` where it has a severity.
pub(crate) fn cell_class(extra: Option<Severity>) -> String {
    match extra {
        Some(s) => format!("n {}", s.class()),
        None => "n".into(),
    }
}

/// An `id` for a section from any name.
pub(crate) fn anchor(prefix: &str, name: &str) -> String {
    format!("{prefix}-{}", crate::names::safe_name(name))
}

/// Standard base64 with padding (the CSP hash; no crate for twenty lines).
fn base64(bytes: &[u8]) -> String {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ABC[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_the_rfc_vectors() {
        for (i, o) in [("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foobar", "Zm9vYmFy")] {
            assert_eq!(base64(i.as_bytes()), o);
        }
    }

    #[test]
    fn names_are_text_and_nothing_is_fetched() {
        let p = page("<script>alert(1)</script>", &["a & b".into()], html! { p { ("<img src=x>") } });
        assert!(p.contains("&lt;script&gt;alert(1)&lt;/script&gt;"), "{p}");
        assert!(p.contains("&lt;img src=x&gt;"));
        assert!(p.contains("a &amp; b"));
        assert!(p.contains("default-src 'none'"));
        assert_eq!(p.matches("<script>").count(), 1, "only the page's own script");
        let cell = num(Some(5.0), "5.00", Some(Severity::Warn)).into_string();
        assert_eq!(cell, r#"<td class="n warn" data-v="5">5.00</td>"#, "one class attribute");
    }
}
