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
