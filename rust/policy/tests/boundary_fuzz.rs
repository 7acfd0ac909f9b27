// SPDX-License-Identifier: GPL-2.0

//! Fuzzes the boundary between the kernel's argument structs and the rules.
//!
//! Each of the nine hooks of `struct sched_lb_ops` is driven here through
//! the function its callback in `rust/hooks.rs` calls (the callback itself
//! only copies fields in and out), with random and edge-biased inputs:
//! every value a `u32`/`u64` field can hold, weighted toward 0, 1, the
//! maxima and powers of two, and random machines for the scans. Each
//! answer is checked against what the kernel accepts, the
//! `sched_lb_reject()` sites of the series (every checked hook), so a
//! rule that the kernel would refuse fails here first:
//!
//! - `balance_interval`: in `[1, max_interval_jiffies]`;
//! - `newidle_account`: one failure more at most, the stamp left or moved
//!   forward to now at most;
//! - `sis_select`: idle state asked only of CPUs of the LLC, the CPU in
//!   the scan mask, at most `span_weight + 1` loops, `wake_avg` not risen
//!   and its stamp forward only;
//! - `sis_account`: the average scan cost between the old one and this
//!   scan's cost per loop, `wake_avg` not risen;
//! - `steal`: only other CPUs of the LLC asked, at most `llc_weight - 1`
//!   of them, each once, and the reported CPU and attempts what happened;
//! - the four bool hooks: any answer is a stock one, so only "no panic".
//!
//! A panic is a failure too: the tests build with overflow checks, as the
//! kernel does (`CONFIG_RUST_OVERFLOW_CHECKS=y`). `cargo test` runs 20 000
//! inputs per hook; `make fuzz` runs 10^7 (`SLB_FUZZ_ITERS`) in the `fuzz`
//! profile (release speed, overflow checks on) and prints the counts.

use std::cell::{Cell, RefCell};

use sched_lb_policy::avg_load;
use sched_lb_policy::balance_interval::{sd_balance_interval_jiffies, IntervalInput};
use sched_lb_policy::detach_load::should_skip;
use sched_lb_policy::idle_cpus::{is_balanced, IdleCpusFlags};
use sched_lb_policy::newidle_streak::{account as streak_account, Streak};
use sched_lb_policy::newidle_walk::{stop_at_domain, WalkStep};
use sched_lb_policy::sis_chain::{self, LlcView, SisFlags, SisInput, SmtView, WakeAvg};
use sched_lb_policy::sis_select::IdleView;
use sched_lb_policy::sparsemask;
use sched_lb_policy::steal::StealOutcome;
use sched_lb_policy::steal_chain::{self, StealArgs};

/// xorshift64*: seeded, so a failure names the input that made it.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    fn bool(&mut self) -> bool {
        self.next() & 1 != 0
    }

    /// A `u64` biased toward the values where arithmetic breaks.
    fn u64e(&mut self) -> u64 {
        let k = self.below(64) as u32;
        match self.below(10) {
            0 => 0,
            1 => 1,
            2 => u64::MAX,
            3 => u64::MAX - self.below(4),
            4 => 1u64 << k,
            5 => (1u64 << k).wrapping_sub(1),
            6 => (1u64 << k).wrapping_add(1),
            7 => self.below(2000),
            8 => i64::MAX as u64 + self.below(3) - 1,
            _ => self.next(),
        }
    }

    /// A `u32` biased the same way.
    fn u32e(&mut self) -> u32 {
        let v = self.u64e();
        match self.below(4) {
            0 => v as u32,
            1 => u32::MAX - (v % 4) as u32,
            _ => (v % (1 << 20)) as u32,
        }
    }

    /// A time near `base`: same, a little before or after, or anywhere.
    fn near(&mut self, base: u64) -> u64 {
        match self.below(4) {
            0 => base,
            1 => base.wrapping_add(self.below(100)),
            2 => base.wrapping_sub(self.below(100)),
            _ => self.u64e(),
        }
    }
}

fn iters() -> u64 {
    std::env::var("SLB_FUZZ_ITERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20_000)
}

fn seed() -> u64 {
    std::env::var("SLB_FUZZ_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x5eed_1b5c_4ed0_0001)
        | 1
}

/// Runs `one` `iters()` times with a fresh stream per hook.
fn fuzz(hook: &str, mut one: impl FnMut(&mut Rng)) {
    let n = iters();
    let mut rng = Rng(seed()
        ^ hook
            .bytes()
            .fold(0u64, |h, b| h.rotate_left(5) ^ u64::from(b))
        | 1);
    for _ in 0..n {
        one(&mut rng);
    }
    println!("boundary fuzz: {hook}: {n} inputs, 0 panics, 0 answers the kernel refuses");
}

/// `sched_lb_stamp_bad()`: a new stamp other than the old one that is
/// before it or after now (`time_before64`/`time_after64`).
fn stamp_bad(t: u64, old: u64, now: u64) -> bool {
    t != old && ((t.wrapping_sub(old) as i64) < 0 || (now.wrapping_sub(t) as i64) < 0)
}

fn bit(words: &[u64], c: u32) -> bool {
    words
        .get((c / 64) as usize)
        .is_some_and(|w| w >> (c % 64) & 1 != 0)
}

fn set(words: &mut [u64], c: u32) {
    words[(c / 64) as usize] |= 1 << (c % 64);
}

#[test]
fn bool_hooks() {
    fuzz("idle_cpus_balanced", |r| {
        let flags = IdleCpusFlags {
            balance_idle_cpus: r.bool(),
            balance_idle_llc2: r.bool(),
        };
        let _ = is_balanced(r.u32e(), r.u32e(), r.u32e(), flags);
    });
    fuzz("detach_skip", |r| {
        let _ = should_skip(r.u64e(), r.u64e() as i64, r.u32e(), r.u32e(), r.bool());
    });
    fuzz("avg_load_balanced", |r| {
        let _ = avg_load::balanced(avg_load::AvgLoadInput {
            busiest_avg_load: r.u64e(),
            local_avg_load: r.u64e(),
            imbalance_pct: r.u32e(),
            above_llc: r.bool(),
            reduced: r.bool(),
        });
    });
    fuzz("newidle_stop", |r| {
        let _ = stop_at_domain(WalkStep {
            avg_idle_ns: r.u64e(),
            curr_cost_ns: r.u64e(),
            max_newidle_lb_cost_ns: r.u64e(),
            migration_cost_ns: r.u64e(),
            consecutive_failures: r.u32e(),
            newidle_backoff: r.bool(),
            sd_migration_cost: r.bool(),
        });
    });
}

#[test]
fn balance_interval() {
    fuzz("balance_interval", |r| {
        let i = IntervalInput {
            balance_interval_ms: r.u32e(),
            busy_factor: r.u32e(),
            cpu_busy: r.bool(),
            max_interval_jiffies: r.u64e(),
            hz: r.u32e(),
            busy_dec: r.bool(),
        };
        let j = sd_balance_interval_jiffies(i);
        // HZ * nr_online / 10 is at least 1 on any kernel; with 0 the stock
        // clamp gives 0 too.
        if i.max_interval_jiffies >= 1 {
            assert!(
                (1..=i.max_interval_jiffies).contains(&j),
                "{i:?} -> {j} jiffies"
            );
        }
    });
}

#[test]
fn newidle_account() {
    fuzz("newidle_account", |r| {
        let old = Streak {
            failures: r.u32e(),
            stamp_jiffies: r.u64e(),
        };
        let now = r.near(old.stamp_jiffies);
        let new = streak_account(old, now, r.u32e(), r.bool());
        assert!(
            new.failures <= old.failures || new.failures - old.failures <= 1,
            "{old:?} at {now} -> {new:?}"
        );
        assert!(
            !stamp_bad(new.stamp_jiffies, old.stamp_jiffies, now),
            "{old:?} at {now} -> {new:?}"
        );
    });
}

/// A random LLC inside a bigger machine: its span (which may split cores,
/// as a cpuset partition does), the task's affinity, cores of `smt`
/// threads (the first of each within the span), idle CPUs.
struct Machine {
    span: Vec<u64>,
    cpus: Vec<u64>,
    cores: Vec<u64>,
    sib: Vec<Vec<u64>>,
    idle: Vec<bool>,
    span_weight: u32,
    smt_weight: u32,
    bad_asks: Cell<u32>,
}

impl Machine {
    fn random(r: &mut Rng) -> Machine {
        let smt = 1 + r.below(4) as u32;
        let nbits = smt * (1 + r.below(64) as u32);
        let nwords = nbits.div_ceil(64) as usize;
        let (mut span, mut cpus, mut cores) = (vec![0; nwords], vec![0; nwords], vec![0; nwords]);
        let mut sib = Vec::new();
        let mut idle = Vec::new();
        let dense = r.below(4);
        let (mut span_weight, mut smt_weight) = (0, 1);
        for core in 0..nbits / smt {
            let first = core * smt;
            let mut m = vec![0; nwords];
            let mut in_span = 0;
            let mut first_in = None;
            for c in first..first + smt {
                set(&mut m, c);
                if dense > 0 || r.bool() {
                    set(&mut span, c);
                    span_weight += 1;
                    in_span += 1;
                    first_in.get_or_insert(c);
                    if r.below(4) > 0 {
                        set(&mut cpus, c);
                    }
                }
            }
            if let Some(c) = first_in {
                set(&mut cores, c);
            }
            smt_weight = smt_weight.max(in_span);
            // The kernel's smt_mask() answers with the siblings within
            // the LLC (a cpuset partition can split a core).
            for w in 0..nwords {
                m[w] &= span[w];
            }
            for _ in 0..smt {
                sib.push(m.clone());
                idle.push(r.bool());
            }
        }
        Machine {
            span,
            cpus,
            cores,
            sib,
            idle,
            span_weight,
            smt_weight,
            bad_asks: Cell::new(0),
        }
    }
}

impl IdleView for Machine {
    fn idle(&self, cpu: u32) -> bool {
        // The shim refuses a CPU outside the LLC (and counts it).
        if !bit(&self.span, cpu) {
            self.bad_asks.set(self.bad_asks.get() + 1);
            return false;
        }
        self.idle[cpu as usize]
    }

    fn allowed(&self, cpu: u32) -> bool {
        bit(&self.cpus, cpu)
    }
}

impl LlcView for Machine {
    type Mask = [u64];
    type Smt<'v> = &'v Machine;

    fn cpus(&self) -> &[u64] {
        &self.cpus
    }

    fn cores(&self) -> &[u64] {
        &self.cores
    }

    fn smt(&self) -> Option<&Machine> {
        Some(self)
    }
}

impl SmtView for &Machine {
    type Mask = [u64];

    fn siblings(&mut self, core: u32) -> &[u64] {
        if !bit(&self.span, core) {
            self.bad_asks.set(self.bad_asks.get() + 1);
            return &[];
        }
        &self.sib[core as usize]
    }
}

#[test]
fn sis_select_and_account() {
    fuzz("sis_select", |r| {
        let m = Machine::random(r);
        if m.span_weight == 0 {
            return;
        }
        let nbits = m.idle.len() as u32;
        // The target is a CPU of the LLC (the wakeup's, or prev's).
        let target = loop {
            let c = r.below(u64::from(nbits)) as u32;
            if bit(&m.span, c) {
                break c;
            }
        };
        let wake = WakeAvg {
            avg_ns: r.u64e(),
            stamp_jiffies: r.u64e(),
        };
        let now = r.near(wake.stamp_jiffies);
        let i = SisInput {
            flags: SisFlags {
                prop: r.bool(),
                util: r.bool(),
                age: r.bool(),
                once: r.bool(),
                fold: r.bool(),
            },
            wake,
            now_jiffies: now,
            avg_idle_ns: r.u64e(),
            avg_scan_cost_ns: r.u64e(),
            span_weight: m.span_weight,
            util_nr: r.u32e() % (m.span_weight + 3),
            smt_weight: m.smt_weight,
            has_idle_core: r.bool(),
            target,
            nbits,
        };
        let a = sis_chain::select(&m, &i);
        assert_eq!(m.bad_asks.get(), 0, "asked outside the LLC: {i:?}");
        if let Some(c) = a.scan.cpu {
            assert!(c < nbits && bit(&m.cpus, c), "{i:?} -> CPU {c}");
        }
        assert!(a.scan.loops <= m.span_weight + 1, "{i:?} -> {a:?}");
        assert!(a.wake.avg_ns <= wake.avg_ns, "{i:?} -> {a:?}");
        assert!(
            !stamp_bad(a.wake.stamp_jiffies, wake.stamp_jiffies, now),
            "{i:?} -> {a:?}"
        );
    });
    fuzz("sis_account", |r| {
        let (cost, wake, time, loops) = (r.u64e(), r.u64e(), r.u64e(), r.u32e());
        let once = r.bool();
        let d = sis_chain::account(cost, wake, time, loops, once);
        let sample = if loops > 0 {
            time / u64::from(loops)
        } else {
            cost
        };
        assert!(
            (cost.min(sample)..=cost.max(sample)).contains(&d.avg_scan_cost_ns),
            "cost {cost} time {time} loops {loops} -> {d:?}"
        );
        assert!(d.wake_avg_ns <= wake, "wake {wake} -> {d:?}");
    });
}

#[test]
fn steal() {
    fuzz("steal", |r| {
        let n = 1 + r.below(128) as u32;
        let base = r.below(256) as u32;
        let per = 1 + r.below(64) as u32;
        let nbits = base + n + r.below(64) as u32;
        let mut llc = vec![0u64; nbits.div_ceil(64) as usize];
        for c in base..base + n {
            set(&mut llc, c);
        }
        // Any bits, stale ones past the LLC's elements included.
        let words: Vec<Cell<u64>> = (0..sparsemask::words_for(n, per))
            .map(|_| Cell::new(if r.below(3) == 0 { 0 } else { r.next() }))
            .collect();
        let this = base + r.below(u64::from(n)) as u32;
        let mut siblings = vec![0u64; llc.len()];
        for c in (this & !1)..=(this | 1) {
            if c < nbits && r.below(4) > 0 {
                set(&mut siblings, c);
            }
        }
        let a = StealArgs {
            enabled: r.bool() || r.bool(),
            numa_nodes: r.u32e() % 4,
            nr_runnable: r.u32e() % 3,
            avg_idle_ns: r.u64e(),
            avg_steal_cost_ns: r.u64e(),
            this_cpu: this,
            bits_per_line: per,
            overloaded_base: base,
        };
        let asked = RefCell::new(Vec::new());
        let answers = r.next();
        let res = steal_chain::steal(&a, &words[..], &llc[..], &siblings[..], |v| {
            let mut asked = asked.borrow_mut();
            let k = asked.len();
            let outcome = match (answers >> (k * 3 % 61)) & 7 {
                0 => StealOutcome::Stolen,
                1 => StealOutcome::Stop,
                _ => StealOutcome::NotStolen,
            };
            // A steal clears the victim's element, as the kernel does, and
            // so may other CPUs at any time.
            if outcome == StealOutcome::Stolen || answers >> (k % 64) & 1 != 0 {
                if let Some(e) = v.checked_sub(base) {
                    let (w, b) = sparsemask::locate(e, per);
                    if let Some(cell) = words.get(w as usize) {
                        cell.set(cell.get() & !(1 << b));
                    }
                }
            }
            asked.push((v, outcome));
            outcome
        });
        let asked = asked.into_inner();
        let mut seen: Vec<u32> = asked.iter().map(|&(v, _)| v).collect();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), asked.len(), "a victim asked twice: {asked:?}");
        for &(v, _) in &asked {
            assert!(
                v != this && bit(&llc, v),
                "asked {v}, not another CPU of the LLC"
            );
        }
        assert!(
            asked.len() < n as usize,
            "{} asks in an LLC of {n}",
            asked.len()
        );
        assert_eq!(res.attempts as usize, asked.len());
        // The reported CPU is the one that gave a task, if the last did.
        let stolen = asked.last().filter(|&&(_, o)| o == StealOutcome::Stolen);
        assert_eq!(res.from, stolen.map(|&(v, _)| v), "{asked:?}");
        if !res.tried {
            assert!(asked.is_empty());
        }
    });
}
