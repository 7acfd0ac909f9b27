// SPDX-License-Identifier: GPL-2.0

//! A policy that lies, on purpose: built only with `SLB_HOSTILE=1`
//! (`--cfg slb_hostile`, see `Kbuild`), for the `hostile` step of `make
//! test`.
//!
//! The kernel trusts nothing a module returns (`sched_lb_reject()` in the
//! series): every number a hook hands back is checked against what the
//! stock code could produce, and a bad one costs a counter in
//! `/sys/kernel/debug/sched/lb_violations/<hook>`, one line in the log per
//! check, and the stock decision. This module breaks every one of those
//! checks, in turn, so the guest can show that each holds under load: the
//! kernel keeps running, every hackbench run completes, and each check
//! prints its line once.
//!
//! Two of the hooks that answer a bool are bounded by the stock answer
//! (`idle_cpus_balanced`: balanced where stock is; `newidle_stop`: stop
//! where stock does), and lie against it here. The other two
//! (`detach_skip`, `avg_load_balanced`) have no such bound: any bool is a
//! decision the flags behind them could make. They run the real policy,
//! so the balancer keeps working around the broken hooks.
//!
//! Every check site of the series must fire: the `hostile` step of the
//! guest expects as many refusal lines as the series has
//! `sched_lb_reject()` sites, which the host counts in the patched source
//! (`scripts/lib.sh`: `slb_check_sites`). A new check needs a lie here.

use core::ffi::c_int;
use core::sync::atomic::{AtomicU32, Ordering};

use kernel::bindings;

pub(crate) use crate::hooks::{avg_load_balanced, detach_skip};
use crate::hooks::{IDLE_CPUS, INTERVAL, NEWIDLE, SIS, STEAL, STREAK};

/// How many times a hostile hook ran, to take its lies in turn.
static ROUND: AtomicU32 = AtomicU32::new(0);

/// The next of `n` ways to lie.
fn next_lie(n: u32) -> u32 {
    // `checked_rem`: a remainder by 0 would be a panic path in the kernel.
    ROUND
        .fetch_add(1, Ordering::Relaxed)
        .checked_rem(n)
        .unwrap_or(0)
}

/// Never balanced: imbalanced even where stock counts the groups as
/// balanced, which no flag behind the hook allows.
pub(crate) extern "C" fn idle_cpus_balanced<const COUNT: bool>(
    _local_idle_cpus: u32,
    _busiest_idle_cpus: u32,
    _llc_size: u32,
    balance_idle_cpus: bool,
    balance_idle_llc2: bool,
) -> bool {
    // SAFETY: a callback; `COUNT` instances run only from `OPS`.
    unsafe { IDLE_CPUS.record::<COUNT>(false, [balance_idle_cpus, balance_idle_llc2]) }
}

/// Never stops the newidle walk, even where stock stops it, which no flag
/// behind the hook allows.
pub(crate) extern "C" fn newidle_stop<const COUNT: bool>(
    _avg_idle_ns: u64,
    _cost_ns: u64,
    _consecutive_failures: u32,
    backoff: bool,
    _migration_cost_ns: u64,
    migration_cost: bool,
) -> bool {
    // SAFETY: a callback; `COUNT` instances run only from `OPS`.
    unsafe { NEWIDLE.record::<COUNT>(false, [backoff, migration_cost]) }
}

/// An interval the kernel must never take: 0 (balance at every tick) or
/// `u64::MAX` (never again).
pub(crate) extern "C" fn balance_interval<const COUNT: bool>(
    _balance_interval_ms: u32,
    _busy_factor: u32,
    _max_interval_jiffies: u64,
    cpu_busy: bool,
    busy_dec: bool,
) -> u64 {
    // SAFETY: a callback; `COUNT` instances run only from `OPS`.
    unsafe { INTERVAL.record::<COUNT>(cpu_busy, [busy_dec]) };
    if next_lie(2) == 0 {
        0
    } else {
        u64::MAX
    }
}

/// After a pull, a count that stays (at least 1, at most one more than
/// before, the stamp left alone: only the pull check can refuse it);
/// otherwise a streak that jumps by far more than one failure, stamped in
/// the future.
///
/// # Safety
///
/// As for the hook of the same name in `crate::hooks`.
pub(crate) unsafe extern "C" fn newidle_account<const COUNT: bool>(
    args: *mut bindings::sched_lb_streak_args,
) {
    // SAFETY: the shim's argument struct, ours for the call.
    let a = unsafe { &mut *args };
    // SAFETY: a callback; `COUNT` instances run only from `OPS`.
    unsafe { STREAK.record::<COUNT>(a.pulled, []) };
    if a.pulled {
        a.failures = a.failures.max(1);
    } else {
        a.failures = a.failures.saturating_add(1000);
        a.stamp_jiffies = a.now_jiffies.wrapping_add(1000);
    }
}

/// Asks the kernel about CPUs outside the LLC, then, in turn: answers
/// with a CPU outside the scan mask, or the target, which it never asked
/// about; reports more loops than it made; an idle estimate that grew
/// and a stamp from the future; asks about the target until the kernel
/// stops answering; and asks to clear `has_idle_cores` after no core
/// scan.
///
/// # Safety
///
/// As for the hook of the same name in `crate::hooks`.
pub(crate) unsafe extern "C" fn sis_select<const COUNT: bool>(
    args: *mut bindings::sched_lb_sis_args,
) -> c_int {
    // SAFETY: the shim's argument struct, valid for the call; read once.
    let a = unsafe { args.read() };
    // SAFETY: a callback; `COUNT` instances run only from `OPS`.
    unsafe { SIS.record::<COUNT>(true, [a.sis_prop, a.sis_age, a.sis_once, a.sis_fold]) };
    if let Some(cpu_idle) = a.cpu_idle {
        // SAFETY: the shim's callback with its own argument struct; it
        // refuses these CPUs, which is what is being tested.
        let _ = unsafe { cpu_idle(args, -1) };
    }
    if let Some(smt_mask) = a.smt_mask {
        // SAFETY: as above.
        let _ = unsafe { smt_mask(args, c_int::MAX) };
    }
    let target = c_int::try_from(a.target).unwrap_or(-1);
    let (mut cpu, mut loops, mut wake_avg_ns, mut wake_stamp) =
        (-1, 0, a.wake_avg_ns, a.wake_stamp);
    let mut clear_idle_cores = false;
    match next_lie(6) {
        0 => cpu = c_int::try_from(a.nbits).unwrap_or(c_int::MAX),
        1 => cpu = target,
        2 => loops = u32::MAX,
        3 => (wake_avg_ns, wake_stamp) = (u64::MAX, a.now_jiffies.wrapping_add(1000)),
        4 => {
            if let Some(cpu_idle) = a.cpu_idle {
                // The kernel stops answering past four times the LLC's
                // CPUs (a scan and its judge's); the bound guards against
                // a kernel that would not.
                for _ in 0..a.span_weight.saturating_mul(4).saturating_add(1).min(4096) {
                    // SAFETY: as above.
                    let _ = unsafe { cpu_idle(args, target) };
                }
            }
        }
        _ => clear_idle_cores = true,
    }
    // SAFETY: `args` is valid for writes of its out fields; no reference
    // into it is alive.
    unsafe {
        (*args).loops = loops;
        (*args).wake_avg_ns = wake_avg_ns;
        (*args).wake_stamp = wake_stamp;
        (*args).clear_idle_cores = clear_idle_cores;
    }
    cpu
}

/// An average scan cost and an idle estimate that can only come from
/// nowhere.
///
/// # Safety
///
/// As for the hook of the same name in `crate::hooks`.
pub(crate) unsafe extern "C" fn sis_account<const COUNT: bool>(
    args: *mut bindings::sched_lb_sis_args,
) {
    // SAFETY: the shim's argument struct, ours for the call.
    let a = unsafe { &mut *args };
    a.avg_scan_cost_ns = u64::MAX;
    a.wake_avg_ns = u64::MAX;
}

/// Asks to steal from itself until the kernel stops the walk, then
/// reports a steal that did not happen, after attempts it did not make.
///
/// # Safety
///
/// As for the hook of the same name in `crate::hooks`.
pub(crate) unsafe extern "C" fn steal<const COUNT: bool>(
    args: *mut bindings::sched_lb_steal_args,
) -> c_int {
    // SAFETY: a callback; `COUNT` instances run only from `OPS`.
    unsafe { STEAL.record::<COUNT>(true, [true]) };
    // SAFETY: the shim's argument struct, valid for the call; read once.
    let a = unsafe { args.read() };
    if let Some(steal_from) = a.steal_from {
        let this_cpu = c_int::try_from(a.this_cpu).unwrap_or(-1);
        // The kernel refuses this CPU each time and stops the walk once it
        // was asked about more CPUs than the LLC has others; the bound
        // guards against a kernel that would not.
        for _ in 0..4096 {
            // SAFETY: the shim's callback with its own argument struct.
            if unsafe { steal_from(args, this_cpu) } < 0 {
                break;
            }
        }
    }
    // SAFETY: `args` is valid for writes of its out fields; no reference
    // into it is alive.
    unsafe {
        (*args).tried = true;
        (*args).attempts = u32::MAX;
    }
    c_int::MAX
}
