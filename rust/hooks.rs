// SPDX-License-Identifier: GPL-2.0

//! All FFI glue between `<linux/sched/lb_hooks.h>` and the policy rules.
//!
//! The types come from bindgen (`kernel::bindings`), never from a copy: the
//! series adds the header to `rust/bindings/bindings_helper.h`. Each
//! `extern "C"` callback takes its scalar parameters (the boolean and
//! interval hooks, whose inputs travel in registers) or copies its argument
//! struct out (the others), calls the pure functions of `crate::policy` and
//! returns or writes the answer back. Nothing here
//! sleeps, allocates or locks: the callbacks run inside the load balancer
//! with preemption disabled. The one exception is `steal`, whose
//! `steal_from` callback into the kernel drops this CPU's runqueue lock and
//! takes the victim's (the header states the contract).
//!
//! Three rules keep the Rust side sound while the kernel runs around it:
//!
//! - An argument struct is read once, by value. Callbacks into the kernel
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
//! The only state is a pair of statistics counters per hook, one of each
//! per CPU ([`Counter`]), published in debugfs.

use core::ffi::{c_int, c_void, CStr};
use core::ptr;
use core::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use kernel::bindings;
use kernel::error::to_result;
use kernel::prelude::*;

use crate::policy::balance_interval;
use crate::policy::idle_cpus::{self, IdleCpusFlags};
use crate::policy::newidle_streak::{self, Streak};
use crate::policy::newidle_walk::{self, WalkStep};
use crate::policy::sis_chain::{self, LlcView, SisFlags, SisInput, WakeAvg};
use crate::policy::sis_select::{bit_is_set, IdleView};
use crate::policy::steal::StealOutcome;
use crate::policy::steal_chain::{self, StealArgs};
use crate::policy::{avg_load, avg_load::AvgLoadInput, detach_load, sparsemask};

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

/// `Some(callback)`, the counting instance, or `None` where the build left
/// the hook out with `--cfg NAME` (`SLB_HOOKS_OFF` in `Kbuild`, used only
/// by `make bench-hooks`); the kernel then runs its stock C at that call
/// site. With `--cfg slb_hostile` (`SLB_HOSTILE=1`) the callback is the
/// hostile twin from `crate::hostile`, which answers out of range on
/// purpose.
macro_rules! unless_left_out {
    ($left_out:ident, $f:ident) => {
        if cfg!($left_out) {
            None
        } else {
            #[cfg(not(slb_hostile))]
            let f = $f::<true>;
            #[cfg(slb_hostile)]
            let f = crate::hostile::$f::<true>;
            Some(f)
        }
    };
}

/// A `&'static CStr` from a string constant, made at compile time.
macro_rules! c_name {
    ($s:expr) => {
        const {
            match CStr::from_bytes_with_nul(concat!($s, "\0").as_bytes()) {
                Ok(c) => c,
                Err(_) => panic!("a name with an inner NUL"),
            }
        }
    };
}

/// Each argument struct's size as this module sees it, in `enum
/// sched_lb_args` order. The kernel refuses a table whose sizes differ
/// from its own, so a module built against another layout of one of them
/// never runs, whatever the ABI version says.
const ARGS_SIZE: [u32; bindings::sched_lb_args_SCHED_LB_NR_ARGS as usize] = {
    use bindings::*;
    use core::mem::size_of;
    let mut s = [0u32; sched_lb_args_SCHED_LB_NR_ARGS as usize];
    s[sched_lb_args_SCHED_LB_ARGS_STREAK as usize] = size_of::<sched_lb_streak_args>() as u32;
    s[sched_lb_args_SCHED_LB_ARGS_SIS as usize] = size_of::<sched_lb_sis_args>() as u32;
    s[sched_lb_args_SCHED_LB_ARGS_STEAL as usize] = size_of::<sched_lb_steal_args>() as u32;
    // A struct the kernel added to the enum but not here fails the build.
    let mut i = 0;
    while i < s.len() {
        assert!(
            s[i] != 0,
            "an argument struct of enum sched_lb_args has no size here"
        );
        i += 1;
    }
    s
};

/// `kunit/flags`: the series' `sched_feat` flags, one name a line, the
/// one list of them that the guest, the scripts and the simulator read
/// too.
const FLAG_LIST: &str = include_str!("../kunit/flags");

/// Whether line `i` of `list` is `name` (const: no iterators).
const fn line_is(list: &[u8], mut i: usize, name: &[u8]) -> bool {
    let mut j = 0;
    while j < name.len() {
        if i >= list.len() || list[i] != name[j] {
            return false;
        }
        i += 1;
        j += 1;
    }
    i == list.len() || list[i] == b'\n'
}

/// The line of `name` in `list`, or `None`.
const fn line_of(list: &str, name: &str) -> Option<usize> {
    let (list, name) = (list.as_bytes(), name.as_bytes());
    let (mut i, mut line) = (0, 0);
    while i < list.len() {
        if line_is(list, i, name) {
            return Some(line);
        }
        while i < list.len() && list[i] != b'\n' {
            i += 1;
        }
        i += 1;
        line += 1;
    }
    None
}

/// Lines in `list` (a last line without `\n` counts).
const fn lines(list: &str) -> usize {
    let list = list.as_bytes();
    let (mut i, mut n) = (0, 0);
    while i < list.len() {
        if list[i] == b'\n' || i + 1 == list.len() {
            n += 1;
        }
        i += 1;
    }
    n
}

/// The index of a flag in `kunit/flags`; a name not listed there does not
/// compile.
macro_rules! flag {
    ($name:ident) => {
        const {
            match line_of(FLAG_LIST, stringify!($name)) {
                Some(i) => i,
                None => panic!(concat!(stringify!($name), " is not in kunit/flags")),
            }
        }
    };
}

/// The hook table: from one line per callback of `struct sched_lb_ops`
/// come the ops table this module registers, each hook's counters and
/// their debugfs files. Each line names the callback (as its field), the
/// `SLB_HOOKS_OFF` switch that leaves it out (a hook and the one that
/// accounts for it go together), the static of its counters, the name of
/// the counter of `true` answers, the `sched_feat` flags its calls carry
/// (in the order its callback passes them to `record()`), and any further
/// counters of its own. Kbuild reads the switches, and the host tools the
/// callback names, from these lines (`scripts/lib.sh`: `slb_hooks`), so
/// they stay one per line.
macro_rules! hook_table {
    ($($hook:ident => $switch:ident, $stats:ident, $hits:ident ($($flag:ident),*)
       $([$($extra:ident: $xstat:ident),+])?;)+) => {
        /// The hooks' counters, in slot order.
        const STAT_NAMES: &[&str] = &[$(stringify!($stats)),+];
        /// How many flags each hook's calls carry, in slot order.
        const STAT_FLAGS: &[usize] = &[$(<[usize]>::len(&[$(flag!($flag)),*])),+];
        /// The further counters, in slot order, after the hooks'.
        const EXTRA_NAMES: &[&str] = &[$($($(stringify!($xstat),)+)?)+];
        $(
            #[doc = concat!("Calls of `", stringify!($hook), "`, by its `", stringify!($hits), "` answer and flags.")]
            pub(crate) static $stats: HookStats<
                { <[usize]>::len(&[$(flag!($flag)),*]) },
                { hist_base(index_of(STAT_NAMES, stringify!($stats))) },
            > = HookStats::NEW;
            $($(
                #[doc = concat!("`", stringify!($hook), "/", stringify!($extra), "` in debugfs.")]
                static $xstat: Counter =
                    Counter::at(hist_base(STAT_NAMES.len()) + index_of(EXTRA_NAMES, stringify!($xstat)));
            )+)?
        )+

        /// The `sched_feat` flags as the call sites hand them to the
        /// hooks: how many hook calls (KUnit's left out) carried each flag
        /// on, in `/sys/kernel/debug/sched_lb_rs/flags/<FLAG>`, the part
        /// of its hook's histogram with the flag's bit set (each flag of
        /// `kunit/flags` is carried by one hook). The guest's `flagsites`
        /// step flips each flag under load and requires its count to stay
        /// with the flag off and to grow with it on, so a call site that
        /// passed the wrong flag, or none, fails the run.
        static FLAG_CALLS: [Counter; lines(FLAG_LIST)] = {
            let mut calls = [Counter::NONE; lines(FLAG_LIST)];
            $(
                let mut _bit = 0;
                $(
                    calls[flag!($flag)] = $stats.with_flag(_bit);
                    _bit += 1;
                )*
            )+
            // A flag no hook carries would count nothing: fail the build.
            let mut i = 0;
            while i < calls.len() {
                assert!(calls[i].n > 0, "a flag of kunit/flags that no hook carries");
                i += 1;
            }
            calls
        };

        /// The table this module registers. The C suite reaches it by
        /// this name: its `site_cost` case unregisters it to time each
        /// hook's call site through it, then registers it again.
        #[export_name = "sched_lb_rs_ops"]
        static OPS: OpsTable = OpsTable(bindings::sched_lb_ops {
            abi_version: bindings::SCHED_LB_HOOKS_ABI_VERSION,
            // The C side checks this against its own sizeof(): a module
            // built against another layout is refused at registration.
            size: core::mem::size_of::<bindings::sched_lb_ops>() as u32,
            args_size: ARGS_SIZE,
            name: c"sched_lb_rs".as_ptr().cast(),
            $($hook: unless_left_out!($switch, $hook),)+
        });

        /// The table the KUnit suites ask, through the kernel's test entry
        /// points (the C suite reaches it by this name): every callback,
        /// in the instance that counts nothing, so the statistics show the
        /// scheduler's calls only, and no production call has to ask
        /// whether a test is running.
        #[cfg(all(CONFIG_SCHED_LB_HOOKS_KUNIT, not(slb_no_kunit)))]
        #[no_mangle]
        static sched_lb_rs_kunit_ops: OpsTable = OpsTable(bindings::sched_lb_ops {
            abi_version: bindings::SCHED_LB_HOOKS_ABI_VERSION,
            size: core::mem::size_of::<bindings::sched_lb_ops>() as u32,
            args_size: ARGS_SIZE,
            name: c"sched_lb_rs-kunit".as_ptr().cast(),
            $($hook: Some($hook::<false>),)+
        });

        /// Every hook's name, calls and `true` answers.
        static STATS: &[(&CStr, &Counter, &Counter)] =
            &[$((c_name!(stringify!($hook)), &$stats.calls, &$stats.hits)),+];

        impl DebugfsDir {
            /// `/sys/kernel/debug/sched_lb_rs/<hook>/{calls,<hits>,...}`
            /// and `flags/<FLAG>`, read-only.
            fn counters() -> Self {
                let root = DebugfsDir::create(c"sched_lb_rs", None);
                let flags = DebugfsDir::create(c"flags", Some(&root));
                for (i, n) in FLAG_CALLS.iter().enumerate() {
                    flags.flag_counter(i, n);
                }
                $(
                    let dir = DebugfsDir::create(c_name!(stringify!($hook)), Some(&root));
                    dir.counter(c"calls", &$stats.calls);
                    dir.counter(c_name!(stringify!($hits)), &$stats.hits);
                    $($(dir.counter(c_name!(stringify!($extra)), &$xstat);)+)?
                )+
                root
            }
        }
    };
}

hook_table! {
    idle_cpus_balanced => slb_no_hook_idle_cpus_balanced, IDLE_CPUS, balanced (BALANCE_IDLE_CPUS, BALANCE_IDLE_LLC2);
    detach_skip => slb_no_hook_detach_skip, DETACH, skipped (LB_RELAX_FAILED);
    avg_load_balanced => slb_no_hook_avg_load_balanced, AVG_LOAD, balanced (LB_REDUCED_IMBALANCE_PCT);
    balance_interval => slb_no_hook_balance_interval, INTERVAL, busy (LB_BUSY_INTERVAL_DEC);
    newidle_stop => slb_no_hook_newidle_stop, NEWIDLE, stopped (NEWIDLE_BACKOFF, SD_MIGRATION_COST) [backoff_stops: NEWIDLE_BACKOFF_STOPS];
    newidle_account => slb_no_hook_newidle_stop, STREAK, pulled ();
    sis_select => slb_no_hook_sis_select, SIS, found (SIS_PROP, SIS_AGE, SIS_ONCE, SIS_FOLD);
    sis_account => slb_no_hook_sis_select, SIS_ACCOUNT, scans () [scan_ns: SIS_SCAN_NS, loops: SIS_LOOPS];
    steal => slb_no_hook_steal, STEAL, tried (STEAL) [attempts: STEAL_ATTEMPTS, stolen: STEAL_STOLEN];
}

/// The first slot of hook `i`'s histogram: each hook has `2 << flags`
/// slots, one per combination of its answer and its flags.
const fn hist_base(i: usize) -> usize {
    let mut base = 0;
    let mut j = 0;
    while j < i && j < STAT_FLAGS.len() {
        base += 2 << STAT_FLAGS[j];
        j += 1;
    }
    base
}

/// The table the KUnit suites ask (see `hook_table!`).
#[cfg(all(CONFIG_SCHED_LB_HOOKS_KUNIT, not(slb_no_kunit)))]
pub(crate) fn kunit_ops() -> &'static bindings::sched_lb_ops {
    &sched_lb_rs_kunit_ops.0
}

/// The position of `name` in `names`, at compile time (a name that is not
/// there does not compile).
const fn index_of(names: &[&str], name: &str) -> usize {
    let mut i = 0;
    while i < names.len() {
        if line_is(names[i].as_bytes(), 0, name.as_bytes()) {
            return i;
        }
        i += 1;
    }
    panic!("a counter missing from its list")
}

// `Counts::add()` is a `this_cpu_add()`: x86-64's `%gs`-relative add.
#[cfg(not(all(target_arch = "x86_64", CONFIG_SMP)))]
compile_error!("sched_lb_rs's per-CPU counters are written for x86-64 SMP kernels");

/// Slots in the per-CPU block of counters: the hooks' histograms, then
/// the further counters.
const NR_SLOTS: usize = hist_base(STAT_NAMES.len()) + EXTRA_NAMES.len();

/// The `__percpu` pointer to every CPU's `[u64; NR_SLOTS]`, or 0 while
/// there is none.
///
/// # Invariants
///
/// Non-zero only between [`CounterMemory::alloc()`], which stores a
/// pointer from `pcpu_alloc_noprof()` before the table is registered, and
/// the drop of that [`CounterMemory`], after the table is unregistered
/// (and an RCU grace period passed) and the debugfs files are removed.
static BLOCK: AtomicUsize = AtomicUsize::new(0);

/// A statistics counter, as debugfs shows it: the sum of some slots of the
/// per-CPU block, each of which only its CPU writes, over the CPUs.
/// `sis_select` runs at every wakeup and `detach_skip` for every candidate
/// task, so a counter in one shared cache line would bounce between all
/// the CPUs that wake or balance. Additions wrap, which after 2^64 events
/// is harmless for a statistic.
///
/// The slots are `first + i` for each `i < n` with every bit of `mask`
/// set in `i`: one slot for a plain counter, or the part of a hook's
/// histogram (see [`HookStats`]) with a given answer or flag.
#[derive(Clone, Copy)]
pub(crate) struct Counter {
    first: usize,
    n: usize,
    mask: usize,
}

impl Counter {
    /// Counts nothing (a placeholder while a table is built).
    const NONE: Counter = Counter {
        first: 0,
        n: 0,
        mask: 0,
    };

    /// The one slot `slot`.
    const fn at(slot: usize) -> Self {
        Counter {
            first: slot,
            n: 1,
            mask: 0,
        }
    }

    /// The sum over the CPUs and over the counter's slots.
    fn sum(&self) -> u64 {
        let mut total = 0u64;
        for i in 0..self.n {
            if i & self.mask == self.mask {
                total = total.wrapping_add(slot_sum(self.first.saturating_add(i)));
            }
        }
        total
    }
}

/// The sum over the possible CPUs of slot `slot`, read while they add to it.
fn slot_sum(slot: usize) -> u64 {
    let base = BLOCK.load(Ordering::Relaxed);
    if base == 0 || slot >= NR_SLOTS {
        return 0;
    }
    let pcpu = base.wrapping_add(slot * core::mem::size_of::<u64>());
    // SAFETY: `nr_cpu_ids` is set during boot, before any module loads,
    // and not written after.
    let nr_cpu_ids = unsafe { bindings::nr_cpu_ids };
    let mut total = 0u64;
    for cpu in 0..nr_cpu_ids as usize {
        // SAFETY: the possible mask and the per-CPU offsets are set up
        // during boot and not written after; reading one word of each
        // takes no reference to the `static mut`s.
        let (word, offset) = unsafe {
            let words = &raw const bindings::__cpu_possible_mask.bits;
            let offsets = &raw const bindings::__per_cpu_offset;
            (
                (*words).get(cpu / usize::BITS as usize).copied(),
                (*offsets).get(cpu).copied(),
            )
        };
        let (Some(word), Some(offset)) = (word, offset) else {
            break;
        };
        if word & (1 << (cpu % usize::BITS as usize)) == 0 {
            continue;
        }
        // `per_cpu_ptr(pcpu, cpu)`.
        let p = pcpu.wrapping_add(offset) as *mut u64;
        // SAFETY: `p` is `cpu`'s copy of a slot of the live block (the
        // invariants of `BLOCK`), aligned, which that CPU writes with
        // one 8-byte `add` or `inc`: an atomic load reads it whole.
        let v = unsafe { AtomicU64::from_ptr(p) }.load(Ordering::Relaxed);
        total = total.wrapping_add(v);
    }
    total
}

/// This CPU's counters, for one callback: the block's pointer is loaded
/// once, and each addition is then one instruction.
struct Counts {
    base: usize,
}

impl Counts {
    /// `None` while there is no block (never while a callback of the
    /// registered table runs, see [`BLOCK`]).
    #[inline(always)]
    fn get() -> Option<Self> {
        match BLOCK.load(Ordering::Relaxed) {
            0 => None,
            base => Some(Counts { base }),
        }
    }

    /// Adds one to this CPU's copy of slot `FIRST + index`, `index` being
    /// below 64: one `inc` with the slot's offset folded in, which an
    /// interrupt on this CPU cannot split either.
    #[inline(always)]
    fn bump<const FIRST: usize>(&self, index: usize) {
        const { assert!(FIRST < NR_SLOTS, "a histogram outside the block") };
        if index >= 64 || FIRST + index >= NR_SLOTS {
            return;
        }
        // SAFETY: `%gs:base + 8 * (FIRST + index)` is this CPU's copy of
        // a slot of the live per-CPU block, as in `add()`.
        unsafe {
            core::arch::asm!(
                "inc qword ptr gs:[{base} + {index} * 8 + {offset}]",
                base = in(reg) self.base,
                index = in(reg) index,
                offset = const FIRST * core::mem::size_of::<u64>(),
                options(nostack)
            )
        };
    }

    /// Adds `n` to this CPU's copy of the plain counter `c` (one slot): the
    /// C `this_cpu_add()`, one instruction that an interrupt on this CPU
    /// cannot split, so it needs neither a lock prefix nor disabled
    /// preemption to be exact (the callbacks run with preemption disabled
    /// anyway).
    #[inline(always)]
    fn add(&self, c: &Counter, n: u64) {
        let slot = c.first;
        if slot >= NR_SLOTS {
            return;
        }
        let pcpu = self.base.wrapping_add(slot * core::mem::size_of::<u64>());
        // SAFETY: `pcpu` is a slot of the live per-CPU block (the
        // invariants of `BLOCK`). On x86-64 SMP the `%gs` base is this
        // CPU's per-CPU offset, so `%gs:pcpu` is this CPU's copy, as the C
        // `this_cpu_add()` addresses it; nothing else writes it.
        unsafe {
            core::arch::asm!(
                "add qword ptr gs:[{pcpu}], {n}",
                pcpu = in(reg) pcpu,
                n = in(reg) n,
                options(nostack)
            )
        };
    }
}

/// The per-CPU block of counters; dropping it clears [`BLOCK`] and frees
/// the block, so it must outlive the registration and the debugfs files.
struct CounterMemory;

impl CounterMemory {
    /// Allocates the block, zeroed, and publishes it in [`BLOCK`].
    fn alloc() -> Result<Self> {
        let size = NR_SLOTS * core::mem::size_of::<u64>();
        // SAFETY: a plain allocation; the memory comes zeroed.
        let p = unsafe {
            bindings::pcpu_alloc_noprof(
                size,
                core::mem::align_of::<u64>(),
                false,
                bindings::GFP_KERNEL,
            )
        };
        if p.is_null() {
            return Err(ENOMEM);
        }
        // INVARIANT: a per-CPU pointer to `NR_SLOTS` zeroed `u64`s, set
        // before the table is registered.
        BLOCK.store(p as usize, Ordering::Relaxed);
        Ok(CounterMemory)
    }
}

impl Drop for CounterMemory {
    fn drop(&mut self) {
        let p = BLOCK.swap(0, Ordering::Relaxed);
        if p != 0 {
            // SAFETY: `p` came from `pcpu_alloc_noprof()` and is freed
            // once: the swap took it. No callback runs any more (the owner
            // unregistered the table first) and no debugfs file reads it
            // (removed before this runs).
            unsafe { bindings::free_percpu(p as *mut c_void) };
        }
    }
}

/// How often the scheduler asked a hook, with what answer and which of its
/// `N` flags on, published in debugfs so a run can show that its hooks were
/// exercised and that each call site passes its flags.
///
/// A call costs one addition, to the slot of its combination: slot
/// `first + (hit | on[0] << 1 | on[1] << 2 ...)` of the hook's `2 << N`
/// slots. The calls, the `true` answers and each flag's calls are sums of
/// those slots, made when debugfs reads them, not on the scheduler's path.
pub(crate) struct HookStats<const N: usize, const FIRST: usize> {
    /// Every slot of the hook.
    calls: Counter,
    /// The slots of a `true` answer.
    hits: Counter,
}

impl<const N: usize, const FIRST: usize> HookStats<N, FIRST> {
    /// Slots of the hook: one per answer and combination of flags.
    const SLOTS: usize = 2 << N;

    const NEW: Self = HookStats {
        calls: Self::part(0),
        hits: Self::part(1),
    };

    /// The hook's slots whose combination has every bit of `mask` set.
    const fn part(mask: usize) -> Counter {
        Counter {
            first: FIRST,
            n: Self::SLOTS,
            mask,
        }
    }

    /// The slots of the calls that carried the hook's flag number `bit` on.
    const fn with_flag(&self, bit: usize) -> Counter {
        Self::part(2 << bit)
    }

    /// Counts one call, its answer `hit` and its flags `on` (in the order
    /// of the hook's line in `hook_table!`), when `COUNT`: the KUnit
    /// table's instances count nothing.
    #[inline(always)]
    pub(crate) fn record<const COUNT: bool>(&self, hit: bool, on: [bool; N]) -> bool {
        if !COUNT {
            return hit;
        }
        if let Some(counts) = Counts::get() {
            let mut combination = usize::from(hit);
            for (bit, flag) in on.into_iter().enumerate() {
                combination |= usize::from(flag) << (bit + 1);
            }
            counts.bump::<FIRST>(combination & (Self::SLOTS - 1));
        }
        hit
    }
}

/// Galbraith, "sched: Further improve spurious CPU_IDLE active migrations"
/// (2016): the idle-CPU imbalance test of
/// `sched_balance_find_src_group()`.
///
/// This and the four callbacks after it take scalars, in registers, so
/// they read no memory of the kernel's and need no `# Safety`; bindgen
/// still types them `unsafe` in the table.
pub(crate) extern "C" fn idle_cpus_balanced<const COUNT: bool>(
    local_idle_cpus: u32,
    busiest_idle_cpus: u32,
    llc_size: u32,
    balance_idle_cpus: bool,
    balance_idle_llc2: bool,
) -> bool {
    let flags = IdleCpusFlags {
        balance_idle_cpus,
        balance_idle_llc2,
    };
    IDLE_CPUS.record::<COUNT>(
        idle_cpus::is_balanced(local_idle_cpus, busiest_idle_cpus, llc_size, flags),
        [balance_idle_cpus, balance_idle_llc2],
    )
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
    DETACH.record::<COUNT>(
        detach_load::should_skip(
            load,
            imbalance,
            nr_balance_failed,
            cache_nice_tries,
            relax_failed,
        ),
        [relax_failed],
    )
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
    AVG_LOAD.record::<COUNT>(
        avg_load::balanced(AvgLoadInput {
            busiest_avg_load,
            local_avg_load,
            imbalance_pct,
            above_llc,
            reduced,
        }),
        [reduced],
    )
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
    INTERVAL.record::<COUNT>(cpu_busy, [busy_dec]);
    // Milliseconds to jiffies at the HZ of the kernel this module was built
    // against (its vermagic ties the two), with that HZ's constants folded
    // in, as in the C. Not `bindings::HZ`: bindgen gives the uapi USER_HZ
    // (100) for that name.
    balance_interval::sd_balance_interval_jiffies_hz::<{ bindings::CONFIG_HZ }>(
        balance_interval_ms,
        busy_factor,
        cpu_busy,
        max_interval_jiffies,
        busy_dec,
    )
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
    let step = WalkStep {
        avg_idle_ns,
        curr_cost_ns: cost_ns,
        max_newidle_lb_cost_ns: 0,
        migration_cost_ns,
        consecutive_failures,
        newidle_backoff: backoff,
        sd_migration_cost: migration_cost,
    };
    let stop = newidle_walk::stop_at_domain(step);
    // Only a stop with the flag on can be the backoff's; the second
    // evaluation of the rule, and the load of the counters, are skipped
    // for every other answer.
    if COUNT && backoff && stop {
        if let Some(counts) = Counts::get() {
            counts.add(
                &NEWIDLE_BACKOFF_STOPS,
                u64::from(newidle_walk::stopped_by_backoff(step)),
            );
        }
    }
    NEWIDLE.record::<COUNT>(stop, [backoff, migration_cost])
}

/// Low (2013): the failure streak `newidle_stop` backs off on, after each
/// newidle attempt and each pull to the CPU.
///
/// # Safety
///
/// `args` points to a valid argument struct, which the C shim builds on
/// its stack for the duration of the call. The same holds for every
/// callback below.
unsafe extern "C" fn newidle_account<const COUNT: bool>(args: *mut bindings::sched_lb_streak_args) {
    // SAFETY: the caller guarantees `args` is valid (see above), and the
    // shim lets us write the out fields; nothing else holds the struct
    // during the call.
    let a = unsafe { &mut *args };
    STREAK.record::<COUNT>(a.pulled, []);
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

/// Zijlstra, "[RFC 00/11] select_idle_sibling rework" (2018):
/// `select_idle_cpu()`'s scan of the LLC, see `policy::sis_chain`.
///
/// # Safety
///
/// As for [`idle_cpus_balanced()`].
pub(crate) unsafe extern "C" fn sis_select<const COUNT: bool>(
    args: *mut bindings::sched_lb_sis_args,
) -> c_int {
    // SAFETY: as for `idle_cpus_balanced()`. Read once: the callbacks
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
    SIS.record::<COUNT>(
        scan.cpu.is_some(),
        [a.sis_prop, a.sis_age, a.sis_once, a.sis_fold],
    );
    // SAFETY: `args` is valid for writes of its out fields and no
    // reference into it is alive.
    unsafe {
        (*args).loops = scan.loops;
        (*args).clear_idle_cores = answer.clears_idle_cores();
        (*args).wake_avg_ns = answer.wake.avg_ns;
        (*args).wake_stamp = answer.wake.stamp_jiffies;
    }
    scan.cpu.map_or(-1, c_cpu)
}

/// The same RFC (01/11, 03/11): the statistics after a scan.
///
/// # Safety
///
/// As for [`idle_cpus_balanced()`].
pub(crate) unsafe extern "C" fn sis_account<const COUNT: bool>(
    args: *mut bindings::sched_lb_sis_args,
) {
    // SAFETY: as for `sis_select()`; no callback into C follows, so the
    // struct is ours for the call.
    let a = unsafe { &mut *args };
    // Scans whose budget was zero (SIS_UTIL: overloaded) visited nothing
    // and are only in `calls`.
    let scanned = SIS_ACCOUNT.record::<COUNT>(a.loops > 0, []);
    if COUNT && scanned {
        if let Some(counts) = Counts::get() {
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

/// Sistare's STEAL (his reply to the select_idle_sibling rework RFC,
/// 2018): whether to steal, and which
/// overloaded CPUs of the LLC to try in which order; the shim's
/// `steal_from` moves the task under the runqueue locks.
///
/// # Safety
///
/// As for [`idle_cpus_balanced()`].
pub(crate) unsafe extern "C" fn steal<const COUNT: bool>(
    args: *mut bindings::sched_lb_steal_args,
) -> c_int {
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
            // The shim asks only with sched_feat(STEAL) on.
            enabled: true,
            numa_nodes: a.numa_nodes,
            nr_runnable: a.nr_runnable,
            avg_idle_ns: a.avg_idle_ns,
            avg_steal_cost_ns: a.avg_steal_cost_ns,
            this_cpu: a.this_cpu,
            bits_per_line: bindings::SCHED_LB_STEAL_BITS_PER_LINE,
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
    STEAL.record::<COUNT>(result.tried, [true]);
    if COUNT {
        if let Some(counts) = Counts::get() {
            counts.add(&STEAL_ATTEMPTS, u64::from(result.attempts));
            counts.add(&STEAL_STOLEN, u64::from(result.from.is_some()));
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

    /// A read-only file `name` showing the sum of `value` over the CPUs.
    fn counter(&self, name: &CStr, value: &'static Counter) {
        // SAFETY: `name` is a valid C string, `self.0` a dentry or ERR_PTR
        // (type invariants), `COUNTER_FOPS` a valid table that keeps this
        // module loaded while a file is open, and `value` a `'static`
        // counter that `counter_get()` receives back. The files are
        // removed in `drop()` of the root, before the counters' memory
        // goes.
        unsafe {
            bindings::debugfs_create_file(
                name.as_ptr().cast(),
                0o444,
                self.0,
                ptr::from_ref(value).cast_mut().cast(),
                &COUNTER_FOPS.0,
            )
        };
    }

    /// `flags/<name>` for line `i` of `kunit/flags`, showing `value`.
    fn flag_counter(&self, i: usize, value: &'static Counter) {
        let Some(name) = FLAG_LIST.lines().nth(i) else {
            return;
        };
        // debugfs copies the name into its dentry: a terminated copy on
        // the stack will do. A name that does not fit goes without a file.
        let mut buf = [0u8; 48];
        let Some(dst) = buf.get_mut(..name.len()) else {
            return;
        };
        dst.copy_from_slice(name.as_bytes());
        if let Ok(c) = CStr::from_bytes_until_nul(&buf) {
            self.counter(c, value);
        }
    }
}

/// `struct file_operations` made shareable: immutable, and every pointer
/// in it is to `'static` code or to this module.
#[repr(transparent)]
struct FileOps(bindings::file_operations);

// SAFETY: never written after static initialisation.
unsafe impl Sync for FileOps {}

/// The counter files: the C `DEFINE_DEBUGFS_ATTRIBUTE()`, read-only. The
/// owner keeps the module loaded while a file is open, since these
/// operations are this module's data.
static COUNTER_FOPS: FileOps = FileOps(bindings::file_operations {
    owner: crate::THIS_MODULE.as_ptr(),
    open: Some(counter_open),
    release: Some(bindings::simple_attr_release),
    read: Some(bindings::debugfs_attr_read),
    // SAFETY: all-zero is a valid `file_operations`: every other member is
    // a NULL callback or a zero flag.
    ..unsafe { core::mem::zeroed() }
});

/// `open` of a counter file: the kernel's simple attribute, whose read
/// prints what [`counter_get()`] returns.
///
/// # Safety
///
/// Called by the VFS with a valid inode and file of a file that
/// [`DebugfsDir::counter()`] created.
unsafe extern "C" fn counter_open(inode: *mut bindings::inode, file: *mut bindings::file) -> c_int {
    // SAFETY: the VFS's arguments, passed on; the format prints one u64.
    unsafe {
        bindings::simple_attr_open(
            inode,
            file,
            Some(counter_get),
            None,
            c"%llu\n".as_ptr().cast(),
        )
    }
}

/// The value of a counter file.
///
/// # Safety
///
/// `data` is the `&'static Counter` that [`DebugfsDir::counter()`] gave
/// the file, and `val` is valid for a write.
unsafe extern "C" fn counter_get(data: *mut c_void, val: *mut u64) -> c_int {
    // SAFETY: the caller's contract.
    let counter = unsafe { &*data.cast::<Counter>() };
    // SAFETY: as above.
    unsafe { val.write(counter.sum()) };
    0
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

/// Owns the registration of [`OPS`], the debugfs counters and their
/// memory; dropping it unregisters the table, then removes the counter
/// files, then frees the counters (the fields drop in order).
pub(crate) struct Registration {
    _debugfs: DebugfsRoot,
    _counters: CounterMemory,
}

impl Registration {
    /// Publishes the table, which enables its hooks.
    pub(crate) fn new() -> Result<Self> {
        let counters = CounterMemory::alloc()?;
        let debugfs = DebugfsRoot(DebugfsDir::counters());
        // SAFETY: `OPS` is a valid, fully initialised table that lives for
        // the lifetime of the module, and `Drop` unregisters it before the
        // module text and data are freed.
        to_result(unsafe { bindings::sched_lb_ops_register(&OPS.0) }).inspect_err(|e| {
            pr_err!(
                "sched_lb_ops_register() failed ({:?}): kernel and module disagree on the lb_hooks ABI, or another policy is registered\n",
                e
            );
        })?;
        Ok(Registration {
            _debugfs: debugfs,
            _counters: counters,
        })
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        // SAFETY: `OPS` was registered by `new()`; unregistering disables
        // the keys, points the static calls back at the stock code and
        // waits for an RCU grace period, after which no CPU runs a
        // callback of ours.
        unsafe { bindings::sched_lb_ops_unregister(&OPS.0) };
        for (name, calls, hits) in STATS.iter() {
            pr_info!(
                "{}: {} calls, {} true\n",
                name.to_str().unwrap_or("?"),
                calls.sum(),
                hits.sum()
            );
        }
        pr_info!(
            "steal: {} victims tried, {} tasks stolen\n",
            STEAL_ATTEMPTS.sum(),
            STEAL_STOLEN.sum()
        );
    }
}
