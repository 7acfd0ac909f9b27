// SPDX-License-Identifier: GPL-2.0

//! STEAL: pull one task from an overloaded CPU before newidle balancing.
//!
//! Steve Sistare's design, described in his reply to "[RFC 00/11]
//! select_idle_sibling rework" (2018), never merged: each LLC keeps a
//! sparse mask of overloaded CPUs (2 or more runnable CFS tasks), updated
//! when `h_nr_running` goes from 1 to more or from 2 to less. Before
//! `pick_next_task_fair()` calls idle balancing, an idle CPU tries to steal
//! one migratable task, "first on overloaded CPUs on the same core, then
//! on all overloaded CPUs", from the leftmost task for fairness. He
//! measured hackbench up to 88% faster (2 groups, 28-core Xeon) and CPU
//! utilisation from 77% to 99%; stealing is limited to at most 2 NUMA
//! nodes because of regressions on larger machines.
//!
//! This file holds the pure decisions: when the mask changes, whether to
//! steal at all, and in which order victims are tried. The kernel shim
//! (a later patch) keeps the mask and moves the task under the runqueue
//! locks.

use super::sis_select::{bit_is_set, wrap_bits};

/// How an `h_nr_running` change moves a CPU in the overloaded mask:
/// `Some(true)` to set its bit, `Some(false)` to clear it, `None` to leave
/// it. Only crossings of the 1 <-> 2 boundary write the shared mask.
pub fn overload_transition(old_nr_running: u32, new_nr_running: u32) -> Option<bool> {
    match (old_nr_running >= 2, new_nr_running >= 2) {
        (false, true) => Some(true),
        (true, false) => Some(false),
        _ => None,
    }
}

/// Largest number of NUMA nodes on which stealing stays enabled
/// (Sistare's regressions on bigger machines).
pub const STEAL_MAX_NUMA_NODES: u32 = 2;

/// Inputs of the decision whether to try stealing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StealInput {
    /// `sched_feat(STEAL)`.
    pub enabled: bool,
    /// NUMA nodes online.
    pub numa_nodes: u32,
    /// CFS tasks runnable here (only an idle CPU steals).
    pub cfs_nr_running: u32,
    /// The LLC's overloaded mask has any CPU set.
    pub any_overloaded: bool,
    /// `rq->avg_idle`, ns.
    pub avg_idle_ns: u64,
    /// Average cost of a steal attempt here, ns.
    pub avg_steal_cost_ns: u64,
}

/// True if this CPU should try to steal before idle balancing: stealing is
/// on and allowed on this machine, the CPU has nothing to run, some CPU of
/// its LLC is overloaded, and the expected idle time covers a steal.
pub fn should_steal(i: StealInput) -> bool {
    i.enabled
        && i.numa_nodes <= STEAL_MAX_NUMA_NODES
        && i.cfs_nr_running == 0
        && i.any_overloaded
        && i.avg_idle_ns >= i.avg_steal_cost_ns
}

/// Victims in the order they are tried: the overloaded CPUs of this CPU's
/// core (its SMT siblings, itself excluded), then the other overloaded CPUs
/// of the LLC from the CPU after this one, wrapping. Each CPU at most once.
pub fn victims<'a>(
    overloaded: &'a [u64],
    siblings: &'a [u64],
    nbits: u32,
    this_cpu: u32,
) -> impl Iterator<Item = u32> + 'a {
    let start = this_cpu.wrapping_add(1);
    let same_core = wrap_bits(overloaded, nbits, start)
        .filter(move |&c| c != this_cpu && bit_is_set(siblings, c));
    let rest = wrap_bits(overloaded, nbits, start)
        .filter(move |&c| c != this_cpu && !bit_is_set(siblings, c));
    same_core.chain(rest)
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use proptest::prelude::*;
    use std::vec::Vec;

    #[test]
    fn transitions_only_across_one_two() {
        assert_eq!(overload_transition(1, 2), Some(true));
        assert_eq!(overload_transition(0, 3), Some(true));
        assert_eq!(overload_transition(2, 1), Some(false));
        assert_eq!(overload_transition(5, 0), Some(false));
        assert_eq!(overload_transition(2, 3), None);
        assert_eq!(overload_transition(1, 0), None);
        assert_eq!(overload_transition(0, 1), None);
    }

    /// Replays enqueue (+1) and dequeue (-1) events and checks the mask bit
    /// always equals "2 or more runnable".
    #[test]
    fn mask_follows_a_sequence() {
        let events = [1i32, 1, 1, -1, -1, 1, -1, -1, 1, 1, -1, -1];
        let (mut nr, mut bit, mut writes) = (0u32, false, 0);
        for e in events {
            let new = nr.saturating_add_signed(e);
            if let Some(b) = overload_transition(nr, new) {
                bit = b;
                writes += 1;
            }
            nr = new;
            assert_eq!(bit, nr >= 2, "after {nr}");
        }
        // 0,1,2,3,2,1,2,1,0,1,2,1,0: the bit changed 6 times.
        assert_eq!(writes, 6);
    }

    fn input() -> StealInput {
        StealInput {
            enabled: true,
            numa_nodes: 1,
            cfs_nr_running: 0,
            any_overloaded: true,
            avg_idle_ns: 10_000,
            avg_steal_cost_ns: 2_000,
        }
    }

    #[test]
    fn decision() {
        assert!(should_steal(input()));
        assert!(!should_steal(StealInput {
            enabled: false,
            ..input()
        }));
        assert!(should_steal(StealInput {
            numa_nodes: 2,
            ..input()
        }));
        assert!(
            !should_steal(StealInput {
                numa_nodes: 8,
                ..input()
            }),
            "Sistare's 8-socket case"
        );
        assert!(!should_steal(StealInput {
            cfs_nr_running: 1,
            ..input()
        }));
        assert!(!should_steal(StealInput {
            any_overloaded: false,
            ..input()
        }));
        assert!(!should_steal(StealInput {
            avg_idle_ns: 1_999,
            ..input()
        }));
    }

    // SMT2 x 4: cores {0,1} {2,3} {4,5} {6,7}.
    #[test]
    fn same_core_first_then_llc() {
        let overloaded = [0b1010_1010u64]; // 1, 3, 5, 7
        let sib_of_0 = [0b0000_0011u64];
        let v: Vec<u32> = victims(&overloaded, &sib_of_0, 8, 0).collect();
        assert_eq!(v, [1, 3, 5, 7]);
        let sib_of_4 = [0b0011_0000u64];
        let v: Vec<u32> = victims(&overloaded, &sib_of_4, 8, 4).collect();
        assert_eq!(
            v,
            [5, 7, 1, 3],
            "own core's 5 first, then from 5 on, wrapping"
        );
        // An overloaded CPU never steals from itself.
        let v: Vec<u32> = victims(&overloaded, &[0b1100_0000], 8, 7).collect();
        assert_eq!(v, [1, 3, 5]);
    }

    #[test]
    fn nothing_overloaded() {
        assert_eq!(victims(&[0], &[0b11], 8, 0).count(), 0);
    }

    proptest! {
        // Every overloaded CPU but this one appears exactly once.
        #[test]
        fn each_victim_once(o in any::<u64>(), s in any::<u64>(), this in 0u32..64) {
            let s = s | (1 << this);
            let v: Vec<u32> = victims(&[o], &[s], 64, this).collect();
            let mut sorted = v.clone();
            sorted.sort_unstable();
            sorted.dedup();
            prop_assert_eq!(sorted.len(), v.len());
            let want = (o & !(1u64 << this)).count_ones() as usize;
            prop_assert_eq!(v.len(), want);
            // Siblings come before everyone else.
            let first_other = v.iter().position(|&c| (s >> c) & 1 == 0).unwrap_or(v.len());
            prop_assert!(v[first_other..].iter().all(|&c| (s >> c) & 1 == 0));
        }
    }
}
