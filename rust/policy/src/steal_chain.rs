// SPDX-License-Identifier: GPL-2.0

//! One STEAL attempt, as the kernel's `steal` hook and the simulator both
//! run it: Steve Sistare's "steal one task before idle balancing" (his
//! reply to "[RFC 00/11] select_idle_sibling rework", 2018), wired in
//! just before `pick_next_task_fair()` goes newidle balancing.
//!
//! ```text
//!   pick_next_task_fair()  nothing to run
//!     sched_lb_steal()     the shim, under rcu_read_lock()
//!       steal hook ──────► steal():
//!                            1. should_steal  STEAL on, at most 2 nodes,
//!                                             still idle, avg_idle covers
//!                                             a steal, and (only then, as
//!                                             it walks the mask) some
//!                                             *other* CPU of the LLC
//!                                             overloaded
//!                            2. victims       this core's siblings, then
//!                                             the LLC, each from the CPU
//!                                             after this one, wrapping
//!                            3. steal_first   ask the shim for each victim
//!                                             ◄── try_steal(cpu): the shim
//!                                                 drops this CPU's runqueue
//!                                                 lock, takes the victim's
//!                                                 (never both) and moves
//!                                                 its least recently run
//!                                                 task that may run here
//!                                             until one moves or this CPU
//!                                             has work again
//!     newidle balance      only if nothing was stolen
//! ```
//!
//! "Some other CPU overloaded" is asked of the same lazy walk that then
//! picks the victims, so a mask holding only this CPU (or CPUs that left
//! the LLC in a domain rebuild) does not count as work to steal.

use super::steal::{self, StealInput, StealOutcome};
use super::words::Words;

/// What a steal attempt starts from, besides the masks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StealArgs {
    /// `sched_feat(STEAL)`.
    pub enabled: bool,
    /// NUMA nodes with CPUs.
    pub numa_nodes: u32,
    /// CFS tasks runnable on this CPU.
    pub nr_runnable: u32,
    /// `rq->avg_idle`, ns.
    pub avg_idle_ns: u64,
    /// What a steal attempt has cost here on average, ns.
    pub avg_steal_cost_ns: u64,
    /// The CPU about to go idle.
    pub this_cpu: u32,
    /// Elements per line of the overloaded sparsemask.
    pub bits_per_line: u32,
    /// The CPU of the sparsemask's element 0 (the LLC's first CPU).
    pub overloaded_base: u32,
}

/// What [`steal`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StealAnswer {
    /// The policy let this CPU try (Sistare's "tried").
    pub tried: bool,
    /// The CPU a task came from.
    pub from: Option<u32>,
    /// Victims asked.
    pub attempts: u32,
}

/// Steps 1 to 3. `overloaded` is the LLC's sparsemask, `llc` its span and
/// `siblings` this CPU's SMT mask; `try_steal` asks the kernel (or the
/// simulator) to move a task from one victim.
pub fn steal<W, W2, W3, F>(
    a: &StealArgs,
    overloaded: &W,
    llc: &W2,
    siblings: &W3,
    try_steal: F,
) -> StealAnswer
where
    W: Words + ?Sized,
    W2: Words + ?Sized,
    W3: Words + ?Sized,
    F: FnMut(u32) -> StealOutcome,
{
    let victims = || {
        steal::victims(
            overloaded,
            a.bits_per_line,
            a.overloaded_base,
            llc,
            siblings,
            a.this_cpu,
        )
    };
    let input = StealInput {
        enabled: a.enabled,
        numa_nodes: a.numa_nodes,
        nr_runnable: a.nr_runnable,
        avg_idle_ns: a.avg_idle_ns,
        avg_steal_cost_ns: a.avg_steal_cost_ns,
    };
    let tried = steal::should_steal(input, || victims().next().is_some());
    if !tried {
        return StealAnswer::default();
    }
    let r = steal::steal_first(victims(), try_steal);
    StealAnswer {
        tried,
        from: r.from,
        attempts: r.attempts,
    }
}

/// Step 1 alone, for shadow mode: whether [`steal`] would try, asking
/// the kernel nothing and moving nothing. Stock 6.12 never steals before
/// newidle balancing, so a `true` here is a decision that differs from
/// stock's, and in shadow the module reports it and lets stock run.
pub fn would_steal<W, W2, W3>(a: &StealArgs, overloaded: &W, llc: &W2, siblings: &W3) -> bool
where
    W: Words + ?Sized,
    W2: Words + ?Sized,
    W3: Words + ?Sized,
{
    steal(a, overloaded, llc, siblings, |_| StealOutcome::Stop).tried
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use crate::sparsemask;
    use core::cell::Cell;
    use proptest::prelude::*;
    use std::vec;
    use std::vec::Vec;

    const BITS: u32 = 8;

    /// One LLC of `n` CPUs from `base`, in SMT pairs; `over` overloaded.
    fn masks(n: u32, base: u32, over: &[u32]) -> (Vec<Cell<u64>>, Vec<u64>) {
        let words = vec![0u64; sparsemask::words_for(n, BITS) as usize];
        let cells: Vec<Cell<u64>> = words.into_iter().map(Cell::new).collect();
        for &c in over {
            let (w, b) = sparsemask::locate(c - base, BITS);
            let w = w as usize;
            cells[w].set(cells[w].get() | 1 << b);
        }
        let nbits = base + n;
        let mut llc = vec![0u64; nbits.div_ceil(64) as usize];
        for c in base..base + n {
            llc[(c / 64) as usize] |= 1 << (c % 64);
        }
        (cells, llc)
    }

    fn pair(nbits: u32, cpu: u32) -> Vec<u64> {
        let mut m = vec![0u64; nbits.div_ceil(64) as usize];
        for c in [cpu & !1, cpu | 1] {
            if c < nbits {
                m[(c / 64) as usize] |= 1 << (c % 64);
            }
        }
        m
    }

    fn args(this: u32, base: u32) -> StealArgs {
        StealArgs {
            enabled: true,
            numa_nodes: 1,
            nr_runnable: 0,
            avg_idle_ns: 1_000_000,
            avg_steal_cost_ns: 10_000,
            this_cpu: this,
            bits_per_line: BITS,
            overloaded_base: base,
        }
    }

    // Shadow mode's question is the live walk's first step: the same
    // answer, with nothing asked of the kernel.
    #[test]
    fn would_steal_is_tried_without_a_steal() {
        for (this, over) in [
            (3, &[3][..]),
            (0, &[1, 2, 6][..]),
            (5, &[][..]),
            (2, &[7][..]),
        ] {
            let (o, llc) = masks(8, 0, over);
            let sib = pair(8, this);
            let live = steal(&args(this, 0), &o[..], &llc[..], &sib[..], |_| {
                StealOutcome::NotStolen
            });
            assert_eq!(
                would_steal(&args(this, 0), &o[..], &llc[..], &sib[..]),
                live.tried
            );
        }
        let (o, llc) = masks(8, 0, &[1]);
        let off = StealArgs {
            enabled: false,
            ..args(0, 0)
        };
        assert!(!would_steal(&off, &o[..], &llc[..], &pair(8, 0)[..]));
        assert!(would_steal(&args(0, 0), &o[..], &llc[..], &pair(8, 0)[..]));
    }

    // A mask holding only this CPU is nothing to steal: no try.
    #[test]
    fn only_self_overloaded_is_not_tried() {
        let (o, llc) = masks(8, 0, &[3]);
        let a = steal(&args(3, 0), &o[..], &llc[..], &pair(8, 3)[..], |_| {
            panic!("asked")
        });
        assert_eq!(a, StealAnswer::default());
    }

    // The sibling first, then the LLC from the CPU after this one; the
    // first success ends the walk.
    #[test]
    fn sibling_first_then_first_success() {
        let (o, llc) = masks(8, 0, &[1, 2, 6]);
        let mut asked = Vec::new();
        let a = steal(&args(0, 0), &o[..], &llc[..], &pair(8, 0)[..], |c| {
            asked.push(c);
            if c == 6 {
                StealOutcome::Stolen
            } else {
                StealOutcome::NotStolen
            }
        });
        assert_eq!(asked, vec![1, 2, 6]);
        assert_eq!(
            a,
            StealAnswer {
                tried: true,
                from: Some(6),
                attempts: 3
            }
        );
    }

    // Stop (this CPU got work) ends the walk without a steal.
    #[test]
    fn stop_ends_the_walk() {
        let (o, llc) = masks(8, 0, &[2, 4, 6]);
        let a = steal(&args(0, 0), &o[..], &llc[..], &pair(8, 0)[..], |_| {
            StealOutcome::Stop
        });
        assert_eq!((a.tried, a.from, a.attempts), (true, None, 1));
    }

    proptest! {
        // Whatever the masks and the answers: never more attempts than
        // other CPUs in the LLC, each victim once, never this CPU, never
        // one outside the LLC, and `from` is the last CPU asked.
        #[test]
        fn attempts_are_bounded(
            n in 2u32..40,
            base in 0u32..70,
            over_bits in any::<u64>(),
            this_off in any::<u32>(),
            answers in any::<u64>(),
            enabled in any::<bool>(),
            nodes in 0u32..4,
            nr_runnable in 0u32..2,
        ) {
            let over: Vec<u32> = (0..n).filter(|e| over_bits >> (e % 64) & 1 != 0).map(|e| base + e).collect();
            let (o, llc) = masks(n, base, &over);
            let this = base + this_off % n;
            let sib = pair(base + n, this);
            let mut a = args(this, base);
            a.enabled = enabled;
            a.numa_nodes = nodes;
            a.nr_runnable = nr_runnable;
            let mut asked = Vec::new();
            let r = steal(&a, &o[..], &llc[..], &sib[..], |c| {
                asked.push(c);
                match (answers >> (asked.len() % 32 * 2)) & 3 {
                    0 => StealOutcome::Stolen,
                    1 => StealOutcome::Stop,
                    _ => StealOutcome::NotStolen,
                }
            });
            let others = over.iter().any(|&c| c != this);
            prop_assert_eq!(r.tried, enabled && nodes <= 2 && nr_runnable == 0 && others);
            prop_assert_eq!(r.attempts as usize, asked.len());
            prop_assert!(r.attempts < n);
            let mut seen = asked.clone();
            seen.sort_unstable();
            seen.dedup();
            prop_assert_eq!(seen.len(), asked.len());
            prop_assert!(asked.iter().all(|&c| c != this && c >= base && c < base + n));
            if let Some(f) = r.from {
                prop_assert_eq!(asked.last(), Some(&f));
            }
        }
    }
}
