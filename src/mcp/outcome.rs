//! What a tool call's child did, as the tool's result: its summary JSON as structured content
//! (and the same JSON as text, as the protocol recommends), bounded; or a tool error
//! (`isError`) with the child's exit code and its own `error:`, `caused by:` and `hint:` lines,
//! every one of them visible text.

use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{json, Value};

use crate::exit::Exit;
use crate::text::visible;
use crate::tools::process::Captured;
use crate::tools::ToolError;

/// The most a result may carry (its JSON text, bytes): an agent's context is small, and a
/// larger answer is a question to narrow (fewer rows, one kernel).
pub(crate) const MAX_RESULT_BYTES: usize = 64 * 1024;

/// The most of the child's stderr a tool error quotes (its end, where the `error:` lines are).
const MAX_ERROR_BYTES: usize = 4 * 1024;

/// The tool's result for the child's outcome.
pub(crate) fn result(tool: &str, ran: Result<Captured, ToolError>) -> CallToolResult {
    let out = match ran {
        Ok(out) => out,
        // The child never ran, or was stopped (a cancelled request, Ctrl-C): coalprof's own words.
        Err(e) => return failure(tool, None, &visible(&e.to_string())),
    };
    let code = out.status.code();
    let gate_failed = tool == "check" && code == Some(Exit::GateFailed as i32);
    if code != Some(0) && !gate_failed {
        return failure(tool, code, &said(&out.stderr));
    }
    let text = out.stdout.trim();
    if text.len() > MAX_RESULT_BYTES {
        return failure(
            tool,
            code,
            &format!(
                "error: the result is {} bytes, more than the {MAX_RESULT_BYTES} a tool returns\n\
                 hint: ask for less: fewer rows (`limit`), one kernel (`kernel`), fewer inputs",
                text.len()
            ),
        );
    }
    let value: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => return failure(tool, code, &format!("error: coalprof {tool} printed no JSON ({e})")),
    };
    let mut result = CallToolResult::structured(value);
    // The text twin is the child's own JSON, its keys in the summary's order.
    result.content = vec![ContentBlock::text(text)];
    if gate_failed {
        result.content.push(ContentBlock::text(
            "gate_failed: a check with severity `fail` failed (coalprof check exits 1); the verdicts are above",
        ));
    }
    result
}

/// A tool error: `isError`, the words as text, and `{exit_code, error, hint, message}` as
/// structured content for an agent that reads fields.
fn failure(tool: &str, code: Option<i32>, words: &str) -> CallToolResult {
    let field = |label: &str| words.lines().find_map(|l| l.strip_prefix(label)).map(|rest| rest.trim().to_string());
    let exit = code.map_or_else(|| "no exit code".to_string(), |c| format!("exit code {c}"));
    let mut result = CallToolResult::structured_error(json!({
        "tool": tool,
        "exit_code": code,
        "error": field("error:"),
        "hint": field("hint:"),
        "message": words,
    }));
    result.content = vec![ContentBlock::text(format!("coalprof {tool} failed ({exit}):\n{words}"))];
    result
}

/// What the child said about its failure: from its first `error:` line on (its causes and
/// hint follow it), else its last lines; bounded to [`MAX_ERROR_BYTES`], each line visible.
fn said(stderr: &str) -> String {
    let lines: Vec<&str> = stderr.lines().collect();
    let from = lines.iter().position(|l| l.starts_with("error:")).unwrap_or(lines.len().saturating_sub(20));
    let mut out = String::new();
    for line in &lines[from..] {
        if out.len() + line.len() > MAX_ERROR_BYTES {
            out.push_str("…\n");
            break;
        }
        out.push_str(&visible(line));
        out.push('\n');
    }
    if out.is_empty() {
        out.push_str("(it said nothing on stderr)\n");
    }
    out.trim_end().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_error_and_hint_lines_are_kept_and_what_came_before_is_not() {
        let stderr = "building x.cu for GPGPU-Sim\nerror: `x.cu` does not compile\n  caused by: boom\nhint: fix it\n";
        assert_eq!(said(stderr), "error: `x.cu` does not compile\n  caused by: boom\nhint: fix it");
        let r = failure("profile_sim", Some(3), &said(stderr));
        assert_eq!(r.is_error, Some(true));
        let s = r.structured_content.unwrap();
        assert_eq!(s["exit_code"], 3);
        assert_eq!(s["error"], "`x.cu` does not compile");
        assert_eq!(s["hint"], "fix it");
    }

    #[test]
    fn a_control_character_on_stderr_stays_text() {
        let got = said("error: `k\x1b]0;t\x07`: no counters\n");
        assert_eq!(got, "error: `k\\x1b]0;t\\x07`: no counters");
    }

    #[test]
    fn a_long_stderr_is_bounded() {
        let stderr = format!("error: x\n{}", "  caused by: y\n".repeat(1000));
        assert!(said(&stderr).len() <= MAX_ERROR_BYTES + 4);
    }
}
