// SPDX-License-Identifier: GPL-2.0

//! Where the newidle balance walk over the domains stops.
//!
//! Mirrors, in `sched_balance_newidle()` of Linux 6.12,
//!
//! ```c
//! for_each_domain(this_cpu, sd) {
//!         ...
//!         if (this_rq->avg_idle < curr_cost + sd->max_newidle_lb_cost)
//!                 break;
//! ```
//!
//! and adds two of the seeds' ideas, each behind its own flag:
//!
//! - Jason Low, "sched: Limit idle_balance() when it is being used
//!   too frequently" (2013; flag `NEWIDLE_BACKOFF`): the balance cost
//!   is multiplied by N from [`super::newidle_backoff::backoff_factor`], so
//!   a CPU whose newidle balances keep pulling nothing needs a longer
//!   expected idle period before it tries again;
//! - Rohit Jain, "sched: reduce migration cost between faster caches
//!   for idle_balance" (2018; flag `SD_MIGRATION_COST`): the domain
//!   level's migration cost, the cache footprint a pulled task loses, is
//!   added: `avg_idle < curr_cost + max_newidle_lb_cost + sd_migration_cost`.
//!
//! With both on, the multiplier applies to the measured balance cost only
//! (`N * (curr_cost + max_newidle_lb_cost) + sd_migration_cost`): N counts
//! balances that found nothing, which says nothing about cache refill.
//!
//! All times are nanoseconds; sums and products saturate, so no input can
//! make the walk continue by overflowing (the C `u64` sum would need 584
//! years of cost to wrap).

use super::newidle_backoff::backoff_factor;

/// Inputs of one step of the walk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WalkStep {
    /// `this_rq->avg_idle`.
    pub avg_idle_ns: u64,
    /// Time spent balancing lower domains in this walk.
    pub curr_cost_ns: u64,
    /// `sd->max_newidle_lb_cost`.
    pub max_newidle_lb_cost_ns: u64,
    /// Migration cost of this domain's level (Jain 2018).
    pub migration_cost_ns: u64,
    /// Newidle attempts on this CPU that pulled nothing since the last
    /// pull, aged (Low 2013; `newidle_streak::Streak::failures`).
    pub consecutive_failures: u32,
    /// `sched_feat(NEWIDLE_BACKOFF)`.
    pub newidle_backoff: bool,
    /// `sched_feat(SD_MIGRATION_COST)`.
    pub sd_migration_cost: bool,
}

/// True if the walk stops at this domain (the C `break`).
pub fn stop_at_domain(s: WalkStep) -> bool {
    let mut cost_ns = s.curr_cost_ns.saturating_add(s.max_newidle_lb_cost_ns);
    if s.newidle_backoff {
        let n = backoff_factor(s.consecutive_failures);
        if n > 1 {
            cost_ns = cost_ns.saturating_mul(u64::from(n));
        }
    }
    if s.sd_migration_cost {
        cost_ns = cost_ns.saturating_add(s.migration_cost_ns);
    }
    s.avg_idle_ns < cost_ns
}

/// True if the walk stops at this domain only because of the backoff:
/// the same step with `NEWIDLE_BACKOFF` off would go on. What the flag
/// changed, one domain at a time, for the module's `backoff_stops`
/// counter (a rule that never acted is inert, not harmless).
pub fn stopped_by_backoff(s: WalkStep) -> bool {
    stop_at_domain(s)
        && !stop_at_domain(WalkStep {
            newidle_backoff: false,
            ..s
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn step(avg_idle: u64, curr: u64, max: u64) -> WalkStep {
        WalkStep {
            avg_idle_ns: avg_idle,
            curr_cost_ns: curr,
            max_newidle_lb_cost_ns: max,
            migration_cost_ns: 0,
            consecutive_failures: 0,
            newidle_backoff: false,
            sd_migration_cost: false,
        }
    }

    // N times a cost near u64::MAX saturates: the walk stops for any
    // idle time. A wrapping product would come out small and let it go
    // on (a mutant that survived before).
    #[test]
    fn backoff_product_saturates() {
        let mut s = step(u64::MAX - 1, 0, u64::MAX / 16);
        s.newidle_backoff = true;
        s.consecutive_failures = 160; // N = 32
        assert!(stop_at_domain(s));
    }

    // The sums saturate too. The C's `curr_cost + sd->max_newidle_lb_cost`
    // would wrap in u64 and let the walk go on; costs that large mean "do
    // not balance", so the rule stops instead.
    #[test]
    fn cost_sums_saturate() {
        assert!(stop_at_domain(step(u64::MAX - 1, u64::MAX, 2)));
        let mut s = step(u64::MAX - 1, u64::MAX - 10, 0);
        s.sd_migration_cost = true;
        s.migration_cost_ns = 20;
        assert!(stop_at_domain(s));
    }

    #[test]
    fn flags_off_is_stock() {
        assert!(stop_at_domain(step(99, 50, 50)));
        assert!(!stop_at_domain(step(100, 50, 50)));
        let mut s = step(100, 50, 50);
        s.consecutive_failures = 1000;
        s.migration_cost_ns = 1_000_000;
        assert!(!stop_at_domain(s), "flags off ignore both extras");
    }

    // Jason Low: 30 failures give N = 6.
    #[test]
    fn backoff_after_thirty_failures() {
        let mut s = step(500, 40, 50);
        s.newidle_backoff = true;
        s.consecutive_failures = 30;
        assert!(stop_at_domain(s), "500 < 6 * 90");
        s.avg_idle_ns = 540;
        assert!(!stop_at_domain(s));
        s.consecutive_failures = 4;
        s.avg_idle_ns = 90;
        assert!(!stop_at_domain(s), "under 5 failures: stock");
    }

    // Rohit Jain: SMT 0, MC 50 us, NUMA 500 us on top of the balance cost.
    #[test]
    fn migration_cost_per_level() {
        let mut s = step(300_000, 10_000, 20_000);
        s.sd_migration_cost = true;
        s.migration_cost_ns = 0;
        assert!(!stop_at_domain(s), "SMT");
        s.migration_cost_ns = 50_000;
        assert!(!stop_at_domain(s), "MC");
        s.migration_cost_ns = 500_000;
        assert!(stop_at_domain(s), "NUMA");
    }

    #[test]
    fn both_flags_scale_only_the_measured_cost() {
        let mut s = step(0, 10, 10);
        s.newidle_backoff = true;
        s.sd_migration_cost = true;
        s.consecutive_failures = 10; // N = 2
        s.migration_cost_ns = 100;
        s.avg_idle_ns = 139;
        assert!(stop_at_domain(s), "139 < 2 * 20 + 100");
        s.avg_idle_ns = 140;
        assert!(!stop_at_domain(s));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(20_000))]

        #[test]
        fn total(a in any::<u64>(), c in any::<u64>(), m in any::<u64>(), mc in any::<u64>(),
                 f in any::<u32>(), b in any::<bool>(), g in any::<bool>()) {
            let _ = stop_at_domain(WalkStep {
                avg_idle_ns: a, curr_cost_ns: c, max_newidle_lb_cost_ns: m,
                migration_cost_ns: mc, consecutive_failures: f, newidle_backoff: b, sd_migration_cost: g,
            });
        }

        // The flags only ever stop the walk earlier than stock.
        #[test]
        fn never_walks_further_than_stock(a in any::<u64>(), c in 0u64..1 << 40, m in 0u64..1 << 40,
                                          mc in any::<u64>(), f in any::<u32>(), b in any::<bool>(), g in any::<bool>()) {
            let stock = stop_at_domain(step(a, c, m));
            let s = WalkStep { avg_idle_ns: a, curr_cost_ns: c, max_newidle_lb_cost_ns: m,
                               migration_cost_ns: mc, consecutive_failures: f, newidle_backoff: b, sd_migration_cost: g };
            if stock {
                prop_assert!(stop_at_domain(s));
            }
            // Stock equals the C expression where it cannot wrap.
            prop_assert_eq!(stock, a < c + m);
        }
    }

    // Only the backoff's own stops count: a stop the stock test makes
    // anyway, a walk that goes on, and the flag off are not.
    #[test]
    fn backoff_stops_are_the_flags_own() {
        let mut s = step(100_000, 0, 10_000);
        s.newidle_backoff = true;
        s.consecutive_failures = 100; // N = 20: 200 us > 100 us
        assert!(stopped_by_backoff(s));
        s.consecutive_failures = 4; // N = 0: stock goes on
        assert!(!stopped_by_backoff(s));
        s.consecutive_failures = 100;
        s.newidle_backoff = false;
        assert!(!stopped_by_backoff(s));
        let mut stock_stops = step(5_000, 0, 10_000);
        stock_stops.newidle_backoff = true;
        stock_stops.consecutive_failures = 100;
        assert!(stop_at_domain(stock_stops) && !stopped_by_backoff(stock_stops));
    }
}
