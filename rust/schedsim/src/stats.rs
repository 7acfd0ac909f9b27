// SPDX-License-Identifier: GPL-2.0

//! What a run counts, and its result.
//!
//! The counters mirror the schedstats the kernel keeps for the same events
//! (`lb_count`, `lb_failed`, `lb_balanced`, `alb_pushed`, `ttwu_wake_remote`
//! and the series' debugfs counters such as `sis_select/{scans,loops}`),
//! so a simulated run and a guest run can be read side by side.

use crate::conserve::ConservationReport;
use crate::flags::Knobs;

/// Event counters.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Stats {
    /// Context switches.
    pub context_switches: u64,
    /// Replay (`sim/replay.rs`): a script's wake that found its wakee not
    /// blocked on it, kept as a token its next block takes, with the
    /// wakee queued on a CPU, waiting to run.
    pub replay_wakes_queued: u64,
    /// ... with the wakee running, mid-burst.
    pub replay_wakes_running: u64,
    /// ... with the wakee asleep on a timer (or exited).
    pub replay_wakes_other: u64,
    /// Replay: the run got stuck, every script left waiting for a wake no
    /// script would give (`Sim::replay_stuck_ns()`): when, ns.
    pub replay_stuck_ns: Option<u64>,
    /// Task migrations of every kind.
    pub migrations: u64,
    /// Migrations at wakeup (placement on another CPU).
    pub wakeup_migrations: u64,
    /// `wake_affine()` chose the waker's CPU by weight.
    pub wake_affine_pulls: u64,
    /// `select_idle_sibling()` calls.
    pub sis_calls: u64,
    /// ... answered by target, prev or recent being idle.
    pub sis_target_idle: u64,
    /// ... that ran a scan (`select_idle_smt()` or `select_idle_cpu()`).
    pub sis_scans: u64,
    /// ... where a scan found an idle CPU.
    pub sis_found: u64,
    /// Wakeups placed on an idle CPU.
    pub sis_placed_idle: u64,
    /// CPUs read by scans.
    pub sis_scan_cpus: u64,
    /// Modelled scan time, ns.
    pub sis_scan_ns: u64,
    /// Periodic `sched_balance_rq()` calls (idle and busy).
    pub lb_periodic: u64,
    /// ... of those, from an idle CPU.
    pub lb_idle: u64,
    /// Tasks moved by periodic balancing.
    pub lb_moved: u64,
    /// Times the idle-CPU test (Galbraith 2016) said "balanced".
    pub idle_cpus_balanced: u64,
    /// Periodic balances that found an imbalance and moved nothing.
    pub lb_failed: u64,
    /// Active balances kicked.
    pub active_balances: u64,
    /// Newidle walks started.
    pub newidle_walks: u64,
    /// Newidle walks skipped before the first domain (nothing overloaded,
    /// or `avg_idle` below the lowest domain's cost).
    pub newidle_skipped: u64,
    /// Domains balanced by newidle walks.
    pub newidle_domains: u64,
    /// Domains of newidle walks that NI_RANDOM's dice skipped.
    pub newidle_dice_skipped: u64,
    /// Newidle walks stopped by the walk rule before the top domain.
    pub newidle_stopped: u64,
    /// Newidle walks that pulled a task.
    pub newidle_pulled: u64,
    /// Modelled newidle balancing time, ns.
    pub newidle_cost_ns: u64,
    /// STEAL attempts.
    pub steal_attempts: u64,
    /// STEAL successes.
    pub steals: u64,
    /// STEAL attempts whose victim had no task to give when its lock was
    /// taken (picked meanwhile, or only delayed ones left).
    pub steal_lost: u64,
    /// STEAL attempts ended because work came to the stealer meanwhile.
    pub steal_aborted: u64,
    /// Modelled STEAL time, ns.
    pub steal_cost_ns: u64,
    /// Modelled periodic balancing time, ns.
    pub lb_cost_ns: u64,
    /// All kernel overhead charged, ns.
    pub overhead_ns: u64,
    /// Messages (buddy sends, hackbench receives).
    pub messages: u64,
    /// A buddy pair went from one LLC to two.
    pub buddy_splits: u64,
}

impl Stats {
    /// Every counter with its name, in declaration order.
    pub fn fields(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("context_switches", self.context_switches),
            ("migrations", self.migrations),
            ("wakeup_migrations", self.wakeup_migrations),
            ("wake_affine_pulls", self.wake_affine_pulls),
            ("sis_calls", self.sis_calls),
            ("sis_target_idle", self.sis_target_idle),
            ("sis_scans", self.sis_scans),
            ("sis_found", self.sis_found),
            ("sis_placed_idle", self.sis_placed_idle),
            ("sis_scan_cpus", self.sis_scan_cpus),
            ("sis_scan_ns", self.sis_scan_ns),
            ("lb_periodic", self.lb_periodic),
            ("lb_idle", self.lb_idle),
            ("lb_moved", self.lb_moved),
            ("idle_cpus_balanced", self.idle_cpus_balanced),
            ("lb_failed", self.lb_failed),
            ("active_balances", self.active_balances),
            ("newidle_walks", self.newidle_walks),
            ("newidle_skipped", self.newidle_skipped),
            ("newidle_domains", self.newidle_domains),
            ("newidle_dice_skipped", self.newidle_dice_skipped),
            ("newidle_stopped", self.newidle_stopped),
            ("newidle_pulled", self.newidle_pulled),
            ("newidle_cost_ns", self.newidle_cost_ns),
            ("steal_attempts", self.steal_attempts),
            ("steals", self.steals),
            ("steal_lost", self.steal_lost),
            ("steal_aborted", self.steal_aborted),
            ("steal_cost_ns", self.steal_cost_ns),
            ("lb_cost_ns", self.lb_cost_ns),
            ("overhead_ns", self.overhead_ns),
            ("messages", self.messages),
            ("buddy_splits", self.buddy_splits),
        ]
    }
}

/// Per-task result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskStat {
    /// Behaviour.
    pub kind: &'static str,
    /// Useful work, ns.
    pub work_ns: u64,
    /// Migrations.
    pub migrations: u64,
    /// Wakeups.
    pub wakeups: u64,
    /// Its random draws in order (burst and sleep lengths, ns), when the
    /// run was configured to record them; empty otherwise.
    pub draws: Vec<u64>,
}

/// Sampled state over time, for plots.
#[derive(Clone, Debug, Default)]
pub struct Timeline {
    /// Sample times, ns.
    pub t_ns: Vec<u64>,
    /// Per sample, cumulative busy time of each CPU.
    pub busy_ns: Vec<Vec<u64>>,
    /// Per sample, cumulative work of each task.
    pub work_ns: Vec<Vec<u64>>,
    /// Per sample, `nr_running` of each CPU.
    pub nr_running: Vec<Vec<u32>>,
}

impl Timeline {
    /// Adds a sample.
    pub fn push(&mut self, t_ns: u64, busy: Vec<u64>, work: Vec<u64>, nr: Vec<u32>) {
        if self.t_ns.last() == Some(&t_ns) {
            return;
        }
        self.t_ns.push(t_ns);
        self.busy_ns.push(busy);
        self.work_ns.push(work);
        self.nr_running.push(nr);
    }
}

/// The result of a run.
#[derive(Clone, Debug)]
pub struct RunResult {
    /// Preset name.
    pub topology: String,
    /// CPUs.
    pub nr_cpus: u32,
    /// Workload text.
    pub workload: String,
    /// Flags changed from the defaults.
    pub flags: String,
    /// Knobs.
    pub knobs: Knobs,
    /// Seed.
    pub seed: u64,
    /// `CONFIG_HZ`.
    pub hz: u32,
    /// Simulated time, ns: the configured duration, or when a finite
    /// workload's last task exited.
    pub duration_ns: u64,
    /// A finite workload (hackbench with `loops`) ran to its end before
    /// the configured duration.
    pub ended: bool,
    /// Tasks.
    pub tasks: Vec<TaskStat>,
    /// Busy CPU time, ns.
    pub busy_ns: u64,
    /// Counters.
    pub stats: Stats,
    /// `/proc/schedstat`'s counters and the module's.
    pub schedstat: crate::schedstat::SchedStat,
    /// Work-conservation findings.
    pub conservation: ConservationReport,
    /// FNV-1a hash of every scheduling event.
    pub trace_hash: u64,
    /// Samples for plots.
    pub timeline: Timeline,
}

impl RunResult {
    /// "topology (N CPUs), workload, flags [..], seed S, HZ H": the title
    /// of a run in the table and the plot.
    pub fn title(&self) -> String {
        format!(
            "{} ({} CPUs), {}, flags [{}], seed {}, HZ {}",
            self.topology,
            self.nr_cpus,
            self.workload,
            if self.flags.is_empty() {
                "defaults"
            } else {
                &self.flags
            },
            self.seed,
            self.hz
        )
    }
}

impl RunResult {
    /// min/max useful work over the tasks of `kind` (all tasks: None), in
    /// percent, as Guittot's rt-app measurement.
    pub fn min_max_ratio_pct(&self, kind: Option<&str>) -> f64 {
        let w: Vec<u64> = self
            .tasks
            .iter()
            .filter(|t| kind.is_none_or(|k| t.kind == k))
            .map(|t| t.work_ns)
            .collect();
        let (Some(&min), Some(&max)) = (w.iter().min(), w.iter().max()) else {
            return 0.0;
        };
        if max == 0 {
            return 0.0;
        }
        100.0 * min as f64 / max as f64
    }

    /// Busy CPU time over available CPU time, percent.
    pub fn utilisation_pct(&self) -> f64 {
        let cap = self.duration_ns as f64 * f64::from(self.nr_cpus);
        if cap == 0.0 {
            0.0
        } else {
            100.0 * self.busy_ns as f64 / cap
        }
    }

    /// Messages per simulated second.
    pub fn messages_per_s(&self) -> f64 {
        if self.duration_ns == 0 {
            0.0
        } else {
            self.stats.messages as f64 * 1e9 / self.duration_ns as f64
        }
    }

    /// Total useful work, ns.
    pub fn total_work_ns(&self) -> u64 {
        self.tasks.iter().map(|t| t.work_ns).sum()
    }
}
