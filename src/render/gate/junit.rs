//! JUnit XML, in the Jenkins/GitLab dialect CI systems actually read.
//!
//! One `<testsuite name="coalprof/<arch>">` per architecture with the provenance as properties,
//! one `<testcase>` per (row × metric) check with `classname="coalprof.<arch>.<row>"` (Jenkins
//! splits package from class at the last dot; GitLab shows classname as the suite) and the metric
//! as its name, unique within the class. A violation is `<failure type="threshold">` with the
//! whole explanation in the element body, because GitLab ignores `message`; `skipped` and
//! `missing` are `<skipped>`; a warning or a new row passes with its note in `<system-out>`.

use std::io;

use quick_xml::events::{BytesDecl, BytesText, Event};
use quick_xml::Writer;

use crate::gate::verdict::{Check, EnvironmentInfo, Report, Verdict};
use crate::text::fmt_num;

/// The document as a string.
pub(crate) fn render(report: &Report) -> String {
    let mut w = Writer::new_with_indent(Vec::new(), b' ', 2);
    write(&mut w, report).expect("writing into memory cannot fail");
    let mut text = String::from_utf8(w.into_inner()).expect("quick-xml writes UTF-8");
    text.push('\n');
    text
}

fn write(w: &mut Writer<Vec<u8>>, report: &Report) -> io::Result<()> {
    w.write_event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)))?;
    let counts = Counts::of(report.checks.iter());
    w.create_element("testsuites").with_attributes(pairs(&counts.attributes("coalprof"))).write_inner_content(|w| {
        for env in &report.environments {
            suite(w, env, report.checks.iter().filter(|c| c.arch == env.arch))?;
        }
        Ok(())
    })?;
    Ok(())
}

fn suite<'c>(
    w: &mut Writer<Vec<u8>>,
    env: &EnvironmentInfo,
    checks: impl Iterator<Item = &'c Check> + Clone,
) -> io::Result<()> {
    let counts = Counts::of(checks.clone());
    w.create_element("testsuite")
        .with_attributes(pairs(&counts.attributes(&format!("coalprof/{}", env.arch))))
        .write_inner_content(|w| {
            let mut props = vec![("backend", env.backend.clone())];
            props.extend(env.gpu.clone().map(|g| ("gpu", g)));
            props.extend(env.ncu_version.clone().map(|v| ("ncu.version", v)));
            properties(w, &props)?;
            for c in checks {
                case(w, c)?;
            }
            Ok(())
        })?;
    Ok(())
}

fn properties(w: &mut Writer<Vec<u8>>, props: &[(&str, String)]) -> io::Result<()> {
    if props.is_empty() {
        return Ok(());
    }
    w.create_element("properties").write_inner_content(|w| {
        for (name, value) in props {
            w.create_element("property")
                .with_attributes([("name", *name), ("value", clean(value).as_str())])
                .write_empty()?;
        }
        Ok(())
    })?;
    Ok(())
}

fn case(w: &mut Writer<Vec<u8>>, c: &Check) -> io::Result<()> {
    let classname = clean(&format!("coalprof.{}.{}", c.arch, c.row));
    let name = clean(&c.metric);
    let mut attrs = vec![("classname", classname), ("name", name), ("time", "0".to_string())];
    if let Some(loc) = c.place() {
        attrs.push(("file", clean(&loc.file.display().to_string())));
        attrs.extend(loc.line.map(|l| ("line", l.to_string())));
    }
    let attrs: Vec<(&str, &str)> = attrs.iter().map(|(k, v)| (*k, v.as_str())).collect();
    w.create_element("testcase").with_attributes(attrs).write_inner_content(|w| {
        let mut props = Vec::new();
        props.extend(c.current.map(|v| ("value", fmt_num(v))));
        props.extend(c.baseline.map(|v| ("baseline", fmt_num(v))));
        props.push(("verdict", c.verdict.as_str().to_string()));
        properties(w, &props)?;
        let message = clean(&c.message);
        let body = BytesText::new(&clean(&c.details)).into_owned();
        match c.verdict {
            Verdict::Fail => {
                w.create_element("failure")
                    .with_attributes([("message", message.as_str()), ("type", "threshold")])
                    .write_text_content(body)?;
            }
            Verdict::Skipped | Verdict::Missing => {
                w.create_element("skipped")
                    .with_attribute(("message", format!("{}: {message}", c.verdict.as_str()).as_str()))
                    .write_empty()?;
            }
            Verdict::Warn | Verdict::New => {
                w.create_element("system-out").write_text_content(body)?;
            }
            Verdict::Pass => {}
        }
        Ok(())
    })?;
    Ok(())
}

struct Counts {
    tests: usize,
    failures: usize,
    skipped: usize,
}

impl Counts {
    fn of<'c>(checks: impl Iterator<Item = &'c Check>) -> Counts {
        let mut n = Counts { tests: 0, failures: 0, skipped: 0 };
        for c in checks {
            n.tests += 1;
            n.failures += usize::from(c.verdict == Verdict::Fail);
            n.skipped += usize::from(matches!(c.verdict, Verdict::Skipped | Verdict::Missing));
        }
        n
    }

    fn attributes(&self, name: &str) -> Vec<(&'static str, String)> {
        vec![
            ("name", clean(name)),
            ("tests", self.tests.to_string()),
            ("failures", self.failures.to_string()),
            ("errors", "0".to_string()),
            ("skipped", self.skipped.to_string()),
            ("time", "0".to_string()),
        ]
    }
}

fn pairs<'a>(attrs: &'a [(&'static str, String)]) -> impl Iterator<Item = (&'a str, &'a str)> {
    attrs.iter().map(|(k, v)| (*k, v.as_str()))
}

/// Drop characters XML 1.0 cannot carry (ANSI escapes, other control characters).
fn clean(s: &str) -> String {
    s.chars().filter(|&c| matches!(c, '\t' | '\n' | '\r') || (c >= ' ' && c != '\u{FFFE}' && c != '\u{FFFF}')).collect()
}
