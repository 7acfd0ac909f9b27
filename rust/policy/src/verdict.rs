// SPDX-License-Identifier: GPL-2.0

//! What a hook call decided against stock 6.12, and shadow mode: the
//! chain every flag-selected rule of a boolean or interval hook goes
//! through before its answer goes back to the kernel.
//!
//! A scheduler developer first asks "did my rule change anything, and how
//! often?", and only then "was it faster?" (issue 30; sched_ext answers the
//! first with its per-scheduler event counters). A rule here is a pure
//! function of the call's inputs and of the `sched_feat` flags the call
//! site hands it, so the same inputs can be judged three ways for the
//! price of a few more evaluations of the rule:
//!
//! - the **policy's** answer: the flags as set in `sched/features`;
//! - **stock**'s answer: every flag at its 6.12 value ([`super::stock`]),
//!   which the differential tests show is 6.12's own C answer;
//! - the **applied** answer: each flag the user put *in shadow* back at
//!   its stock value. A flag in shadow is evaluated and counted but decides
//!   nothing, so the module can be loaded on a machine that matters to
//!   learn how often a rule would act on its load, at no risk.
//!
//! Which flag made the difference: flag `i`'s bit is set when the rule,
//! with that flag alone put back at stock, answers otherwise than the
//! policy (its marginal effect, the other flags as set). That is what a
//! flag's `differs` counter counts. It can miss a difference that needs
//! two flags to undo, which the hook's own count ([`Verdict::differs`])
//! still has.
//!
//! With every flag at its stock value, the common case, the rule runs once
//! and nothing differs: a loaded module pays one comparison of the flags
//! for the verdict. Each further evaluation happens only for flags away
//! from stock.

/// What one call decided.
///
/// # Invariants
///
/// `flags_differ` has no bit at or above the hook's flag count, and no
/// bit of a flag that was at its stock value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Verdict<T> {
    /// The rule with the flags as set.
    pub policy: T,
    /// The rule with every flag at its 6.12 value.
    pub stock: T,
    /// The rule with the flags in shadow at their 6.12 value: what the
    /// hook returns.
    pub applied: T,
    /// Bit `i`: flag `i` alone, put back at stock, changes the answer.
    pub flags_differ: u32,
}

impl<T: PartialEq> Verdict<T> {
    /// The policy answers otherwise than stock 6.12 would have.
    pub fn differs(&self) -> bool {
        self.policy != self.stock
    }

    /// Shadow mode held back the policy's answer: the hook returns
    /// another.
    pub fn shadowed(&self) -> bool {
        self.applied != self.policy
    }
}

/// Judges one call of `rule` with the hook's `N` flags as `set`, their
/// 6.12 values `stock`, and which of them are in `shadow` (asked only when
/// a flag is away from stock: the module reads it from memory another CPU
/// writes).
pub fn judge<T: Copy + PartialEq, const N: usize>(
    set: [bool; N],
    stock: [bool; N],
    shadow: impl FnOnce() -> [bool; N],
    rule: impl Fn([bool; N]) -> T,
) -> Verdict<T> {
    const { assert!(N <= 32, "a hook with more flags than a u32 has bits") };
    let policy = rule(set);
    if set == stock {
        return Verdict {
            policy,
            stock: policy,
            applied: policy,
            flags_differ: 0,
        };
    }
    let stock_answer = rule(stock);
    let shadow = shadow();
    let mut applied_flags = set;
    for i in 0..N {
        if shadow[i] {
            applied_flags[i] = stock[i];
        }
    }
    // Reuse what has been evaluated: the flags as applied are often the
    // flags as set (nothing in shadow) or stock (everything that differs
    // in shadow).
    let known = |flags: [bool; N]| -> Option<T> {
        if flags == set {
            Some(policy)
        } else if flags == stock {
            Some(stock_answer)
        } else {
            None
        }
    };
    let applied = known(applied_flags).unwrap_or_else(|| rule(applied_flags));
    let mut flags_differ = 0u32;
    for i in 0..N {
        if set[i] == stock[i] {
            continue;
        }
        let mut alone = set;
        alone[i] = stock[i];
        let answer = match known(alone) {
            Some(a) => a,
            None if alone == applied_flags => applied,
            None => rule(alone),
        };
        if answer != policy {
            flags_differ |= 1 << i;
        }
    }
    Verdict {
        policy,
        stock: stock_answer,
        applied,
        flags_differ,
    }
}

/// Bit `i` set for each `true` of `flags`: a verdict's `flags_differ`
/// and the trace events' `flags` and `shadow` fields.
pub fn bits<const N: usize>(flags: [bool; N]) -> u32 {
    let mut b = 0u32;
    for (i, &on) in flags.iter().enumerate() {
        if on && i < 32 {
            b |= 1 << i;
        }
    }
    b
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::cell::Cell;
    use proptest::prelude::*;

    /// A rule of two flags that answers with which of them are on.
    fn both(f: [bool; 2]) -> u8 {
        u8::from(f[0]) | u8::from(f[1]) << 1
    }

    #[test]
    fn at_stock_the_rule_runs_once_and_nothing_differs() {
        let calls = Cell::new(0);
        let v = judge(
            [true, false],
            [true, false],
            || -> [bool; 2] { unreachable!() },
            |f| {
                calls.set(calls.get() + 1);
                both(f)
            },
        );
        assert_eq!(calls.get(), 1);
        assert_eq!(
            v,
            Verdict {
                policy: 1,
                stock: 1,
                applied: 1,
                flags_differ: 0
            }
        );
        assert!(!v.differs() && !v.shadowed());
    }

    #[test]
    fn live_flag_away_from_stock_is_applied_and_counted() {
        let v = judge([false, true], [true, false], || [false, false], both);
        assert_eq!((v.policy, v.stock, v.applied), (2, 1, 2));
        assert!(v.differs() && !v.shadowed());
        assert_eq!(v.flags_differ, 0b11);
    }

    #[test]
    fn shadow_applies_stock_for_its_flag_only() {
        // Flag 1 in shadow: the applied answer keeps flag 0 as set.
        let v = judge([false, true], [true, false], || [false, true], both);
        assert_eq!((v.policy, v.stock, v.applied), (2, 1, 0));
        assert!(v.differs() && v.shadowed());
        // Both in shadow: stock is applied, and both are still counted.
        let v = judge([false, true], [true, false], || [true, true], both);
        assert_eq!((v.policy, v.applied), (2, 1));
        assert_eq!(v.flags_differ, 0b11);
    }

    #[test]
    fn a_flag_that_changes_nothing_here_is_not_counted() {
        // Flag 1 matters only while flag 0 is on.
        let rule = |f: [bool; 2]| f[0] && f[1];
        let v = judge([false, true], [false, false], || [false, false], rule);
        assert!(!v.differs());
        assert_eq!(v.flags_differ, 0);
        let v = judge([true, true], [false, false], || [false, false], rule);
        assert!(v.differs());
        assert_eq!(v.flags_differ, 0b11);
    }

    #[test]
    fn a_difference_only_two_flags_undo_is_the_hooks_alone() {
        // Answers differently only with both flags away from stock.
        let rule = |f: [bool; 2]| !(f[0] && f[1]);
        let v = judge([false, false], [true, true], || [false, false], rule);
        assert!(v.differs());
        assert_eq!(v.flags_differ, 0);
    }

    proptest! {
        #[test]
        fn the_three_answers_are_the_rule_at_three_flag_sets(
            set in any::<[bool; 3]>(),
            stock in any::<[bool; 3]>(),
            shadow in any::<[bool; 3]>(),
            table in any::<[u8; 8]>(),
        ) {
            let index = |f: [bool; 3]| usize::from(f[0]) | usize::from(f[1]) << 1 | usize::from(f[2]) << 2;
            let rule = |f: [bool; 3]| table[index(f)];
            let v = judge(set, stock, || shadow, rule);
            let mut applied = set;
            for i in 0..3 {
                if shadow[i] {
                    applied[i] = stock[i];
                }
            }
            prop_assert_eq!(v.policy, rule(set));
            prop_assert_eq!(v.stock, rule(stock));
            prop_assert_eq!(v.applied, rule(applied));
            for i in 0..3 {
                let mut alone = set;
                alone[i] = stock[i];
                let want = set[i] != stock[i] && rule(alone) != rule(set);
                prop_assert_eq!(v.flags_differ & (1 << i) != 0, want, "flag {}", i);
            }
            prop_assert!(v.flags_differ < 8);
        }
    }
}
