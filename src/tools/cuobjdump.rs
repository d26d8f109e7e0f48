//! `cuobjdump -sass`: the SASS of a built executable, split per kernel, so load widths can be
//! checked without a GPU (a float4 copy shows `LDG.E.128`, a scalar one `LDG.E`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::process::{run_sync, Cmd};
use super::ToolError;

/// SASS text by kernel function name.
pub type Sass = BTreeMap<String, String>;

/// A located `cuobjdump`.
#[derive(Debug, Clone)]
pub struct Cuobjdump {
    /// The executable.
    pub path: PathBuf,
}

impl Cuobjdump {
    /// SASS text per kernel function of `exe`.
    pub fn sass(&self, exe: &Path) -> Result<Sass, ToolError> {
        // cuobjdump runs nvdisasm, which lives beside it, and nothing else: its folder is the
        // whole PATH it needs (not the caller's, which only the settings layer reads).
        let dir = self.path.parent().map(Path::to_path_buf).unwrap_or_default();
        let c = Cmd::new(&self.path).arg("-sass").arg(exe).env("PATH", dir).timeout(Some(Duration::from_secs(120)));
        let out = run_sync(&c, None)?;
        if !out.status.success() {
            return Err(ToolError::failed(format!("cuobjdump could not disassemble `{}`", exe.display()), &c, &out));
        }
        Ok(functions(&out.stdout))
    }
}

/// Split cuobjdump's listing at its `Function : NAME` lines.
pub fn functions(sass: &str) -> BTreeMap<String, String> {
    let mut out: BTreeMap<String, String> = BTreeMap::new();
    let mut current: Option<String> = None;
    for line in sass.lines() {
        if let Some(name) = line.trim().strip_prefix("Function : ") {
            current = Some(name.trim().to_string());
            continue;
        }
        if let Some(name) = &current {
            let body = out.entry(name.clone()).or_default();
            body.push_str(line);
            body.push('\n');
        }
    }
    out
}

/// The global-load opcodes in a kernel's SASS (`LDG.E.128.CONSTANT`, `LDG.E`, …).
pub fn global_loads(sass: &str) -> Vec<String> {
    sass.split(|c: char| c.is_whitespace() || c == ';' || c == '}' || c == '{')
        .filter(|w| w.starts_with("LDG."))
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_functions_and_finds_loads() {
        let text = "\t\tFunction : vector_float4\n /*0090*/ LDG.E.128.CONSTANT R4, desc[UR4][R2.64] ;\n /*00a0*/ @P0 LDG.E.CONSTANT R9, desc[UR4][R6.64] ;\n\t\tFunction : vector_float\n /*0010*/ LDG.E R1, [R2.64] ;\n";
        let f = functions(text);
        assert_eq!(global_loads(&f["vector_float4"]), ["LDG.E.128.CONSTANT", "LDG.E.CONSTANT"]);
        assert_eq!(global_loads(&f["vector_float"]), ["LDG.E"]);
    }
}
