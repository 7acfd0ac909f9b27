// SPDX-License-Identifier: GPL-2.0

//! The failure count behind NEWIDLE_BACKOFF's multiplier N.
//!
//! From "sched: Limit idle_balance() when it is being used too frequently"
//! (Jason Low, 2013): "N can be calculated based on the number of idle
//! balance attempts for the CPU since the last "successful" idle balance
//! attempt. So if the previous 30 idle balance attempts resulted in no
//! tasks moved, then n = 30 / 5" ([`super::newidle_backoff::backoff_factor`]).
//! The kernel calls [`account`] through the hook `newidle_account` of
//! `sched_balance_newidle()` after every newidle attempt, and after every
//! pull into the CPU by any balancer; the result is the
//! `consecutive_failures` that `newidle_walk::stop_at_domain()` reads.
//!
//! The count this replaces moved only when a newidle walk balanced a
//! domain, and only newidle pulls reset it. It latched: once N was large
//! enough to stop the walk at its first domain, no walk balanced anything,
//! so the count never changed again, and nothing else decayed it; a CPU
//! could stay backed off long after the machine's load changed. Here:
//!
//! - every newidle attempt that pulled nothing counts, including one the
//!   backoff cut short before any domain (it is still an attempt);
//! - a pull by any balancer (periodic, nohz, newidle, STEAL) resets it;
//! - it halves for every jiffy since it last changed, like SIS_AGE's
//!   `wake_avg` (`sis_age.rs`), so failures long ago stop counting even
//!   when nothing else happens on the CPU. With `r` failed attempts a
//!   jiffy, the count settles at about `2r`: N follows the recent failure
//!   rate, which is what Jason's "attempts since the last successful one"
//!   measures on a CPU whose idle balancing is useless, without its memory
//!   of failures from any time ago;
//! - it saturates at [`MAX_STREAK`], where the multiplier already stops
//!   growing, so no sequence of events can wrap it.

use super::newidle_backoff::{FAILURES_PER_STEP, MAX_BACKOFF};

/// The largest count kept: the one where
/// [`super::newidle_backoff::backoff_factor`] reaches [`MAX_BACKOFF`] (160).
/// Counting higher would only make the count take longer to decay.
pub const MAX_STREAK: u32 = MAX_BACKOFF.saturating_mul(FAILURES_PER_STEP);

/// Most halvings applied at once: `u32 >> 32` is not defined, and after 31
/// jiffies any count this rule keeps (at most 160) is 0 anyway.
const MAX_HALVINGS: u64 = 31;

/// A CPU's failed newidle attempts, aged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Streak {
    /// Newidle attempts that pulled nothing, halved per jiffy since.
    pub failures: u32,
    /// `jiffies` when `failures` was last aged.
    pub stamp_jiffies: u64,
}

/// One newidle attempt, or one pull by any balancer (periodic, nohz,
/// newidle, STEAL) into this CPU.
///
/// First ages the count to `now_jiffies`: halved per elapsed jiffy, the
/// elapsed time a wrapping difference (`time_after()` semantics across a
/// `jiffies` wrap); a stamp in the future (elapsed negative as a signed
/// value) ages nothing and is kept. Then `pulled` resets the count to 0, and an
/// attempt that pulled nothing adds one, saturating at [`MAX_STREAK`].
pub fn account(s: Streak, now_jiffies: u64, pulled: bool) -> Streak {
    let elapsed = now_jiffies.wrapping_sub(s.stamp_jiffies);
    // Negative as an i64 (2^63 or more): the stamp is ahead of the caller's
    // `jiffies`, which happens when nohz balancing on another CPU read
    // `jiffies` just before this CPU stamped a newer one. No time passed,
    // and the stamp stays: moving it back would be an answer the kernel
    // refuses (a stamp before the old one).
    let (elapsed, stamp_jiffies) = if elapsed > i64::MAX as u64 {
        (0, s.stamp_jiffies)
    } else {
        (elapsed, now_jiffies)
    };
    let halvings = elapsed.min(MAX_HALVINGS) as u32;
    let aged = s.failures.checked_shr(halvings).unwrap_or(0);
    let failures = if pulled {
        0
    } else {
        aged.saturating_add(1).min(MAX_STREAK)
    };
    Streak {
        failures,
        stamp_jiffies,
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use crate::newidle_backoff::backoff_factor;
    use crate::newidle_walk::{stop_at_domain, WalkStep};
    use proptest::prelude::*;
    use std::vec::Vec;

    fn st(failures: u32, stamp_jiffies: u64) -> Streak {
        Streak {
            failures,
            stamp_jiffies,
        }
    }

    #[test]
    fn rows() {
        // Same jiffy: counts up, a pull resets.
        assert_eq!(account(st(0, 5), 5, false), st(1, 5));
        assert_eq!(account(st(29, 5), 5, false), st(30, 5));
        assert_eq!(account(st(30, 5), 5, true), st(0, 5));
        // Halved per jiffy, then counted.
        assert_eq!(account(st(100, 5), 6, false), st(51, 6));
        assert_eq!(account(st(100, 5), 8, false), st(13, 8));
        assert_eq!(account(st(160, 0), 8, false), st(1, 8));
        assert_eq!(account(st(100, 5), 6, true), st(0, 6));
        // Saturates where the multiplier does.
        assert_eq!(MAX_STREAK, 160);
        assert_eq!(backoff_factor(MAX_STREAK), MAX_BACKOFF);
        assert_eq!(account(st(160, 5), 5, false), st(160, 5));
        assert_eq!(account(st(u32::MAX, 5), 5, false), st(160, 5));
        // At most 31 halvings: u32::MAX >> 31 is 1.
        assert_eq!(account(st(u32::MAX, 0), 1000, false), st(2, 1000));
    }

    #[test]
    fn jiffies_wrap_and_clock_going_back() {
        // Stamp 2 jiffies before the wrap, now 3 after it: 5 elapsed.
        assert_eq!(account(st(64, u64::MAX - 1), 3, false), st(3, 3));
        // A stamp in the future ages nothing and stays: the kernel
        // refuses a stamp that moved back.
        assert_eq!(account(st(64, 100), 90, false), st(65, 100));
        assert_eq!(account(st(64, 1 << 63), 0, false), st(65, 1 << 63));
        // The boundary of time_after(): 2^63 - 1 jiffies back is still the
        // past (aged to nothing, stamped now), 2^63 back is the future.
        let max = i64::MAX as u64;
        assert_eq!(account(st(64, 5u64.wrapping_sub(max)), 5, false), st(1, 5));
        let ahead = 5u64.wrapping_sub(max + 1);
        assert_eq!(account(st(64, ahead), 5, false), st(65, ahead));
    }

    /// The backoff as a newidle walk sees it at its first domain: 10 us
    /// of balance cost, 100 us of expected idle time, so N above 10 stops
    /// the walk before it balances anything.
    fn cut_short(failures: u32) -> bool {
        stop_at_domain(WalkStep {
            avg_idle_ns: 100_000,
            curr_cost_ns: 0,
            max_newidle_lb_cost_ns: 10_000,
            migration_cost_ns: 0,
            consecutive_failures: failures,
            newidle_backoff: true,
            sd_migration_cost: false,
        })
    }

    /// The patch 0007 rule this file replaces: only a walk that balanced
    /// a domain moves the count, and only a newidle pull resets it.
    fn old_account(old: u32, balanced: bool, pulled: bool) -> u32 {
        if !balanced {
            old
        } else if pulled {
            0
        } else {
            old.saturating_add(1)
        }
    }

    /// Replays `attempts` newidle attempts spread evenly over `jiffies`,
    /// none of which pulls (the walk is cut short or finds nothing), and
    /// one periodic pull at `pull_at`, from 100 failures (N = 20) under
    /// both rules. Returns the old count at the end and the new count
    /// after each attempt, by jiffy.
    fn replay(attempts: u64, jiffies: u64, pull_at: u64) -> (u32, Vec<(u64, u32)>) {
        let (mut old, mut new) = (100u32, st(100, 0));
        let mut pulled_yet = false;
        let mut trace = Vec::new();
        for i in 0..attempts {
            let now = i * jiffies / attempts;
            if now >= pull_at && !pulled_yet {
                // A periodic balance pulls a task here: the old rule does
                // not see it, the new one resets.
                new = account(new, now, true);
                assert_eq!(new.failures, 0);
                pulled_yet = true;
            }
            let balanced = !cut_short(old);
            old = old_account(old, balanced, false);
            new = account(new, now, false);
            trace.push((now, new.failures));
        }
        (old, trace)
    }

    // The latch, and its end. At 20 attempts a jiffy (1000 over 50
    // jiffies), every one cut short at N = 20: the old count never moves
    // from 100. The new one leaves it at once and settles where 20
    // failures a jiffy put it, about twice that (N = 7 or 8, a halving a
    // jiffy), and the periodic pull resets it:
    // the backoff now says how often recent balancing failed, not how
    // often it ever did. At one attempt a jiffy (1000 over 1000 jiffies)
    // it is back under FAILURES_PER_STEP (N = 0, stock behaviour) within
    // 10 jiffies, while the old count still says 100.
    #[test]
    fn old_accounting_latches_new_recovers() {
        assert!(cut_short(100), "N = 20 stops the walk at its first domain");
        assert!(!cut_short(FAILURES_PER_STEP - 1), "N = 0 walks");

        let (old, trace) = replay(1000, 50, 25);
        assert_eq!(old, 100, "latched");
        assert!(trace.iter().all(|&(_, f)| f <= 120));
        for &(j, f) in &trace {
            if j >= 8 {
                assert!(backoff_factor(f) <= 8, "jiffy {j}: {f}");
            }
        }
        // About 2 x 20 at the end: 39 when approached from below (the
        // halving rounds down), 40 from above.
        let last = trace.last().map_or(0, |&(_, f)| f);
        assert!((38..=40).contains(&last), "{last}");
        // Right after the pull at jiffy 25, the count starts from 0.
        let first_after_pull = trace.iter().find(|&&(j, _)| j == 25);
        assert_eq!(first_after_pull, Some(&(25, 1)));

        let (old, trace) = replay(1000, 1000, 500);
        assert_eq!(old, 100, "latched");
        for &(j, f) in &trace {
            if j >= 10 {
                assert!(f < FAILURES_PER_STEP, "jiffy {j}: {f}");
                assert_eq!(backoff_factor(f), 0);
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(20_000))]

        // Total over the whole domain, never above old + 1 or the cap, a
        // pull always resets, and the stamp is one the kernel accepts
        // (patch 0007's check): left alone, or moved forward to at most
        // now, across wraps.
        #[test]
        fn bounded(f in any::<u32>(), stamp in any::<u64>(), now in any::<u64>(), pulled in any::<bool>()) {
            let r = account(st(f, stamp), now, pulled);
            let t = r.stamp_jiffies;
            let kernel_accepts = t == stamp
                || (t.wrapping_sub(stamp) as i64 >= 0 && now.wrapping_sub(t) as i64 >= 0);
            prop_assert!(kernel_accepts, "stamp {} -> {} at now {}", stamp, t, now);
            prop_assert!(r.failures <= f.saturating_add(1).min(MAX_STREAK));
            if pulled {
                prop_assert_eq!(r.failures, 0);
            }
        }

        // The longer since the stamp, the smaller the count.
        #[test]
        fn decays_with_time(f in any::<u32>(), stamp in any::<u64>(), d1 in 0u64..1 << 62, d2 in 0u64..1 << 62) {
            let (lo, hi) = (d1.min(d2), d1.max(d2));
            let a = account(st(f, stamp), stamp.wrapping_add(lo), false);
            let b = account(st(f, stamp), stamp.wrapping_add(hi), false);
            prop_assert!(b.failures <= a.failures);
        }
    }
}
