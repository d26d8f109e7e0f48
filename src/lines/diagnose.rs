//! What the numbers of one row say, in the words of the coalescing lesson: which waste it is,
//! why it happens, and the fix. Pure: counters in, a [`Finding`] out.
//!
//! A warp's 32 lanes reading `b` bytes each ideally touch `b` 32-byte sectors per request
//! (4 for 4-byte loads). 32 sectors per request means every lane in its own sector; one sector
//! more than ideal means the 128 bytes straddle a boundary. Shared memory has 32 banks: 32
//! wavefronts for an ideal 1 is a 32-way bank conflict.

use super::instructions::Counters;

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

/// Within this fraction of a whole number, a ratio counts as that number.
const SLACK: f64 = 0.05;

/// Sectors per request of the row, and its ideal, where the report has them.
pub(super) fn sectors_per_request(c: &Counters) -> Option<(f64, Option<f64>)> {
    let r = c.requests.filter(|&r| r > 0.0)?;
    Some((c.sectors? / r, c.ideal_sectors.map(|i| i / r)))
}

/// The diagnosis of a row, or `None` where its numbers are ideal or missing. `in_loop`: the
/// row's instructions ran more often than the kernel's first instruction (more than once per warp).
pub(super) fn diagnose(c: &Counters, in_loop: bool) -> Option<Finding> {
    let mut parts: Vec<String> = Vec::new();
    let mut waste = None;
    if let Some(f) = global(c, in_loop) {
        waste = f.waste;
        parts.push(f.text);
    }
    if let Some(f) = shared(c) {
        waste = waste.or(f.waste);
        parts.push(f.text);
    }
    (!parts.is_empty()).then(|| Finding { waste, text: parts.join("; ") })
}

fn global(c: &Counters, in_loop: bool) -> Option<Finding> {
    if !c.is_global() {
        return None;
    }
    let (spr, ideal) = sectors_per_request(c)?;
    let bytes = c.access_bytes;
    // Lanes of `b` bytes each: ideal = b sectors of 32 B per 32 lanes (4 for 4-byte accesses).
    let ideal = ideal.filter(|&i| i > 0.0).or(bytes.map(|b| f64::from(b).max(1.0)))?;
    let kind = if c.is_store() && !c.is_load() { Waste::UncoalescedStore } else { Waste::UncoalescedLoad };
    let width = bytes.map(|b| format!("{b}-byte ")).unwrap_or_default();
    let what = if kind == Waste::UncoalescedStore { "stores" } else { "loads" };
    if spr > ideal * (1.0 + SLACK) {
        let text = if spr >= 32.0 * (1.0 - SLACK) && bytes.is_none_or(|b| b <= 4) {
            format!(
                "{spr:.1} sectors/request on {width}{what} (ideal {ideal:.0}): every lane in its own sector, lanes \
                 128 B or more apart — a column walk, a large stride or a transposed layout; make consecutive \
                 threads touch consecutive addresses"
            )
        } else if spr <= ideal + 1.0 + SLACK {
            format!(
                "{spr:.1} sectors/request on {width}{what} (ideal {ideal:.0}): one sector more than ideal — a misaligned \
                 base (an odd offset, a slice like x[1:]); align the base to 128 bytes"
            )
        } else {
            format!(
                "{spr:.1} sectors/request on {width}{what} (ideal {ideal:.0}): lanes about {:.0}× the access width apart, \
                 {:.0}% of each fetched sector used — a stride or a gather; make consecutive threads touch \
                 consecutive addresses",
                spr / ideal,
                100.0 * ideal / spr
            )
        };
        return Some(Finding { waste: Some(kind), text });
    }
    // Coalesced, but narrow and repeated: the lesson's "vectorise".
    if bytes.is_some_and(|b| b < 16) && (in_loop || c.instructions >= 4) && !c.is_shared() {
        let b = bytes.unwrap_or(4);
        return Some(Finding {
            waste: None,
            text: format!(
                "coalesced {b}-byte {what} repeated in a loop: vectorise to 16 bytes (float4, or reinterpret_cast with \
                 a 16-byte aligned pointer and index) for {}× fewer instructions",
                16 / b.max(1)
            ),
        });
    }
    None
}

fn shared(c: &Counters) -> Option<Finding> {
    let (w, i) = (c.shared_wavefronts?, c.shared_ideal_wavefronts.filter(|&i| i > 0.0)?);
    let ways = w / i;
    if ways <= 1.0 + SLACK {
        return None;
    }
    let text = if ways >= 32.0 * (1.0 - SLACK) {
        format!(
            "{ways:.1} shared wavefronts per ideal one: a 32-way bank conflict (all lanes in one bank, different \
             words: a column of a [32][32] tile) — pad the inner dimension ([N][33])"
        )
    } else {
        format!(
            "{ways:.1} shared wavefronts per ideal one: a {:.0}-way bank conflict — pad the inner dimension or \
             change the stride so lanes fall in different banks",
            ways.round()
        )
    };
    Some(Finding { waste: Some(Waste::BankConflict), text })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn global(access: u32, bytes: u32, req: f64, sectors: f64, ideal: f64) -> Counters {
        Counters {
            space: 4,
            access,
            access_bytes: Some(bytes),
            requests: Some(req),
            sectors: Some(sectors),
            ideal_sectors: Some(ideal),
            executions: Some(req),
            instructions: 1,
            ..Counters::default()
        }
    }

    #[test]
    fn the_lessons_cases() {
        let column = diagnose(&global(2, 4, 100.0, 3200.0, 400.0), false).unwrap();
        assert_eq!(column.waste, Some(Waste::UncoalescedLoad));
        assert!(column.text.contains("128 B or more apart") && column.text.contains("column walk"), "{}", column.text);
        let misaligned = diagnose(&global(2, 4, 100.0, 500.0, 400.0), false).unwrap();
        assert!(misaligned.text.contains("misaligned"), "{}", misaligned.text);
        let stride2 = diagnose(&global(4, 4, 100.0, 800.0, 400.0), false).unwrap();
        assert_eq!(stride2.waste, Some(Waste::UncoalescedStore));
        assert!(stride2.text.contains("50%"), "{}", stride2.text);
        assert_eq!(diagnose(&global(2, 4, 100.0, 400.0, 400.0), false), None);
        let vector = diagnose(&global(2, 4, 100.0, 400.0, 400.0), true).unwrap();
        assert!(vector.waste.is_none() && vector.text.contains("vectorise"), "{}", vector.text);
        assert_eq!(diagnose(&global(2, 16, 100.0, 1600.0, 1600.0), true), None);
        let bank = Counters {
            space: 16,
            access: 2,
            shared_wavefronts: Some(3200.0),
            shared_ideal_wavefronts: Some(100.0),
            ..Counters::default()
        };
        let b = diagnose(&bank, false).unwrap();
        assert!(b.waste == Some(Waste::BankConflict) && b.text.contains("32-way") && b.text.contains("[N][33]"));
    }

    #[test]
    fn missing_requests_give_no_diagnosis() {
        let mut c = global(2, 4, 0.0, 13.0, 4.0);
        c.requests = None;
        assert_eq!(diagnose(&c, false), None);
    }
}
