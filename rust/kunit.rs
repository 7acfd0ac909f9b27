// SPDX-License-Identifier: GPL-2.0

//! Rust KUnit suites of the module, run by KUnit when the module is loaded.
//!
//! Linux 6.12 has no `#[kunit_tests]` (it arrived in 6.15), so each suite
//! is built by hand the way `kunit_test_suites()` builds a C one: an array
//! of `struct kunit_case`, a `struct kunit_suite`, and a pointer to the
//! suite in the `.kunit_test_suites` section, which the module loader
//! hands to KUnit. Results go to the kernel log as KTAP, parsed on the
//! host by `tools/testing/kunit/kunit.py parse`.
//!
//! The tables come from the seed threads. Each row is checked at three
//! depths where it can be: the pure rule, the `extern "C"` callback this
//! module registers, and the kernel's own shim in `fair.c` (which
//! dispatches to the registered table, i.e. to this module).

use kernel::bindings;

mod idle_cpus;
mod interval;
mod load;
mod newidle;
mod sis;
mod steal;

/// Reports a failed check as a KTAP diagnostic, then fails the case
/// through KUnit's own assertion machinery.
macro_rules! check {
    ($case:literal, $cond:expr, $($fmt:tt)+) => {{
        let ok: bool = $cond;
        if !ok {
            kernel::kunit::err(format_args!("    # {}: {}\n", $case, format_args!($($fmt)+)));
        }
        kernel::kunit_assert!($case, "rust/kunit.rs", 0, ok);
    }};
}
pub(crate) use check;

/// The signature of a KUnit case.
type RunCase = unsafe extern "C" fn(*mut bindings::kunit);

/// A `kunit_case` for `run`, named `name`; all other fields zero, as the
/// C `KUNIT_CASE()` initialiser leaves them.
const fn case(name: &'static core::ffi::CStr, run: RunCase) -> bindings::kunit_case {
    // SAFETY: `kunit_case` is a C struct for which all-zero is the valid
    // "unset" value of every field.
    let mut c: bindings::kunit_case = unsafe { core::mem::zeroed() };
    c.run_case = Some(run);
    c.name = name.as_ptr().cast();
    c
}

/// The all-zero case that terminates a case array, as `{}` does in C.
const fn end() -> bindings::kunit_case {
    // SAFETY: as for `case()`.
    unsafe { core::mem::zeroed() }
}

const fn suite(name: &[u8], cases: *mut bindings::kunit_case) -> bindings::kunit_suite {
    // SAFETY: as for `case()`, all-zero is the unset value of each field.
    let mut s: bindings::kunit_suite = unsafe { core::mem::zeroed() };
    let mut i = 0;
    // Leave the last byte 0 so the name is always terminated.
    while i < name.len() && i + 1 < s.name.len() {
        s.name[i] = name[i] as _;
        i += 1;
    }
    s.test_cases = cases;
    s
}

/// Declares one suite: its case array and its `kunit_suite`, both
/// `static mut` because KUnit writes each case's status and log into them.
/// Only KUnit touches them, through the pointers in `.kunit_test_suites`.
macro_rules! kunit_suite {
    ($suite:ident, $cases:ident, $name:literal, [$(($case:literal, $run:path)),+ $(,)?]) => {
        static mut $cases: [bindings::kunit_case; [$($case),+].len() + 1] =
            [$(case($case, $run)),+, end()];
        static mut $suite: bindings::kunit_suite =
            suite($name, core::ptr::addr_of_mut!($cases).cast());
    };
}

kunit_suite!(
    IDLE_SUITE,
    IDLE_CASES,
    b"sched_lb_rs_idle_cpus",
    [
        (c"idle_cpus_rule", idle_cpus::rule),
        (c"idle_cpus_callback", idle_cpus::callback),
        (c"idle_cpus_kernel_shim", idle_cpus::kernel_shim),
    ]
);

kunit_suite!(
    LOAD_SUITE,
    LOAD_CASES,
    b"sched_lb_rs_fairness",
    [
        (c"detach_skip_thread_rows", load::detach_rows),
        (c"detach_skip_kernel_shim", load::detach_kernel_shim),
        (c"avg_load_imbalance_pct", load::avg_load_rows),
        (c"avg_load_kernel_shim", load::avg_load_kernel_shim),
    ]
);

kunit_suite!(
    INTERVAL_SUITE,
    INTERVAL_CASES,
    b"sched_lb_rs_interval",
    [
        (
            c"msecs_to_jiffies_matches_kernel",
            interval::msecs_to_jiffies_matches_kernel
        ),
        (c"interval_thread_rows", interval::thread_rows),
        (c"interval_kernel_shim", interval::kernel_shim),
    ]
);

kunit_suite!(
    NEWIDLE_SUITE,
    NEWIDLE_CASES,
    b"sched_lb_rs_newidle",
    [
        (
            c"backoff_failure_run_then_success",
            newidle::backoff_sequence
        ),
        (c"backoff_recovers", newidle::backoff_recovers),
        (c"walk_stops_per_topology", newidle::walk_topologies),
        (c"newidle_kernel_shim", newidle::kernel_shim),
    ]
);

kunit_suite!(
    SIS_SUITE,
    SIS_CASES,
    b"sched_lb_rs_sis",
    [
        (c"sis_scan_rows", sis::scan_rows),
        (c"sis_age_once_sequence", sis::age_once_sequence),
        (c"sis_fold_rows", sis::fold_rows),
        (c"sis_topology_rows", sis::topology_rows),
    ]
);

kunit_suite!(
    STEAL_SUITE,
    STEAL_CASES,
    b"sched_lb_rs_steal",
    [
        (c"steal_victim_order", steal::victim_order),
        (
            c"steal_first_success_and_stop",
            steal::first_success_and_stop
        ),
        (c"steal_decision", steal::decision),
        (c"steal_mask_transitions", steal::mask_transitions),
    ]
);

#[repr(transparent)]
struct SuitePtr(*mut bindings::kunit_suite);

// SAFETY: the pointers are only read, by the module loader, before any
// test runs; KUnit then owns the suites.
unsafe impl Sync for SuitePtr {}

#[used]
#[link_section = ".kunit_test_suites"]
static KUNIT_SUITES: [SuitePtr; 6] = [
    SuitePtr(core::ptr::addr_of_mut!(IDLE_SUITE)),
    SuitePtr(core::ptr::addr_of_mut!(LOAD_SUITE)),
    SuitePtr(core::ptr::addr_of_mut!(INTERVAL_SUITE)),
    SuitePtr(core::ptr::addr_of_mut!(NEWIDLE_SUITE)),
    SuitePtr(core::ptr::addr_of_mut!(SIS_SUITE)),
    SuitePtr(core::ptr::addr_of_mut!(STEAL_SUITE)),
];
