// SPDX-License-Identifier: GPL-2.0

//! What scheduler work and lost cache state cost in the model.
//!
//! No kernel code is mirrored; these are the model's assumptions, written
//! down before any experiment ran and never adjusted to reach a thread's
//! number (`Documentation/schedsim.rst` lists them with their reasons).
//! Every cost is charged as time on a CPU: kernel work delays whatever
//! runs there next, and a cache refill is time a migrated task runs
//! without doing useful work.

use crate::topology::Topology;

/// The model's costs, ns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CostModel {
    /// Switching between two different tasks.
    pub ctx_switch_ns: u64,
    /// Entering a `select_idle_cpu()` scan.
    pub sis_base_ns: u64,
    /// Reading one CPU's idle state in a scan (a remote runqueue line).
    pub sis_per_cpu_ns: u64,
    /// Entering `sched_balance_rq()` (locks, `lb_env`).
    pub lb_base_ns: u64,
    /// Reading one CPU's statistics in the same LLC.
    pub lb_cpu_llc_ns: u64,
    /// ... in another LLC of the node.
    pub lb_cpu_node_ns: u64,
    /// ... on another node.
    pub lb_cpu_remote_ns: u64,
    /// Detaching and attaching one task under two runqueue locks.
    pub migrate_task_ns: u64,
    /// Cache refill after moving within an LLC (private caches lost).
    pub refill_llc_ns: u64,
    /// ... to another LLC of the node.
    pub refill_node_ns: u64,
    /// ... to another node.
    pub refill_remote_ns: u64,
    /// A message's data crossing LLCs (buddy pairs, hackbench).
    pub msg_xllc_ns: u64,
    /// ... crossing nodes.
    pub msg_xnode_ns: u64,
    /// Entering a STEAL attempt.
    pub steal_base_ns: u64,
    /// Reading one cache line of the overloaded sparsemask.
    pub steal_per_line_ns: u64,
    /// Trying one victim (its runqueue lock).
    pub steal_per_victim_ns: u64,
}

impl Default for CostModel {
    fn default() -> Self {
        Self {
            ctx_switch_ns: 1_500,
            sis_base_ns: 100,
            sis_per_cpu_ns: 40,
            lb_base_ns: 1_000,
            lb_cpu_llc_ns: 50,
            lb_cpu_node_ns: 100,
            lb_cpu_remote_ns: 250,
            migrate_task_ns: 2_000,
            refill_llc_ns: 5_000,
            refill_node_ns: 30_000,
            refill_remote_ns: 100_000,
            msg_xllc_ns: 2_000,
            msg_xnode_ns: 5_000,
            steal_base_ns: 200,
            steal_per_line_ns: 50,
            steal_per_victim_ns: 100,
        }
    }
}

impl CostModel {
    /// Refill a task pays after moving from `src` to `dst`.
    pub fn refill_ns(&self, t: &Topology, src: u32, dst: u32) -> u64 {
        let (s, d) = (src as usize, dst as usize);
        if t.core_of[s] == t.core_of[d] {
            0
        } else if t.llc_of[s] == t.llc_of[d] {
            self.refill_llc_ns
        } else if t.node_of[s] == t.node_of[d] {
            self.refill_node_ns
        } else {
            self.refill_remote_ns
        }
    }

    /// Extra receive work for a message sent on `from` to a task on `to`.
    pub fn message_ns(&self, t: &Topology, from: u32, to: u32) -> u64 {
        let (s, d) = (from as usize, to as usize);
        if t.llc_of[s] == t.llc_of[d] {
            0
        } else if t.node_of[s] == t.node_of[d] {
            self.msg_xllc_ns
        } else {
            self.msg_xnode_ns
        }
    }

    /// A scan that read `visited` CPUs.
    pub fn sis_scan_ns(&self, visited: u64) -> u64 {
        if visited == 0 {
            return 0;
        }
        self.sis_base_ns
            .saturating_add(self.sis_per_cpu_ns.saturating_mul(visited))
    }

    /// Reading `other`'s statistics from `this`.
    pub fn lb_read_ns(&self, t: &Topology, this: u32, other: u32) -> u64 {
        let (s, d) = (this as usize, other as usize);
        if t.llc_of[s] == t.llc_of[d] {
            self.lb_cpu_llc_ns
        } else if t.node_of[s] == t.node_of[d] {
            self.lb_cpu_node_ns
        } else {
            self.lb_cpu_remote_ns
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn costs_grow_with_distance() {
        let t = Topology::preset("xeon2x22").unwrap();
        let c = CostModel::default();
        // 0 and 44 are siblings, 1 is another core of the LLC, 22 is on
        // the other socket.
        assert_eq!(c.refill_ns(&t, 0, 44), 0);
        assert!(c.refill_ns(&t, 0, 1) < c.refill_ns(&t, 0, 22));
        assert_eq!(c.message_ns(&t, 0, 1), 0);
        assert!(c.lb_read_ns(&t, 0, 1) < c.lb_read_ns(&t, 0, 22));
        assert_eq!(c.sis_scan_ns(0), 0);
        assert_eq!(c.sis_scan_ns(4), 100 + 160);
    }
}
