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
//! but over 17%. The rule is unchanged; the constant is per domain and can
//! be set back to 125 in `/sys/kernel/debug/sched/domains/cpuN/domainM/
//! imbalance_pct`.
//!
//! The C multiplies in `unsigned long` and would wrap for an `avg_load`
//! above 2^64 / `imbalance_pct`; `avg_load` is bounded far below that
//! (`group_load * SCHED_CAPACITY_SCALE / group_capacity`). The Rust
//! computes exactly, in `u128`, so it has no overflow anywhere and agrees
//! with the C wherever the C does not wrap.

/// True if the groups count as balanced by average load.
pub fn avg_load_balanced(busiest_avg_load: u64, local_avg_load: u64, imbalance_pct: u32) -> bool {
    100 * u128::from(busiest_avg_load) <= u128::from(imbalance_pct) * u128::from(local_avg_load)
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

        #[test]
        fn total(b in any::<u64>(), l in any::<u64>(), p in any::<u32>()) {
            let _ = avg_load_balanced(b, l, p);
        }

        // Agrees with the C expression wherever the C does not wrap.
        #[test]
        fn equals_c_without_wrap(b in 0u64..(u64::MAX / 100), l in 0u64..(u64::MAX / 1000), p in 0u32..1000) {
            prop_assert_eq!(avg_load_balanced(b, l, p), 100 * b <= u64::from(p) * l);
        }

        // A larger threshold never turns a balanced pair imbalanced.
        #[test]
        fn monotonic_in_pct(b in any::<u64>(), l in any::<u64>(), p in 0u32..u32::MAX) {
            if avg_load_balanced(b, l, p) {
                prop_assert!(avg_load_balanced(b, l, p + 1));
            }
        }
    }
}
