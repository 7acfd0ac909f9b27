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
//! The hooks that answer a bool (`idle_cpus_balanced`, `detach_skip`,
//! `avg_load_balanced`, `newidle_stop`) cannot answer out of range: any
//! bool is a decision the stock code could make. They run the real
//! policy, so the balancer keeps working around the broken hooks.

use core::ffi::c_int;
use core::sync::atomic::{AtomicU32, Ordering};

use kernel::bindings;

pub(crate) use crate::hooks::{avg_load_balanced, detach_skip, idle_cpus_balanced, newidle_stop};
use crate::hooks::{INTERVAL, SIS, STEAL, STREAK};

/// How many times a hostile hook ran, to take its lies in turn.
static ROUND: AtomicU32 = AtomicU32::new(0);

/// The next of `n` ways to lie.
fn next_lie(n: u32) -> u32 {
    ROUND.fetch_add(1, Ordering::Relaxed) % n
}

/// An interval the kernel must never take: 0 (balance at every tick) or
/// `u64::MAX` (never again).
///
/// # Safety
///
/// As for the hook of the same name in `crate::hooks`.
pub(crate) unsafe extern "C" fn balance_interval<const COUNT: bool>(
    _args: *const bindings::sched_lb_interval_args,
) -> u64 {
    INTERVAL.record::<COUNT>(true, &[]);
    if next_lie(2) == 0 {
        0
    } else {
        u64::MAX
    }
}

/// A streak that jumps by far more than one failure, stamped in the
/// future.
///
/// # Safety
///
/// As for the hook of the same name in `crate::hooks`.
pub(crate) unsafe extern "C" fn newidle_account<const COUNT: bool>(
    args: *mut bindings::sched_lb_streak_args,
) {
    STREAK.record::<COUNT>(true, &[]);
    // SAFETY: the shim's argument struct, ours for the call.
    let a = unsafe { &mut *args };
    a.failures = a.failures.saturating_add(1000);
    a.stamp_jiffies = a.now_jiffies.wrapping_add(1000);
}

/// Asks the kernel about CPUs outside the LLC, then answers with a CPU
/// outside the scan mask, more loops than the LLC has CPUs, or an idle
/// estimate that grew and a stamp from the future, in turn.
///
/// # Safety
///
/// As for the hook of the same name in `crate::hooks`.
pub(crate) unsafe extern "C" fn sis_select<const COUNT: bool>(
    args: *mut bindings::sched_lb_sis_args,
) -> c_int {
    SIS.record::<COUNT>(true, &[]);
    // SAFETY: the shim's argument struct, valid for the call; read once.
    let a = unsafe { args.read() };
    if let Some(cpu_idle) = a.cpu_idle {
        // SAFETY: the shim's callback with its own argument struct; it
        // refuses these CPUs, which is what is being tested.
        let _ = unsafe { cpu_idle(args, -1) };
    }
    if let Some(smt_mask) = a.smt_mask {
        // SAFETY: as above.
        let _ = unsafe { smt_mask(args, c_int::MAX) };
    }
    let (cpu, loops, wake_avg_ns, wake_stamp) = match next_lie(3) {
        0 => (
            c_int::try_from(a.nbits).unwrap_or(c_int::MAX),
            0,
            a.wake_avg_ns,
            a.wake_stamp,
        ),
        1 => (-1, u32::MAX, a.wake_avg_ns, a.wake_stamp),
        _ => (-1, 0, u64::MAX, a.now_jiffies.wrapping_add(1000)),
    };
    // SAFETY: `args` is valid for writes of its out fields; no reference
    // into it is alive.
    unsafe {
        (*args).loops = loops;
        (*args).wake_avg_ns = wake_avg_ns;
        (*args).wake_stamp = wake_stamp;
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
    STEAL.record::<COUNT>(true, &[]);
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
