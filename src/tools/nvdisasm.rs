//! `nvdisasm -g -c CUBIN`: the SASS text of every instruction of a cubin, per function and
//! offset, with the `//## File "…", line N` line info nvdisasm prints (no GPU needed).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::process::{run_sync, Cmd};
use super::ToolError;

/// A located `nvdisasm`.
#[derive(Debug, Clone)]
pub struct Nvdisasm {
    /// The executable.
    pub path: PathBuf,
}

/// One disassembled instruction.
#[derive(Debug, Clone, PartialEq)]
pub struct Instruction {
    /// Its offset in the function, in bytes.
    pub offset: u64,
    /// `LDG.E.CONSTANT R21, [R16.64]` (predicate kept, trailing `;` dropped).
    pub text: String,
    /// The `//## File` comment in force: (file, line).
    pub line: Option<(String, u32)>,
}

impl Nvdisasm {
    /// Disassemble `cubin` (a file) into instructions per function name.
    pub fn disassemble(&self, cubin: &Path) -> Result<BTreeMap<String, Vec<Instruction>>, ToolError> {
        Ok(parse(&self.listing(cubin)?))
    }

    /// `nvdisasm -g -c`'s listing of a cubin in memory (written to a temporary file for it).
    pub fn listing_of(&self, cubin: &[u8]) -> Result<String, ToolError> {
        let spawn = |source| ToolError::Spawn {
            command: format!("{} -g -c CUBIN (writing the cubin to a temporary file)", self.path.display()),
            source,
        };
        let mut input = tempfile::Builder::new().suffix(".cubin").tempfile().map_err(spawn)?;
        std::io::Write::write_all(&mut input, cubin).map_err(spawn)?;
        self.listing(input.path())
    }

    /// A name for `cubin`'s listing by this nvdisasm, for a cache of listings: SHA-256 of the
    /// cubin and of what identifies the nvdisasm (its path, size and modification time).
    pub fn cache_key(&self, cubin: &[u8]) -> String {
        use sha2::{Digest, Sha256};
        let mut h = Sha256::new();
        h.update(cubin);
        h.update(self.path.as_os_str().as_encoded_bytes());
        if let Ok(m) = std::fs::metadata(&self.path) {
            h.update(m.len().to_le_bytes());
            if let Ok(t) = m.modified().map(|t| t.duration_since(std::time::UNIX_EPOCH).unwrap_or_default()) {
                h.update(t.as_nanos().to_le_bytes());
            }
        }
        h.finalize()[..16].iter().map(|b| format!("{b:02x}")).collect()
    }

    /// `nvdisasm -g -c CUBIN`'s listing.
    fn listing(&self, cubin: &Path) -> Result<String, ToolError> {
        let c = Cmd::new(&self.path).arg("-g").arg("-c").arg(cubin).timeout(Some(Duration::from_secs(120)));
        let out = run_sync(&c, None)?;
        if !out.status.success() {
            return Err(ToolError::Failed {
                what: format!("nvdisasm could not disassemble `{}`", cubin.display()),
                command: c.to_string(),
                status: format!("{}", out.status),
                stderr: out.stderr,
                hint: None,
            });
        }
        Ok(out.stdout)
    }
}

/// Parse nvdisasm's listing: `.text.NAME:` starts a function, `//## File "F", line N` sets the
/// line of what follows, `/*0290*/  TEXT ;` is an instruction at offset 0x290.
pub fn parse(listing: &str) -> BTreeMap<String, Vec<Instruction>> {
    let mut out: BTreeMap<String, Vec<Instruction>> = BTreeMap::new();
    let mut function: Option<String> = None;
    let mut line: Option<(String, u32)> = None;
    for raw in listing.lines() {
        let t = raw.trim();
        if let Some(name) = t.strip_prefix(".text.").and_then(|r| r.strip_suffix(':')) {
            function = Some(name.to_string());
            line = None;
            continue;
        }
        if let Some(rest) = t.strip_prefix("//## File \"") {
            line = rest.split_once("\", line ").and_then(|(file, n)| {
                let digits: String = n.chars().take_while(char::is_ascii_digit).collect();
                Some((file.to_string(), digits.parse().ok()?))
            });
            continue;
        }
        let Some(f) = &function else { continue };
        let Some(rest) = t.strip_prefix("/*") else { continue };
        let Some((hex, text)) = rest.split_once("*/") else { continue };
        // Control words of older architectures are `/* 0x001fc400fe2007f6 */`, not offsets.
        if hex.starts_with(' ') || hex.starts_with("0x") {
            continue;
        }
        let Ok(offset) = u64::from_str_radix(hex, 16) else { continue };
        let text = text.trim().trim_end_matches(';').split_whitespace().collect::<Vec<_>>().join(" ");
        out.entry(f.clone()).or_default().push(Instruction { offset, text, line: line.clone() });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_functions_lines_and_offsets() {
        let listing = "\t.section\t.text.k,\"ax\",@progbits\nk:\n.text.k:\n\t//## File \"/a/k.cu\", line 18\n        \
                       /*0000*/                   IMAD.MOV.U32 R1, RZ, RZ, c[0x0][0x28] ;\n\
                       \t//## File \"/a/k.cu\", line 20 inlined at \"/a/m.cu\", line 3\n\
                       /*0010*/               @P0 EXIT ;\n        /* 0x001fc400fe2007f6 */\n";
        let f = parse(listing);
        let k = &f["k"];
        assert_eq!(k.len(), 2);
        assert_eq!(k[0].text, "IMAD.MOV.U32 R1, RZ, RZ, c[0x0][0x28]");
        assert_eq!(k[1], Instruction { offset: 0x10, text: "@P0 EXIT".into(), line: Some(("/a/k.cu".into(), 20)) });
    }
}
