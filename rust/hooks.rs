// SPDX-License-Identifier: GPL-2.0

//! All FFI glue between `<linux/sched/lb_hooks.h>` and the policy rules.
//!
//! The types come from bindgen (`kernel::bindings`), never from a copy: the
//! series adds the header to `rust/bindings/bindings_helper.h`. Each
//! `extern "C"` callback copies its argument struct out, calls the pure
//! functions of `crate::policy` and writes the answer back. Nothing here
//! sleeps, allocates or locks: the callbacks run inside the load balancer
//! with preemption disabled. The one exception is `steal`, whose
//! `steal_from` callback into the kernel drops this CPU's runqueue lock and
//! takes the victim's (the header states the contract).
//!
//! Three rules keep the Rust side sound while the kernel runs around it:
//!
//! - The argument struct is read once, by value. Callbacks into the kernel
//!   get the raw pointer back and may read it; no Rust reference into it
//!   is alive across such a call, and the out fields are written through
//!   the raw pointer at the end.
//! - CPU masks and STEAL's sparsemask are memory that other CPUs write at
//!   any time (`set_bit()` on a 1 <-> 2 crossing, a steal clearing its
//!   victim's bit in the middle of our walk, hotplug rewriting a span):
//!   they are read as `[AtomicU64]` with relaxed loads, the Rust form of
//!   `READ_ONCE()`, never as `&[u64]`.
//! - The kernel checks every number it gets back (see the header), so a
//!   bug here costs a refused answer, not a corrupted runqueue.
//!
//! The only state is a pair of statistics counters per hook, published in
//! debugfs.

use core::ffi::{c_int, CStr};
use core::ptr;
use core::sync::atomic::{AtomicU64, Ordering};

use kernel::bindings;
use kernel::prelude::*;

use crate::policy::balance_interval::{self, IntervalInput};
use crate::policy::idle_cpus::{self, IdleCpusFlags};
use crate::policy::newidle_streak::{self, Streak};
use crate::policy::newidle_walk::{self, WalkStep};
use crate::policy::sis_chain::{self, LlcView, SisFlags, SisInput, WakeAvg};
use crate::policy::sis_select::{bit_is_set, IdleView};
use crate::policy::steal::StealOutcome;
use crate::policy::steal_chain::{self, StealArgs};
use crate::policy::{avg_load, detach_load, sparsemask};

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
/// bench-hooks`); the kernel then runs its stock C at that call site. With
/// `--cfg slb_hostile` (`SLB_HOSTILE=1`) the callback is the hostile twin
/// from `crate::hostile`, which answers out of range on purpose.
macro_rules! callback {
    ($left_out:ident, $f:ident) => {
        if cfg!($left_out) {
            None
        } else {
            #[cfg(not(slb_hostile))]
            let f = $f;
            #[cfg(slb_hostile)]
            let f = crate::hostile::$f;
            Some(f)
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
    newidle_account: callback!(slb_no_hook_newidle_stop, newidle_account),
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
pub(crate) struct HookStats {
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

    /// Counts one call, whether its answer was `true`, and the flags its
    /// arguments carried on (see [`FLAGS`]); KUnit's calls are left out,
    /// asked once per call.
    pub(crate) fn record(&self, hit: bool, flags: &[(Flag, bool)]) -> bool {
        if !in_kunit_test() {
            self.calls.fetch_add(1, Ordering::Relaxed);
            if hit {
                self.hits.fetch_add(1, Ordering::Relaxed);
            }
            for &(flag, on) in flags {
                if on {
                    if let Some((_, n)) = FLAGS.get(flag as usize) {
                        n.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
        }
        hit
    }
}

static IDLE_CPUS: HookStats = HookStats::new();
static DETACH: HookStats = HookStats::new();
static AVG_LOAD: HookStats = HookStats::new();
pub(crate) static INTERVAL: HookStats = HookStats::new();
static NEWIDLE: HookStats = HookStats::new();
/// `calls`: newidle attempts and pulls accounted; `true`: the pulls.
pub(crate) static STREAK: HookStats = HookStats::new();
pub(crate) static SIS: HookStats = HookStats::new();
/// What the SIS scans that visited at least one CPU cost, as the shim timed
/// them: how many, total nanoseconds, total CPUs or cores visited. Calls
/// whose budget was zero (SIS_UTIL: overloaded) are only in `calls`.
static SIS_SCANS: AtomicU64 = AtomicU64::new(0);
static SIS_SCAN_NS: AtomicU64 = AtomicU64::new(0);
static SIS_LOOPS: AtomicU64 = AtomicU64::new(0);
/// STEAL: `calls` counts CPUs about to idle-balance that asked, `true` the
/// ones the policy let try (Sistare's "tried"); then how many victims were
/// tried and how many steals succeeded.
pub(crate) static STEAL: HookStats = HookStats::new();
static STEAL_ATTEMPTS: AtomicU64 = AtomicU64::new(0);
static STEAL_STOLEN: AtomicU64 = AtomicU64::new(0);

/// The `sched_feat` flags as the call sites hand them to the hooks: how
/// many hook calls (KUnit's left out) carried each flag on, in
/// `/sys/kernel/debug/sched_lb_rs/flags/<FLAG>`. The guest's `flagsites`
/// step flips each flag under load and requires its count to stay with
/// the flag off and to grow with it on, so a call site that passed the
/// wrong flag, or none, fails the run. The names are those of
/// `kunit/flags`, which the step iterates over.
static FLAGS: [(&CStr, AtomicU64); 11] = [
    (c"BALANCE_IDLE_CPUS", AtomicU64::new(0)),
    (c"BALANCE_IDLE_LLC2", AtomicU64::new(0)),
    (c"LB_RELAX_FAILED", AtomicU64::new(0)),
    (c"LB_BUSY_INTERVAL_DEC", AtomicU64::new(0)),
    (c"NEWIDLE_BACKOFF", AtomicU64::new(0)),
    (c"SD_MIGRATION_COST", AtomicU64::new(0)),
    (c"SIS_PROP", AtomicU64::new(0)),
    (c"SIS_AGE", AtomicU64::new(0)),
    (c"SIS_ONCE", AtomicU64::new(0)),
    (c"SIS_FOLD", AtomicU64::new(0)),
    (c"STEAL", AtomicU64::new(0)),
];

/// Index of each flag in [`FLAGS`].
#[derive(Clone, Copy)]
pub(crate) enum Flag {
    BalanceIdleCpus,
    BalanceIdleLlc2,
    LbRelaxFailed,
    LbBusyIntervalDec,
    NewidleBackoff,
    SdMigrationCost,
    SisProp,
    SisAge,
    SisOnce,
    SisFold,
    Steal,
}

/// Every hook's counters, with the debugfs directory name of each.
static STATS: [(&CStr, &HookStats); 8] = [
    (c"idle_cpus_balanced", &IDLE_CPUS),
    (c"detach_skip", &DETACH),
    (c"avg_load_balanced", &AVG_LOAD),
    (c"balance_interval", &INTERVAL),
    (c"newidle_stop", &NEWIDLE),
    (c"newidle_account", &STREAK),
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
pub(crate) unsafe extern "C" fn idle_cpus_balanced(
    args: *const bindings::sched_lb_idle_cpus_args,
) -> bool {
    // SAFETY: the caller guarantees `args` is valid for reads (see above).
    let a = unsafe { args.read() };
    let flags = IdleCpusFlags {
        balance_idle_cpus: a.balance_idle_cpus,
        balance_idle_llc2: a.balance_idle_llc2,
    };
    IDLE_CPUS.record(
        idle_cpus::decide(a.local_idle_cpus, a.busiest_idle_cpus, a.llc_size, flags),
        &[
            (Flag::BalanceIdleCpus, a.balance_idle_cpus),
            (Flag::BalanceIdleLlc2, a.balance_idle_llc2),
        ],
    )
}

/// Seed 001, patch 1: the `migrate_load` test of `detach_tasks()`.
///
/// # Safety
///
/// As for [`idle_cpus_balanced()`].
pub(crate) unsafe extern "C" fn detach_skip(args: *const bindings::sched_lb_detach_args) -> bool {
    // SAFETY: as for `idle_cpus_balanced()`.
    let a = unsafe { args.read() };
    DETACH.record(
        detach_load::decide(
            a.load,
            a.imbalance,
            a.nr_balance_failed,
            a.cache_nice_tries,
            a.relax_failed,
        ),
        &[(Flag::LbRelaxFailed, a.relax_failed)],
    )
}

/// Seed 001, patch 2: the `imbalance_pct` test.
///
/// # Safety
///
/// As for [`idle_cpus_balanced()`].
pub(crate) unsafe extern "C" fn avg_load_balanced(
    args: *const bindings::sched_lb_avg_load_args,
) -> bool {
    // SAFETY: as for `idle_cpus_balanced()`.
    let a = unsafe { args.read() };
    AVG_LOAD.record(
        avg_load::avg_load_balanced(a.busiest_avg_load, a.local_avg_load, a.imbalance_pct),
        &[],
    )
}

/// Seed 001, patches 3 and 4: `get_sd_balance_interval()`.
///
/// # Safety
///
/// As for [`idle_cpus_balanced()`].
pub(crate) unsafe extern "C" fn balance_interval(
    args: *const bindings::sched_lb_interval_args,
) -> u64 {
    // SAFETY: as for `idle_cpus_balanced()`.
    let a = unsafe { args.read() };
    INTERVAL.record(a.cpu_busy, &[(Flag::LbBusyIntervalDec, a.busy_dec)]);
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
///
/// # Safety
///
/// As for [`idle_cpus_balanced()`].
pub(crate) unsafe extern "C" fn newidle_stop(args: *const bindings::sched_lb_newidle_args) -> bool {
    // SAFETY: as for `idle_cpus_balanced()`.
    let a = unsafe { args.read() };
    let stop = newidle_walk::stop_at_domain(WalkStep {
        avg_idle_ns: a.avg_idle_ns,
        curr_cost_ns: a.curr_cost_ns,
        max_newidle_lb_cost_ns: a.max_newidle_lb_cost_ns,
        migration_cost_ns: a.migration_cost_ns,
        consecutive_failures: a.consecutive_failures,
        backoff: a.backoff,
        migration_cost: a.migration_cost,
    });
    NEWIDLE.record(
        stop,
        &[
            (Flag::NewidleBackoff, a.backoff),
            (Flag::SdMigrationCost, a.migration_cost),
        ],
    )
}

/// Seed 003: the failure streak `newidle_stop` backs off on, after each
/// newidle attempt and each pull to the CPU.
///
/// # Safety
///
/// As for [`idle_cpus_balanced()`].
unsafe extern "C" fn newidle_account(args: *mut bindings::sched_lb_streak_args) {
    // SAFETY: as for `idle_cpus_balanced()`, and the shim lets us write
    // the out fields; nothing else holds the struct during the call.
    let a = unsafe { &mut *args };
    STREAK.record(a.pulled, &[]);
    let s = newidle_streak::account(
        Streak {
            failures: a.failures,
            stamp_jiffies: a.stamp_jiffies,
        },
        a.now_jiffies,
        a.pulled,
    );
    a.failures = s.failures;
    a.stamp_jiffies = s.stamp_jiffies;
}

// cpumask words are `unsigned long`; the policy reads them as 64-bit words.
const _: () = assert!(
    usize::BITS == u64::BITS,
    "sched_lb_rs assumes 64-bit cpumask words"
);

/// Words of a cpumask of `nbits` bits.
fn cpumask_words(nbits: u32) -> u32 {
    nbits.div_ceil(u64::BITS)
}

/// `nwords` bitmap words that other CPUs may write while they are read.
///
/// The lifetime is the caller's to tie: every caller below returns the
/// slice from a method of a type whose invariants say how long the memory
/// lives, so no slice outlives the call it was made for.
///
/// # Safety
///
/// `bits` is NULL (the slice is then empty) or points to `nwords` aligned
/// `unsigned long`s that stay allocated for `'a`. Other CPUs may change
/// them only with atomic bit operations or word-sized stores, which is how
/// the kernel writes cpumasks and sparsemasks.
unsafe fn shared_words<'a>(bits: *const usize, nwords: u32) -> &'a [AtomicU64] {
    if bits.is_null() || nwords == 0 {
        return &[];
    }
    // SAFETY: see the function's contract; `AtomicU64` has the size and
    // alignment of `u64`, which is `unsigned long` here (checked above),
    // and atomic loads of memory other CPUs write are what it is for.
    unsafe { core::slice::from_raw_parts(bits.cast::<AtomicU64>(), nwords as usize) }
}

/// A CPU number for a callback into C. The policy only produces CPUs it
/// read from the kernel's masks; one that does not fit is passed as -1,
/// which the kernel refuses.
fn c_cpu(cpu: u32) -> c_int {
    c_int::try_from(cpu).unwrap_or(-1)
}

/// One `select_idle_cpu()` scan: the shim's masks and callbacks, as the
/// policy's [`IdleView`].
///
/// # Invariants
///
/// `args` points to the `sched_lb_sis_args` the shim built for the scan in
/// progress, valid until the `sis_select` call that made this view
/// returns, which outlives the view. Its `cpus` and `cores` point to
/// cpumasks of `nbits` bits that live as long (the shim's per-CPU scratch
/// mask and the LLC's `sched_lb_llc`, freed only after an RCU grace
/// period), and its callbacks may be called with `args` until then.
struct KernelView {
    args: *const bindings::sched_lb_sis_args,
    cpu_idle: unsafe extern "C" fn(*const bindings::sched_lb_sis_args, c_int) -> bool,
    smt_mask:
        Option<unsafe extern "C" fn(*const bindings::sched_lb_sis_args, c_int) -> *const usize>,
    cpus: *const usize,
    cores: *const usize,
    nwords: u32,
}

impl KernelView {
    /// # Safety
    ///
    /// `args` points to the argument struct of the scan in progress, as
    /// the type's invariants say, and `a` is a copy of it.
    unsafe fn new(
        args: *const bindings::sched_lb_sis_args,
        a: &bindings::sched_lb_sis_args,
        cpu_idle: unsafe extern "C" fn(*const bindings::sched_lb_sis_args, c_int) -> bool,
    ) -> Self {
        // INVARIANT: the caller's contract.
        KernelView {
            args,
            cpu_idle,
            smt_mask: a.smt_mask,
            cpus: a.cpus,
            cores: a.cores,
            nwords: cpumask_words(a.nbits),
        }
    }
}

impl LlcView for KernelView {
    type Mask = [AtomicU64];

    /// The LLC's span masked by the task's affinity.
    fn cpus(&self) -> &[AtomicU64] {
        // SAFETY: by the type invariants `cpus` is a cpumask of `nbits`
        // bits that outlives `self`.
        unsafe { shared_words(self.cpus, self.nwords) }
    }

    /// The first thread of each core of the LLC.
    fn cores(&self) -> &[AtomicU64] {
        // SAFETY: as for `cpus()`.
        unsafe { shared_words(self.cores, self.nwords) }
    }

    fn has_siblings(&self) -> bool {
        self.smt_mask.is_some()
    }

    /// The SMT siblings of `core`; empty without the callback.
    fn siblings(&self, core: u32) -> &[AtomicU64] {
        let Some(smt_mask) = self.smt_mask else {
            return &[];
        };
        // SAFETY: by the type invariants the callback may be called with
        // `args`; it returns a CPU's SMT mask (or an empty one for a CPU
        // outside the LLC), which lives as long as the topology, past this
        // scan.
        unsafe { shared_words(smt_mask(self.args, c_cpu(core)), self.nwords) }
    }
}

impl IdleView for KernelView {
    fn idle(&self, cpu: u32) -> bool {
        // SAFETY: by the type invariants `cpu_idle` may be called with
        // `args`; the shim refuses a CPU outside the LLC.
        unsafe { (self.cpu_idle)(self.args, c_cpu(cpu)) }
    }

    fn allowed(&self, cpu: u32) -> bool {
        bit_is_set(self.cpus(), cpu)
    }
}

/// Seed 002: `select_idle_cpu()`'s scan of the LLC (RFC 01 to 06).
///
/// # Safety
///
/// As for [`idle_cpus_balanced()`].
pub(crate) unsafe extern "C" fn sis_select(args: *mut bindings::sched_lb_sis_args) -> c_int {
    // SAFETY: as for `idle_cpus_balanced()`. Read once: the callbacks
    // below get `args` back, so no reference into it stays alive.
    let a = unsafe { args.read() };
    // The shim always passes `cpu_idle`; without it there is no scan and
    // nothing to write back.
    let Some(cpu_idle) = a.cpu_idle else {
        // SAFETY: `args` is valid for writes of its out fields.
        unsafe {
            (*args).loops = 0;
            (*args).found_idle_core = false;
        }
        return -1;
    };
    // SAFETY: `args` is the struct of the scan in progress and `a` its copy.
    let view = unsafe { KernelView::new(args, &a, cpu_idle) };
    let answer = sis_chain::select(
        &view,
        &SisInput {
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
        },
    );
    let scan = answer.scan;
    SIS.record(
        scan.cpu.is_some(),
        &[
            (Flag::SisProp, a.sis_prop),
            (Flag::SisAge, a.sis_age),
            (Flag::SisOnce, a.sis_once),
            (Flag::SisFold, a.sis_fold),
        ],
    );
    // SAFETY: `args` is valid for writes of its out fields and no
    // reference into it is alive.
    unsafe {
        (*args).loops = scan.loops;
        (*args).found_idle_core = scan.found_idle_core;
        (*args).wake_avg_ns = answer.wake.avg_ns;
        (*args).wake_stamp = answer.wake.stamp_jiffies;
    }
    scan.cpu.map_or(-1, c_cpu)
}

/// Seed 002: the statistics after a scan (RFC 01, 03).
///
/// # Safety
///
/// As for [`idle_cpus_balanced()`].
pub(crate) unsafe extern "C" fn sis_account(args: *mut bindings::sched_lb_sis_args) {
    // SAFETY: as for `sis_select()`; no callback into C follows, so the
    // struct is ours for the call.
    let a = unsafe { &mut *args };
    if a.loops > 0 && !in_kunit_test() {
        SIS_SCANS.fetch_add(1, Ordering::Relaxed);
        SIS_SCAN_NS.fetch_add(a.scan_time_ns, Ordering::Relaxed);
        SIS_LOOPS.fetch_add(u64::from(a.loops), Ordering::Relaxed);
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

// The shim lays out the overloaded mask as the policy reads it.
const _: () = assert!(
    bindings::SCHED_LB_STEAL_LINE_BYTES == sparsemask::LINE_BYTES,
    "sparsemask line size differs between kernel and policy"
);

/// The masks of one steal attempt.
///
/// # Invariants
///
/// `a` is a copy of the `sched_lb_steal_args` of a `steal` call in
/// progress, which the shim makes under `rcu_read_lock()`: its
/// `overloaded` sparsemask (the LLC's, freed only after a grace period),
/// `llc` span and `siblings` mask stay allocated until that call returns,
/// which outlives `self`.
struct StealMasks {
    a: bindings::sched_lb_steal_args,
}

impl StealMasks {
    /// # Safety
    ///
    /// `a` is a copy of the argument struct of the `steal` call in
    /// progress, as the type's invariants say.
    unsafe fn new(a: bindings::sched_lb_steal_args) -> Self {
        // INVARIANT: the caller's contract.
        StealMasks { a }
    }

    fn overloaded(&self) -> &[AtomicU64] {
        // SAFETY: by the type invariants, a sparsemask of
        // `overloaded_words` words that outlives `self`.
        unsafe { shared_words(self.a.overloaded, self.a.overloaded_words) }
    }

    fn llc(&self) -> &[AtomicU64] {
        // SAFETY: by the type invariants, a cpumask of `nbits` bits.
        unsafe { shared_words(self.a.llc, cpumask_words(self.a.nbits)) }
    }

    fn siblings(&self) -> &[AtomicU64] {
        // SAFETY: as for `llc()`.
        unsafe { shared_words(self.a.siblings, cpumask_words(self.a.nbits)) }
    }
}

/// Sistare's STEAL (seed 002 thread): whether to steal, and which
/// overloaded CPUs of the LLC to try in which order; the shim's
/// `steal_from` moves the task under the runqueue locks.
///
/// # Safety
///
/// As for [`idle_cpus_balanced()`].
pub(crate) unsafe extern "C" fn steal(args: *mut bindings::sched_lb_steal_args) -> c_int {
    // SAFETY: as for `idle_cpus_balanced()`. Copied out before anything
    // else: `steal_from` gets `args` back and the shim reads it.
    let masks = unsafe { StealMasks::new(args.read()) };
    let a = &masks.a;
    // The shim always passes `steal_from`; without it nothing can move.
    let Some(steal_from) = a.steal_from else {
        // SAFETY: `args` is valid for writes of its out fields.
        unsafe {
            (*args).tried = false;
            (*args).attempts = 0;
        }
        return -1;
    };
    let result = steal_chain::steal(
        &StealArgs {
            enabled: a.enabled,
            numa_nodes: a.numa_nodes,
            nr_runnable: a.nr_runnable,
            avg_idle_ns: a.avg_idle_ns,
            avg_steal_cost_ns: a.avg_steal_cost_ns,
            this_cpu: a.this_cpu,
            bits_per_line: a.bits_per_line,
            overloaded_base: a.overloaded_base,
        },
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
    );
    STEAL.record(result.tried, &[(Flag::Steal, a.enabled)]);
    if !in_kunit_test() {
        STEAL_ATTEMPTS.fetch_add(u64::from(result.attempts), Ordering::Relaxed);
        if result.from.is_some() {
            STEAL_STOLEN.fetch_add(1, Ordering::Relaxed);
        }
    }
    // SAFETY: `args` is valid for writes of its out fields and no
    // reference into it is alive.
    unsafe {
        (*args).tried = result.tried;
        (*args).attempts = result.attempts;
    }
    result.from.map_or(-1, c_cpu)
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

/// A debugfs directory this module created.
///
/// # Invariants
///
/// `0` came from `debugfs_create_dir()`: a dentry, or an `ERR_PTR`, which
/// every debugfs function accepts and ignores, so a missing debugfs costs
/// the counters, never the policies.
struct DebugfsDir(*mut bindings::dentry);

// SAFETY: the dentry pointer is only handed back to debugfs, which does its
// own locking; nothing here dereferences it.
unsafe impl Send for DebugfsDir {}
// SAFETY: as above; `&DebugfsDir` gives no access to the dentry.
unsafe impl Sync for DebugfsDir {}

impl DebugfsDir {
    /// `name` in the debugfs root, or in `parent`.
    fn create(name: &CStr, parent: Option<&DebugfsDir>) -> Self {
        let parent = parent.map_or(ptr::null_mut(), |p| p.0);
        // SAFETY: `name` is a valid C string; `parent` is NULL (the debugfs
        // root) or a dentry from an earlier call, by the type invariants.
        // INVARIANT: the result comes from debugfs_create_dir().
        DebugfsDir(unsafe { bindings::debugfs_create_dir(name.as_ptr().cast(), parent) })
    }

    /// A read-only file `name` showing `value`.
    fn counter(&self, name: &'static CStr, value: &'static AtomicU64) {
        // SAFETY: `name` is a valid C string, `self.0` a dentry or ERR_PTR
        // (type invariants), and `value` a `'static` u64 (AtomicU64 has
        // u64's layout); debugfs reads it with plain 64-bit loads, which do
        // not tear on the 64-bit targets this module is built for. The
        // files are removed in `drop()` of the root, before the module's
        // data goes.
        unsafe {
            bindings::debugfs_create_u64(name.as_ptr().cast(), 0o444, self.0, value.as_ptr())
        };
    }

    /// `/sys/kernel/debug/sched_lb_rs/<hook>/{calls,true}`, read-only, plus
    /// `sis_select/{scans,scan_ns,loops}`, `steal/{attempts,stolen}` and
    /// `flags/<FLAG>`.
    fn counters() -> Self {
        let root = DebugfsDir::create(c"sched_lb_rs", None);
        let flags = DebugfsDir::create(c"flags", Some(&root));
        for (name, n) in FLAGS.iter() {
            flags.counter(name, n);
        }
        for (name, stats) in STATS.iter() {
            let dir = DebugfsDir::create(name, Some(&root));
            dir.counter(c"calls", &stats.calls);
            dir.counter(c"true", &stats.hits);
            if ptr::eq(*stats, &SIS) {
                dir.counter(c"scans", &SIS_SCANS);
                dir.counter(c"scan_ns", &SIS_SCAN_NS);
                dir.counter(c"loops", &SIS_LOOPS);
            }
            if ptr::eq(*stats, &STEAL) {
                dir.counter(c"attempts", &STEAL_ATTEMPTS);
                dir.counter(c"stolen", &STEAL_STOLEN);
            }
        }
        root
    }
}

/// Owns the root directory of the counters; removing it removes them all.
struct DebugfsRoot(DebugfsDir);

impl Drop for DebugfsRoot {
    fn drop(&mut self) {
        // SAFETY: by the type invariants of `DebugfsDir` the pointer came
        // from debugfs_create_dir() (or is an ERR_PTR, which
        // debugfs_remove() ignores); removal is recursive and waits for
        // readers of the files to finish.
        unsafe { bindings::debugfs_remove(self.0 .0) };
    }
}

/// Owns the registration of [`OPS`] and the debugfs counters; dropping it
/// unregisters the table, then removes the counters.
pub(crate) struct Registration {
    _debugfs: DebugfsRoot,
}

impl Registration {
    /// Publishes the table and enables the static key.
    pub(crate) fn new() -> Result<Self> {
        let debugfs = DebugfsRoot(DebugfsDir::counters());
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
