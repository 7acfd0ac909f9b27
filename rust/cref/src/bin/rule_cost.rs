// SPDX-License-Identifier: GPL-2.0

//! Instruction cost of each Rust rule against the Linux 6.12 C it replaces
//! (issue 6, hook overhead), run under callgrind by `scripts/bench.sh`.
//!
//! `rule_cost RULE MODE ITERS` calls one rule ITERS times on inputs from a
//! fixed generator. MODE `rust` calls the `rust/policy` function, `c` the
//! C reference (built by `build.rs` from the 6.12 tree), `none` only
//! generates the inputs. Both rules are called through a function pointer
//! hidden behind `black_box()`, as the kernel reaches the Rust rule through
//! the ops table, so neither is inlined into the loop. Instructions per call are
//! `(Ir(MODE) - Ir(none)) / ITERS`: everything else (startup, the
//! generator) is the same in every mode and cancels. Instruction counts
//! are deterministic, unlike time on this shared 2-core machine.

use std::hint::black_box;
use std::process::ExitCode;

use sched_lb_cref as cref;
use sched_lb_policy::balance_interval::{self, IntervalInput};
use sched_lb_policy::idle_cpus::{self, IdleCpusFlags};
use sched_lb_policy::newidle_walk::{self, WalkStep};
use sched_lb_policy::{avg_load, detach_load, jiffies, sis_budget, sis_cost};

/// splitmix64: the same inputs in every mode and on every machine.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Rust,
    C,
    None,
}

/// The rules, with the HZ=250 references for the two HZ-dependent ones
/// (the test kernel's CONFIG_HZ).
const RULES: [&str; 8] = [
    "idle_cpus",
    "detach_skip",
    "avg_load",
    "newidle_stop",
    "sis_update_cost",
    "sis_prop",
    "msecs_to_jiffies",
    "balance_interval",
];

/// Runs `iters` calls; returns a checksum so nothing is optimised away.
fn run(rule: &str, mode: Mode, iters: u64) -> Option<u64> {
    let mut rng = Rng(0x5eed);
    let mut sum = 0u64;
    macro_rules! go {
        ($gen:expr, $rust:expr, $c:expr) => {{
            // Function pointers, so neither body is inlined into the loop
            // (a closure's type would let the compiler see through it).
            let rust_fn = black_box(($rust) as fn(_) -> u64);
            let c_fn = black_box(($c) as fn(_) -> u64);
            for _ in 0..iters {
                let args = $gen(&mut rng);
                let r: u64 = match mode {
                    Mode::Rust => rust_fn(black_box(args)),
                    Mode::C => c_fn(black_box(args)),
                    Mode::None => black_box(args).0 as u64,
                };
                sum = sum.wrapping_add(r);
            }
        }};
    }
    match rule {
        "idle_cpus" => go!(
            |r: &mut Rng| (
                (r.next() % 8) as u32,
                (r.next() % 8) as u32,
                2 + (r.next() % 3) as u32
            ),
            |(l, b, s): (u32, u32, u32)| u64::from(idle_cpus::is_balanced(
                l,
                b,
                s,
                IdleCpusFlags {
                    balance_idle_cpus: true,
                    balance_idle_llc2: false
                }
            )),
            // SAFETY: a pure C function of its arguments.
            |(l, b, s): (u32, u32, u32)| u64::from(unsafe {
                cref::ref_idle_cpus_balanced(l, b, s as i32, true, false)
            })
        ),
        "detach_skip" => go!(
            |r: &mut Rng| (
                r.next() >> 40,
                (r.next() >> 41) as i64,
                (r.next() % 8) as u32
            ),
            |(l, i, f): (u64, i64, u32)| u64::from(detach_load::should_skip(l, i, f, 1, true)),
            // SAFETY: as above.
            |(l, i, f): (u64, i64, u32)| u64::from(unsafe {
                cref::ref_detach_skip(l, i, f, 1, true)
            })
        ),
        "avg_load" => go!(
            |r: &mut Rng| (r.next() >> 40, r.next() >> 40, 117u32),
            |(b, l, p): (u64, u64, u32)| u64::from(avg_load::avg_load_balanced(b, l, p)),
            // SAFETY: as above.
            |(b, l, p): (u64, u64, u32)| u64::from(unsafe { cref::ref_avg_load_balanced(b, l, p) })
        ),
        "newidle_stop" => go!(
            |r: &mut Rng| (r.next() >> 44, r.next() >> 46, r.next() >> 46),
            |(a, c, m): (u64, u64, u64)| u64::from(newidle_walk::stop_at_domain(WalkStep {
                avg_idle_ns: a,
                curr_cost_ns: c,
                max_newidle_lb_cost_ns: m,
                migration_cost_ns: 0,
                consecutive_failures: 0,
                newidle_backoff: false,
                sd_migration_cost: false,
            })),
            // SAFETY: as above.
            |(a, c, m): (u64, u64, u64)| u64::from(unsafe { cref::ref_newidle_stop(a, c, m) })
        ),
        "sis_update_cost" => go!(
            |r: &mut Rng| (r.next() >> 48, r.next() >> 44, 1 + (r.next() % 16) as u32),
            |(a, t, l): (u64, u64, u32)| sis_cost::update_avg_scan_cost(a, t, l),
            // SAFETY: as above.
            |(a, t, l): (u64, u64, u32)| unsafe { cref::ref_sis_update_cost(a, t, l as i32) }
        ),
        "sis_prop" => go!(
            |r: &mut Rng| (
                8 + (r.next() % 56) as u32,
                r.next() >> 44,
                1 + (r.next() >> 52)
            ),
            |(w, i, c): (u32, u64, u64)| u64::from(sis_budget::sis_prop_cores(w, i, c)),
            // SAFETY: as above.
            |(w, i, c): (u32, u64, u64)| unsafe { cref::ref_sis_prop_nr(w, i, c) } as u64
        ),
        "msecs_to_jiffies" => go!(
            |r: &mut Rng| ((r.next() % 100_000) as u32, 0u32, 0u32),
            |(m, _, _): (u32, u32, u32)| jiffies::msecs_to_jiffies(m, 250),
            // SAFETY: as above.
            |(m, _, _): (u32, u32, u32)| unsafe { cref::ref_msecs_to_jiffies_hz250(m) }
        ),
        "balance_interval" => go!(
            |r: &mut Rng| (1 + (r.next() % 256) as u32, 16u32, (r.next() & 1) as u32),
            |(b, f, busy): (u32, u32, u32)| balance_interval::sd_balance_interval_jiffies(
                IntervalInput {
                    balance_interval_ms: b,
                    busy_factor: f,
                    cpu_busy: busy != 0,
                    max_interval_jiffies: 25,
                    hz: 250,
                    busy_dec: true,
                }
            ),
            // SAFETY: as above.
            |(b, f, busy): (u32, u32, u32)| unsafe {
                cref::ref_balance_interval_hz250(b, f, busy as i32, 25, true)
            }
        ),
        _ => return None,
    }
    Some(sum)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let usage = || {
        eprintln!(
            "usage: rule_cost RULE rust|c|none ITERS\nrules: {}",
            RULES.join(" ")
        );
        ExitCode::from(2)
    };
    let [_, rule, mode, iters] = args.as_slice() else {
        return usage();
    };
    let mode = match mode.as_str() {
        "rust" => Mode::Rust,
        "c" => Mode::C,
        "none" => Mode::None,
        _ => return usage(),
    };
    let Ok(iters) = iters.parse::<u64>() else {
        return usage();
    };
    match run(rule, mode, iters) {
        Some(sum) => {
            println!(
                "{rule} {} {iters} checksum {sum}",
                ["rust", "c", "none"][mode as usize]
            );
            ExitCode::SUCCESS
        }
        None => usage(),
    }
}
