// SPDX-License-Identifier: GPL-2.0

//! sched-lb-rs: load-balance policies in Rust for `kernel/sched/fair.c`.
//!
//! Registers a `struct sched_lb_ops` table (patch 0001 of `patches/`, the
//! `<linux/sched/lb_hooks.h>` ABI) whose callbacks run the pure rules of
//! `rust/policy`. Loading the module enables the hooks; the `sched_feat`
//! flags in `/sys/kernel/debug/sched/features` then select each policy.
//! Unloading disables the hooks and waits for RCU before the text goes.
//!
//! Built out of tree with the top-level `Kbuild` against a kernel carrying
//! the series (`CONFIG_SCHED_LB_HOOKS=y`). With `CONFIG_KUNIT` the module
//! also carries the KUnit suites, which run when it is loaded (unless
//! built with `SLB_KUNIT=n`, as `make bench-hooks` does).

use kernel::prelude::*;

// The hostile build (Kbuild's SLB_HOSTILE=1) registers `hostile`'s
// callbacks in place of most of these.
#[cfg_attr(slb_hostile, allow(dead_code))]
mod hooks;
#[cfg(slb_hostile)]
mod hostile;
#[cfg(all(CONFIG_KUNIT, not(slb_no_kunit)))]
mod kunit;

/// The pure rules, the same files `cargo test` checks in `rust/policy`.
#[allow(dead_code, unreachable_pub)]
mod policy {
    #[path = "../policy/src/avg_load.rs"]
    pub(crate) mod avg_load;
    #[path = "../policy/src/balance_interval.rs"]
    pub(crate) mod balance_interval;
    #[path = "../policy/src/detach_load.rs"]
    pub(crate) mod detach_load;
    #[path = "../policy/src/idle_cpus.rs"]
    pub(crate) mod idle_cpus;
    #[path = "../policy/src/jiffies.rs"]
    pub(crate) mod jiffies;
    #[path = "../policy/src/newidle_backoff.rs"]
    pub(crate) mod newidle_backoff;
    #[path = "../policy/src/newidle_streak.rs"]
    pub(crate) mod newidle_streak;
    #[path = "../policy/src/newidle_walk.rs"]
    pub(crate) mod newidle_walk;
    #[path = "../policy/src/sis_age.rs"]
    pub(crate) mod sis_age;
    #[path = "../policy/src/sis_budget.rs"]
    pub(crate) mod sis_budget;
    #[path = "../policy/src/sis_cost.rs"]
    pub(crate) mod sis_cost;
    #[path = "../policy/src/sis_select.rs"]
    pub(crate) mod sis_select;
    #[path = "../policy/src/sparsemask.rs"]
    pub(crate) mod sparsemask;
    #[path = "../policy/src/steal.rs"]
    pub(crate) mod steal;
    #[path = "../policy/src/words.rs"]
    pub(crate) mod words;
}

module! {
    type: SchedLb,
    name: "sched_lb_rs",
    author: "sched-lb-rs developers",
    description: "Rust load-balance policies for the lb_hooks patch series",
    license: "GPL",
}

struct SchedLb {
    _hooks: hooks::Registration,
}

impl kernel::Module for SchedLb {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let hooks = hooks::Registration::new()?;
        pr_info!(
            "policies registered (lb_hooks ABI {})\n",
            hooks::ABI_VERSION
        );
        Ok(SchedLb { _hooks: hooks })
    }
}
