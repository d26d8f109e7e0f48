//! The line tables of a cubin: SASS offset within a kernel → (file, line), read in Rust.
//!
//! A cubin built with `-lineinfo` (or `-G`) has `.debug_line`, a DWARF line program whose
//! addresses are offsets into each function's `.text.<name>` section, one sequence per function.
//! Every function's sequence starts at address 0; which function a sequence belongs to is only in
//! `.rel.debug_line`, a relocation of the sequence's `DW_LNE_set_address` operand against the
//! function's symbol. So the reader applies that relocation as a tag in the address's high bits
//! (see `Tags`) and splits the rows by tag. (`.nv_debug_line_sass` is the same kind of program
//! but maps SASS to lines of the embedded PTX, which is not what a review wants.)
//!
//! An instruction takes the row at the greatest address at or before its offset in its
//! function's sequence (the first of several at one address, as ncu does). Anything malformed is
//! a notice, never a panic.
//!
//! Inlining: nvcc (11.x to 13.x, with `-lineinfo`) precedes a row of inlined code with an
//! extended opcode of its own, `DW_LNE 0x90`, whose operands are two ULEB128s: the 1-based
//! index, within the sequence, of the row of its call site (0: not inlined), and the callee's
//! name as an offset into `.debug_str`. Several rows at one address are that chain written
//! outermost first, so the last row at an address is where the instruction was made, and its
//! call sites follow from it (what `nvdisasm -gi` prints). An access made inside a library
//! (`__ldg` in `sm_32_intrinsics.hpp`, CUTLASS's `cp_async`) is put on the user's line that
//! called it, the library's line kept beside it ([`Cubin::attributed`], the rule of
//! [`super::frames`]).

use std::collections::HashMap;

use gimli::{EndianSlice, LittleEndian, Reader as _, Relocate, RelocateReader};
use object::elf;
use object::read::elf::{FileHeader, SectionHeader, Sym as _};

use super::frames::{attribute, Attributed};

/// Where the tag of a relocated address starts: SASS offsets stay far below 2^40.
const TAG_SHIFT: u32 = 40;

/// nvcc's extended opcode that says which row a row of inlined code was called from.
const DW_LNE_NV_INLINED_AT: u8 = 0x90;

/// A function's rows: (offset, index into its frames), sorted by offset.
#[derive(Debug, Clone, Default)]
pub struct Function {
    /// The function's (mangled) name.
    pub name: String,
    /// Size of the function's SASS in bytes, from its `.text.` section (0 when unknown).
    pub size: u64,
    rows: Vec<(u64, u32)>,
    /// Every row's place, in line-program order: file index into [`Cubin::files`], line, and
    /// the frame of its call site if it is inlined code.
    frames: Vec<Frame>,
}

/// One row's place: file index, line, and its call site's frame (an index into the
/// function's frames), if the row is inlined code.
#[derive(Debug, Clone, Copy)]
struct Frame {
    file: u32,
    line: u32,
    caller: Option<u32>,
}

impl Function {
    /// Whether the line table has rows for this function.
    pub fn has_lines(&self) -> bool {
        !self.rows.is_empty()
    }
}

/// One source location.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Location {
    /// The source file.
    pub file: String,
    /// The line in it (1-based).
    pub line: u32,
}

/// What a cubin says about its functions and their lines.
#[derive(Debug, Clone, Default)]
pub struct Cubin {
    /// Every function with a `.text.` section.
    pub functions: Vec<Function>,
    /// The line table's file names, by index.
    pub files: Vec<String>,
    /// Why some or all line info is missing (bad tables, no `-lineinfo`); empty when all is well.
    pub notices: Vec<String>,
}

/// The cubin could not be read at all (not an ELF, truncated headers).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotACubin(pub String);

impl std::fmt::Display for NotACubin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl Cubin {
    /// Read the functions and line tables of `data`. A readable ELF without (or with broken)
    /// line tables is `Ok` with notices; only an unreadable ELF is an error.
    pub fn parse(data: &[u8]) -> Result<Cubin, NotACubin> {
        let bad = |what: &str, e: object::read::Error| {
            NotACubin(format!("the kernel's cubin is not a readable ELF ({what}: {e})"))
        };
        let header = elf::FileHeader64::<object::Endianness>::parse(data).map_err(|e| bad("header", e))?;
        let endian = header.endian().map_err(|e| bad("endianness", e))?;
        let sections = header.sections(endian, data).map_err(|e| bad("section table", e))?;
        let mut cubin = Cubin::default();

        // Functions: every `.text.<name>` section, by name, with its size.
        let mut by_name: HashMap<String, usize> = HashMap::new();
        for s in sections.iter() {
            let Ok(name) = sections.section_name(endian, s) else { continue };
            if let Some(f) = name.strip_prefix(b".text.") {
                let f = String::from_utf8_lossy(f).into_owned();
                by_name.insert(f.clone(), cubin.functions.len());
                cubin.functions.push(Function { name: f, size: s.sh_size(endian), ..Function::default() });
            }
        }

        let Some((_, line_section)) = sections.section_by_name(endian, b".debug_line") else {
            cubin.notices.push(
                "the kernel was built without `-lineinfo`: its cubin has no line table, so rows are SASS \
                 instructions, not source lines (rebuild with `nvcc -lineinfo`)"
                    .into(),
            );
            return Ok(cubin);
        };
        let Ok(lines) = line_section.data(endian, data) else {
            cubin.notices.push("the cubin's `.debug_line` points outside the file: no source lines".into());
            return Ok(cubin);
        };

        // Relocations of `.debug_line` (REL before sm_90, RELA from it): operand offset →
        // the function symbol, whose section is the function.
        let mut tags = Tags::default();
        let symbols = sections.symbols(endian, data, elf::SHT_SYMTAB).ok();
        // (function index + 1, the symbol's value): a cubin as ncu keeps it may be loaded, its
        // relocations applied, so the table holds `value + offset` and symbols their addresses.
        let function_of = |sym: u32| {
            let symbols = symbols.as_ref()?;
            let s = symbols.symbol(object::SymbolIndex(sym as usize)).ok()?;
            let name = symbols.symbol_name(endian, s).ok()?;
            by_name.get(&*String::from_utf8_lossy(name)).map(|&f| (f as u64 + 1, s.st_value(endian)))
        };
        for s in sections.iter() {
            match sections.section_name(endian, s) {
                Ok(b".rel.debug_line") => match s.rel(endian, data) {
                    Ok(Some((rels, _))) => tags.0.extend(rels.iter().filter_map(|r| {
                        let (f, value) = function_of(r.r_sym(endian))?;
                        Some((r.r_offset.get(endian) as usize, f, 0, value))
                    })),
                    _ => cubin.notices.push("the cubin's `.rel.debug_line` is unreadable".into()),
                },
                Ok(b".rela.debug_line") => match s.rela(endian, data) {
                    Ok(Some((relas, _))) => tags.0.extend(relas.iter().filter_map(|r| {
                        let (f, value) = function_of(r.r_sym(endian, false))?;
                        Some((r.r_offset.get(endian) as usize, f, r.r_addend.get(endian), value))
                    })),
                    _ => cubin.notices.push("the cubin's `.rela.debug_line` is unreadable".into()),
                },
                _ => {}
            }
        }
        tags.0.sort_unstable();
        if let Err(e) = read_program(lines, &tags, &mut cubin) {
            cubin.notices.push(format!("the cubin's line table is malformed ({e}): rows kept up to that point"));
        }
        for f in &mut cubin.functions {
            f.rows.sort_by_key(|r| r.0);
        }
        Ok(cubin)
    }

    /// The function a kernel's counters belong to: its exact symbol, else the only function
    /// whose mangled name holds the kernel's base name (`vecAdd` in `_Z6vecAddIfEvPT_…`), else
    /// the only function there is.
    pub fn function(&self, kernel: &str) -> Option<&Function> {
        if let Some(f) = self.functions.iter().find(|f| f.name == kernel) {
            return Some(f);
        }
        let base = base_name(kernel);
        let needle = format!("{}{base}", base.len());
        let mut hits =
            self.functions.iter().filter(|f| !base.is_empty() && (f.name == base || f.name.contains(&needle)));
        match (hits.next(), hits.next()) {
            (Some(f), None) => Some(f),
            _ if self.functions.len() == 1 => self.functions.first(),
            _ => None,
        }
    }

    /// The source location of SASS offset `offset` in `f`, if its line table has one. Where
    /// several rows share the address (an inlined call and the line inside it), the first one
    /// counts, as in ncu's source view (`ncu_report`'s `source_info`); nvdisasm prints the last.
    pub fn location(&self, f: &Function, offset: u64) -> Option<Location> {
        self.locations_at(f, offset).into_iter().next()
    }

    /// Every row at the address that covers `offset`, in line-program order.
    pub fn locations_at(&self, f: &Function, offset: u64) -> Vec<Location> {
        self.rows_at(f, offset).iter().filter_map(|&(_, frame)| self.place(f, frame)).collect()
    }

    /// The inlining chain of the instruction at `offset`, innermost first: the last row at its
    /// address (where it was made) and each call site outwards (as `nvdisasm -gi` prints them).
    pub fn chain_at(&self, f: &Function, offset: u64) -> Vec<Location> {
        let mut chain = Vec::new();
        let mut frame = self.rows_at(f, offset).last().map(|r| r.1);
        // A call site comes before its callee in the program: the walk ends even on a bad table.
        while let Some(i) = frame.filter(|_| chain.len() < f.frames.len()) {
            chain.extend(self.place(f, i));
            frame = f.frames.get(i as usize).and_then(|fr| fr.caller);
        }
        chain
    }

    /// Where the instruction at `offset` is counted: the user's line that called a library,
    /// with the library's line beside it, when it was made inside one (see
    /// [`super::frames`]); else its [`Cubin::location`].
    pub fn attributed(&self, f: &Function, offset: u64) -> Option<Attributed<Location>> {
        match attribute(&self.chain_at(f, offset), |l: &Location| l.file.as_str()) {
            Some(a) if a.via.is_some() => Some(a),
            _ => self.location(f, offset).map(|at| Attributed { at, via: None }),
        }
    }

    /// The rows at the address that covers `offset`.
    fn rows_at<'f>(&self, f: &'f Function, offset: u64) -> &'f [(u64, u32)] {
        let Some(last) = f.rows.partition_point(|r| r.0 <= offset).checked_sub(1) else { return &[] };
        if f.size > 0 && offset >= f.size {
            return &[];
        }
        let address = f.rows[last].0;
        let first = f.rows.partition_point(|r| r.0 < address);
        &f.rows[first..=last]
    }

    /// A frame's file and line (`None` for line 0, which is no line).
    fn place(&self, f: &Function, frame: u32) -> Option<Location> {
        let fr = f.frames.get(frame as usize)?;
        Some(Location { file: self.files.get(fr.file as usize)?.clone(), line: fr.line }).filter(|l| l.line > 0)
    }
}

/// The bare function name of a demangled or plain kernel name: `void ns::vecAdd<float>(T1 *, …)`
/// → `vecAdd`.
pub fn base_name(kernel: &str) -> &str {
    let mut depth = 0i32;
    let mut end = kernel.len();
    // The parameter list is the last top-level `(`; templates are skipped by depth.
    for (i, c) in kernel.char_indices().rev() {
        match c {
            ')' | '>' => depth += 1,
            '(' | '<' => {
                depth -= 1;
                if depth == 0 && c == '(' {
                    end = i;
                    break;
                }
            }
            _ => {}
        }
    }
    let mut head = &kernel[..end];
    // Drop template arguments of the function itself.
    if head.ends_with('>') {
        let mut d = 0i32;
        for (i, c) in head.char_indices().rev() {
            match c {
                '>' => d += 1,
                '<' => {
                    d -= 1;
                    if d == 0 {
                        head = &head[..i];
                        break;
                    }
                }
                _ => {}
            }
        }
    }
    let head = head.rsplit("::").next().unwrap_or(head);
    head.rsplit(' ').next().unwrap_or(head).trim()
}

/// `.rel(a).debug_line` as (operand offset, function index + 1, addend, symbol value), sorted;
/// the function is applied as the address's high bits, so every row says which function it
/// belongs to, and the address becomes an offset into the function.
#[derive(Debug, Clone, Default)]
struct Tags(Vec<(usize, u64, i64, u64)>);

impl Relocate for &Tags {
    fn relocate_address(&self, offset: usize, value: u64) -> gimli::Result<u64> {
        match self.0.binary_search_by_key(&offset, |t| t.0) {
            Ok(i) => {
                let (_, function, addend, symbol) = self.0[i];
                // Applied already (loaded: value = symbol + offset), or not (value = addend).
                let offset =
                    if symbol > 0 && value >= symbol { value - symbol } else { value.wrapping_add_signed(addend) };
                let offset = offset & ((1 << TAG_SHIFT) - 1);
                Ok((function << TAG_SHIFT) | offset)
            }
            Err(_) => Ok(value),
        }
    }

    fn relocate_offset(&self, _: usize, value: usize) -> gimli::Result<usize> {
        Ok(value)
    }
}

/// Walk every line program of the section (one per compilation unit, back to back). The rows
/// are gimli's (its `LineRow` runs each instruction); the walk is ours so that nvcc's
/// [`DW_LNE_NV_INLINED_AT`], which gimli passes over, is seen before the row it belongs to.
fn read_program(data: &[u8], tags: &Tags, cubin: &mut Cubin) -> gimli::Result<()> {
    let reader = RelocateReader::new(EndianSlice::new(data, LittleEndian), tags);
    let debug_line = gimli::DebugLine::from(reader);
    let mut offset = 0usize;
    let mut untagged = false;
    while offset < data.len() {
        let mut program = debug_line.program(gimli::DebugLineOffset(offset), 8, None, None)?;
        let header = program.header().clone();
        let unit_end = offset + header.unit_length() + if header.format() == gimli::Format::Dwarf64 { 12 } else { 4 };
        // File names of this unit → indices into cubin.files.
        let mut file_ids: HashMap<u64, u32> = HashMap::new();
        let mut instructions = header.instructions();
        let mut row = gimli::LineRow::new(&header);
        // As gimli's own row iterator: an address going backwards drops the sequence's rows
        // up to the next address (a tombstone).
        let mut tombstone = false;
        // The call-site row of the rows that follow (1-based within the sequence; 0: none).
        let mut inlined_at = 0u64;
        // The sequence's rows so far: (function, frame) of each, by 0-based index.
        let mut sequence: Vec<Option<(usize, u32)>> = Vec::new();
        while let Some(instruction) = instructions.next_instruction(&header)? {
            match &instruction {
                gimli::LineInstruction::SetAddress(a) => tombstone = *a < row.address() || *a == u64::MAX,
                gimli::LineInstruction::UnknownExtended(op, operands) if op.0 == DW_LNE_NV_INLINED_AT => {
                    inlined_at = operands.clone().read_uleb128().unwrap_or(0);
                }
                _ => {}
            }
            if !row.execute(instruction, &mut program)? {
                continue;
            }
            if row.end_sequence() {
                (tombstone, inlined_at) = (false, 0);
                sequence.clear();
                row.reset(&header);
                continue;
            }
            if tombstone {
                row.reset(&header);
                continue;
            }
            let tag = row.address() >> TAG_SHIFT;
            let Some(fi) = tag.checked_sub(1).map(|t| t as usize).filter(|&t| t < cubin.functions.len()) else {
                untagged = true;
                sequence.push(None);
                row.reset(&header);
                continue;
            };
            let file = match file_ids.get(&row.file_index()) {
                Some(&id) => id,
                None => {
                    let name = file_name(program.header(), row.file_index()).unwrap_or_else(|| "<unknown file>".into());
                    let id = match cubin.files.iter().position(|f| *f == name) {
                        Some(p) => p as u32,
                        None => {
                            cubin.files.push(name);
                            (cubin.files.len() - 1) as u32
                        }
                    };
                    file_ids.insert(row.file_index(), id);
                    id
                }
            };
            let line = row.line().map_or(0, |l| l.get().min(u32::MAX as u64) as u32);
            // A call site is an earlier row of the same function's sequence.
            let caller = (inlined_at as usize)
                .checked_sub(1)
                .and_then(|i| *sequence.get(i)?)
                .and_then(|(cf, frame)| (cf == fi).then_some(frame));
            let function = &mut cubin.functions[fi];
            let frame = function.frames.len() as u32;
            function.frames.push(Frame { file, line, caller });
            function.rows.push((row.address() & ((1 << TAG_SHIFT) - 1), frame));
            sequence.push(Some((fi, frame)));
            row.reset(&header);
        }
        if unit_end <= offset {
            break;
        }
        offset = unit_end;
    }
    if untagged {
        cubin.notices.push("some line-table rows name no function of the cubin and were left out".into());
    }
    Ok(())
}

/// `dir/name` of a file entry (DWARF 2–4 string forms; cubins carry no `.debug_line_str`).
fn file_name<R: gimli::Reader>(header: &gimli::LineProgramHeader<R>, index: u64) -> Option<String> {
    let entry = header.file(index)?;
    let text = |v: gimli::AttributeValue<R>| match v {
        gimli::AttributeValue::String(s) => s.to_string_lossy().ok().map(|c| c.into_owned()),
        _ => None,
    };
    let name = text(entry.path_name())?;
    // As ncu prints it: `int.jl`, not `./int.jl`; `a/./b` as `a/b`.
    let joined = match entry.directory(header).and_then(text) {
        Some(dir) if !dir.is_empty() && !name.starts_with('/') => format!("{}/{name}", dir.trim_end_matches('/')),
        _ => name,
    };
    let absolute = joined.starts_with('/');
    let parts: Vec<&str> = joined.split('/').filter(|p| !p.is_empty() && *p != ".").collect();
    Some(format!("{}{}", if absolute { "/" } else { "" }, parts.join("/")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_names() {
        assert_eq!(base_name("void vecAdd<float>(T1 *, T1 *, T1 *, int)"), "vecAdd");
        assert_eq!(base_name("init_data_kernel(int, double *)"), "init_data_kernel");
        assert_eq!(base_name("row_sums"), "row_sums");
        assert_eq!(base_name("void ns::k<(int)1>(Foo<(int)2>, int)"), "k");
    }

    #[test]
    fn not_elf_is_an_error_not_a_panic() {
        assert!(Cubin::parse(b"not an elf at all").is_err());
        assert!(Cubin::parse(&[]).is_err());
        let mut elf = vec![0x7f, b'E', b'L', b'F', 2, 1, 1];
        elf.resize(64, 0);
        // A header whose section table lies past the end of the file.
        elf[0x28] = 0xff;
        elf[0x3c] = 5;
        assert!(Cubin::parse(&elf).is_err());
    }
}
