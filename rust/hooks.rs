// SPDX-License-Identifier: GPL-2.0

//! All FFI glue between `<linux/sched/lb_hooks.h>` and the policy rules,
//! one concern a file:
//!
//! - this file: the hook table (`hook_table!`, the one list of the
//!   module's hooks), from which come the ops table it registers, the
//!   KUnit table, each hook's counters and their debugfs files, and the
//!   registration;
//! - [`callbacks`]: the nine `extern "C"` callbacks, each a call into
//!   `crate::policy`;
//! - [`views`]: the kernel's masks and callbacks as the policy's views,
//!   each tied to the call it was made for;
//! - [`counters`]: the per-CPU statistics and their inline asm, the
//!   module's trickiest `unsafe`, alone;
//! - [`debugfs`]: the counter files and the shadow switches;
//! - [`shadow`]: shadow mode and the differs counters of the judged
//!   hooks;
//! - [`trace`]: their trace events;
//! - [`lists`]: compile-time readers of `kunit/flags` and `SLB_HOOKS_OFF`.
//!
//! The types come from bindgen (`kernel::bindings`), never from a copy:
//! the series adds the header to `rust/bindings/bindings_helper.h`. The
//! kernel checks every number it gets back (see the header), so a bug here
//! costs a refused answer, not a corrupted runqueue.

use core::ffi::CStr;

use kernel::bindings;
use kernel::error::to_result;
use kernel::prelude::*;

mod callbacks;
mod counters;
mod debugfs;
mod lists;
mod shadow;
mod trace;
mod views;

// The hostile build registers `crate::hostile`'s twins of most of them.
#[cfg_attr(slb_hostile, allow(unused_imports))]
pub(crate) use callbacks::{
    avg_load_balanced, balance_interval, detach_skip, idle_cpus_balanced, newidle_account,
    newidle_stop, sis_account, sis_select, steal,
};
use counters::{Counter, CounterMemory, HookStats};
use debugfs::{DebugfsDir, DebugfsRoot};
use lists::{flag, index_of, lines, FLAG_LIST};
use shadow::Judged;

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
/// the hook out with `--cfg NAME` (from `SLB_HOOKS_OFF` in `Kbuild`, used
/// only by `make bench-hooks`); the kernel then runs its stock C at that
/// call site. With `--cfg slb_hostile` (`SLB_HOSTILE=1`) the callback is the
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

/// For `hook_table!`, what a line's optional `judged NAME` brings: its
/// flags marked judged (`mark`), named in `.modinfo` (`names`), and the
/// hook's [`Judged`] static (`static`); nothing for a hook without it.
/// (A macro of its own because `hook_table!` cannot repeat the flags
/// inside the optional part.)
macro_rules! judged {
    (mark $judged:ident; () $($flag:ident)*) => {};
    (mark $judged:ident; ($judge:ident) $($flag:ident)*) => {
        $($judged[flag!($flag)] = true;)*
    };
    (names () $($flag:ident)*) => { "" };
    (names ($judge:ident) $($flag:ident)*) => { concat!($(stringify!($flag), " ",)*) };
    (static $hook:ident () $($flag:ident)*) => {};
    (static $hook:ident ($judge:ident) $($flag:ident)*) => {
        #[doc = concat!("What `", stringify!($hook), "`'s calls decided against stock 6.12, and its flags' shadow switches.")]
        pub(crate) static $judge: Judged<{ <[usize]>::len(&[$(flag!($flag)),*]) }> = Judged::new(
            [$(flag!($flag)),*],
            [$(crate::policy::stock::is_on(stringify!($flag))),*],
            judged_base(index_of(JUDGED_NAMES, stringify!($judge))),
            &FLAG_DIFFERS,
        );
    };
}

/// The hook table: from one line per callback of `struct sched_lb_ops`
/// come the ops table this module registers, each hook's counters and
/// their debugfs files. Each line names the callback (as its field), the
/// `SLB_HOOKS_OFF` switch that leaves it out (a hook and the one that
/// accounts for it go together), the static of its counters, the name of
/// the counter of `true` answers, the `sched_feat` flags its calls carry
/// (in the order its callback passes them to `record()`), and any further
/// counters of its own.
///
/// Nothing else reads these lines: Kbuild passes `SLB_HOOKS_OFF` through
/// and the build checks it against the switches here ([`HOOKS_OFF_KNOWN`]);
/// the host tools read the hook and switch names from the built module's
/// `.modinfo` (`slb_hooks=`, `slb_hook_switches=`), as `modinfo -F` prints
/// them.
macro_rules! hook_table {
    ($($hook:ident => $switch:ident, $stats:ident, $hits:ident ($($flag:ident),*)
       $(judged $judge:ident)? $([$($extra:ident: $xstat:ident),+])?;)+) => {
        /// The hooks' counters, in slot order.
        const STAT_NAMES: &[&str] = &[$(stringify!($stats)),+];
        /// How many flags each hook's calls carry, in slot order.
        const STAT_FLAGS: &[usize] = &[$(<[usize]>::len(&[$(flag!($flag)),*])),+];
        /// The further counters, in slot order, after the hooks'.
        const EXTRA_NAMES: &[&str] = &[$($($(stringify!($xstat),)+)?)+];
        /// The `SLB_HOOKS_OFF` switches, as `--cfg` names.
        const SWITCHES: &[&str] = &[$(stringify!($switch)),+];
        /// The judged hooks' verdict statics, in slot order: two slots
        /// each (`differs`, `shadowed`) after the further counters.
        const JUDGED_NAMES: &[&str] = &[$($(stringify!($judge),)?)+];
        /// Whether some judged hook carries the flag of each line of
        /// `kunit/flags`: it then has a shadow switch and a `differs`
        /// counter.
        const FLAG_JUDGED: [bool; lines(FLAG_LIST)] = {
            let mut judged = [false; lines(FLAG_LIST)];
            $(judged!(mark judged; ($($judge)?) $($flag)*);)+
            judged
        };
        // The flags that have a shadow switch and a `differs` counter,
        // for the guest's `shadow` step: `modinfo -F slb_judged_flags`.
        crate::modinfo!(MODINFO_JUDGED, "slb_judged_flags=", $(judged!(names ($($judge)?) $($flag)*),)+);

        // The hooks and their switches (as `--cfg` names, one per hook),
        // for the host tools: `modinfo -F slb_hooks`, `-F slb_hook_switches`.
        crate::modinfo!(MODINFO_HOOKS, "slb_hooks=", $(stringify!($hook), " ",)+);
        crate::modinfo!(MODINFO_SWITCHES, "slb_hook_switches=", $(stringify!($switch), " ",)+);
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
            judged!(static $hook ($($judge)?) $($flag)*);
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
                assert!(!calls[i].is_none(), "a flag of kunit/flags that no hook carries");
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

        /// Every judged hook's name, and its calls that differed from stock.
        static VERDICTS: &[(&CStr, &Counter)] =
            &[$($((c_name!(stringify!($hook)), &$judge.differs),)?)+];

        impl DebugfsDir {
            /// `/sys/kernel/debug/sched_lb_rs/<hook>/{calls,<hits>,...}`
            /// and `flags/<FLAG>`, read-only; for the flags of the judged
            /// hooks, `differs/<FLAG>` (read-only) and `shadow/<FLAG>`
            /// (0 live, 1 in shadow; anything else is refused).
            fn counters() -> Self {
                let root = DebugfsDir::create(c"sched_lb_rs", None);
                let flags = DebugfsDir::create(c"flags", Some(&root));
                let differs = DebugfsDir::create(c"differs", Some(&root));
                let shadow = DebugfsDir::create(c"shadow", Some(&root));
                root.reader_wakee_flips(c"wakee_flips");
                for (i, n) in FLAG_CALLS.iter().enumerate() {
                    flags.flag_counter(i, n);
                    if FLAG_JUDGED[i] {
                        if let Some(d) = FLAG_DIFFERS.get(i) {
                            differs.flag_counter(i, d);
                        }
                        shadow.shadow_switch(i);
                    }
                }
                $(
                    let dir = DebugfsDir::create(c_name!(stringify!($hook)), Some(&root));
                    dir.counter(c"calls", &$stats.calls);
                    dir.counter(c_name!(stringify!($hits)), &$stats.hits);
                    $($(dir.counter(c_name!(stringify!($extra)), &$xstat);)+)?
                    $(
                        dir.counter(c"differs", &$judge.differs);
                        dir.counter(c"shadowed", &$judge.shadowed);
                    )?
                )+
                root
            }
        }
    };
}

hook_table! {
    idle_cpus_balanced => slb_no_hook_idle_cpus_balanced, IDLE_CPUS, balanced (BALANCE_IDLE_CPUS, BALANCE_IDLE_LLC2) judged IDLE_CPUS_VERDICT;
    detach_skip => slb_no_hook_detach_skip, DETACH, skipped (LB_RELAX_FAILED) judged DETACH_VERDICT;
    avg_load_balanced => slb_no_hook_avg_load_balanced, AVG_LOAD, balanced (LB_REDUCED_IMBALANCE_PCT) judged AVG_LOAD_VERDICT;
    balance_interval => slb_no_hook_balance_interval, INTERVAL, busy (LB_BUSY_INTERVAL_DEC) judged INTERVAL_VERDICT;
    newidle_stop => slb_no_hook_newidle_stop, NEWIDLE, stopped (NEWIDLE_BACKOFF, SD_MIGRATION_COST) judged NEWIDLE_VERDICT [backoff_stops: NEWIDLE_BACKOFF_STOPS];
    newidle_account => slb_no_hook_newidle_stop, STREAK, pulled ();
    sis_select => slb_no_hook_sis_select, SIS, found (SIS_PROP, SIS_AGE, SIS_ONCE, SIS_FOLD) judged SIS_VERDICT [undecided: SIS_UNDECIDED];
    sis_account => slb_no_hook_sis_select, SIS_ACCOUNT, scans () [scan_ns: SIS_SCAN_NS, loops: SIS_LOOPS];
    steal => slb_no_hook_steal, STEAL, tried (STEAL) judged STEAL_VERDICT [attempts: STEAL_ATTEMPTS, stolen: STEAL_STOLEN];
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

/// The first slot of judged hook `i`'s verdict counters: `differs`, then
/// `shadowed`, after the histograms and the further counters.
const fn judged_base(i: usize) -> usize {
    hist_base(STAT_NAMES.len()) + EXTRA_NAMES.len() + 2 * i
}

/// Each flag's `differs` counter: the calls whose answer the flag alone
/// changed, one slot per line of `kunit/flags`, after the verdicts.
static FLAG_DIFFERS: [Counter; lines(FLAG_LIST)] = {
    let mut c = [Counter::NONE; lines(FLAG_LIST)];
    let mut i = 0;
    while i < c.len() {
        c[i] = Counter::at(judged_base(JUDGED_NAMES.len()) + i);
        i += 1;
    }
    c
};

/// Slots in the per-CPU block of counters: the hooks' histograms, the
/// further counters, the verdicts, then the flags' `differs`.
const NR_SLOTS: usize = judged_base(JUDGED_NAMES.len()) + lines(FLAG_LIST);

/// The prefix of every switch's `--cfg` name; `SLB_HOOKS_OFF` names the
/// rest.
const SWITCH_PREFIX: &str = "slb_no_hook_";

/// Whether every word of `SLB_HOOKS_OFF` is a switch of the table.
const HOOKS_OFF_KNOWN: bool = lists::words_all_in(lists::HOOKS_OFF, SWITCH_PREFIX, SWITCHES);
const _: () = assert!(
    HOOKS_OFF_KNOWN,
    "SLB_HOOKS_OFF names a hook that is not a switch of hook_table! in rust/hooks.rs"
);

/// The table the KUnit suites ask (see `hook_table!`).
#[cfg(all(CONFIG_SCHED_LB_HOOKS_KUNIT, not(slb_no_kunit)))]
pub(crate) fn kunit_ops() -> &'static bindings::sched_lb_ops {
    &sched_lb_rs_kunit_ops.0
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
        for (name, differs) in VERDICTS.iter() {
            pr_info!(
                "{}: {} answers differed from stock 6.12\n",
                name.to_str().unwrap_or("?"),
                differs.sum()
            );
        }
        pr_info!(
            "steal: {} victims tried, {} tasks stolen\n",
            STEAL_ATTEMPTS.sum(),
            STEAL_STOLEN.sum()
        );
    }
}
