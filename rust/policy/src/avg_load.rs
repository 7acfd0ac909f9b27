// SPDX-License-Identifier: GPL-2.0

//! The `imbalance_pct` test of `sched_balance_find_src_group()`.
//!
//! Mirrors, in `kernel/sched/fair.c` of Linux 6.12 (local group overloaded
//! as well),
//!
//! ```c
//! if (100 * busiest->avg_load <=
//!                 env->sd->imbalance_pct * local->avg_load)
//!         goto out_balanced;
//! ```
//!
//! "sched/fair: reduce minimal imbalance threshold" ([PATCH 2/4] of Vincent
//! Guittot's fairness series, 2020) lowered `imbalance_pct` from 125 to 117
//! in `sd_init()`: with 11 threads on 2x4 CPUs the 6-vs-5 split is a 20%
//! imbalance, under 25% (never balanced, always the same 5 threads favoured)
//! but over 17%. The rule is unchanged; which constant it tests against is
//! the flag `LB_REDUCED_IMBALANCE_PCT` ([`super::imbalance_pct`]), and
//! [`balanced()`] chains the two as the kernel's hook asks.
//!
//! The C multiplies in `unsigned long` and wraps for an `avg_load` above
//! 2^64 / `imbalance_pct`; `avg_load` is bounded far below that
//! (`group_load * SCHED_CAPACITY_SCALE / group_capacity`). The Rust
//! multiplies the same way, in `u64` and wrapping, so it is the C bit for
//! bit on every input. An exact product in `u128` would differ only where
//! no kernel gets, and costs two 128-bit multiplications where the C has
//! two `imul`: twice the C's instructions per call (issue 16).

/// True if the groups count as balanced by average load.
pub fn avg_load_balanced(busiest_avg_load: u64, local_avg_load: u64, imbalance_pct: u32) -> bool {
    100u64.wrapping_mul(busiest_avg_load) <= u64::from(imbalance_pct).wrapping_mul(local_avg_load)
}

/// What the kernel's `avg_load_balanced` hook hands over (its five
/// parameters).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AvgLoadInput {
    /// `avg_load` of the busiest group.
    pub busiest_avg_load: u64,
    /// `avg_load` of the local group.
    pub local_avg_load: u64,
    /// The domain's `imbalance_pct`.
    pub imbalance_pct: u32,
    /// The domain is neither an SMT nor an LLC level (PKG, NUMA).
    pub above_llc: bool,
    /// `sched_feat(LB_REDUCED_IMBALANCE_PCT)`.
    pub reduced: bool,
}

/// The hook's decision: the test above, against the `imbalance_pct` that
/// `LB_REDUCED_IMBALANCE_PCT` picks ([`super::imbalance_pct`]).
pub fn balanced(input: AvgLoadInput) -> bool {
    let pct =
        super::imbalance_pct::imbalance_pct(input.imbalance_pct, input.above_llc, input.reduced);
    avg_load_balanced(input.busiest_avg_load, input.local_avg_load, pct)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// `avg_load` of a group of `cpus` CPUs (capacity 1024 each) running
    /// `tasks` nice-0 tasks (load 1024 each).
    fn avg_load(tasks: u64, cpus: u64) -> u64 {
        tasks * 1024 * 1024 / (cpus * 1024)
    }

    // 11 threads on 2x4: 6 on one group, 5 on the other.
    #[test]
    fn eleven_threads_on_2x4() {
        let (busiest, local) = (avg_load(6, 4), avg_load(5, 4));
        assert!(
            avg_load_balanced(busiest, local, 125),
            "125 leaves it alone"
        );
        assert!(!avg_load_balanced(busiest, local, 117), "117 balances it");
    }

    // The thread's case as the flag A/B: the PKG level of 2x4 (imbalance_pct
    // 117 in 6.12) balances 6 vs 5 with the flag on, not with it off; the
    // LLC level is not the one the patch changed.
    #[test]
    fn flag_ab_on_11_threads() {
        let input = |reduced, above_llc| AvgLoadInput {
            busiest_avg_load: avg_load(6, 4),
            local_avg_load: avg_load(5, 4),
            imbalance_pct: 117,
            above_llc,
            reduced,
        };
        assert!(!balanced(input(true, true)), "on: 117, balance it");
        assert!(balanced(input(false, true)), "off: v5.9's 125, leave it");
        assert!(
            !balanced(input(false, false)),
            "off at the LLC: its own 117"
        );
    }

    // Beyond 2^64 / 100 the C's product wraps, and so does the rule's:
    // 100 * (2^62 + 1) is 100 * 2^62 + 100 = 100 mod 2^64, under a local
    // load of 1 at 117%.
    #[test]
    fn wraps_as_the_c_does() {
        let busiest = (1u64 << 62) + 1;
        assert!(avg_load_balanced(busiest, 1, 117));
        assert!(!avg_load_balanced(busiest, 0, 117));
    }

    // 9 threads on 2x4 (5 vs 4): 25% apart, balanced by neither... by 125
    // it is exactly at the threshold (<=), by 117 not.
    #[test]
    fn nine_threads_on_2x4() {
        let (busiest, local) = (avg_load(5, 4), avg_load(4, 4));
        assert!(avg_load_balanced(busiest, local, 125));
        assert!(!avg_load_balanced(busiest, local, 117));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(20_000))]

        // No panic with overflow checks on: the products wrap, as in C.
        #[test]
        fn total(b in any::<u64>(), l in any::<u64>(), p in any::<u32>()) {
            let _ = avg_load_balanced(b, l, p);
        }

        // Wherever the C does not wrap, the exact comparison.
        #[test]
        fn exact_without_wrap(b in 0u64..(u64::MAX / 100), l in 0u64..(u64::MAX / 1000), p in 0u32..1000) {
            prop_assert_eq!(
                avg_load_balanced(b, l, p),
                100 * u128::from(b) <= u128::from(p) * u128::from(l)
            );
        }

        // A larger threshold never turns a balanced pair imbalanced where
        // the products do not wrap (a local avg_load below 2^32 keeps
        // imbalance_pct * avg_load in 64 bits; no group's load gets near).
        #[test]
        fn monotonic_in_pct(b in 0u64..(u64::MAX / 100), l in 0u64..1 << 32, p in 0u32..u32::MAX) {
            if avg_load_balanced(b, l, p) {
                prop_assert!(avg_load_balanced(b, l, p + 1));
            }
        }
    }
}
