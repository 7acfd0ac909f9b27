// SPDX-License-Identifier: GPL-2.0

//! Schedstat-shaped counters: what `/proc/schedstat` (version 16) of the
//! guest kernel counts, counted at the same events in the model.
//!
//! Mirrors the `schedstat_inc()`/`schedstat_add()` calls of Linux 6.12.117:
//! `sched_balance_rq()` (`lb_count`, `lb_balanced`, `lb_failed`,
//! `lb_imbalance`, `lb_nobusyg`, `lb_nobusyq`), `detach_tasks()`
//! (`lb_gained`), `can_migrate_task()` (`lb_hot_gained`),
//! `active_load_balance_cpu_stop()` (`alb_count`, `alb_failed`,
//! `alb_pushed`), `ttwu_stat()` (`ttwu_count`, `ttwu_local`,
//! `ttwu_wake_remote`), `wake_affine()` (`ttwu_move_affine`) and
//! `set_next_task_idle()` (`sched_goidle`), per CPU and per domain level,
//! the balance counters per idle type; and `show_schedstat()`'s text, so
//! that `scripts/bench_report.py` can read a simulated run as it reads a
//! guest's. Beside them, the counters the module publishes in debugfs
//! (`rust/hooks.rs`: `steal/{calls,tried,attempts,stolen}`,
//! `sis_select/{calls,found}`, `sis_account/{calls,scans,loops,scan_ns}`).
//!
//! Not counted, because the model has no such event: `sbe_*`, `sbf_*`
//! (exec and fork balancing), `ttwu_move_balance` (0 in 6.12 too),
//! `yld_count`, `sched_count`, `rq_cpu_time`, `run_delay`, `pcount`.

use crate::sim::IdleType;
use crate::sim::Sim;
use crate::topology::Topology;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// `SCHEDSTAT_VERSION` of 6.12.
pub const SCHEDSTAT_VERSION: u32 = 16;

/// The idle types in `show_schedstat()`'s column order (version 16:
/// `__CPU_NOT_IDLE`, `CPU_IDLE`, `CPU_NEWLY_IDLE`) with the suffix
/// `bench_report.py` gives their columns.
pub const IDLE_TYPE_NAMES: [&str; 3] = ["busy", "idle", "newidle"];

/// The column of an idle type.
fn idle_index(idle: IdleType) -> usize {
    match idle {
        IdleType::NotIdle => 0,
        IdleType::Idle => 1,
        IdleType::NewlyIdle => 2,
    }
}

/// One idle type's balance counters of one domain.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct LbStat {
    /// `sched_balance_rq()` calls.
    pub lb_count: u64,
    /// ... that found nothing to do (`out_balanced`).
    pub lb_balanced: u64,
    /// ... that found an imbalance and moved nothing.
    pub lb_failed: u64,
    /// Sum of `env.imbalance` where a busiest queue was found.
    pub lb_imbalance: u64,
    /// Tasks `detach_tasks()` moved.
    pub lb_gained: u64,
    /// ... of them cache hot, moved because balancing had failed.
    pub lb_hot_gained: u64,
    /// No busiest queue in the busiest group.
    pub lb_nobusyq: u64,
    /// No busiest group.
    pub lb_nobusyg: u64,
}

impl LbStat {
    /// The counters in `show_schedstat()`'s order.
    fn columns(&self) -> [u64; 8] {
        [
            self.lb_count,
            self.lb_balanced,
            self.lb_failed,
            self.lb_imbalance,
            self.lb_gained,
            self.lb_hot_gained,
            self.lb_nobusyq,
            self.lb_nobusyg,
        ]
    }
}

/// `bench_report.py`'s names of [`LbStat::columns`].
pub const LB_FIELDS: [&str; 8] = [
    "lb_count",
    "lb_balanced",
    "lb_failed",
    "lb_imbalance",
    "lb_gained",
    "lb_hot_gained",
    "lb_nobusyq",
    "lb_nobusyg",
];

/// One CPU's counters of one domain level.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct DomainStat {
    /// Level name (`SMT`, `MC`, `PKG`, `NUMA`).
    pub level: &'static str,
    /// Balance counters per idle type, in [`IDLE_TYPE_NAMES`] order.
    pub lb: [LbStat; 3],
    /// Active balances the stopper ran.
    pub alb_count: u64,
    /// ... that found no task to push.
    pub alb_failed: u64,
    /// ... that pushed one.
    pub alb_pushed: u64,
    /// Wakeups by this CPU placed elsewhere in this domain.
    pub ttwu_wake_remote: u64,
    /// `wake_affine()` in this domain chose the waker's CPU.
    pub ttwu_move_affine: u64,
}

/// One CPU's counters.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct CpuStat {
    /// Calls of `__schedule()` (`rq->sched_count`): every pick, whether
    /// it switches or keeps `curr`, and the idle task's own.
    pub sched_count: u64,
    /// Switches to the idle task.
    pub sched_goidle: u64,
    /// Wakeups this CPU did.
    pub ttwu_count: u64,
    /// ... that placed the task on this CPU.
    pub ttwu_local: u64,
    /// Per domain level, bottom up.
    pub domains: Vec<DomainStat>,
}

/// The module's debugfs counters (`rust/hooks.rs`), as the series counts
/// them in the guest.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct ModuleStat {
    /// `steal/calls`: the steal hook ran (STEAL on, a CPU going idle).
    pub steal_calls: u64,
    /// `steal/tried`: `should_steal()` said yes and the mask was walked.
    pub steal_tried: u64,
    /// `steal/attempts`: victims tried.
    pub steal_attempts: u64,
    /// `steal/stolen`: tasks stolen.
    pub steal_stolen: u64,
    /// `sis_select/calls`: the series' scan ran (SIS_PROP or SIS_FOLD).
    pub sis_select_calls: u64,
    /// `sis_select/found`: ... and found an idle CPU.
    pub sis_select_found: u64,
    /// `sis_account/calls`.
    pub sis_account_calls: u64,
    /// `sis_account/scans`: ... that visited at least one CPU.
    pub sis_account_scans: u64,
    /// `sis_account/loops`: CPUs (or cores) visited.
    pub sis_account_loops: u64,
    /// `sis_account/scan_ns`: the scans' modelled time.
    pub sis_account_scan_ns: u64,
    /// `idle_cpus_balanced/calls`: the idle-CPU test (Galbraith 2016)
    /// was asked, an idle CPU's balance with spare capacity here and a
    /// busiest group of more than one CPU that is not overloaded.
    pub idle_cpus_calls: u64,
    /// `idle_cpus_balanced/balanced`: ... and it said "balanced".
    pub idle_cpus_balanced: u64,
    /// `detach_skip/calls`: `detach_tasks()`'s load test (Guittot's
    /// 1/4) was asked of a task a load-based balance could take.
    pub detach_skip_calls: u64,
    /// `detach_skip/skipped`: ... and the task's load was too big for
    /// what was left of the imbalance.
    pub detach_skip_skipped: u64,
}

/// Every counter of a run.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct SchedStat {
    /// Per CPU.
    pub cpus: Vec<CpuStat>,
    /// The module's counters.
    pub module: ModuleStat,
    /// Where a count for a CPU or level that does not exist goes, so that
    /// no hook can index out of range.
    #[serde(skip)]
    sink: LbStat,
}

impl SchedStat {
    /// Zeroed counters for every CPU and domain level of `topo`.
    pub fn new(topo: &Topology) -> Self {
        Self {
            cpus: topo
                .domains
                .iter()
                .map(|doms| CpuStat {
                    domains: doms
                        .iter()
                        .map(|d| DomainStat {
                            level: d.kind.name(),
                            ..DomainStat::default()
                        })
                        .collect(),
                    ..CpuStat::default()
                })
                .collect(),
            module: ModuleStat::default(),
            sink: LbStat::default(),
        }
    }

    /// The counters of `cpu`'s domain `k`, if it has one.
    pub fn domain_mut(&mut self, cpu: u32, k: usize) -> Option<&mut DomainStat> {
        self.cpus
            .get_mut(cpu as usize)
            .and_then(|c| c.domains.get_mut(k))
    }

    /// The balance counters of `cpu`'s domain `k` for `idle`.
    pub fn lb_mut(&mut self, cpu: u32, k: usize, idle: IdleType) -> &mut LbStat {
        match self
            .cpus
            .get_mut(cpu as usize)
            .and_then(|c| c.domains.get_mut(k))
        {
            Some(d) => &mut d.lb[idle_index(idle)],
            None => &mut self.sink,
        }
    }

    /// The counters of `cpu`.
    pub fn cpu_mut(&mut self, cpu: u32) -> Option<&mut CpuStat> {
        self.cpus.get_mut(cpu as usize)
    }

    /// Sums over CPUs and levels under `bench_report.py`'s metric names:
    /// each balance counter in total and per idle type (`lb_count_busy`,
    /// `lb_count_idle`, `lb_count_newidle`), the tail counters, the per-CPU
    /// ones and the module's.
    pub fn totals(&self) -> BTreeMap<String, u64> {
        let mut t = BTreeMap::new();
        let mut add = |k: &str, v: u64| {
            let e = t.entry(k.to_string()).or_insert(0u64);
            *e = e.saturating_add(v);
        };
        for c in &self.cpus {
            add("sched_count", c.sched_count);
            add("sched_goidle", c.sched_goidle);
            add("ttwu_count", c.ttwu_count);
            add("ttwu_local", c.ttwu_local);
            for d in &c.domains {
                for (i, lb) in d.lb.iter().enumerate() {
                    for (name, v) in LB_FIELDS.iter().zip(lb.columns()) {
                        add(name, v);
                        add(&format!("{name}_{}", IDLE_TYPE_NAMES[i]), v);
                    }
                }
                add("alb_count", d.alb_count);
                add("alb_failed", d.alb_failed);
                add("alb_pushed", d.alb_pushed);
                add("ttwu_wake_remote", d.ttwu_wake_remote);
                add("ttwu_move_affine", d.ttwu_move_affine);
            }
        }
        let m = &self.module;
        for (k, v) in [
            ("steal_calls", m.steal_calls),
            ("steal_tried", m.steal_tried),
            ("steal_attempts", m.steal_attempts),
            ("steal_stolen", m.steal_stolen),
            ("sis_select_calls", m.sis_select_calls),
            ("sis_select_found", m.sis_select_found),
            ("sis_account_calls", m.sis_account_calls),
            ("sis_account_scans", m.sis_account_scans),
            ("sis_account_loops", m.sis_account_loops),
            ("sis_account_scan_ns", m.sis_account_scan_ns),
            ("idle_cpus_balanced_calls", m.idle_cpus_calls),
            ("idle_cpus_balanced_balanced", m.idle_cpus_balanced),
            ("detach_skip_calls", m.detach_skip_calls),
            ("detach_skip_skipped", m.detach_skip_skipped),
        ] {
            add(k, v);
        }
        t
    }

    /// The balance counters summed over CPUs per domain level and idle
    /// type, as `scripts/replay_extract.py` writes a guest run's
    /// (`# schedstat lb_count_idle@NUMA 732`).
    pub fn balance_by_level(&self) -> BTreeMap<String, u64> {
        let mut t = BTreeMap::new();
        for c in &self.cpus {
            for d in &c.domains {
                for (i, lb) in d.lb.iter().enumerate() {
                    for (name, v) in LB_FIELDS.iter().zip(lb.columns()) {
                        let e = t
                            .entry(format!("{name}_{}@{}", IDLE_TYPE_NAMES[i], d.level))
                            .or_insert(0u64);
                        *e = e.saturating_add(v);
                    }
                }
            }
        }
        t
    }

    /// `show_schedstat()`'s text for these counters, version 16: a cpu
    /// line (`yld_count 0 sched_count sched_goidle ttwu_count ttwu_local
    /// rq_cpu_time run_delay pcount`, the unmodelled ones 0), then a
    /// domain line per level (the span as a hex mask, 24 balance columns,
    /// `alb_*`, `sbe_*` and `sbf_*`, `ttwu_wake_remote`,
    /// `ttwu_move_affine`, `ttwu_move_balance`).
    pub fn proc_schedstat(&self, topo: &Topology, timestamp_jiffies: u64) -> String {
        let mut o = format!("version {SCHEDSTAT_VERSION}\ntimestamp {timestamp_jiffies}\n");
        for (cpu, c) in self.cpus.iter().enumerate() {
            let _ = writeln!(
                o,
                "cpu{cpu} 0 0 {} {} {} {} 0 0 0",
                c.sched_count, c.sched_goidle, c.ttwu_count, c.ttwu_local
            );
            for (k, d) in c.domains.iter().enumerate() {
                let span = topo
                    .domains
                    .get(cpu)
                    .and_then(|doms| doms.get(k))
                    .map_or_else(String::new, |dom| hex_mask(&dom.cpus));
                let _ = write!(o, "domain{k} {span}");
                for lb in &d.lb {
                    for v in lb.columns() {
                        let _ = write!(o, " {v}");
                    }
                }
                let _ = writeln!(
                    o,
                    " {} {} {} 0 0 0 0 0 0 {} {} 0",
                    d.alb_count, d.alb_failed, d.alb_pushed, d.ttwu_wake_remote, d.ttwu_move_affine
                );
            }
        }
        o
    }
}

/// `%*pb`: a CPU set as the kernel prints a cpumask in hex, 32-bit words
/// separated by commas, most significant first, leading zero words kept
/// up to the highest CPU.
fn hex_mask(cpus: &[u32]) -> String {
    let top = cpus.iter().copied().max().unwrap_or(0);
    let words = (top / 32).saturating_add(1) as usize;
    let mut w = vec![0u32; words];
    for &c in cpus {
        if let Some(x) = w.get_mut((c / 32) as usize) {
            *x |= 1u32 << (c % 32);
        }
    }
    let mut parts: Vec<String> = w.iter().rev().map(|x| format!("{x:08x}")).collect();
    if let Some(first) = parts.first_mut() {
        // The kernel prints the top word without its leading zeros only
        // when the mask's width says so; the parsers split on spaces and
        // read the mask as hex, so the short form is what they all take.
        *first = first.trim_start_matches('0').to_string();
        if first.is_empty() {
            *first = "0".into();
        }
    }
    parts.join(",")
}

impl Sim {
    /// `ttwu_stat()`: `waker_cpu` woke a task onto `cpu`. A wakeup from a
    /// timer counts on the CPU the timer fired on, the task's previous one.
    pub(crate) fn ss_ttwu(&mut self, waker_cpu: u32, cpu: u32) {
        let level = if waker_cpu == cpu {
            None
        } else {
            self.lowest_level_spanning(waker_cpu, cpu)
        };
        let ss = &mut self.schedstat;
        if let Some(c) = ss.cpu_mut(waker_cpu) {
            c.ttwu_count = c.ttwu_count.saturating_add(1);
            if waker_cpu == cpu {
                c.ttwu_local = c.ttwu_local.saturating_add(1);
            }
        }
        if let Some(d) = level.and_then(|k| ss.domain_mut(waker_cpu, k)) {
            d.ttwu_wake_remote = d.ttwu_wake_remote.saturating_add(1);
        }
    }

    /// `wake_affine()` in `this_cpu`'s domain `k` returned `target`.
    pub(crate) fn ss_wake_affine(&mut self, this_cpu: u32, k: usize, target: u32) {
        if target != this_cpu {
            return;
        }
        if let Some(d) = self.schedstat.domain_mut(this_cpu, k) {
            d.ttwu_move_affine = d.ttwu_move_affine.saturating_add(1);
        }
    }

    /// `__schedule()`'s `schedstat_inc(rq->sched_count)`: one call on
    /// `cpu`.
    pub(crate) fn ss_schedule(&mut self, cpu: u32) {
        if let Some(c) = self.schedstat.cpu_mut(cpu) {
            c.sched_count = c.sched_count.saturating_add(1);
        }
    }

    /// `set_next_task_idle()`: `cpu` switches to the idle task, if it is
    /// idle now.
    pub(crate) fn ss_goidle(&mut self, cpu: u32) {
        if !self.idle(cpu) {
            return;
        }
        if let Some(c) = self.schedstat.cpu_mut(cpu) {
            c.sched_goidle = c.sched_goidle.saturating_add(1);
        }
    }

    /// `active_load_balance_cpu_stop()`'s counters on `dst`'s lowest
    /// domain spanning `src`: one push run, which moved a task or not.
    pub(crate) fn ss_active(&mut self, dst: u32, src: u32, pushed: bool) {
        let k = self.lowest_level_spanning(dst, src);
        if let Some(d) = k.and_then(|k| self.schedstat.domain_mut(dst, k)) {
            d.alb_count = d.alb_count.saturating_add(1);
            if pushed {
                d.alb_pushed = d.alb_pushed.saturating_add(1);
            } else {
                d.alb_failed = d.alb_failed.saturating_add(1);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::Config;
    use crate::workload::Workload;

    #[test]
    fn proc_schedstat_has_the_version_16_shape() {
        let topo = Topology::preset("qemu8").unwrap();
        let mut s = SchedStat::new(&topo);
        s.lb_mut(1, 2, IdleType::NewlyIdle).lb_count = 7;
        s.lb_mut(99, 0, IdleType::Idle).lb_count = 1; // no such CPU: the sink
        let text = s.proc_schedstat(&topo, 5);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "version 16");
        assert_eq!(lines.len(), 2 + 8 * 4);
        let cpu1_pkg = lines[2 + 4 + 3];
        let f: Vec<&str> = cpu1_pkg.split_whitespace().collect();
        assert_eq!(f[0], "domain2");
        assert_eq!(f[1], "ff");
        // 24 balance columns, 3 alb, 6 sbe/sbf, 3 ttwu: 36 after the mask.
        assert_eq!(f.len(), 2 + 36);
        assert_eq!(f[2 + 16], "7", "newidle lb_count is the 17th column");
        assert_eq!(s.totals()["lb_count"], 7);
        assert_eq!(s.totals()["lb_count_newidle"], 7);
        assert_eq!(hex_mask(&[0, 1, 2, 3]), "f");
        assert_eq!(hex_mask(&[33]), "2,00000000");
    }

    /// A run counts what it did: every wakeup once, balances per type.
    #[test]
    fn a_run_fills_the_counters() {
        let cfg = Config::new(
            Topology::preset("2x4").unwrap(),
            Workload::parse("hackbench:1:4").unwrap(),
            1,
            200_000_000,
        );
        let r = crate::run(cfg);
        let t = r.schedstat.totals();
        let wakeups: u64 = r.tasks.iter().map(|x| x.wakeups).sum();
        assert_eq!(t["ttwu_count"], wakeups);
        assert!(t["ttwu_local"] + t["ttwu_wake_remote"] == t["ttwu_count"]);
        assert!(t["lb_count_newidle"] > 0 && t["lb_count_busy"] + t["lb_count_idle"] > 0);
        assert_eq!(
            t["lb_count"],
            t["lb_count_busy"] + t["lb_count_idle"] + t["lb_count_newidle"]
        );
        assert!(t["lb_balanced"] + t["lb_failed"] <= t["lb_count"]);
        assert!(t["sched_goidle"] > 0);
        // Every switch and every idle entry is a __schedule() call.
        assert!(t["sched_count"] >= r.stats.context_switches + t["sched_goidle"]);
        assert_eq!(t["lb_count_busy"] + t["lb_count_idle"], r.stats.lb_periodic);
    }
}
