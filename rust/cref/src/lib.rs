// SPDX-License-Identifier: GPL-2.0

//! C references of the Linux 6.12 rules that `rust/policy` implements, and
//! of the seed threads' code they replace, compiled for userspace by
//! `build.rs` from the real sources (the 6.12 tree, the threads' hunks;
//! see [`SOURCES`]) with the glue in `c/`, for the differential tests in
//! `tests/differential.rs`. Test-only: nothing here is shipped.

#![allow(missing_docs)]

use core::ffi::{c_int, c_long, c_uint, c_ulong};

extern "C" {
    pub fn ref_idle_cpus_balanced(
        local_idle: c_uint,
        busiest_idle: c_uint,
        llc_size: c_int,
        balance_idle_cpus: bool,
        llc2: bool,
    ) -> bool;
    pub fn ref_detach_skip(
        load: c_ulong,
        imbalance: c_long,
        nr_balance_failed: c_uint,
        cache_nice_tries: c_uint,
        relax_failed: bool,
    ) -> bool;
    pub fn ref_avg_load_balanced(busiest: c_ulong, local: c_ulong, imbalance_pct: c_uint) -> bool;
    pub fn ref_newidle_stop(avg_idle: u64, curr_cost: u64, max_newidle_lb_cost: u64) -> bool;
    pub fn ref_sis_wanted(fold: bool, prop: bool, has_idle_core: bool) -> bool;
    pub fn ref_newidle_stop_jain(
        avg_idle: u64,
        curr_cost: u64,
        max_newidle_lb_cost: u64,
        sched_migration_cost: u64,
    ) -> bool;
    pub fn ref_sis_update_cost(avg_scan_cost: u64, time: u64, loops: c_int) -> u64;
    pub fn ref_sis_age(wake_avg: *mut u64, wake_stamp: *mut c_ulong, now: c_ulong);
    pub fn ref_sis_once(wake_avg: u64, scan_time: u64) -> u64;
    pub fn ref_sis_prop_nr(span_weight: c_uint, avg_idle: u64, avg_scan_cost: u64) -> c_int;
    /// 6.12's `select_idle_cpu()` on an LLC of `nbits` (at most 64) CPUs,
    /// `core_of[cpu]` the core of each; the idle tests it made in `asks`;
    /// `c/ref_sis.c`.
    pub fn ref_select_idle_cpu(
        nbits: c_uint,
        busy: c_ulong,
        allowed: c_ulong,
        core_of: *const u8,
        target: c_int,
        has_idle_core: bool,
        sis_util: bool,
        nr_idle_scan: c_int,
        cleared: *mut bool,
        asks: *mut c_uint,
    ) -> c_int;
}

/// One HZ's compiled references.
pub struct HzRef {
    pub hz: u32,
    pub jiffies_to_msecs: unsafe extern "C" fn(c_ulong) -> c_uint,
    pub msecs_to_jiffies: unsafe extern "C" fn(c_uint) -> c_ulong,
    pub balance_interval: unsafe extern "C" fn(c_uint, c_uint, c_int, c_ulong, bool) -> c_ulong,
}

// `ref_{jiffies_to_msecs,msecs_to_jiffies,balance_interval}_hz<HZ>` and
// `HZ_REFS`, for every HZ in build.rs's list.
include!(concat!(env!("OUT_DIR"), "/hz_refs.rs"));

/// The compiler `build.rs` built the references with (`--version`'s first
/// line): clang where installed, as the project's kernel (LLVM=1).
pub const C_COMPILER: &str = env!("SLB_CREF_CC");

/// Its optimisation and language flags: the kernel's `-O2` and semantics
/// flags, whatever the cargo profile.
pub const C_FLAGS: &str = env!("SLB_CREF_CFLAGS");

/// Every piece of C the references are built from, and where `build.rs`
/// took it: file and lines in the 6.12 tree, or thread, message and hunk.
pub const SOURCES: &str = include_str!(concat!(env!("OUT_DIR"), "/sources.txt"));

#[cfg(test)]
mod extract;
