// SPDX-License-Identifier: GPL-2.0

//! Shadow mode and the "differs from stock" counters of the judged hooks:
//! the glue between a callback, `crate::policy::verdict` (which decides
//! what differs and what shadow mode applies) and the per-CPU counters.
//!
//! The switches are one bit per line of `kunit/flags` in [`SHADOW`],
//! written from debugfs (`/sys/kernel/debug/sched_lb_rs/shadow/<FLAG>`)
//! and read by every judged call with a flag away from stock. A call that
//! reads a switch while it flips applies the old or the new value: either
//! is a decision the kernel takes anyway, and the counters of that call
//! say which.

use core::sync::atomic::{AtomicU64, Ordering};

use super::counters::{Counter, Counts};
use super::lists::{lines, FLAG_LIST};
use crate::policy::verdict::{self, Verdict};

/// Bit `i`: the flag of line `i` of `kunit/flags` is in shadow: its rule
/// is evaluated and counted, and its stock value applied.
static SHADOW: AtomicU64 = AtomicU64::new(0);

const _: () = assert!(
    lines(FLAG_LIST) <= 64,
    "more flags in kunit/flags than SHADOW has bits"
);

/// Whether flag `flag` (its line in `kunit/flags`) has its bit in `mask`.
fn flag_in(mask: u64, flag: usize) -> bool {
    flag < 64 && mask & (1 << flag) != 0
}

/// Whether flag `flag` (its line in `kunit/flags`) is in shadow.
pub(super) fn in_shadow(flag: usize) -> bool {
    flag_in(SHADOW.load(Ordering::Relaxed), flag)
}

/// Puts flag `flag` in shadow (`on`) or makes it live again.
pub(super) fn set_shadow(flag: usize, on: bool) {
    if flag >= 64 {
        return;
    }
    if on {
        SHADOW.fetch_or(1 << flag, Ordering::Relaxed);
    } else {
        SHADOW.fetch_and(!(1 << flag), Ordering::Relaxed);
    }
}

/// What a judged hook needs to judge a call: its flags' lines in
/// `kunit/flags`, their 6.12 values, and the counters of its verdicts.
///
/// # Invariants
///
/// Every entry of `flags` is below `lines(FLAG_LIST)`, and `differs`,
/// `shadowed` and `flag_differs` are slots of the per-CPU block.
pub(crate) struct Judged<const N: usize> {
    flags: [usize; N],
    stock: [bool; N],
    /// Calls whose policy answer is not stock 6.12's.
    pub(super) differs: Counter,
    /// Calls whose policy answer shadow mode held back.
    pub(super) shadowed: Counter,
    /// The hooks' per-flag counters of a call whose answer the flag alone
    /// changed, one per line of `kunit/flags`.
    flag_differs: &'static [Counter],
}

impl<const N: usize> Judged<N> {
    /// The judge of a hook whose flags are the lines `flags`, 6.12's
    /// values of them `stock` ([`crate::policy::stock`]), with its own
    /// two counters at the slots `first` (`differs`) and `first + 1`
    /// (`shadowed`).
    pub(super) const fn new(
        flags: [usize; N],
        stock: [bool; N],
        first: usize,
        flag_differs: &'static [Counter],
    ) -> Self {
        Judged {
            flags,
            stock,
            differs: Counter::at(first),
            shadowed: Counter::at(first + 1),
            flag_differs,
        }
    }

    /// Which of the hook's flags are in shadow, for a callback of the
    /// registered table (`COUNT`); none for the KUnit table's, whose
    /// suites test the rules and would see stock answers while a user has
    /// a flag in shadow.
    #[inline(always)]
    pub(crate) fn shadow<const COUNT: bool>(&self) -> [bool; N] {
        let mut on = [false; N];
        if COUNT {
            // One load for all of the hook's flags.
            let mask = SHADOW.load(Ordering::Relaxed);
            for (s, &flag) in on.iter_mut().zip(self.flags.iter()) {
                *s = flag_in(mask, flag);
            }
        }
        on
    }

    /// Whether a call needs no judging: every flag at its 6.12 value (so
    /// the policy's answer is stock's, nothing differs and shadow holds
    /// nothing back, see `policy::verdict`) and the hook's event off
    /// (`event_on`: an enabled event records the verdict). Such a call is
    /// answered by the rule alone; the callback's judged path, out of line
    /// and cold, takes every other. Kept together, the judged path's calls
    /// and loops made the callback save six callee-saved registers on
    /// every call, stock's too (`make site-cost`, issue 31).
    #[inline(always)]
    pub(crate) fn unjudged(&self, set: [bool; N], event_on: bool) -> bool {
        set == self.stock && !event_on
    }

    /// Judges one call of `rule` with the flags as the call site handed
    /// them, and counts what differed when `COUNT`.
    ///
    /// # Safety
    ///
    /// With `COUNT`, as for [`Counts::get()`]: called from a callback of
    /// the registered table.
    #[inline(always)]
    pub(crate) unsafe fn judge<const COUNT: bool, T: Copy + PartialEq>(
        &self,
        set: [bool; N],
        rule: impl Fn([bool; N]) -> T,
    ) -> Verdict<T> {
        let v = verdict::judge(set, self.stock, || self.shadow::<COUNT>(), rule);
        // SAFETY: the caller's contract.
        unsafe { self.count::<COUNT, T>(&v) };
        v
    }

    /// Counts a verdict made elsewhere (STEAL's, whose rule acts and
    /// cannot be evaluated twice), when `COUNT`.
    ///
    /// # Safety
    ///
    /// As for [`Judged::judge()`].
    #[inline(always)]
    pub(crate) unsafe fn count<const COUNT: bool, T: PartialEq>(&self, v: &Verdict<T>) {
        if !COUNT || !(v.differs() || v.flags_differ != 0 || v.shadowed()) {
            return;
        }
        // SAFETY: the caller's contract.
        let Some(counts) = (unsafe { Counts::get() }) else {
            return;
        };
        counts.add(&self.differs, u64::from(v.differs()));
        counts.add(&self.shadowed, u64::from(v.shadowed()));
        for (i, &flag) in self.flags.iter().enumerate() {
            if i < 32 && v.flags_differ & (1 << i) != 0 {
                if let Some(c) = self.flag_differs.get(flag) {
                    counts.add(c, 1);
                }
            }
        }
    }
}
