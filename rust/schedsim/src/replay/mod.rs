// SPDX-License-Identifier: GPL-2.0

//! Replay (issue 32): a guest run's trace, its tasks' behaviour replayed
//! into the model on the same topology with the same flags, and the same
//! measures taken from both.
//!
//! - `trace.rs`: the "slb-trace 1" format (`make replay` writes it from
//!   the guest's trace events; the model writes it from its own run);
//! - `script.rs`: each workload task's CPU bursts, blocks, wakes, forks
//!   and sleeps, in causal order;
//! - `metrics.rs`: migrations per domain level and cause, wakeups placed
//!   in the waker's LLC, idle time while work waited elsewhere;
//! - `ticks.rs`: what became of each idle CPU's tick (`sched_tick()`'s
//!   `B` lines): taken at once, after a wakeup, or lost;
//! - `compare.rs`: one trace replayed and measured both ways;
//! - `report.rs`: model against guest, per trace and per on/off pair;
//! - `gaps.rs`: where each of the model's own gaps sits.

pub mod compare;
pub mod gaps;
pub mod metrics;
pub mod report;
pub mod script;
pub mod ticks;
pub mod trace;
