// SPDX-License-Identifier: GPL-2.0

//! Per-entity load tracking, as `kernel/sched/pelt.c` decays it.
//!
//! A signal is the geometric average of an input (a runnable weight, or
//! 1024 while running) over 1024 us periods, with `y^32 = 1/2`. The
//! kernel's `runnable_avg_yN_inv[]` table is `y^n` in 0.32 fixed point;
//! here it is computed once from `sqrt()`, which IEEE 754 rounds exactly,
//! and multiplications, so every machine gets the same table. Partial
//! periods are averaged into the period they belong to, which the kernel
//! does more finely (`period_contrib`); the difference is a fraction of a
//! period's weight, far below anything the balancer compares.

use std::sync::OnceLock;

/// A PELT period: 1024 us.
pub const PERIOD_NS: u64 = 1024 * 1024;
/// Fixed-point scale of averages (16 fractional bits).
const FRAC: u32 = 16;

fn y_table() -> &'static [u64; 32] {
    static T: OnceLock<[u64; 32]> = OnceLock::new();
    T.get_or_init(|| {
        // y = 2^(-1/32) = five square roots of 1/2.
        let mut y = 0.5f64;
        for _ in 0..5 {
            y = y.sqrt();
        }
        let mut t = [0u64; 32];
        let mut p = 1.0f64;
        for e in t.iter_mut() {
            *e = (p * 4_294_967_296.0) as u64;
            p *= y;
        }
        t
    })
}

/// `decay_load()`: `val * y^n`.
pub fn decay(val: u64, n: u64) -> u64 {
    if n >= 64 * 32 {
        return 0;
    }
    let shifted = val >> (n / 32);
    ((u128::from(shifted) * u128::from(y_table()[(n % 32) as usize])) >> 32) as u64
}

/// One tracked signal.
#[derive(Clone, Copy, Debug, Default)]
pub struct Pelt {
    /// Average, scaled by 2^16.
    avg: u64,
    /// Index of the period `acc` belongs to.
    period: u64,
    /// Time-weighted input within that period (input * ns).
    acc: u128,
    /// Last update, ns.
    last_ns: u64,
}

impl Pelt {
    /// A signal that starts at `value` (a new task starts at its weight,
    /// as `init_entity_runnable_average()` does for load).
    pub fn new(now_ns: u64, value: u64) -> Self {
        Self {
            avg: value << FRAC,
            period: now_ns / PERIOD_NS,
            acc: 0,
            last_ns: now_ns,
        }
    }

    /// Accounts `[last update, now)` with the input at `value`.
    pub fn update(&mut self, now_ns: u64, value: u64) {
        if now_ns <= self.last_ns {
            return;
        }
        let p = now_ns / PERIOD_NS;
        let v = u128::from(value);
        if p == self.period {
            self.acc += v * u128::from(now_ns - self.last_ns);
            self.last_ns = now_ns;
            return;
        }
        // Close the current period with its time-weighted mean input.
        let end = (self.period + 1) * PERIOD_NS;
        self.acc += v * u128::from(end - self.last_ns);
        let mean = (self.acc << FRAC) / u128::from(PERIOD_NS);
        let one = 1u128 << 32;
        let y1 = u128::from(y_table()[1]);
        self.avg = ((u128::from(self.avg) * y1 + mean * (one - y1)) >> 32) as u64;
        // Whole periods at `value`.
        let full = p - self.period - 1;
        if full > 0 {
            let target = value << FRAC;
            let d = decay(self.avg, full);
            let gain = target - decay(target, full);
            self.avg = d + gain;
        }
        self.period = p;
        self.acc = v * u128::from(now_ns - p * PERIOD_NS);
        self.last_ns = now_ns;
    }

    /// Time of the last update, ns.
    pub fn last_ns(&self) -> u64 {
        self.last_ns
    }

    /// The average, in the input's unit.
    pub fn value(&self) -> u64 {
        self.avg >> FRAC
    }

    /// Adds another signal's average (`attach_entity_load_avg()`).
    pub fn add(&mut self, v: u64) {
        self.avg = self.avg.saturating_add(v << FRAC);
    }

    /// Removes an average (`remove_entity_load_avg()`), never below 0.
    pub fn sub(&mut self, v: u64) {
        self.avg = self.avg.saturating_sub(v << FRAC);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_life_is_32_periods() {
        assert_eq!(decay(1 << 20, 32), 1 << 19);
        let d = decay(1 << 20, 1);
        // y = 0.97857...
        assert!((1_026_000..1_026_300).contains(&d), "{d}");
    }

    #[test]
    fn always_runnable_converges_to_the_input() {
        let mut s = Pelt::new(0, 0);
        s.update(400 * PERIOD_NS, 1024);
        assert!(s.value() >= 1020, "{}", s.value());
        s.update(432 * PERIOD_NS, 0);
        assert!((505..=515).contains(&s.value()), "{}", s.value());
    }

    #[test]
    fn half_duty_cycle_averages_half() {
        let mut s = Pelt::new(0, 0);
        let mut t = 0;
        for _ in 0..2000 {
            s.update(t + 100_000, 1024);
            s.update(t + 200_000, 0);
            t += 200_000;
        }
        assert!((480..=545).contains(&s.value()), "{}", s.value());
    }
}
