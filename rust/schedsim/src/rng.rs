// SPDX-License-Identifier: GPL-2.0

//! The simulator's only source of randomness: SplitMix64 streams.
//!
//! No kernel code is mirrored here, except that NI_RANDOM's dice are one
//! stream per CPU, as `sched_rng()` reads the per-CPU `sched_rnd_state`.
//! A fixed, tiny generator (Steele, Lea and Flood, 2014) is used instead of
//! a crate so that a seed gives the same stream on every machine and every
//! toolchain, forever: the trace hashes in the tests and the numbers in
//! `Documentation/schedsim.rst` depend on it.
//!
//! Common random numbers: every purpose, and every task or CPU within it,
//! has its own stream, derived from the run's seed and the purpose's id
//! ([`Rng::stream`]). A flag that changes which CPU runs what, or how
//! often NI_RANDOM throws its dice, then leaves the workload's own draws
//! alone: task 7's tenth burst is as long with the flag on as with it off,
//! so an A/B compares the rules on the same workload rather than on two
//! reshuffled ones.

/// What a stream is for; with the task's or CPU's number it names one
/// stream of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Purpose {
    /// The order in which CPUs take a tick (one stream per run).
    TickOrder,
    /// NI_RANDOM's dice of one CPU (`sched_rng()`).
    NiRandom,
    /// The jitter of one task's bursts and sleeps.
    Task,
    /// A replay's TCG latencies, drawn from the trace's spread
    /// (`cost::LatencySpread`; one stream per run; id 1: the idle
    /// vCPUs' ticks, `Config::idle_tick_turn`).
    Latency,
}

impl Purpose {
    /// A tag per purpose, in the top byte of the stream key.
    fn tag(self) -> u64 {
        match self {
            Purpose::TickOrder => 1,
            Purpose::NiRandom => 2,
            Purpose::Task => 3,
            Purpose::Latency => 4,
        }
    }
}

/// SplitMix64's finaliser: a bijection of `u64` that spreads every input
/// bit over every output bit.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

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

    /// Stream `id` of `purpose` in the run seeded `seed`. The key (the tag
    /// in the top byte, `id` below it; ids are task and CPU numbers, far
    /// below 2^56) is distinct per stream and goes through the finaliser
    /// before it meets the seed, so two streams of a run start at unrelated
    /// states, and the same stream of two seeds too.
    pub fn stream(seed: u64, purpose: Purpose, id: u64) -> Self {
        let key = (purpose.tag() << 56) | (id & ((1 << 56) - 1));
        Self::new(mix(seed ^ mix(key)))
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        mix(self.state)
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

    /// Streams are a function of (seed, purpose, id) alone, and distinct.
    #[test]
    fn streams_are_keyed_and_distinct() {
        let first = |s: u64, p: Purpose, id: u64| Rng::stream(s, p, id).next_u64();
        assert_eq!(first(1, Purpose::Task, 7), first(1, Purpose::Task, 7));
        let mut seen = std::collections::BTreeSet::new();
        for seed in 0..4 {
            for p in [Purpose::TickOrder, Purpose::NiRandom, Purpose::Task] {
                for id in 0..64 {
                    assert!(seen.insert(first(seed, p, id)), "{seed} {p:?} {id}");
                }
            }
        }
    }
}
