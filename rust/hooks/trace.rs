// SPDX-License-Identifier: GPL-2.0

//! The trace events of the judged hooks (`<trace/events/sched_lb.h>`, in
//! the series): each call's inputs, its flags and which of them are in
//! shadow, stock's answer, the policy's and the one returned.
//!
//! The kernel creates the events; 6.12's Rust has no tracepoint support,
//! so the module calls the series' exported `sched_lb_trace_<hook>()`,
//! and only after it has seen the event's key on: with the event off a
//! call costs one load and a branch, and no call into the kernel. The
//! key is a `static_key` that another CPU flips when the event is enabled
//! or disabled, read here with an atomic load; a call that reads it
//! while it flips emits or not, as any tracepoint does at that moment.

use core::sync::atomic::{AtomicI32, Ordering};

use kernel::bindings;

/// Whether the event of the tracepoint `tp` is enabled.
///
/// # Safety
///
/// `tp` is the address of one of the kernel's `struct tracepoint`s, which
/// live as long as the kernel.
#[inline(always)]
pub(super) unsafe fn enabled(tp: *const bindings::tracepoint) -> bool {
    // SAFETY: `tp` is valid (the caller's contract) and `enabled` is an
    // `atomic_t` that the kernel writes with atomic operations only; it
    // is aligned as an `i32`.
    let key = unsafe { AtomicI32::from_ptr((&raw const (*tp).key.enabled.counter).cast_mut()) };
    key.load(Ordering::Relaxed) > 0
}

/// The events' `flags` and `shadow` fields: the policy crate's, as a
/// verdict's `flags_differ` is built.
pub(super) use crate::policy::verdict::bits;

/// Calls `emit` only while the event of the tracepoint `tp` is enabled,
/// and only for the registered table (`COUNT`: the KUnit table's calls
/// are tests, not decisions).
/// A kernel without `CONFIG_TRACEPOINTS` has no events and no keys:
/// nothing is emitted.
macro_rules! emit {
    ($count:expr, $tp:ident, $emit:expr) => {
        #[cfg(CONFIG_TRACEPOINTS)]
        // SAFETY: the address of a `struct tracepoint` of the kernel.
        if $count && unsafe { super::trace::enabled(&raw const bindings::$tp) } {
            // SAFETY: an exported function of the series taking scalars.
            unsafe { $emit };
        }
    };
}
pub(super) use emit;

/// Whether the event of the kernel's tracepoint `$tp` is enabled; `false`
/// in a kernel without `CONFIG_TRACEPOINTS`.
macro_rules! trace_on {
    ($tp:ident) => {{
        #[cfg(CONFIG_TRACEPOINTS)]
        // SAFETY: the address of a `struct tracepoint` of the kernel.
        let on = unsafe { super::trace::enabled(&raw const bindings::$tp) };
        #[cfg(not(CONFIG_TRACEPOINTS))]
        let on = false;
        on
    }};
}
pub(super) use trace_on;
