// SPDX-License-Identifier: GPL-2.0

//! An LLC as data for the SIS tests (test-only): which CPUs are busy,
//! which core each belongs to, where the task may run; every question a
//! scan asks (an idle test, a core's siblings) is counted, because what a
//! scan may ask is part of what the SIS rules promise.

extern crate std;

use core::cell::Cell;
use std::vec;
use std::vec::Vec;

use crate::sis_chain::{LlcView, SmtView};
use crate::sis_select::IdleView;

/// The LLC: CPUs `0..nbits`.
pub(crate) struct Llc {
    pub(crate) nbits: u32,
    pub(crate) busy: Vec<bool>,
    pub(crate) core_of: Vec<u32>,
    /// The CPUs the task may run on.
    pub(crate) cpus: Vec<u64>,
    /// The first thread of each core.
    pub(crate) cores: Vec<u64>,
    /// Whether [`LlcView::smt`] lends the cores' masks.
    pub(crate) knows_cores: bool,
    pub(crate) idle_asks: Cell<u32>,
    pub(crate) smt_asks: Cell<u32>,
}

/// The mask of the CPUs below `nbits` for which `set` holds.
pub(crate) fn mask(nbits: u32, set: impl Fn(u32) -> bool) -> Vec<u64> {
    let mut w = vec![0u64; nbits.div_ceil(64) as usize];
    for c in (0..nbits).filter(|&c| set(c)) {
        w[(c / 64) as usize] |= 1 << (c % 64);
    }
    w
}

impl Llc {
    /// CPU `c` busy where `busy[c]`, in core `core_of[c]`, allowed where
    /// `allowed[c]`.
    pub(crate) fn new(busy: Vec<bool>, core_of: Vec<u32>, allowed: Vec<bool>) -> Self {
        let nbits = busy.len() as u32;
        let cores = mask(nbits, |c| {
            (0..c).all(|d| core_of[d as usize] != core_of[c as usize])
        });
        Llc {
            nbits,
            cpus: mask(nbits, |c| allowed[c as usize]),
            busy,
            core_of,
            cores,
            knows_cores: true,
            idle_asks: Cell::new(0),
            smt_asks: Cell::new(0),
        }
    }

    /// `nbits` CPUs in cores of `smt` consecutive threads, the CPUs of
    /// `busy` busy, every CPU allowed; with `smt` 1 the view knows no
    /// cores.
    pub(crate) fn consecutive(nbits: u32, smt: u32, busy: &[u32]) -> Self {
        let mut b = vec![false; nbits as usize];
        for &c in busy {
            b[c as usize] = true;
        }
        let mut llc = Llc::new(
            b,
            (0..nbits).map(|c| c / smt).collect(),
            vec![true; nbits as usize],
        );
        llc.knows_cores = smt > 1;
        llc
    }

    /// The threads of `cpu`'s core.
    pub(crate) fn siblings(&self, cpu: u32) -> Vec<u64> {
        let core = self.core_of[cpu as usize];
        mask(self.nbits, |c| self.core_of[c as usize] == core)
    }
}

impl IdleView for Llc {
    fn idle(&self, cpu: u32) -> bool {
        self.idle_asks.set(self.idle_asks.get() + 1);
        !self.busy[cpu as usize]
    }
    fn allowed(&self, cpu: u32) -> bool {
        self.cpus[(cpu / 64) as usize] >> (cpu % 64) & 1 != 0
    }
}

/// The cores' masks, one at a time, as the kernel lends them.
pub(crate) struct Smt<'a>(&'a Llc, Vec<u64>);

impl SmtView for Smt<'_> {
    type Mask = [u64];
    fn siblings(&mut self, core: u32) -> &[u64] {
        self.0.smt_asks.set(self.0.smt_asks.get() + 1);
        self.1 = self.0.siblings(core);
        &self.1
    }
}

impl LlcView for Llc {
    type Mask = [u64];
    type Smt<'v> = Smt<'v>;
    fn cpus(&self) -> &[u64] {
        &self.cpus
    }
    fn cores(&self) -> &[u64] {
        &self.cores
    }
    fn smt(&self) -> Option<Smt<'_>> {
        self.knows_cores.then(|| Smt(self, Vec::new()))
    }
}
