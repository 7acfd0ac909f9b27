// SPDX-License-Identifier: GPL-2.0

//! Instruction cost of each Rust rule against the Linux 6.12 C it replaces
//! (issues 6 and 16), run under callgrind by `scripts/rule-cost.sh` (for
//! `scripts/bench.sh` and `tests/scripts.sh`).
//!
//! `rule_cost RULE MODE ITERS` calls one rule ITERS times on inputs from a
//! fixed generator. MODE `rust` calls the `rust/policy` function, `c` the
//! C reference (built by `build.rs` from the 6.12 tree, with the kernel's
//! compiler and `-O2`), `none` only generates the inputs. Instructions per
//! call are `(Ir(MODE) - Ir(none)) / ITERS`: everything else (startup, the
//! generator) is the same in every mode and cancels. Instruction counts
//! are deterministic, unlike time on this shared 2-core machine.
//!
//! Both sides are reached the same way, so that only the rule differs:
//! the loop calls a shim through one function pointer hidden behind
//! `black_box()` (as the kernel reaches the Rust rule through the ops
//! table), picked before the loop so that the loop is the same code in
//! both modes; the shim unpacks the inputs and calls the rule, again
//! through a pointer behind `black_box()`. The C reference lives in
//! another object file and cannot be inlined into its shim; the pointer
//! keeps the Rust rule from being inlined into its shim either. The two
//! HZ-dependent rules are the constant-HZ forms at HZ=250, the test
//! kernel's CONFIG_HZ, as the module calls them with `bindings::CONFIG_HZ`,
//! against the C compiled for that HZ.
//!
//! `scripts/rule-cost.sh --check` fails where a rule takes more than its
//! C, but for the rules `rust/cref/rule-cost-exceptions.txt` explains.
//!
//! The chains (`sis_select`, `sis_account`, `steal`) have no C counterpart
//! in `rust/cref` (6.12 has neither the RFC's `select_idle_cpu()` nor
//! STEAL): `rule_cost --list` says so, and they are measured alone.
//!
//! Build it with the profiles `kernel-o2` and `kernel-o2-ovf` (the
//! workspace `Cargo.toml`): the kernel's Rust codegen, overflow checks off
//! and on.

use std::hint::black_box;
use std::process::ExitCode;

use sched_lb_cref as cref;
use sched_lb_policy::balance_interval;
use sched_lb_policy::idle_cpus::{self, IdleCpusFlags};
use sched_lb_policy::newidle_walk::{self, WalkStep};
use sched_lb_policy::sis_chain::{
    self, Accounted, LlcView, SisAnswer, SisFlags, SisInput, SmtView, WakeAvg,
};
use sched_lb_policy::sis_select::IdleView;
use sched_lb_policy::steal::StealOutcome;
use sched_lb_policy::steal_chain::{self, StealAnswer, StealArgs};
use sched_lb_policy::{avg_load, detach_load, jiffies, sis_budget, sis_cost, sparsemask};

/// The test kernel's CONFIG_HZ: the C side calls the HZ=250 references.
const HZ: u32 = 250;

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

/// The rules and whether `rust/cref` has their C.
const RULES: [(&str, bool); 11] = [
    ("idle_cpus", true),
    ("detach_skip", true),
    ("avg_load", true),
    ("newidle_stop", true),
    ("sis_update_cost", true),
    ("sis_prop", true),
    ("msecs_to_jiffies", true),
    ("balance_interval", true),
    ("sis_select", false),
    ("sis_account", false),
    ("steal", false),
];

/// `f` as the optimiser cannot see it, so a shim calls its rule instead
/// of inlining it, as it must call the C in another object file.
fn opaque<F>(f: F) -> F {
    black_box(f)
}

/// An LLC of 16 CPUs, 8 cores of 2 threads, its idle CPUs a bitmap.
struct Llc16 {
    idle: u64,
}

const LLC16_CPUS: [u64; 1] = [0xffff];
const LLC16_CORES: [u64; 1] = [0x5555];
/// Each CPU's core: `0b11 << (cpu & !1)`.
const LLC16_SIBLINGS: [[u64; 1]; 16] = {
    let mut s = [[0u64; 1]; 16];
    let mut c = 0;
    while c < 16 {
        s[c] = [0b11 << (c & !1)];
        c += 1;
    }
    s
};

impl IdleView for Llc16 {
    fn idle(&self, cpu: u32) -> bool {
        (self.idle >> (cpu % 64)) & 1 != 0
    }
    fn allowed(&self, _cpu: u32) -> bool {
        true
    }
}

impl LlcView for Llc16 {
    type Mask = [u64];
    type Smt<'v> = &'v Llc16;
    fn cpus(&self) -> &[u64] {
        &LLC16_CPUS
    }
    fn cores(&self) -> &[u64] {
        &LLC16_CORES
    }
    fn smt(&self) -> Option<&Llc16> {
        Some(self)
    }
}

impl SmtView for &Llc16 {
    type Mask = [u64];
    fn siblings(&mut self, core: u32) -> &[u64] {
        &LLC16_SIBLINGS[(core % 16) as usize]
    }
}

/// STEAL's answer for each victim: every third one yields a task.
fn steal_every_third(cpu: u32) -> StealOutcome {
    if cpu.is_multiple_of(3) {
        StealOutcome::Stolen
    } else {
        StealOutcome::NotStolen
    }
}

/// Runs `iters` calls; returns a checksum so nothing is optimised away,
/// or `None` for an unknown rule or a C that does not exist.
fn run(rule: &str, mode: Mode, iters: u64) -> Option<u64> {
    let mut rng = Rng(0x5eed);
    let mut sum = 0u64;
    macro_rules! go {
        ($gen:expr, $rust:expr, $c:expr) => {{
            // Function pointers, so neither shim is inlined into the loop
            // (a closure's type would let the compiler see through it).
            let rust_fn = ($rust) as fn(_) -> u64;
            let c_fn: Option<fn(_) -> u64> = $c;
            let f = match mode {
                Mode::C => black_box(c_fn?),
                _ => black_box(rust_fn),
            };
            for _ in 0..iters {
                let args = $gen(&mut rng);
                let r: u64 = if mode == Mode::None {
                    black_box(args).0 as u64
                } else {
                    f(black_box(args))
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
            |(l, b, s): (u32, u32, u32)| u64::from(opaque(
                idle_cpus::is_balanced as fn(_, _, _, _) -> _
            )(l, b, s, IdleCpusFlags::DEFAULT)),
            // SAFETY: a pure C function of its arguments.
            Some(|(l, b, s): (u32, u32, u32)| u64::from(unsafe {
                opaque(cref::ref_idle_cpus_balanced as unsafe extern "C" fn(_, _, _, _, _) -> _)(
                    l, b, s as i32, true, false,
                )
            }))
        ),
        "detach_skip" => go!(
            |r: &mut Rng| (
                r.next() >> 40,
                (r.next() >> 41) as i64,
                (r.next() % 8) as u32
            ),
            |(l, i, f): (u64, i64, u32)| u64::from(opaque(
                detach_load::should_skip as fn(_, _, _, _, _) -> _
            )(l, i, f, 1u32, true)),
            // SAFETY: as above.
            Some(|(l, i, f): (u64, i64, u32)| u64::from(unsafe {
                opaque(cref::ref_detach_skip as unsafe extern "C" fn(_, _, _, _, _) -> _)(
                    l, i, f, 1u32, true,
                )
            }))
        ),
        // What the hook runs, `balanced()` with the imbalance_pct choice, at
        // the default flags (LB_REDUCED_IMBALANCE_PCT on, so 117 stays
        // 117 and the answer is the C's).
        "avg_load" => go!(
            |r: &mut Rng| (r.next() >> 40, r.next() >> 40, 117u32),
            |(b, l, p): (u64, u64, u32)| u64::from(opaque(avg_load::balanced as fn(_) -> _)(
                avg_load::AvgLoadInput {
                    busiest_avg_load: b,
                    local_avg_load: l,
                    imbalance_pct: p,
                    above_llc: true,
                    reduced: true,
                }
            )),
            // SAFETY: as above.
            Some(|(b, l, p): (u64, u64, u32)| u64::from(unsafe {
                opaque(cref::ref_avg_load_balanced as unsafe extern "C" fn(_, _, _) -> _)(b, l, p)
            }))
        ),
        "newidle_stop" => go!(
            |r: &mut Rng| (r.next() >> 44, r.next() >> 46, r.next() >> 46),
            |(a, c, m): (u64, u64, u64)| u64::from(opaque(
                newidle_walk::stop_at_domain as fn(_) -> _
            )(WalkStep {
                avg_idle_ns: a,
                curr_cost_ns: c,
                max_newidle_lb_cost_ns: m,
                migration_cost_ns: 0,
                consecutive_failures: 0,
                newidle_backoff: false,
                sd_migration_cost: false,
            })),
            // SAFETY: as above.
            Some(|(a, c, m): (u64, u64, u64)| u64::from(unsafe {
                opaque(cref::ref_newidle_stop as unsafe extern "C" fn(_, _, _) -> _)(a, c, m)
            }))
        ),
        "sis_update_cost" => go!(
            |r: &mut Rng| (r.next() >> 48, r.next() >> 44, 1 + (r.next() % 16) as u32),
            |(a, t, l): (u64, u64, u32)| opaque(sis_cost::update_avg_scan_cost as fn(_, _, _) -> _)(
                a, t, l
            ),
            // SAFETY: as above.
            Some(|(a, t, l): (u64, u64, u32)| unsafe {
                opaque(cref::ref_sis_update_cost as unsafe extern "C" fn(_, _, _) -> _)(
                    a, t, l as i32,
                )
            })
        ),
        "sis_prop" => go!(
            |r: &mut Rng| (
                8 + (r.next() % 56) as u32,
                r.next() >> 44,
                1 + (r.next() >> 52)
            ),
            |(w, i, c): (u32, u64, u64)| u64::from(opaque(
                sis_budget::sis_prop_cores as fn(_, _, _) -> _
            )(w, i, c)),
            // SAFETY: as above.
            Some(|(w, i, c): (u32, u64, u64)| unsafe {
                opaque(cref::ref_sis_prop_nr as unsafe extern "C" fn(_, _, _) -> _)(w, i, c)
            } as u64)
        ),
        "msecs_to_jiffies" => go!(
            |r: &mut Rng| ((r.next() % 100_000) as u32, 0u32, 0u32),
            |(m, _, _): (u32, u32, u32)| opaque(jiffies::msecs_to_jiffies_hz::<HZ> as fn(_) -> _)(
                m
            ),
            // SAFETY: as above.
            Some(|(m, _, _): (u32, u32, u32)| unsafe {
                opaque(cref::ref_msecs_to_jiffies_hz250 as unsafe extern "C" fn(_) -> _)(m)
            })
        ),
        "balance_interval" => {
            go!(
                |r: &mut Rng| (1 + (r.next() % 256) as u32, 16u32, (r.next() & 1) as u32),
                |(b, f, busy): (u32, u32, u32)| opaque(
                    balance_interval::sd_balance_interval_jiffies_hz::<HZ>
                        as fn(_, _, _, _, _) -> _
                )(b, f, busy != 0, 25u64, true),
                // SAFETY: as above.
                Some(|(b, f, busy): (u32, u32, u32)| unsafe {
                    opaque(
                        cref::ref_balance_interval_hz250
                            as unsafe extern "C" fn(_, _, _, _, _) -> _,
                    )(b, f, busy as i32, 25u64, true)
                })
            )
        }
        // One wakeup's scan of a 16-CPU SMT2 LLC, the flags, the idle
        // CPUs and the statistics drawn anew for each call (by the
        // generator, which every mode runs: the shim only packs them).
        "sis_select" => go!(
            |r: &mut Rng| {
                let (a, b) = (r.next(), r.next());
                (
                    a & 0xffff,
                    SisFlags {
                        prop: a & 1 << 16 != 0,
                        util: a & 1 << 17 != 0,
                        age: a & 1 << 18 != 0,
                        once: a & 1 << 19 != 0,
                        fold: a & 1 << 20 != 0,
                    },
                    WakeAvg {
                        avg_ns: (b >> 40) * 64,
                        stamp_jiffies: 1000 + (a >> 24) % 8,
                    },
                    b >> 44,
                    (b >> 8) & 0xffff,
                    ((a >> 32) % 18) as u32,
                    a & 1 << 21 != 0,
                    ((a >> 40) % 16) as u32,
                )
            },
            |(idle, flags, wake, avg_idle_ns, cost_ns, util_nr, hint, target): (
                u64,
                SisFlags,
                WakeAvg,
                u64,
                u64,
                u32,
                bool,
                u32
            )| {
                let i = SisInput {
                    flags,
                    wake,
                    now_jiffies: 1004,
                    avg_idle_ns,
                    avg_scan_cost_ns: cost_ns,
                    span_weight: 16,
                    util_nr,
                    smt_weight: 2,
                    has_idle_core: hint,
                    target,
                    nbits: 16,
                };
                let a: SisAnswer =
                    opaque(sis_chain::select::<Llc16> as fn(&_, &_) -> _)(&Llc16 { idle }, &i);
                a.scan.cpu.map_or(99, u64::from)
                    ^ u64::from(a.scan.loops) << 8
                    ^ a.wake.avg_ns << 16
            },
            None
        ),
        "sis_account" => go!(
            |r: &mut Rng| (r.next() >> 48, r.next() >> 40, r.next()),
            |(cost, wake, x): (u64, u64, u64)| {
                let a: Accounted = opaque(sis_chain::account as fn(_, _, _, _, _) -> _)(
                    cost,
                    wake,
                    x >> 48,
                    ((x >> 8) % 17) as u32,
                    x & 1 != 0,
                );
                a.avg_scan_cost_ns ^ a.wake_avg_ns
            },
            None
        ),
        // One CPU of a 16-CPU SMT2 LLC going idle, 8 CPUs a sparsemask
        // line, some of the others overloaded.
        "steal" => go!(
            |r: &mut Rng| {
                let (a, b) = (r.next(), r.next());
                let mut over = [0u64; 16];
                for e in 0..16 {
                    if (a >> e) & 1 != 0 {
                        let (w, bit) = sparsemask::locate(e, 8);
                        over[w as usize] |= 1 << bit;
                    }
                }
                (b, over)
            },
            |(b, over): (u64, [u64; 16])| {
                let this = (b % 16) as u32;
                let args = StealArgs {
                    enabled: true,
                    numa_nodes: 1,
                    nr_runnable: ((b >> 8) % 4 == 0) as u32,
                    avg_idle_ns: (b >> 16) & 0xffff,
                    avg_steal_cost_ns: 10_000,
                    this_cpu: this,
                    bits_per_line: 8,
                    overloaded_base: 0,
                };
                let s: StealAnswer = opaque(
                    steal_chain::steal::<[u64], [u64], [u64], fn(u32) -> StealOutcome>
                        as fn(&_, &_, &_, &_, _) -> _,
                )(
                    &args,
                    &over[..],
                    &LLC16_CPUS[..],
                    &LLC16_SIBLINGS[this as usize][..],
                    steal_every_third as fn(u32) -> StealOutcome,
                );
                s.from.map_or(99, u64::from) ^ u64::from(s.attempts) << 8
            },
            None
        ),
        _ => return None,
    }
    Some(sum)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let usage = || {
        eprintln!(
            "usage: rule_cost RULE rust|c|none ITERS\n       rule_cost --list   (RULE and c, or - where rust/cref has no C)\n       rule_cost --cc     (the C references' compiler and flags)\nrules: {}",
            RULES.map(|(r, _)| r).join(" ")
        );
        ExitCode::from(2)
    };
    match args.as_slice() {
        [_, o] if o == "--list" => {
            for (r, c) in RULES {
                println!("{r} {}", if c { "c" } else { "-" });
            }
            return ExitCode::SUCCESS;
        }
        [_, o] if o == "--cc" => {
            println!("{}, {}", cref::C_COMPILER, cref::C_FLAGS);
            return ExitCode::SUCCESS;
        }
        _ => {}
    }
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
    if mode == Mode::C && RULES.contains(&(rule.as_str(), false)) {
        eprintln!("rule_cost: {rule} has no C counterpart in rust/cref: measure it alone");
        return ExitCode::from(2);
    }
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
