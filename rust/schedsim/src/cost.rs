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
    /// Switching between two different tasks (`__schedule()`'s
    /// `context_switch()`), charged to the switching CPU.
    pub ctx_switch_ns: u64,
    /// One `try_to_wake_up()`: the task's state and lock, placement and
    /// the enqueue, charged to the waker's CPU (a timer's wakeup to the
    /// CPU it fires on).
    pub wakeup_ns: u64,
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
    /// From a wakeup onto an idle CPU to the wakee running there: the
    /// IPI and the idle exit on hardware; under TCG, the wait for the one
    /// host thread to run that vCPU (`make replay` measures a median of
    /// 58 us over the guest's traces, quartiles 29 and 144 us). 0 by default, as the model was built and
    /// calibrated; `schedsim replay --wake-idle-us` sets it. Not in
    /// [`COST_FIELDS`]: scaling 0 changes nothing.
    pub wake_idle_ns: u64,
    /// From a remote wakeup onto a CPU with nothing to run to the wakee
    /// enqueued there: `ttwu_queue_cond()` sends such wakeups through the
    /// target's wake list, and its IPI enqueues them. On hardware a
    /// microsecond or two; under single-threaded TCG the IPI waits for
    /// the target vCPU's turn on the one host thread (``make replay``:
    /// from ``sched_waking`` to ``sched_wakeup``, medians of 0.27 ms under
    /// request-response to 2.8 ms under hackbench), and all that time
    /// `idle_cpu()` says no for the target. 0 (no wake list) by default;
    /// `schedsim replay --wake-idle-us guest` sets it. Not in
    /// [`COST_FIELDS`], as `wake_idle_ns`.
    pub wake_list_ns: u64,
    /// The same for a wakeup onto a CPU that runs something and shares
    /// no cache with the waking CPU: `ttwu_queue_cond()` sends those
    /// through the wake list too ("avoid accessing remote data"), where a
    /// wakee of the waker's LLC is enqueued at once. Under single-threaded
    /// TCG its IPI waits for the busy vCPU's turn (``make replay``:
    /// medians of 2.2-2.5 ms under hackbench on smt2 and numa2, 0.24 ms
    /// under request-response, against 5-9 us within an LLC). 0 (enqueued
    /// at once) by default; `schedsim replay --wake-idle-us guest` sets
    /// it. Not in [`COST_FIELDS`], as `wake_idle_ns`.
    pub wake_list_busy_ns: u64,
    /// From a fork placed on an idle CPU (`wake_up_new_task()`) to the
    /// child running there. The child is enqueued at once, not through
    /// the wake list, and `resched_curr()`'s IPI wakes the target; under
    /// single-threaded TCG that IPI waits for the target vCPU's turn as
    /// the wake list's does (`make replay`: 2.0 ms at the median under
    /// hackbench, where a wakeup's runs 0.2 ms after its `sched_wakeup`).
    /// 0 by default; `schedsim replay --wake-idle-us guest` sets it. Not
    /// in [`COST_FIELDS`], as `wake_idle_ns`.
    pub fork_idle_ns: u64,
    /// From a wakeup preemption decided on one CPU for another that runs
    /// something to the preemption there: `resched_curr()` sets the
    /// flag and sends an IPI, which under single-threaded TCG waits for
    /// the target vCPU's turn, the wakee queued there meanwhile, where a
    /// balancer can take it (``make replay``: 2.9-5.0 ms at the median
    /// under hackbench, the medians of each topology's traces, 0.17 ms
    /// under request-response, where a wakee preempts its waker's own
    /// CPU in 7 us, on the way back from the syscall). The target's task
    /// entering the kernel before the IPI comes acts on the flag then. 0 (at once) by
    /// default; `schedsim replay --wake-idle-us guest` sets it. Not in
    /// [`COST_FIELDS`], as `wake_idle_ns`.
    pub resched_busy_ns: u64,
}

impl Default for CostModel {
    fn default() -> Self {
        Self {
            ctx_switch_ns: 1_500,
            wakeup_ns: 1_000,
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
            wake_idle_ns: 0,
            wake_list_ns: 0,
            wake_list_busy_ns: 0,
            fork_idle_ns: 0,
            resched_busy_ns: 0,
        }
    }
}

/// The guest's `try_to_wake_up()`, in ns of the host thread that runs
/// it (see [`TcgCost`]): fitted (`schedsim calibrate`, "The hackbench
/// model, fitted" in `Documentation/schedsim.rst`) to the schedstat
/// `sched_count` and task time (`rq_cpu_time`) of `make bench`'s hackbench
/// runs of 2026-12-04 on llc16 and the 8-vCPU guests
/// (`calibrate::FIT_SEND_US` says how).
pub const TCG_WAKEUP_HOST_NS: u64 = 20_000;
/// The guest's context switch, in ns of the host thread (as
/// [`TCG_WAKEUP_HOST_NS`]; 10 us before the fit took TCG's turns in,
/// `calibrate::FIT_SEND_US`).
pub const TCG_CTX_SWITCH_HOST_NS: u64 = 14_000;

/// How many times its modelled cost a newidle balance reads on the TCG
/// guest's clock (`Config::lb_clock_factor`): the clock runs on while the
/// one host thread serves the other vCPUs. After `reqresp 4 3 50 100
/// 3000` on numa2 (`make shell`, 2026-12-05) the guest's debugfs
/// `max_newidle_lb_cost` read 0.41-1.13 ms at MC (4 CPUs) and 0.42-0.95 ms
/// at NUMA, where the model's MC balance costs 1.2 us (`lb_base_ns` and
/// 4 `lb_cpu_llc_ns`). The factor is the replay's fit (`schedsim.rst`,
/// "Replay against the guest"), not a mechanism: it stands for the host
/// thread's other work inside the measured span.
pub const TCG_LB_CLOCK_FACTOR: u32 = 300;

/// What becomes of an idle vCPU's tick under one-thread TCG
/// (`Config::idle_tick_turn`): a vCPU takes its timer interrupt on its
/// turn of the host thread, and whether that turn comes at the tick
/// depends on what the other vCPUs run. The shares taken at once, in
/// percent of the ticks of a CPU with nothing running or queued and no
/// wakeup on its way, by whether some CPU has a task waiting
/// (`replay::ticks::TickClass`). A tick not taken at once waits for the
/// vCPU's next turn, which a wakeup's IPI brings: taken with the CPU's
/// next wakeup, as a busy CPU's, or lost if the next tick comes first; a
/// CPU with a wakeup on its way waits for that one. The guest's record
/// shows it so: of the idle ticks not taken at once on the 38
/// function-traced runs of 2026-12-07, 96% of those whose CPU had a
/// wakeup before the next tick were taken after it, and 96% of those
/// lost had none.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IdleTickTurn {
    /// Taken at once when no CPU has a task waiting behind a running
    /// one.
    pub take_free_pct: u32,
    /// Taken at once when some CPU has one: a vCPU with work queued
    /// holds the host thread.
    pub take_waiting_pct: u32,
}

/// [`IdleTickTurn`] as the guest's record shows it: the function
/// tracer's `sched_tick()` entries against the state at each tick
/// instant (`SLB_REPLAY_FUNCS` of `make replay`, 2026-12-07, every
/// hackbench experiment on smt2 and numa2 in both states, 22 runs, 8530
/// ticks of a free CPU, read as `replay::ticks` reads them, `schedsim
/// ticks`; the counts are in `Documentation/schedsim.rst`, "An idle
/// vCPU's tick comes on its turn"). A replay given the guest's latencies
/// takes each trace's own where its record has them (`TickTurns::turn`).
pub const TCG_IDLE_TICK_TURN: IdleTickTurn = IdleTickTurn {
    take_free_pct: 82,
    take_waiting_pct: 24,
};

/// What a wakeup and a context switch cost in the guest `make bench`
/// boots: QEMU's TCG with one host thread for every vCPU
/// (`Documentation/results.rst`, "Machine"), so that kernel work of one
/// host ns takes as many guest ns as there are busy vCPUs sharing the
/// thread. Counted in host ns; [`CostModel::tcg_guest`] turns them into
/// a guest's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TcgCost {
    /// `try_to_wake_up()`, host ns.
    pub wakeup_host_ns: u64,
    /// A context switch, host ns.
    pub ctx_switch_host_ns: u64,
}

impl Default for TcgCost {
    /// The fit ([`TCG_WAKEUP_HOST_NS`], [`TCG_CTX_SWITCH_HOST_NS`]).
    fn default() -> Self {
        Self {
            wakeup_host_ns: TCG_WAKEUP_HOST_NS,
            ctx_switch_host_ns: TCG_CTX_SWITCH_HOST_NS,
        }
    }
}

impl CostModel {
    /// This model with the wakeup and context switch of a TCG guest whose
    /// one host thread runs `busy_vcpus` busy vCPUs: each takes `busy_vcpus`
    /// guest ns a host ns, and STEAL's attempt slowed with them
    /// ([`CostModel::tcg_steal`]). The other costs stay (not fitted;
    /// issue 32 leaves them).
    pub fn tcg_guest(&self, tcg: TcgCost, busy_vcpus: u32) -> Self {
        let n = u64::from(busy_vcpus.max(1));
        Self {
            wakeup_ns: tcg.wakeup_host_ns.saturating_mul(n),
            ctx_switch_ns: tcg.ctx_switch_host_ns.saturating_mul(n),
            ..self.tcg_steal(tcg, busy_vcpus)
        }
    }

    /// This model with only STEAL's attempt (its mask lines, its victim's
    /// lock) as slow as in that TCG guest: by the guest's context switch
    /// over this model's. The attempt's time is a window, not only a
    /// cost: how often the victim has run its task or work has come to
    /// the stealer when the lock is taken. A replay takes this alone,
    /// since its scripts' bursts already hold the guest's own wakeups and
    /// switches.
    pub fn tcg_steal(&self, tcg: TcgCost, busy_vcpus: u32) -> Self {
        let n = u64::from(busy_vcpus.max(1));
        let switch_ns = tcg.ctx_switch_host_ns.saturating_mul(n);
        let slow = |ns: u64| {
            let v = u128::from(ns) * u128::from(switch_ns) / u128::from(self.ctx_switch_ns.max(1));
            u64::try_from(v).unwrap_or(u64::MAX)
        };
        Self {
            steal_base_ns: slow(self.steal_base_ns),
            steal_per_line_ns: slow(self.steal_per_line_ns),
            steal_per_victim_ns: slow(self.steal_per_victim_ns),
            ..*self
        }
    }
}

/// How many quantiles of a latency [`LatencySpread`] keeps.
pub const SPREAD_POINTS: usize = 40;

/// The spread of the five TCG latencies a replayed trace shows, each as
/// [`SPREAD_POINTS`] evenly spaced quantiles (the `(i + 1/2) / n`-th) of
/// the guest's own: a wakeup onto an idle CPU to its run
/// ([`CostModel::wake_idle_ns`]), the wake list's onto an idle CPU
/// ([`CostModel::wake_list_ns`]) and onto a busy one across LLCs
/// ([`CostModel::wake_list_busy_ns`]), a fork's onto an idle CPU
/// ([`CostModel::fork_idle_ns`]) and a remote wakeup preemption's
/// ([`CostModel::resched_busy_ns`]). The medians are a poor stand-in: a
/// vCPU's turn comes after 25 us or after 600 us (the 10th and 90th
/// percentiles of the wake list's under request-response), and what the
/// tail does (two wakees stacked on one CPU whose turn is late, and one
/// of them left for a balancer) a median never does. Empty: the model's
/// constant.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LatencySpread {
    /// Of `CostModel::wake_idle_ns`.
    pub wake_idle_ns: Vec<u64>,
    /// Of `CostModel::wake_list_ns`.
    pub wake_list_ns: Vec<u64>,
    /// Of `CostModel::wake_list_busy_ns`.
    pub wake_list_busy_ns: Vec<u64>,
    /// Of `CostModel::fork_idle_ns`.
    pub fork_idle_ns: Vec<u64>,
    /// Of `CostModel::resched_busy_ns`.
    pub resched_busy_ns: Vec<u64>,
}

/// Every constant of [`CostModel`] but the five TCG latencies
/// (`wake_idle_ns`, `wake_list_ns`, `wake_list_busy_ns`, `fork_idle_ns`,
/// `resched_busy_ns`:
/// 0 unless a replay sets them), by field name, in its order: what `schedsim experiment
/// sensitivity` scales one at a time.
pub const COST_FIELDS: &[&str] = &[
    "ctx_switch_ns",
    "wakeup_ns",
    "sis_base_ns",
    "sis_per_cpu_ns",
    "lb_base_ns",
    "lb_cpu_llc_ns",
    "lb_cpu_node_ns",
    "lb_cpu_remote_ns",
    "migrate_task_ns",
    "refill_llc_ns",
    "refill_node_ns",
    "refill_remote_ns",
    "msg_xllc_ns",
    "msg_xnode_ns",
    "steal_base_ns",
    "steal_per_line_ns",
    "steal_per_victim_ns",
];

impl CostModel {
    /// The constant named `name` ([`COST_FIELDS`]).
    fn field_mut(&mut self, name: &str) -> Option<&mut u64> {
        Some(match name {
            "ctx_switch_ns" => &mut self.ctx_switch_ns,
            "wakeup_ns" => &mut self.wakeup_ns,
            "sis_base_ns" => &mut self.sis_base_ns,
            "sis_per_cpu_ns" => &mut self.sis_per_cpu_ns,
            "lb_base_ns" => &mut self.lb_base_ns,
            "lb_cpu_llc_ns" => &mut self.lb_cpu_llc_ns,
            "lb_cpu_node_ns" => &mut self.lb_cpu_node_ns,
            "lb_cpu_remote_ns" => &mut self.lb_cpu_remote_ns,
            "migrate_task_ns" => &mut self.migrate_task_ns,
            "refill_llc_ns" => &mut self.refill_llc_ns,
            "refill_node_ns" => &mut self.refill_node_ns,
            "refill_remote_ns" => &mut self.refill_remote_ns,
            "msg_xllc_ns" => &mut self.msg_xllc_ns,
            "msg_xnode_ns" => &mut self.msg_xnode_ns,
            "steal_base_ns" => &mut self.steal_base_ns,
            "steal_per_line_ns" => &mut self.steal_per_line_ns,
            "steal_per_victim_ns" => &mut self.steal_per_victim_ns,
            _ => return None,
        })
    }

    /// This model with the constant `field` (every constant: `None`)
    /// multiplied by `factor`, rounded to the ns. The sensitivity runs
    /// use it: a claim that rests on one assumed cost should say how far
    /// that cost can be off before the claim goes.
    pub fn scaled(&self, field: Option<&str>, factor: f64) -> Result<Self, String> {
        if !(factor.is_finite() && factor > 0.0 && factor <= 1000.0) {
            return Err(format!("bad cost factor {factor}: expected 0 < f <= 1000"));
        }
        let mut m = *self;
        let names: Vec<&str> = match field {
            Some(f) => vec![f],
            None => COST_FIELDS.to_vec(),
        };
        for n in names {
            let v = m.field_mut(n).ok_or_else(|| {
                format!(
                    "unknown cost constant '{n}'; known: {}",
                    COST_FIELDS.join(", ")
                )
            })?;
            // Rounded, not truncated, and never below 0; a cost the
            // model reads as 0 stays 0.
            *v = (*v as f64 * factor).round() as u64;
        }
        Ok(m)
    }

    /// This model with the constants of `list` (`name=ns,...`, names of
    /// [`COST_FIELDS`]) set.
    pub fn with(&self, list: &str) -> Result<Self, String> {
        let mut m = *self;
        for item in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let bad = || format!("bad cost '{item}': expected NAME=NS, NS in 0..=100000000");
            let (name, v) = item.split_once('=').ok_or_else(bad)?;
            let ns = v
                .parse::<u64>()
                .ok()
                .filter(|&n| n <= 100_000_000)
                .ok_or_else(bad)?;
            *m.field_mut(name).ok_or_else(|| {
                format!(
                    "unknown cost constant '{name}'; known: {}",
                    COST_FIELDS.join(", ")
                )
            })? = ns;
        }
        Ok(m)
    }

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

    #[test]
    fn a_tcg_guest_is_slower_by_its_busy_vcpus() {
        let c = CostModel::default();
        let tcg = TcgCost {
            wakeup_host_ns: 20_000,
            ctx_switch_host_ns: 3_000,
        };
        let g = c.tcg_guest(tcg, 8);
        assert_eq!((g.wakeup_ns, g.ctx_switch_ns), (160_000, 24_000));
        // STEAL slowed as the switch: 24000 / 1500 = 16 times.
        assert_eq!(
            (g.steal_base_ns, g.steal_per_line_ns, g.steal_per_victim_ns),
            (3_200, 800, 1_600)
        );
        assert_eq!(
            CostModel {
                wakeup_ns: c.wakeup_ns,
                ctx_switch_ns: c.ctx_switch_ns,
                steal_base_ns: c.steal_base_ns,
                steal_per_line_ns: c.steal_per_line_ns,
                steal_per_victim_ns: c.steal_per_victim_ns,
                ..g
            },
            c
        );
        assert_eq!(c.tcg_guest(tcg, 0), c.tcg_guest(tcg, 1));
        // A replay's: STEAL slowed alone, the wakeup and switch native.
        let s = c.tcg_steal(tcg, 8);
        assert_eq!(
            (s.wakeup_ns, s.ctx_switch_ns),
            (c.wakeup_ns, c.ctx_switch_ns)
        );
        assert_eq!(s.steal_per_line_ns, g.steal_per_line_ns);
    }

    #[test]
    fn with_sets_named_constants() {
        let c = CostModel::default();
        let m = c.with("wakeup_ns=7, ctx_switch_ns=0").unwrap();
        assert_eq!((m.wakeup_ns, m.ctx_switch_ns), (7, 0));
        assert_eq!(c.with("").unwrap(), c);
        assert!(c.with("nope=1").is_err() && c.with("wakeup_ns").is_err());
        assert!(c.with("wakeup_ns=-1").is_err());
    }

    #[test]
    fn scaling_one_constant_or_all() {
        let c = CostModel::default();
        let one = c.scaled(Some("refill_remote_ns"), 0.1).unwrap();
        assert_eq!(one.refill_remote_ns, 10_000);
        assert_eq!(
            CostModel {
                refill_remote_ns: c.refill_remote_ns,
                ..one
            },
            c
        );
        let all = c.scaled(None, 10.0).unwrap();
        assert_eq!(
            (all.ctx_switch_ns, all.steal_per_victim_ns),
            (15_000, 1_000)
        );
        // Every name resolves: a field added to the struct and not to
        // the list would be left out of the sensitivity runs.
        for f in COST_FIELDS {
            assert_ne!(c.scaled(Some(f), 2.0).unwrap(), c, "{f}");
        }
        assert!(c.scaled(Some("nope"), 2.0).is_err());
        assert!(c.scaled(None, 0.0).is_err() && c.scaled(None, f64::NAN).is_err());
    }
}
