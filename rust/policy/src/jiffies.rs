// SPDX-License-Identifier: GPL-2.0

//! `msecs_to_jiffies()` for any `HZ`, bit for bit.
//!
//! Mirrors, in Linux 6.12, `include/linux/jiffies.h`, `kernel/time/time.c`
//! and the constants
//! `kernel/time/timeconst.bc` generates into `include/generated/timeconst.h`
//! (`MSEC_TO_HZ_MUL32`, `_ADJ32`, `_SHR32`, `HZ_TO_MSEC_NUM`, `_DEN`), on a
//! 64-bit kernel (`unsigned long` is `u64`). The balance interval of seed
//! 001 goes through it, and the issue asks for the rule to hold for any HZ
//! the kernel is built with. [`msecs_to_jiffies()`] chooses the
//! HZ-dependent branch at run time, for the tests, the simulator and any
//! caller with an HZ in hand; [`msecs_to_jiffies_hz()`] takes HZ as a
//! constant, as the C's preprocessor does, so the module (which knows
//! `CONFIG_HZ` at build time) pays only for the branch its HZ keeps. Both
//! are the same code: `MsecsToJiffies` is the branch and its constants,
//! chosen at run time or at compile time.

use core::num::{NonZeroU32, NonZeroU64};

/// `MSEC_PER_SEC`.
pub const MSEC_PER_SEC: u64 = 1000;

/// `MAX_JIFFY_OFFSET`: `(LONG_MAX >> 1) - 1`, the "infinite" timeout.
pub const MAX_JIFFY_OFFSET: u64 = ((i64::MAX as u64) >> 1) - 1;

/// Greatest common divisor; `gcd(a, 0)` is `a`. `%` by a non-zero `b`
/// cannot panic.
const fn gcd(mut a: u64, mut b: u64) -> u64 {
    while let Some(d) = NonZeroU64::new(b) {
        let t = b;
        b = a % d.get();
        a = t;
    }
    a
}

// The kernel has no 128-bit division (`__udivti3`), so these work in u64.
// They fit: `fmuls32` stops at the first `s` where `fmul` reaches 2^31, so
// every product evaluated is below 2^32 * d, and d is 1000 here.

/// `2^b * n`, `None` where it leaves 64 bits (`const`: no closures).
const fn shl_mul(b: u32, n: u64) -> Option<u64> {
    match 1u64.checked_shl(b) {
        Some(p) => p.checked_mul(n),
        None => None,
    }
}

/// timeconst.bc `fmul(b, n, d)`: `(2^b * n + d - 1) / d`.
const fn fmul(b: u32, n: u64, d: u64) -> u64 {
    match shl_mul(b, n) {
        Some(v) => v.div_ceil(d),
        // Unreachable for the arguments used here (see above).
        None => u64::MAX,
    }
}

/// timeconst.bc `fadj(b, n, d)`: `2^b * (d - 1) / d` with `d` reduced by
/// `gcd(n, d)`.
const fn fadj(b: u32, n: u64, d: u64) -> u64 {
    // Checked: a kernel that could panic here (d == 0, which only the
    // arguments below never pass) would have a panic path in the module.
    let Some(d) = d.checked_div(gcd(n, d)) else {
        return u64::MAX;
    };
    let Some(d_minus_1) = d.checked_sub(1) else {
        return u64::MAX;
    };
    match shl_mul(b, d_minus_1) {
        Some(v) => match v.checked_div(d) {
            Some(q) => q,
            None => u64::MAX,
        },
        None => u64::MAX,
    }
}

/// timeconst.bc `fmuls(32, n, d)`: the smallest shift that brings
/// `fmul` to at least 2^31.
const fn fmuls32(n: u64, d: u64) -> u32 {
    let mut s = 0;
    while s < 63 && fmul(s, n, d) < (1u64 << 31) {
        s += 1;
    }
    s
}

/// The kernel's `jiffies_to_msecs()` on a 64-bit kernel, which returns
/// `unsigned int`.
///
/// Mirrors `kernel/time/time.c` of Linux 6.12 (`BITS_PER_LONG == 64`):
///
/// ```c
/// #if HZ <= MSEC_PER_SEC && !(MSEC_PER_SEC % HZ)
///         return (MSEC_PER_SEC / HZ) * j;
/// #elif HZ > MSEC_PER_SEC && !(HZ % MSEC_PER_SEC)
///         return (j + (HZ / MSEC_PER_SEC) - 1)/(HZ / MSEC_PER_SEC);
/// #else
///         return DIV_ROUND_UP(j * HZ_TO_MSEC_NUM, HZ_TO_MSEC_DEN);
/// #endif
/// ```
///
/// where `DIV_ROUND_UP(n, d)` is `((n) + (d) - 1) / (d)` and the NUM/DEN
/// pair is `1000 / gcd(HZ, 1000)` and `HZ / gcd(HZ, 1000)`. The last branch
/// rounds up; older kernels had a floor division there, which this port
/// copied until the differential tests took the C from the real 6.12 tree
/// (issue 12). The C computes in `unsigned long` and wraps; so does this:
/// every `*`, `+` and `-` below is `wrapping_*` where the C's can wrap, and
/// each division is by a `NonZeroU64`, so nothing here can panic with
/// overflow checks on. The result is truncated to 32 bits as the C's
/// return type does.
pub const fn jiffies_to_msecs(j: u64, hz: u32) -> u32 {
    let hz = bc_hz(hz);
    let ms = if hz.get() <= MSEC_PER_SEC && MSEC_PER_SEC % hz.get() == 0 {
        // (MSEC_PER_SEC / HZ) * j: wraps in unsigned long.
        (MSEC_PER_SEC / hz.get()).wrapping_mul(j)
    } else if hz.get() > MSEC_PER_SEC && hz.get() % MSEC_PER_SEC == 0 {
        // (j + k - 1) / k, k = HZ / MSEC_PER_SEC >= 2: the sum wraps.
        let k = nonzero(hz.get() / MSEC_PER_SEC);
        j.wrapping_add(k.get().wrapping_sub(1)) / k.get()
    } else {
        // DIV_ROUND_UP(j * NUM, DEN): the product and the sum wrap.
        // gcd(HZ, 1000) is at least 1, so never the fallback.
        let cd = nonzero(gcd(hz.get(), MSEC_PER_SEC));
        let num = MSEC_PER_SEC / cd.get();
        let den = nonzero(hz.get() / cd.get());
        j.wrapping_mul(num).wrapping_add(den.get().wrapping_sub(1)) / den.get()
    };
    // The C returns unsigned int: the value is truncated, as there.
    ms as u32
}

/// HZ as timeconst.bc takes it: below 2 it refuses the HZ ("Totally
/// bogus"), read here as 2, so every division by it is by a non-zero.
const fn bc_hz(hz: u32) -> NonZeroU64 {
    match hz {
        0 | 1 => nonzero(2),
        hz => nonzero(hz as u64),
    }
}

/// `v` as a divisor; the callers only pass non-zero values, so the
/// fallback of 1 is never taken, but no division can panic.
const fn nonzero(v: u64) -> NonZeroU64 {
    match NonZeroU64::new(v) {
        Some(v) => v,
        None => NonZeroU64::MIN,
    }
}

/// `_msecs_to_jiffies()` for one HZ: the branch the C's preprocessor keeps
/// for it, with that branch's constants. [`MsecsToJiffies::for_hz`] is a
/// `const fn`, so [`msecs_to_jiffies_hz()`] chooses the branch and computes
/// timeconst.bc's constants at compile time, as Kbuild does, and the
/// run-time [`msecs_to_jiffies()`] does the same work per call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum MsecsToJiffies {
    /// HZ divides 1000: `(m + (MSEC_PER_SEC / HZ) - 1) / (MSEC_PER_SEC /
    /// HZ)`, in `unsigned int`.
    DivRoundUp {
        /// `MSEC_PER_SEC / HZ`.
        msecs_per_jiffy: NonZeroU32,
    },
    /// HZ a multiple of 1000: `m * (HZ / MSEC_PER_SEC)` in `unsigned
    /// long`, `MAX_JIFFY_OFFSET` above the cap.
    Mul {
        /// `HZ / MSEC_PER_SEC`.
        jiffies_per_msec: u64,
        /// `jiffies_to_msecs(MAX_JIFFY_OFFSET)`.
        max_msecs: u32,
    },
    /// Any other HZ: `(MSEC_TO_HZ_MUL32 * m + MSEC_TO_HZ_ADJ32) >>
    /// MSEC_TO_HZ_SHR32` in `u64`, as the `U64_C()` constants make it,
    /// and above 1000 HZ `MAX_JIFFY_OFFSET` above the cap.
    FixedPoint {
        /// `MSEC_TO_HZ_MUL32`.
        mul32: u64,
        /// `MSEC_TO_HZ_ADJ32`.
        adj32: u64,
        /// `MSEC_TO_HZ_SHR32`, at most 63 (`fmuls32` stops there).
        shr32: u32,
        /// `jiffies_to_msecs(MAX_JIFFY_OFFSET)` above 1000 HZ; `u32::MAX`,
        /// which no `m` exceeds, at or below it, where the C has no cap.
        max_msecs: u32,
    },
}

impl MsecsToJiffies {
    /// The branch and constants for `hz` (below 2 read as 2).
    const fn for_hz(hz: u32) -> Self {
        let hz32 = hz;
        let hz = bc_hz(hz).get();
        if hz <= MSEC_PER_SEC && MSEC_PER_SEC % hz == 0 {
            // 1000 / HZ is 1 to 500 here: never the fallback.
            MsecsToJiffies::DivRoundUp {
                msecs_per_jiffy: match NonZeroU32::new((MSEC_PER_SEC / hz) as u32) {
                    Some(k) => k,
                    None => NonZeroU32::MIN,
                },
            }
        } else if hz > MSEC_PER_SEC && hz % MSEC_PER_SEC == 0 {
            MsecsToJiffies::Mul {
                jiffies_per_msec: hz / MSEC_PER_SEC,
                max_msecs: jiffies_to_msecs(MAX_JIFFY_OFFSET, hz32),
            }
        } else {
            // x86's HZ=100, 250 and 1000 take the first branch; 300 this
            // one. At run time these are a few dozen steps per call.
            let s = fmuls32(hz, MSEC_PER_SEC);
            MsecsToJiffies::FixedPoint {
                mul32: fmul(s, hz, MSEC_PER_SEC),
                adj32: fadj(s, hz, MSEC_PER_SEC),
                shr32: s,
                max_msecs: if hz > MSEC_PER_SEC {
                    jiffies_to_msecs(MAX_JIFFY_OFFSET, hz32)
                } else {
                    u32::MAX
                },
            }
        }
    }

    /// `__msecs_to_jiffies(m)`: a value that is negative as an `int` means
    /// "infinite", `MAX_JIFFY_OFFSET`; then `_msecs_to_jiffies(m)`.
    #[inline(always)]
    fn convert(self, m: u32) -> u64 {
        if (m as i32) < 0 {
            return MAX_JIFFY_OFFSET;
        }
        match self {
            // m < 2^31 and MSEC_PER_SEC / HZ <= 500 here, so the sum
            // cannot wrap, in unsigned int or here.
            MsecsToJiffies::DivRoundUp { msecs_per_jiffy: k } => {
                u64::from(m.wrapping_add(k.get().wrapping_sub(1)) / k)
            }
            MsecsToJiffies::Mul {
                jiffies_per_msec,
                max_msecs,
            } => {
                if m > max_msecs {
                    return MAX_JIFFY_OFFSET;
                }
                u64::from(m).wrapping_mul(jiffies_per_msec)
            }
            MsecsToJiffies::FixedPoint {
                mul32,
                adj32,
                shr32,
                max_msecs,
            } => {
                if m > max_msecs {
                    return MAX_JIFFY_OFFSET;
                }
                // shr32 is below 64, so wrapping_shr shifts by it as is.
                mul32
                    .wrapping_mul(u64::from(m))
                    .wrapping_add(adj32)
                    .wrapping_shr(shr32)
            }
        }
    }
}

/// The kernel's `msecs_to_jiffies()` (via `__msecs_to_jiffies()`) for an
/// HZ known at run time: a value that is negative as an `int` means
/// "infinite", `MAX_JIFFY_OFFSET`. `hz` below 2 is read as 2
/// (timeconst.bc refuses it: "Totally bogus").
pub fn msecs_to_jiffies(m: u32, hz: u32) -> u64 {
    MsecsToJiffies::for_hz(hz).convert(m)
}

/// [`msecs_to_jiffies()`] for a kernel built with `HZ`: the branch and its
/// constants are chosen at compile time, as the C's `#if`s and Kbuild's
/// `timeconst.h` do, so a call costs what the C's does. The module calls
/// it with `bindings::CONFIG_HZ`.
#[inline(always)]
pub fn msecs_to_jiffies_hz<const HZ: u32>(m: u32) -> u64 {
    const { MsecsToJiffies::for_hz(HZ) }.convert(m)
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use proptest::prelude::*;
    use std::vec::Vec;

    // MSEC_TO_HZ_{MUL32,ADJ32,SHR32} as `echo $HZ | bc -q
    // kernel/time/timeconst.bc` prints them for Linux 6.12.
    #[test]
    fn timeconst_matches_the_kernels_bc_script() {
        for (hz, mul, adj, shr) in [
            (24, 0xC49BA5E4, 0x1FBE76C8B4, 37),
            (48, 0xC49BA5E4, 0xFDF3B645A, 36),
            (100, 0xCCCCCCCD, 0x733333333, 35),
            (300, 0x9999999A, 0x1CCCCCCCC, 33),
            (1024, 0x83126E98, 0x7EF9DB22, 31),
            (1200, 0x9999999A, 0x66666666, 31),
            // The one HZ where fmul() lands on 2^31 exactly before the
            // shift stops (fmul_hits_2_pow_31_exactly_at_one_hz).
            (4_194_303_999, 0x80000000, 0x1FF, 9),
        ] {
            let s = fmuls32(hz, 1000);
            assert_eq!(s, shr, "HZ={hz}");
            assert_eq!(fmul(s, hz, 1000), mul, "HZ={hz}");
            assert_eq!(fadj(s, hz, 1000), adj, "HZ={hz}");
        }
    }

    // fmuls32's two `<`, for every HZ a u32 holds, not a sample
    // (rust/policy/mutants-equivalent.txt). The `s < 63` bound can be `<=`
    // without a different answer: fmul(b, HZ, 1000) grows with HZ and b,
    // and already fmul(41, 2, 1000) >= 2^31, so every HZ >= 2 stops by
    // s = 41. The `fmul() < 2^31` test matters only where fmul() is 2^31
    // exactly: ceil(2^b HZ / 1000) = 2^31 iff 1000 (2^31 - 1) < 2^b HZ <=
    // 1000 2^31, a window of at most 1000 / 2^b + 1 integers HZ for each
    // b, empty below b = 9 (HZ past u32::MAX), 58 in all, each checked
    // here. All that land on 2^31 are
    // divisors or multiples of 1000 (125 at b = 34, 2000 at b = 30, ...),
    // which take the other branches, but for one: HZ 4194303999, at
    // b = 9, where `<=` would go on to s = 10. The bc script stops at 9
    // (timeconst_matches_the_kernels_bc_script pins it), so that `<` is
    // not equivalent, and this test says it is the only HZ that tells.
    #[test]
    fn fmul_hits_2_pow_31_exactly_at_one_hz() {
        assert!(fmul(41, 2, 1000) >= 1 << 31);
        let reaches_fmuls32 = |hz: u64| 1000 % hz != 0 && hz % 1000 != 0;
        let (mut candidates, mut other_branches) = (0, 0);
        let mut telling = Vec::new();
        for b in 0..63u32 {
            let lo = (1000 * ((1u64 << 31) - 1)) >> b;
            let hi = (1000u64 << 31) >> b;
            for hz in lo.max(2)..=hi.min(u64::from(u32::MAX)) {
                candidates += 1;
                if fmul(b, hz, 1000) == 1 << 31 {
                    if reaches_fmuls32(hz) {
                        telling.push((hz, b));
                    } else {
                        other_branches += 1;
                    }
                }
            }
        }
        assert_eq!(candidates, 58);
        assert!(other_branches >= 1 && fmul(34, 125, 1000) == 1 << 31);
        assert_eq!(telling, [(4_194_303_999, 9)]);
        assert_eq!(fmuls32(4_194_303_999, 1000), 9);
    }

    #[test]
    fn common_hz_round_up() {
        for (hz, m, j) in [
            (1000, 1, 1),
            (1000, 3584, 3584),
            (250, 1, 1),
            (250, 4, 1),
            (250, 5, 2),
            (250, 112, 28),
            (100, 8, 1),
            (100, 256, 26),
            (300, 10, 3),
            (300, 3584, 1076),
        ] {
            assert_eq!(msecs_to_jiffies(m, hz), j, "HZ={hz} m={m}");
        }
    }

    // 6.12's rounding up, which the floor division this port used to have
    // got wrong (issue 12); the values are what rust/cref's C, taken from
    // the 6.12 tree, returns.
    #[test]
    fn jiffies_to_msecs_rounds_up() {
        for (hz, j, ms) in [
            (1200, 1, 1),
            (1200, 6, 5),
            (1200, 7, 6),
            (300, 1, 4),
            (1016, 1, 1),
            (1024, 1, 1),
            (24, 1, 42),
            (250, 1, 4),
            (2000, 1, 1),
            (2000, 3, 2),
        ] {
            assert_eq!(jiffies_to_msecs(j, hz), ms, "HZ={hz} j={j}");
        }
        // The cap of _msecs_to_jiffies() above 1000 HZ moves with it.
        assert_eq!(jiffies_to_msecs(MAX_JIFFY_OFFSET, 1016), 135_274_559);
        assert_eq!(msecs_to_jiffies(135_274_559, 1016), 137_438_952);
        assert_eq!(msecs_to_jiffies(135_274_560, 1016), MAX_JIFFY_OFFSET);
        // At 4096 HZ the rounded-up value truncates to 0 in unsigned int:
        // every m > 0 is "too large".
        assert_eq!(jiffies_to_msecs(MAX_JIFFY_OFFSET, 4096), 0);
        assert_eq!(msecs_to_jiffies(1, 4096), MAX_JIFFY_OFFSET);
        assert_eq!(msecs_to_jiffies(0, 4096), 0);
    }

    #[test]
    fn negative_int_is_infinite() {
        for hz in [100, 250, 300, 1000, 1200, 2000] {
            assert_eq!(msecs_to_jiffies(0x8000_0000, hz), MAX_JIFFY_OFFSET);
            assert_eq!(msecs_to_jiffies(u32::MAX, hz), MAX_JIFFY_OFFSET);
            assert_eq!(msecs_to_jiffies(0, hz), 0);
        }
        assert_eq!(msecs_to_jiffies_hz::<250>(0x8000_0000), MAX_JIFFY_OFFSET);
        assert_eq!(msecs_to_jiffies_hz::<1200>(u32::MAX), MAX_JIFFY_OFFSET);
        assert_eq!(msecs_to_jiffies_hz::<300>(0), 0);
    }

    // timeconst.bc refuses HZ below 2; both directions read it as 2.
    #[test]
    fn hz_below_two_is_two() {
        for hz in [0, 1] {
            for m in [0, 1, 7, 999, 1000, 123_456, i32::MAX as u32] {
                assert_eq!(
                    msecs_to_jiffies(m, hz),
                    msecs_to_jiffies(m, 2),
                    "HZ={hz} m={m}"
                );
            }
            for j in [0, 1, 3, 1 << 40, MAX_JIFFY_OFFSET, u64::MAX] {
                assert_eq!(
                    jiffies_to_msecs(j, hz),
                    jiffies_to_msecs(j, 2),
                    "HZ={hz} j={j}"
                );
            }
        }
        assert_eq!(msecs_to_jiffies_hz::<0>(999), msecs_to_jiffies(999, 2));
    }

    // The branch and constants chosen at compile time are those chosen at
    // run time (rust/cref compares both against the C for 21 HZ values).
    #[test]
    fn constant_hz_is_run_time_hz() {
        for m in (0..=20_000).chain([
            135_274_559,
            135_274_560,
            i32::MAX as u32 - 1,
            i32::MAX as u32,
            1 << 31,
            u32::MAX,
        ]) {
            assert_eq!(
                msecs_to_jiffies_hz::<100>(m),
                msecs_to_jiffies(m, 100),
                "m={m}"
            );
            assert_eq!(
                msecs_to_jiffies_hz::<250>(m),
                msecs_to_jiffies(m, 250),
                "m={m}"
            );
            assert_eq!(
                msecs_to_jiffies_hz::<300>(m),
                msecs_to_jiffies(m, 300),
                "m={m}"
            );
            assert_eq!(
                msecs_to_jiffies_hz::<1000>(m),
                msecs_to_jiffies(m, 1000),
                "m={m}"
            );
            assert_eq!(
                msecs_to_jiffies_hz::<1016>(m),
                msecs_to_jiffies(m, 1016),
                "m={m}"
            );
            assert_eq!(
                msecs_to_jiffies_hz::<2000>(m),
                msecs_to_jiffies(m, 2000),
                "m={m}"
            );
            assert_eq!(
                msecs_to_jiffies_hz::<4096>(m),
                msecs_to_jiffies(m, 4096),
                "m={m}"
            );
        }
    }

    // Each branch with its constants, as timeconst.bc and the C's #if
    // choose them.
    #[test]
    fn branch_per_hz() {
        assert_eq!(
            MsecsToJiffies::for_hz(250),
            MsecsToJiffies::DivRoundUp {
                msecs_per_jiffy: NonZeroU32::new(4).unwrap()
            }
        );
        assert_eq!(
            MsecsToJiffies::for_hz(2000),
            MsecsToJiffies::Mul {
                jiffies_per_msec: 2,
                max_msecs: jiffies_to_msecs(MAX_JIFFY_OFFSET, 2000)
            }
        );
        assert_eq!(
            MsecsToJiffies::for_hz(300),
            MsecsToJiffies::FixedPoint {
                mul32: 0x9999999A,
                adj32: 0x1CCCCCCCC,
                shr32: 33,
                max_msecs: u32::MAX
            }
        );
        assert_eq!(
            MsecsToJiffies::for_hz(1016),
            MsecsToJiffies::FixedPoint {
                mul32: fmul(31, 1016, 1000),
                adj32: fadj(31, 1016, 1000),
                shr32: 31,
                max_msecs: 135_274_559
            }
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(20_000))]

        // For every HZ up to 1000 (every HZ x86 offers) and every
        // non-negative m, the result is the exact ceiling of m * HZ / 1000
        // or within one of it, the kernel's own promise for the reciprocal
        // path. Above 1000 the reciprocal drifts further for huge m, and
        // the kernel caps at MAX_JIFFY_OFFSET from its u32-truncated
        // jiffies_to_msecs(MAX_JIFFY_OFFSET) on; the port follows both,
        // which `timeconst_matches_the_kernels_bc_script` pins down.
        #[test]
        fn close_to_exact_ceiling(m in 0u32..=i32::MAX as u32, hz in 2u32..=1000) {
            let j = msecs_to_jiffies(m, hz);
            let exact = (u128::from(m) * u128::from(hz)).div_ceil(1000);
            let j = u128::from(j);
            prop_assert!(j + 1 >= exact && j <= exact + 1, "m={} hz={} j={} exact={}", m, hz, j, exact);
        }

        #[test]
        fn monotonic(m in 0u32..=(i32::MAX as u32 - 1), hz in 2u32..=10_000) {
            prop_assert!(msecs_to_jiffies(m, hz) <= msecs_to_jiffies(m + 1, hz));
        }

        #[test]
        fn total(m in any::<u32>(), hz in any::<u32>(), j in any::<u64>()) {
            let _ = msecs_to_jiffies(m, hz);
            let _ = jiffies_to_msecs(j, hz);
        }

        #[test]
        fn constant_hz_is_run_time_hz_anywhere(m in any::<u32>()) {
            prop_assert_eq!(msecs_to_jiffies_hz::<250>(m), msecs_to_jiffies(m, 250));
            prop_assert_eq!(msecs_to_jiffies_hz::<300>(m), msecs_to_jiffies(m, 300));
            prop_assert_eq!(msecs_to_jiffies_hz::<1200>(m), msecs_to_jiffies(m, 1200));
            prop_assert_eq!(msecs_to_jiffies_hz::<3000>(m), msecs_to_jiffies(m, 3000));
        }
    }
}
