// SPDX-License-Identifier: GPL-2.0

//! All FFI glue between `<linux/sched/lb_hooks.h>` and the policy rules.
//!
//! The types come from bindgen (`kernel::bindings`), never from a copy: the
//! series adds the header to `rust/bindings/bindings_helper.h`. Each
//! `extern "C"` callback converts its argument struct into plain values,
//! calls one pure function of `crate::policy` and converts the answer back.
//! Nothing here sleeps, allocates or locks: the callbacks run inside the
//! load balancer with preemption disabled. The only state is a pair of
//! statistics counters per hook, published in debugfs.

use core::ffi::{c_int, c_void, CStr};
use core::ptr;
use core::sync::atomic::{AtomicU64, Ordering};

use kernel::bindings;
use kernel::prelude::*;

use crate::policy::balance_interval::{self, IntervalInput};
use crate::policy::idle_cpus::{self, IdleCpusFlags};
use crate::policy::newidle_walk::{self, WalkStep};
use crate::policy::sis_select::{bit_is_set, IdleView};
use crate::policy::steal::{self, StealInput, StealOutcome};
use crate::policy::{avg_load, detach_load, sis_age, sis_budget, sis_cost, sis_select, sparsemask};

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

/// `Some(callback)`, or `None` where the build left the hook out with
/// `--cfg NAME` (`SLB_HOOKS_OFF` in `Kbuild`, used only by `make
/// bench-hooks`); the kernel then runs its stock C at that call site.
macro_rules! callback {
    ($left_out:ident, $f:expr) => {
        if cfg!($left_out) {
            None
        } else {
            Some($f)
        }
    };
}

static OPS: OpsTable = OpsTable(bindings::sched_lb_ops {
    abi_version: bindings::SCHED_LB_HOOKS_ABI_VERSION,
    // The C side checks this against its own sizeof(): a module built
    // against another layout is refused at registration.
    size: core::mem::size_of::<bindings::sched_lb_ops>() as u32,
    name: c"sched_lb_rs".as_ptr().cast(),
    idle_cpus_balanced: callback!(slb_no_hook_idle_cpus_balanced, idle_cpus_balanced),
    detach_skip: callback!(slb_no_hook_detach_skip, detach_skip),
    avg_load_balanced: callback!(slb_no_hook_avg_load_balanced, avg_load_balanced),
    balance_interval: callback!(slb_no_hook_balance_interval, balance_interval),
    newidle_stop: callback!(slb_no_hook_newidle_stop, newidle_stop),
    sis_select: callback!(slb_no_hook_sis_select, sis_select),
    sis_account: callback!(slb_no_hook_sis_select, sis_account),
    steal: callback!(slb_no_hook_steal, steal),
});

/// The table this module registers, for the KUnit suites.
#[cfg(all(CONFIG_KUNIT, not(slb_no_kunit)))]
pub(crate) fn ops() -> &'static bindings::sched_lb_ops {
    &OPS.0
}

/// How often the scheduler asked a hook, and how often the answer was
/// `true`. Calls made by the KUnit suites are not counted. Published in
/// debugfs so a run can show that its hooks were exercised. One shared
/// cache line per hook is fine at load-balance rates; `fetch_add` wraps,
/// which after 2^64 calls is harmless for a statistic.
struct HookStats {
    calls: AtomicU64,
    hits: AtomicU64,
}

impl HookStats {
    const fn new() -> Self {
        HookStats {
            calls: AtomicU64::new(0),
            hits: AtomicU64::new(0),
        }
    }

    fn record(&self, hit: bool) -> bool {
        if !in_kunit_test() {
            self.calls.fetch_add(1, Ordering::Relaxed);
            if hit {
                self.hits.fetch_add(1, Ordering::Relaxed);
            }
        }
        hit
    }
}

static IDLE_CPUS: HookStats = HookStats::new();
static DETACH: HookStats = HookStats::new();
static AVG_LOAD: HookStats = HookStats::new();
static INTERVAL: HookStats = HookStats::new();
static NEWIDLE: HookStats = HookStats::new();
static SIS: HookStats = HookStats::new();
/// What the SIS scans that visited at least one CPU cost, as the shim timed
/// them: how many, total nanoseconds, total CPUs or cores visited. Calls
/// whose budget was zero (SIS_UTIL: overloaded) are only in `calls`.
static SIS_SCANS: AtomicU64 = AtomicU64::new(0);
static SIS_SCAN_NS: AtomicU64 = AtomicU64::new(0);
static SIS_LOOPS: AtomicU64 = AtomicU64::new(0);
/// STEAL: `calls` counts CPUs about to idle-balance that asked, `true` the
/// ones the policy let try (Sistare's "tried"); then how many victims were
/// tried and how many steals succeeded.
static STEAL: HookStats = HookStats::new();
static STEAL_ATTEMPTS: AtomicU64 = AtomicU64::new(0);
static STEAL_STOLEN: AtomicU64 = AtomicU64::new(0);

/// Every hook's counters, with the debugfs directory name of each.
static STATS: [(&CStr, &HookStats); 7] = [
    (c"idle_cpus_balanced", &IDLE_CPUS),
    (c"detach_skip", &DETACH),
    (c"avg_load_balanced", &AVG_LOAD),
    (c"balance_interval", &INTERVAL),
    (c"newidle_stop", &NEWIDLE),
    (c"sis_select", &SIS),
    (c"steal", &STEAL),
];

/// Seed 000: the idle-CPU imbalance test of
/// `sched_balance_find_src_group()`.
///
/// # Safety
///
/// `args` points to a valid argument struct, which the C shim builds on
/// its stack for the duration of the call. The same holds for every
/// callback below.
unsafe extern "C" fn idle_cpus_balanced(args: *const bindings::sched_lb_idle_cpus_args) -> bool {
    // SAFETY: the caller guarantees `args` is valid for reads (see above).
    let a = unsafe { &*args };
    let flags = IdleCpusFlags {
        balance_idle_cpus: a.balance_idle_cpus,
        balance_idle_llc2: a.balance_idle_llc2,
    };
    IDLE_CPUS.record(idle_cpus::decide(
        a.local_idle_cpus,
        a.busiest_idle_cpus,
        a.llc_size,
        flags,
    ))
}

/// Seed 001, patch 1: the `migrate_load` test of `detach_tasks()`.
unsafe extern "C" fn detach_skip(args: *const bindings::sched_lb_detach_args) -> bool {
    // SAFETY: as for `idle_cpus_balanced()`.
    let a = unsafe { &*args };
    DETACH.record(detach_load::decide(
        a.load,
        a.imbalance,
        a.nr_balance_failed,
        a.cache_nice_tries,
        a.relax_failed,
    ))
}

/// Seed 001, patch 2: the `imbalance_pct` test.
unsafe extern "C" fn avg_load_balanced(args: *const bindings::sched_lb_avg_load_args) -> bool {
    // SAFETY: as for `idle_cpus_balanced()`.
    let a = unsafe { &*args };
    AVG_LOAD.record(avg_load::avg_load_balanced(
        a.busiest_avg_load,
        a.local_avg_load,
        a.imbalance_pct,
    ))
}

/// Seed 001, patches 3 and 4: `get_sd_balance_interval()`.
unsafe extern "C" fn balance_interval(args: *const bindings::sched_lb_interval_args) -> u64 {
    // SAFETY: as for `idle_cpus_balanced()`.
    let a = unsafe { &*args };
    INTERVAL.record(a.cpu_busy);
    balance_interval::sd_balance_interval_jiffies(IntervalInput {
        balance_interval_ms: a.balance_interval_ms,
        busy_factor: a.busy_factor,
        cpu_busy: a.cpu_busy,
        max_interval_jiffies: a.max_interval_jiffies,
        hz: a.hz,
        busy_dec: a.busy_dec,
    })
}

/// Seeds 003 and 004: where the newidle walk stops.
unsafe extern "C" fn newidle_stop(args: *const bindings::sched_lb_newidle_args) -> bool {
    // SAFETY: as for `idle_cpus_balanced()`.
    let a = unsafe { &*args };
    NEWIDLE.record(newidle_walk::stop_at_domain(WalkStep {
        avg_idle_ns: a.avg_idle_ns,
        curr_cost_ns: a.curr_cost_ns,
        max_newidle_lb_cost_ns: a.max_newidle_lb_cost_ns,
        migration_cost_ns: a.migration_cost_ns,
        consecutive_failures: a.consecutive_failures,
        backoff: a.backoff,
        migration_cost: a.migration_cost,
    }))
}

// cpumask words are `unsigned long`; the policy reads them as `u64`.
const _: () = assert!(
    usize::BITS == u64::BITS,
    "sched_lb_rs assumes 64-bit cpumask words"
);

/// A cpumask's words as the policy sees them.
///
/// # Safety
///
/// `bits` points to a cpumask of at least `nbits` bits that outlives the
/// returned slice. The bindings give `unsigned long` as `usize`, which is
/// 64 bits on every architecture this module is built for, so the words
/// are `u64`.
unsafe fn cpumask_words<'a>(bits: *const usize, nbits: u32) -> &'a [u64] {
    // SAFETY: a cpumask of `nbits` bits has this many words.
    unsafe { words(bits, nbits.div_ceil(u64::BITS)) }
}

/// `nwords` `unsigned long`s as `u64`s.
///
/// # Safety
///
/// `bits` is NULL or points to `nwords` words that outlive the slice.
unsafe fn words<'a>(bits: *const usize, nwords: u32) -> &'a [u64] {
    if bits.is_null() || nwords == 0 {
        return &[];
    }
    // SAFETY: see the function's contract; `usize` is `u64` here (checked
    // above).
    unsafe { core::slice::from_raw_parts(bits.cast::<u64>(), nwords as usize) }
}

/// The scan's view of idle state: the affinity from the mask the shim
/// built, idleness from the kernel's `__select_idle_cpu()` test, one CPU at
/// a time.
struct KernelView<'a> {
    cpus: &'a [u64],
    cpu_idle: unsafe extern "C" fn(c_int, *mut c_void) -> bool,
    task: *mut c_void,
}

impl IdleView for KernelView<'_> {
    fn idle(&self, cpu: u32) -> bool {
        // SAFETY: `cpu_idle` and `task` come from the shim's argument struct
        // for the duration of the scan; `cpu` is below nr_cpumask_bits.
        unsafe { (self.cpu_idle)(cpu as c_int, self.task) }
    }

    fn allowed(&self, cpu: u32) -> bool {
        bit_is_set(self.cpus, cpu)
    }
}

/// Seed 002: `select_idle_cpu()`'s scan of the LLC (RFC 01 to 06).
unsafe extern "C" fn sis_select(args: *mut bindings::sched_lb_sis_args) -> c_int {
    // SAFETY: as for `idle_cpus_balanced()`, and the shim lets us write
    // the out fields.
    let a = unsafe { &mut *args };
    a.loops = 0;
    let Some(cpu_idle) = a.cpu_idle else {
        return -1;
    };
    if a.sis_age {
        (a.wake_avg_ns, a.wake_stamp) =
            sis_age::age_wake_avg(a.wake_avg_ns, a.wake_stamp, a.now_jiffies);
    }
    let idle_ns = sis_age::predicted_idle_ns(a.sis_age, a.wake_avg_ns, a.avg_idle_ns);
    let prop = a
        .sis_prop
        .then(|| sis_budget::sis_prop_cores(a.span_weight, idle_ns, a.avg_scan_cost_ns));
    let util = a.sis_util.then_some(a.util_nr);
    let Some(budget) = sis_budget::combine(prop, util, a.smt_weight) else {
        SIS.record(false);
        return -1;
    };
    let view = KernelView {
        // SAFETY: `cpus` is the shim's cpumask of `nbits` bits.
        cpus: unsafe { cpumask_words(a.cpus, a.nbits) },
        cpu_idle,
        task: a.task,
    };
    let scan = match (
        a.sis_fold && a.has_idle_core && a.smt_weight > 1,
        a.smt_mask,
    ) {
        // RFC 07/08: the folded core scan, from the target's core.
        (true, Some(smt_mask)) => {
            // SAFETY: `cores` is the shim's cpumask of `nbits` bits.
            let cores = unsafe { cpumask_words(a.cores, a.nbits) };
            let nbits = a.nbits;
            let siblings = |core: u32| {
                // SAFETY: smt_mask() returns a CPU's SMT cpumask, which
                // lives as long as the topology, i.e. past this scan.
                unsafe { cpumask_words(smt_mask(core as c_int), nbits) }
            };
            sis_select::scan_cores_fold(&view, cores, nbits, siblings, a.target, budget.cores)
        }
        // RFC 05/06: the CPU scan. The target itself was checked before
        // the scan, so it starts after it.
        _ => sis_select::scan_cpus(
            &view,
            view.cpus,
            a.nbits,
            a.target.wrapping_add(1),
            budget.cpus,
        ),
    };
    a.loops = scan.loops;
    a.found_idle_core = scan.found_idle_core;
    SIS.record(scan.cpu.is_some());
    scan.cpu.map_or(-1, |c| c as c_int)
}

/// Seed 002: the statistics after a scan (RFC 01, 03).
unsafe extern "C" fn sis_account(args: *mut bindings::sched_lb_sis_args) {
    // SAFETY: as for `sis_select()`.
    let a = unsafe { &mut *args };
    if a.loops > 0 {
        a.avg_scan_cost_ns =
            sis_cost::update_avg_scan_cost(a.avg_scan_cost_ns, a.scan_time_ns, a.loops);
    }
    if a.sis_once {
        a.wake_avg_ns = sis_age::spend_wake_avg(a.wake_avg_ns, a.scan_time_ns);
    }
    if a.loops > 0 && !in_kunit_test() {
        SIS_SCANS.fetch_add(1, Ordering::Relaxed);
        SIS_SCAN_NS.fetch_add(a.scan_time_ns, Ordering::Relaxed);
        SIS_LOOPS.fetch_add(u64::from(a.loops), Ordering::Relaxed);
    }
}

// The shim lays out the overloaded mask as the policy reads it.
const _: () = assert!(
    bindings::SCHED_LB_STEAL_LINE_BYTES == sparsemask::LINE_BYTES,
    "sparsemask line size differs between kernel and policy"
);

/// Sistare's STEAL (seed 002 thread): whether to steal, and which
/// overloaded CPUs of the LLC to try in which order; the shim's
/// `steal_from` moves the task under the runqueue locks.
unsafe extern "C" fn steal(args: *mut bindings::sched_lb_steal_args) -> c_int {
    // Only shared reads through `a`: `steal_from` gets `args` back and
    // reads it too. The out fields are written through `args` at the end.
    // SAFETY: as for `idle_cpus_balanced()`.
    let a = unsafe { &*args };
    // SAFETY: `overloaded` is the shim's sparsemask of `overloaded_words`
    // words; `llc` and `siblings` are cpumasks of `nbits` bits.
    let (overloaded, llc, siblings) = unsafe {
        (
            words(a.overloaded, a.overloaded_words),
            cpumask_words(a.llc, a.nbits),
            cpumask_words(a.siblings, a.nbits),
        )
    };
    let order = || {
        steal::victims(
            sparsemask::elements(overloaded, a.bits_per_line),
            llc,
            siblings,
            a.this_cpu,
        )
    };
    let go = steal::should_steal(StealInput {
        enabled: a.enabled,
        numa_nodes: a.numa_nodes,
        nr_runnable: a.nr_runnable,
        any_overloaded: order().next().is_some(),
        avg_idle_ns: a.avg_idle_ns,
        avg_steal_cost_ns: a.avg_steal_cost_ns,
    });
    let result = match (STEAL.record(go), a.steal_from) {
        (true, Some(steal_from)) => steal::steal_first(order(), |cpu| {
            // SAFETY: `steal_from` and `args` come from the shim, which
            // expects exactly this call; `cpu` is below nr_cpumask_bits.
            match unsafe { steal_from(args, cpu as c_int) } {
                1 => StealOutcome::Stolen,
                0 => StealOutcome::NotStolen,
                _ => StealOutcome::Stop,
            }
        }),
        _ => steal::StealResult {
            from: None,
            attempts: 0,
        },
    };
    if !in_kunit_test() {
        STEAL_ATTEMPTS.fetch_add(u64::from(result.attempts), Ordering::Relaxed);
        if result.from.is_some() {
            STEAL_STOLEN.fetch_add(1, Ordering::Relaxed);
        }
    }
    // SAFETY: `args` is valid for writes (see above) and no reference into
    // it is live any more.
    unsafe {
        (*args).tried = go;
        (*args).attempts = result.attempts;
    }
    result.from.map_or(-1, |c| c as c_int)
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

/// `/sys/kernel/debug/sched_lb_rs/<hook>/{calls,true}`, read-only, plus
/// `sis_select/{scans,scan_ns,loops}` and `steal/{attempts,stolen}`.
struct DebugfsDir(*mut bindings::dentry);

// SAFETY: the dentry pointer is only handed back to debugfs, which does its
// own locking; nothing here dereferences it.
unsafe impl Send for DebugfsDir {}
// SAFETY: as above; `&DebugfsDir` gives no access to the dentry.
unsafe impl Sync for DebugfsDir {}

impl DebugfsDir {
    fn new() -> Self {
        let root = DebugfsDir(mkdir(c"sched_lb_rs", ptr::null_mut()));
        for (name, stats) in STATS.iter() {
            let dir = mkdir(name, root.0);
            counter(dir, c"calls", &stats.calls);
            counter(dir, c"true", &stats.hits);
            if ptr::eq(*stats, &SIS) {
                counter(dir, c"scans", &SIS_SCANS);
                counter(dir, c"scan_ns", &SIS_SCAN_NS);
                counter(dir, c"loops", &SIS_LOOPS);
            }
            if ptr::eq(*stats, &STEAL) {
                counter(dir, c"attempts", &STEAL_ATTEMPTS);
                counter(dir, c"stolen", &STEAL_STOLEN);
            }
        }
        root
    }
}

fn mkdir(name: &CStr, parent: *mut bindings::dentry) -> *mut bindings::dentry {
    // SAFETY: `name` is a valid C string; `parent` is NULL (the debugfs
    // root) or a dentry from an earlier call. An error comes back as an
    // ERR_PTR, which every debugfs function accepts and ignores, so a
    // missing debugfs costs the counters, never the policies.
    unsafe { bindings::debugfs_create_dir(name.as_ptr().cast(), parent) }
}

fn counter(dir: *mut bindings::dentry, name: &'static CStr, value: &'static AtomicU64) {
    // SAFETY: `name` is a valid C string and `value` a `'static` u64
    // (AtomicU64 has u64's layout); debugfs reads it with plain 64-bit
    // loads, which do not tear on the 64-bit targets this module is built
    // for. The files are removed in `drop()` before the module's data goes.
    unsafe { bindings::debugfs_create_u64(name.as_ptr().cast(), 0o444, dir, value.as_ptr()) };
}

impl Drop for DebugfsDir {
    fn drop(&mut self) {
        // SAFETY: `self.0` came from debugfs_create_dir() (or is an
        // ERR_PTR, which debugfs_remove() ignores); removal is recursive
        // and waits for readers of the files to finish.
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
        for (name, stats) in STATS.iter() {
            pr_info!(
                "{}: {} calls, {} true\n",
                name.to_str().unwrap_or("?"),
                stats.calls.load(Ordering::Relaxed),
                stats.hits.load(Ordering::Relaxed)
            );
        }
        pr_info!(
            "steal: {} victims tried, {} tasks stolen\n",
            STEAL_ATTEMPTS.load(Ordering::Relaxed),
            STEAL_STOLEN.load(Ordering::Relaxed)
        );
    }
}
