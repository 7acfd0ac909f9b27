// SPDX-License-Identifier: GPL-2.0

//! The simulator's only source of randomness: SplitMix64.
//!
//! No kernel code is mirrored here. A fixed, tiny generator (Steele, Lea
//! and Flood, 2014) is used instead of a crate so that a seed gives the
//! same stream on every machine and every toolchain, forever: the trace
//! hashes in the tests and the numbers in `Documentation/schedsim.rst`
//! depend on it.

/// SplitMix64 state.
#[derive(Clone, Debug)]
pub struct Rng {
    state: u64,
}

impl Rng {
    /// A generator for `seed`. Seeds that differ in one bit give unrelated
    /// streams, because every output goes through the finaliser.
    pub fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, n)`; 0 when `n` is 0. Lemire's multiply-shift, whose
    /// bias (below 2^-32 for the sizes used here) does not matter to a
    /// model but keeps the stream one draw per call.
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// `base_ns` scaled by a factor uniform in `[1 - pct/100, 1 + pct/100]`.
    pub fn jitter_ns(&mut self, base_ns: u64, pct: u64) -> u64 {
        if pct == 0 || base_ns == 0 {
            return base_ns;
        }
        let span = base_ns.saturating_mul(pct) / 100;
        let lo = base_ns.saturating_sub(span);
        lo.saturating_add(self.below(span.saturating_mul(2).saturating_add(1)))
    }

    /// Fisher-Yates shuffle.
    pub fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            let j = self.below(i as u64 + 1) as usize;
            v.swap(i, j);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_stream() {
        // SplitMix64 with seed 0; the first outputs are the published ones.
        let mut r = Rng::new(0);
        assert_eq!(r.next_u64(), 0xe220_a839_7b1d_cdaf);
        assert_eq!(r.next_u64(), 0x6e78_9e6a_a1b9_65f4);
    }

    #[test]
    fn below_and_jitter_stay_in_range() {
        let mut r = Rng::new(7);
        for _ in 0..10_000 {
            assert!(r.below(9) < 9);
            let j = r.jitter_ns(1000, 10);
            assert!((900..=1100).contains(&j));
        }
        assert_eq!(r.below(0), 0);
    }
}
