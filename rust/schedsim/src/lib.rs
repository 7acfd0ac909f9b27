// SPDX-License-Identifier: GPL-2.0

//! schedsim: a deterministic userspace topology simulator for sched-lb-rs.
//!
//! It models the machines of the five LKML threads (`topology`), a CFS
//! runqueue per CPU with 6.12's EEVDF (`eevdf`), the tick, wakeups and
//! wakeup placement (`sim`),
//! and the load balancer of 6.12.117, the kernel the project boots (`lb`;
//! HZ 250 and NI_RANDOM on by default, as there), and makes every
//! threshold, budget and selection decision the patch series made
//! replaceable by calling the same `sched_lb_policy` functions the kernel
//! module runs. Everything else is a reduced model of the stock C it
//! mirrors, named in each file.
//!
//! A run is a pure function of its configuration and seed: SplitMix64
//! streams derived from the seed, one per purpose and per task or CPU
//! (`rng`), an event queue ordered by (time, sequence number), no
//! hash-map iteration and no wall clock in any result. `trace_hash` in the
//! result hashes every scheduling event, so two runs can be compared by
//! one number.

#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod calibrate;
pub mod conserve;
pub mod cost;
pub mod cpumask;
pub mod eevdf;
pub mod experiments;
pub mod flags;

pub mod pelt;
pub mod replay;
pub mod report;
pub mod rng;
pub mod schedstat;
pub mod sensitivity;
pub mod sim;
pub mod stats;
pub mod svg;
pub mod topology;
pub mod workload;

pub use sim::{Config, Sim};
pub use stats::RunResult;

/// Runs one configuration to completion.
pub fn run(cfg: sim::Config) -> RunResult {
    Sim::new(cfg).run()
}
