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
//! `i / 64` for CPU `i`.

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

/// Whether bit `bit` of `words` is set (a CPU in a cpumask).
pub fn bit_is_set(words: &[u64], bit: u32) -> bool {
    let w = (bit / 64) as usize;
    words.get(w).is_some_and(|&x| (x >> (bit % 64)) & 1 != 0)
}

/// The first set bit in `[from, to)`, a word at a time, as
/// `find_next_bit()` does (a big machine's masks have thousands of bits).
fn next_set_bit(words: &[u64], from: u32, to: u32) -> Option<u32> {
    let mut bit = from;
    while bit < to {
        let w = (bit / 64) as usize;
        let word = *words.get(w)? >> (bit % 64);
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
#[derive(Clone, Debug)]
pub struct SetBits<'a> {
    words: &'a [u64],
    next: u32,
    end: u32,
    wrap_end: u32,
}

impl Iterator for SetBits<'_> {
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
            // Second leg: from 0 up to the start.
            self.next = 0;
            self.end = self.wrap_end;
            self.wrap_end = 0;
        }
    }
}

/// The set bits of `words` below `nbits`, in `for_each_cpu_wrap()` order:
/// from `start` up, then from 0 to `start - 1`.
pub fn wrap_bits(words: &[u64], nbits: u32, start: u32) -> SetBits<'_> {
    let nbits = nbits.min(u32::try_from(words.len().saturating_mul(64)).unwrap_or(u32::MAX));
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
pub fn scan_cpus<V: IdleView>(v: &V, span: &[u64], nbits: u32, target: u32, nr: u32) -> Scan {
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
/// `siblings(core)` is the core's SMT mask.
pub fn scan_cores_fold<'a, V, S>(
    v: &V,
    cores: &[u64],
    nbits: u32,
    siblings: S,
    target: u32,
    nr: u32,
) -> Scan
where
    V: IdleView,
    S: Fn(u32) -> &'a [u64],
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
        for cpu in wrap_bits(siblings(core), nbits, core).take_while(|&c| c >= core) {
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
        if best.map_or(true, |(b, _)| busy < b) {
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
    use std::vec::Vec;

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
                |c| &self.sib[c as usize][..],
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
        assert_eq!(wrap_bits(&[], 64, 3).count(), 0);
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
}
