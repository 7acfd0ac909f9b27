// SPDX-License-Identifier: GPL-2.0

//! The callbacks of `struct sched_lb_ops`: each takes its scalar
//! parameters (the boolean and interval hooks, whose inputs travel in
//! registers) or copies its argument struct out (the others), calls the
//! pure functions of `crate::policy`, counts the call and returns or
//! writes the answer back. Nothing here sleeps, allocates or locks: the
//! callbacks run inside the load balancer with preemption disabled. The
//! one exception is `steal`, whose `steal_from` callback into the kernel
//! drops this CPU's runqueue lock and takes the victim's (the header
//! states the contract).
//!
//! Each callback comes in two instances: `COUNT = true`, which only the
//! table this module registers (`OPS`) holds and which writes the per-CPU
//! counters (the contract of `counters::Counts::get()`: the kernel calls
//! `OPS` only between registration and the grace period of its
//! unregistration, all inside the life of the counters' block), and
//! `COUNT = false`, for the KUnit table, which counts nothing.
//!
//! An argument struct is read once, by value. Callbacks into the kernel
//! get the raw pointer back and may read it; no Rust reference into it is
//! alive across such a call, and the out fields are written through the
//! raw pointer at the end.

use core::ffi::c_int;

use kernel::bindings;

use super::counters::Counts;
use super::trace::{bits, emit, trace_on};
use super::views::{c_cpu, KernelView, StealMasks};
use super::{
    AVG_LOAD, AVG_LOAD_VERDICT, DETACH, DETACH_VERDICT, IDLE_CPUS, IDLE_CPUS_VERDICT, INTERVAL,
    INTERVAL_VERDICT, NEWIDLE, NEWIDLE_BACKOFF_STOPS, NEWIDLE_VERDICT, SIS, SIS_ACCOUNT, SIS_LOOPS,
    SIS_SCAN_NS, SIS_UNDECIDED, SIS_VERDICT, STEAL, STEAL_ATTEMPTS, STEAL_STOLEN, STEAL_VERDICT,
    STREAK,
};
use crate::policy::balance_interval;
use crate::policy::idle_cpus::{self, IdleCpusFlags};
use crate::policy::newidle_streak::{self, Streak};
use crate::policy::newidle_walk::{self, WalkStep};
use crate::policy::sis_chain::{self, SisFlags, SisInput, WakeAvg};
use crate::policy::sis_judge::{self, Recorded, SisVerdict};
use crate::policy::steal::StealOutcome;
use crate::policy::steal_chain::{self, StealAnswer, StealArgs};
use crate::policy::verdict::Verdict;
use crate::policy::{avg_load, avg_load::AvgLoadInput, detach_load};

/// Galbraith, "sched: Further improve spurious CPU_IDLE active migrations"
/// (2016): the idle-CPU imbalance test of
/// `sched_balance_find_src_group()`.
///
/// This and the four callbacks after it take scalars, in registers, so
/// they read no memory of the kernel's and need no `# Safety`; bindgen
/// still types them `unsafe` in the table.
///
/// Each of the five first answers a call with its flags at their 6.12
/// values and its event off, the common case, with the rule and the
/// call's count alone, and leaves every other call to its `_judged`
/// twin, out of line (see [`Judged::unjudged()`]).
pub(crate) extern "C" fn idle_cpus_balanced<const COUNT: bool>(
    local_idle_cpus: u32,
    busiest_idle_cpus: u32,
    llc_size: u32,
    balance_idle_cpus: bool,
    balance_idle_llc2: bool,
) -> bool {
    let flags = [balance_idle_cpus, balance_idle_llc2];
    if IDLE_CPUS_VERDICT.unjudged(
        flags,
        COUNT && trace_on!(__tracepoint_sched_lb_idle_cpus_balanced),
    ) {
        let hit = idle_cpus_rule(local_idle_cpus, busiest_idle_cpus, llc_size, flags);
        // SAFETY: a callback; `COUNT` instances run only from `OPS` (module
        // doc). The same holds for every `judge()` and `record()` below.
        return unsafe { IDLE_CPUS.record::<COUNT>(hit, flags) };
    }
    idle_cpus_balanced_judged::<COUNT>(
        local_idle_cpus,
        busiest_idle_cpus,
        llc_size,
        balance_idle_cpus,
        balance_idle_llc2,
    )
}

#[inline(always)]
fn idle_cpus_rule(
    local_idle_cpus: u32,
    busiest_idle_cpus: u32,
    llc_size: u32,
    [balance_idle_cpus, balance_idle_llc2]: [bool; 2],
) -> bool {
    let flags = IdleCpusFlags {
        balance_idle_cpus,
        balance_idle_llc2,
    };
    idle_cpus::is_balanced(local_idle_cpus, busiest_idle_cpus, llc_size, flags)
}

#[cold]
#[inline(never)]
fn idle_cpus_balanced_judged<const COUNT: bool>(
    local_idle_cpus: u32,
    busiest_idle_cpus: u32,
    llc_size: u32,
    balance_idle_cpus: bool,
    balance_idle_llc2: bool,
) -> bool {
    let flags = [balance_idle_cpus, balance_idle_llc2];
    // SAFETY: as above.
    let v = unsafe {
        IDLE_CPUS_VERDICT.judge::<COUNT, _>(flags, |f| {
            idle_cpus_rule(local_idle_cpus, busiest_idle_cpus, llc_size, f)
        })
    };
    emit!(
        COUNT,
        __tracepoint_sched_lb_idle_cpus_balanced,
        bindings::sched_lb_trace_idle_cpus_balanced(
            local_idle_cpus,
            busiest_idle_cpus,
            llc_size,
            bits(flags),
            bits(IDLE_CPUS_VERDICT.shadow::<COUNT>()),
            v.stock,
            v.policy,
            v.applied,
        )
    );
    // SAFETY: as above.
    unsafe { IDLE_CPUS.record::<COUNT>(v.applied, flags) }
}

/// Guittot, "[PATCH 1/4] sched/fair: relax constraint on task's load
/// during load balance" (2020): the `migrate_load` test of `detach_tasks()`.
pub(crate) extern "C" fn detach_skip<const COUNT: bool>(
    load: u64,
    imbalance: i64,
    nr_balance_failed: u32,
    cache_nice_tries: u32,
    relax_failed: bool,
) -> bool {
    let flags = [relax_failed];
    if DETACH_VERDICT.unjudged(flags, COUNT && trace_on!(__tracepoint_sched_lb_detach_skip)) {
        let hit = detach_load::should_skip(
            load,
            imbalance,
            nr_balance_failed,
            cache_nice_tries,
            relax_failed,
        );
        // SAFETY: a callback; `COUNT` instances run only from `OPS` (module doc).
        return unsafe { DETACH.record::<COUNT>(hit, flags) };
    }
    detach_skip_judged::<COUNT>(
        load,
        imbalance,
        nr_balance_failed,
        cache_nice_tries,
        relax_failed,
    )
}

#[cold]
#[inline(never)]
fn detach_skip_judged<const COUNT: bool>(
    load: u64,
    imbalance: i64,
    nr_balance_failed: u32,
    cache_nice_tries: u32,
    relax_failed: bool,
) -> bool {
    // SAFETY: a callback; `COUNT` instances run only from `OPS` (module doc).
    let v = unsafe {
        DETACH_VERDICT.judge::<COUNT, _>([relax_failed], |[relax_failed]| {
            detach_load::should_skip(
                load,
                imbalance,
                nr_balance_failed,
                cache_nice_tries,
                relax_failed,
            )
        })
    };
    emit!(
        COUNT,
        __tracepoint_sched_lb_detach_skip,
        bindings::sched_lb_trace_detach_skip(
            load,
            imbalance,
            nr_balance_failed,
            cache_nice_tries,
            bits([relax_failed]),
            bits(DETACH_VERDICT.shadow::<COUNT>()),
            v.stock,
            v.policy,
            v.applied,
        )
    );
    // SAFETY: as above.
    unsafe { DETACH.record::<COUNT>(v.applied, [relax_failed]) }
}

/// Guittot, "[PATCH 2/4] sched/fair: reduce minimal imbalance threshold"
/// (2020): the `imbalance_pct` test, against v5.9's 125 above the LLC while
/// `LB_REDUCED_IMBALANCE_PCT` is off.
pub(crate) extern "C" fn avg_load_balanced<const COUNT: bool>(
    busiest_avg_load: u64,
    local_avg_load: u64,
    imbalance_pct: u32,
    above_llc: bool,
    reduced: bool,
) -> bool {
    let input = AvgLoadInput {
        busiest_avg_load,
        local_avg_load,
        imbalance_pct,
        above_llc,
        reduced,
    };
    if AVG_LOAD_VERDICT.unjudged(
        [reduced],
        COUNT && trace_on!(__tracepoint_sched_lb_avg_load_balanced),
    ) {
        let hit = avg_load::balanced(input);
        // SAFETY: a callback; `COUNT` instances run only from `OPS` (module doc).
        return unsafe { AVG_LOAD.record::<COUNT>(hit, [reduced]) };
    }
    avg_load_balanced_judged::<COUNT>(input)
}

#[cold]
#[inline(never)]
fn avg_load_balanced_judged<const COUNT: bool>(input: AvgLoadInput) -> bool {
    let AvgLoadInput {
        busiest_avg_load,
        local_avg_load,
        imbalance_pct,
        above_llc,
        reduced,
    } = input;
    // SAFETY: a callback; `COUNT` instances run only from `OPS` (module doc).
    let v = unsafe {
        AVG_LOAD_VERDICT.judge::<COUNT, _>([reduced], |[reduced]| {
            avg_load::balanced(AvgLoadInput { reduced, ..input })
        })
    };
    emit!(
        COUNT,
        __tracepoint_sched_lb_avg_load_balanced,
        bindings::sched_lb_trace_avg_load_balanced(
            busiest_avg_load,
            local_avg_load,
            imbalance_pct,
            above_llc,
            bits([reduced]),
            bits(AVG_LOAD_VERDICT.shadow::<COUNT>()),
            v.stock,
            v.policy,
            v.applied,
        )
    );
    // SAFETY: as above.
    unsafe { AVG_LOAD.record::<COUNT>(v.applied, [reduced]) }
}

/// Guittot, "[PATCH 3/4] sched/fair: minimize concurrent LBs between domain
/// level" and 4/4 (2020): `get_sd_balance_interval()`.
pub(crate) extern "C" fn balance_interval<const COUNT: bool>(
    balance_interval_ms: u32,
    busy_factor: u32,
    max_interval_jiffies: u64,
    cpu_busy: bool,
    busy_dec: bool,
) -> u64 {
    // SAFETY: a callback; `COUNT` instances run only from `OPS` (module doc).
    unsafe { INTERVAL.record::<COUNT>(cpu_busy, [busy_dec]) };
    if INTERVAL_VERDICT.unjudged(
        [busy_dec],
        COUNT && trace_on!(__tracepoint_sched_lb_balance_interval),
    ) {
        return interval_rule(
            balance_interval_ms,
            busy_factor,
            max_interval_jiffies,
            cpu_busy,
            busy_dec,
        );
    }
    balance_interval_judged::<COUNT>(
        balance_interval_ms,
        busy_factor,
        max_interval_jiffies,
        cpu_busy,
        busy_dec,
    )
}

/// Milliseconds to jiffies at the HZ of the kernel this module was built
/// against (its vermagic ties the two), with that HZ's constants folded in,
/// as in the C. Not `bindings::HZ`: bindgen gives the uapi USER_HZ (100)
/// for that name.
#[inline(always)]
fn interval_rule(
    balance_interval_ms: u32,
    busy_factor: u32,
    max_interval_jiffies: u64,
    cpu_busy: bool,
    busy_dec: bool,
) -> u64 {
    balance_interval::sd_balance_interval_jiffies_hz::<{ bindings::CONFIG_HZ }>(
        balance_interval_ms,
        busy_factor,
        cpu_busy,
        max_interval_jiffies,
        busy_dec,
    )
}

#[cold]
#[inline(never)]
fn balance_interval_judged<const COUNT: bool>(
    balance_interval_ms: u32,
    busy_factor: u32,
    max_interval_jiffies: u64,
    cpu_busy: bool,
    busy_dec: bool,
) -> u64 {
    // SAFETY: a callback; `COUNT` instances run only from `OPS` (module doc).
    let v = unsafe {
        INTERVAL_VERDICT.judge::<COUNT, _>([busy_dec], |[busy_dec]| {
            interval_rule(
                balance_interval_ms,
                busy_factor,
                max_interval_jiffies,
                cpu_busy,
                busy_dec,
            )
        })
    };
    emit!(
        COUNT,
        __tracepoint_sched_lb_balance_interval,
        bindings::sched_lb_trace_balance_interval(
            balance_interval_ms,
            busy_factor,
            max_interval_jiffies,
            cpu_busy,
            bits([busy_dec]),
            bits(INTERVAL_VERDICT.shadow::<COUNT>()),
            v.stock,
            v.policy,
            v.applied,
        )
    );
    v.applied
}

/// Low (2013) and Jain (2018), see `policy::newidle_walk`: where the
/// newidle walk stops.
///
/// The kernel passes `cost_ns`, the sum the stock test compares the
/// expected idle time against (the walk's cost so far plus the domain's
/// `max_newidle_lb_cost`), to keep to six parameters; the rule only ever
/// adds the two, so the sum goes in as the walk's cost and the domain's
/// part as 0.
pub(crate) extern "C" fn newidle_stop<const COUNT: bool>(
    avg_idle_ns: u64,
    cost_ns: u64,
    consecutive_failures: u32,
    backoff: bool,
    migration_cost_ns: u64,
    migration_cost: bool,
) -> bool {
    let flags = [backoff, migration_cost];
    if NEWIDLE_VERDICT.unjudged(
        flags,
        COUNT && trace_on!(__tracepoint_sched_lb_newidle_stop),
    ) {
        let stop = newidle_walk::stop_at_domain(newidle_step(
            avg_idle_ns,
            cost_ns,
            consecutive_failures,
            migration_cost_ns,
            flags,
        ));
        // SAFETY: a callback; `COUNT` instances run only from `OPS` (module doc).
        return unsafe { NEWIDLE.record::<COUNT>(stop, flags) };
    }
    newidle_stop_judged::<COUNT>(
        avg_idle_ns,
        cost_ns,
        consecutive_failures,
        backoff,
        migration_cost_ns,
        migration_cost,
    )
}

/// The walk's step as the rule takes it, with the flags `[NEWIDLE_BACKOFF,
/// SD_MIGRATION_COST]`; the domain's own cost is in `cost_ns` (above).
#[inline(always)]
fn newidle_step(
    avg_idle_ns: u64,
    cost_ns: u64,
    consecutive_failures: u32,
    migration_cost_ns: u64,
    [newidle_backoff, sd_migration_cost]: [bool; 2],
) -> WalkStep {
    WalkStep {
        avg_idle_ns,
        curr_cost_ns: cost_ns,
        max_newidle_lb_cost_ns: 0,
        migration_cost_ns,
        consecutive_failures,
        newidle_backoff,
        sd_migration_cost,
    }
}

#[cold]
#[inline(never)]
fn newidle_stop_judged<const COUNT: bool>(
    avg_idle_ns: u64,
    cost_ns: u64,
    consecutive_failures: u32,
    backoff: bool,
    migration_cost_ns: u64,
    migration_cost: bool,
) -> bool {
    let step = |flags| {
        newidle_step(
            avg_idle_ns,
            cost_ns,
            consecutive_failures,
            migration_cost_ns,
            flags,
        )
    };
    let flags = [backoff, migration_cost];
    // SAFETY: a callback; `COUNT` instances run only from `OPS` (module doc).
    let v = unsafe {
        NEWIDLE_VERDICT.judge::<COUNT, _>(flags, |f| newidle_walk::stop_at_domain(step(f)))
    };
    // Only the policy's stop with the flag on can be the backoff's (in
    // shadow too: it counts what the rule decided); the second evaluation
    // of the rule, and the load of the counters, are skipped for every
    // other answer.
    if COUNT && backoff && v.policy {
        // SAFETY: a callback of `OPS` (`COUNT`), see the module doc.
        if let Some(counts) = unsafe { Counts::get() } {
            counts.add(
                &NEWIDLE_BACKOFF_STOPS,
                u64::from(newidle_walk::stopped_by_backoff(step(flags))),
            );
        }
    }
    emit!(
        COUNT,
        __tracepoint_sched_lb_newidle_stop,
        bindings::sched_lb_trace_newidle_stop(
            avg_idle_ns,
            cost_ns,
            consecutive_failures,
            migration_cost_ns,
            bits(flags),
            bits(NEWIDLE_VERDICT.shadow::<COUNT>()),
            v.stock,
            v.policy,
            v.applied,
        )
    );
    // SAFETY: as above.
    unsafe { NEWIDLE.record::<COUNT>(v.applied, flags) }
}

/// Low (2013): the failure streak `newidle_stop` backs off on, after each
/// newidle attempt and each pull to the CPU.
///
/// # Safety
///
/// `args` points to a valid argument struct, which the C shim builds on
/// its stack for the duration of the call. The same holds for every
/// callback below.
pub(crate) unsafe extern "C" fn newidle_account<const COUNT: bool>(
    args: *mut bindings::sched_lb_streak_args,
) {
    // SAFETY: the caller guarantees `args` is valid (see above), and the
    // shim lets us write the out fields; nothing else holds the struct
    // during the call.
    let a = unsafe { &mut *args };
    // SAFETY: a callback; `COUNT` instances run only from `OPS` (module doc).
    unsafe { STREAK.record::<COUNT>(a.pulled, []) };
    let s = newidle_streak::account(
        Streak {
            failures: a.failures,
            stamp_jiffies: a.stamp_jiffies,
        },
        a.now_jiffies,
        // The kernel's HZ, fixed at build time like this module's
        // (`bindings::HZ` is USER_HZ, 100).
        bindings::CONFIG_HZ,
        a.pulled,
    );
    a.failures = s.failures;
    a.stamp_jiffies = s.stamp_jiffies;
}

/// Zijlstra, "[RFC 00/11] select_idle_sibling rework" (2018):
/// `select_idle_cpu()`'s scan of the LLC, see `policy::sis_chain`.
///
/// # Safety
///
/// As for [`newidle_account()`].
pub(crate) unsafe extern "C" fn sis_select<const COUNT: bool>(
    args: *mut bindings::sched_lb_sis_args,
) -> c_int {
    // SAFETY: as for `newidle_account()`. Read once: the callbacks
    // below get `args` back, so no reference into it stays alive.
    let a = unsafe { args.read() };
    // The shim always passes `cpu_idle`; without it there is no scan and
    // nothing to write back.
    let Some(cpu_idle) = a.cpu_idle else {
        // SAFETY: `args` is valid for writes of its out fields.
        unsafe {
            (*args).loops = 0;
            (*args).clear_idle_cores = false;
        }
        return -1;
    };
    // SAFETY: `args` is the struct of the scan in progress and `a` its copy.
    let view = unsafe { KernelView::new(args, &a, cpu_idle) };
    // The policy's scan keeps its idle answers, for stock's scan to be
    // judged on the same ones.
    let view = Recorded::new(&view);
    let input = SisInput {
        flags: SisFlags {
            prop: a.sis_prop,
            util: a.sis_util,
            age: a.sis_age,
            once: a.sis_once,
            fold: a.sis_fold,
        },
        wake: WakeAvg {
            avg_ns: a.wake_avg_ns,
            stamp_jiffies: a.wake_stamp,
        },
        now_jiffies: a.now_jiffies,
        avg_idle_ns: a.avg_idle_ns,
        avg_scan_cost_ns: a.avg_scan_cost_ns,
        span_weight: a.span_weight,
        util_nr: a.util_nr,
        smt_weight: a.smt_weight,
        has_idle_core: a.has_idle_core,
        target: a.target,
        nbits: a.nbits,
    };
    let answer = sis_chain::select(&view, &input);
    // In the order of the hook table's `sis_select` line (SIS_PROP,
    // SIS_AGE, SIS_ONCE, SIS_FOLD), which `SIS` and `SIS_VERDICT` count
    // by and the event's bits follow; `flagsites` fails a mix-up.
    let flags = sis_judge::flag_array(input.flags);
    let (cpu, clear_idle_cores) = if COUNT {
        // Stock's scan past the policy's is paid for only where its pick
        // is needed: to return it (shadow) or to show it (the event).
        let shadow = SIS_VERDICT.shadow::<COUNT>();
        let ask = shadow.iter().any(|&s| s) || trace_on!(__tracepoint_sched_lb_sis_select);
        match sis_judge::judge(&view, &input, &answer, shadow, ask) {
            SisVerdict::Judged {
                verdict: v,
                clears_idle_cores,
            } => {
                // SAFETY: a callback; `COUNT` instances run only from
                // `OPS` (module doc).
                unsafe { SIS_VERDICT.count::<COUNT, _>(&v) };
                emit!(
                    COUNT,
                    __tracepoint_sched_lb_sis_select,
                    bindings::sched_lb_trace_sis_select(
                        c_cpu(a.target),
                        a.has_idle_core,
                        a.util_nr,
                        a.avg_idle_ns,
                        a.wake_avg_ns,
                        a.avg_scan_cost_ns,
                        answer.scan.loops,
                        bits(flags),
                        bits(shadow),
                        v.stock.map_or(-1, c_cpu),
                        v.policy.map_or(-1, c_cpu),
                        v.applied.map_or(-1, c_cpu),
                    )
                );
                (v.applied, clears_idle_cores)
            }
            SisVerdict::Undecided => {
                // SAFETY: as above.
                if let Some(counts) = unsafe { Counts::get() } {
                    counts.add(&SIS_UNDECIDED, 1);
                }
                (answer.scan.cpu, answer.clears_idle_cores())
            }
        }
    } else {
        (answer.scan.cpu, answer.clears_idle_cores())
    };
    // SAFETY: a callback; `COUNT` instances run only from `OPS` (module doc).
    unsafe { SIS.record::<COUNT>(cpu.is_some(), flags) };
    // SAFETY: `args` is valid for writes of its out fields and no
    // reference into it is alive.
    unsafe {
        (*args).loops = answer.scan.loops;
        (*args).clear_idle_cores = clear_idle_cores;
        (*args).wake_avg_ns = answer.wake.avg_ns;
        (*args).wake_stamp = answer.wake.stamp_jiffies;
    }
    cpu.map_or(-1, c_cpu)
}

/// The same RFC (01/11, 03/11): the statistics after a scan.
///
/// # Safety
///
/// As for [`newidle_account()`].
pub(crate) unsafe extern "C" fn sis_account<const COUNT: bool>(
    args: *mut bindings::sched_lb_sis_args,
) {
    // SAFETY: as for `sis_select()`; no callback into C follows, so the
    // struct is ours for the call.
    let a = unsafe { &mut *args };
    // Scans whose budget was zero (SIS_UTIL: overloaded) visited nothing
    // and are only in `calls`.
    // SAFETY: a callback; `COUNT` instances run only from `OPS` (module doc).
    let scanned = unsafe { SIS_ACCOUNT.record::<COUNT>(a.loops > 0, []) };
    if COUNT && scanned {
        // SAFETY: a callback of `OPS` (`COUNT`), see the module doc.
        if let Some(counts) = unsafe { Counts::get() } {
            counts.add(&SIS_SCAN_NS, a.scan_time_ns);
            counts.add(&SIS_LOOPS, u64::from(a.loops));
        }
    }
    let done = sis_chain::account(
        a.avg_scan_cost_ns,
        a.wake_avg_ns,
        a.scan_time_ns,
        a.loops,
        a.sis_once,
    );
    a.avg_scan_cost_ns = done.avg_scan_cost_ns;
    a.wake_avg_ns = done.wake_avg_ns;
}

/// Sistare's STEAL (his reply to the select_idle_sibling rework RFC,
/// 2018): whether to steal, and which
/// overloaded CPUs of the LLC to try in which order; the shim's
/// `steal_from` moves the task under the runqueue locks.
///
/// # Safety
///
/// As for [`newidle_account()`].
pub(crate) unsafe extern "C" fn steal<const COUNT: bool>(
    args: *mut bindings::sched_lb_steal_args,
) -> c_int {
    // SAFETY: as for `newidle_account()`. Copied out before anything
    // else: `steal_from` gets `args` back and the shim reads it.
    let a = unsafe { args.read() };
    // SAFETY: `a` is the copy of the struct of the steal in progress.
    let masks = unsafe { StealMasks::new(&a) };
    // The shim always passes `steal_from`; without it nothing can move.
    let Some(steal_from) = a.steal_from else {
        // SAFETY: `args` is valid for writes of its out fields.
        unsafe {
            (*args).tried = false;
            (*args).attempts = 0;
        }
        return -1;
    };
    let steal_args = StealArgs {
        // The shim asks only with sched_feat(STEAL) on.
        enabled: true,
        numa_nodes: a.numa_nodes,
        nr_runnable: a.nr_runnable,
        avg_idle_ns: a.avg_idle_ns,
        avg_steal_cost_ns: a.avg_steal_cost_ns,
        this_cpu: a.this_cpu,
        bits_per_line: bindings::SCHED_LB_STEAL_BITS_PER_LINE,
        overloaded_base: a.overloaded_base,
    };
    // Stock 6.12 never steals: the policy's decision to try is what
    // differs. In shadow the decision is made and counted, nothing is
    // asked of the kernel, and newidle balancing runs as in stock.
    let in_shadow = STEAL_VERDICT.shadow::<COUNT>() == [true];
    let result = if in_shadow {
        StealAnswer {
            tried: steal_chain::would_steal(
                &steal_args,
                masks.overloaded(),
                masks.llc(),
                masks.siblings(),
            ),
            from: None,
            attempts: 0,
        }
    } else {
        steal_chain::steal(
            &steal_args,
            masks.overloaded(),
            masks.llc(),
            masks.siblings(),
            |cpu| {
                // SAFETY: `steal_from` and `args` come from the shim, which
                // expects exactly this call; it refuses a CPU outside the LLC.
                match unsafe { steal_from(args, c_cpu(cpu)) } {
                    1 => StealOutcome::Stolen,
                    0 => StealOutcome::NotStolen,
                    _ => StealOutcome::Stop,
                }
            },
        )
    };
    let applied = result.tried && !in_shadow;
    emit!(
        COUNT,
        __tracepoint_sched_lb_steal,
        bindings::sched_lb_trace_steal(
            a.nr_runnable,
            a.avg_idle_ns,
            a.avg_steal_cost_ns,
            result.from.map_or(-1, c_cpu),
            result.attempts,
            bits([true]),
            bits([in_shadow]),
            false,
            result.tried,
            applied,
        )
    );
    // SAFETY: a callback; `COUNT` instances run only from `OPS` (module doc).
    unsafe {
        STEAL_VERDICT.count::<COUNT, _>(&Verdict {
            policy: result.tried,
            stock: false,
            applied,
            flags_differ: u32::from(result.tried),
        });
        STEAL.record::<COUNT>(applied, [true]);
    }
    if COUNT {
        // SAFETY: a callback of `OPS` (`COUNT`), see the module doc.
        if let Some(counts) = unsafe { Counts::get() } {
            counts.add(&STEAL_ATTEMPTS, u64::from(result.attempts));
            counts.add(&STEAL_STOLEN, u64::from(result.from.is_some()));
        }
    }
    // SAFETY: `args` is valid for writes of its out fields and no
    // reference into it is alive.
    unsafe {
        (*args).tried = applied;
        (*args).attempts = result.attempts;
    }
    result.from.map_or(-1, c_cpu)
}
