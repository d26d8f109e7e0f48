//! The driver shared by every pattern family: per-CTA accumulation of warp instructions, and
//! the replay of a whole launch from one representative CTA plus the CTAs that differ.
//!
//! **L1 reuse (what `l2_read_sectors` counts)**: the sectors L1 sends to L2 are the *distinct*
//! 32-byte load sectors of each CTA, summed over CTAs. A sector a CTA touches twice is assumed
//! to hit in L1 the second time (cold L1 at launch, no eviction within a CTA, no reuse *across*
//! CTAs, which may run on other SMs). An L1 miss on a sector already in flight counts as one
//! L2 read. This is the "reuse within the same CTA hits" approximation of docs/metric-facts.md
//! §1; it does not depend on the L2 fetch granularity.

use super::core::{
    chunks, ideal_sectors, ideal_wavefronts, partial_sectors, shared_wavefronts, Distinct, WarpAccess, SECTOR,
};

/// Totals of one kind of global instruction.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct GlobalTotals {
    pub instructions: u64,
    pub sectors: u64,
    pub ideal_sectors: u64,
    pub bytes_requested: u64,
}

/// Totals of one kind of shared instruction.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct SharedTotals {
    pub instructions: u64,
    pub wavefronts: u64,
    pub ideal_wavefronts: u64,
}

/// Everything the model counts over a set of CTAs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Totals {
    pub ld: GlobalTotals,
    pub st: GlobalTotals,
    pub lds: SharedTotals,
    pub sts: SharedTotals,
    /// Sum over CTAs of the distinct load sectors of the CTA.
    pub l2_read_sectors: u64,
    /// Sum over CTAs of the distinct sectors the CTA writes only partly in some store.
    pub partial_store_sectors: u64,
}

impl GlobalTotals {
    fn add(&mut self, o: &GlobalTotals, k: u64) {
        self.instructions += k * o.instructions;
        self.sectors += k * o.sectors;
        self.ideal_sectors += k * o.ideal_sectors;
        self.bytes_requested += k * o.bytes_requested;
    }
}

impl SharedTotals {
    fn add(&mut self, o: &SharedTotals, k: u64) {
        self.instructions += k * o.instructions;
        self.wavefronts += k * o.wavefronts;
        self.ideal_wavefronts += k * o.ideal_wavefronts;
    }
}

impl Totals {
    /// `self += k × o`.
    pub(crate) fn add(&mut self, o: &Totals, k: u64) {
        self.ld.add(&o.ld, k);
        self.st.add(&o.st, k);
        self.lds.add(&o.lds, k);
        self.sts.add(&o.sts, k);
        self.l2_read_sectors += k * o.l2_read_sectors;
        self.partial_store_sectors += k * o.partial_store_sectors;
    }
}

/// Accumulates the instructions of one CTA at a time.
#[derive(Default)]
pub(super) struct Cta {
    totals: Totals,
    ld_sectors: Vec<u64>,
    st_partial: Vec<u64>,
    scratch: Vec<u64>,
    partial: Vec<u64>,
    distinct: Distinct,
}

impl Cta {
    fn global(&mut self, w: &WarpAccess) -> Option<u64> {
        if w.mask == 0 {
            // No active lane: the instruction is branched around (not issued, not counted).
            return None;
        }
        chunks(w, SECTOR, &mut self.scratch);
        Some(self.scratch.len() as u64)
    }

    /// One global load instruction (LDG) of a warp.
    pub(super) fn ld(&mut self, w: &WarpAccess) {
        let Some(sectors) = self.global(w) else { return };
        let t = &mut self.totals.ld;
        t.instructions += 1;
        t.sectors += sectors;
        t.ideal_sectors += ideal_sectors(w.active(), w.bytes);
        t.bytes_requested += u64::from(w.active()) * u64::from(w.bytes);
        self.ld_sectors.extend_from_slice(&self.scratch);
    }

    /// One global store instruction (STG) of a warp.
    pub(super) fn st(&mut self, w: &WarpAccess) {
        let Some(sectors) = self.global(w) else { return };
        let t = &mut self.totals.st;
        t.instructions += 1;
        t.sectors += sectors;
        t.ideal_sectors += ideal_sectors(w.active(), w.bytes);
        t.bytes_requested += u64::from(w.active()) * u64::from(w.bytes);
        if partial_sectors(w, &self.scratch, &mut self.partial) > 0 {
            self.st_partial.extend_from_slice(&self.partial);
        }
    }

    fn shared(w: &WarpAccess, t: &mut SharedTotals) {
        if w.mask == 0 {
            return;
        }
        t.instructions += 1;
        t.wavefronts += shared_wavefronts(w);
        t.ideal_wavefronts += ideal_wavefronts(w.active(), w.bytes);
    }

    /// One shared load instruction (LDS); addresses are byte offsets into shared memory.
    pub(super) fn lds(&mut self, w: &WarpAccess) {
        Self::shared(w, &mut self.totals.lds);
    }

    /// One shared store instruction (STS).
    pub(super) fn sts(&mut self, w: &WarpAccess) {
        Self::shared(w, &mut self.totals.sts);
    }

    /// Closes the current CTA and returns its totals.
    pub(super) fn finish(&mut self) -> Totals {
        let mut t = std::mem::take(&mut self.totals);
        t.l2_read_sectors = self.distinct.count(&self.ld_sectors);
        t.partial_store_sectors = self.distinct.count(&self.st_partial);
        self.ld_sectors.clear();
        self.st_partial.clear();
        t
    }
}

/// A kernel the model can replay CTA by CTA.
pub(super) trait Kernel: Sync {
    /// CTAs in the launch (linearised, x fastest).
    fn ctas(&self) -> u64;
    /// How many leading CTAs are translates of CTA 0 by a multiple of 128 bytes in every buffer
    /// (so every per-instruction and per-CTA count is the same): they are replayed once.
    fn uniform_prefix(&self) -> u64;
    /// Emits every warp instruction of CTA `cta` into `c`.
    fn trace(&self, cta: u64, c: &mut Cta);
}

/// Totals of the whole launch: CTA 0 once, multiplied by the uniform prefix, then every other
/// CTA replayed exactly (on two threads when there are many).
pub(super) fn replay(k: &dyn Kernel) -> Totals {
    let ctas = k.ctas();
    let uniform = k.uniform_prefix().min(ctas);
    let mut total = Totals::default();
    let mut c = Cta::default();
    if uniform > 0 {
        k.trace(0, &mut c);
        let t = c.finish();
        total.add(&t, uniform);
    }
    let rest = ctas - uniform;
    if rest < 4096 {
        for cta in uniform..ctas {
            k.trace(cta, &mut c);
            total.add(&c.finish(), 1);
        }
    } else {
        let mid = uniform + rest / 2;
        let run = |lo: u64, hi: u64| {
            let mut c = Cta::default();
            let mut t = Totals::default();
            for cta in lo..hi {
                k.trace(cta, &mut c);
                t.add(&c.finish(), 1);
            }
            t
        };
        let (a, b) = std::thread::scope(|s| {
            let h = s.spawn(|| run(uniform, mid));
            let b = run(mid, ctas);
            (h.join().expect("model worker panicked"), b)
        });
        total.add(&a, 1);
        total.add(&b, 1);
    }
    total
}

/// Every CTA traced, none assumed a translate of another: the oracle the closed forms and the
/// uniform-prefix shortcut of [`replay`] are tested against on random shapes.
#[cfg(test)]
pub(super) fn replay_every_cta(k: &dyn Kernel) -> Totals {
    let mut total = Totals::default();
    let mut c = Cta::default();
    for cta in 0..k.ctas() {
        k.trace(cta, &mut c);
        total.add(&c.finish(), 1);
    }
    total
}
