// SPDX-License-Identifier: GPL-2.0

//! How much of the LLC `select_idle_cpu()` may scan: SIS_PROP as "[RFC
//! 06/11] sched/fair: Make select_idle_cpu() proportional to cores" left
//! it (Peter Zijlstra, 2018), and its combination with 6.12's SIS_UTIL.
//!
//! ```c
//! avg_cost = this_sd->avg_scan_cost + 1;
//! if (sched_feat(SIS_PROP)) {
//!         u64 span_avg = sd->span_weight * avg_idle;
//!         if (span_avg > sis_min_cores * avg_cost)
//!                 nr = div_u64(span_avg, avg_cost);
//!         else
//!                 nr = sis_min_cores;
//! }
//! ```
//!
//! `nr` counts cores: the plain CPU scan gets `nr * sched_smt_weight`
//! CPUs, the folded core scan `nr` cores. `sis_min_cores` is 2.
//!
//! SIS_PROP was removed in 6.7 in favour of SIS_UTIL, which sizes the scan
//! from the LLC's utilisation (`sd_llc_shared->nr_idle_scan`, computed at
//! load balance) and skips it entirely when the LLC is overloaded. With
//! both flags on, each is a limit and the smaller one wins: the scan ends
//! when either budget runs out, and SIS_UTIL's "overloaded, do not scan"
//! stands.

/// RFC 06's floor on the scan, in cores.
pub const SIS_MIN_CORES: u32 = 2;

/// SIS_PROP's budget in cores for an LLC of `span_weight` CPUs, given the
/// predicted idle time and the average per-CPU scan cost.
///
/// The RFC's test and division are one division and a floor: where
/// `span_avg > 2 * avg_cost` the quotient is at least 2, and where not it
/// is at most 2 (exactly 2 only with no remainder), so `nr` is the quotient
/// or 2, whichever is larger. On the path that divides, that spends
/// fewer instructions than the C's test, toward what the rule does and the
/// C does not: a cost of `u64::MAX` (the C divides by zero), a product
/// beyond 64 bits (the C wraps) and a quotient beyond `u32` (the C
/// truncates it into an `int`); `rust/cref/rule-cost-exceptions.txt` has
/// the count.
pub fn sis_prop_cores(span_weight: u32, avg_idle_ns: u64, avg_scan_cost_ns: u64) -> u32 {
    // A cost of u64::MAX: cost + 1, saturated, is u64::MAX, and no
    // span_avg exceeds twice that: the floor.
    let Some(avg_cost) = avg_scan_cost_ns.checked_add(1) else {
        return SIS_MIN_CORES;
    };
    let span_avg = u64::from(span_weight).saturating_mul(avg_idle_ns);
    let cores = span_avg / avg_cost;
    // The floor and the u32 range in one comparison where the budget is
    // neither (the usual case).
    if cores.wrapping_sub(u64::from(SIS_MIN_CORES)) <= u64::from(u32::MAX - SIS_MIN_CORES) {
        return cores as u32;
    }
    u32::try_from(cores).unwrap_or(u32::MAX).max(SIS_MIN_CORES)
}

/// The budget a scan runs with. `None` means no scan at all.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScanBudget {
    /// CPUs the plain scan may visit.
    pub cpus: u32,
    /// Cores the folded scan may visit.
    pub cores: u32,
}

/// Combines the enabled budgets. `prop_cores` is SIS_PROP's (if on),
/// `util_nr` SIS_UTIL's `nr_idle_scan + 1` (if on; the C's `--nr <= 0`
/// stop makes it `nr - 1` CPUs, and 1 means "overloaded, skip"),
/// `smt_weight` the threads per core. Neither on: unlimited.
pub fn combine(
    prop_cores: Option<u32>,
    util_nr: Option<u32>,
    smt_weight: u32,
) -> Option<ScanBudget> {
    let smt = smt_weight.max(1);
    let util_cpus = match util_nr {
        Some(nr) if nr <= 1 => return None,
        Some(nr) => nr - 1,
        None => u32::MAX,
    };
    let (prop_cpus, prop_cores) = match prop_cores {
        Some(c) => (c.saturating_mul(smt), c),
        None => (u32::MAX, u32::MAX),
    };
    let cpus = prop_cpus.min(util_cpus);
    // Whole cores within the CPU budget, but at least one core.
    let util_cores = if util_cpus == u32::MAX {
        u32::MAX
    } else {
        util_cpus.div_ceil(smt)
    };
    Some(ScanBudget {
        cpus,
        cores: prop_cores.min(util_cores).max(1),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    // SIS_UTIL's CPUs in whole cores round up: 3 CPUs of SMT2 are 2
    // cores, not 1 (a mutant with `/` for `div_ceil` survived before).
    #[test]
    fn util_cores_round_up() {
        assert_eq!(
            combine(None, Some(4), 2),
            Some(ScanBudget { cpus: 3, cores: 2 })
        );
        assert_eq!(
            combine(None, Some(6), 4),
            Some(ScanBudget { cpus: 5, cores: 2 })
        );
    }

    // The products and the +1 saturate: a wrapping one would turn a huge
    // idle time into a small budget, or a cost of u64::MAX into a divisor
    // of 0 (mutants that survived before).
    #[test]
    fn extremes_saturate() {
        assert_eq!(sis_prop_cores(2, 1 << 63, 0), u32::MAX);
        assert_eq!(sis_prop_cores(8, u64::MAX, u64::MAX), SIS_MIN_CORES);
        assert_eq!(
            combine(Some(u32::MAX), None, 2),
            Some(ScanBudget {
                cpus: u32::MAX,
                cores: u32::MAX
            })
        );
    }

    // The quotient itself at the ends of the u32 range (one CPU, cost 0:
    // the budget is the idle time): the floor below, saturation above.
    #[test]
    fn quotient_at_the_ends_of_the_range() {
        for (idle, cores) in [
            (0, SIS_MIN_CORES),
            (1, SIS_MIN_CORES),
            (2, 2),
            (3, 3),
            (u64::from(u32::MAX) - 1, u32::MAX - 1),
            (u64::from(u32::MAX), u32::MAX),
            (u64::from(u32::MAX) + 1, u32::MAX),
            (1 << 40, u32::MAX),
        ] {
            assert_eq!(sis_prop_cores(1, idle, 0), cores, "idle={idle}");
        }
    }

    #[test]
    fn proportional_with_floor() {
        // 8-CPU LLC, 1000 ns predicted idle, 99 ns per CPU: 8000/100 = 80.
        assert_eq!(sis_prop_cores(8, 1000, 99), 80);
        // Little idle time: the floor of 2 cores.
        assert_eq!(sis_prop_cores(8, 10, 99), SIS_MIN_CORES);
        assert_eq!(sis_prop_cores(8, 0, 0), SIS_MIN_CORES);
        // Exactly at the floor's edge (span_avg == 2 * avg_cost): floor.
        assert_eq!(sis_prop_cores(2, 100, 99), SIS_MIN_CORES);
        assert_eq!(sis_prop_cores(2, 101, 99), 2);
        assert_eq!(sis_prop_cores(2, 150, 99), 3);
    }

    #[test]
    fn budgets_combine_as_limits() {
        assert_eq!(
            combine(None, None, 2),
            Some(ScanBudget {
                cpus: u32::MAX,
                cores: u32::MAX
            })
        );
        // SIS_PROP alone: 4 cores of SMT2 is 8 CPUs.
        assert_eq!(
            combine(Some(4), None, 2),
            Some(ScanBudget { cpus: 8, cores: 4 })
        );
        // SIS_UTIL alone: nr 5 scans 4 CPUs, 2 cores of SMT2.
        assert_eq!(
            combine(None, Some(5), 2),
            Some(ScanBudget { cpus: 4, cores: 2 })
        );
        // Both: the smaller wins in each unit.
        assert_eq!(
            combine(Some(4), Some(5), 2),
            Some(ScanBudget { cpus: 4, cores: 2 })
        );
        assert_eq!(
            combine(Some(1), Some(9), 2),
            Some(ScanBudget { cpus: 2, cores: 1 })
        );
        // SIS_UTIL says overloaded: no scan, whatever SIS_PROP says.
        assert_eq!(combine(Some(100), Some(1), 2), None);
        assert_eq!(combine(None, Some(0), 1), None);
        // One CPU of budget still visits one (SMT4) core.
        assert_eq!(
            combine(None, Some(2), 4),
            Some(ScanBudget { cpus: 1, cores: 1 })
        );
    }

    proptest! {
        #[test]
        fn total(w in any::<u32>(), i in any::<u64>(), c in any::<u64>(),
                 p in proptest::option::of(any::<u32>()), u in proptest::option::of(any::<u32>()), s in any::<u32>()) {
            prop_assert!(sis_prop_cores(w, i, c) >= SIS_MIN_CORES);
            if let Some(b) = combine(p, u, s) {
                prop_assert!(b.cores >= 1);
            }
        }

        // More predicted idle time never shrinks the budget.
        #[test]
        fn monotonic_in_idle(w in 1u32..512, i in 0u64..1 << 40, c in 0u64..1 << 20) {
            prop_assert!(sis_prop_cores(w, i, c) <= sis_prop_cores(w, i + 1, c));
        }
    }
}
