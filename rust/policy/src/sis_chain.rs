// SPDX-License-Identifier: GPL-2.0

//! One wakeup's `select_idle_cpu()` under the series: the chain of SIS
//! rules that the kernel's `sis_select`/`sis_account` hooks, the simulator
//! and the tests all run, so that the order of the steps lives here once.
//!
//! It follows Peter Zijlstra's "[RFC 00/11] select_idle_sibling rework"
//! (2018) as the `sis_select` hook and its shim `sched_lb_select_idle_cpu()`
//! wire it into `kernel/sched/fair.c`:
//!
//! ```text
//!   select_idle_sibling()          target, prev, recent CPU: stock checks
//!     select_idle_cpu()            the shim: masks, flags, rq statistics
//!       sis_select hook  ────────► select():
//!                                    1. SIS_AGE   age this CPU's wake_avg
//!                                                 (halves per jiffy, RFC 02)
//!                                    2. budget    SIS_PROP from the
//!                                                 predicted idle time and the
//!                                                 per-CPU scan cost (RFC 03/
//!                                                 04), SIS_UTIL's nr_idle_scan,
//!                                                 the tighter wins; none: skip
//!                                    3. scan      SIS_FOLD with an idle core
//!                                                 hinted: cores from the
//!                                                 target's (RFC 07/08); else
//!                                                 CPUs after the target
//!                                                 (RFC 05/06)
//!       timed by the shim
//!       sis_account hook ────────► account():
//!                                    4. cost      per-CPU scan cost average
//!                                    5. SIS_ONCE  spend the scan's time from
//!                                                 wake_avg (RFC 01)
//! ```
//!
//! Steps 1 and 5 write this CPU's `wake_avg`, step 4 the scan cost; the
//! shim stores what these functions return, and checks it first (the
//! average never rises, the stamp only moves forward, the cost stays
//! between the old one and this scan's). The scan itself asks idle state
//! through [`LlcView`] one CPU at a time: a wakeup must only touch the
//! runqueues its budget lets it visit.

use super::sis_age;
use super::sis_budget;
use super::sis_cost;
use super::sis_select::{self, IdleView, Scan};
use super::sis_stock;
use super::words::Words;

/// The `sched_feat` flags that shape a scan, as the call site read them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SisFlags {
    /// SIS_PROP: a budget proportional to the predicted idle time.
    pub prop: bool,
    /// SIS_UTIL (stock 6.12): the LLC's `nr_idle_scan` budget.
    pub util: bool,
    /// SIS_AGE: predict the idle time from the aged wake average.
    pub age: bool,
    /// SIS_ONCE: a scan spends its time from the wake average.
    pub once: bool,
    /// SIS_FOLD: one budgeted scan over cores while a core is idle.
    pub fold: bool,
}

/// This CPU's wake average: the idle time SIS_AGE predicts, and the jiffy
/// it was last aged at (`rq->wake_avg`, `rq->wake_stamp`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WakeAvg {
    /// Predicted idle time, ns.
    pub avg_ns: u64,
    /// When it was last aged, jiffies.
    pub stamp_jiffies: u64,
}

/// What a wakeup's scan starts from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SisInput {
    /// The flags.
    pub flags: SisFlags,
    /// This CPU's wake average before the scan.
    pub wake: WakeAvg,
    /// Now, jiffies.
    pub now_jiffies: u64,
    /// `rq->avg_idle`, ns: the prediction without SIS_AGE.
    pub avg_idle_ns: u64,
    /// What visiting one CPU has cost on average (RFC 03), ns.
    pub avg_scan_cost_ns: u64,
    /// CPUs in the LLC.
    pub span_weight: u32,
    /// SIS_UTIL's `nr_idle_scan + 1` (1: the LLC is overloaded).
    pub util_nr: u32,
    /// Most SMT threads a core of the LLC has.
    pub smt_weight: u32,
    /// The LLC's `has_idle_cores` hint.
    pub has_idle_core: bool,
    /// The wakeup's target CPU, which the caller has checked already.
    pub target: u32,
    /// Bits in the masks (`nr_cpumask_bits`).
    pub nbits: u32,
}

/// The LLC as a scan sees it.
pub trait LlcView: IdleView {
    /// How the view's CPU masks are read.
    type Mask: Words + ?Sized;
    /// How the view lends its cores' SMT masks.
    type Smt<'v>: SmtView
    where
        Self: 'v;
    /// The LLC's CPUs the task may run on.
    fn cpus(&self) -> &Self::Mask;
    /// The first thread of each core of the LLC.
    fn cores(&self) -> &Self::Mask;
    /// The cores' threads, or `None` where the view does not know them:
    /// then there is no core scan.
    fn smt(&self) -> Option<Self::Smt<'_>>;
}

/// The SMT threads of the LLC's cores, asked one core at a time.
pub trait SmtView {
    /// How a core's mask is read.
    type Mask: Words + ?Sized;
    /// The SMT threads of `core`, lent until the next call. The kernel
    /// answers every call from one per-CPU buffer that the next answer
    /// rewrites, so the mask borrows `self` mutably: no policy can hold
    /// two cores' masks at once, or one past the next question.
    fn siblings(&mut self, core: u32) -> &Self::Mask;
}

/// Which scan ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScanKind {
    /// None: SIS_UTIL found the LLC overloaded.
    Skipped,
    /// The CPU scan from the CPU after the target.
    Cpus,
    /// The folded core scan from the target's core.
    Cores,
    /// Stock 6.12's unbudgeted core scan: an idle core is hinted and no
    /// flag of the call wants the policy to scan (see [`select`]). Its
    /// `found_idle_core` says whether stock leaves the hint set, and its
    /// `loops` are 0: 6.12 keeps no scan cost, so none is charged.
    StockCores,
}

/// What [`select`] decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SisAnswer {
    /// The CPU picked, visits and whether a whole idle core turned up.
    pub scan: Scan,
    /// Which scan it was; see [`SisAnswer::clears_idle_cores`].
    pub kind: ScanKind,
    /// This CPU's wake average to store (aged by SIS_AGE).
    pub wake: WakeAvg,
    /// SIS_PROP's budget was tighter than SIS_UTIL's alone for the scan
    /// that ran: the scan stopped where stock's would not have had to.
    pub prop_bound: bool,
}

impl SisAnswer {
    /// Whether the LLC's `has_idle_cores` hint is to be cleared: after a
    /// core scan that found no core with every thread idle, even a
    /// partial one ("[RFC 08/11] sched/fair: Optimize SIS_FOLD"). A scan
    /// that SIS_UTIL skipped, or a CPU scan, leaves the hint alone, as
    /// stock does. The one place this is decided: the kernel's shim (which
    /// refuses a clear without a core scan) and the simulator act on it.
    pub fn clears_idle_cores(&self) -> bool {
        matches!(self.kind, ScanKind::Cores | ScanKind::StockCores) && !self.scan.found_idle_core
    }
}

/// Whether the policy scans the LLC at all, instead of stock's
/// `select_idle_cpu()`: SIS_FOLD always (its core scan replaces stock's
/// while the hint is set, its CPU scan stock's otherwise); SIS_PROP only
/// when no idle core is hinted, so stock's unbudgeted core scan keeps
/// looking for one. The kernel asks this in C before any hook runs
/// (`sched_lb_sis_wanted()`, which `rust/cref` compares with this for
/// every input); the simulator asks this function, and the module's
/// judge ([`super::sis_judge`]) to know which flags made the policy scan.
pub fn policy_scans(flags: SisFlags, has_idle_core: bool) -> bool {
    flags.fold || (!has_idle_core && flags.prop)
}

/// Steps 1 to 3: ages the wake average, budgets the scan and runs it.
pub fn select<V: LlcView>(view: &V, i: &SisInput) -> SisAnswer {
    let wake = if i.flags.age {
        let (avg_ns, stamp_jiffies) =
            sis_age::age_wake_avg(i.wake.avg_ns, i.wake.stamp_jiffies, i.now_jiffies);
        WakeAvg {
            avg_ns,
            stamp_jiffies,
        }
    } else {
        i.wake
    };
    let idle_ns = sis_age::predicted_idle_ns(i.flags.age, wake.avg_ns, i.avg_idle_ns);
    let prop = i
        .flags
        .prop
        .then(|| sis_budget::sis_prop_cores(i.span_weight, idle_ns, i.avg_scan_cost_ns));
    let util = i.flags.util.then_some(i.util_nr);
    let Some(budget) = sis_budget::combine(prop, util, i.smt_weight) else {
        return SisAnswer {
            scan: Scan {
                cpu: None,
                loops: 0,
                found_idle_core: false,
            },
            kind: ScanKind::Skipped,
            wake,
            prop_bound: false,
        };
    };
    // The kernel chose to call on sched_feat()'s static keys but hands
    // the flags from sysctl_sched_features, which a write to
    // sched/features changes first, the keys a text patch later: a wakeup
    // in between brings flags that want no policy scan (`policy_scans()`).
    // Their answer is stock's. SIS_UTIL's skip above is stock's, and so,
    // without an idle core hinted, is the CPU scan below with SIS_UTIL's
    // budget alone; with one hinted, stock scans cores unbudgeted, which
    // only stock's own walk gives.
    if i.has_idle_core && !policy_scans(i.flags, i.has_idle_core) {
        let stock = sis_stock::select_idle_cpu(view, i);
        return SisAnswer {
            scan: Scan {
                cpu: stock.cpu,
                loops: 0,
                found_idle_core: !stock.clears_idle_cores,
            },
            kind: ScanKind::StockCores,
            wake,
            prop_bound: false,
        };
    }
    // What the budget would be without SIS_PROP (only asked with it on).
    let unprop = || sis_budget::combine(None, util, i.smt_weight);
    // Folding only pays where a core has threads to fold, and only while
    // the hint says an idle core may exist (RFC 08).
    if i.flags.fold && i.has_idle_core && i.smt_weight > 1 {
        if let Some(mut smt) = view.smt() {
            let scan = sis_select::scan_cores_fold(
                view,
                view.cores(),
                i.nbits,
                &mut smt,
                i.target,
                budget.cores,
            );
            return SisAnswer {
                scan,
                kind: ScanKind::Cores,
                wake,
                prop_bound: prop.is_some() && unprop().is_some_and(|b| budget.cores < b.cores),
            };
        }
    }
    // The target was checked before the scan, so it starts after it.
    let scan = sis_select::scan_cpus(
        view,
        view.cpus(),
        i.nbits,
        i.target.wrapping_add(1),
        budget.cpus,
    );
    SisAnswer {
        scan,
        kind: ScanKind::Cpus,
        wake,
        prop_bound: prop.is_some() && unprop().is_some_and(|b| budget.cpus < b.cpus),
    }
}

/// What a finished scan leaves behind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Accounted {
    /// The waking CPU's scan cost average, ns (`rq->sis_avg_scan_cost`, per CPU since patch 0012).
    pub avg_scan_cost_ns: u64,
    /// This CPU's predicted idle time after the scan, ns.
    pub wake_avg_ns: u64,
}

/// Steps 4 and 5, after the shim timed the scan: a scan that visited
/// nothing says nothing about the cost of a visit; SIS_ONCE charges the
/// scan's time to the idle time it predicted, so back-to-back wakeups do
/// not each get the full budget.
pub fn account(
    avg_scan_cost_ns: u64,
    wake_avg_ns: u64,
    scan_time_ns: u64,
    loops: u32,
    sis_once: bool,
) -> Accounted {
    Accounted {
        avg_scan_cost_ns: if loops > 0 {
            sis_cost::update_avg_scan_cost(avg_scan_cost_ns, scan_time_ns, loops)
        } else {
            avg_scan_cost_ns
        },
        wake_avg_ns: if sis_once {
            sis_age::spend_wake_avg(wake_avg_ns, scan_time_ns)
        } else {
            wake_avg_ns
        },
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use crate::test_llc::Llc;
    use proptest::prelude::*;
    use std::vec::Vec;

    fn input(nbits: u32, smt: u32) -> SisInput {
        SisInput {
            flags: SisFlags::default(),
            wake: WakeAvg::default(),
            now_jiffies: 100,
            avg_idle_ns: 1_000_000,
            avg_scan_cost_ns: 1_000,
            span_weight: nbits,
            util_nr: 3,
            smt_weight: smt,
            has_idle_core: false,
            target: 0,
            nbits,
        }
    }

    // SIS_UTIL saying "overloaded" skips the scan: no CPU asked, but
    // SIS_AGE's aging still counts (the shim stores it).
    #[test]
    fn overloaded_llc_is_not_scanned_but_ages() {
        let llc = Llc::consecutive(8, 1, &[]);
        let mut i = input(8, 1);
        i.flags = SisFlags {
            util: true,
            age: true,
            ..SisFlags::default()
        };
        i.util_nr = 1;
        i.wake = WakeAvg {
            avg_ns: 800,
            stamp_jiffies: 98,
        };
        let a = select(&llc, &i);
        assert_eq!(a.kind, ScanKind::Skipped);
        assert_eq!(a.scan.loops, 0);
        assert_eq!(llc.idle_asks.get(), 0);
        assert_eq!(
            a.wake,
            WakeAvg {
                avg_ns: 200,
                stamp_jiffies: 100
            }
        );
    }

    // The CPU scan starts after the target and wraps: with 0..=5 busy and
    // the target 5, CPU 6 is the first idle one after it.
    #[test]
    fn cpu_scan_starts_after_target() {
        let llc = Llc::consecutive(8, 1, &[0, 1, 2, 3, 4, 5]);
        let mut i = input(8, 1);
        i.target = 5;
        let a = select(&llc, &i);
        assert_eq!(a.kind, ScanKind::Cpus);
        assert_eq!(a.scan.cpu, Some(6));
        assert_eq!(a.scan.loops, 1);
        i.target = 7;
        assert_eq!(select(&llc, &i).scan.cpu, Some(6));
    }

    // The CPU after target u32::MAX is 0, as `target + 1` in an unsigned
    // int is: a saturating "+ 1" would start the scan at u32::MAX % 8 = 7
    // and pick 7 before 0.
    #[test]
    fn target_at_u32_max_scans_from_0() {
        let llc = Llc::consecutive(8, 1, &[1, 2, 3, 4, 5, 6]);
        let mut i = input(8, 1);
        i.target = u32::MAX;
        let a = select(&llc, &i);
        assert_eq!(a.scan.cpu, Some(0));
        assert_eq!(a.scan.loops, 1);
    }

    // Fold needs the flag, the hint, SMT and sibling masks; without the
    // hint or SMT the scan is over CPUs, without the flag it is stock's.
    #[test]
    fn fold_only_with_flag_hint_and_smt() {
        let llc = Llc::consecutive(8, 2, &[1, 2]);
        let mut i = input(8, 2);
        i.flags.fold = true;
        i.has_idle_core = true;
        i.target = 1;
        let a = select(&llc, &i);
        assert_eq!(a.kind, ScanKind::Cores);
        // Cores from the target's (0-1, busy 1), then 2-3 (busy 2), 4-5 idle.
        assert_eq!(a.scan.cpu, Some(4));
        assert!(a.scan.found_idle_core);
        for off in 1..3 {
            let mut j = i;
            match off {
                1 => j.has_idle_core = false,
                _ => j.smt_weight = 1,
            }
            assert_eq!(select(&llc, &j).kind, ScanKind::Cpus, "case {off}");
        }
        // Without the flag but with the hint, the scan is stock's: its
        // core scan from the CPU after the target meets 2-3 (2 busy, 3
        // idle: remembered), then 4-5, idle.
        let mut j = i;
        j.flags.fold = false;
        let a = select(&llc, &j);
        assert_eq!(a.kind, ScanKind::StockCores);
        assert_eq!(a.scan.cpu, Some(4));
        assert!(!a.clears_idle_cores());
        let flat = Llc::consecutive(8, 1, &[1, 2]);
        let mut j = i;
        j.smt_weight = 2;
        assert_eq!(select(&flat, &j).kind, ScanKind::Cpus);
    }

    // SIS_AGE replaces avg_idle by the aged wake average in the SIS_PROP
    // budget: a long-idle CPU whose wake_avg decayed scans less.
    #[test]
    fn age_shrinks_the_prop_budget() {
        let llc = Llc::consecutive(64, 1, &(0..63).collect::<Vec<_>>());
        let mut i = input(64, 1);
        i.flags.prop = true;
        i.avg_scan_cost_ns = 1_000_000;
        i.avg_idle_ns = 64_000_000;
        i.wake = WakeAvg {
            avg_ns: 64_000_000,
            stamp_jiffies: 90,
        };
        let without = select(&llc, &i);
        i.flags.age = true;
        let with = select(&llc, &i);
        assert!(with.wake.avg_ns < i.wake.avg_ns);
        assert!(
            with.scan.loops < without.scan.loops,
            "{with:?} vs {without:?}"
        );
    }

    #[test]
    fn account_steps() {
        let a = account(1000, 5000, 4000, 0, false);
        assert_eq!(
            a,
            Accounted {
                avg_scan_cost_ns: 1000,
                wake_avg_ns: 5000
            }
        );
        let a = account(1000, 5000, 4000, 2, true);
        assert_eq!(
            a.avg_scan_cost_ns,
            crate::sis_cost::update_avg_scan_cost(1000, 4000, 2)
        );
        assert_eq!(a.wake_avg_ns, 1000);
    }

    proptest! {
        // The chain never visits more than its budget allows (the shim
        // refuses loops > span + 1), the CPU it returns is idle and in
        // the span, and the wake average never rises.
        #[test]
        fn within_budget_and_sound(
            smt in 1u32..=4,
            cores in 1u32..=16,
            busy_bits in any::<u64>(),
            flags in any::<[bool; 5]>(),
            hint in any::<bool>(),
            target_seed in any::<u32>(),
            util_nr in 0u32..40,
            avg_idle_ns in any::<u64>(),
            cost_ns in any::<u64>(),
            wake_ns in any::<u64>(),
            stamp in any::<u64>(),
            now in any::<u64>(),
        ) {
            let nbits = smt * cores;
            let busy: Vec<u32> = (0..nbits).filter(|c| busy_bits >> (c % 64) & 1 != 0).collect();
            let llc = Llc::consecutive(nbits, smt, &busy);
            let i = SisInput {
                flags: SisFlags { prop: flags[0], util: flags[1], age: flags[2], once: flags[3], fold: flags[4] },
                wake: WakeAvg { avg_ns: wake_ns, stamp_jiffies: stamp },
                now_jiffies: now,
                avg_idle_ns,
                avg_scan_cost_ns: cost_ns,
                span_weight: nbits,
                util_nr,
                smt_weight: smt,
                has_idle_core: hint,
                target: target_seed % nbits,
                nbits,
            };
            let a = select(&llc, &i);
            // Only SIS_UTIL's "overloaded" skips the scan.
            prop_assert_eq!(a.kind == ScanKind::Skipped, i.flags.util && util_nr <= 1);
            match a.kind {
                ScanKind::Skipped => prop_assert_eq!(a.scan.loops, 0),
                ScanKind::Cpus => prop_assert!(a.scan.loops <= nbits.saturating_add(1)),
                ScanKind::Cores => prop_assert!(a.scan.loops <= cores.saturating_add(1)),
                ScanKind::StockCores => {
                    prop_assert!(hint && !i.flags.fold);
                    prop_assert_eq!(a.scan.loops, 0);
                }
            }
            prop_assert!(llc.idle_asks.get() <= nbits.saturating_mul(smt));
            if let Some(c) = a.scan.cpu {
                prop_assert!(c < nbits && !busy.contains(&c));
            }
            prop_assert!(a.wake.avg_ns <= wake_ns);
            if i.flags.age {
                // Forward, and not past now.
                let moved = a.wake.stamp_jiffies.wrapping_sub(stamp);
                prop_assert!(moved == 0 || moved <= now.wrapping_sub(stamp));
            } else {
                prop_assert_eq!(a.wake, i.wake);
            }
        }
    }

    // The hint is cleared after a fruitless core scan only: not after a
    // skipped scan (SIS_UTIL overloaded; the shim used to clear it there)
    // nor after a CPU scan or a core scan that found an idle core.
    #[test]
    fn only_a_fruitless_core_scan_clears_the_hint() {
        let scan = |found| Scan {
            cpu: None,
            loops: 1,
            found_idle_core: found,
        };
        let answer = |kind, found| SisAnswer {
            scan: scan(found),
            kind,
            wake: WakeAvg::default(),
            prop_bound: false,
        };
        assert!(answer(ScanKind::Cores, false).clears_idle_cores());
        assert!(!answer(ScanKind::Cores, true).clears_idle_cores());
        assert!(!answer(ScanKind::Skipped, false).clears_idle_cores());
        assert!(!answer(ScanKind::Cpus, false).clears_idle_cores());
    }
}
