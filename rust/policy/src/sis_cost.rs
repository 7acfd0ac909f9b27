// SPDX-License-Identifier: GPL-2.0

//! Per-CPU scan cost of `select_idle_cpu()`: "[RFC 01/11] sched/fair: Fix
//! select_idle_cpu()s cost accounting" (Peter Zijlstra, 2018).
//!
//! The 4.17 code measured the whole scan and used it as the cost of
//! scanning *one* CPU when sizing the next scan, and forgot the cost
//! entirely when the scan hit its limit (`if (!--nr) return -1`). The RFC
//! divides the scan time by the number of loops and accounts every scan:
//!
//! ```c
//! time = local_clock() - time;
//! time = div_u64(time, loops);
//! cost = this_sd->avg_scan_cost;
//! delta = (s64)(time - cost) / 8;
//! this_sd->avg_scan_cost += delta;
//! ```
//!
//! A 1/8 exponential moving average. The arithmetic is the C's (the
//! difference of two `u64` reinterpreted as `s64`, divided with truncation
//! toward zero) wherever the difference fits an `s64`; beyond that the C
//! wraps and this does not (see [`update_avg_scan_cost`]).

/// The moving average moves by 1/8 of the difference per sample, as the
/// RFC's `/ 8` does.
pub const SCAN_COST_EWMA_DIV: i64 = 8;

/// The new `avg_scan_cost` after a scan that took `scan_time_ns` over
/// `loops` iterations. `loops` is at least 1 for any scan that ran (the
/// loop counts its first iteration before testing the budget); 0 is read
/// as 1 rather than dividing by zero.
pub fn update_avg_scan_cost(avg_scan_cost_ns: u64, scan_time_ns: u64, loops: u32) -> u64 {
    let per_cpu_ns = scan_time_ns / u64::from(loops.max(1));
    // The C's (s64)(time - cost) / 8, truncated toward zero, taken on the
    // side of the larger value: the same result wherever the difference
    // fits an s64, and where it does not (times beyond 292 years, which
    // the C would wrap into a cost outside both), the average still moves
    // toward the sample and stays between the two, as the kernel checks.
    // One subtraction gives the difference and which side is larger (its
    // borrow); an eighth of the distance added to or taken from the
    // average stays between it and the sample, so neither wraps.
    let step = SCAN_COST_EWMA_DIV.unsigned_abs();
    let (diff_ns, below) = per_cpu_ns.overflowing_sub(avg_scan_cost_ns);
    if below {
        // diff_ns is per - avg + 2^64: its negation is avg - per.
        avg_scan_cost_ns.wrapping_sub(diff_ns.wrapping_neg() / step)
    } else {
        avg_scan_cost_ns.wrapping_add(diff_ns / step)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn per_cpu_not_per_scan() {
        // 8 CPUs scanned in 800 ns is 100 ns each: from 0 the average
        // moves an eighth of the way, 12 ns (integer division).
        assert_eq!(update_avg_scan_cost(0, 800, 8), 12);
        // The 4.17 bug would have fed 800 in.
        assert_eq!(update_avg_scan_cost(0, 800, 1), 100);
    }

    #[test]
    fn converges_down_and_up() {
        let mut c = 1000;
        for _ in 0..200 {
            c = update_avg_scan_cost(c, 40, 1);
        }
        // Truncation toward zero leaves it within 7 of the target.
        assert!((40..48).contains(&c), "{c}");
        for _ in 0..200 {
            c = update_avg_scan_cost(c, 120, 1);
        }
        assert!((113..=120).contains(&c), "{c}");
    }

    // Beyond an s64 of difference the C would wrap; the rule still moves
    // an eighth of the way, up or down, and stays between the two.
    #[test]
    fn extremes_move_an_eighth() {
        assert_eq!(update_avg_scan_cost(0, u64::MAX, 1), u64::MAX / 8);
        assert_eq!(
            update_avg_scan_cost(u64::MAX, 0, 1),
            u64::MAX - u64::MAX / 8
        );
        assert_eq!(update_avg_scan_cost(u64::MAX, u64::MAX, 1), u64::MAX);
        assert_eq!(update_avg_scan_cost(8, 0, 1), 7);
        assert_eq!(update_avg_scan_cost(7, 0, 1), 7);
    }

    #[test]
    fn zero_loops_is_one() {
        assert_eq!(
            update_avg_scan_cost(0, 80, 0),
            update_avg_scan_cost(0, 80, 1)
        );
    }

    proptest! {
        #[test]
        fn total(c in any::<u64>(), t in any::<u64>(), l in any::<u32>()) {
            let _ = update_avg_scan_cost(c, t, l);
        }

        // In the range a clock can produce, the average moves toward the
        // sample and never overshoots it.
        #[test]
        fn moves_toward_sample(c in 0u64..1 << 40, t in 0u64..1 << 40, l in 1u32..1024) {
            let s = t / u64::from(l);
            let n = update_avg_scan_cost(c, t, l);
            prop_assert!(n >= c.min(s) && n <= c.max(s));
        }
    }
}
