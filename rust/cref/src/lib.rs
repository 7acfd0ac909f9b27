// SPDX-License-Identifier: GPL-2.0

//! C references of the Linux 6.12 rules that `rust/policy` implements,
//! compiled for userspace by `build.rs` from `c/`, for the differential
//! tests in `tests/differential.rs`. Test-only: nothing here is shipped.

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
    pub fn ref_sis_update_cost(avg_scan_cost: u64, time: u64, loops: c_int) -> u64;
    pub fn ref_sis_age(wake_avg: *mut u64, wake_stamp: *mut c_ulong, now: c_ulong);
    pub fn ref_sis_prop_nr(span_weight: c_uint, avg_idle: u64, avg_scan_cost: u64) -> c_int;
}

/// Declares the per-HZ references and a table of them.
macro_rules! per_hz {
    ($($hz:literal => $m2j:ident, $bi:ident);+ $(;)?) => {
        extern "C" {
            $(
                pub fn $m2j(m: c_uint) -> c_ulong;
                pub fn $bi(balance_interval: c_uint, busy_factor: c_uint, cpu_busy: c_int,
                           max_load_balance_interval: c_ulong, busy_dec: bool) -> c_ulong;
            )+
        }

        /// One HZ's compiled references.
        pub struct HzRef {
            pub hz: u32,
            pub msecs_to_jiffies: unsafe extern "C" fn(c_uint) -> c_ulong,
            pub balance_interval: unsafe extern "C" fn(c_uint, c_uint, c_int, c_ulong, bool) -> c_ulong,
        }

        /// Every HZ `build.rs` compiled the references for.
        pub const HZ_REFS: &[HzRef] = &[
            $(HzRef { hz: $hz, msecs_to_jiffies: $m2j, balance_interval: $bi },)+
        ];
    };
}

per_hz! {
    24 => ref_msecs_to_jiffies_hz24, ref_balance_interval_hz24;
    48 => ref_msecs_to_jiffies_hz48, ref_balance_interval_hz48;
    100 => ref_msecs_to_jiffies_hz100, ref_balance_interval_hz100;
    250 => ref_msecs_to_jiffies_hz250, ref_balance_interval_hz250;
    300 => ref_msecs_to_jiffies_hz300, ref_balance_interval_hz300;
    1000 => ref_msecs_to_jiffies_hz1000, ref_balance_interval_hz1000;
    1024 => ref_msecs_to_jiffies_hz1024, ref_balance_interval_hz1024;
    1200 => ref_msecs_to_jiffies_hz1200, ref_balance_interval_hz1200;
}
