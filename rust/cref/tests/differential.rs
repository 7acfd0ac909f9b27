// SPDX-License-Identifier: GPL-2.0

//! Differential tests: every rule of `rust/policy` against the C it
//! replaces (`c/`), over at least 10^6 random inputs plus edge values per
//! rule, with zero mismatches allowed. The generator is a fixed-seed
//! xorshift, so a failure reproduces; the first mismatch is printed.

use core::fmt::Debug;

use sched_lb_cref::*;
use sched_lb_policy::balance_interval::{sd_balance_interval_jiffies, IntervalInput};
use sched_lb_policy::idle_cpus::{decide as idle_decide, IdleCpusFlags};
use sched_lb_policy::{
    avg_load, detach_load, jiffies, newidle_walk, sis_age, sis_budget, sis_cost,
};

/// Random inputs per rule (per HZ for the HZ-dependent ones).
const N: u64 = 1_000_000;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn coin(&mut self) -> bool {
        self.next() & 1 == 0
    }

    /// Mostly small values, where the rules' boundaries are, with
    /// full-range and edge values mixed in.
    fn pick(&mut self, small: u64) -> u64 {
        match self.next() % 4 {
            0 => self.next(),
            1 => self.next() % (small + 1),
            2 => EDGES[(self.next() % EDGES.len() as u64) as usize],
            _ => self.next() % (small * 4 + 1),
        }
    }
}

const EDGES: [u64; 12] = [
    0,
    1,
    2,
    u32::MAX as u64 - 1,
    u32::MAX as u64,
    u32::MAX as u64 + 1,
    i32::MAX as u64,
    i64::MAX as u64,
    i64::MAX as u64 + 1,
    u64::MAX - 1,
    u64::MAX,
    1 << 20,
];

/// One comparison: the C answer, the Rust answer, and the input for the
/// report. `None` skips an input outside the compared domain.
type Outcome<T> = Option<(T, T, String)>;

/// Runs `one` until `n` inputs were compared; asserts zero mismatches.
fn differential<T: PartialEq + Debug>(
    rule: &str,
    rng: &mut Rng,
    n: u64,
    mut one: impl FnMut(&mut Rng) -> Outcome<T>,
) {
    let (mut compared, mut mismatches, mut first) = (0u64, 0u64, None);
    while compared < n {
        let Some((c, r, input)) = one(rng) else {
            continue;
        };
        compared += 1;
        if c != r {
            mismatches += 1;
            first.get_or_insert(format!("{input}: C {c:?} Rust {r:?}"));
        }
    }
    println!("{rule}: {compared} inputs, {mismatches} mismatches");
    assert_eq!(
        mismatches,
        0,
        "{rule}: first mismatch: {}",
        first.unwrap_or_default()
    );
}

#[test]
fn idle_cpus_matches_c() {
    differential("idle_cpus", &mut Rng(0x5eed_0000), N, |rng| {
        // Idle CPU counts and LLC sizes are bounded by NR_CPUS (8192);
        // sd_llc_size is at least 1 once domains exist.
        let l = (rng.pick(64) % 8193) as u32;
        let b = (rng.pick(64) % 8193) as u32;
        let llc = (rng.pick(8) % 8192) as u32 + 1;
        let f = IdleCpusFlags {
            balance_idle_cpus: rng.coin(),
            balance_idle_llc2: rng.coin(),
        };
        // SAFETY: pure C function of its arguments.
        let c = unsafe {
            ref_idle_cpus_balanced(l, b, llc as i32, f.balance_idle_cpus, f.balance_idle_llc2)
        };
        Some((
            c,
            idle_decide(l, b, llc, f),
            format!("l={l} b={b} llc={llc} {f:?}"),
        ))
    });
}

#[test]
fn detach_skip_matches_c() {
    differential("detach_skip", &mut Rng(0x5eed_0001), N, |rng| {
        let load = rng.pick(4096);
        let imb = rng.pick(4096) as i64;
        let failed = rng.pick(70) as u32;
        let tries = rng.pick(3) as u32;
        let relax = rng.coin();
        // SAFETY: pure C function of its arguments.
        let c = unsafe { ref_detach_skip(load, imb, failed, tries, relax) };
        let r = detach_load::decide(load, imb, failed, tries, relax);
        Some((
            c,
            r,
            format!("load={load} imb={imb} failed={failed} tries={tries} relax={relax}"),
        ))
    });
}

#[test]
fn avg_load_matches_c_where_c_does_not_wrap() {
    differential("avg_load", &mut Rng(0x5eed_0002), N, |rng| {
        let b = rng.pick(1 << 20);
        let l = rng.pick(1 << 20);
        let pct = (rng.pick(200) % 100_000) as u32;
        // The C multiplies in u64; compare only where it does not wrap
        // (the Rust is exact everywhere, see avg_load.rs).
        b.checked_mul(100)?;
        l.checked_mul(u64::from(pct))?;
        // SAFETY: pure C function of its arguments.
        let c = unsafe { ref_avg_load_balanced(b, l, pct) };
        Some((
            c,
            avg_load::avg_load_balanced(b, l, pct),
            format!("busiest={b} local={l} pct={pct}"),
        ))
    });
}

#[test]
fn newidle_stop_matches_c_with_flags_off() {
    differential("newidle_stop", &mut Rng(0x5eed_0003), N, |rng| {
        let a = rng.pick(1 << 22);
        let cur = rng.pick(1 << 20);
        let max = rng.pick(1 << 20);
        // 584 years of balance cost: the C wraps, the Rust saturates.
        cur.checked_add(max)?;
        // SAFETY: pure C function of its arguments.
        let c = unsafe { ref_newidle_stop(a, cur, max) };
        let r = newidle_walk::stop_at_domain(newidle_walk::WalkStep {
            avg_idle_ns: a,
            curr_cost_ns: cur,
            max_newidle_lb_cost_ns: max,
            migration_cost_ns: rng.next(),
            consecutive_failures: rng.next() as u32,
            backoff: false,
            migration_cost: false,
        });
        Some((c, r, format!("avg_idle={a} curr={cur} max={max}")))
    });
}

#[test]
fn msecs_to_jiffies_matches_c_for_every_hz() {
    for h in HZ_REFS {
        let mut rng = Rng(0x5eed_0004 ^ u64::from(h.hz));
        // Every m up to 100 s first, then random ones.
        let mut sweep = 0..=100_000u32;
        differential(
            &format!("msecs_to_jiffies HZ={}", h.hz),
            &mut rng,
            N + 100_001,
            |rng| {
                let m = sweep.next().unwrap_or_else(|| rng.pick(1 << 16) as u32);
                // SAFETY: pure C function of its argument.
                let c = unsafe { (h.msecs_to_jiffies)(m) };
                Some((
                    c,
                    jiffies::msecs_to_jiffies(m, h.hz),
                    format!("HZ={} m={m}", h.hz),
                ))
            },
        );
    }
}

#[test]
fn balance_interval_matches_c_for_every_hz() {
    for h in HZ_REFS {
        let mut rng = Rng(0x5eed_0005 ^ u64::from(h.hz));
        differential(
            &format!("balance_interval HZ={}", h.hz),
            &mut rng,
            N,
            |rng| {
                let i = IntervalInput {
                    balance_interval_ms: rng.pick(512) as u32,
                    busy_factor: rng.pick(64) as u32,
                    cpu_busy: rng.coin(),
                    // HZ * nr_online_cpus / 10, at least 1.
                    max_interval_jiffies: rng.pick(1 << 16).max(1),
                    hz: h.hz,
                    busy_dec: rng.coin(),
                };
                // SAFETY: pure C function of its arguments.
                let c = unsafe {
                    (h.balance_interval)(
                        i.balance_interval_ms,
                        i.busy_factor,
                        i.cpu_busy as i32,
                        i.max_interval_jiffies,
                        i.busy_dec,
                    )
                };
                Some((c, sd_balance_interval_jiffies(i), format!("{i:?}")))
            },
        );
    }
}

#[test]
fn sis_scan_cost_matches_rfc_01() {
    differential("sis_update_cost", &mut Rng(0x5eed_0006), N, |rng| {
        let cost = rng.pick(1 << 12);
        let time = rng.pick(1 << 16);
        // loops is an int in the RFC, at least 1, at most the LLC size.
        let loops = (rng.pick(64) % 8192) as u32 + 1;
        // SAFETY: pure C function of its arguments.
        let c = unsafe { ref_sis_update_cost(cost, time, loops as i32) };
        Some((
            c,
            sis_cost::update_avg_scan_cost(cost, time, loops),
            format!("cost={cost} time={time} loops={loops}"),
        ))
    });
}

#[test]
fn sis_age_matches_rfc_02() {
    differential("sis_age", &mut Rng(0x5eed_0007), N, |rng| {
        let avg = rng.pick(1 << 24);
        // The RFC's `stamp < now` only means "elapsed" without wrap-around
        // (the Rust also handles the wrap, tested in sis_age.rs).
        let stamp = rng.next() >> 2;
        let now = stamp + rng.pick(80) % 200;
        let (mut ca, mut cs) = (avg, stamp);
        // SAFETY: the pointers are to locals, valid for the call.
        unsafe { ref_sis_age(&mut ca, &mut cs, now) };
        Some((
            (ca, cs),
            sis_age::age_wake_avg(avg, stamp, now),
            format!("avg={avg} stamp={stamp} now={now}"),
        ))
    });
}

#[test]
fn sis_prop_budget_matches_rfc_06() {
    differential("sis_prop_nr", &mut Rng(0x5eed_0008), N, |rng| {
        let w = (rng.pick(64) % 8192) as u32 + 1;
        let idle = rng.pick(1 << 20);
        let cost = rng.pick(1 << 12);
        // Where the C's u64 arithmetic and its int result do not overflow
        // (the Rust saturates instead; sis_budget.rs tests that).
        let span_avg = u64::from(w).checked_mul(idle)?;
        cost.checked_add(1)?.checked_mul(2)?;
        if span_avg / (cost + 1) > i32::MAX as u64 {
            return None;
        }
        // SAFETY: pure C function of its arguments.
        let c = unsafe { ref_sis_prop_nr(w, idle, cost) } as u32;
        Some((
            c,
            sis_budget::sis_prop_cores(w, idle, cost),
            format!("w={w} idle={idle} cost={cost}"),
        ))
    });
}
