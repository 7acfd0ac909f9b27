// SPDX-License-Identifier: GPL-2.0

//! How much to hold back newidle balancing after it kept failing.
//!
//! From "sched: Limit idle_balance() when it is being used too frequently"
//! (Jason Low, 2013): idle balancing ran so often on an 8-socket machine
//! that it spent its time contending for remote runqueue locks (AIM7
//! fserver: 19% in `__read_lock_failed` with N = 1). The thread skips
//! idle balance unless `avg_idle` exceeds N times its cost, and Jason
//! proposed deriving N from the number of idle balances since the last one
//! that pulled a task: "if the previous 30 idle balance attempts resulted
//! in no tasks moved, then n = 30 / 5".
//!
//! 3.13 replaced the idea with the per-domain `max_newidle_lb_cost`; this
//! rule brings it back behind the flag `NEWIDLE_BACKOFF` (default off),
//! as a multiplier on that cost (see `newidle_walk`).
//!
//! The count it reads is kept by `newidle_streak::account`: every newidle
//! attempt that pulled nothing, including one this backoff cut short,
//! reset by a pull from any balancer and halved per jiffy, so the backoff
//! cannot latch (a count that only moved when a walk balanced a domain
//! froze once N stopped every walk at its first domain).

/// Failed newidle balances per step of the multiplier (Jason Low's 5).
pub const FAILURES_PER_STEP: u32 = 5;

/// Cap on the multiplier. Jason needed N above 20 for the large AIM7 wins
/// on 8 sockets; 32 (reached after 160 consecutive failures) keeps the
/// backoff bounded so one long idle stretch still gets balanced: at the
/// cap, an idle period 32 times the balance cost is enough.
pub const MAX_BACKOFF: u32 = 32;

/// The multiplier N for `consecutive_failures` newidle attempts that
/// pulled nothing since the last pull (as `newidle_streak::account` counts
/// and ages them). 0 for fewer than 5 failures, where the stock test
/// applies unchanged.
pub fn backoff_factor(consecutive_failures: u32) -> u32 {
    (consecutive_failures / FAILURES_PER_STEP).min(MAX_BACKOFF)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn thread_numbers() {
        assert_eq!(backoff_factor(30), 6);
        assert_eq!(backoff_factor(0), 0);
        assert_eq!(backoff_factor(4), 0);
        assert_eq!(backoff_factor(5), 1);
        assert_eq!(backoff_factor(159), 31);
        assert_eq!(backoff_factor(160), MAX_BACKOFF);
        assert_eq!(backoff_factor(u32::MAX), MAX_BACKOFF);
    }

    proptest! {
        #[test]
        fn monotonic_and_capped(f in 0u32..u32::MAX) {
            prop_assert!(backoff_factor(f) <= backoff_factor(f + 1));
            prop_assert!(backoff_factor(f) <= MAX_BACKOFF);
        }
    }
}
