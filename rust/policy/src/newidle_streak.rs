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
//! - it halves once for every [`HALF_LIFE_MS`] (one second) since it
//!   was last aged, counted in whole half-lives of `HZ` jiffies so the
//!   decay is the same at any `HZ` and a run of updates less than a
//!   half-life apart loses no time. Failures long ago stop counting even
//!   when nothing else happens on the CPU. With `r` failed attempts a
//!   second, the count swings between about `r` and `2r`: N follows the
//!   recent failure rate on the scale the thread reasons about (attempts
//!   in a row, not per tick), without Jason's memory of failures from any
//!   time ago. An earlier version halved every jiffy, which needed 1250
//!   failed walks a second per CPU at HZ=250 for N to reach 2: inert on
//!   every workload measured (issue 26);
//! - it saturates at [`MAX_STREAK`], where the multiplier already stops
//!   growing, so no sequence of events can wrap it.
//!
//! 6.12.117 also carries NI_RANDOM (Zijlstra's proportional newidle
//! balance, on by default), which skips a domain at random in proportion
//! to how rarely newidle balancing it succeeded. The two compose: the
//! backoff decides, per walk, whether the expected idle time covers N
//! times the cost; NI_RANDOM decides, per domain that passed, whether to
//! try it. Both learn from failures, so with both on a failing CPU backs
//! off faster than with either.

use super::newidle_backoff::{FAILURES_PER_STEP, MAX_BACKOFF};

/// The largest count kept: the one where
/// [`super::newidle_backoff::backoff_factor`] reaches [`MAX_BACKOFF`] (160).
/// Counting higher would only make the count take longer to decay.
pub const MAX_STREAK: u32 = MAX_BACKOFF.saturating_mul(FAILURES_PER_STEP);

/// The half-life of the count: one second, the scale of Jason Low's
/// "previous 30 idle balance attempts" on a CPU that goes idle tens of
/// times a second, and longer than any sched domain's balance interval
/// at its busiest.
pub const HALF_LIFE_MS: u32 = 1000;

/// Most halvings applied one by one: `u32 >> 32` is not defined, and after
/// 31 half-lives any count this rule keeps (at most 160) is 0 anyway.
const MAX_HALVINGS: u64 = 31;

/// A CPU's failed newidle attempts, aged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Streak {
    /// Newidle attempts that pulled nothing, halved per half-life since.
    pub failures: u32,
    /// `jiffies` up to which `failures` was aged: a whole number of
    /// half-lives after the last stamp, so partial half-lives carry over.
    pub stamp_jiffies: u64,
}

/// Jiffies in one [`HALF_LIFE_MS`] at `hz`, at least 1 (an `hz` of 0
/// never comes from the kernel, and is read as 1).
pub fn half_life_jiffies(hz: u32) -> u64 {
    (u64::from(hz) * u64::from(HALF_LIFE_MS) / 1000).max(1)
}

/// One newidle attempt, or one pull by any balancer (periodic, nohz,
/// newidle, STEAL) into this CPU, at `now_jiffies` with `hz` jiffies a
/// second.
///
/// First ages the count: halved once per whole half-life elapsed since
/// the stamp, the elapsed time a wrapping difference (`time_after()`
/// semantics across a `jiffies` wrap), and the stamp moved forward by
/// those half-lives only. A stamp in the future (elapsed negative as a
/// signed value) ages nothing and is kept. Then `pulled` resets the count
/// to 0, and an attempt that pulled nothing adds one, saturating at
/// [`MAX_STREAK`].
pub fn account(s: Streak, now_jiffies: u64, hz: u32, pulled: bool) -> Streak {
    let elapsed = now_jiffies.wrapping_sub(s.stamp_jiffies);
    let half_life = half_life_jiffies(hz);
    // Negative as an i64 (2^63 or more): the stamp is ahead of the caller's
    // `jiffies`, which happens when nohz balancing on another CPU read
    // `jiffies` just before this CPU stamped a newer one. No time passed,
    // and the stamp stays: moving it back would be an answer the kernel
    // refuses (a stamp before the old one).
    let halvings = if elapsed > i64::MAX as u64 {
        0
    } else {
        elapsed / half_life
    };
    let (aged, stamp_jiffies) = if halvings > MAX_HALVINGS {
        // Everything is forgotten: start counting from now.
        (0, now_jiffies)
    } else {
        // `halvings * half_life` is at most `elapsed`: never past now.
        (
            s.failures.checked_shr(halvings as u32).unwrap_or(0),
            s.stamp_jiffies
                .wrapping_add(halvings.wrapping_mul(half_life)),
        )
    };
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

    /// HZ of the Debian and the test kernels: a half-life of 250 jiffies.
    const HZ: u32 = 250;

    #[test]
    fn rows() {
        assert_eq!(half_life_jiffies(HZ), 250);
        assert_eq!(half_life_jiffies(1000), 1000);
        assert_eq!(half_life_jiffies(0), 1);
        // Within a half-life: counts up, a pull resets, the stamp stays.
        assert_eq!(account(st(0, 5), 5, HZ, false), st(1, 5));
        assert_eq!(account(st(29, 5), 254, HZ, false), st(30, 5));
        assert_eq!(account(st(30, 5), 5, HZ, true), st(0, 5));
        // Halved per whole half-life, then counted; the stamp moves by
        // whole half-lives, so the 10 jiffies past them still count.
        assert_eq!(account(st(100, 5), 255, HZ, false), st(51, 255));
        assert_eq!(account(st(100, 5), 265, HZ, false), st(51, 255));
        assert_eq!(account(st(100, 5), 755, HZ, false), st(13, 755));
        assert_eq!(account(st(160, 0), 2000, HZ, false), st(1, 2000));
        assert_eq!(account(st(100, 5), 255, HZ, true), st(0, 255));
        // The same second at HZ=1000 is 1000 jiffies: HZ does not change
        // how fast the count forgets.
        assert_eq!(account(st(100, 5), 255, 1000, false), st(101, 5));
        assert_eq!(account(st(100, 5), 1005, 1000, false), st(51, 1005));
        // Saturates where the multiplier does.
        assert_eq!(MAX_STREAK, 160);
        assert_eq!(backoff_factor(MAX_STREAK), MAX_BACKOFF);
        assert_eq!(account(st(160, 5), 5, HZ, false), st(160, 5));
        assert_eq!(account(st(u32::MAX, 5), 5, HZ, false), st(160, 5));
        // 31 halvings: u32::MAX >> 31 is 1; past 31 half-lives the count
        // is forgotten and the stamp restarts at now.
        assert_eq!(
            account(st(u32::MAX, 0), 31 * 250, HZ, false),
            st(2, 31 * 250)
        );
        assert_eq!(
            account(st(u32::MAX, 0), 32 * 250 + 7, HZ, false),
            st(1, 32 * 250 + 7)
        );
    }

    // The series needs a 64-bit kernel (CONFIG_SCHED_LB_HOOKS depends on
    // 64BIT): jiffies is then a u64 that wraps only 2^64 ticks after boot
    // (it starts 5 minutes before the 32-bit wrap, which is then just a
    // number). Both crossings age the count by the elapsed time alone.
    #[test]
    fn jiffies_wrap_and_clock_going_back() {
        let wrap32 = 1u64 << 32;
        // Stamp 10 jiffies before 2^32, now 300 after it: 310 elapsed,
        // one half-life at HZ=250, the stamp 250 on.
        assert_eq!(
            account(st(64, wrap32 - 10), wrap32 + 300, HZ, false),
            st(33, wrap32 + 240)
        );
        // The same across the 64-bit wrap.
        assert_eq!(account(st(64, u64::MAX - 9), 300, HZ, false), st(33, 240));
        // Within a half-life across either wrap: nothing ages, the stamp
        // stays where it was.
        assert_eq!(
            account(st(64, wrap32 - 10), wrap32 + 5, HZ, false),
            st(65, wrap32 - 10)
        );
        assert_eq!(
            account(st(64, u64::MAX - 9), 5, HZ, false),
            st(65, u64::MAX - 9)
        );
        // A stamp in the future ages nothing and stays: the kernel
        // refuses a stamp that moved back.
        assert_eq!(account(st(64, 100), 90, HZ, false), st(65, 100));
        assert_eq!(account(st(64, 1 << 63), 0, HZ, false), st(65, 1 << 63));
        // The boundary of time_after(): 2^63 - 1 jiffies back is still the
        // past (aged to nothing, stamped now), 2^63 back is the future.
        let max = i64::MAX as u64;
        assert_eq!(
            account(st(64, 5u64.wrapping_sub(max)), 5, HZ, false),
            st(1, 5)
        );
        let ahead = 5u64.wrapping_sub(max + 1);
        assert_eq!(account(st(64, ahead), 5, HZ, false), st(65, ahead));
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

    /// The rule this file replaces (Jason Low's count as first wired in): only a walk that balanced
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
    /// both rules, at HZ=250. Returns the old count at the end and the new
    /// count after each attempt, by jiffy.
    fn replay(attempts: u64, jiffies: u64, pull_at: u64) -> (u32, Vec<(u64, u32)>) {
        let (mut old, mut new) = (100u32, st(100, 0));
        let mut pulled_yet = false;
        let mut trace = Vec::new();
        for i in 0..attempts {
            let now = i * jiffies / attempts;
            if now >= pull_at && !pulled_yet {
                // A periodic balance pulls a task here: the old rule does
                // not see it, the new one resets.
                new = account(new, now, HZ, true);
                assert_eq!(new.failures, 0);
                pulled_yet = true;
            }
            let balanced = !cut_short(old);
            old = old_account(old, balanced, false);
            new = account(new, now, HZ, false);
            trace.push((now, new.failures));
        }
        (old, trace)
    }

    // The latch, and its end. At 40 attempts a second (400 over 2500
    // jiffies), every one cut short at N = 20: the old count never moves
    // from 100. The new one leaves it within seconds and settles where 40
    // failures a second put it, between about 40 and 80 (N = 8 to 16, a
    // halving a second; 4 to 17 while it gets there from 100 or from the
    // pull), and the periodic pull resets it: the backoff now
    // says how often recent balancing failed, not how often it ever did.
    // At two attempts a second (1000 over 125000 jiffies) it is back under
    // FAILURES_PER_STEP (N = 0, stock behaviour) within 10 seconds, while
    // the old count still says 100.
    #[test]
    fn old_accounting_latches_new_recovers() {
        assert!(cut_short(100), "N = 20 stops the walk at its first domain");
        assert!(!cut_short(FAILURES_PER_STEP - 1), "N = 0 walks");

        let (old, trace) = replay(400, 2500, 1250);
        assert_eq!(old, 100, "latched");
        assert!(trace.iter().all(|&(_, f)| f <= 140));
        for &(j, f) in &trace {
            if (1000..1250).contains(&j) || j >= 1750 {
                assert!((4..=17).contains(&backoff_factor(f)), "jiffy {j}: {f}");
            }
        }
        let last = trace.last().map_or(0, |&(_, f)| f);
        assert!((60..=81).contains(&last), "{last}");
        // Right after the pull at jiffy 1250, the count starts from 0.
        let first_after_pull = trace.iter().find(|&&(j, _)| j >= 1250);
        assert_eq!(first_after_pull, Some(&(1250, 1)));

        let (old, trace) = replay(1000, 125_000, 62_500);
        assert_eq!(old, 100, "latched");
        for &(j, f) in &trace {
            if j >= 2500 {
                assert!(f < FAILURES_PER_STEP, "jiffy {j}: {f}");
                assert_eq!(backoff_factor(f), 0);
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(20_000))]

        // Total over the whole domain, never above old + 1 or the cap, a
        // pull always resets, and the stamp is one the kernel accepts
        // (`newidle_account`'s `sched_lb_stamp_bad()` check): left alone, or moved forward to at most
        // now, across wraps.
        #[test]
        fn bounded(f in any::<u32>(), stamp in any::<u64>(), now in any::<u64>(), hz in any::<u32>(), pulled in any::<bool>()) {
            let r = account(st(f, stamp), now, hz, pulled);
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
        fn decays_with_time(f in any::<u32>(), stamp in any::<u64>(), hz in 1u32..10_000, d1 in 0u64..1 << 62, d2 in 0u64..1 << 62) {
            let (lo, hi) = (d1.min(d2), d1.max(d2));
            let a = account(st(f, stamp), stamp.wrapping_add(lo), hz, false);
            let b = account(st(f, stamp), stamp.wrapping_add(hi), hz, false);
            prop_assert!(b.failures <= a.failures);
        }
    }
}
