// SPDX-License-Identifier: GPL-2.0

//! What one `select_idle_cpu()` scan under the series decided against
//! stock 6.12, and its shadow mode: the SIS counterpart of
//! [`super::verdict`], for a hook whose answer is a scan.
//!
//! Stock's answer to a wakeup is stock's scan ([`super::sis_stock`]), and
//! a scan asks about other CPUs' runqueues, which change while it runs.
//! To judge the two picks on the same facts, the policy's scan runs
//! through a [`Recorded`] view, which keeps every idle answer it got;
//! stock's scan then runs through the same view, answered from the record
//! for every CPU the policy visited. For a plain CPU scan that is all of
//! stock's visits up to where the policy stopped: SIS_PROP's budget is
//! never larger than SIS_UTIL's, so the policy's visits are a prefix of
//! stock's, and the two picks differ only where the policy gave up and an
//! idle CPU lay further on.
//!
//! Further on is the scan SIS_PROP saved. Whether to pay for it is the
//! caller's choice (`ask`): with a flag in shadow, stock's pick is the one
//! to return, and with the trace event on, a user asked for it; otherwise
//! a scan whose judging would ask the kernel anything the policy's scan
//! did not is *undecided*, and counted as such, so that a live policy
//! costs what it would cost without the judge.
//!
//! Which flag made the difference: the SIS flags chain into one scan, and
//! undoing one flag to see whether the pick changes would cost one more
//! scan per flag. A differing scan is instead counted for each flag that
//! shaped it: SIS_FOLD when the policy scanned because of it (without it,
//! stock's scan would have run), SIS_PROP when its budget was tighter than
//! SIS_UTIL's, SIS_AGE and SIS_ONCE with SIS_PROP, since they only move
//! its prediction. Shadow mode follows the same attribution: a scan shaped
//! by a flag in shadow returns stock's pick and stock's hint, whole.

use core::cell::Cell;

use super::sis_chain::{self, LlcView, SisAnswer, SisFlags, SisInput};
use super::sis_select::IdleView;
use super::sis_stock;
use super::verdict::{bits, Verdict};

/// The hook's flags, in the order of its `sched_feat` parameters (the
/// module's hook table, the trace event's `flags` bits).
pub const PROP: usize = 0;
/// See [`PROP`].
pub const AGE: usize = 1;
/// See [`PROP`].
pub const ONCE: usize = 2;
/// See [`PROP`].
pub const FOLD: usize = 3;
/// How many flags the hook has.
pub const NR_FLAGS: usize = 4;

/// The hook's flags as an array in [`PROP`]'s order.
pub fn flag_array(f: SisFlags) -> [bool; NR_FLAGS] {
    let mut a = [false; NR_FLAGS];
    a[PROP] = f.prop;
    a[AGE] = f.age;
    a[ONCE] = f.once;
    a[FOLD] = f.fold;
    a
}

/// Idle answers a record holds; a scan that visits more asks again.
const RECORDED: usize = 64;
/// An empty slot.
const EMPTY: u32 = u32::MAX;

/// A view that keeps the idle answers of the scans run through it and
/// answers a CPU asked again from them.
///
/// # Invariants
///
/// The first `len` slots (at most [`RECORDED`]) hold `cpu << 1 | idle` of
/// CPUs below 2^31, in the order asked; the first answer for a CPU is the
/// one the record gives. The others are [`EMPTY`].
pub struct Recorded<'v, V> {
    view: &'v V,
    slots: [Cell<u32>; RECORDED],
    len: Cell<usize>,
    /// Whether the record answers first: only for stock's scan; the
    /// policy's asks each CPU once, and pays no search for it.
    judging: Cell<bool>,
    /// Whether a question the record cannot answer may go to `view`.
    ask: Cell<bool>,
    /// A question went unanswered because `ask` was off.
    missed: Cell<bool>,
}

impl<'v, V: LlcView> Recorded<'v, V> {
    /// An empty record over `view`, asking it as needed.
    pub fn new(view: &'v V) -> Self {
        Recorded {
            view,
            slots: [const { Cell::new(EMPTY) }; RECORDED],
            len: Cell::new(0),
            judging: Cell::new(false),
            ask: Cell::new(true),
            missed: Cell::new(false),
        }
    }

    fn lookup(&self, cpu: u32) -> Option<bool> {
        let len = self.len.get().min(RECORDED);
        self.slots[..len]
            .iter()
            .map(Cell::get)
            .find(|s| s >> 1 == cpu)
            .map(|s| s & 1 != 0)
    }

    fn record(&self, cpu: u32, idle: bool) {
        let len = self.len.get();
        if len < RECORDED && cpu < 1 << 31 {
            self.slots[len].set(cpu << 1 | u32::from(idle));
            self.len.set(len.wrapping_add(1));
        }
    }
}

impl<V: LlcView> IdleView for Recorded<'_, V> {
    fn idle(&self, cpu: u32) -> bool {
        // After a question went unanswered the verdict is undecided
        // whatever stock's scan meets next: the rest of its walk searches
        // nothing.
        if self.missed.get() {
            return false;
        }
        if self.judging.get() {
            if let Some(idle) = self.lookup(cpu) {
                return idle;
            }
        }
        if !self.ask.get() {
            self.missed.set(true);
            return false;
        }
        let idle = self.view.idle(cpu);
        self.record(cpu, idle);
        idle
    }
    fn allowed(&self, cpu: u32) -> bool {
        self.view.allowed(cpu)
    }
}

impl<V: LlcView> LlcView for Recorded<'_, V> {
    type Mask = V::Mask;
    type Smt<'s>
        = V::Smt<'s>
    where
        Self: 's;
    fn cpus(&self) -> &V::Mask {
        self.view.cpus()
    }
    fn cores(&self) -> &V::Mask {
        self.view.cores()
    }
    fn smt(&self) -> Option<V::Smt<'_>> {
        // Sibling masks are not recorded: each is a question.
        if !self.ask.get() {
            self.missed.set(true);
            return None;
        }
        self.view.smt()
    }
}

/// What judging a scan found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SisVerdict {
    /// Stock's pick is known.
    Judged {
        /// The picks: policy's, stock's, the one to return; and the flags
        /// the difference is counted for.
        verdict: Verdict<Option<u32>>,
        /// Whether to clear `has_idle_cores`: the returned scan's say.
        clears_idle_cores: bool,
    },
    /// Stock's pick would have cost questions the policy's scan did not
    /// ask, and the caller did not allow them; the policy's pick stands.
    Undecided,
}

/// Which flags shaped the policy's scan (see the module doc), in
/// [`PROP`]'s order.
pub fn shaped_by(i: &SisInput, a: &SisAnswer) -> [bool; NR_FLAGS] {
    let f = i.flags;
    let without_fold = SisFlags { fold: false, ..f };
    let mut s = [false; NR_FLAGS];
    s[FOLD] = f.fold && !sis_chain::policy_scans(without_fold, i.has_idle_core);
    s[PROP] = f.prop && a.prop_bound;
    s[AGE] = s[PROP] && f.age;
    s[ONCE] = s[PROP] && f.once;
    s
}

/// Judges the policy's `answer` to the wakeup `i`, whose scan ran through
/// `view`, against stock's scan through the same record. `shadow`: the
/// hook's flags in shadow, in [`PROP`]'s order; `ask`: whether stock's
/// scan may ask the kernel what the record does not hold.
pub fn judge<V: LlcView>(
    view: &Recorded<'_, V>,
    i: &SisInput,
    answer: &SisAnswer,
    shadow: [bool; NR_FLAGS],
    ask: bool,
) -> SisVerdict {
    view.judging.set(true);
    view.ask.set(ask);
    view.missed.set(false);
    let stock = sis_stock::select_idle_cpu(view, i);
    // The view answers as before for whatever runs through it next.
    view.judging.set(false);
    view.ask.set(true);
    if view.missed.replace(false) {
        return SisVerdict::Undecided;
    }
    let policy = answer.scan.cpu;
    let set = flag_array(i.flags);
    let mut shaped = shaped_by(i, answer);
    if policy != stock.cpu && !shaped.iter().any(|&s| s) {
        // Not one flag's doing on the record (a pick past the record's
        // capacity, asked twice, changed in between): every flag on.
        shaped = set;
    }
    let held_back = shaped.iter().zip(shadow.iter()).any(|(&s, &sh)| s && sh);
    let (applied, clears_idle_cores) = if held_back {
        (stock.cpu, stock.clears_idle_cores)
    } else {
        (policy, answer.clears_idle_cores())
    };
    SisVerdict::Judged {
        verdict: Verdict {
            policy,
            stock: stock.cpu,
            applied,
            flags_differ: if policy != stock.cpu { bits(shaped) } else { 0 },
        },
        clears_idle_cores,
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use crate::sis_chain::{select, ScanKind, WakeAvg};
    use crate::sis_select::Scan;
    use crate::test_llc::Llc;
    use std::vec::Vec;

    /// A wakeup on a 16-CPU LLC with SIS_UTIL's budget of 8 CPUs and an
    /// idle time that gives SIS_PROP 2 cores (4 CPUs).
    fn wakeup(flags: SisFlags, has_idle_core: bool, target: u32) -> SisInput {
        SisInput {
            flags: SisFlags {
                util: true,
                ..flags
            },
            wake: WakeAvg::default(),
            now_jiffies: 0,
            avg_idle_ns: 100,
            avg_scan_cost_ns: 799,
            span_weight: 16,
            util_nr: 9,
            smt_weight: 2,
            has_idle_core,
            target,
            nbits: 16,
        }
    }

    const PROP_ONLY: SisFlags = SisFlags {
        prop: true,
        util: false,
        age: false,
        once: false,
        fold: false,
    };

    // The policy gave up after 4 CPUs; stock, with 8, finds CPU 6.
    // Asked for it, the judge visits only CPUs 5 and 6 more; not asked,
    // it asks nothing and says so.
    #[test]
    fn prop_gave_up_where_stock_finds() {
        let llc = Llc::consecutive(16, 2, &[0, 1, 2, 3, 4, 5]);
        let i = wakeup(PROP_ONLY, false, 0);
        let rec = Recorded::new(&llc);
        let a = select(&rec, &i);
        assert_eq!(a.scan.cpu, None);
        assert!(a.prop_bound);
        assert_eq!(llc.idle_asks.get(), 4);
        assert_eq!(
            judge(&rec, &i, &a, [false; 4], false),
            SisVerdict::Undecided
        );
        assert_eq!(llc.idle_asks.get(), 4);
        let SisVerdict::Judged { verdict, .. } = judge(&rec, &i, &a, [false; 4], true) else {
            panic!("asked, the judge decides");
        };
        assert_eq!(llc.idle_asks.get(), 6);
        assert_eq!(
            (verdict.policy, verdict.stock, verdict.applied),
            (None, Some(6), None)
        );
        assert_eq!(verdict.flags_differ, 1 << PROP);
        // In shadow, stock's pick goes back, from the record.
        let SisVerdict::Judged { verdict, .. } =
            judge(&rec, &i, &a, [true, false, false, false], true)
        else {
            panic!("asked, the judge decides");
        };
        assert_eq!(verdict.applied, Some(6));
        assert_eq!(llc.idle_asks.get(), 6);
    }

    // A pick inside the policy's budget is stock's too, decided from the
    // record alone: no question, no difference, nothing held back.
    #[test]
    fn a_pick_within_the_budget_is_stocks() {
        let llc = Llc::consecutive(16, 2, &[0, 1]);
        let i = wakeup(PROP_ONLY, false, 0);
        let rec = Recorded::new(&llc);
        let a = select(&rec, &i);
        assert_eq!(a.scan.cpu, Some(2));
        let v = judge(&rec, &i, &a, [true; 4], false);
        let SisVerdict::Judged { verdict, .. } = v else {
            panic!("the record holds stock's scan");
        };
        assert!(!verdict.differs() && !verdict.shadowed());
        assert_eq!(verdict.flags_differ, 0);
        assert_eq!(llc.idle_asks.get(), 2);
    }

    // SIS_FOLD's core scan starts at the target's core, stock's at the
    // CPU after the target: another thread of the same idle core. The
    // difference is FOLD's (PROP off), and shadow returns stock's pick.
    #[test]
    fn fold_against_stocks_core_scan() {
        let fold = SisFlags {
            fold: true,
            ..Default::default()
        };
        // Target 2, its core {2,3} idle: the fold starts at the core and
        // picks 2; stock starts at 3, and its core is the same idle core.
        let llc = Llc::consecutive(16, 2, &[0, 1, 4]);
        let i = wakeup(fold, true, 2);
        let rec = Recorded::new(&llc);
        let a = select(&rec, &i);
        assert_eq!(a.kind, ScanKind::Cores);
        assert_eq!(a.scan.cpu, Some(2));
        assert_eq!(
            judge(&rec, &i, &a, [false; 4], false),
            SisVerdict::Undecided
        );
        let v = judge(&rec, &i, &a, [false, false, false, true], true);
        let SisVerdict::Judged {
            verdict,
            clears_idle_cores,
        } = v
        else {
            panic!("asked, the judge decides");
        };
        assert_eq!(
            (verdict.policy, verdict.stock, verdict.applied),
            (Some(2), Some(3), Some(3))
        );
        assert_eq!(verdict.flags_differ, 1 << FOLD);
        assert!(!clears_idle_cores);
        // Stock's scan asked for the siblings of each CPU it passed, at
        // most the LLC's 16: with the policy's, within the shim's bound.
        assert!(llc.smt_asks.get() <= 16 + 8);
    }

    // The shaping flags: FOLD only where the policy scanned because of it,
    // PROP only where its budget was the tighter, AGE and ONCE with PROP.
    #[test]
    fn shaping_flags() {
        let all = SisFlags {
            prop: true,
            util: true,
            age: true,
            once: true,
            fold: true,
        };
        let mut a = SisAnswer {
            scan: Scan {
                cpu: None,
                loops: 1,
                found_idle_core: false,
            },
            kind: ScanKind::Cpus,
            wake: WakeAvg::default(),
            prop_bound: true,
        };
        // No idle core: PROP alone would have scanned, FOLD did not shape.
        assert_eq!(
            shaped_by(&wakeup(all, false, 0), &a),
            [true, true, true, false]
        );
        // An idle core: only FOLD scans.
        a.prop_bound = false;
        assert_eq!(
            shaped_by(&wakeup(all, true, 0), &a),
            [false, false, false, true]
        );
        let age_only = SisFlags {
            age: true,
            once: true,
            ..Default::default()
        };
        assert_eq!(shaped_by(&wakeup(age_only, false, 0), &a), [false; 4]);
    }

    /// The wakeup of the property tests below: `flag_bits` 1, 2, 4, 8, 16
    /// are SIS_PROP, SIS_UTIL, SIS_AGE, SIS_ONCE and SIS_FOLD, `busy_bits`
    /// the busy CPUs of the 16-CPU LLC.
    fn drawn(
        busy_bits: u16,
        flag_bits: u8,
        has_idle_core: bool,
        target: u32,
        util_nr: u32,
    ) -> (SisInput, Vec<u32>) {
        let flags = SisFlags {
            prop: flag_bits & 1 != 0,
            util: flag_bits & 2 != 0,
            age: flag_bits & 4 != 0,
            once: flag_bits & 8 != 0,
            fold: flag_bits & 16 != 0,
        };
        let mut i = wakeup(flags, has_idle_core, target);
        i.flags.util = flags.util;
        i.util_nr = util_nr;
        let busy = (0..16).filter(|c| busy_bits >> c & 1 != 0).collect();
        (i, busy)
    }

    proptest::proptest! {
        // On any 16-CPU SMT2 LLC, flags and wakeup: the judge's stock pick
        // is stock's scan on the same facts; not asked, it is the same
        // verdict or undecided, never another one; shadow of every flag
        // returns stock's pick; and the two scans together stay within
        // the kernel's bound of four callbacks per CPU of the LLC.
        #[test]
        fn judged_as_stock_decides(
            busy_bits in proptest::prelude::any::<u16>(),
            flag_bits in 0u8..32,
            has_idle_core in proptest::prelude::any::<bool>(),
            target in 0u32..16,
            avg_idle_ns in 0u64..2000,
            util_nr in 1u32..18,
        ) {
            let (mut i, busy) = drawn(busy_bits, flag_bits, has_idle_core, target, util_nr);
            // The kernel calls the hook only where the policy scans.
            proptest::prop_assume!(sis_chain::policy_scans(i.flags, has_idle_core));
            i.avg_idle_ns = avg_idle_ns;
            let llc = Llc::consecutive(16, 2, &busy);
            let rec = Recorded::new(&llc);
            let a = select(&rec, &i);
            let cheap = judge(&rec, &i, &a, [false; 4], false);
            let full = judge(&rec, &i, &a, [false; 4], true);
            let fresh = Llc::consecutive(16, 2, &busy);
            let stock = sis_stock::select_idle_cpu(&fresh, &i);
            let SisVerdict::Judged { verdict, .. } = full else {
                panic!("asked, the judge decides");
            };
            proptest::prop_assert_eq!(verdict.stock, stock.cpu);
            proptest::prop_assert_eq!(verdict.policy, a.scan.cpu);
            proptest::prop_assert!(cheap == SisVerdict::Undecided || cheap == full);
            proptest::prop_assert_eq!(verdict.flags_differ != 0, verdict.differs());
            let SisVerdict::Judged { verdict: held, clears_idle_cores } =
                judge(&rec, &i, &a, [true; 4], true)
            else {
                panic!("asked, the judge decides");
            };
            proptest::prop_assert_eq!(held.applied, stock.cpu);
            if held.shadowed() {
                proptest::prop_assert_eq!(clears_idle_cores, stock.clears_idle_cores);
            }
            proptest::prop_assert!(llc.idle_asks.get() + llc.smt_asks.get() <= 4 * 16);
        }

        // A call whose flags want no policy scan (a wakeup while a write
        // to sched/features is between sysctl_sched_features and the
        // static keys, `sis_chain::select`) is stock's: nothing differs,
        // so nothing is counted against a flag that did not shape it.
        // With the policy's CPU scan under an idle-core hint, a guest's
        // SIS_FOLD window counted such calls as differing and not held
        // back (CI of stop 54).
        #[test]
        fn flags_that_want_no_policy_scan_judge_as_stock(
            busy_bits in proptest::prelude::any::<u16>(),
            flag_bits in 0u8..16,
            has_idle_core in proptest::prelude::any::<bool>(),
            target in 0u32..16,
            util_nr in 1u32..18,
        ) {
            // Without SIS_FOLD (bit 16).
            let (i, busy) = drawn(busy_bits, flag_bits, has_idle_core, target, util_nr);
            proptest::prop_assume!(!sis_chain::policy_scans(i.flags, has_idle_core));
            let llc = Llc::consecutive(16, 2, &busy);
            let rec = Recorded::new(&llc);
            let a = select(&rec, &i);
            let fresh = Llc::consecutive(16, 2, &busy);
            let stock = sis_stock::select_idle_cpu(&fresh, &i);
            proptest::prop_assert_eq!(a.scan.cpu, stock.cpu);
            proptest::prop_assert_eq!(a.clears_idle_cores(), stock.clears_idle_cores);
            let SisVerdict::Judged { verdict, clears_idle_cores } =
                judge(&rec, &i, &a, [false; 4], true)
            else {
                panic!("asked, the judge decides");
            };
            proptest::prop_assert!(!verdict.differs(), "{:?}", verdict);
            proptest::prop_assert_eq!(verdict.flags_differ, 0);
            proptest::prop_assert_eq!(clears_idle_cores, stock.clears_idle_cores);
        }
    }

    // The record answers a CPU from its first answer even if the CPU has
    // changed since: both picks are judged on the same facts.
    #[test]
    fn the_record_answers_from_the_first_question() {
        let mut llc = Llc::consecutive(4, 2, &[]);
        {
            let rec = Recorded::new(&llc);
            assert!(rec.idle(1));
        }
        let asked = llc.idle_asks.get();
        llc.busy[1] = true;
        let rec = Recorded::new(&llc);
        rec.record(1, true);
        rec.judging.set(true);
        assert!(rec.idle(1));
        assert_eq!(llc.idle_asks.get(), asked);
        rec.ask.set(false);
        assert!(!rec.idle(2));
        assert!(rec.missed.get());
    }
}
