// SPDX-License-Identifier: GPL-2.0

//! Pure policy rules of sched-lb-rs.
//!
//! Every threshold, budget and selection rule that the patch series makes
//! replaceable in `kernel/sched/fair.c` lives here as a small pure function,
//! one rule per file with its tests beside it. The crate has no `unsafe`,
//! no allocation and no kernel types, so the same source is:
//!
//! - compiled into the kernel module as its `policy` module
//!   (`rust/sched_lb.rs` includes this file with `#[path]`, because an
//!   out-of-tree module is a single crate; Kbuild builds modules with
//!   `--cfg MODULE`, where `no_std` is the kernel crate's business),
//! - unit- and property-tested here with `cargo test`,
//! - and called by the userspace simulator and benchmarks.
//!
//! Files refer to each other only through `super::`, which resolves to this
//! crate root here and to the `policy` module inside the kernel module.
//!
//! All arithmetic is saturating, wrapping or checked, and says which: the
//! kernel builds this code with `CONFIG_RUST_OVERFLOW_CHECKS=y`, where an
//! overflowing `+` would panic inside the scheduler.

#![cfg_attr(not(MODULE), no_std)]
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod avg_load;
pub mod balance_interval;
pub mod detach_load;
pub mod idle_cpus;
pub mod imbalance_pct;
pub mod jiffies;
pub mod newidle_backoff;
pub mod newidle_streak;
pub mod newidle_walk;
pub mod sis_age;
pub mod sis_budget;
pub mod sis_chain;
pub mod sis_cost;
pub mod sis_judge;
pub mod sis_select;
pub mod sis_stock;
pub mod sparsemask;
pub mod steal;
pub mod steal_chain;
pub mod stock;
#[cfg(test)]
mod test_llc;
pub mod verdict;
pub mod words;
