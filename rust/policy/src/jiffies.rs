// SPDX-License-Identifier: GPL-2.0

//! `msecs_to_jiffies()` for any `HZ`, bit for bit.
//!
//! Mirrors, in Linux 6.12, `include/linux/jiffies.h`, `kernel/time/time.c`
//! and the constants
//! `kernel/time/timeconst.bc` generates into `include/generated/timeconst.h`
//! (`MSEC_TO_HZ_MUL32`, `_ADJ32`, `_SHR32`, `HZ_TO_MSEC_NUM`, `_DEN`), on a
//! 64-bit kernel (`unsigned long` is `u64`). The balance interval of seed
//! 001 goes through it, and the issue asks for the rule to hold for any HZ
//! the kernel is built with, so the HZ-dependent branch is chosen at run
//! time here instead of by the preprocessor.

use core::num::NonZeroU64;

/// `MSEC_PER_SEC`.
pub const MSEC_PER_SEC: u64 = 1000;

/// `MAX_JIFFY_OFFSET`: `(LONG_MAX >> 1) - 1`, the "infinite" timeout.
pub const MAX_JIFFY_OFFSET: u64 = ((i64::MAX as u64) >> 1) - 1;

/// Greatest common divisor; `gcd(a, 0)` is `a`. `%` by a non-zero `b`
/// cannot panic.
fn gcd(mut a: u64, mut b: u64) -> u64 {
    while let Some(d) = NonZeroU64::new(b) {
        let t = b;
        b = a % d;
        a = t;
    }
    a
}

// The kernel has no 128-bit division (`__udivti3`), so these work in u64.
// They fit: `fmuls32` stops at the first `s` where `fmul` reaches 2^31, so
// every product evaluated is below 2^32 * d, and d is 1000 here.

/// timeconst.bc `fmul(b, n, d)`: `(2^b * n + d - 1) / d`.
fn fmul(b: u32, n: u64, d: u64) -> u64 {
    match 1u64.checked_shl(b).and_then(|p| p.checked_mul(n)) {
        Some(v) => v.div_ceil(d),
        // Unreachable for the arguments used here (see above).
        None => u64::MAX,
    }
}

/// timeconst.bc `fadj(b, n, d)`: `2^b * (d - 1) / d` with `d` reduced by
/// `gcd(n, d)`.
fn fadj(b: u32, n: u64, d: u64) -> u64 {
    let d = d / gcd(n, d);
    match 1u64.checked_shl(b).and_then(|p| p.checked_mul(d - 1)) {
        Some(v) => v / d,
        None => u64::MAX,
    }
}

/// timeconst.bc `fmuls(32, n, d)`: the smallest shift that brings
/// `fmul` to at least 2^31.
fn fmuls32(n: u64, d: u64) -> u32 {
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
pub fn jiffies_to_msecs(j: u64, hz: u32) -> u32 {
    // Below 2, timeconst.bc refuses the HZ ("Totally bogus"); read as 2.
    let hz = NonZeroU64::new(u64::from(hz.max(2))).unwrap_or(NonZeroU64::MIN);
    let ms = if hz.get() <= MSEC_PER_SEC && MSEC_PER_SEC % hz == 0 {
        // (MSEC_PER_SEC / HZ) * j: wraps in unsigned long.
        (MSEC_PER_SEC / hz).wrapping_mul(j)
    } else if hz.get() > MSEC_PER_SEC && hz.get() % MSEC_PER_SEC == 0 {
        // (j + k - 1) / k, k = HZ / MSEC_PER_SEC >= 2: the sum wraps.
        let k = NonZeroU64::new(hz.get() / MSEC_PER_SEC).unwrap_or(NonZeroU64::MIN);
        j.wrapping_add(k.get().wrapping_sub(1)) / k
    } else {
        // DIV_ROUND_UP(j * NUM, DEN): the product and the sum wrap.
        // gcd(HZ, 1000) is at least 1, so never the fallback.
        let cd = NonZeroU64::new(gcd(hz.get(), MSEC_PER_SEC)).unwrap_or(NonZeroU64::MIN);
        let num = MSEC_PER_SEC / cd;
        let den = NonZeroU64::new(hz.get() / cd).unwrap_or(NonZeroU64::MIN);
        j.wrapping_mul(num).wrapping_add(den.get().wrapping_sub(1)) / den
    };
    // The C returns unsigned int: the value is truncated, as there.
    ms as u32
}

/// `_msecs_to_jiffies()` for the HZ at hand.
fn msecs_to_jiffies_inner(m: u32, hz: u64) -> u64 {
    let m64 = u64::from(m);
    if hz <= MSEC_PER_SEC && MSEC_PER_SEC % hz == 0 {
        // (m + (MSEC_PER_SEC / HZ) - 1) / (MSEC_PER_SEC / HZ), in
        // unsigned int; m < 2^31 here, so the sum cannot wrap.
        let k = MSEC_PER_SEC / hz;
        m64.div_ceil(k)
    } else if hz > MSEC_PER_SEC && hz % MSEC_PER_SEC == 0 {
        // Both HZ values are ≤ u32::MAX, so this cannot truncate.
        if m > jiffies_to_msecs(MAX_JIFFY_OFFSET, hz as u32) {
            return MAX_JIFFY_OFFSET;
        }
        m64.wrapping_mul(hz / MSEC_PER_SEC)
    } else {
        if hz > MSEC_PER_SEC && m > jiffies_to_msecs(MAX_JIFFY_OFFSET, hz as u32) {
            return MAX_JIFFY_OFFSET;
        }
        // Computed per call (a few dozen steps) because HZ is an input;
        // x86's HZ=100, 250 and 1000 take the first branch instead.
        let s = fmuls32(hz, MSEC_PER_SEC);
        let mul = fmul(s, hz, MSEC_PER_SEC);
        let adj = fadj(s, hz, MSEC_PER_SEC);
        // (MSEC_TO_HZ_MUL32 * m + MSEC_TO_HZ_ADJ32) >> MSEC_TO_HZ_SHR32 in
        // u64 arithmetic, as the U64_C() constants make it in C.
        mul.wrapping_mul(m64).wrapping_add(adj) >> s.min(63)
    }
}

/// The kernel's `msecs_to_jiffies()` (via `__msecs_to_jiffies()`): a value
/// that is negative as an `int` means "infinite", `MAX_JIFFY_OFFSET`.
/// `hz` below 2 is read as 2 (timeconst.bc refuses it: "Totally bogus").
pub fn msecs_to_jiffies(m: u32, hz: u32) -> u64 {
    if (m as i32) < 0 {
        return MAX_JIFFY_OFFSET;
    }
    msecs_to_jiffies_inner(m, u64::from(hz.max(2)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

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
        ] {
            let s = fmuls32(hz, 1000);
            assert_eq!(s, shr, "HZ={hz}");
            assert_eq!(fmul(s, hz, 1000), mul, "HZ={hz}");
            assert_eq!(fadj(s, hz, 1000), adj, "HZ={hz}");
        }
    }

    // Why fmuls32's `<` and its `s < 63` bound can be `<=` without a
    // different answer (rust/policy/mutants-equivalent.txt): for every HZ
    // up to 10^5 that reaches fmuls32 (neither a divisor nor a multiple of
    // 1000: those take the other branches), fmul() steps over 2^31 without
    // landing on it, and does so before s = 63. (HZ 125 would land on it,
    // at s = 34, but takes the first branch.)
    #[test]
    fn fmul_never_hits_2_pow_31_exactly() {
        for hz in (2..=100_000u64).filter(|hz| 1000 % hz != 0 && hz % 1000 != 0) {
            let s = fmuls32(hz, 1000);
            assert!(s < 63, "HZ={hz}: s={s}");
            for b in 0..=s {
                assert_ne!(fmul(b, hz, 1000), 1 << 31, "HZ={hz} b={b}");
            }
        }
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
    }
}
