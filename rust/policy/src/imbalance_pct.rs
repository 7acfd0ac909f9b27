// SPDX-License-Identifier: GPL-2.0

//! Which `imbalance_pct` the average-load test uses: the flag
//! `LB_REDUCED_IMBALANCE_PCT`.
//!
//! "[PATCH 2/4] sched/fair: reduce minimal imbalance threshold" (Vincent
//! Guittot's fairness series, 2020, merged in v5.10) changed one line of
//! `sd_init()` in `kernel/sched/topology.c`:
//!
//! ```c
//! -                .imbalance_pct          = 125,
//! +                .imbalance_pct          = 117,
//! ```
//!
//! That default reaches only the levels `sd_init()` does not override:
//! SMT domains keep 110 and LLC domains 117, so the patch changed PKG
//! (DIE) and NUMA domains, "the 25% default imbalance threshold for DIE and
//! NUMA domain" of its changelog.
//!
//! A per-domain write to debugfs can set 125 back, but every domain rebuild
//! (CPU hotplug, cpusets) puts `sd_init()`'s value back, so an A/B run
//! cannot rely on it. The flag makes the thread's before and after a
//! policy instead: off, the levels above the LLC test against v5.9's 125,
//! whatever their `imbalance_pct` says; on (the default), every domain
//! tests against its own, which is 6.12.

/// `imbalance_pct` that v5.9's `sd_init()` gave the levels above the LLC.
pub const V59_IMBALANCE_PCT_ABOVE_LLC: u32 = 125;

/// The `imbalance_pct` to test a domain against: the domain's own
/// `domain_pct`, unless `reduced` (`LB_REDUCED_IMBALANCE_PCT`) is off and
/// the domain is `above_llc` (neither SMT nor LLC, so PKG or NUMA).
pub fn imbalance_pct(domain_pct: u32, above_llc: bool, reduced: bool) -> u32 {
    if above_llc && !reduced {
        V59_IMBALANCE_PCT_ABOVE_LLC
    } else {
        domain_pct
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn off_restores_v59_above_the_llc_only() {
        // 6.12's defaults: SMT 110, LLC 117, PKG 117.
        assert_eq!(imbalance_pct(110, false, false), 110, "SMT keeps its own");
        assert_eq!(imbalance_pct(117, false, false), 117, "LLC keeps its own");
        assert_eq!(imbalance_pct(117, true, false), 125, "PKG/NUMA: v5.9");
    }

    #[test]
    fn on_is_the_domains_own() {
        assert_eq!(imbalance_pct(117, true, true), 117);
        // A per-domain write counts while the flag is on.
        assert_eq!(imbalance_pct(140, true, true), 140);
    }

    proptest! {
        #[test]
        fn only_off_above_llc_changes_it(p in any::<u32>(), above in any::<bool>(), reduced in any::<bool>()) {
            let got = imbalance_pct(p, above, reduced);
            if above && !reduced {
                prop_assert_eq!(got, 125);
            } else {
                prop_assert_eq!(got, p);
            }
        }
    }
}
