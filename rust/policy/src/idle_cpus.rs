// SPDX-License-Identifier: GPL-2.0

//! Idle-CPU imbalance threshold of `sched_balance_find_src_group()`.
//!
//! Mirrors, in `kernel/sched/fair.c` of Linux 6.12, the test
//!
//! ```c
//! if (busiest->group_weight > 1 &&
//!     local->idle_cpus <= (busiest->idle_cpus + 1))
//!         goto out_balanced;
//! ```
//!
//! which runs when the balancing CPU is idle and the busiest group is not
//! overloaded, and the two replacements proposed in "[patch v3.18+
//! regression fix] sched: Further improve spurious CPU_IDLE active
//! migrations" (Mike Galbraith, Peter Zijlstra, Vincent Guittot, 2016):
//!
//! - Galbraith v2: tolerate a difference of 2 idle CPUs where
//!   `sd_llc_size == 2`, so a communicating pair may share an L2 on
//!   processors without an L3 (flag `BALANCE_IDLE_LLC2`, default off);
//! - Guittot: a `BALANCE_IDLE_CPUS` flag, on by default; when off, the
//!   tolerated difference is `sd_llc_size`.
//!
//! With the default flags the rule is the stock one: Zijlstra's point that
//! for two unrelated tasks on two groups 1,1 beats 0,2 holds, and Guittot's
//! that `sd_llc_size == 2` alone does not identify the affected machines.

/// The two `sched_feat` flags the C shim passes in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IdleCpusFlags {
    /// `sched_feat(BALANCE_IDLE_CPUS)`: balance idle CPUs down to a
    /// difference of one (stock). Off: tolerate up to `sd_llc_size`.
    pub balance_idle_cpus: bool,
    /// `sched_feat(BALANCE_IDLE_LLC2)`: with `balance_idle_cpus` on,
    /// tolerate two where `sd_llc_size == 2`.
    pub balance_idle_llc2: bool,
}

impl IdleCpusFlags {
    /// The defaults of `kernel/sched/features.h`, which give the stock rule.
    pub const DEFAULT: Self = Self {
        balance_idle_cpus: true,
        balance_idle_llc2: false,
    };
    /// `BALANCE_IDLE_LLC2` on top of the default: Galbraith's v2.
    pub const BALANCE_IDLE_LLC2: Self = Self {
        balance_idle_cpus: true,
        balance_idle_llc2: true,
    };
    /// `NO_BALANCE_IDLE_CPUS`: Guittot's proposal.
    pub const NO_BALANCE_IDLE_CPUS: Self = Self {
        balance_idle_cpus: false,
        balance_idle_llc2: false,
    };
}

/// The tie-breaker of 43f4d66637bc: a difference of one idle CPU is a tie.
pub const STOCK_IDLE_CPUS_THRESHOLD: u32 = 1;

/// How many more idle CPUs the local group may have than the busiest group
/// before the pair counts as imbalanced.
///
/// `llc_size` is `sd_llc_size` of the balancing CPU, at least 1 once the
/// domains are built; a 0 (no domains yet) is read as 1, so the threshold
/// never drops below the stock tie-breaker.
pub fn idle_cpus_threshold(llc_size: u32, flags: IdleCpusFlags) -> u32 {
    if !flags.balance_idle_cpus {
        return llc_size.max(STOCK_IDLE_CPUS_THRESHOLD);
    }
    if flags.balance_idle_llc2 && llc_size == 2 {
        return 2;
    }
    STOCK_IDLE_CPUS_THRESHOLD
}

/// True if the groups count as balanced with respect to idle CPUs, so
/// `sched_balance_find_src_group()` goes to `out_balanced`.
///
/// The C adds in `unsigned int` and would wrap at `UINT_MAX`; idle CPU
/// counts never get near it, and saturating keeps the answer monotonic
/// over the whole domain instead.
pub fn idle_cpus_balanced(local_idle_cpus: u32, busiest_idle_cpus: u32, threshold: u32) -> bool {
    local_idle_cpus <= busiest_idle_cpus.saturating_add(threshold)
}

/// The whole decision the hook makes: threshold from the flags, then the
/// comparison.
///
/// The default flags take a path of their own, so that with them the rule
/// costs no more instructions than the C it replaces (rule_cost in
/// `rust/cref`): the two flags read as one two-bit number are one test
/// where testing each takes two, which pays for the saturation the C does
/// not do; and `local - 1 <= busiest`, saturating at 0, gives the answer
/// of `local <= busiest + 1` saturating in one instruction fewer.
pub fn is_balanced(
    local_idle_cpus: u32,
    busiest_idle_cpus: u32,
    llc_size: u32,
    flags: IdleCpusFlags,
) -> bool {
    let flag_bits = u32::from(flags.balance_idle_cpus) | u32::from(flags.balance_idle_llc2) << 1;
    if flag_bits == DEFAULT_FLAG_BITS {
        return local_idle_cpus.saturating_sub(STOCK_IDLE_CPUS_THRESHOLD) <= busiest_idle_cpus;
    }
    idle_cpus_balanced(
        local_idle_cpus,
        busiest_idle_cpus,
        idle_cpus_threshold(llc_size, flags),
    )
}

/// [`IdleCpusFlags::DEFAULT`] as `is_balanced()` reads the flags:
/// `BALANCE_IDLE_CPUS` bit 0, `BALANCE_IDLE_LLC2` bit 1.
const DEFAULT_FLAG_BITS: u32 = 1;

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const LLC2: IdleCpusFlags = IdleCpusFlags::BALANCE_IDLE_LLC2;
    const NO_IDLE_CPUS: IdleCpusFlags = IdleCpusFlags::NO_BALANCE_IDLE_CPUS;

    /// The stock C expression, for comparison where it cannot wrap.
    fn stock_c(local: u32, busiest: u32) -> bool {
        u64::from(local) <= u64::from(busiest) + 1
    }

    #[test]
    fn defaults_are_the_stock_rule() {
        for llc in [0, 1, 2, 4, 8, 64, u32::MAX] {
            assert_eq!(idle_cpus_threshold(llc, IdleCpusFlags::DEFAULT), 1);
        }
    }

    // Zijlstra: "if you have two tasks on two groups, 0,2 is a valid
    // distribution" under +2. Two 2-CPU groups, both tasks in busiest:
    // local has 2 idle, busiest 0.
    #[test]
    fn two_tasks_two_groups() {
        // Stock: 2 <= 0 + 1 is false, so the pair is split (1,1).
        assert!(!is_balanced(2, 0, 2, IdleCpusFlags::DEFAULT));
        // Galbraith v2 on an L2-pair LLC: 0,2 is balanced, buddies stay.
        assert!(is_balanced(2, 0, 2, LLC2));
        // Galbraith v2 leaves an L3 machine (llc 4) alone.
        assert!(!is_balanced(2, 0, 4, LLC2));
        // Guittot's flag off: the LLC size is the tolerance.
        assert!(is_balanced(2, 0, 2, NO_IDLE_CPUS));
    }

    // Zijlstra: with 3 tasks on 2 groups one group holds 2; +1 already
    // calls 1,2 balanced so the odd task is not bounced.
    #[test]
    fn three_tasks_two_groups() {
        // Two 2-CPU groups holding 1 and 2 tasks: local idle 1, busiest 0.
        assert!(is_balanced(1, 0, 2, IdleCpusFlags::DEFAULT));
        // Two 4-CPU groups holding 0 and 3: local idle 4, busiest 1.
        assert!(!is_balanced(4, 1, 4, IdleCpusFlags::DEFAULT));
        assert!(!is_balanced(4, 1, 4, LLC2));
        assert!(is_balanced(4, 1, 4, NO_IDLE_CPUS));
    }

    #[test]
    fn threshold_by_llc_size() {
        let cases = [
            // (llc, stock, galbraith_v2, guittot_off)
            (1, 1, 1, 1),
            (2, 1, 2, 2),
            (4, 1, 1, 4),
            (8, 1, 1, 8),
        ];
        for (llc, stock, v2, off) in cases {
            assert_eq!(
                idle_cpus_threshold(llc, IdleCpusFlags::DEFAULT),
                stock,
                "llc {llc}"
            );
            assert_eq!(idle_cpus_threshold(llc, LLC2), v2, "llc {llc}");
            assert_eq!(idle_cpus_threshold(llc, NO_IDLE_CPUS), off, "llc {llc}");
        }
    }

    #[test]
    fn llc2_flag_is_ignored_when_balance_idle_cpus_is_off() {
        let off_llc2 = IdleCpusFlags {
            balance_idle_cpus: false,
            balance_idle_llc2: true,
        };
        for llc in [0, 1, 2, 3, 8] {
            assert_eq!(
                idle_cpus_threshold(llc, off_llc2),
                idle_cpus_threshold(llc, NO_IDLE_CPUS)
            );
        }
    }

    #[test]
    fn saturates_at_the_top_of_the_domain() {
        assert!(is_balanced(u32::MAX, u32::MAX, u32::MAX, NO_IDLE_CPUS));
        assert!(is_balanced(
            u32::MAX,
            u32::MAX - 1,
            1,
            IdleCpusFlags::DEFAULT
        ));
        assert!(!is_balanced(
            u32::MAX,
            u32::MAX - 2,
            1,
            IdleCpusFlags::DEFAULT
        ));
    }

    fn any_flags() -> impl Strategy<Value = IdleCpusFlags> {
        (any::<bool>(), any::<bool>()).prop_map(|(a, b)| IdleCpusFlags {
            balance_idle_cpus: a,
            balance_idle_llc2: b,
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(20_000))]

        // No panic (overflow checks are on in test builds) anywhere in
        // the domain, and the threshold never drops below the stock one.
        #[test]
        fn total_and_at_least_stock(l in any::<u32>(), b in any::<u32>(), llc in any::<u32>(), f in any_flags()) {
            let t = idle_cpus_threshold(llc, f);
            prop_assert!(t >= STOCK_IDLE_CPUS_THRESHOLD);
            let _ = is_balanced(l, b, llc, f);
        }

        // The default flags' path of their own answers as the general one.
        #[test]
        fn default_path_is_the_general_rule(l in any::<u32>(), b in any::<u32>(), llc in any::<u32>()) {
            let f = IdleCpusFlags::DEFAULT;
            prop_assert_eq!(
                is_balanced(l, b, llc, f),
                idle_cpus_balanced(l, b, idle_cpus_threshold(llc, f))
            );
        }

        #[test]
        fn default_flags_equal_the_c_expression(l in any::<u32>(), b in 0..u32::MAX, llc in any::<u32>()) {
            prop_assert_eq!(is_balanced(l, b, llc, IdleCpusFlags::DEFAULT), stock_c(l, b));
        }

        // Fewer idle CPUs locally, or more in busiest, can only make the
        // pair more balanced; a larger tolerance likewise.
        #[test]
        fn monotonic(l in any::<u32>(), b in any::<u32>(), t in any::<u32>()) {
            if idle_cpus_balanced(l, b, t) {
                prop_assert!(idle_cpus_balanced(l.saturating_sub(1), b, t));
                prop_assert!(idle_cpus_balanced(l, b.saturating_add(1), t));
                prop_assert!(idle_cpus_balanced(l, b, t.saturating_add(1)));
            }
        }

        // Any policy only ever tolerates more than stock: it never calls
        // a pair imbalanced that the stock rule calls balanced.
        #[test]
        fn never_stricter_than_stock(l in any::<u32>(), b in any::<u32>(), llc in any::<u32>(), f in any_flags()) {
            if is_balanced(l, b, llc, IdleCpusFlags::DEFAULT) {
                prop_assert!(is_balanced(l, b, llc, f));
            }
        }
    }

    // Exhaustive over every realistic group: up to 64 idle CPUs per side
    // and LLCs up to 64 CPUs, all flag combinations, against the two C
    // patches of the thread written out as they would compile.
    #[test]
    fn exhaustive_small_domain_matches_thread_patches() {
        for llc in 0..=64u32 {
            for f in [IdleCpusFlags::DEFAULT, LLC2, NO_IDLE_CPUS] {
                // Galbraith v2: imbalance = llc == 2 ? 2 : 1.
                // Guittot: imbalance = 1; if !BALANCE_IDLE_CPUS: llc.
                let c_imbalance = if !f.balance_idle_cpus {
                    llc.max(1)
                } else if f.balance_idle_llc2 && llc == 2 {
                    2
                } else {
                    1
                };
                for l in 0..=64u32 {
                    for b in 0..=64u32 {
                        assert_eq!(is_balanced(l, b, llc, f), l <= b + c_imbalance);
                    }
                }
            }
        }
    }
}
