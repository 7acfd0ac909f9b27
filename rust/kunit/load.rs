// SPDX-License-Identifier: GPL-2.0

//! KUnit suite `sched_lb_rs_fairness`: patches 1 and 2 of Vincent Guittot's
//! "sched/fair: Improve fairness between cfs tasks" (2020): the
//! `detach_tasks()` load test and the `imbalance_pct` test.

use kernel::bindings;

use super::check;
use crate::policy::{avg_load, detach_load};

/// `(load, imbalance, nr_balance_failed, cache_nice_tries, relax, skip)`,
/// `relax` being `LB_RELAX_FAILED`: rows with the flag on and with it off.
#[rustfmt::skip]
static DETACH_ROWS: [(u64, i64, u32, u32, bool, bool); 12] = [
    // A nice-0 task (1024) against an imbalance of 300 on a domain with
    // cache_nice_tries 1: 5.10 needs two failures (1024 >> 2 = 256)...
    (1024, 300, 0, 1, true, true),
    (1024, 300, 1, 1, true, true),
    (1024, 300, 2, 1, true, false),
    // ...5.9 waits for nr_balance_failed > cache_nice_tries, then takes
    // anything.
    (1024, 300, 1, 1, false, true),
    (1024, 300, 2, 1, false, false),
    // 5.9 takes a task up to twice the imbalance at once; 5.10 does not.
    (600, 300, 0, 1, false, false),
    (600, 300, 0, 1, true, true),
    // Exactly the imbalance is fine for both.
    (300, 300, 0, 0, true, false),
    (600, 300, 0, 0, false, false),
    // A negative imbalance compares as a huge unsigned one: never skip.
    (u64::MAX, -1, 0, 0, true, false),
    (u64::MAX, -1, 0, 0, false, false),
    // shr_bound() caps the shift at 63.
    (u64::MAX, 0, 200, 0, true, true),
];

pub(super) extern "C" fn detach_rows(_test: *mut bindings::kunit) {
    for &(load, imb, failed, tries, relax, skip) in DETACH_ROWS.iter() {
        let got = detach_load::should_skip(load, imb, failed, tries, relax);
        check!(
            "detach_skip_thread_rows",
            got == skip,
            "load {} imbalance {} failed {} tries {} relax {}: got {}",
            load,
            imb,
            failed,
            tries,
            relax,
            got
        );
    }
}

pub(super) extern "C" fn detach_kernel_shim(_test: *mut bindings::kunit) {
    for &(load, imb, failed, tries, relax, skip) in DETACH_ROWS.iter() {
        // SAFETY: scalars and a `'static` table, this module's KUnit one;
        // the shim takes the RCU read lock itself.
        let got = unsafe {
            bindings::sched_lb_test_detach_skip(
                crate::hooks::kunit_ops(),
                load,
                imb,
                failed,
                tries,
                relax,
            )
        };
        check!(
            "detach_skip_kernel_shim",
            got == skip,
            "load {} imbalance {} failed {} relax {}: got {}",
            load,
            imb,
            failed,
            relax,
            got
        );
    }
}

/// `avg_load` of `tasks` nice-0 tasks on `cpus` CPUs of capacity 1024.
const fn avg_load_of(tasks: u64, cpus: u64) -> u64 {
    tasks * 1024 * 1024 / (cpus * 1024)
}

/// `(busiest_avg_load, local_avg_load, imbalance_pct, above_llc, reduced,
/// balanced)`: the hook's input and answer.
#[rustfmt::skip]
static AVG_ROWS: [(u64, u64, u32, bool, bool, bool); 10] = [
    // 11 threads on 2x4 (6 vs 5, 20% apart): 125 leaves it, 117 balances.
    (avg_load_of(6, 4), avg_load_of(5, 4), 125, true, true, true),
    (avg_load_of(6, 4), avg_load_of(5, 4), 117, true, true, false),
    // LB_REDUCED_IMBALANCE_PCT off: PKG/NUMA test against v5.9's 125 ...
    (avg_load_of(6, 4), avg_load_of(5, 4), 117, true, false, true),
    // ... but SMT and LLC domains against their own.
    (avg_load_of(6, 4), avg_load_of(5, 4), 117, false, false, false),
    // 9 threads on 2x4 (5 vs 4): exactly 25%, at 125's edge.
    (avg_load_of(5, 4), avg_load_of(4, 4), 125, true, true, true),
    (avg_load_of(5, 4), avg_load_of(4, 4), 117, true, true, false),
    (avg_load_of(5, 4), avg_load_of(4, 4), 117, true, false, true),
    // Equal groups are balanced at any pct >= 100.
    (1024, 1024, 100, false, true, true),
    // Loads past where the C multiplication wraps: the rule wraps as the
    // C does (bit for bit, issue 16), 100 * (2^62 + 1) being 100 mod 2^64,
    // so the pair counts as balanced against a local load of 1.
    ((1 << 62) + 1, 1, 117, true, true, true),
    (u64::MAX, u64::MAX, 117, true, true, false),
];

/// The rows through the policy crate's decision, as `hooks.rs` calls it.
pub(super) extern "C" fn avg_load_rows(_test: *mut bindings::kunit) {
    for &(b, l, pct, above_llc, reduced, balanced) in AVG_ROWS.iter() {
        let got = avg_load::balanced(avg_load::AvgLoadInput {
            busiest_avg_load: b,
            local_avg_load: l,
            imbalance_pct: pct,
            above_llc,
            reduced,
        });
        check!(
            "avg_load_imbalance_pct",
            got == balanced,
            "busiest {} local {} pct {} above_llc {} reduced {}: got {}",
            b,
            l,
            pct,
            above_llc,
            reduced,
            got
        );
    }
}

/// The rows through the kernel's shim and this module's hook (its KUnit
/// table, the same code as the registered one without the counting).
pub(super) extern "C" fn avg_load_kernel_shim(_test: *mut bindings::kunit) {
    for &(b, l, pct, above_llc, reduced, balanced) in AVG_ROWS.iter() {
        // SAFETY: as in `detach_kernel_shim()`.
        let got = unsafe {
            bindings::sched_lb_test_avg_load_balanced(
                crate::hooks::kunit_ops(),
                b,
                l,
                pct,
                above_llc,
                reduced,
            )
        };
        check!(
            "avg_load_kernel_shim",
            got == balanced,
            "busiest {} local {} pct {} above_llc {} reduced {}: got {}",
            b,
            l,
            pct,
            above_llc,
            reduced,
            got
        );
    }
}
