// SPDX-License-Identifier: GPL-2.0

//! KUnit suite `sched_lb_rs_interval`: Guittot's "sched/fair: Improve
//! fairness between cfs tasks" (2020) patches 3 and 4, the busy
//! balance interval, and the `msecs_to_jiffies()` port it depends on,
//! checked against the running kernel's own at its `CONFIG_HZ`.

use kernel::bindings;

use super::check;
use crate::policy::balance_interval::{sd_balance_interval_jiffies, IntervalInput};
use crate::policy::jiffies::msecs_to_jiffies;

/// Every m up to 10 s, then both sides of each power of two and the
/// boundaries of the signed range: the Rust port and the kernel's
/// `__msecs_to_jiffies()` at this kernel's HZ must agree on each.
pub(super) extern "C" fn msecs_to_jiffies_matches_kernel(_test: *mut bindings::kunit) {
    let hz = bindings::CONFIG_HZ;
    let check_one = |m: u32| {
        // SAFETY: __msecs_to_jiffies() is a pure computation on its argument.
        let want = unsafe { bindings::__msecs_to_jiffies(m) };
        // `unsigned long` is `usize` in the bindings; 64 bits either way.
        let want = want as u64;
        let got = msecs_to_jiffies(m, hz);
        check!(
            "msecs_to_jiffies_matches_kernel",
            got == want,
            "HZ={} m={}: rust {} kernel {}",
            hz,
            m,
            got,
            want
        );
    };
    for m in 0..=10_000u32 {
        check_one(m);
    }
    for k in 0..32u32 {
        let p = 1u32 << k;
        check_one(p.wrapping_sub(1));
        check_one(p);
        check_one(p.wrapping_add(1));
    }
    for m in [i32::MAX as u32 - 1, i32::MAX as u32, 0x8000_0000, u32::MAX] {
        check_one(m);
    }
}

/// `(balance_interval_ms, busy_factor, busy, hz, max_jiffies, dec, jiffies)`.
#[rustfmt::skip]
static ROWS: [(u32, u32, bool, u32, u64, bool, u64); 10] = [
    // THX2 MC level: 112 ms idle; busy 3584 ms (factor 32) or 1792 (16).
    (112, 32, false, 1000, 22400, true, 112),
    (112, 32, true, 1000, 22400, false, 3584),
    (112, 32, true, 1000, 22400, true, 3583),
    (112, 16, true, 1000, 22400, true, 1791),
    // 8 cores: 8 ms idle, 256 ms or 128 ms busy; at HZ=250, 64 or 32
    // jiffies, one less with the decrement.
    (8, 32, true, 250, 200, true, 63),
    (8, 16, true, 250, 200, true, 31),
    (8, 16, true, 250, 200, false, 32),
    // Never 0 jiffies: 1 ms busy at HZ=100 is 1 jiffy, minus one, clamped.
    (1, 1, true, 100, 40, true, 1),
    // busy_factor 0 from debugfs: the C's 0 - 1 wraps, then clamps to max.
    (8, 0, true, 250, 200, true, 200),
    // The maximum (HZ * nr_cpus / 10) caps everything.
    (1000, 32, true, 1000, 400, true, 400),
];

fn input(r: &(u32, u32, bool, u32, u64, bool, u64)) -> IntervalInput {
    IntervalInput {
        balance_interval_ms: r.0,
        busy_factor: r.1,
        cpu_busy: r.2,
        hz: r.3,
        max_interval_jiffies: r.4,
        busy_dec: r.5,
    }
}

pub(super) extern "C" fn thread_rows(_test: *mut bindings::kunit) {
    for r in ROWS.iter() {
        let got = sd_balance_interval_jiffies(input(r));
        check!("interval_thread_rows", got == r.6, "{:?}: got {}", r, got);
    }
}

/// The rows at this kernel's HZ through the kernel's shim: the C passes
/// the inputs and the module converts with the HZ it was built
/// for, so rows written for another HZ are the pure rule's alone
/// (`thread_rows`). At least one row must run, or this case tests nothing.
pub(super) extern "C" fn kernel_shim(_test: *mut bindings::kunit) {
    let mut ran = 0u32;
    for r in ROWS.iter().filter(|r| r.3 == bindings::CONFIG_HZ) {
        let i = input(r);
        // SAFETY: scalars and a `'static` table, this module's KUnit one;
        // the shim takes the RCU read lock itself.
        let got = unsafe {
            bindings::sched_lb_test_balance_interval(
                crate::hooks::kunit_ops(),
                i.balance_interval_ms,
                i.busy_factor,
                i.max_interval_jiffies,
                i.cpu_busy,
                i.busy_dec,
            )
        };
        // `unsigned long` is `usize` in the bindings; 64 bits either way.
        let got = got as u64;
        check!("interval_kernel_shim", got == r.6, "{:?}: got {}", r, got);
        ran = ran.saturating_add(1);
    }
    check!(
        "interval_kernel_shim",
        ran > 0,
        "no row at this kernel's HZ ({}): add one",
        bindings::CONFIG_HZ
    );
}
