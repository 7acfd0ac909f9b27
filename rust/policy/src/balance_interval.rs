// SPDX-License-Identifier: GPL-2.0

//! `get_sd_balance_interval()`: how many jiffies until a domain balances.
//!
//! Mirrors, in `kernel/sched/fair.c` of Linux 6.12,
//!
//! ```c
//! unsigned long interval = sd->balance_interval;
//! if (cpu_busy)
//!         interval *= sd->busy_factor;
//! interval = msecs_to_jiffies(interval);
//! if (cpu_busy)
//!         interval -= 1;
//! interval = clamp(interval, 1UL, max_load_balance_interval);
//! ```
//!
//! The `-1` is "sched/fair: minimize concurrent LBs between domain level"
//! ([PATCH 3/4] of Vincent Guittot's fairness series, 2020): with it, the
//! busy intervals of nested domains stop being multiples of each other, so
//! the levels stop balancing in lock step. `busy_factor` going from 32 to
//! 16 is [PATCH 4/4]; it is a per-domain value, tuned in
//! `/sys/kernel/debug/sched/domains/cpuN/domainM/busy_factor`, not a rule.
//!
//! Flag `LB_BUSY_INTERVAL_DEC` (default on, 6.12) selects the `-1`.
//!
//! Every step is the C one, with its types: `interval` is `unsigned long`,
//! `msecs_to_jiffies()` takes an `unsigned int` (the product is truncated
//! on the way in), and `interval -= 1` wraps when `msecs_to_jiffies()`
//! returned 0 (`busy_factor` 0 written to debugfs), after which the clamp
//! brings it down to `max_load_balance_interval`. The result is 0 only
//! where that maximum is 0 (the kernel's never is): the C's
//! clamp() then answers 0, and so does this.
//!
//! [`sd_balance_interval_jiffies()`] takes HZ at run time (the tests, the
//! simulator); [`sd_balance_interval_jiffies_hz()`] takes it as a constant,
//! as the C is compiled for one, and converts through
//! [`msecs_to_jiffies_hz()`], whose branch is chosen at compile time.

use super::jiffies::{msecs_to_jiffies, msecs_to_jiffies_hz};

/// Inputs, as the C shim reads them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IntervalInput {
    /// `sd->balance_interval`, in milliseconds.
    pub balance_interval_ms: u32,
    /// `sd->busy_factor`.
    pub busy_factor: u32,
    /// The balancing CPU is busy.
    pub cpu_busy: bool,
    /// `max_load_balance_interval`, in jiffies (`HZ * nr_online / 10`).
    pub max_interval_jiffies: u64,
    /// `HZ` of the running kernel.
    pub hz: u32,
    /// `sched_feat(LB_BUSY_INTERVAL_DEC)`.
    pub busy_dec: bool,
}

/// The balance interval in jiffies, at least 1 (when the maximum is).
pub fn sd_balance_interval_jiffies(i: IntervalInput) -> u64 {
    interval_jiffies(
        i.balance_interval_ms,
        i.busy_factor,
        i.cpu_busy,
        i.max_interval_jiffies,
        i.busy_dec,
        |ms| msecs_to_jiffies(ms, i.hz),
    )
}

/// [`sd_balance_interval_jiffies()`] for a kernel built with `HZ` (the
/// module passes `bindings::CONFIG_HZ`): the same rule, the same inputs
/// but `hz`, taken as scalars as the C takes them from `sd`.
#[inline]
pub fn sd_balance_interval_jiffies_hz<const HZ: u32>(
    balance_interval_ms: u32,
    busy_factor: u32,
    cpu_busy: bool,
    max_interval_jiffies: u64,
    busy_dec: bool,
) -> u64 {
    interval_jiffies(
        balance_interval_ms,
        busy_factor,
        cpu_busy,
        max_interval_jiffies,
        busy_dec,
        msecs_to_jiffies_hz::<HZ>,
    )
}

/// The rule, whichever way milliseconds become jiffies.
#[inline(always)]
fn interval_jiffies(
    balance_interval_ms: u32,
    busy_factor: u32,
    cpu_busy: bool,
    max_interval_jiffies: u64,
    busy_dec: bool,
    to_jiffies: impl FnOnce(u32) -> u64,
) -> u64 {
    let mut interval_ms = u64::from(balance_interval_ms);
    if cpu_busy {
        // unsigned long *= unsigned int: two u32 values, no overflow.
        interval_ms = interval_ms.wrapping_mul(u64::from(busy_factor));
    }
    // msecs_to_jiffies(const unsigned int m): C truncates, so do we.
    let mut interval = to_jiffies(interval_ms as u32);
    if cpu_busy && busy_dec {
        interval = interval.wrapping_sub(1);
    }
    // clamp(val, lo, hi) is min(max(val, lo), hi).
    interval.max(1).min(max_interval_jiffies)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn busy(ms: u32, factor: u32, hz: u32, max: u64, dec: bool) -> u64 {
        sd_balance_interval_jiffies(IntervalInput {
            balance_interval_ms: ms,
            busy_factor: factor,
            cpu_busy: true,
            max_interval_jiffies: max,
            hz,
            busy_dec: dec,
        })
    }

    // THX2, 2 nodes x 28 cores x 4 threads: MC level from 112 ms idle to
    // 3584 ms busy (factor 32) or 1792 ms (16). At HZ=1000 with 224 CPUs,
    // max_load_balance_interval is 22400 jiffies.
    #[test]
    fn thx2_mc_level() {
        assert_eq!(busy(112, 32, 1000, 22400, false), 3584);
        assert_eq!(busy(112, 32, 1000, 22400, true), 3583);
        assert_eq!(busy(112, 16, 1000, 22400, true), 1791);
    }

    // clamp(interval, 1UL, max) with max 0: 6.12's __clamp() tests the
    // upper bound first (`val >= hi ? hi : ...`), so the answer is 0, not
    // 1; min(max(v, 1), 0) agrees, clamp-the-other-way-round or
    // Ord::clamp (a panic on lo > hi) would not. The kernel's maximum is
    // HZ * nr_online / 10, never 0, but the rule takes any input.
    #[test]
    fn zero_maximum_wins_as_in_c() {
        assert_eq!(busy(8, 32, 250, 0, true), 0);
        assert_eq!(busy(0, 0, 250, 0, true), 0);
    }

    // 8 cores: 8 ms idle, 256 ms (32) or 128 ms (16) busy. At HZ=250 that
    // is 64 or 32 jiffies, less one.
    #[test]
    fn eight_cores() {
        assert_eq!(busy(8, 32, 250, 200, true), 63);
        assert_eq!(busy(8, 16, 250, 200, true), 31);
        assert_eq!(busy(8, 16, 250, 200, false), 32);
    }

    #[test]
    fn never_zero() {
        // 1 ms busy at HZ=100 is 1 jiffy; minus one is 0; clamped to 1.
        assert_eq!(busy(1, 1, 100, 40, true), 1);
        // busy_factor 0 from debugfs: 0 jiffies, minus one wraps, clamped
        // to the maximum, as the C does.
        assert_eq!(busy(8, 0, 250, 200, true), 200);
        assert_eq!(busy(8, 0, 250, 200, false), 1);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(20_000))]

        #[test]
        fn bounded_and_total(ms in any::<u32>(), f in any::<u32>(), busy in any::<bool>(),
                             max in 1u64..1_000_000, hz in any::<u32>(), dec in any::<bool>()) {
            let j = sd_balance_interval_jiffies(IntervalInput {
                balance_interval_ms: ms, busy_factor: f, cpu_busy: busy,
                max_interval_jiffies: max, hz, busy_dec: dec,
            });
            prop_assert!(j >= 1 && j <= max);
        }

        // The constant-HZ form is the run-time one at that HZ.
        #[test]
        fn constant_hz_is_run_time_hz(ms in any::<u32>(), f in any::<u32>(), busy in any::<bool>(),
                                      max in any::<u64>(), dec in any::<bool>()) {
            let at = |hz| sd_balance_interval_jiffies(IntervalInput {
                balance_interval_ms: ms, busy_factor: f, cpu_busy: busy,
                max_interval_jiffies: max, hz, busy_dec: dec,
            });
            prop_assert_eq!(sd_balance_interval_jiffies_hz::<100>(ms, f, busy, max, dec), at(100));
            prop_assert_eq!(sd_balance_interval_jiffies_hz::<250>(ms, f, busy, max, dec), at(250));
            prop_assert_eq!(sd_balance_interval_jiffies_hz::<300>(ms, f, busy, max, dec), at(300));
            prop_assert_eq!(sd_balance_interval_jiffies_hz::<1000>(ms, f, busy, max, dec), at(1000));
        }

        // The -1 moves a busy interval by at most one jiffy.
        #[test]
        fn dec_is_one_jiffy(ms in 1u32..10_000, f in 1u32..64, hz in 2u32..=2000) {
            let max = u64::MAX;
            let a = busy(ms, f, hz, max, false);
            let b = busy(ms, f, hz, max, true);
            prop_assert!(a == b || a == b + 1);
        }
    }
}
