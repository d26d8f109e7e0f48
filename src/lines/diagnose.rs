//! What the numbers of one row say, in coalescing's own terms: which waste it is,
//! why it happens, and the fix. Pure: counters in, a [`Finding`] out.
//!
//! A warp's 32 lanes reading `b` bytes each ideally touch `b` 32-byte sectors per request
//! (4 for 4-byte loads). 32 sectors per request means every lane in its own sector; one sector
//! more than ideal means the 128 bytes straddle a boundary. Shared memory has 32 banks: 32
//! wavefronts for an ideal 1 is a 32-way bank conflict.

use super::instructions::Op;

/// The three kinds of waste a line can be flagged for (SARIF rules, gate rules).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Waste {
    UncoalescedLoad,
    UncoalescedStore,
    BankConflict,
}

impl Waste {
    pub const ALL: [Waste; 3] = [Waste::UncoalescedLoad, Waste::UncoalescedStore, Waste::BankConflict];

    /// Stable rule id (SARIF `ruleId`).
    pub fn id(self) -> &'static str {
        match self {
            Waste::UncoalescedLoad => "CP1001",
            Waste::UncoalescedStore => "CP1002",
            Waste::BankConflict => "CP2001",
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Waste::UncoalescedLoad => "uncoalesced-global-load",
            Waste::UncoalescedStore => "uncoalesced-global-store",
            Waste::BankConflict => "shared-memory-bank-conflict",
        }
    }

    pub fn title(self) -> &'static str {
        match self {
            Waste::UncoalescedLoad => "Uncoalesced global load",
            Waste::UncoalescedStore => "Uncoalesced global store",
            Waste::BankConflict => "Shared-memory bank conflict",
        }
    }

    pub fn description(self) -> &'static str {
        match self {
            Waste::UncoalescedLoad | Waste::UncoalescedStore => {
                "A global memory instruction on this line touches more 32-byte L2 sectors per request than \
                 its access width needs: the warp's lanes are spread over memory, and the bytes fetched \
                 around the ones used are wasted bandwidth."
            }
            Waste::BankConflict => {
                "A shared-memory instruction on this line needs more wavefronts than ideal: several lanes \
                 hit different words of the same bank and are served one after another."
            }
        }
    }

    pub fn help(self) -> &'static str {
        match self {
            Waste::UncoalescedLoad | Waste::UncoalescedStore => {
                "Make consecutive threads touch consecutive addresses: index the fastest-varying \
                 (innermost) dimension with threadIdx.x, walk rows of a row-major array, not columns; \
                 transpose through shared memory or change the layout; align the base to 128 bytes."
            }
            Waste::BankConflict => {
                "Pad the inner dimension of the shared tile by one word ([N][33] instead of [N][32]) so a \
                 column of it falls in 32 different banks; a broadcast (all lanes, one word) is free."
            }
        }
    }
}

/// One diagnosis: the waste (if the numbers say it is one) and the sentence for people.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Finding {
    pub waste: Option<Waste>,
    pub text: String,
}

/// What a row's diagnosis reads: its access kind and the per-line metrics derived from its
/// counters (`metrics.toml`'s `[line.*]`).
#[derive(Debug, Clone, Default)]
pub(super) struct Numbers {
    pub op: Option<Op>,
    pub access_bytes: Option<u32>,
    pub instructions: u32,
    /// The row's instructions ran more often than the kernel's first one (more than once per warp).
    pub in_loop: bool,
    pub sectors_per_request: Option<f64>,
    pub ideal_sectors_per_request: Option<f64>,
    pub lines_per_request: Option<f64>,
    pub active_lanes: Option<f64>,
    pub wavefronts_per_ideal: Option<f64>,
}

/// Within this fraction of a whole number, a ratio counts as that number.
const SLACK: f64 = 0.05;

/// The diagnosis of a row, or `None` where its numbers are ideal or missing.
pub(super) fn diagnose(n: &Numbers) -> Option<Finding> {
    match n.op? {
        op if op.is_global() => global(n, op),
        _ => shared(n),
    }
}

/// "4-byte global stores", "global loads".
fn accesses(n: &Numbers, op: Op) -> String {
    let width = n.access_bytes.map(|b| format!("{b}-byte ")).unwrap_or_default();
    let plural = match op {
        Op::GlobalStore => "global stores",
        Op::GlobalAtomic => "global atomics",
        Op::Global => "global accesses",
        _ => "global loads",
    };
    format!("{width}{plural}")
}

fn global(n: &Numbers, op: Op) -> Option<Finding> {
    let spr = n.sectors_per_request?;
    // 32 lanes of `b` bytes each fill `b` sectors of 32 bytes (4 for 4-byte accesses).
    let width_ideal = n.access_bytes.map(|b| f64::from(b).max(1.0));
    // ncu's ideal for these addresses, never 0: an ideal below half a sector per request is
    // no ideal (a row whose requests moved nothing), so the width's stands in.
    let ideal = n.ideal_sectors_per_request.filter(|&i| i >= 0.5).or(width_ideal)?;
    let what = accesses(n, op);
    let kind = if op == Op::GlobalStore { Waste::UncoalescedStore } else { Waste::UncoalescedLoad };
    if spr > ideal * (1.0 + SLACK) && spr - ideal > 0.5 {
        let head = format!("{spr:.1} sectors/request on {what} (ideal {ideal:.1})");
        // One 128-byte line holds 4 sectors: the lines a perfectly coalesced request touches.
        let ideal_lines = (ideal / 4.0 - SLACK).ceil().max(1.0);
        let lines = n.lines_per_request;
        let text = match lines {
            _ if spr - ideal <= 1.0 + SLACK && lines.is_none_or(|l| l <= ideal_lines + 1.0 + SLACK) => format!(
                "{head}: one sector more than ideal per request{} — a misaligned base (an odd offset, a slice like \
                 x[1:]); align the base to 128 bytes",
                lines.map(|l| format!(", {l:.1} lines/request")).unwrap_or_default()
            ),
            Some(l) if l >= 8.0 && spr / l <= 1.02 && (spr - spr.round()).abs() > 0.01 * spr => format!(
                "{head}: scattered — {l:.1} different 128-byte lines per request, hardly two lanes in one: a random \
                 gather (indices from a table or a hash); sort or bucket the indices, or gather whole rows (16 B or \
                 more per lane)"
            ),
            Some(l) if l >= 32.0 * (1.0 - SLACK) => format!(
                "{head}: every lane in its own 128-byte line ({l:.1} lines/request) — a column walk, a stride of \
                 128 B or more, or a transposed layout; make consecutive threads touch consecutive addresses (walk \
                 rows, or transpose through shared memory)"
            ),
            Some(l) if l > ideal_lines * (1.0 + SLACK) => format!(
                "{head}: lanes in {l:.1} different 128-byte lines per request (ideal {ideal_lines:.0}) — a strided or \
                 column walk, lanes about {:.0}× the access width apart, {:.0}% of each fetched sector used; make \
                 consecutive threads touch consecutive addresses",
                spr / ideal,
                100.0 * ideal / spr
            ),
            _ => format!(
                "{head}: {:.0}% of each fetched sector used — lanes about {:.0}× the access width apart (a stride or \
                 a gather); make consecutive threads touch consecutive addresses",
                100.0 * ideal / spr,
                spr / ideal
            ),
        };
        return Some(Finding { waste: Some(kind), text });
    }
    let partial = n.active_lanes.filter(|&l| l < 32.0 * (1.0 - SLACK));
    if let (Some(w), true) = (width_ideal, ideal < width_ideal.unwrap_or(0.0) * (1.0 - SLACK)) {
        let text = match partial {
            Some(lanes) => format!(
                "{spr:.1} sectors/request on {what} (ideal {ideal:.1}, {w:.0} for a full warp): {lanes:.1} active lanes \
                 per request — partial warps (a bounds check, a block size that is not a multiple of 32, or divergence)"
            ),
            None => format!(
                "{spr:.1} sectors/request on {what} (ideal {ideal:.1}): lanes share addresses — a broadcast, not waste"
            ),
        };
        return Some(Finding { waste: None, text });
    }
    // Coalesced, but narrow and repeated: the fix is to vectorise.
    if n.access_bytes.is_some_and(|b| b < 16) && (n.in_loop || n.instructions >= 4) && op != Op::GlobalAtomic {
        let b = n.access_bytes.unwrap_or(4);
        return Some(Finding {
            waste: None,
            text: format!(
                "coalesced {what} repeated in a loop: vectorise to 16 bytes (float4, or reinterpret_cast with a \
                 16-byte aligned pointer and index) for {}× fewer instructions",
                16 / b.max(1)
            ),
        });
    }
    None
}

fn shared(n: &Numbers) -> Option<Finding> {
    let ways = n.wavefronts_per_ideal?;
    if ways <= 1.0 + SLACK {
        return None;
    }
    let what = match n.op {
        Some(Op::SharedStore) => "shared stores",
        Some(Op::SharedAtomic) => "shared atomics",
        _ => "shared loads",
    };
    let text = if ways >= 32.0 * (1.0 - SLACK) {
        format!(
            "{ways:.1} wavefronts per ideal one on {what}: a 32-way bank conflict (all lanes in one bank, different \
             words: a column of a [32][32] tile) — pad the inner dimension ([N][33])"
        )
    } else {
        format!(
            "{ways:.1} wavefronts per ideal one on {what}: a {:.0}-way bank conflict — pad the inner dimension or \
             change the stride so lanes fall in different banks",
            ways.round()
        )
    };
    Some(Finding { waste: Some(Waste::BankConflict), text })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn global(op: Op, bytes: u32, spr: f64, ideal: f64, lines: f64) -> Numbers {
        Numbers {
            op: Some(op),
            access_bytes: Some(bytes),
            instructions: 1,
            sectors_per_request: Some(spr),
            ideal_sectors_per_request: Some(ideal),
            lines_per_request: Some(lines),
            active_lanes: Some(32.0),
            ..Numbers::default()
        }
    }

    #[test]
    fn the_lessons_cases() {
        let column = diagnose(&global(Op::GlobalLoad, 4, 32.0, 4.0, 32.0)).unwrap();
        assert_eq!(column.waste, Some(Waste::UncoalescedLoad));
        assert!(column.text.contains("128 B or more") && column.text.contains("column walk"), "{}", column.text);
        let misaligned = diagnose(&global(Op::GlobalLoad, 4, 5.0, 4.0, 2.0)).unwrap();
        assert!(misaligned.text.contains("misaligned"), "{}", misaligned.text);
        let stride2 = diagnose(&global(Op::GlobalStore, 4, 8.0, 4.0, 2.0)).unwrap();
        assert_eq!(stride2.waste, Some(Waste::UncoalescedStore));
        assert!(stride2.text.contains("50%") && stride2.text.contains("global stores"), "{}", stride2.text);
        assert_eq!(diagnose(&global(Op::GlobalLoad, 4, 4.0, 4.0, 1.0)), None);
        let vector = diagnose(&Numbers { in_loop: true, ..global(Op::GlobalLoad, 4, 4.0, 4.0, 1.0) }).unwrap();
        assert!(vector.waste.is_none() && vector.text.contains("vectorise"), "{}", vector.text);
        assert_eq!(diagnose(&Numbers { in_loop: true, ..global(Op::GlobalLoad, 16, 16.0, 16.0, 4.0) }), None);
        let bank = Numbers { op: Some(Op::SharedLoad), wavefronts_per_ideal: Some(32.0), ..Numbers::default() };
        let b = diagnose(&bank).unwrap();
        assert!(b.waste == Some(Waste::BankConflict) && b.text.contains("32-way") && b.text.contains("[N][33]"));
    }

    /// The figures of issue 18: a naive conv2d's strided read and a naive transpose's column store.
    #[test]
    fn a_4x_excess_is_a_strided_walk_never_a_misaligned_base_and_a_store_is_called_a_store() {
        let conv = diagnose(&global(Op::GlobalLoad, 4, 18.1, 4.0, 16.5)).unwrap();
        assert!(conv.text.contains("16.5 different 128-byte lines") && conv.text.contains("strided"), "{}", conv.text);
        assert!(!conv.text.contains("misaligned") && conv.text.contains("(ideal 4.0)"), "{}", conv.text);
        let transpose = diagnose(&global(Op::GlobalStore, 4, 32.0, 4.0, 32.0)).unwrap();
        assert_eq!(transpose.waste, Some(Waste::UncoalescedStore));
        assert!(transpose.text.contains("global stores") && !transpose.text.contains("loads"), "{}", transpose.text);
    }

    #[test]
    fn gathers_broadcasts_and_partial_warps() {
        let gather = diagnose(&global(Op::GlobalLoad, 4, 27.3, 4.0, 27.2)).unwrap();
        assert!(gather.text.contains("random gather"), "{}", gather.text);
        let broadcast = diagnose(&global(Op::GlobalLoad, 4, 1.0, 1.0, 1.0)).unwrap();
        assert!(broadcast.waste.is_none() && broadcast.text.contains("broadcast"), "{}", broadcast.text);
        let partial =
            diagnose(&Numbers { active_lanes: Some(8.0), ..global(Op::GlobalLoad, 4, 1.0, 1.0, 1.0) }).unwrap();
        assert!(
            partial.text.contains("8.0 active lanes") && partial.text.contains("partial warps"),
            "{}",
            partial.text
        );
    }

    #[test]
    fn an_ideal_of_zero_is_no_ideal_and_missing_numbers_give_no_diagnosis() {
        let zero = diagnose(&global(Op::GlobalLoad, 4, 32.0, 0.0, 32.0)).unwrap();
        assert!(zero.text.contains("(ideal 4.0)"), "{}", zero.text);
        let mut n = global(Op::GlobalLoad, 4, 32.0, 4.0, 32.0);
        n.sectors_per_request = None;
        assert_eq!(diagnose(&n), None);
    }
}
