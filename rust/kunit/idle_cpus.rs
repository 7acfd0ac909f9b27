// SPDX-License-Identifier: GPL-2.0

//! KUnit suite `sched_lb_rs_idle_cpus`: the idle-CPU imbalance threshold of
//! Mike Galbraith's "sched: Further improve spurious CPU_IDLE active
//! migrations" (2016, with Peter Zijlstra and Vincent Guittot).

use kernel::bindings;

use crate::policy::idle_cpus::{self, IdleCpusFlags};

/// One row of Galbraith's thread: `local`/`busiest` idle CPUs of two groups.
struct IdleRow {
    what: &'static str,
    local_idle: u32,
    busiest_idle: u32,
    llc_size: u32,
    flags: IdleCpusFlags,
    balanced: bool,
}

const STOCK: IdleCpusFlags = IdleCpusFlags::DEFAULT;
const LLC2: IdleCpusFlags = IdleCpusFlags::BALANCE_IDLE_LLC2;
const NO_IDLE_CPUS: IdleCpusFlags = IdleCpusFlags::NO_BALANCE_IDLE_CPUS;

const fn row(
    what: &'static str,
    local_idle: u32,
    busiest_idle: u32,
    llc_size: u32,
    flags: IdleCpusFlags,
    balanced: bool,
) -> IdleRow {
    IdleRow {
        what,
        local_idle,
        busiest_idle,
        llc_size,
        flags,
        balanced,
    }
}

/// Zijlstra: "if you have two tasks on two groups, 0,2 is a valid
/// distribution" under +2; "3 tasks on 2 groups, one group will have to
/// have 2 tasks". Guittot: "similar behavior can happen with 3 tasks on
/// system with 4 cores per MC". Galbraith: X5472, 4 MC groups of 2 cores.
#[rustfmt::skip]
static IDLE_ROWS: [IdleRow; 15] = [
    // 2 tasks, two 2-CPU groups, both in busiest (0,2): idle 2 vs 0.
    row("2 tasks on 2x2, 0,2, stock splits", 2, 0, 2, STOCK, false),
    row("2 tasks on 2x2, 0,2, Galbraith v2 keeps", 2, 0, 2, LLC2, true),
    row("2 tasks on 2x2, 0,2, Guittot off keeps", 2, 0, 2, NO_IDLE_CPUS, true),
    // 2 tasks split 1,1 is balanced for everyone.
    row("2 tasks on 2x2, 1,1, stock", 1, 1, 2, STOCK, true),
    // 3 tasks on two 2-CPU groups, 1,2: idle 1 vs 0, the +1 tie-breaker.
    row("3 tasks on 2x2, 1,2, stock tie", 1, 0, 2, STOCK, true),
    // 3 tasks on two 4-CPU groups, all in busiest: idle 4 vs 1.
    row("3 tasks on 2x4, 0,3, stock pulls", 4, 1, 4, STOCK, false),
    row("3 tasks on 2x4, 0,3, v2 leaves L3 alone", 4, 1, 4, LLC2, false),
    row("3 tasks on 2x4, 0,3, Guittot off keeps", 4, 1, 4, NO_IDLE_CPUS, true),
    // 3 tasks on two 4-CPU groups, 1,2: idle 3 vs 2.
    row("3 tasks on 2x4, 1,2, stock", 3, 2, 4, STOCK, true),
    // llc_size 8: a buddy pair in one 8-CPU group: idle 8 vs 6.
    row("2 tasks on 2x8, 0,2, stock pulls", 8, 6, 8, STOCK, false),
    row("2 tasks on 2x8, 0,2, v2 pulls", 8, 6, 8, LLC2, false),
    row("2 tasks on 2x8, 0,2, Guittot off keeps", 8, 6, 8, NO_IDLE_CPUS, true),
    // Guittot off tolerates exactly llc_size, not more.
    row("llc 4, diff 4, Guittot off", 5, 1, 4, NO_IDLE_CPUS, true),
    row("llc 4, diff 5, Guittot off", 6, 1, 4, NO_IDLE_CPUS, false),
    // Galbraith v2 tolerates exactly 2 on an L2 pair.
    row("llc 2, diff 3, v2", 3, 0, 2, LLC2, false),
];

pub(super) extern "C" fn rule(_test: *mut bindings::kunit) {
    for r in IDLE_ROWS.iter() {
        let got = idle_cpus::is_balanced(r.local_idle, r.busiest_idle, r.llc_size, r.flags);
        super::check!(
            "idle_cpus_rule",
            got == r.balanced,
            "{}: got {}",
            r.what,
            got
        );
    }
}

pub(super) extern "C" fn callback(_test: *mut bindings::kunit) {
    let ops = crate::hooks::kunit_ops();
    super::check!(
        "idle_cpus_callback",
        ops.idle_cpus_balanced.is_some(),
        "callback not set"
    );
    if let Some(cb) = ops.idle_cpus_balanced {
        for r in IDLE_ROWS.iter() {
            // SAFETY: the callback is this module's own, taking scalars;
            // bindgen types every callback of the table `unsafe`.
            let got = unsafe {
                cb(
                    r.local_idle,
                    r.busiest_idle,
                    r.llc_size,
                    r.flags.balance_idle_cpus,
                    r.flags.balance_idle_llc2,
                )
            };
            super::check!(
                "idle_cpus_callback",
                got == r.balanced,
                "{}: got {}",
                r.what,
                got
            );
        }
    }
}

pub(super) extern "C" fn kernel_shim(_test: *mut bindings::kunit) {
    for r in IDLE_ROWS.iter() {
        // SAFETY: scalars and a `'static` table, this module's KUnit one;
        // the shim takes the RCU read lock itself.
        let got = unsafe {
            bindings::sched_lb_test_idle_cpus_balanced(
                crate::hooks::kunit_ops(),
                r.local_idle,
                r.busiest_idle,
                r.llc_size,
                r.flags.balance_idle_cpus,
                r.flags.balance_idle_llc2,
            )
        };
        super::check!(
            "idle_cpus_kernel_shim",
            got == r.balanced,
            "{}: got {}",
            r.what,
            got
        );
    }
}
