// SPDX-License-Identifier: GPL-2.0

//! KUnit suite `sched_lb_rs_newidle`: where the newidle walk stops, with
//! Jason Low's backoff ("sched: Limit idle_balance() when it is being used
//! too frequently", 2013) and Rohit Jain's per-level migration cost ("sched:
//! reduce migration cost between faster caches for idle_balance", 2018), on
//! topologies described as data.

use kernel::bindings;

use super::check;
use crate::policy::newidle_backoff::backoff_factor;
use crate::policy::newidle_walk::{stop_at_domain, WalkStep};

const US: u64 = 1000;

fn step(avg_idle_ns: u64, curr_cost_ns: u64, max_cost_ns: u64) -> WalkStep {
    WalkStep {
        avg_idle_ns,
        curr_cost_ns,
        max_newidle_lb_cost_ns: max_cost_ns,
        migration_cost_ns: 0,
        consecutive_failures: 0,
        newidle_backoff: false,
        sd_migration_cost: false,
    }
}

/// A CPU expecting 500 us of idle whose domain costs 40 us to balance:
/// with the backoff on, a run of failures raises N by one every 5, and the
/// walk stops once N * 40 us > 500 us, i.e. from N = 13 (65 failures) on;
/// one success puts it back to the stock decision.
pub(super) extern "C" fn backoff_sequence(_test: *mut bindings::kunit) {
    let mut failures = 0u32;
    let mut s = step(500 * US, 0, 40 * US);
    s.newidle_backoff = true;
    while failures <= 80 {
        s.consecutive_failures = failures;
        let want = failures >= 65;
        let got = stop_at_domain(s);
        check!(
            "backoff_failure_run_then_success",
            got == want,
            "after {} failures (N = {}): stop {}",
            failures,
            backoff_factor(failures),
            got
        );
        failures += 1;
    }
    // The thread's numbers: 30 failures give N = 6.
    check!(
        "backoff_failure_run_then_success",
        backoff_factor(30) == 6,
        "N(30) = {}",
        backoff_factor(30)
    );
    // A pulled task resets the streak.
    s.consecutive_failures = 0;
    check!(
        "backoff_failure_run_then_success",
        !stop_at_domain(s),
        "after a success the walk goes on"
    );
    // The flag off ignores any streak.
    s.newidle_backoff = false;
    s.consecutive_failures = 1000;
    check!(
        "backoff_failure_run_then_success",
        !stop_at_domain(s),
        "flag off is stock"
    );
}

/// One update of a streak the case keeps, through the kernel's check and
/// this module's KUnit table.
fn account(failures: &mut u32, stamp: &mut u64, now: u64, pulled: bool) {
    // `unsigned long` is `usize` in the bindings; 64 bits either way.
    let mut st = *stamp as usize;
    // SAFETY: both pointers are to locals of the caller, valid for the
    // call, and the table is this module's KUnit table, a `'static`.
    unsafe {
        bindings::sched_lb_test_newidle_streak(
            crate::hooks::kunit_ops(),
            failures,
            &mut st,
            now as usize,
            pulled,
        )
    };
    *stamp = st as u64;
}

/// The latch of the first NEWIDLE_BACKOFF: a walk the backoff stops at its
/// first domain balances nothing, and counting only walks that balanced
/// left N where it was forever. Through the kernel's shim: a CPU at N = 20
/// whose every walk is cut short (500 us idle, 40 us per domain) recovers
/// as the seconds pass (one halving a second, however many jiffies that
/// is), a burst of failures within one second backs it off again, and one
/// pull (periodic balancing, say) resets it. None of the answers is
/// refused.
pub(super) extern "C" fn backoff_recovers(_test: *mut bindings::kunit) {
    let name = c"newidle_account";
    // SAFETY: a NUL-terminated name; the shim only reads it.
    let refused = || unsafe { bindings::sched_lb_test_violations(name.as_ptr().cast()) };
    let refused_before = refused();
    // The kernel's HZ (bindings::HZ is the user-visible USER_HZ, 100).
    let second = u64::from(bindings::CONFIG_HZ);
    // Jiffies `i` tenths of a second, or `i` seconds, after 1000.
    let tenths = |i: u64| 1000u64.saturating_add(i.saturating_mul(second.saturating_sub(1)) / 10);
    let seconds = |i: u64| 1000u64.saturating_add(i.saturating_mul(second));
    let (mut failures, mut stamp) = (100u32, 1000u64);
    let mut s = step(500 * US, 0, 40 * US);
    s.newidle_backoff = true;
    s.consecutive_failures = failures;
    // N = 100 / 5 = 20: 20 x 40 us > 500 us.
    check!(
        "backoff_recovers",
        backoff_factor(failures) == 20 && stop_at_domain(s),
        "N = {} at 100 failures does not stop the walk",
        backoff_factor(failures)
    );
    // Within the first second nothing ages: 10 failures add 10.
    for i in 1..=10u64 {
        account(&mut failures, &mut stamp, tenths(i), false);
    }
    check!(
        "backoff_recovers",
        failures == 110 && stamp == 1000,
        "10 failures within a second: {} failures, stamp {}",
        failures,
        stamp
    );
    // One cut-short walk a second for 10 seconds: the count halves
    // faster than it grows, and the stamp moves by whole seconds.
    for i in 1..=10u64 {
        account(&mut failures, &mut stamp, seconds(i), false);
    }
    s.consecutive_failures = failures;
    // Halve, then add one: 110 -> 56, 29, 15, 8, 5, 3, 2, 2, 2, 2.
    check!(
        "backoff_recovers",
        failures == 2 && stamp == seconds(10) && !stop_at_domain(s),
        "after 10 seconds of one failure each: {} failures (expected 2), stamp {}",
        failures,
        stamp
    );
    let now = seconds(10).saturating_add(1);
    // 100 failures within one jiffy: backed off again.
    for _ in 0..100 {
        account(&mut failures, &mut stamp, now, false);
    }
    s.consecutive_failures = failures;
    // 2 + 100 = 102, N = 20: 20 x 40 us > 500 us, the walk stops.
    check!(
        "backoff_recovers",
        failures == 102 && stamp == seconds(10) && stop_at_domain(s),
        "a burst of 100 failures left {} (expected 102, N = {}), stamp {}",
        failures,
        backoff_factor(failures),
        stamp
    );
    // Any pull resets it, within the same jiffy.
    account(&mut failures, &mut stamp, now, true);
    check!(
        "backoff_recovers",
        failures == 0,
        "a pull left {} failures",
        failures
    );
    check!(
        "backoff_recovers",
        refused() == refused_before,
        "the kernel refused {} of the policy's answers",
        refused() - refused_before
    );
}

/// One domain level: its name, `max_newidle_lb_cost` and migration cost.
type Level = (&'static str, u64, u64);

/// A topology as data, an expected idle time, the flag, and the index of
/// the level where the walk must stop (its length if it walks them all).
/// Each balanced level costs its `max_newidle_lb_cost`.
#[rustfmt::skip]
static TOPOLOGIES: [(&str, &[Level], u64, bool, usize); 8] = [
    // SMT2 x MC x NUMA, the RFC's costs: SMT 0, MC 50 us, NUMA 500 us.
    ("smt2-mc-numa stock", &[("SMT", 5 * US, 0), ("MC", 20 * US, 50 * US), ("NUMA", 100 * US, 500 * US)], 300 * US, false, 3),
    ("smt2-mc-numa cost", &[("SMT", 5 * US, 0), ("MC", 20 * US, 50 * US), ("NUMA", 100 * US, 500 * US)], 300 * US, true, 2),
    ("smt2-mc-numa short idle", &[("SMT", 5 * US, 0), ("MC", 20 * US, 50 * US), ("NUMA", 100 * US, 500 * US)], 60 * US, true, 1),
    ("smt2-mc-numa long idle", &[("SMT", 5 * US, 0), ("MC", 20 * US, 50 * US), ("NUMA", 100 * US, 500 * US)], 700 * US, true, 3),
    // SMT4 x MC: SMT costs nothing, so even a tiny idle balances siblings.
    ("smt4-mc cost", &[("SMT", 2 * US, 0), ("MC", 30 * US, 50 * US)], 10 * US, true, 1),
    // No SMT: MC x PKG (PKG 0, as the RFC left the DIE level).
    ("mc-pkg stock", &[("MC", 20 * US, 50 * US), ("PKG", 40 * US, 0)], 60 * US, false, 2),
    ("mc-pkg cost", &[("MC", 20 * US, 50 * US), ("PKG", 40 * US, 0)], 60 * US, true, 0),
    // Stock stops once the accumulated cost exceeds the idle time.
    ("mc-numa stock short", &[("MC", 20 * US, 50 * US), ("NUMA", 100 * US, 500 * US)], 110 * US, false, 1),
];

/// Where the walk over `levels` stops, with `SD_MIGRATION_COST` on or off
/// (Jain's per-level cost added to the stop test).
fn walk(levels: &[Level], avg_idle_ns: u64, sd_migration_cost: bool) -> usize {
    let mut curr = 0u64;
    for (i, &(_, max_cost, mig)) in levels.iter().enumerate() {
        let mut s = step(avg_idle_ns, curr, max_cost);
        s.sd_migration_cost = sd_migration_cost;
        s.migration_cost_ns = mig;
        if stop_at_domain(s) {
            return i;
        }
        curr = curr.saturating_add(max_cost);
    }
    levels.len()
}

pub(super) extern "C" fn walk_topologies(_test: *mut bindings::kunit) {
    for &(name, levels, idle, cost, want) in TOPOLOGIES.iter() {
        let got = walk(levels, idle, cost);
        check!(
            "walk_stops_per_topology",
            got == want,
            "{}: stopped at level {} (expected {})",
            name,
            got,
            want
        );
    }
}

/// Rows through the kernel's shim: `(step, stop)`.
pub(super) extern "C" fn kernel_shim(_test: *mut bindings::kunit) {
    let mut rows = [(step(99, 50, 50), true); 5];
    rows[1] = (step(100, 50, 50), false);
    rows[2].0 = step(500 * US, 0, 40 * US);
    rows[2].0.newidle_backoff = true;
    rows[2].0.consecutive_failures = 65;
    rows[3].0 = step(300 * US, 25 * US, 100 * US);
    rows[3].0.sd_migration_cost = true;
    rows[3].0.migration_cost_ns = 500 * US;
    rows[4] = (rows[3].0, false);
    rows[4].0.sd_migration_cost = false;
    for (s, want) in rows.iter() {
        // SAFETY: scalars and a `'static` table, this module's KUnit one;
        // the shim takes the RCU read lock itself. The kernel passes the
        // sum the stock test compares against, as its shim does.
        let got = unsafe {
            bindings::sched_lb_test_newidle_stop(
                crate::hooks::kunit_ops(),
                s.avg_idle_ns,
                s.curr_cost_ns.saturating_add(s.max_newidle_lb_cost_ns),
                s.consecutive_failures,
                s.newidle_backoff,
                s.migration_cost_ns,
                s.sd_migration_cost,
            )
        };
        check!("newidle_kernel_shim", got == *want, "{:?}: got {}", s, got);
    }
}
