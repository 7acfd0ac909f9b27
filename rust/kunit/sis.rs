// SPDX-License-Identifier: GPL-2.0

//! KUnit suite `sched_lb_rs_sis`: Peter Zijlstra's "[RFC 00/11]
//! select_idle_sibling rework" (2018). Scans run through the callback
//! this module registers, on machines described as data: the idle state
//! reaches the scan through the same `cpu_idle` callback the kernel passes,
//! here answering from a table.

use core::ffi::c_int;

use kernel::bindings;

use super::check;

/// A machine as data: which CPUs are idle.
struct Machine {
    idle: [bool; 8],
}

impl Machine {
    /// CPU `c` is idle if bit `c` of `idle` is set.
    fn from_bits(idle: u8) -> Self {
        let mut m = Machine { idle: [false; 8] };
        for (c, slot) in m.idle.iter_mut().enumerate() {
            *slot = idle & (1 << c) != 0;
        }
        m
    }
}

/// The `cpu_idle` callback of the SIS cases: a CPU's idle state in the
/// case's `Machine`.
///
/// # Safety
///
/// `args` is a case's argument struct whose `ctx` points to its `Machine`,
/// both alive for the scan.
unsafe extern "C" fn table_idle(args: *const bindings::sched_lb_sis_args, cpu: c_int) -> bool {
    // SAFETY: `args` is the case's argument struct, whose `ctx` is the
    // `Machine` the case passed; both outlive the scan.
    let m = unsafe { &*(*args).ctx.cast::<Machine>() };
    usize::try_from(cpu)
        .ok()
        .and_then(|c| m.idle.get(c).copied())
        .unwrap_or(false)
}

/// The kernel's `smt_mask` callback.
type SmtMaskFn = unsafe extern "C" fn(*const bindings::sched_lb_sis_args, c_int) -> *const usize;

/// SMT2 x 4 cores: {0,1} {2,3} {4,5} {6,7}.
static SMT2_SIBLINGS: [[u64; 1]; 8] = [
    [0x03],
    [0x03],
    [0x0c],
    [0x0c],
    [0x30],
    [0x30],
    [0xc0],
    [0xc0],
];

extern "C" fn smt2_mask(_args: *const bindings::sched_lb_sis_args, cpu: c_int) -> *const usize {
    let i = usize::try_from(cpu).unwrap_or(0) % 8;
    SMT2_SIBLINGS[i].as_ptr().cast()
}

/// SMT4 x 2 cores: {0..3} {4..7}.
static SMT4_SIBLINGS: [[u64; 1]; 2] = [[0x0f], [0xf0]];

extern "C" fn smt4_mask(_args: *const bindings::sched_lb_sis_args, cpu: c_int) -> *const usize {
    let i = usize::try_from(cpu).unwrap_or(0) % 8 / 4;
    SMT4_SIBLINGS[i].as_ptr().cast()
}

/// One scan: idle CPUs, allowed CPUs, target, SIS_PROP with its predicted
/// idle time (avg_idle, ns), SIS_UTIL's nr (0: flag off), expected pick,
/// the loops the scan reports (CPUs visited, the one that ran into the
/// budget included; 0 where no scan runs) and the average scan cost the
/// accounting then keeps after 800 ns spent from an average of 0 (a
/// sample of 800 / loops ns, weighted 1/8, as RFC 01's update_avg()).
struct Row {
    what: &'static str,
    idle: u8,
    allowed: u8,
    target: u32,
    prop_avg_idle_ns: Option<u64>,
    util_nr: u32,
    pick: c_int,
    loops: u32,
    avg_scan_cost_ns: u64,
}

#[rustfmt::skip]
static ROWS: [Row; 9] = [
    // Visits 1..6: 800 / 6 = 133 ns a CPU, 133 / 8 = 16.
    Row { what: "unlimited finds the idle CPU", idle: 0x40, allowed: 0xff, target: 0, prop_avg_idle_ns: None, util_nr: 0, pick: 6, loops: 6, avg_scan_cost_ns: 16 },
    // The target itself is idle: a scan that began at the target, not after it, would pick 4.
    // Visits 5, 6, 7, 0.
    Row { what: "starts after the target and wraps", idle: 0x13, allowed: 0xff, target: 4, prop_avg_idle_ns: None, util_nr: 0, pick: 0, loops: 4, avg_scan_cost_ns: 25 },
    // avg_idle under 512 ns predicts 0 (avg_idle / 512): SIS_PROP's floor, 2 cores = 4 CPUs.
    // Visits 1..4, and 5 runs into the budget.
    Row { what: "SIS_PROP floor: 2 cores of SMT2", idle: 0x40, allowed: 0xff, target: 0, prop_avg_idle_ns: Some(0), util_nr: 0, pick: -1, loops: 5, avg_scan_cost_ns: 20 },
    Row { what: "SIS_PROP floor reaches CPU 4", idle: 0x10, allowed: 0xff, target: 0, prop_avg_idle_ns: Some(0), util_nr: 0, pick: 4, loops: 4, avg_scan_cost_ns: 25 },
    // Visits 1..5 and the target 0 last, as for_each_cpu_wrap() does.
    Row { what: "affinity excludes the idle CPUs", idle: 0xc0, allowed: 0x3f, target: 0, prop_avg_idle_ns: None, util_nr: 0, pick: -1, loops: 6, avg_scan_cost_ns: 16 },
    Row { what: "affinity allows one idle CPU", idle: 0xc0, allowed: 0x80, target: 0, prop_avg_idle_ns: None, util_nr: 0, pick: 7, loops: 1, avg_scan_cost_ns: 100 },
    Row { what: "SIS_UTIL overloaded: no scan", idle: 0xff, allowed: 0xff, target: 0, prop_avg_idle_ns: None, util_nr: 1, pick: -1, loops: 0, avg_scan_cost_ns: 0 },
    // Visits 1 and 2, and 3 runs into the budget.
    Row { what: "SIS_UTIL nr 3 scans 2 CPUs", idle: 0x08, allowed: 0xff, target: 0, prop_avg_idle_ns: None, util_nr: 3, pick: -1, loops: 3, avg_scan_cost_ns: 33 },
    Row { what: "SIS_PROP and SIS_UTIL: the smaller wins", idle: 0x04, allowed: 0xff, target: 0, prop_avg_idle_ns: Some(1 << 30), util_nr: 3, pick: 2, loops: 2, avg_scan_cost_ns: 50 },
];

fn args_for(
    r: &Row,
    m: &Machine,
    cpus: &[u64; 1],
    cores: &[u64; 1],
) -> bindings::sched_lb_sis_args {
    // SAFETY: all-zero is a valid argument struct (null pointers, no
    // callbacks, zero counts); the fields used are set below.
    let mut a: bindings::sched_lb_sis_args = unsafe { core::mem::zeroed() };
    a.cpus = cpus.as_ptr().cast();
    a.cores = cores.as_ptr().cast();
    a.smt_mask = Some(smt2_mask);
    a.cpu_idle = Some(table_idle);
    a.ctx = (m as *const Machine).cast_mut().cast();
    a.avg_scan_cost_ns = 0;
    a.avg_idle_ns = r.prop_avg_idle_ns.unwrap_or(0);
    a.nbits = 8;
    a.target = r.target;
    a.span_weight = 8;
    a.smt_weight = 2;
    a.util_nr = r.util_nr;
    a.sis_prop = r.prop_avg_idle_ns.is_some();
    a.sis_util = r.util_nr != 0;
    a
}

pub(super) extern "C" fn scan_rows(_test: *mut bindings::kunit) {
    let ops = crate::hooks::kunit_ops();
    let (Some(select), Some(account)) = (ops.sis_select, ops.sis_account) else {
        check!("sis_scan_rows", false, "sis callbacks not set");
        return;
    };
    for r in ROWS.iter() {
        let m = Machine::from_bits(r.idle);
        let cpus = [u64::from(r.allowed)];
        let cores = [0x55u64];
        let mut a = args_for(r, &m, &cpus, &cores);
        // SAFETY: `a` and everything it points to live across the call.
        let got = unsafe { select(&mut a) };
        check!(
            "sis_scan_rows",
            got == r.pick && a.loops == r.loops,
            "{}: picked {} after {} loops (expected {} after {})",
            r.what,
            got,
            a.loops,
            r.pick,
            r.loops
        );
        // The accounting divides the time spent by the loops reported.
        a.scan_time_ns = 800;
        // SAFETY: as above.
        unsafe { account(&mut a) };
        check!(
            "sis_scan_rows",
            a.avg_scan_cost_ns == r.avg_scan_cost_ns,
            "{}: avg_scan_cost {} after {} loops (expected {})",
            r.what,
            a.avg_scan_cost_ns,
            a.loops,
            r.avg_scan_cost_ns
        );
    }
}

/// SIS_AGE and SIS_ONCE over a sequence of wakeups: a CPU woke from idle
/// with wake_avg 64 us; each jiffy halves it, each scan spends its time,
/// and the budget follows (8-CPU SMT2 LLC, scan cost 1 us per CPU).
pub(super) extern "C" fn age_once_sequence(_test: *mut bindings::kunit) {
    let ops = crate::hooks::kunit_ops();
    let (Some(select), Some(account)) = (ops.sis_select, ops.sis_account) else {
        check!("sis_age_once_sequence", false, "sis callbacks not set");
        return;
    };
    let m = Machine::from_bits(0);
    let cpus = [0xffu64];
    let cores = [0x55u64];
    let mut a = args_for(&ROWS[0], &m, &cpus, &cores);
    a.sis_prop = true;
    a.sis_age = true;
    a.sis_once = true;
    a.wake_avg_ns = 64_000;
    a.wake_stamp = 1000;
    // (now, scan time, wake_avg after the scan, loops): no jiffy passed, 5 us
    // spent: 59 us; two jiffies: 59/4 = 14.75 us, less 5: 9.75 us; same
    // jiffy: 4.75 us; five more jiffies age it to 0. Nothing is idle, so
    // each scan runs to its budget: 8 * wake_avg / 1001 ns cores, at least
    // 2. The first three cover the LLC (8 CPUs visited); aged to 148 ns
    // before the last scan, it gets the floor, 2 cores = 4 CPUs, and the
    // loop that finds the budget spent counts: 5.
    #[rustfmt::skip]
    let steps: [(u64, u64, u64, u32); 4] = [
        (1000, 5000, 59_000, 8),
        (1002, 5000, 9_750, 8),
        (1002, 5000, 4_750, 8),
        (1007, 5000, 0, 5),
    ];
    for (now, time, want, want_loops) in steps {
        a.now_jiffies = now;
        a.avg_scan_cost_ns = 1000;
        // SAFETY: `a` and everything it points to live across the calls.
        let _ = unsafe { select(&mut a) };
        a.scan_time_ns = time;
        // SAFETY: as above.
        unsafe { account(&mut a) };
        check!(
            "sis_age_once_sequence",
            a.wake_avg_ns == want && a.loops == want_loops,
            "at jiffy {}: wake_avg {} after {} loops (expected {} after {})",
            now,
            a.wake_avg_ns,
            a.loops,
            want,
            want_loops
        );
    }
}

/// SIS_FOLD on SMT2 x 4 with an idle core hinted: `(idle CPUs, allowed,
/// target, budget in cores via SIS_UTIL's nr (0: none), pick, whether the
/// answer clears `has_idle_cores`)`. Every row scans cores, so the hint is
/// cleared exactly where no fully idle core was found.
#[rustfmt::skip]
static FOLD_ROWS: [(u8, u8, u32, u32, c_int, bool); 6] = [
    // Core {6,7} fully idle: it wins even though core {2,3} has an idle thread.
    (0xc4, 0xff, 0, 0, 6, false),
    // No idle core: the first idle thread of the core with fewest busy.
    (0x24, 0xff, 0, 0, 2, true),
    // From the target's core 4: core {4,5} has thread 5 idle, busy 1.
    (0x24, 0xff, 4, 0, 5, true),
    // Budget of one core (SIS_UTIL nr 3 is 2 CPUs, one SMT2 core): core
    // {0,1} only, nothing idle there.
    (0xc0, 0xff, 0, 3, -1, true),
    // Affinity: core {6,7} idle but only 7 allowed: still a fully idle core.
    (0xc0, 0x80, 0, 0, 7, false),
    // Nothing allowed is idle: no pick, and the hint gets cleared.
    (0xc0, 0x3f, 0, 0, -1, true),
];

pub(super) extern "C" fn fold_rows(_test: *mut bindings::kunit) {
    let ops = crate::hooks::kunit_ops();
    let Some(select) = ops.sis_select else {
        check!("sis_fold_rows", false, "sis_select not set");
        return;
    };
    for &(idle, allowed, target, util_nr, pick, clear) in FOLD_ROWS.iter() {
        let m = Machine::from_bits(idle);
        let cpus = [u64::from(allowed)];
        let cores = [0x55u64];
        let mut a = args_for(&ROWS[0], &m, &cpus, &cores);
        a.sis_fold = true;
        a.has_idle_core = true;
        a.target = target;
        a.util_nr = util_nr;
        a.sis_util = util_nr != 0;
        // SAFETY: `a` and everything it points to live across the call.
        let got = unsafe { select(&mut a) };
        check!(
            "sis_fold_rows",
            got == pick && a.clear_idle_cores == clear,
            "idle {:#x} allowed {:#x} target {}: picked {} clear_idle_cores {} (expected {} {})",
            idle,
            allowed,
            target,
            got,
            a.clear_idle_cores,
            pick,
            clear
        );
    }
}

/// SIS_FOLD on SMT4 x 2 and on 8 cores without SMT: `(topology, idle CPUs,
/// allowed, pick, whether the answer clears `has_idle_cores`)`, target 0,
/// no budget. Without SMT (smt_weight 1) the fold does not run: the plain
/// scan from the target leaves the hint alone, idle CPU or not.
#[rustfmt::skip]
static TOPO_ROWS: [(&str, u8, u8, c_int, bool); 5] = [
    // SMT4: core {0..3} has 3 busy, core {4..7} 2 busy: the latter's first idle thread.
    ("smt4", 0x68, 0xff, 5, true),
    // SMT4: core {4..7} fully idle.
    ("smt4", 0xf8, 0xff, 4, false),
    // SMT4 with affinity excluding core {4..7}: thread 3 of the busier core.
    ("smt4", 0xf8, 0x0f, 3, true),
    // No SMT: every CPU a core, the fold is the plain scan from the target.
    ("nosmt", 0x30, 0xff, 4, false),
    // Affinity without CPU 4: the next idle one.
    ("nosmt", 0x30, 0xef, 5, false),
];

pub(super) extern "C" fn topology_rows(_test: *mut bindings::kunit) {
    let ops = crate::hooks::kunit_ops();
    let Some(select) = ops.sis_select else {
        check!("sis_topology_rows", false, "sis_select not set");
        return;
    };
    for &(topo, idle, allowed, pick, clear) in TOPO_ROWS.iter() {
        let m = Machine::from_bits(idle);
        let cpus = [u64::from(allowed)];
        let (cores, smt, mask): ([u64; 1], u32, SmtMaskFn) = if topo == "smt4" {
            ([0x11], 4, smt4_mask)
        } else {
            ([0xff], 1, smt2_mask)
        };
        let mut a = args_for(&ROWS[0], &m, &cpus, &cores);
        a.smt_weight = smt;
        a.smt_mask = Some(mask);
        a.sis_fold = true;
        a.has_idle_core = true;
        a.target = 0;
        // SAFETY: `a` and everything it points to live across the call.
        let got = unsafe { select(&mut a) };
        check!(
            "sis_topology_rows",
            got == pick && a.clear_idle_cores == clear,
            "{} idle {:#x} allowed {:#x}: picked {} clear_idle_cores {} (expected {} {})",
            topo,
            idle,
            allowed,
            got,
            a.clear_idle_cores,
            pick,
            clear
        );
    }
}
