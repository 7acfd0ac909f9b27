// SPDX-License-Identifier: GPL-2.0

//! All FFI glue between `<linux/sched/lb_hooks.h>` and the policy rules.
//!
//! The types come from bindgen (`kernel::bindings`), never from a copy: the
//! series adds the header to `rust/bindings/bindings_helper.h`. Each
//! `extern "C"` callback converts its argument struct into plain values,
//! calls one pure function of `crate::policy` and converts the answer back.
//! Nothing here keeps state, sleeps, allocates or locks: the callbacks run
//! inside the load balancer with preemption disabled.

use core::ffi::CStr;
use core::ptr;
use core::sync::atomic::{AtomicU64, Ordering};

use kernel::bindings;
use kernel::prelude::*;

use crate::policy::idle_cpus::{self, IdleCpusFlags};

/// The ABI this module was built against.
pub(crate) const ABI_VERSION: u32 = bindings::SCHED_LB_HOOKS_ABI_VERSION;

/// `struct sched_lb_ops` made shareable. It holds a pointer to a static
/// string and function pointers, none of which is ever written after
/// initialisation.
#[repr(transparent)]
struct OpsTable(bindings::sched_lb_ops);

// SAFETY: the table is immutable after static initialisation and every
// pointer in it refers to `'static` data or code.
unsafe impl Sync for OpsTable {}

static OPS: OpsTable = OpsTable(bindings::sched_lb_ops {
    abi_version: bindings::SCHED_LB_HOOKS_ABI_VERSION,
    // The C side checks this against its own sizeof(): a module built
    // against another layout is refused at registration.
    size: core::mem::size_of::<bindings::sched_lb_ops>() as u32,
    name: c"sched_lb_rs".as_ptr().cast(),
    idle_cpus_balanced: Some(idle_cpus_balanced),
});

/// The table this module registers, for the KUnit suites.
#[cfg(CONFIG_KUNIT)]
pub(crate) fn ops() -> &'static bindings::sched_lb_ops {
    &OPS.0
}

/// How often the load balancer asked, and how often the answer was
/// "balanced"; calls made by the KUnit suites are not counted. Printed at
/// unload so a run shows that its hooks were exercised. One shared cache
/// line is fine at load-balance rates; `fetch_add` wraps, which after 2^64
/// calls is harmless for a statistic.
static IDLE_CPUS_CALLS: AtomicU64 = AtomicU64::new(0);
static IDLE_CPUS_BALANCED: AtomicU64 = AtomicU64::new(0);

/// Seed 000: the idle-CPU imbalance test of
/// `sched_balance_find_src_group()`.
///
/// # Safety
///
/// `args` points to a valid `struct sched_lb_idle_cpus_args`, which the C
/// shim builds on its stack for the duration of the call.
unsafe extern "C" fn idle_cpus_balanced(args: *const bindings::sched_lb_idle_cpus_args) -> bool {
    // SAFETY: the caller guarantees `args` is valid for reads (see above).
    let a = unsafe { &*args };
    let balanced = idle_cpus::decide(
        a.local_idle_cpus,
        a.busiest_idle_cpus,
        a.llc_size,
        IdleCpusFlags {
            balance_idle_cpus: a.balance_idle_cpus,
            balance_idle_llc2: a.balance_idle_llc2,
        },
    );
    if !in_kunit_test() {
        IDLE_CPUS_CALLS.fetch_add(1, Ordering::Relaxed);
        if balanced {
            IDLE_CPUS_BALANCED.fetch_add(1, Ordering::Relaxed);
        }
    }
    balanced
}

/// True while the current task is running a KUnit case.
fn in_kunit_test() -> bool {
    #[cfg(CONFIG_KUNIT)]
    {
        // SAFETY: kunit_get_current_test() only reads `current`'s KUnit
        // pointer, behind a static key; it is safe in any context.
        !unsafe { bindings::kunit_get_current_test() }.is_null()
    }
    #[cfg(not(CONFIG_KUNIT))]
    {
        false
    }
}

/// `/sys/kernel/debug/sched_lb_rs/`: one read-only file per counter.
struct DebugfsDir(*mut bindings::dentry);

// SAFETY: the dentry pointer is only handed back to debugfs, which does its
// own locking; nothing here dereferences it.
unsafe impl Send for DebugfsDir {}
// SAFETY: as above; `&DebugfsDir` gives no access to the dentry.
unsafe impl Sync for DebugfsDir {}

impl DebugfsDir {
    fn new() -> Self {
        // SAFETY: the name is a valid C string; a NULL parent means the
        // debugfs root. An error comes back as an ERR_PTR, which every
        // debugfs function below accepts and ignores, so a missing debugfs
        // costs the counters, never the policies.
        let dir = unsafe {
            bindings::debugfs_create_dir(c"sched_lb_rs".as_ptr().cast(), ptr::null_mut())
        };
        let d = DebugfsDir(dir);
        d.counter(c"idle_cpus_calls", &IDLE_CPUS_CALLS);
        d.counter(c"idle_cpus_balanced", &IDLE_CPUS_BALANCED);
        d
    }

    fn counter(&self, name: &'static CStr, value: &'static AtomicU64) {
        // SAFETY: `name` is a valid C string and `value` a `'static` u64
        // (AtomicU64 has u64's layout); debugfs reads it with plain 64-bit
        // loads, which do not tear on the 64-bit targets Rust supports
        // here. The file is removed in `drop()` before the module's data
        // goes away.
        unsafe {
            bindings::debugfs_create_u64(name.as_ptr().cast(), 0o444, self.0, value.as_ptr())
        };
    }
}

impl Drop for DebugfsDir {
    fn drop(&mut self) {
        // SAFETY: `self.0` came from debugfs_create_dir() (or is an
        // ERR_PTR, which debugfs_remove() ignores); removal waits for
        // readers of the files to finish.
        unsafe { bindings::debugfs_remove(self.0) };
    }
}

/// Owns the registration of [`OPS`] and the debugfs counters; dropping it
/// unregisters the table, then removes the counters.
pub(crate) struct Registration {
    _debugfs: DebugfsDir,
}

impl Registration {
    /// Publishes the table and enables the static key.
    pub(crate) fn new() -> Result<Self> {
        let debugfs = DebugfsDir::new();
        // SAFETY: `OPS` is a valid, fully initialised table that lives for
        // the lifetime of the module, and `Drop` unregisters it before the
        // module text and data are freed.
        let ret = unsafe { bindings::sched_lb_ops_register(&OPS.0) };
        if ret != 0 {
            pr_err!(
                "sched_lb_ops_register() failed ({}): kernel and module disagree on the lb_hooks ABI, or another policy is registered\n",
                ret
            );
            return Err(Error::from_errno(ret));
        }
        Ok(Registration { _debugfs: debugfs })
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        // SAFETY: `OPS` was registered by `new()`; unregistering disables
        // the key and waits for an RCU grace period, after which no CPU
        // runs a callback of ours.
        unsafe { bindings::sched_lb_ops_unregister(&OPS.0) };
        pr_info!(
            "idle_cpus_balanced: {} calls, {} balanced\n",
            IDLE_CPUS_CALLS.load(Ordering::Relaxed),
            IDLE_CPUS_BALANCED.load(Ordering::Relaxed)
        );
    }
}
