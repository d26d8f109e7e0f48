//! Closed forms shared by the families whose addresses are affine in the lane and in the loop
//! indices (streaming, strided, vector, kv-layout, row/column sums): totals of a whole launch
//! from a few evaluations of [`unique_blocks_affine`], never a lane-by-lane replay.
//!
//! Two facts make them exact (the replay, `replay::replay`, is kept as their test oracle):
//!
//! * One instruction whose active lanes are a contiguous prefix `0..n` reading `width` bytes at
//!   `start + step * lane` touches `unique_blocks_affine(start, step, width, n, 32)` sectors.
//!   The union of a CTA's loads, when its lanes and iterations sweep one arithmetic progression
//!   (or a progression of contiguous ranges), is the same function of that progression.
//! * Those counts only depend on `start mod 32`: a translate by a multiple of 32 bytes keeps
//!   every sector count. Over `count` instructions (or CTAs) whose starts grow by `shift`, the
//!   residues repeat with period `32 / gcd(shift mod 32, 32)` (at most 32), so a sum over
//!   millions of CTAs or loop iterations is at most 32 evaluations ([`periodic`]).

use super::core::{ideal_sectors, unique_blocks_affine, SECTOR};
use super::replay::GlobalTotals;

/// Distinct 32-byte sectors of the `lanes` byte ranges `[start + i * step, … + width)`.
#[inline]
pub(super) fn sectors(start: u64, step: u64, width: u64, lanes: u64) -> u64 {
    unique_blocks_affine(start, step, width, lanes, SECTOR)
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// `Σ_{i < count} f(start + i * shift)` for an `f` whose value depends only on its argument
/// modulo 32 (a sector count): one evaluation per residue, each weighted by how often it
/// occurs. At most 32 calls of `f`, whatever `count`.
pub(super) fn periodic(count: u64, start: u64, shift: u64, f: impl Fn(u64) -> u64) -> u64 {
    let period = SECTOR / gcd(shift % SECTOR, SECTOR);
    let (full, rem) = (count / period, count % period);
    (0..period.min(count)).map(|i| f(start + i * shift) * (full + u64::from(i < rem))).sum()
}

/// Adds `count` instructions of `active` lanes × `bytes` that touch `sectors` sectors in all
/// (the sum over those instructions) to `t`.
pub(super) fn add_instructions(t: &mut GlobalTotals, count: u64, sectors: u64, active: u64, bytes: u64) {
    if count == 0 || active == 0 {
        return;
    }
    t.instructions += count;
    t.sectors += sectors;
    t.ideal_sectors += count * ideal_sectors(active as u32, bytes as u32);
    t.bytes_requested += count * active * bytes;
}

/// Whether one store instruction writing the contiguous bytes `[start, start + len)` leaves its
/// last or first sector partly written, counted as distinct sectors (0, 1 or 2).
pub(super) fn partial_contiguous(start: u64, len: u64) -> u64 {
    if len == 0 {
        return 0;
    }
    let end = start + len;
    let (first, last) = (start / SECTOR, (end - 1) / SECTOR);
    let first_partial = start % SECTOR != 0 || end < (first + 1) * SECTOR;
    let last_partial = end % SECTOR != 0;
    if first == last {
        u64::from(first_partial || last_partial)
    } else {
        u64::from(first_partial) + u64::from(last_partial)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn periodic_equals_the_plain_sum() {
        for shift in [0u64, 4, 12, 32, 100, 4096, 65_540] {
            for start in [0u64, 4, 20, 31] {
                for count in [0u64, 1, 7, 8, 33, 1000] {
                    let f = |a: u64| sectors(a, 12, 4, 32);
                    let plain: u64 = (0..count).map(|i| f(start + i * shift)).sum();
                    assert_eq!(periodic(count, start, shift, f), plain, "shift {shift} start {start} n {count}");
                }
            }
        }
    }

    #[test]
    fn partial_contiguous_cases() {
        assert_eq!(partial_contiguous(0, 128), 0);
        assert_eq!(partial_contiguous(0, 100), 1);
        assert_eq!(partial_contiguous(4, 128), 2);
        assert_eq!(partial_contiguous(4, 8), 1);
        assert_eq!(partial_contiguous(32, 32), 0);
        assert_eq!(partial_contiguous(0, 0), 0);
    }
}
