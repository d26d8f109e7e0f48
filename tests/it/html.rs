//! `--format html` in a real browser: headless Chromium opens the page of a `run --all`, a
//! fixture report's lines, a compare and a failing check, and the tests read the DOM it
//! rendered, as a reader sees it: the table cells are the JSON's numbers, the heat view marks
//! the lines the JSON ranks worst with their code, nothing is fetched, a kernel called
//! `<img …>` stays text, and a screenshot is not blank.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::browser::{attr, elements, page_requests, text, Browser};
use crate::util::{chromium, coalprof, fixture, json, root, OkStdout};

const CUTLASS: &str = "ncu-rep/panjd123-cutlass_report80_2024.1.1.ncu-rep";

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

/// What every page must be: one file that fetches nothing, with no off-page link or source.
fn self_contained(page: &str, fetched: &[String], what: &str) {
    assert!(page.contains("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none';"), "{what}: CSP");
    for bad in ["src=\"http", "href=\"http", "src=\"//", "href=\"//", "@import", "url("] {
        assert!(!page.contains(bad), "{what}: the page holds `{bad}`");
    }
    let requests = page_requests(fetched);
    assert!(requests.is_empty(), "{what}: the page fetched {requests:?}");
}

/// A cell's text as the number it shows (`1,024`, `8.00x`, `93%`, `3900.0`), if it shows one.
fn shown(text: &str) -> Option<f64> {
    let t = text.split(" (").next()?.trim().replace(',', "");
    let t = t.trim_end_matches('x');
    match t.strip_suffix('%') {
        Some(p) => p.parse::<f64>().ok().map(|v| v / 100.0),
        None => t.parse().ok(),
    }
}

/// The `[[column]]`s of metrics.toml: key → format (how a cell rounds and scales).
fn column_formats() -> BTreeMap<String, String> {
    let toml: toml::Table = std::fs::read_to_string(root().join("metrics.toml")).unwrap().parse().unwrap();
    let cols = toml["column"].as_array().unwrap();
    cols.iter().map(|c| (c["key"].as_str().unwrap().into(), c["format"].as_str().unwrap().into())).collect()
}

/// Whether `text` is `value` rounded as `format` shows it.
fn rounds_to(text: &str, value: f64, format: &str) -> bool {
    let Some(v) = shown(text) else { return false };
    let (scaled, step) = match format {
        "gb_per_sec" => (value / 1e9, 0.05),
        "megabytes" => (value / 1e6, 0.05),
        "micros" => (value * 1e6, 0.05),
        "percent" => (value, 0.005),
        "count" => (value, 0.5),
        _ => (value, 0.005),
    };
    (v - scaled).abs() <= step + 1e-9 * scaled.abs()
}

#[test]
fn run_all_page_shows_every_pattern_with_the_json_numbers_and_fetches_nothing() {
    let Some(chromium) = chromium("html: run_all_page") else { return };
    let dir = tempfile::tempdir().unwrap();
    let runs = dir.path().join("profiles");
    coalprof()
        .args(["run", "--all", "--backend", "model", "--size", "64M", "--run-id", "all", "--out"])
        .arg(&runs)
        .ok_stdout();
    let page = coalprof().arg("report").arg(&runs).args(["--format", "html"]).ok_stdout();
    let results = json(&coalprof().arg("report").arg(&runs).args(["--format", "json"]).ok_stdout());
    assert!(page.len() < 1 << 20, "a full run --all is a few hundred KB, not {} bytes", page.len());
    let saved = std::fs::read(runs.join("all/report.html")).unwrap();
    assert!(saved.len() > 10_000 && saved.starts_with(b"<!DOCTYPE html>"), "the run folder keeps its page");
    let file = write(dir.path(), "review.html", &page);
    let started = std::time::Instant::now();
    let visit = Browser::new(chromium).visit(&file);
    eprintln!("html: run --all page {} bytes, rendered in {:.1} s", page.len(), started.elapsed().as_secs_f64());
    self_contained(&String::from_utf8_lossy(&page), &visit.fetched, "run --all");

    let formats = column_formats();
    let sections = elements(&visit.dom, "section", "class=\"pattern\"");
    let rows = results["rows"].as_array().unwrap();
    let mut patterns: Vec<&str> = rows.iter().filter_map(|r| r["pattern"].as_str()).collect();
    patterns.dedup();
    assert_eq!(patterns.len(), coalprof::patterns::Pattern::ALL.len(), "run --all shows every pattern");
    let mut checked = 0;
    for p in &patterns {
        let (_, body) = sections
            .iter()
            .find(|(tag, _)| attr(tag, "data-pattern").as_deref() == Some(*p))
            .unwrap_or_else(|| panic!("no section for `{p}`"));
        let figures = elements(body, "figure", "class=\"plot\"");
        assert!(!figures.is_empty() && figures.iter().all(|(_, f)| f.contains("<svg")), "`{p}` shows its plot inline");
        for r in rows.iter().filter(|r| r["pattern"] == *p) {
            let key = format!("{p}/{}", r["variant"].as_str().unwrap());
            let (_, tr) = elements(body, "tr", "data-key=")
                .into_iter()
                .find(|(tag, _)| attr(tag, "data-key").as_deref() == Some(key.as_str()))
                .unwrap_or_else(|| panic!("no table row for `{key}`"));
            for (metric, format) in &formats {
                let cell = elements(tr, "td", &format!("data-key=\"{metric}\""));
                let Some((tag, content)) = cell.first() else { continue };
                match r["metrics"][metric].as_f64() {
                    Some(v) => {
                        let exact: f64 = attr(tag, "data-v").expect("a value").parse().unwrap();
                        assert_eq!(exact, v, "{key} {metric}: data-v is the JSON's number");
                        assert!(rounds_to(&text(content), v, format), "{key} {metric}: `{}` shows {v}", text(content));
                        checked += 1;
                    }
                    None => assert_eq!(text(content), "–", "{key} {metric}: absent in the JSON"),
                }
            }
        }
    }
    assert!(checked > 200, "only {checked} cells compared");
}

/// The JSON rows of `lines`, per kernel section in order (consecutive rows of one kernel and
/// launch).
fn kernel_groups(rows: &[Value]) -> Vec<Vec<&Value>> {
    let mut out: Vec<Vec<&Value>> = Vec::new();
    let id = |r: &Value| (r["kernel"].clone(), r["rank"].clone(), r["launch"].clone(), r["launches"].clone());
    for r in rows {
        match out.last_mut() {
            Some(g) if id(g[0]) == id(r) => g.push(r),
            _ => out.push(vec![r]),
        }
    }
    out
}

#[test]
fn a_fixture_reports_page_shows_its_worst_lines_with_code_and_numbers() {
    let Some(chromium) = chromium("html: fixture_lines_page") else { return };
    let dir = tempfile::tempdir().unwrap();
    let report = fixture(CUTLASS);
    let browser = Browser::new(chromium);
    for by in ["line", "instruction"] {
        let lines = json(&coalprof().arg("lines").arg(&report).args(["--by", by, "--format", "json"]).ok_stdout());
        let page = coalprof().arg("lines").arg(&report).args(["--by", by, "--format", "html"]).ok_stdout();
        let visit = browser.visit(&write(dir.path(), &format!("lines-{by}.html"), &page));
        self_contained(&String::from_utf8_lossy(&page), &visit.fetched, "lines");
        let sections = elements(&visit.dom, "section", "class=\"kernel\"");
        let groups = kernel_groups(lines["rows"].as_array().unwrap());
        assert_eq!(sections.len(), groups.len(), "{by}: one section per kernel");
        let mut with_code = 0;
        for ((tag, body), rows) in sections.iter().zip(&groups) {
            assert_eq!(attr(tag, "data-kernel").as_deref(), rows[0]["kernel"].as_str());
            let hot = elements(body, "tr", "data-rank=");
            assert_eq!(hot.len(), rows.len(), "{by}: every row of the JSON is marked in the heat view");
            for (rank, r) in rows.iter().enumerate() {
                let (tag, tr) = hot
                    .iter()
                    .find(|(t, _)| attr(t, "data-rank") == Some((rank + 1).to_string()))
                    .unwrap_or_else(|| panic!("{by}: no line ranked {}", rank + 1));
                assert_eq!(tag.contains("worst"), rank == 0, "{by}: only the first is marked worst");
                assert_eq!(attr(tag, "data-line").and_then(|l| l.parse().ok()), r["line"].as_u64());
                if by == "instruction" {
                    assert_eq!(attr(tag, "data-pc").and_then(|l| l.parse().ok()), r["pc_offset"].as_u64());
                } else if let Some(code) = r["source"].as_str() {
                    let shown = elements(tr, "td", "class=\"src\"");
                    assert_eq!(text(shown[0].1), code.split_whitespace().collect::<Vec<_>>().join(" "));
                    with_code += 1;
                }
                let cells: Vec<(&str, &str)> = elements(tr, "td", "class=\"n");
                let exact = |i: usize| attr(cells[i].0, "data-v").map(|v| v.parse::<f64>().unwrap());
                assert_eq!(exact(0), r["sectors_per_request"].as_f64(), "{by}: sectors/request");
                assert_eq!(exact(1), r["ideal_sectors_per_request"].as_f64(), "{by}: the ideal");
                assert_eq!(exact(2), r["excess_sectors"].as_f64(), "{by}: excess sectors");
                assert_eq!(exact(3), r["excess_share"].as_f64(), "{by}: share");
                assert_eq!(exact(4), r["shared_wavefronts"].as_f64(), "{by}: shared wavefronts");
            }
        }
        if by == "line" {
            assert!(with_code >= 10, "the fixture embeds its sources: {with_code} lines with code");
            assert!(visit.dom.contains("⋯ lines"), "lines shown in context, gaps marked");
        }
    }
}

#[test]
fn a_compare_page_marks_what_got_worse_by_the_catalogues_direction() {
    let Some(chromium) = chromium("html: compare_page") else { return };
    let dir = tempfile::tempdir().unwrap();
    let runs = dir.path().join("profiles");
    for (id, fetch) in [("l2-32", "32"), ("l2-128", "128")] {
        coalprof()
            .args(["run", "--pattern", "gather", "--backend", "model", "--size", "64M", "--l2-fetch", fetch])
            .args(["--run-id", id, "--out"])
            .arg(&runs)
            .ok_stdout();
    }
    let (a, b) = (runs.join("l2-32"), runs.join("l2-128"));
    let page = coalprof().arg("compare").arg(&a).arg(&b).args(["--format", "html"]).ok_stdout();
    let cmp = json(&coalprof().arg("compare").arg(&a).arg(&b).args(["--format", "json"]).ok_stdout());
    let visit = Browser::new(chromium).visit(&write(dir.path(), "compare.html", &page));
    self_contained(&String::from_utf8_lossy(&page), &visit.fetched, "compare");
    let trs = elements(&visit.dom, "tr", "data-key=");
    let mut worse = 0;
    for r in cmp["rows"].as_array().unwrap() {
        let key = r["key"].as_str().unwrap();
        let (_, tr) = trs.iter().find(|(t, _)| attr(t, "data-key").as_deref() == Some(key)).expect("a row");
        let reference = r["values"][0]["dram_amplification"].as_f64();
        let later = r["values"][1]["dram_amplification"].as_f64();
        let cell = elements(tr, "td", "data-input=\"1\" data-key=\"dram_amplification\"");
        let (tag, content) = cell[0];
        assert_eq!(attr(tag, "data-v").map(|v| v.parse::<f64>().unwrap()), later, "{key}");
        // A bigger DRAM fetch reads more: lower is better for amplification, so it is worse.
        if let (Some(a), Some(b)) = (reference, later) {
            assert_eq!(content.contains("worse"), b > a, "{key}: {a} → {b}: `{}`", text(content));
            assert_eq!(tag.contains("bad"), b > a);
            worse += usize::from(b > a);
        }
    }
    assert!(worse > 0, "a 128-byte fetch makes some gather worse");
}

#[test]
fn a_failing_checks_page_names_verdicts_rules_and_source_lines() {
    let Some(chromium) = chromium("html: failing_check_page") else { return };
    let dir = tempfile::tempdir().unwrap();
    let rules =
        write(dir.path(), "rules.toml", b"[[gate]]\nmatch = \"*\"\nmetric = \"line_sectors_per_request\"\nmax = 1.0\n");
    let report = fixture(CUTLASS);
    let check = |format: &str| {
        let out = coalprof()
            .arg("check")
            .arg("--rules")
            .arg(&rules)
            .arg(&report)
            .args(["--format", format])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "the gate fails: {}", String::from_utf8_lossy(&out.stderr));
        out.stdout
    };
    let (page, checks) = (check("html"), json(&check("json")));
    let visit = Browser::new(chromium).visit(&write(dir.path(), "check.html", &page));
    self_contained(&String::from_utf8_lossy(&page), &visit.fetched, "check");
    assert!(text(elements(&visit.dom, "p", "class=\"verdict fail\"")[0].1).starts_with("gate failed"));
    let trs = elements(&visit.dom, "tr", "data-verdict=");
    let failed: Vec<&Value> = checks["checks"].as_array().unwrap().iter().filter(|c| c["verdict"] == "fail").collect();
    assert!(!failed.is_empty());
    assert_eq!(trs.iter().filter(|(t, _)| t.contains("data-verdict=\"fail\"")).count(), failed.len());
    for c in failed {
        let row = c["row"].as_str().unwrap();
        let (_, tr) = trs.iter().find(|(t, _)| attr(t, "data-row").as_deref() == Some(row)).expect("a row");
        let seen = text(tr);
        assert!(seen.contains(&format!("{}:1", rules.display())), "the rule's file and line: {seen}");
        let line = row.split_once(" @ ").unwrap().1;
        assert!(seen.contains(line), "the source line {line}: {seen}");
        assert!(tr.contains("class=\"src\""), "its code: {seen}");
    }
}

#[test]
fn names_stay_text_and_the_screenshot_is_not_blank() {
    let Some(chromium) = chromium("html: names_stay_text") else { return };
    let dir = tempfile::tempdir().unwrap();
    let mut run: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("runs/stride-sm90.json")).unwrap()).unwrap();
    let evil = "<img src=x onerror=alert(1)>";
    run["rows"][0]["variant"] = evil.into();
    run["rows"][0]["kernel"] = "<script>document.title='pwned'</script>".into();
    let input = write(dir.path(), "results.json", &serde_json::to_vec(&run).unwrap());
    let page = coalprof().arg("report").arg(&input).args(["--format", "html"]).ok_stdout();
    let browser = Browser::new(chromium);
    let visit = browser.visit(&write(dir.path(), "evil.html", &page));
    assert!(!visit.dom.contains("<img"), "a name became an element");
    let title = elements(&visit.dom, "title", "");
    assert!(text(title[0].1).starts_with("coalprof report: "), "a name ran as a script: {}", text(title[0].1));
    assert_eq!(elements(&visit.dom, "script", "").len(), 1, "the page's own script only");
    assert!(visit.dom.contains("&lt;img src=x onerror=alert(1)&gt;"), "the name is shown as text");

    let png = dir.path().join("shot.png");
    let pixels = browser.screenshot(&dir.path().join("evil.html"), &png, (1024, 768));
    let mut counts: BTreeMap<[u8; 4], usize> = BTreeMap::new();
    for p in &pixels {
        *counts.entry(*p).or_default() += 1;
    }
    let top = counts.values().max().copied().unwrap_or(0);
    assert!(counts.len() > 16, "{} colours: the page looks blank", counts.len());
    assert!(top < pixels.len() * 98 / 100, "one colour covers {top} of {} pixels", pixels.len());
}

/// The control: the proxy sees a page that does fetch, so "fetched nothing" means something.
#[test]
fn the_network_check_sees_a_page_that_fetches() {
    let Some(chromium) = chromium("html: network_check_control") else { return };
    let dir = tempfile::tempdir().unwrap();
    let page = b"<!DOCTYPE html><html><body><img src=\"http://coalprof-test.invalid/x.png\"></body></html>";
    let visit = Browser::new(chromium).visit(&write(dir.path(), "fetches.html", page));
    let requests = page_requests(&visit.fetched);
    assert!(requests.iter().any(|r| r.contains("coalprof-test.invalid")), "not seen: {:?}", visit.fetched);
}
