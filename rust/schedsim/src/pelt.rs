// SPDX-License-Identifier: GPL-2.0

//! Per-entity load tracking, as `kernel/sched/pelt.c` (6.12) computes it,
//! to the unit.
//!
//! A signal is the geometric average of an input (a runnable weight, or
//! 1024 while running) over 1024 us periods, with `y^32 = 1/2`. This is
//! the kernel's integer arithmetic, not an approximation of it:
//! `accumulate_sum()` with `period_contrib`, `decay_load()` with the
//! kernel's own `runnable_avg_yN_inv[]`, `__accumulate_pelt_segments()`,
//! the divider `LOAD_AVG_MAX - 1024 + period_contrib`, an average that
//! changes only when a period ends, and `attach`/`detach` as
//! `attach_entity_load_avg()` and `detach_entity_load_avg()` move a
//! task's sums. The unit matters: the balancer compares a task's load
//! with an imbalance made of averages, and at 9 tasks on 8 CPUs the two
//! meet at the boundary (`load / 2` against an imbalance of 508-512 at
//! the package level, `load >> 2` against 255-256 within an LLC). A task
//! runnable for long reads 1023 in the kernel, its runqueue 1024 or 2048;
//! an average that reached the input exactly (1024) decided those tests
//! the other way, and with them LB_RELAX_FAILED's direction (issue 32).

/// A PELT period: 1024 us, in ns.
pub const PERIOD_NS: u64 = 1024 * 1024;

/// `LOAD_AVG_PERIOD`: the half-life, in periods.
const LOAD_AVG_PERIOD: u64 = 32;

/// `LOAD_AVG_MAX`: the largest sum of 1024 per period, decayed.
pub const LOAD_AVG_MAX: u64 = 47742;

/// `PELT_MIN_DIVIDER`: the divider with no partial period.
const PELT_MIN_DIVIDER: u64 = LOAD_AVG_MAX - 1024;

/// `runnable_avg_yN_inv[]` (`kernel/sched/sched-pelt.h`): `y^n` in 0.32
/// fixed point, `y^32 = 1/2`.
const RUNNABLE_AVG_YN_INV: [u32; 32] = [
    0xffffffff, 0xfa83b2da, 0xf5257d14, 0xefe4b99a, 0xeac0c6e6, 0xe5b906e6, 0xe0ccdeeb, 0xdbfbb796,
    0xd744fcc9, 0xd2a81d91, 0xce248c14, 0xc9b9bd85, 0xc5672a10, 0xc12c4cc9, 0xbd08a39e, 0xb8fbaf46,
    0xb504f333, 0xb123f581, 0xad583ee9, 0xa9a15ab4, 0xa5fed6a9, 0xa2704302, 0x9ef5325f, 0x9b8d39b9,
    0x9837f050, 0x94f3efe9, 0x91c0d3e9, 0x8e9f3b59, 0x8b95c1e3, 0x88a4c8cf, 0x85aac367, 0x82cd8698,
];

/// `decay_load()`: `val * y^n`.
pub fn decay(val: u64, n: u64) -> u64 {
    if n > LOAD_AVG_PERIOD * 63 {
        return 0;
    }
    let shifted = val >> (n / LOAD_AVG_PERIOD);
    let y = RUNNABLE_AVG_YN_INV[(n % LOAD_AVG_PERIOD) as usize];
    // mul_u64_u32_shr(val, y, 32): the product fits in 96 bits.
    ((u128::from(shifted) * u128::from(y)) >> 32) as u64
}

/// `__accumulate_pelt_segments()`: the contribution of `d1` us that end
/// the old period, `periods - 1` whole periods and `d3` us of the new one.
fn accumulate_segments(periods: u64, d1: u64, d3: u64) -> u64 {
    let c1 = decay(d1, periods);
    let c2 = LOAD_AVG_MAX
        .saturating_sub(decay(LOAD_AVG_MAX, periods))
        .saturating_sub(1024);
    c1.saturating_add(c2).saturating_add(d3)
}

/// One tracked signal: a `struct sched_avg`'s sum and average for one
/// input.
///
/// # Invariants
///
/// `period_contrib < 1024`, and `last_update_ns` advances in whole 1024
/// ns steps, as `last_update_time` does.
#[derive(Clone, Copy, Debug, Default)]
pub struct Pelt {
    /// `*_sum`: the input times its time (in 1024 ns units), decayed.
    sum: u64,
    /// `*_avg`, recomputed when a period ends.
    avg: u64,
    /// `period_contrib`: the part of the current period in `sum`.
    period_contrib: u64,
    /// `last_update_time`, ns.
    last_update_ns: u64,
    /// The last time the signal was brought up to, ns (for callers that
    /// update several signals at one instant once).
    seen_ns: u64,
    /// An entity's load (`se->avg.load_*`): the sum counts runnable time
    /// alone (input 0 or 1) and the average is this weight times it over
    /// the divider, as `___update_load_avg(&se->avg, se_weight(se))`;
    /// None for a signal whose sum carries its input (a runqueue's load,
    /// any utilisation).
    weight: Option<u64>,
}

impl Pelt {
    /// The divider, `get_pelt_divider()`.
    fn divider(&self) -> u64 {
        PELT_MIN_DIVIDER + self.period_contrib
    }

    /// A signal that has long been at `value`: its sum set from its
    /// average as `attach_entity_load_avg()` sets a task's.
    pub fn new(now_ns: u64, value: u64) -> Self {
        Self {
            sum: value.saturating_mul(PELT_MIN_DIVIDER),
            avg: value,
            period_contrib: 0,
            last_update_ns: now_ns,
            seen_ns: now_ns,
            weight: None,
        }
    }

    /// An entity's load of weight `weight` that reads `value` (a new task
    /// starts at its weight, as `init_entity_runnable_average()` sets it).
    /// Its input to [`Pelt::update`] is its runnable weight, 0 or
    /// `weight`.
    pub fn entity(now_ns: u64, weight: u64, value: u64) -> Self {
        let mut s = Self::new(now_ns, value);
        s.weight = Some(weight);
        s.sum = Self::entity_sum(value, PELT_MIN_DIVIDER, weight);
        s
    }

    /// `attach_entity_load_avg()`'s load sum from the average.
    fn entity_sum(avg: u64, divider: u64, weight: u64) -> u64 {
        let sum = avg.saturating_mul(divider);
        if weight < sum {
            sum / weight
        } else {
            1
        }
    }

    /// `___update_load_sum()` then, if a period ended,
    /// `___update_load_avg()`: accounts `[last update, now)` with the
    /// input at `value`.
    pub fn update(&mut self, now_ns: u64, value: u64) {
        self.seen_ns = self.seen_ns.max(now_ns);
        let Some(delta_ns) = now_ns.checked_sub(self.last_update_ns) else {
            // The kernel resets a clock that went back; the model's never
            // does, but an entity attached later than now may.
            return;
        };
        let delta = delta_ns >> 10;
        if delta == 0 {
            return;
        }
        self.last_update_ns = self.last_update_ns.saturating_add(delta << 10);
        let input = match self.weight {
            Some(_) => u64::from(value > 0),
            None => value,
        };
        // accumulate_sum()
        let mut contrib = delta;
        let total = delta.saturating_add(self.period_contrib);
        let periods = total / 1024;
        let mut in_period = total;
        if periods > 0 {
            self.sum = decay(self.sum, periods);
            in_period = total % 1024;
            if input > 0 {
                contrib = accumulate_segments(periods, 1024 - self.period_contrib, in_period);
            }
        }
        self.period_contrib = in_period;
        self.sum = self.sum.saturating_add(input.saturating_mul(contrib));
        if periods > 0 {
            let scale = self.weight.unwrap_or(1);
            self.avg =
                (u128::from(scale) * u128::from(self.sum) / u128::from(self.divider())) as u64;
        }
    }

    /// The last time the signal was brought up to, ns.
    pub fn last_ns(&self) -> u64 {
        self.seen_ns
    }

    /// The average, in the input's unit.
    pub fn value(&self) -> u64 {
        self.avg
    }

    /// What `se` adds to a runqueue's sum: its weight times its runnable
    /// sum for an entity's load, its sum otherwise.
    fn sum_of(se: &Pelt) -> u64 {
        se.sum.saturating_mul(se.weight.unwrap_or(1))
    }

    /// `attach_entity_load_avg()`: `se` joins this runqueue's signal. It
    /// takes the runqueue's clock and partial period, its sum rebuilt from
    /// its average on the runqueue's divider, and adds both.
    pub fn attach(&mut self, se: &mut Pelt) {
        se.last_update_ns = self.last_update_ns;
        se.seen_ns = self.seen_ns;
        se.period_contrib = self.period_contrib;
        let divider = self.divider();
        se.sum = match se.weight {
            Some(w) => Self::entity_sum(se.avg, divider, w),
            None => se.avg.saturating_mul(divider),
        };
        self.avg = self.avg.saturating_add(se.avg);
        self.sum = self.sum.saturating_add(Self::sum_of(se));
    }

    /// `detach_entity_load_avg()`: `se` leaves this runqueue's signal;
    /// neither goes below 0, and the sum stays at least what the average
    /// implies (`max(sum, avg * PELT_MIN_DIVIDER)`).
    pub fn detach(&mut self, se: &Pelt) {
        self.avg = self.avg.saturating_sub(se.avg);
        self.sum = self
            .sum
            .saturating_sub(Self::sum_of(se))
            .max(self.avg.saturating_mul(PELT_MIN_DIVIDER));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_life_is_32_periods() {
        // y^0 is 0xffffffff, one short of 1.0 in 0.32: the kernel's
        // halving loses a unit.
        assert_eq!(decay(1 << 20, 32), (1 << 19) - 1);
        let d = decay(1 << 20, 1);
        // y = 0.97857...
        assert!((1_026_000..1_026_300).contains(&d), "{d}");
        // The kernel's cut: 63 half-lives and no more.
        assert_eq!(decay(u64::MAX, 62 * 32), 2);
        assert_eq!(decay(u64::MAX, 63 * 32 + 1), 0);
    }

    /// `LOAD_AVG_MAX` is the sum the kernel's truncating series reaches:
    /// 1024 a period for long, from 0.
    #[test]
    fn a_full_input_sums_to_load_avg_max() {
        let mut s = Pelt::new(0, 0);
        // 2000 periods at 1 (us units, whole periods only).
        s.update(2000 * PERIOD_NS, 1);
        assert!(
            (LOAD_AVG_MAX - 1024 - 2..=LOAD_AVG_MAX).contains(&s.sum),
            "{}",
            s.sum
        );
    }

    /// What the kernel reads for a task that has been runnable for long,
    /// updated every tick at any phase: 1023, never its weight; a
    /// runqueue of one such task 1023 or 1024, of two 2047 or 2048
    /// (a Python transcription of `pelt.c` gives the same).
    #[test]
    fn always_runnable_reads_as_the_kernel_does() {
        let mut task = Pelt::entity(0, 1024, 0);
        let (mut one, mut two) = (Pelt::new(0, 0), Pelt::new(0, 0));
        let mut t = 0u64;
        let mut seen = (Vec::new(), Vec::new(), Vec::new());
        for i in 0..3000u64 {
            // 4 ms ticks with some phase drift.
            t += 4_000_000 + (i * 7919 % 50_000);
            task.update(t, 1024);
            one.update(t, 1024);
            two.update(t, 2048);
            if i > 1000 {
                seen.0.push(task.value());
                seen.1.push(one.value());
                seen.2.push(two.value());
            }
        }
        assert!(seen.0.iter().all(|&v| v == 1023), "{:?}", &seen.0[..8]);
        assert!(seen.1.iter().all(|&v| v == 1023 || v == 1024));
        assert!(seen.1.contains(&1024));
        assert!(seen.2.iter().all(|&v| v == 2047 || v == 2048));
        // Half a life later without input: about half.
        task.update(t + 32 * PERIOD_NS, 0);
        assert!((505..=515).contains(&task.value()), "{}", task.value());
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

    /// A task moved keeps its average; the runqueues' averages move by it
    /// and their sums by its weighted sum, never below what the averages
    /// imply.
    #[test]
    fn attach_and_detach_move_the_average() {
        let mut src = Pelt::new(0, 2048);
        let mut dst = Pelt::new(0, 1024);
        let mut task = Pelt::entity(0, 1024, 1023);
        src.detach(&task);
        assert_eq!(src.value(), 1025);
        assert!(src.sum >= 1025 * PELT_MIN_DIVIDER);
        dst.attach(&mut task);
        assert_eq!((dst.value(), task.value()), (2047, 1023));
        assert_eq!(task.last_update_ns, dst.last_update_ns);
        let mut empty = Pelt::new(0, 0);
        empty.detach(&task);
        assert_eq!((empty.value(), empty.sum), (0, 0));
    }
}
