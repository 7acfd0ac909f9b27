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
//! module registers, and the kernel's own shim in `fair.c`. The last two
//! go through `hooks::kunit_ops()`, the callbacks in the instance that
//! counts nothing, so the statistics in debugfs show only the
//! scheduler's calls; the registered table's static calls are exercised
//! by the guest's steps, which watch those statistics.

use core::ffi::c_int;

use kernel::bindings;
use kernel::str::CStr;

mod idle_cpus;
mod interval;
mod load;
mod newidle;
mod sis;
mod steal;

/// Checks `$cond`. On failure it prints the case's diagnostic and records a
/// failed KUnit expectation at this file and line; the case goes on, so a
/// table reports every bad row, and KUnit marks the case failed.
macro_rules! check {
    ($case:literal, $cond:expr, $($fmt:tt)+) => {{
        let ok: bool = $cond;
        if !ok {
            kernel::kunit::err(format_args!("    # {}: {}\n", $case, format_args!($($fmt)+)));
            $crate::kunit::expect_failed(
                kernel::c_str!(file!()),
                line!(),
                kernel::c_str!(stringify!($cond)),
            );
        }
    }};
}
pub(crate) use check;

/// Records a failed expectation of the running KUnit case, as C's
/// `KUNIT_EXPECT_TRUE()` does: `condition` at `file:line` was false.
pub(crate) fn expect_failed(file: &'static CStr, line: u32, condition: &'static CStr) {
    // SAFETY: FFI call without safety requirements.
    let test = unsafe { bindings::kunit_get_current_test() };
    if test.is_null() {
        // Not in a case (the diagnostic above is all there is to say).
        return;
    }
    let loc = bindings::kunit_loc {
        file: file.as_char_ptr(),
        line: c_int::try_from(line).unwrap_or(c_int::MAX),
    };
    let assert = bindings::kunit_unary_assert {
        assert: bindings::kunit_assert {},
        condition: condition.as_char_ptr(),
        expected_true: true,
    };
    // `kunit_unary_assert_format()` gets back to `assert` from its member
    // `assert` with `container_of()`. The member is zero-sized: a pointer
    // to it taken with `addr_of!` from `assert` itself (no reference, which
    // would cover the member's zero bytes only) is derived from the whole
    // struct, so stepping back to its start stays inside what it points to.
    let member = core::ptr::addr_of!(assert.assert);
    // SAFETY: `test` is the running case (not NULL, from
    // kunit_get_current_test()); `loc` and `assert` outlive the call, which
    // formats them into the case's log before it returns; the strings are
    // NUL-terminated `CStr`s; `kunit_unary_assert_format` matches `assert`,
    // which `member` points into (see above); a NULL format string is
    // allowed. An expectation does not abort.
    unsafe {
        bindings::__kunit_do_failed_assertion(
            test,
            &loc,
            bindings::kunit_assert_type_KUNIT_EXPECTATION,
            member,
            Some(bindings::kunit_unary_assert_format),
            core::ptr::null(),
        )
    };
}

/// `struct kunit_case` for `run_case`, named `name`, every other field
/// zero as C's `KUNIT_CASE()` leaves it: upstream's
/// `kernel::kunit::kunit_case()` (Linux 6.15), so moving to a kernel that
/// has it is a rename.
pub(crate) const fn kunit_case(
    name: &'static CStr,
    run_case: unsafe extern "C" fn(*mut bindings::kunit),
) -> bindings::kunit_case {
    // SAFETY: `kunit_case` is a C struct for which all-zero is the valid
    // "unset" value of every field.
    let mut c: bindings::kunit_case = unsafe { core::mem::zeroed() };
    c.run_case = Some(run_case);
    c.name = name.as_char_ptr();
    c
}

/// The all-zero case that ends a case array, as `{}` does in C: upstream's
/// `kernel::kunit::kunit_case_null()`.
pub(crate) const fn kunit_case_null() -> bindings::kunit_case {
    // SAFETY: as for `kunit_case()`.
    unsafe { core::mem::zeroed() }
}

/// Registers the suite `$name` (its name in KTAP) with the cases of the
/// `static mut` array `$test_cases`, through its own entry in
/// `.kunit_test_suites`, which the module loader hands to KUnit: upstream's
/// `kernel::kunit_unsafe_test_suite!` (Linux 6.15).
///
/// # Safety
///
/// `$test_cases` is a `static mut` array of valid cases ending with
/// [`kunit_case_null()`], touched by nothing but KUnit.
macro_rules! kunit_unsafe_test_suite {
    ($name:ident, $test_cases:ident) => {
        const _: () = {
            static mut KUNIT_TEST_SUITE: bindings::kunit_suite = {
                // SAFETY: all-zero is the unset value of each field.
                let mut s: bindings::kunit_suite = unsafe { core::mem::zeroed() };
                let name = core::stringify!($name).as_bytes();
                // The last byte stays 0, the terminator.
                if name.len() >= s.name.len() {
                    panic!(concat!(
                        "suite name `",
                        core::stringify!($name),
                        "` is too long"
                    ));
                }
                let mut i = 0;
                while i < name.len() {
                    // `c_char` is `i8` or `u8` by architecture and kernel.
                    s.name[i] = name[i] as _;
                    i += 1;
                }
                // Only the address: KUnit writes the cases, nothing here.
                s.test_cases = core::ptr::addr_of_mut!($test_cases).cast();
                s
            };

            #[used]
            #[link_section = ".kunit_test_suites"]
            static mut KUNIT_TEST_SUITE_ENTRY: *const bindings::kunit_suite =
                core::ptr::addr_of_mut!(KUNIT_TEST_SUITE);
        };
    };
}

/// One suite: `$cases` is declared as its case array (with the end marker,
/// its length counted by the compiler), then registered under `$name`.
/// Each case is also a `.modinfo` entry `slb_kunit_case=<suite>.<case>`:
/// the host counts the cases the module registers with `modinfo -F`
/// (`scripts/lib.sh`: `slb_kunit_cases`), and requires each to pass.
macro_rules! suite {
    ($name:ident, $cases:ident, [$(($case:literal, $run:path)),+ $(,)?]) => {
        static mut $cases: [bindings::kunit_case; [$($case),+].len() + 1] =
            [$(kunit_case(kernel::c_str!($case), $run)),+, kunit_case_null()];
        kunit_unsafe_test_suite!($name, $cases);
        $(
            const _: () = {
                crate::modinfo!(CASE, "slb_kunit_case=", stringify!($name), ".", $case);
            };
        )+
    };
}

suite!(
    sched_lb_rs_idle_cpus,
    IDLE_CASES,
    [
        ("idle_cpus_rule", idle_cpus::rule),
        ("idle_cpus_callback", idle_cpus::callback),
        ("idle_cpus_kernel_shim", idle_cpus::kernel_shim),
    ]
);

suite!(
    sched_lb_rs_fairness,
    LOAD_CASES,
    [
        ("detach_skip_thread_rows", load::detach_rows),
        ("detach_skip_kernel_shim", load::detach_kernel_shim),
        ("avg_load_imbalance_pct", load::avg_load_rows),
        ("avg_load_kernel_shim", load::avg_load_kernel_shim),
    ]
);

suite!(
    sched_lb_rs_interval,
    INTERVAL_CASES,
    [
        (
            "msecs_to_jiffies_matches_kernel",
            interval::msecs_to_jiffies_matches_kernel
        ),
        ("interval_thread_rows", interval::thread_rows),
        ("interval_kernel_shim", interval::kernel_shim),
    ]
);

suite!(
    sched_lb_rs_newidle,
    NEWIDLE_CASES,
    [
        (
            "backoff_failure_run_then_success",
            newidle::backoff_sequence
        ),
        ("backoff_recovers", newidle::backoff_recovers),
        ("walk_stops_per_topology", newidle::walk_topologies),
        ("newidle_kernel_shim", newidle::kernel_shim),
    ]
);

suite!(
    sched_lb_rs_sis,
    SIS_CASES,
    [
        ("sis_scan_rows", sis::scan_rows),
        ("sis_age_once_sequence", sis::age_once_sequence),
        ("sis_fold_rows", sis::fold_rows),
        ("sis_topology_rows", sis::topology_rows),
    ]
);

suite!(
    sched_lb_rs_steal,
    STEAL_CASES,
    [
        ("steal_victim_order", steal::victim_order),
        (
            "steal_first_success_and_stop",
            steal::first_success_and_stop
        ),
        ("steal_decision", steal::decision),
        ("steal_mask_transitions", steal::mask_transitions),
        ("steal_cost_forgotten", steal::cost_forgotten),
    ]
);

/// The test-only build `SLB_KUNIT_SELFTEST=1` (Kbuild; `make test` boots it
/// once) adds a suite whose second case fails on purpose, to show that a
/// false [`check!`] reaches the KTAP that `kunit.py` parses as `not ok`,
/// and a true one does not. The name pairs stay out of the lines
/// `scripts/test.sh` counts as this file's registered cases.
#[cfg(slb_kunit_selftest)]
mod selftest {
    use super::{kunit_case, kunit_case_null};
    use kernel::bindings;

    /// A true check: the case must pass.
    extern "C" fn check_true_passes(_test: *mut bindings::kunit) {
        let two = core::hint::black_box(2u32);
        check!(
            "selftest",
            two.wrapping_add(2) == 4,
            "2 + 2 = {}",
            two.wrapping_add(2)
        );
    }

    /// A false check: the case must be reported failed.
    extern "C" fn check_false_fails(_test: *mut bindings::kunit) {
        let two = core::hint::black_box(2u32);
        check!(
            "selftest",
            two.wrapping_add(2) == 5,
            "deliberate failure: 2 + 2 = {}, not 5",
            two.wrapping_add(2)
        );
    }

    #[rustfmt::skip]
    suite!(sched_lb_rs_selftest, SELFTEST_CASES, [("check_true_passes", check_true_passes), ("check_false_fails", check_false_fails)]);
}
