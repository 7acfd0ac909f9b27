// SPDX-License-Identifier: GPL-2.0

//! The `migrate_load` test of `detach_tasks()`: may this task be moved?
//!
//! Mirrors, in `kernel/sched/fair.c` of Linux 6.12,
//!
//! ```c
//! if (shr_bound(load, env->sd->nr_balance_failed) > env->imbalance)
//!         goto next;
//! ```
//!
//! from "sched/fair: relax constraint on task's load during load balance"
//! (Vincent Guittot, [PATCH 1/4] of "sched/fair: Improve fairness between
//! cfs tasks", 2020), and the rule it replaced,
//!
//! ```c
//! if (load/2 > env->imbalance &&
//!     env->sd->nr_balance_failed <= env->sd->cache_nice_tries)
//!         goto next;
//! ```
//!
//! The old rule used `nr_balance_failed` as a boolean, so whichever CPU
//! was fastest to detach won the fight; the new one halves the task's load
//! once per failed balance, so every CPU's chance grows the same way. For
//! 9 always-running tasks on 8 CPUs the thread measured the min/max work
//! ratio going from 78.3% to 91.2%.
//!
//! Both rules compare an `unsigned long` with a `long`: C converts the
//! `long` to `unsigned long`, so a negative imbalance compares as a huge
//! one and never skips a task. The Rust keeps that, bit for bit.

/// `shr_bound()` of `kernel/sched/sched.h`: a right shift whose count is
/// capped at the type's width minus one, so a large failure count can
/// never make the shift undefined.
pub fn shr_bound(val: u64, shift: u32) -> u64 {
    val >> shift.min(u64::BITS - 1)
}

/// C's conversion of `long` to `unsigned long` in a mixed comparison.
fn c_ulong(imbalance: i64) -> u64 {
    // Two's-complement reinterpretation, which is what C does here; `as`
    // between same-width integers never panics.
    imbalance as u64
}

/// Linux >= 5.10 (flag `LB_RELAX_FAILED` on, the default): true if the task
/// of load `load` must be skipped because it would move too much load.
pub fn skip_task(load: u64, imbalance: i64, nr_balance_failed: u32) -> bool {
    shr_bound(load, nr_balance_failed) > c_ulong(imbalance)
}

/// Linux < 5.10 (flag `LB_RELAX_FAILED` off): skip a task heavier than twice
/// the imbalance until the domain has failed more than `cache_nice_tries`
/// times, then accept any task.
pub fn skip_task_pre_5_10(
    load: u64,
    imbalance: i64,
    nr_balance_failed: u32,
    cache_nice_tries: u32,
) -> bool {
    load / 2 > c_ulong(imbalance) && nr_balance_failed <= cache_nice_tries
}

/// The decision the hook makes, the flag selecting the rule.
pub fn should_skip(
    load: u64,
    imbalance: i64,
    nr_balance_failed: u32,
    cache_nice_tries: u32,
    relax_failed: bool,
) -> bool {
    if relax_failed {
        skip_task(load, imbalance, nr_balance_failed)
    } else {
        skip_task_pre_5_10(load, imbalance, nr_balance_failed, cache_nice_tries)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn shr_bound_caps_the_shift() {
        assert_eq!(shr_bound(u64::MAX, 0), u64::MAX);
        assert_eq!(shr_bound(u64::MAX, 63), 1);
        assert_eq!(shr_bound(u64::MAX, 64), 1);
        assert_eq!(shr_bound(u64::MAX, u32::MAX), 1);
        assert_eq!(shr_bound(1024, 3), 128);
    }

    // A nice-0 task (load 1024) against an imbalance of 300: the new rule
    // refuses it until two balances failed (1024 >> 2 = 256 <= 300); the
    // old one refuses it until cache_nice_tries (here 1) is exceeded.
    #[test]
    fn relaxes_with_each_failure() {
        let (load, imb) = (1024, 300);
        assert!(skip_task(load, imb, 0));
        assert!(skip_task(load, imb, 1));
        assert!(!skip_task(load, imb, 2));
        assert!(skip_task_pre_5_10(load, imb, 0, 1));
        assert!(skip_task_pre_5_10(load, imb, 1, 1));
        assert!(!skip_task_pre_5_10(load, imb, 2, 1));
        // The old rule accepts a task up to twice the imbalance at once.
        assert!(!skip_task_pre_5_10(600, imb, 0, 1));
        assert!(skip_task(600, imb, 0));
    }

    #[test]
    fn negative_imbalance_never_skips() {
        for failed in [0, 1, 5, 63, 64, u32::MAX] {
            assert!(!skip_task(u64::MAX, -1, failed));
            assert!(!skip_task_pre_5_10(u64::MAX, -1, failed, 0));
            assert!(!skip_task(1, i64::MIN, failed));
        }
    }

    #[test]
    fn flag_selects_the_rule() {
        assert_eq!(should_skip(1024, 300, 1, 1, true), skip_task(1024, 300, 1));
        assert_eq!(
            should_skip(600, 300, 0, 1, false),
            skip_task_pre_5_10(600, 300, 0, 1)
        );
        assert_ne!(
            should_skip(600, 300, 0, 1, true),
            should_skip(600, 300, 0, 1, false)
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(20_000))]

        #[test]
        fn total(load in any::<u64>(), imb in any::<i64>(), f in any::<u32>(), t in any::<u32>(), r in any::<bool>()) {
            let _ = should_skip(load, imb, f, t, r);
        }

        // More failures never make a task harder to move.
        #[test]
        fn monotonic_in_failures(load in any::<u64>(), imb in any::<i64>(), f in 0u32..200) {
            if !skip_task(load, imb, f) {
                prop_assert!(!skip_task(load, imb, f + 1));
            }
        }

        // For a non-negative imbalance, the new rule skips exactly the
        // tasks whose load, halved `nr_balance_failed` times, exceeds it.
        #[test]
        fn matches_exact_arithmetic(load in any::<u64>(), imb in 0i64..=i64::MAX, f in 0u32..64) {
            let exact = (u128::from(load) >> f) > imb as u128;
            prop_assert_eq!(skip_task(load, imb, f), exact);
        }
    }
}
