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
//! (patch 0013) keeps the mask (a sparsemask indexed by CPU number, see
//! `sparsemask.rs`) and moves the task under the runqueue locks, one victim
//! at a time, when [`steal_first`] asks it to.

use super::sis_select::bit_is_set;

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
    pub nr_runnable: u32,
    /// Some other CPU of the LLC is in the overloaded mask.
    pub any_overloaded: bool,
    /// `rq->avg_idle`, ns.
    pub avg_idle_ns: u64,
    /// Average cost of a steal attempt here, ns.
    pub avg_steal_cost_ns: u64,
}

/// True if this CPU should try to steal before idle balancing: stealing is
/// on and allowed on this machine, the CPU has nothing to run, some CPU of
/// its LLC is overloaded, and the expected idle time covers a steal. The
/// last test is what keeps a CPU whose idle periods are shorter than a
/// steal from paying for one at every switch to idle.
pub fn should_steal(i: StealInput) -> bool {
    i.enabled
        && i.numa_nodes <= STEAL_MAX_NUMA_NODES
        && i.nr_runnable == 0
        && i.any_overloaded
        && i.avg_idle_ns >= i.avg_steal_cost_ns
}

/// `cpus` (ascending) in `for_each_cpu_wrap()` order: from `start` up,
/// then the ones below it.
fn wrapped<I>(cpus: I, start: u32) -> impl Iterator<Item = u32>
where
    I: Iterator<Item = u32> + Clone,
{
    let low = cpus.clone();
    cpus.filter(move |&c| c >= start)
        .chain(low.filter(move |&c| c < start))
}

/// Victims in the order they are tried: the overloaded CPUs of this CPU's
/// core (its SMT siblings), for cache warmth, then the other overloaded
/// CPUs of its LLC, each leg from the CPU after this one, wrapping, so
/// that idle CPUs of an LLC do not all start at the same victim. Each CPU
/// at most once, never this one, never one outside `llc`.
///
/// `overloaded` yields the overloaded CPUs in ascending order, e.g.
/// [`super::sparsemask::elements`] or [`super::sis_select::wrap_bits`] from
/// 0; `llc` and `siblings` are cpumask words.
pub fn victims<'a, I>(
    overloaded: I,
    llc: &'a [u64],
    siblings: &'a [u64],
    this_cpu: u32,
) -> impl Iterator<Item = u32> + 'a
where
    I: Iterator<Item = u32> + Clone + 'a,
{
    let start = this_cpu.wrapping_add(1);
    let candidate = move |c: u32| c != this_cpu && bit_is_set(llc, c);
    let same_core = wrapped(overloaded.clone(), start)
        .filter(move |&c| candidate(c) && bit_is_set(siblings, c));
    let rest =
        wrapped(overloaded, start).filter(move |&c| candidate(c) && !bit_is_set(siblings, c));
    same_core.chain(rest)
}

/// What one attempt on a victim gave.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StealOutcome {
    /// A task moved here: stop, done.
    Stolen,
    /// Nothing could move (the CPU is no longer overloaded, or every task
    /// is pinned, running, cache hot or throttled): try the next victim.
    NotStolen,
    /// This CPU got work of its own meanwhile: stop, do not steal.
    Stop,
}

/// The result of [`steal_first`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StealResult {
    /// The CPU a task came from.
    pub from: Option<u32>,
    /// Victims tried.
    pub attempts: u32,
}

/// Tries `victims` in order until one gives a task ("it steals the first
/// migrateable task it finds") or the stealer has work again.
pub fn steal_first<I, F>(victims: I, mut try_steal: F) -> StealResult
where
    I: Iterator<Item = u32>,
    F: FnMut(u32) -> StealOutcome,
{
    let mut attempts = 0u32;
    for cpu in victims {
        attempts = attempts.saturating_add(1);
        match try_steal(cpu) {
            StealOutcome::Stolen => {
                return StealResult {
                    from: Some(cpu),
                    attempts,
                }
            }
            StealOutcome::Stop => break,
            StealOutcome::NotStolen => {}
        }
    }
    StealResult {
        from: None,
        attempts,
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use proptest::prelude::*;
    use std::vec;
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
            nr_runnable: 0,
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
            nr_runnable: 1,
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

    fn dense(o: &[u64]) -> impl Iterator<Item = u32> + Clone + '_ {
        crate::sis_select::wrap_bits(o, 64 * o.len() as u32, 0)
    }

    // SMT2 x 4 in one LLC: cores {0,1} {2,3} {4,5} {6,7}.
    #[test]
    fn same_core_first_then_llc() {
        let overloaded = [0b1010_1010u64]; // 1, 3, 5, 7
        let llc = [0xffu64];
        let sib_of_0 = [0b0000_0011u64];
        let v: Vec<u32> = victims(dense(&overloaded), &llc, &sib_of_0, 0).collect();
        assert_eq!(v, [1, 3, 5, 7]);
        let sib_of_4 = [0b0011_0000u64];
        let v: Vec<u32> = victims(dense(&overloaded), &llc, &sib_of_4, 4).collect();
        assert_eq!(
            v,
            [5, 7, 1, 3],
            "own core's 5 first, then from 5 on, wrapping"
        );
        // An overloaded CPU never steals from itself.
        let v: Vec<u32> = victims(dense(&overloaded), &llc, &[0b1100_0000], 7).collect();
        assert_eq!(v, [1, 3, 5]);
    }

    // Two LLCs of SMT2 x 2, x86 numbering: LLC0 = {0,1,4,5}, LLC1 =
    // {2,3,6,7}, siblings n and n+4. Victims stay in the stealer's LLC.
    #[test]
    fn stays_in_llc() {
        let overloaded = [0b1110_1110u64]; // 1, 2, 3, 5, 6, 7
        let llc0 = [0b0011_0011u64];
        let sib_of_1 = [0b0010_0010u64];
        let v: Vec<u32> = victims(dense(&overloaded), &llc0, &sib_of_1, 1).collect();
        assert_eq!(v, [5], "only 5 is overloaded in LLC0 besides the stealer");
        let llc1 = [0b1100_1100u64];
        let sib_of_2 = [0b0100_0100u64];
        let v: Vec<u32> = victims(dense(&overloaded), &llc1, &sib_of_2, 2).collect();
        assert_eq!(v, [6, 3, 7]);
    }

    #[test]
    fn sparse_and_dense_agree() {
        use crate::sparsemask::{elements, locate, words_for};
        let cpus = [3u32, 9, 17, 40, 63];
        let mut sparse = vec![0u64; words_for(64, 8) as usize];
        let mut d = 0u64;
        for &c in &cpus {
            let (w, b) = locate(c, 8);
            sparse[w as usize] |= 1 << b;
            d |= 1 << c;
        }
        let llc = [u64::MAX];
        let sib = [0b11u64 << 16];
        let a: Vec<u32> = victims(elements(&sparse, 8), &llc, &sib, 16).collect();
        let b: Vec<u32> = victims(dense(&[d]), &llc, &sib, 16).collect();
        assert_eq!(a, b);
        assert_eq!(a, [17, 40, 63, 3, 9]);
    }

    #[test]
    fn nothing_overloaded() {
        assert_eq!(victims(dense(&[0]), &[0xff], &[0b11], 0).count(), 0);
    }

    #[test]
    fn first_success_wins() {
        let mut asked = Vec::new();
        let r = steal_first([5u32, 7, 1, 3].into_iter(), |c| {
            asked.push(c);
            if c == 1 {
                StealOutcome::Stolen
            } else {
                StealOutcome::NotStolen
            }
        });
        assert_eq!(
            r,
            StealResult {
                from: Some(1),
                attempts: 3
            }
        );
        assert_eq!(asked, [5, 7, 1]);
        let r = steal_first([5u32, 7, 1].into_iter(), |c| {
            if c == 7 {
                StealOutcome::Stop
            } else {
                StealOutcome::NotStolen
            }
        });
        assert_eq!(
            r,
            StealResult {
                from: None,
                attempts: 2
            },
            "work arrived: no further victims"
        );
        let r = steal_first(core::iter::empty(), |_| StealOutcome::Stolen);
        assert_eq!(r.attempts, 0);
    }

    proptest! {
        // Every overloaded CPU of the LLC but this one appears exactly once,
        // siblings first.
        #[test]
        fn each_victim_once(o in any::<u64>(), s in any::<u64>(), llc in any::<u64>(), this in 0u32..64) {
            let s = s | (1 << this);
            let v: Vec<u32> = victims(dense(&[o]), &[llc], &[s], this).collect();
            let mut sorted = v.clone();
            sorted.sort_unstable();
            sorted.dedup();
            prop_assert_eq!(sorted.len(), v.len());
            let want = (o & llc & !(1u64 << this)).count_ones() as usize;
            prop_assert_eq!(v.len(), want);
            let first_other = v.iter().position(|&c| (s >> c) & 1 == 0).unwrap_or(v.len());
            prop_assert!(v[first_other..].iter().all(|&c| (s >> c) & 1 == 0));
        }
    }
}
