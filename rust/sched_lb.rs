// SPDX-License-Identifier: GPL-2.0

//! sched-lb-rs: load-balance policies in Rust for `kernel/sched/fair.c`.
//!
//! Registers a `struct sched_lb_ops` table (the series' ABI,
//! `<linux/sched/lb_hooks.h>`) whose callbacks run the pure rules of
//! `rust/policy`. Loading the module enables the hooks; the `sched_feat`
//! flags in `/sys/kernel/debug/sched/features` then select each policy.
//! Unloading disables the hooks and waits for RCU before the text goes.
//!
//! Built out of tree with the top-level `Kbuild` against a kernel carrying
//! the series (`CONFIG_SCHED_LB_HOOKS=y`). With `CONFIG_SCHED_LB_HOOKS_KUNIT` the module
//! also carries the KUnit suites, which run when it is loaded (unless
//! built with `SLB_KUNIT=n`, as `make bench-hooks` does).

use kernel::prelude::*;

/// A `.modinfo` entry `key=value`, from string literals, NUL-terminated:
/// `modinfo -F key` prints it, once per entry. The module's lists that
/// the host tools need (its hooks, their `SLB_HOOKS_OFF` switches, its
/// KUnit cases) reach them this way, generated from the one list in the
/// source, so that no script parses Rust.
macro_rules! modinfo {
    ($static:ident, $($part:expr),+ $(,)?) => {
        #[link_section = ".modinfo"]
        #[used]
        static $static: [u8; concat!($($part),+, "\0").len()] =
            $crate::modinfo_bytes(concat!($($part),+, "\0"));
    };
}
pub(crate) use modinfo;

/// `entry`'s bytes as an array, for [`modinfo!`].
const fn modinfo_bytes<const LEN: usize>(entry: &str) -> [u8; LEN] {
    let entry = entry.as_bytes();
    let mut out = [0u8; LEN];
    let mut i = 0;
    while i < LEN && i < entry.len() {
        out[i] = entry[i];
        i += 1;
    }
    out
}

// The hostile build (Kbuild's SLB_HOSTILE=1) registers `hostile`'s
// callbacks in place of most of these.
#[cfg_attr(slb_hostile, allow(dead_code))]
mod hooks;
#[cfg(slb_hostile)]
mod hostile;
#[cfg(all(CONFIG_SCHED_LB_HOOKS_KUNIT, not(slb_no_kunit)))]
mod kunit;

/// The pure rules: the `rust/policy` crate that `cargo test` checks and the
/// simulator runs, included through its own `lib.rs`, so its
/// `forbid(unsafe_code)` holds here too. Its `deny(missing_docs)` checks
/// nothing here (the module is private, so no item of it is public API);
/// `cargo clippy` and `cargo doc` on the crate enforce it. Its items
/// are `pub` for those other users; nothing outside this module reaches
/// them here, hence `unreachable_pub`. The hostile build leaves most rules
/// uncalled, and a build without KUnit the ones only the suites call (the
/// table-driven flag presets, and the overload transition that C keeps a
/// copy of).
#[allow(unreachable_pub)]
#[cfg_attr(any(slb_hostile, slb_no_kunit), allow(dead_code))]
#[path = "policy/src/lib.rs"]
mod policy;

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
