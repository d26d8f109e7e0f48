//! The one voice on stderr: errors with their hint and causes, warnings, notes and progress
//! lines. Everything a person is told goes through here (or through `tracing`'s `-v` logs), so
//! every message has the same shape: `error: …` / `  caused by: …` / `hint: …`, `warning: …`,
//! `note: …`. A message is text from anywhere (a kernel name from a report, a tool's stderr):
//! each line is made [`visible`] before it reaches the terminal, and every line after a
//! message's first is indented, so no line of one can pass for another message or a GitHub
//! workflow command. `text.rs` escapes names in the output formats with the same [`visible`]
//! (it lives here because this module must depend on nothing: every room may speak).

use std::borrow::Cow;
use std::fmt::Display;

/// `error: …`, each cause under it, then the hint. (It takes any error, not coalprof's own, so
/// that this module depends on nothing: every room may speak.)
pub(crate) fn error(e: &dyn std::error::Error, hint: Option<&str>) {
    error_in(None, e, hint);
}

/// `error: CONTEXT: …` with the causes and hint of `e`: a failure the command survives (one
/// task of many), told as fully as one that ends it.
pub(crate) fn error_in(context: Option<&dyn Display>, e: &dyn std::error::Error, hint: Option<&str>) {
    told("error", context, e, hint);
}

/// `note: CONTEXT: …` with the causes and hint of `e`: an input left out, said as fully as an
/// error would say it.
pub(crate) fn note_in(context: &dyn Display, e: &dyn std::error::Error, hint: Option<&str>) {
    told("note", Some(context), e, hint);
}

/// Characters shown as an escape instead of themselves: C0 and C1 controls and DEL (newlines,
/// ESC, BEL, …), the Unicode line and paragraph separators (a line break to some renderers) and
/// the bidirectional overrides and isolates (text that reads otherwise than it is stored).
fn hidden(c: char) -> bool {
    c.is_control() || matches!(c, '\u{2028}' | '\u{2029}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `s` with every [`hidden`] character written as a visible escape: `\n`, `\r`, `\t`, `\x1b`,
/// `\u{202e}`. Borrowed when there is nothing to escape (nearly always).
pub(crate) fn visible(s: &str) -> Cow<'_, str> {
    if !s.chars().any(hidden) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if hidden(c) && (c as u32) < 0x100 => out.push_str(&format!("\\x{:02x}", c as u32)),
            c if hidden(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// `LEVEL: [CONTEXT: ]ERROR`, each cause under it, then the hint.
fn told(level: &str, context: Option<&dyn Display>, e: &dyn std::error::Error, hint: Option<&str>) {
    match context {
        Some(c) => say(level, format!("{c}: {e}")),
        None => say(level, e),
    }
    let mut cause = e.source();
    while let Some(c) = cause {
        say("  caused by", c);
        cause = c.source();
    }
    if let Some(h) = hint {
        say("hint", h);
    }
}

/// `LABEL: TEXT` on stderr, the text [`shown`].
fn say(label: &str, text: impl Display) {
    line(format_args!("{label}: {}", shown(&text.to_string())));
}

/// One line on stderr. A stderr nobody reads (a closed pipe) loses the line and nothing else:
/// `eprintln!` would panic there, and a panic aborts the release build.
fn line(text: std::fmt::Arguments<'_>) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "{text}");
}

/// `text` as a message may show it: every line [`visible`], the lines after the first indented
/// by two spaces (a tool's stderr, a wrapped note keep their breaks; a name cannot start a line).
fn shown(text: &str) -> Cow<'_, str> {
    if !text.contains('\n') {
        return visible(text);
    }
    Cow::Owned(
        text.split('\n')
            .map(|l| visible(l).into_owned())
            .enumerate()
            .map(|(i, l)| if i == 0 || l.is_empty() || l.starts_with("  ") { l } else { format!("  {l}") })
            .collect::<Vec<_>>()
            .join("\n"),
    )
}

/// `error: …` for a failure the command survives that is no error value (a GPU retired after
/// two failed tasks). An error is told through [`error_in`], with its causes and hint: this
/// takes text only, so none is flattened to its first line by mistake.
pub(crate) fn failure(text: &str) {
    say("error", text);
}

/// `warning: …`: something is off, the command goes on.
pub(crate) fn warning(text: impl Display) {
    say("warning", text);
}

/// `note: …`: what the output leaves out, and why.
pub(crate) fn note(text: impl Display) {
    say("note", text);
}

/// A progress line of a long command (which pattern on which GPU, which Slurm job).
pub(crate) fn progress(text: impl Display) {
    line(format_args!("{}", shown(&text.to_string())));
}

#[cfg(test)]
mod tests {
    use super::shown;

    #[test]
    fn a_message_carries_no_control_character_and_no_line_of_its_own() {
        // A kernel name with a newline and a workflow command, terminal escapes, a bidi override.
        let name = "evil\n::warning::injected \x1b]0;title\x07\u{202e}";
        let message = format!("`{name}`: no counters");
        let said = shown(&message);
        assert_eq!(said, "`evil\n  ::warning::injected \\x1b]0;title\\x07\\u{202e}`: no counters");
        assert!(!said.lines().any(|l| l.starts_with("::")));
        // A tool's stderr keeps its lines, indented under the message; a plain one is borrowed.
        assert_eq!(
            shown("nvcc failed:\nx.cu(3): error\n  already indented"),
            "nvcc failed:\n  x.cu(3): error\n  already indented"
        );
        assert!(matches!(shown("plain"), std::borrow::Cow::Borrowed("plain")));
    }
}
