// SPDX-License-Identifier: GPL-2.0

//! Which idle CPU `select_idle_cpu()` picks: the plain scan of "[RFC
//! 05/11] sched/fair: Re-arrange select_idle_cpu()" and the folded core
//! scan of "[RFC 07/11] sched/fair: Fold the select_idle_sibling() scans"
//! with "[RFC 08/11] sched/fair: Optimize SIS_FOLD" (Peter Zijlstra, with
//! Rohit Jain's suggestion, 2018).
//!
//! The folded scan visits up to `nr` cores of the LLC, starting at the
//! target's core and wrapping: a core whose threads are all idle wins at
//! once; otherwise the pick is the first allowed idle thread of the core
//! with the fewest busy threads (the first such core on a tie). RFC 08
//! runs it only while `has_idle_cores` is set and clears the hint after a
//! scan that found no fully idle core; the caller does both, from the
//! returned [`Scan::found_idle_core`].
//!
//! Idle state is asked lazily through [`IdleView`], because every answer
//! costs the kernel a remote runqueue cache line: a scan must only touch
//! the CPUs its budget lets it visit. CPU sets are bitmaps of `u64` words
//! (the kernel's `unsigned long` cpumask words on 64-bit), bit `i` of word
//! `i / 64` for CPU `i`, read through [`Words`] one word at a time as the
//! walk reaches it (`find_next_bit()` semantics: each step reads the word
//! it is in anew, so a bit cleared ahead of the walk is not visited).

use super::sis_chain::SmtView;
use super::words::Words;

/// What a scan asks about a CPU.
pub trait IdleView {
    /// The CPU is idle: nothing runnable, or only SCHED_IDLE tasks, and
    /// its core-scheduling cookie matches the task.
    fn idle(&self, cpu: u32) -> bool;
    /// The task may run on the CPU (its affinity mask).
    fn allowed(&self, cpu: u32) -> bool;
}

/// The outcome of a scan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scan {
    /// The CPU picked, if any.
    pub cpu: Option<u32>,
    /// Loop iterations, for the per-CPU cost (`time / loops`); counted as
    /// the RFC counts them, including the one that hits the budget.
    pub loops: u32,
    /// A core with every thread idle was found (the hint stays set).
    pub found_idle_core: bool,
}

/// Whether bit `bit` of `words` is set (a CPU in a cpumask): one word
/// read, `test_bit()`.
pub fn bit_is_set<W: Words + ?Sized>(words: &W, bit: u32) -> bool {
    let w = (bit / 64) as usize;
    (words.word(w) >> (bit % 64)) & 1 != 0
}

/// The first set bit in `[from, to)`, a word at a time, as
/// `find_next_bit()` does (a big machine's masks have thousands of bits).
/// Each word is read once per call, when the search reaches it.
fn next_set_bit<W: Words + ?Sized>(words: &W, from: u32, to: u32) -> Option<u32> {
    let mut bit = from;
    while bit < to {
        let w = (bit / 64) as usize;
        if w >= words.nwords() {
            return None;
        }
        let word = words.word(w) >> (bit % 64);
        if word != 0 {
            let found = bit.saturating_add(word.trailing_zeros());
            return (found < to).then_some(found);
        }
        // Next word boundary.
        bit = (bit | 63).saturating_add(1);
    }
    None
}

/// Iterator over the set bits of a range, see [`wrap_bits`].
pub struct SetBits<'a, W: Words + ?Sized> {
    words: &'a W,
    next: u32,
    end: u32,
    wrap_end: u32,
}

// By hand: a derive would ask `W: Clone`, which a slice is not; the
// iterator holds only a reference and positions.
impl<W: Words + ?Sized> Clone for SetBits<'_, W> {
    fn clone(&self) -> Self {
        SetBits {
            words: self.words,
            next: self.next,
            end: self.end,
            wrap_end: self.wrap_end,
        }
    }
}

// By hand, for the same reason: the positions say where the walk is; the
// words are whatever the memory holds now.
impl<W: Words + ?Sized> core::fmt::Debug for SetBits<'_, W> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("SetBits")
            .field("next", &self.next)
            .field("end", &self.end)
            .field("wrap_end", &self.wrap_end)
            .finish()
    }
}

impl<W: Words + ?Sized> Iterator for SetBits<'_, W> {
    type Item = u32;

    fn next(&mut self) -> Option<u32> {
        loop {
            if let Some(b) = next_set_bit(self.words, self.next, self.end) {
                self.next = b.saturating_add(1);
                return Some(b);
            }
            if self.wrap_end == 0 {
                return None;
            }
            // Second leg: from 0 up to the start. It covers bits the first
            // leg never reached, so no bit is yielded twice, whatever the
            // words hold by now.
            self.next = 0;
            self.end = self.wrap_end;
            self.wrap_end = 0;
        }
    }
}

/// The set bits of `words` below `nbits`, in `for_each_cpu_wrap()` order:
/// from `start` up, then from 0 to `start - 1`. Lazy: each step reads the
/// words from the last bit yielded on, when it is taken.
pub fn wrap_bits<W: Words + ?Sized>(words: &W, nbits: u32, start: u32) -> SetBits<'_, W> {
    let nbits = nbits.min(u32::try_from(words.nwords().saturating_mul(64)).unwrap_or(u32::MAX));
    let start = if nbits == 0 { 0 } else { start % nbits };
    SetBits {
        words,
        next: start,
        end: nbits,
        wrap_end: start,
    }
}

/// RFC 05's `__select_idle_cpu()`: the first allowed idle CPU of `span`,
/// visiting at most `nr` CPUs from `target`.
pub fn scan_cpus<V: IdleView, W: Words + ?Sized>(
    v: &V,
    span: &W,
    nbits: u32,
    target: u32,
    nr: u32,
) -> Scan {
    let mut loops = 0u32;
    for cpu in wrap_bits(span, nbits, target) {
        let over = loops >= nr;
        loops = loops.saturating_add(1);
        if over {
            return Scan {
                cpu: None,
                loops,
                found_idle_core: false,
            };
        }
        if v.allowed(cpu) && v.idle(cpu) {
            return Scan {
                cpu: Some(cpu),
                loops,
                found_idle_core: false,
            };
        }
    }
    Scan {
        cpu: None,
        loops,
        found_idle_core: false,
    }
}

/// RFC 07/08's `__select_idle_core()`: visits at most `nr` cores of
/// `cores` (the first thread of each core in the LLC) from `target`;
/// `smt` lends each core's SMT mask, one core at a time.
pub fn scan_cores_fold<V, W, S>(
    v: &V,
    cores: &W,
    nbits: u32,
    smt: &mut S,
    target: u32,
    nr: u32,
) -> Scan
where
    V: IdleView,
    W: Words + ?Sized,
    S: SmtView + ?Sized,
{
    let mut loops = 0u32;
    let mut best: Option<(u32, u32)> = None; // (busy threads, cpu)
    for core in wrap_bits(cores, nbits, target) {
        let over = loops >= nr;
        loops = loops.saturating_add(1);
        if over {
            break;
        }
        let mut busy = 0u32;
        let mut first_idle = None;
        // for (cpu = core; cpu < nr_cpumask_bits; cpu = cpumask_next(cpu, smt))
        for cpu in wrap_bits(smt.siblings(core), nbits, core).take_while(|&c| c >= core) {
            if !v.idle(cpu) {
                busy = busy.saturating_add(1);
            } else if first_idle.is_none() && v.allowed(cpu) {
                first_idle = Some(cpu);
            }
        }
        let Some(cpu) = first_idle else { continue };
        if busy == 0 {
            return Scan {
                cpu: Some(cpu),
                loops,
                found_idle_core: true,
            };
        }
        // Not `is_none_or`: the kernel's clippy holds 6.12's MSRV, 1.78.
        let fewer_busy = match best {
            None => true,
            Some((b, _)) => busy < b,
        };
        if fewer_busy {
            best = Some((busy, cpu));
        }
    }
    Scan {
        cpu: best.map(|(_, c)| c),
        loops,
        found_idle_core: false,
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use core::cell::Cell;
    use core::sync::atomic::AtomicU64;
    use proptest::prelude::*;
    use std::vec::Vec;

    use crate::words::counting::Virtual;

    /// The tests' SMT masks, one per CPU, which outlive the scan.
    struct PerCore<'a, E, T>(&'a [T], core::marker::PhantomData<E>);

    impl<'a, E, T: AsRef<[E]>> PerCore<'a, E, T> {
        fn new(masks: &'a [T]) -> Self {
            PerCore(masks, core::marker::PhantomData)
        }
    }

    impl<E, T: AsRef<[E]>> SmtView for PerCore<'_, E, T>
    where
        [E]: Words,
    {
        type Mask = [E];
        fn siblings(&mut self, core: u32) -> &[E] {
            self.0[core as usize].as_ref()
        }
    }

    // A search that starts in the last word below u32::MAX ends there: a
    // wrapping step to the next word would start over at bit 0 and
    // return a bit below `from` (a hand mutant survived before).
    #[test]
    fn search_at_the_top_does_not_wrap() {
        let v = Virtual {
            nwords: 1 << 26,
            f: |i| u64::from(i == 0),
        };
        assert_eq!(next_set_bit(&v, u32::MAX - 10, u32::MAX), None);
        assert_eq!(next_set_bit(&v, 0, u32::MAX), Some(0));
    }

    // A mask of more than 2^58 words holds more than u32::MAX bits, not
    // (2^58 + 1) * 64 mod 2^64 = 64 of them.
    #[test]
    fn huge_mask_bit_count_saturates() {
        let v = Virtual {
            nwords: (1 << 58) + 1,
            f: |_| u64::MAX,
        };
        assert_eq!(wrap_bits(&v, 1000, 900).take(200).last(), Some(99));
    }

    /// A machine as data: `idle[cpu]`, `allowed[cpu]`, `smt` threads per
    /// core numbered core-major (cpu = core * smt + thread).
    struct Machine {
        idle: [bool; 16],
        allowed: [bool; 16],
        smt: u32,
        ncpus: u32,
        sib: [[u64; 1]; 16],
    }

    impl IdleView for Machine {
        fn idle(&self, cpu: u32) -> bool {
            self.idle[cpu as usize]
        }
        fn allowed(&self, cpu: u32) -> bool {
            self.allowed[cpu as usize]
        }
    }

    impl Machine {
        fn new(ncpus: u32, smt: u32, busy: &[u32]) -> Self {
            let mut m = Machine {
                idle: [false; 16],
                allowed: [false; 16],
                smt,
                ncpus,
                sib: [[0]; 16],
            };
            for c in 0..ncpus {
                m.idle[c as usize] = !busy.contains(&c);
                m.allowed[c as usize] = true;
                let first = c / smt * smt;
                m.sib[c as usize] = [((1u64 << smt) - 1) << first];
            }
            m
        }
        fn span(&self) -> [u64; 1] {
            [(1u64 << self.ncpus) - 1]
        }
        fn cores(&self) -> [u64; 1] {
            let mut w = 0;
            for c in (0..self.ncpus).step_by(self.smt as usize) {
                w |= 1 << c;
            }
            [w]
        }
        fn fold(&self, target: u32, nr: u32) -> Scan {
            let cores = self.cores();
            scan_cores_fold(
                self,
                &cores,
                self.ncpus,
                &mut PerCore::new(&self.sib),
                target,
                nr,
            )
        }
    }

    #[test]
    fn wrap_order() {
        let w = [0b1011_0110u64];
        let v: Vec<u32> = wrap_bits(&w, 8, 4).collect();
        assert_eq!(v, [4, 5, 7, 1, 2]);
        assert_eq!(wrap_bits(&w, 0, 3).count(), 0);
        assert_eq!(wrap_bits(&[0u64; 0], 64, 3).count(), 0);
        let v: Vec<u32> = wrap_bits(&w, 8, 0).collect();
        assert_eq!(v, [1, 2, 4, 5, 7]);
    }

    // Word-at-a-time iteration equals the bit-at-a-time definition on
    // multi-word masks, for every start.
    #[test]
    fn wrap_equals_naive_on_big_masks() {
        let words = [0x8000_0000_0000_0001u64, 0, 0x0000_0100_0010_0000, 0xF];
        for nbits in [0, 1, 64, 65, 130, 200, 256, 300] {
            for start in 0..nbits.max(1) {
                let n = nbits.min(256);
                let st = if n == 0 { 0 } else { start % n };
                let naive: Vec<u32> = (st..n)
                    .chain(0..st)
                    .filter(|&b| (words[(b / 64) as usize] >> (b % 64)) & 1 != 0)
                    .collect();
                let fast: Vec<u32> = wrap_bits(&words, nbits, start).collect();
                assert_eq!(fast, naive, "nbits {nbits} start {start}");
            }
        }
    }

    // SMT2 x 4 cores: cores {0,1} {2,3} {4,5} {6,7}.
    #[test]
    fn smt2_idle_core_wins() {
        let m = Machine::new(8, 2, &[0, 1, 2, 5]);
        // From core 0: core 0 all busy, core 2 has 1 busy, core 4 one busy,
        // core 6 fully idle: 6.
        let s = m.fold(0, 4);
        assert_eq!(s.cpu, Some(6));
        assert!(s.found_idle_core);
        assert_eq!(s.loops, 4);
    }

    #[test]
    fn smt2_fewest_busy_when_no_idle_core() {
        let m = Machine::new(8, 2, &[0, 1, 2, 5, 6]);
        // Cores 2 and 4 have 1 busy each, core 6 has 1: the first of them
        // from the target wins: from 0, core 2's idle thread 3.
        let s = m.fold(0, 4);
        assert_eq!(s.cpu, Some(3));
        assert!(!s.found_idle_core);
        // From core 4: core 4's idle thread 4.
        assert_eq!(m.fold(4, 4).cpu, Some(4));
    }

    #[test]
    fn budget_limits_cores() {
        let m = Machine::new(8, 2, &[0, 1, 2, 3]);
        // nr = 2 visits cores 0 and 2 only: nothing idle there.
        let s = m.fold(0, 2);
        assert_eq!(s.cpu, None);
        assert_eq!(s.loops, 3, "the loop that hits the budget counts");
        assert_eq!(m.fold(0, 3).cpu, Some(4));
    }

    // SMT4 x 2 cores: {0..3} {4..7}.
    #[test]
    fn smt4_fewest_busy() {
        let m = Machine::new(8, 4, &[0, 1, 2, 4]);
        // Core 0: 3 busy, idle thread 3; core 4: 1 busy, idle thread 5.
        assert_eq!(m.fold(0, 2).cpu, Some(5));
        assert_eq!(m.fold(0, 1).cpu, Some(3), "only core 0 in budget");
    }

    // No SMT: every core is one CPU; fold equals the plain scan.
    #[test]
    fn no_smt_fold_is_plain_scan() {
        let m = Machine::new(8, 1, &[0, 1, 2, 5]);
        assert_eq!(m.fold(0, 8).cpu, Some(3));
        assert_eq!(scan_cpus(&m, &m.span(), 8, 0, 8).cpu, Some(3));
        assert_eq!(scan_cpus(&m, &m.span(), 8, 6, 8).cpu, Some(6));
    }

    #[test]
    fn affinity_excludes_idle_cpus() {
        let mut m = Machine::new(8, 2, &[0, 1]);
        // Only CPUs 1 and 7 allowed; core 2..6 fully idle but not allowed.
        for c in 0..8 {
            m.allowed[c] = c == 1 || c == 7;
        }
        // Core 6: thread 6 idle but not allowed, thread 7 allowed: core is
        // fully idle, pick 7.
        let s = m.fold(0, 4);
        assert_eq!(s.cpu, Some(7));
        // Plain scan: first allowed idle CPU from 2 is 7.
        assert_eq!(scan_cpus(&m, &m.span(), 8, 2, 8).cpu, Some(7));
        // Nothing allowed and idle: none, and the hint is not confirmed.
        for c in 0..8 {
            m.allowed[c] = c == 0;
        }
        let s = m.fold(0, 4);
        assert_eq!(
            s,
            Scan {
                cpu: None,
                loops: 4,
                found_idle_core: false
            }
        );
    }

    #[test]
    fn plain_scan_budget() {
        let m = Machine::new(8, 1, &[0, 1, 2, 3, 4]);
        assert_eq!(scan_cpus(&m, &m.span(), 8, 0, 5).cpu, None);
        assert_eq!(scan_cpus(&m, &m.span(), 8, 0, 6).cpu, Some(5));
    }

    fn atomics(w: &[u64]) -> Vec<AtomicU64> {
        w.iter().map(|&x| AtomicU64::new(x)).collect()
    }

    fn cells(w: &[u64]) -> Vec<Cell<u64>> {
        w.iter().map(|&x| Cell::new(x)).collect()
    }

    // The kernel's atomics and the simulator's cells give the scans the
    // same answers as plain words.
    #[test]
    fn scans_over_atomics_and_cells() {
        let m = Machine::new(8, 2, &[0, 1, 2, 5, 6]);
        let (span, cores) = (m.span(), m.cores());
        let sib_a: Vec<Vec<AtomicU64>> = m.sib.iter().map(|s| atomics(s)).collect();
        let sib_c: Vec<Vec<Cell<u64>>> = m.sib.iter().map(|s| cells(s)).collect();
        for target in 0..8 {
            for nr in 0..5 {
                let want = m.fold(target, nr);
                let a = scan_cores_fold(
                    &m,
                    &atomics(&cores)[..],
                    8,
                    &mut PerCore::new(&sib_a),
                    target,
                    nr,
                );
                let c = scan_cores_fold(
                    &m,
                    &cells(&cores)[..],
                    8,
                    &mut PerCore::new(&sib_c),
                    target,
                    nr,
                );
                assert_eq!(a, want, "target {target} nr {nr}");
                assert_eq!(c, want, "target {target} nr {nr}");
                let want = scan_cpus(&m, &span, 8, target, nr);
                assert_eq!(scan_cpus(&m, &atomics(&span)[..], 8, target, nr), want);
                assert_eq!(scan_cpus(&m, &cells(&span)[..], 8, target, nr), want);
            }
        }
    }

    // A walk over a mask that changes under it, as a cpumask other CPUs
    // write: every step reads the word it is in anew.
    #[test]
    fn cell_mask_changed_mid_walk() {
        // Bits 1, 5, 9, 70, 100 over two words, walked from 5.
        let mask = cells(&[(1 << 1) | (1 << 5) | (1 << 9), (1 << 6) | (1 << 36)]);
        let mut walk = wrap_bits(&mask[..], 128, 5);
        let mut seen = Vec::new();
        seen.extend(walk.next()); // 5
        seen.extend(walk.next()); // 9
                                  // Ahead of the walk: 70 cleared, 80 set, and 12 set in the word
                                  // being walked. Behind it: 6 set, which the first leg has passed
                                  // and the second leg (0 to 4) does not reach.
        mask[1].set(mask[1].get() & !(1 << 6) | (1 << 16));
        mask[0].set(mask[0].get() | (1 << 12) | (1 << 6));
        seen.extend(walk.by_ref());
        assert_eq!(seen, [5, 9, 12, 80, 100, 1]);
        let mut sorted = seen.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), seen.len(), "nothing visited twice");
    }

    proptest! {
        // The same walk over the three storages gives the same bits.
        #[test]
        fn wrap_bits_over_every_storage(w in proptest::collection::vec(any::<u64>(), 0..5),
                                        nbits in 0u32..400, start in any::<u32>()) {
            let plain: Vec<u32> = wrap_bits(&w[..], nbits, start).collect();
            let a: Vec<u32> = wrap_bits(&atomics(&w)[..], nbits, start).collect();
            let c: Vec<u32> = wrap_bits(&cells(&w)[..], nbits, start).collect();
            prop_assert_eq!(&a, &plain);
            prop_assert_eq!(&c, &plain);
            for &b in &plain {
                prop_assert!(bit_is_set(&atomics(&w)[..], b) && bit_is_set(&cells(&w)[..], b));
            }
        }

        // Whatever a writer does between steps, each bit is yielded at
        // most once, a bit is yielded only if it is set when the walk
        // reaches it (so one cleared ahead of the walk is not), and the
        // order stays for_each_cpu_wrap()'s: up from the start, then up
        // from 0 below it.
        #[test]
        fn changing_mask_each_bit_once(w in proptest::collection::vec(any::<u64>(), 1..4),
                                       start in 0u32..256,
                                       writes in proptest::collection::vec((0u32..256, any::<bool>()), 0..40)) {
            let nbits = 64 * w.len() as u32;
            let start = start % nbits;
            let mask = cells(&w);
            let mut seen: Vec<u32> = Vec::new();
            let mut writes = writes.into_iter();
            // The writes happen between the walk's steps.
            for b in wrap_bits(&mask[..], nbits, start) {
                prop_assert!(bit_is_set(&mask[..], b));
                // (leg, bit) only grows.
                let key = |x: u32| (x < start, x);
                if let Some(&last) = seen.last() {
                    prop_assert!(key(b) > key(last));
                }
                seen.push(b);
                if let Some((bit, set)) = writes.next() {
                    let bit = bit % nbits;
                    let (i, m) = ((bit / 64) as usize, 1u64 << (bit % 64));
                    mask[i].set(if set { mask[i].get() | m } else { mask[i].get() & !m });
                }
            }
            let mut sorted = seen.clone();
            sorted.sort_unstable();
            sorted.dedup();
            prop_assert_eq!(sorted.len(), seen.len());
        }
    }
}
