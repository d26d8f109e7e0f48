//! The cubin line-table reader against the real nvcc and nvdisasm: every instruction of every
//! function of the pattern kernels gets the `file:line` that `nvdisasm -g` prints, and a cubin
//! built without `-lineinfo` says so.

use std::path::{Path, PathBuf};

use coalprof::lines::cubin::Cubin;
use coalprof::tools::nvdisasm::Nvdisasm;

use crate::util::{real_nvcc, real_nvdisasm, root};

/// `nvcc -cubin -arch=ARCH [-lineinfo] kernels/FILE` into a temporary folder.
fn cubin(nvcc: &Path, dir: &Path, file: &str, arch: &str, lineinfo: bool) -> PathBuf {
    let out = dir.join(format!("{file}.{arch}.{lineinfo}.cubin"));
    let mut c = std::process::Command::new(nvcc);
    c.args(["-cubin", &format!("-arch={arch}"), "-o"]).arg(&out).arg(root().join("kernels").join(file));
    if lineinfo {
        c.arg("-lineinfo");
    }
    let o = c.output().expect("nvcc runs");
    assert!(o.status.success(), "nvcc failed: {}", String::from_utf8_lossy(&o.stderr));
    out
}

/// Compare every instruction's line with nvdisasm's; returns how many had a line.
pub fn assert_lines_match_nvdisasm(nvdisasm: &Path, path: &Path, data: &[u8]) -> usize {
    let cubin = Cubin::parse(data).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let listing = Nvdisasm { path: nvdisasm.to_path_buf() }.disassemble(path).unwrap();
    assert!(!listing.is_empty(), "nvdisasm listed no function of {}", path.display());
    let mut with_line = 0;
    for (name, instructions) in &listing {
        let f = cubin.functions.iter().find(|f| &f.name == name).unwrap_or_else(|| panic!("no function {name}"));
        for i in instructions {
            // nvdisasm prints the last of several rows at one address.
            let ours = cubin.locations_at(f, i.offset).pop().map(|l| (l.file, l.line));
            assert_eq!(ours, i.line, "{}: {name} +{:#x} `{}`", path.display(), i.offset, i.text);
            with_line += usize::from(ours.is_some());
        }
    }
    with_line
}

#[test]
fn line_tables_equal_nvdisasm_for_every_instruction() {
    let (Some(nvcc), Some(nvdisasm)) =
        (real_nvcc("line_tables_equal_nvdisasm"), real_nvdisasm("line_tables_equal_nvdisasm"))
    else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    for (file, arch) in
        [("column.cu", "sm_80"), ("bank_conflicts.cu", "sm_80"), ("stride.cu", "sm_90"), ("gather.cu", "sm_75")]
    {
        let path = cubin(&nvcc, dir.path(), file, arch, true);
        let data = std::fs::read(&path).unwrap();
        let n = assert_lines_match_nvdisasm(&nvdisasm, &path, &data);
        assert!(n > 0, "{file}: no instruction had a line");
        let cubin = Cubin::parse(&data).unwrap();
        assert!(cubin.notices.is_empty(), "{file}: {:?}", cubin.notices);
        // stride.cu only names itself: its kernel's lines are in the strided.cuh it includes.
        let source = if file == "stride.cu" { "strided.cuh" } else { file };
        assert!(cubin.files.iter().any(|f| f.ends_with(&format!("kernels/{source}"))), "{:?}", cubin.files);
    }
}

#[test]
fn a_cubin_without_lineinfo_says_so() {
    let Some(nvcc) = real_nvcc("a_cubin_without_lineinfo_says_so") else { return };
    let dir = tempfile::tempdir().unwrap();
    let data = std::fs::read(cubin(&nvcc, dir.path(), "column.cu", "sm_80", false)).unwrap();
    let cubin = Cubin::parse(&data).unwrap();
    let f = cubin.function("row_sums").expect("the function is still there");
    assert!(!f.has_lines() && cubin.location(f, 0).is_none());
    assert!(cubin.notices.iter().any(|n| n.contains("-lineinfo")), "{:?}", cubin.notices);
}

#[test]
fn line_tables_cut_short_or_pointing_outside_the_file_are_notices() {
    let Some(nvcc) = real_nvcc("line_tables_cut_short") else { return };
    let dir = tempfile::tempdir().unwrap();
    let data = std::fs::read(cubin(&nvcc, dir.path(), "column.cu", "sm_80", true)).unwrap();
    let elf = object::elf::FileHeader64::<object::Endianness>::parse(&*data);
    use object::read::elf::{FileHeader, SectionHeader};
    let header = elf.unwrap();
    let endian = header.endian().unwrap();
    let sections = header.sections(endian, &*data).unwrap();
    let (index, line) = sections.section_by_name(endian, b".debug_line").unwrap();
    let (start, size) = line.file_range(endian).unwrap();
    let shoff = header.e_shoff(endian) as usize + index.0 * header.e_shentsize(endian) as usize;

    // The section's size runs far past the end of the file.
    let mut outside = data.clone();
    outside[shoff + 0x20..shoff + 0x28].copy_from_slice(&(1u64 << 40).to_le_bytes());
    let c = Cubin::parse(&outside).unwrap();
    assert!(c.notices.iter().any(|n| n.contains("outside")), "{:?}", c.notices);

    // The line program's bytes are garbage (its unit length claims more than there is).
    let mut garbage = data.clone();
    for b in &mut garbage[start as usize..(start + size.min(64)) as usize] {
        *b = 0xff;
    }
    let c = Cubin::parse(&garbage).unwrap();
    assert!(c.notices.iter().any(|n| n.contains("malformed")), "{:?}", c.notices);

    // Truncated in the middle: the ELF itself is unreadable.
    assert!(Cubin::parse(&data[..data.len() / 3]).is_err());
}

/// A place: (file, line).
type Place = (String, u32);

/// nvdisasm -gi's inlining chain of every instruction: the block of `//## File` lines printed
/// last before it, innermost first, with its function and offset.
fn nvdisasm_chains(nvdisasm: &Path, cubin: &Path) -> Vec<(String, u64, Vec<Place>)> {
    let o = std::process::Command::new(nvdisasm).args(["-gi", "-c"]).arg(cubin).output().expect("nvdisasm runs");
    assert!(o.status.success(), "nvdisasm -gi failed: {}", String::from_utf8_lossy(&o.stderr));
    let (mut out, mut function, mut block, mut fresh) = (Vec::new(), String::new(), Vec::new(), false);
    for l in String::from_utf8_lossy(&o.stdout).lines().map(str::trim) {
        if let Some(name) = l.strip_prefix(".text.").and_then(|r| r.strip_suffix(':')) {
            (function, block) = (name.to_string(), Vec::new());
        } else if let Some(rest) = l.strip_prefix("//## File \"") {
            if !fresh {
                block.clear();
            }
            fresh = true;
            let (file, rest) = rest.split_once("\", line ").unwrap();
            let line: String = rest.chars().take_while(char::is_ascii_digit).collect();
            block.push((file.to_string(), line.parse().unwrap()));
        } else if let Some((hex, _)) = l.strip_prefix("/*").and_then(|r| r.split_once("*/")) {
            if let Ok(offset) = u64::from_str_radix(hex, 16) {
                fresh = false;
                out.push((function.clone(), offset, block.clone()));
            }
        }
    }
    out
}

/// The 1-based line of `file`'s text that holds `needle`.
fn line_of(text: &str, needle: &str) -> u32 {
    text.lines().position(|l| l.contains(needle)).unwrap_or_else(|| panic!("no `{needle}`")) as u32 + 1
}

#[test]
fn inlined_header_accesses_of_a_real_cubin_land_on_the_users_line_with_the_header_beside() {
    let (Some(nvcc), Some(nvdisasm)) =
        (real_nvcc("inlined_header_accesses_land_on_the_users_line"), real_nvdisasm("inlined_header_accesses"))
    else {
        return;
    };
    // Our own program: streaming intrinsics called on the kernel's lines, and `__ldg` called
    // inside a helper of the user's own header.
    let dir = tempfile::tempdir().unwrap();
    let helper = "#pragma once\n\
                  __device__ __forceinline__ float twice_ldg(const float *p, int i) {\n\
                  \x20 return 2.0f * __ldg(p + i);\n\
                  }\n";
    let app = "#include \"helpers.cuh\"\n\
               __global__ void stream(const float *__restrict__ a, float *__restrict__ b, int n) {\n\
               \x20 int i = blockIdx.x * blockDim.x + threadIdx.x;\n\
               \x20 if (i < n) {\n\
               \x20   float v = __ldcs(a + i);\n\
               \x20   __stcs(b + i, v * 3.0f);\n\
               \x20   b[i + n] = twice_ldg(a, i);\n\
               \x20 }\n\
               }\n";
    std::fs::write(dir.path().join("helpers.cuh"), helper).unwrap();
    std::fs::write(dir.path().join("app.cu"), app).unwrap();
    let path = dir.path().join("app.cubin");
    let o = std::process::Command::new(&nvcc)
        .args(["-cubin", "-arch=sm_80", "-lineinfo", "-o"])
        .arg(&path)
        .arg(dir.path().join("app.cu"))
        .output()
        .expect("nvcc runs");
    assert!(o.status.success(), "nvcc failed: {}", String::from_utf8_lossy(&o.stderr));
    let data = std::fs::read(&path).unwrap();
    let cubin = Cubin::parse(&data).unwrap();
    assert!(cubin.notices.is_empty(), "{:?}", cubin.notices);

    // Every instruction's chain is the one nvdisasm -gi prints (nvcc's DW_LNE 0x90 decoded).
    let chains = nvdisasm_chains(&nvdisasm, &path);
    let f = &cubin.functions[0];
    let mut inlined = 0;
    for (name, offset, theirs) in &chains {
        assert_eq!(name, &f.name);
        let ours: Vec<(String, u32)> = cubin.chain_at(f, *offset).into_iter().map(|l| (l.file, l.line)).collect();
        assert_eq!(&ours, theirs, "+{offset:#x}");
        inlined += usize::from(ours.len() > 1);
    }
    assert!(inlined >= 3, "the program inlines three calls; {inlined} instructions had a chain");

    // The lines, from the texts: the user's calls, and the header's definitions of the
    // intrinsics in the toolkit nvcc compiled with (its `include/` beside `bin/`).
    let header = nvcc.parent().unwrap().join("../include/sm_32_intrinsics.hpp");
    let header_text = std::fs::read_to_string(&header).unwrap();
    let defined = |needle: &str| line_of(&header_text, needle);
    let (ldcs, stcs, ldg) = (
        defined("float __ldcs(const float *ptr)"),
        defined("void __stcs(float *ptr, float value)"),
        defined("float __ldg(const float *ptr)"),
    );
    let user = |needle: &str| line_of(app, needle);
    let expected: std::collections::BTreeSet<(String, u32, Option<Place>)> = [
        ("app.cu", user("__ldcs("), Some(("sm_32_intrinsics.hpp", ldcs))),
        ("app.cu", user("__stcs("), Some(("sm_32_intrinsics.hpp", stcs))),
        // `__ldg` inside the user's own helper: the helper's line is the user's.
        ("helpers.cuh", line_of(helper, "__ldg("), Some(("sm_32_intrinsics.hpp", ldg))),
        ("app.cu", user("twice_ldg("), None),
    ]
    .into_iter()
    .map(|(f, l, via)| (f.to_string(), l, via.map(|(v, n)| (v.to_string(), n))))
    .collect();
    // Every global load and store (by nvdisasm's SASS), where `lines` counts it.
    let listing = Nvdisasm { path: nvdisasm.clone() }.disassemble(&path).unwrap();
    let name = |p: &str| p.rsplit('/').next().unwrap().to_string();
    let got: std::collections::BTreeSet<_> = listing[&f.name]
        .iter()
        .filter(|i| i.text.starts_with("LDG") || i.text.starts_with("STG"))
        .map(|i| {
            let a = cubin.attributed(f, i.offset).unwrap();
            (name(&a.at.file), a.at.line, a.via.map(|v| (name(&v.file), v.line)))
        })
        .collect();
    assert_eq!(got, expected);
}
