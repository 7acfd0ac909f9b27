// SPDX-License-Identifier: GPL-2.0

//! Load balancing of one domain, and the periodic walk over the domains;
//! newidle balancing and STEAL, which run it from an idle CPU, are
//! `newidle.rs`.
//!
//! Mirrors `kernel/sched/fair.c` of Linux 6.12.117: `sched_balance_domains()`
//! (ex `rebalance_domains()`), `sched_balance_rq()` (ex `load_balance()`),
//! `should_we_balance()`, `update_sd_lb_stats()`, `group_classify()` with
//! `group_is_overloaded()` and `group_has_capacity()`,
//! `update_sd_pick_busiest()`, `sched_balance_find_src_group()`,
//! `calculate_imbalance()`, `sibling_imbalance()`,
//! `sched_balance_find_src_rq()`, `detach_tasks()`, `can_migrate_task()`
//! with `task_hot()`, `need_active_balance()`,
//! `active_load_balance_cpu_stop()`, and SIS_UTIL's
//! `update_idle_cpu_scan()`.
//!
//! Every decision the series made replaceable goes through
//! `sched_lb_policy`, with the inputs the C shims pass: the idle-CPU
//! threshold (`idle_cpus`), the `imbalance_pct` test (`avg_load`), the
//! detach test (`detach_load`), the balance interval
//! (`balance_interval`, `jiffies`). The rest is the stock C, reduced: no cgroups, no misfit or asym
//! packing, no affinity, no RT or IRQ pressure on capacity. The balancer
//! counts delayed-dequeue tasks (`nr_running`, as 6.12.117's
//! `h_nr_queued`) and may move them, since 6.12.117's
//! `can_migrate_task()` does not skip them; STEAL does not.

use super::{Sim, CAPACITY, MIGRATION_COST_NS};
use crate::cpumask::CpuMask;
use crate::topology::{SD_NUMA, SD_PREFER_SIBLING, SD_SHARE_CPUCAPACITY, SD_SHARE_LLC};
use sched_lb_policy::avg_load::{self, AvgLoadInput};
use sched_lb_policy::balance_interval::{sd_balance_interval_jiffies, IntervalInput};
use sched_lb_policy::idle_cpus::IdleCpusFlags;
use sched_lb_policy::{detach_load, idle_cpus};

/// `sysctl_sched_nr_migrate` (`SCHED_NR_MIGRATE_BREAK`, not PREEMPT_RT):
/// the most tasks one detach walk looks at.
pub(super) const NR_MIGRATE: usize = 32;

/// `enum cpu_idle_type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IdleType {
    /// `__CPU_NOT_IDLE`.
    NotIdle,
    /// `CPU_IDLE`.
    Idle,
    /// `CPU_NEWLY_IDLE`.
    NewlyIdle,
}

/// `enum group_type`, the ones modelled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum GroupType {
    HasSpare,
    FullyBusy,
    SmtBalance,
    Overloaded,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Migration {
    Load,
    Util,
    Task,
}

#[derive(Clone, Copy, Debug)]
struct SgStats {
    group: usize,
    load: u64,
    util: u64,
    nr: u32,
    idle_cpus: u32,
    weight: u32,
    capacity: u64,
    cores: u32,
    avg_load: u64,
    gtype: GroupType,
}

struct Found {
    busiest: SgStats,
    imbalance: i64,
    mig: Migration,
}

/// `sched_balance_rq()`'s outcome.
pub struct Balanced {
    /// Tasks moved.
    pub moved: u32,
    /// Modelled time spent, ns.
    pub cost_ns: u64,
    /// `*continue_balancing`: false when `should_we_balance()` said
    /// another CPU of the group balances this level, and so the levels
    /// above it.
    pub continue_balancing: bool,
}

impl Sim {
    pub(super) fn interval_jiffies(&self, cpu: u32, k: usize, busy: bool) -> u64 {
        let d = &self.cfg.topology.domains[cpu as usize][k];
        sd_balance_interval_jiffies(IntervalInput {
            balance_interval_ms: self.rqs[cpu as usize].dom[k].balance_interval_ms,
            busy_factor: d.busy_factor,
            cpu_busy: busy,
            max_interval_jiffies: self.max_lb_interval_jiffies(),
            hz: self.cfg.hz,
            busy_dec: self.cfg.flags.lb_busy_interval_dec,
        })
    }

    /// `sched_balance_domains()`: the periodic balance of one CPU.
    pub(crate) fn rebalance_domains(&mut self, cpu: u32) {
        let j = self.jiffies();
        let mut idle = if self.idle(cpu) {
            IdleType::Idle
        } else {
            IdleType::NotIdle
        };
        let mut busy = idle == IdleType::NotIdle;
        let mut next = j.saturating_add(self.hz().saturating_mul(60));
        let mut need_decay = false;
        let mut max_cost = 0u64;
        let mut continue_balancing = true;
        let levels = self.cfg.topology.domains[cpu as usize].len();
        for k in 0..levels {
            // 6.12.117 assigns, it does not accumulate: what decides the
            // rq-wide decay below is the last domain visited.
            need_decay = self.update_newidle_cost(cpu, k, 0, 0);
            max_cost =
                max_cost.saturating_add(self.rqs[cpu as usize].dom[k].max_newidle_lb_cost_ns);
            // Another CPU of this CPU's group balances this level and those
            // above; the walk goes on only to decay their costs, and the
            // levels it skips do not bring next_balance forward.
            if !continue_balancing {
                if need_decay {
                    continue;
                }
                break;
            }
            let mut interval = self.interval_jiffies(cpu, k, busy);
            let last = self.rqs[cpu as usize].dom[k].last_balance;
            if j >= last.saturating_add(interval) {
                self.stats.lb_periodic += 1;
                if idle == IdleType::Idle {
                    self.stats.lb_idle += 1;
                }
                let b = self.balance_rq(cpu, k, idle);
                continue_balancing = b.continue_balancing;
                self.stats.lb_cost_ns += b.cost_ns;
                self.charge(cpu, b.cost_ns);
                if b.moved > 0 {
                    self.stats.lb_moved += u64::from(b.moved);
                    // A pull into this CPU ends NEWIDLE_BACKOFF's failure
                    // count, whichever balancer made it.
                    self.newidle_account(cpu, true);
                    idle = if self.idle(cpu) {
                        IdleType::Idle
                    } else {
                        IdleType::NotIdle
                    };
                    busy = idle == IdleType::NotIdle;
                }
                self.rqs[cpu as usize].dom[k].last_balance = j;
                interval = self.interval_jiffies(cpu, k, busy);
            }
            let due = self.rqs[cpu as usize].dom[k]
                .last_balance
                .saturating_add(interval);
            next = next.min(due);
        }
        let rq = &mut self.rqs[cpu as usize];
        if need_decay {
            rq.max_idle_balance_cost_ns = MIGRATION_COST_NS.max(max_cost);
        }
        rq.next_balance = next;
    }

    /// `should_we_balance()`.
    fn should_we_balance(&self, cpu: u32, k: usize, idle: IdleType) -> bool {
        if idle == IdleType::NewlyIdle {
            return self.nr_running(cpu) == 0;
        }
        let topo = &self.cfg.topology;
        let d = &topo.domains[cpu as usize][k];
        let g = &topo.groups[d.groups[0]];
        let mut idle_smt: Option<u32> = None;
        let mut skip = CpuMask::new(topo.nr_cpus);
        for &c in &g.cpus {
            if skip.test(c) || !self.idle(c) {
                continue;
            }
            if d.flags & SD_SHARE_CPUCAPACITY == 0
                && !topo.smt_mask[c as usize].iter().all(|s| self.idle(s))
            {
                idle_smt = idle_smt.or(Some(c));
                for s in topo.smt_mask[c as usize].iter() {
                    skip.set(s);
                }
                continue;
            }
            return c == cpu;
        }
        if let Some(s) = idle_smt {
            return s == cpu;
        }
        g.balance_cpu == cpu
    }

    /// `update_sg_lb_stats()` + `group_classify()`.
    fn group_stats(
        &mut self,
        cpu: u32,
        k: usize,
        gid: usize,
        local: bool,
        idle: IdleType,
        cost: &mut u64,
    ) -> SgStats {
        let weight = self.cfg.topology.groups[gid].cpus.len() as u32;
        let (mut load, mut util, mut nr, mut idle_cpus) = (0u64, 0u64, 0u32, 0u32);
        let mut runnable = 0u64;
        for i in 0..weight as usize {
            let c = self.cfg.topology.groups[gid].cpus[i];
            *cost += self.cost.lb_read_ns(&self.cfg.topology, cpu, c);
            load += self.cpu_load(c);
            util += self.cpu_util(c);
            runnable = runnable.saturating_add(self.cpu_runnable(c));
            let n = self.nr_running(c);
            nr += n;
            if n == 0 {
                idle_cpus += 1;
            }
        }
        let topo = &self.cfg.topology;
        let d = &topo.domains[cpu as usize][k];
        let g = &topo.groups[gid];
        let capacity = u64::from(weight) * CAPACITY;
        let pct = u64::from(d.imbalance_pct);
        // group_is_overloaded() and group_has_capacity(): utilisation, and
        // since 5.7 also runnable time (tasks waiting for their CPU), each
        // against the capacity with the domain's imbalance_pct margin.
        let over_util = capacity.saturating_mul(100) < util.saturating_mul(pct);
        let over_runnable = capacity.saturating_mul(pct) < runnable.saturating_mul(100);
        let overloaded = nr > weight && (over_util || over_runnable);
        let has_capacity = nr < weight
            || (!over_runnable && capacity.saturating_mul(100) > util.saturating_mul(pct));
        // smt_balance(): the group is an SMT core (its child is SMT).
        let smt_group = k > 0
            && topo.domains[cpu as usize][k - 1].flags & SD_SHARE_CPUCAPACITY != 0
            && g.cores == 1
            && weight > 1;
        let gtype = if overloaded {
            GroupType::Overloaded
        } else if !local && idle != IdleType::NotIdle && smt_group && nr > 1 {
            GroupType::SmtBalance
        } else if !has_capacity {
            GroupType::FullyBusy
        } else {
            GroupType::HasSpare
        };
        let avg_load = if gtype == GroupType::Overloaded {
            load * CAPACITY / capacity
        } else {
            0
        };
        SgStats {
            group: gid,
            load,
            util,
            nr,
            idle_cpus,
            weight,
            capacity,
            cores: g.cores,
            avg_load,
            gtype,
        }
    }

    /// `update_sd_pick_busiest()`.
    fn pick_busiest(sgs: &SgStats, busiest: &Option<SgStats>, smt_groups: bool) -> bool {
        if sgs.nr == 0 {
            return false;
        }
        let Some(b) = busiest else { return true };
        if sgs.gtype > b.gtype {
            return true;
        }
        if sgs.gtype < b.gtype {
            return false;
        }
        let spare = |s: &SgStats, b: &SgStats| {
            !(s.idle_cpus > b.idle_cpus || (s.idle_cpus == b.idle_cpus && s.nr <= b.nr))
        };
        match sgs.gtype {
            GroupType::Overloaded => sgs.avg_load > b.avg_load,
            GroupType::SmtBalance if sgs.idle_cpus != 0 || b.idle_cpus != 0 => spare(sgs, b),
            GroupType::SmtBalance | GroupType::FullyBusy => {
                sgs.avg_load > b.avg_load || (sgs.avg_load == b.avg_load && !smt_groups)
            }
            GroupType::HasSpare => spare(sgs, b),
        }
    }

    /// `sibling_imbalance()`.
    fn sibling_imbalance(idle: IdleType, busiest: &SgStats, local: &SgStats) -> i64 {
        if idle == IdleType::NotIdle || busiest.nr == 0 {
            return 0;
        }
        let (nb, nl) = (i64::from(busiest.cores), i64::from(local.cores));
        if nb == nl {
            return (i64::from(busiest.nr) - i64::from(local.nr)).max(0);
        }
        let mut imb = (nl * i64::from(busiest.nr) - nb * i64::from(local.nr)).max(0);
        imb = (2 * imb + nl + nb) / (nl + nb);
        if imb <= 1 && local.nr == 0 && busiest.nr > 1 {
            imb = 2;
        }
        imb
    }

    /// `sched_balance_find_src_group()` with `calculate_imbalance()`.
    fn find_busiest_group(
        &mut self,
        cpu: u32,
        k: usize,
        idle: IdleType,
        cost: &mut u64,
    ) -> Option<Found> {
        let (gids, dflags, pct, imb_numa_nr, llc_size, child_flags) = {
            let topo = &self.cfg.topology;
            let d = &topo.domains[cpu as usize][k];
            let child_flags = if k > 0 {
                topo.domains[cpu as usize][k - 1].flags
            } else {
                0
            };
            (
                d.groups.clone(),
                d.flags,
                d.imbalance_pct,
                d.imb_numa_nr,
                topo.llc_size[cpu as usize],
                child_flags,
            )
        };
        let smt_groups = child_flags & SD_SHARE_CPUCAPACITY != 0;
        let prefer_sibling = child_flags & SD_PREFER_SIBLING != 0;
        let mut local: Option<SgStats> = None;
        let mut busiest: Option<SgStats> = None;
        let (mut total_load, mut total_cap, mut sum_util) = (0u64, 0u64, 0u64);
        for (i, &g) in gids.iter().enumerate() {
            let s = self.group_stats(cpu, k, g, i == 0, idle, cost);
            total_load += s.load;
            total_cap += s.capacity;
            sum_util += s.util;
            if i == 0 {
                local = Some(s);
            } else if Self::pick_busiest(&s, &busiest, smt_groups) {
                busiest = Some(s);
            }
        }
        self.update_idle_cpu_scan(cpu, k, idle, sum_util);
        let mut local = local?;
        let busiest = busiest?;
        if local.gtype > busiest.gtype {
            return None;
        }
        let mut sds_avg = 0u64;
        if local.gtype == GroupType::Overloaded {
            if local.avg_load >= busiest.avg_load {
                return None;
            }
            sds_avg = total_load * CAPACITY / total_cap.max(1);
            if local.avg_load >= sds_avg {
                return None;
            }
            // Guittot's 2/4: the imbalance_pct test, through the policy.
            if avg_load::balanced(AvgLoadInput {
                busiest_avg_load: busiest.avg_load,
                local_avg_load: local.avg_load,
                imbalance_pct: pct,
                above_llc: dflags & (SD_SHARE_CPUCAPACITY | SD_SHARE_LLC) == 0,
                reduced: self.cfg.flags.lb_reduced_imbalance_pct,
            }) {
                return None;
            }
        }
        let forced = prefer_sibling
            && local.gtype == GroupType::HasSpare
            && Self::sibling_imbalance(idle, &busiest, &local) > 1;
        if !forced && busiest.gtype != GroupType::Overloaded {
            if idle == IdleType::NotIdle {
                return None;
            }
            // Galbraith 2016: the idle-CPU threshold, through the policy.
            let flags = IdleCpusFlags {
                balance_idle_cpus: self.cfg.flags.balance_idle_cpus,
                balance_idle_llc2: self.cfg.flags.balance_idle_llc2,
            };
            if busiest.weight > 1 {
                let balanced =
                    idle_cpus::is_balanced(local.idle_cpus, busiest.idle_cpus, llc_size, flags);
                // The guest's module counts the hook's calls and its
                // "balanced" answers alike (`idle_cpus_balanced/`).
                let m = &mut self.schedstat.module;
                m.idle_cpus_calls += 1;
                if balanced {
                    m.idle_cpus_balanced += 1;
                    self.stats.idle_cpus_balanced += 1;
                    return None;
                }
            }
            if busiest.nr == 1 {
                return None;
            }
        }
        // calculate_imbalance()
        if busiest.gtype == GroupType::SmtBalance {
            return Some(Found {
                busiest,
                imbalance: 1,
                mig: Migration::Task,
            });
        }
        if local.gtype == GroupType::HasSpare {
            if busiest.gtype > GroupType::FullyBusy && dflags & SD_SHARE_LLC == 0 {
                let mut imb = local.capacity.max(local.util) as i64 - local.util as i64;
                let mut mig = Migration::Util;
                if idle != IdleType::NotIdle && imb == 0 {
                    mig = Migration::Task;
                    imb = 1;
                }
                return (imb > 0).then_some(Found {
                    busiest,
                    imbalance: imb,
                    mig,
                });
            }
            let mut imb = if busiest.weight == 1 || prefer_sibling {
                Self::sibling_imbalance(idle, &busiest, &local)
            } else {
                (i64::from(local.idle_cpus) - i64::from(busiest.idle_cpus)).max(0)
            };
            if dflags & SD_NUMA != 0 {
                // adjust_numa_imbalance()
                let dst_running = local.nr + 1;
                if dst_running <= imb_numa_nr && imb <= 2 {
                    imb = 0;
                }
            }
            imb >>= 1;
            return (imb > 0).then_some(Found {
                busiest,
                imbalance: imb,
                mig: Migration::Task,
            });
        }
        if local.gtype < GroupType::Overloaded {
            local.avg_load = local.load * CAPACITY / local.capacity.max(1);
            if local.avg_load >= busiest.avg_load {
                return None;
            }
            sds_avg = total_load * CAPACITY / total_cap.max(1);
            if local.avg_load >= sds_avg {
                return None;
            }
        }
        let a = busiest
            .avg_load
            .saturating_sub(sds_avg)
            .saturating_mul(busiest.capacity);
        let b = sds_avg
            .saturating_sub(local.avg_load)
            .saturating_mul(local.capacity);
        let imb = (a.min(b) / CAPACITY) as i64;
        (imb > 0).then_some(Found {
            busiest,
            imbalance: imb,
            mig: Migration::Load,
        })
    }

    /// SIS_UTIL's `update_idle_cpu_scan()`, at periodic balance of the LLC.
    fn update_idle_cpu_scan(&mut self, cpu: u32, k: usize, idle: IdleType, sum_util: u64) {
        if !self.cfg.flags.sis_util || idle == IdleType::NewlyIdle {
            return;
        }
        let topo = &self.cfg.topology;
        let llc_weight = u64::from(topo.llc_size[cpu as usize]);
        let d = &topo.domains[cpu as usize][k];
        if u64::from(d.weight()) != llc_weight {
            return;
        }
        let x = sum_util / llc_weight.max(1);
        let pct = u64::from(d.imbalance_pct);
        let tmp = (x * x * pct * pct / (10_000 * CAPACITY)).min(CAPACITY);
        let y = (CAPACITY - tmp) * llc_weight / CAPACITY;
        let l = topo.llc_of[cpu as usize] as usize;
        self.llc[l].nr_idle_scan = y as u32;
    }

    /// `sched_balance_find_src_rq()`.
    fn find_busiest_queue(&mut self, f: &Found) -> Option<u32> {
        let cpus = self.cfg.topology.groups[f.busiest.group].cpus.clone();
        let mut best: Option<u32> = None;
        let (mut best_load, mut best_util, mut best_nr) = (0u64, 0u64, 0u32);
        for c in cpus {
            let nr = self.nr_running(c);
            if nr == 0 {
                continue;
            }
            match f.mig {
                Migration::Load => {
                    let load = self.cpu_load(c);
                    if nr == 1 && load as i64 > f.imbalance {
                        continue;
                    }
                    if best.is_none() || load > best_load {
                        best_load = load;
                        best = Some(c);
                    }
                }
                Migration::Util => {
                    let util = self.cpu_util(c);
                    if nr <= 1 {
                        continue;
                    }
                    if best_util < util || best.is_none() {
                        best_util = util;
                        best = Some(c);
                    }
                }
                Migration::Task => {
                    if best_nr < nr {
                        best_nr = nr;
                        best = Some(c);
                    }
                }
            }
        }
        best
    }

    /// `can_migrate_task()` for a queued task `t` going to `dst`, whose
    /// domain `k` is being balanced: what is left of it with no affinity,
    /// throttling or NUMA faults in the model is `task_hot()` and the
    /// failure count that overrides it.
    fn can_migrate_task(&self, t: usize, dst: u32, k: usize) -> bool {
        // Affinity first, as in the kernel (without LBF_SOME_PINNED's
        // retry on another destination).
        if self.tasks[t].pinned.is_some_and(|p| p != dst) {
            return false;
        }
        let d = &self.cfg.topology.domains[dst as usize][k];
        !self.task_hot(t, dst, k)
            || self.rqs[dst as usize].dom[k].nr_balance_failed > d.cache_nice_tries
    }

    /// `task_hot()` for a queued task `t` going to `dst` in its domain `k`:
    /// it ran within `sysctl_sched_migration_cost`, and "SMT siblings share
    /// cache", so nothing is hot in an SMT domain. Also what
    /// `lb_hot_gained` counts.
    pub(crate) fn task_hot(&self, t: usize, dst: u32, k: usize) -> bool {
        let Some(d) = self
            .cfg
            .topology
            .domains
            .get(dst as usize)
            .and_then(|doms| doms.get(k))
        else {
            return false;
        };
        if d.flags & SD_SHARE_CPUCAPACITY != 0 {
            return false;
        }
        let Some(task) = self.tasks.get(t) else {
            return false;
        };
        // A task moved since it last ran has exec_start 0 in the kernel.
        !task.migrated && self.now_ns.saturating_sub(task.exec_start_ns) < MIGRATION_COST_NS
    }

    /// `detach_tasks()` + `attach_tasks()`; returns tasks moved.
    fn detach_tasks(
        &mut self,
        cpu: u32,
        k: usize,
        src: u32,
        f: &Found,
        idle: IdleType,
        cost: &mut u64,
    ) -> u32 {
        let (failed, cnt) = {
            let d = &self.cfg.topology.domains[cpu as usize][k];
            (
                self.rqs[cpu as usize].dom[k].nr_balance_failed,
                d.cache_nice_tries,
            )
        };
        let loop_max = (self.nr_running(src) as usize).min(NR_MIGRATE);
        // cfs_tasks is walked from its tail: least recently run first.
        let mut cands: Vec<usize> = self.rqs[src as usize].queue.clone();
        cands.sort_by_key(|&t| (self.tasks[t].exec_start_ns, t));
        let mut imbalance = f.imbalance;
        let mut moved = 0u32;
        for (i, t) in cands.into_iter().enumerate() {
            if i >= loop_max {
                break;
            }
            // Cache-hot tasks stay unless balancing has failed often enough.
            if !self.can_migrate_task(t, cpu, k) {
                continue;
            }
            match f.mig {
                Migration::Load => {
                    // At least 1, so that the imbalance always shrinks.
                    let load = self.task_load(t).max(1);
                    if self.cfg.flags.lb_min && load < 16 && failed == 0 {
                        continue;
                    }
                    // Guittot's 1/4, through the policy.
                    let skip = detach_load::should_skip(
                        load,
                        imbalance,
                        failed,
                        cnt,
                        self.cfg.flags.lb_relax_failed,
                    );
                    // The guest's module counts the hook's calls and its
                    // skips alike (`detach_skip/`).
                    let m = &mut self.schedstat.module;
                    m.detach_skip_calls += 1;
                    m.detach_skip_skipped += u64::from(skip);
                    if skip {
                        continue;
                    }
                    imbalance = imbalance.saturating_sub(load as i64);
                }
                Migration::Util => {
                    let util = self.task_util(t);
                    // shr_bound(util, nr_balance_failed): stock 6.12
                    // relaxes the util test as it does the load test.
                    let relaxed = util.checked_shr(failed.min(u64::BITS - 1)).unwrap_or(0);
                    if relaxed as i64 > imbalance {
                        continue;
                    }
                    imbalance = imbalance.saturating_sub(util as i64);
                }
                Migration::Task => imbalance = imbalance.saturating_sub(1),
            }
            let ss_hot = self.task_hot(t, cpu, k);
            let ss = self.schedstat.lb_mut(cpu, k, idle);
            ss.lb_gained += 1;
            ss.lb_hot_gained += u64::from(ss_hot);
            self.migrate(t, src, cpu);
            *cost += self.cost.migrate_task_ns;
            moved += 1;
            if idle == IdleType::NewlyIdle || imbalance <= 0 {
                break;
            }
        }
        moved
    }

    /// `sched_balance_rq()`.
    pub(crate) fn balance_rq(&mut self, cpu: u32, k: usize, idle: IdleType) -> Balanced {
        let mut cost = self.cost.lb_base_ns;
        let (cnt, min_iv, max_iv) = {
            let d = &self.cfg.topology.domains[cpu as usize][k];
            (d.cache_nice_tries, d.min_interval_ms, d.max_interval_ms)
        };
        let c = self.schedstat.lb_mut(cpu, k, idle);
        c.lb_count = c.lb_count.saturating_add(1);
        let continue_balancing = self.should_we_balance(cpu, k, idle);
        let found = if continue_balancing {
            self.find_busiest_group(cpu, k, idle, &mut cost)
        } else {
            None
        };
        let (nobusyg, found_group) = (continue_balancing && found.is_none(), found.is_some());
        let target = match found {
            Some(f) => self.find_busiest_queue(&f).map(|src| (src, f)),
            None => None,
        };
        let Some((src, f)) = target else {
            // out_balanced
            let ss = self.schedstat.lb_mut(cpu, k, idle);
            ss.lb_balanced += 1;
            ss.lb_nobusyg += u64::from(nobusyg);
            ss.lb_nobusyq += u64::from(found_group);
            let ds = &mut self.rqs[cpu as usize].dom[k];
            ds.nr_balance_failed = 0;
            if idle != IdleType::NewlyIdle && ds.balance_interval_ms < max_iv {
                ds.balance_interval_ms = ds.balance_interval_ms.saturating_mul(2);
            }
            return Balanced {
                moved: 0,
                cost_ns: cost,
                continue_balancing,
            };
        };
        self.schedstat.lb_mut(cpu, k, idle).lb_imbalance += f.imbalance.max(0) as u64;
        let moved = if self.nr_running(src) > 1 {
            self.detach_tasks(cpu, k, src, &f, idle, &mut cost)
        } else {
            0
        };
        let mut active = false;
        if moved == 0 {
            self.schedstat.lb_mut(cpu, k, idle).lb_failed += 1;
            if idle != IdleType::NewlyIdle {
                self.stats.lb_failed += 1;
                let ds = &mut self.rqs[cpu as usize].dom[k];
                ds.nr_balance_failed = ds.nr_balance_failed.saturating_add(1);
            }
            // need_active_balance(): imbalanced_active_balance().
            let failed = self.rqs[cpu as usize].dom[k].nr_balance_failed;
            let v5_9 = self.cfg.knobs.active_balance_v5_9;
            if (v5_9 || f.mig == Migration::Task) && failed > cnt.saturating_add(2) {
                active = self.active_balance(src, cpu, &mut cost);
                if v5_9 {
                    // v5.9: "We've kicked active balancing, force task
                    // migration", whether or not the push moved a task.
                    // 6.12 leaves the count to the stopper.
                    self.rqs[cpu as usize].dom[k].nr_balance_failed = cnt.saturating_add(1);
                }
            }
        } else {
            self.rqs[cpu as usize].dom[k].nr_balance_failed = 0;
        }
        // "We were unbalanced, so reset the balancing interval": after a
        // kick 6.12 asks need_active_balance() again, which still holds
        // because the stopper runs later on the busiest CPU; the model
        // pushes at once, so it resets whatever the push did to the count.
        self.rqs[cpu as usize].dom[k].balance_interval_ms = min_iv;
        Balanced {
            moved: moved + u32::from(active),
            cost_ns: cost,
            continue_balancing,
        }
    }

    /// `active_load_balance_cpu_stop()`: the stopper preempts the busiest
    /// CPU's task, which can then be moved (`LBF_ACTIVE_LB`: no cache-hot
    /// test). A push resets `nr_balance_failed` of `dst`'s lowest domain
    /// spanning `src` ("Active balancing done, reset the failure
    /// counter"); with the v5.9 knob the caller keeps v5.9's count instead.
    fn active_balance(&mut self, src: u32, dst: u32, cost: &mut u64) -> bool {
        if self.rqs[src as usize].curr.is_none() {
            return false;
        }
        self.stats.active_balances += 1;
        self.put_prev(src);
        let mut cands = self.rqs[src as usize].queue.clone();
        cands.retain(|&t| self.tasks[t].pinned.is_none_or(|p| p == dst));
        cands.sort_by_key(|&t| (self.tasks[t].exec_start_ns, t));
        let Some(&t) = cands.first() else {
            self.ss_active(dst, src, false);
            return false;
        };
        self.ss_active(dst, src, true);
        // The stopper on src moves it.
        self.migrate_by(t, src, dst, src);
        *cost += self.cost.migrate_task_ns;
        if self.rqs[src as usize].curr.is_none() {
            self.pick_next(src);
            self.ss_goidle(src);
        }
        if !self.cfg.knobs.active_balance_v5_9 {
            if let Some(k) = self.lowest_level_spanning(dst, src) {
                self.rqs[dst as usize].dom[k].nr_balance_failed = 0;
            }
        }
        true
    }

    /// `for_each_domain(dst, sd) if (cpumask_test_cpu(src, span)) break;`:
    /// the smallest domain of `dst` that holds `src`.
    pub(crate) fn lowest_level_spanning(&self, dst: u32, src: u32) -> Option<usize> {
        self.cfg.topology.lowest_level_spanning(dst, src)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flags::Knobs;
    use crate::sim::Config;
    use crate::topology::Topology;
    use crate::workload::Workload;
    use sched_lb_policy::sparsemask;

    /// 11 always-running tasks on 2x4, split 6 (CPUs 0-3) vs 5 (4-7).
    fn eleven_on_2x4(imbalance_pct: u32) -> Sim {
        let mut cfg = Config::new(
            Topology::preset("2x4").unwrap(),
            Workload::parse("fairness:11").unwrap(),
            1,
            1_000_000_000,
        );
        cfg.knobs = Knobs {
            imbalance_pct_above_llc: imbalance_pct,
            ..Knobs::default()
        };
        let mut sim = Sim::new(cfg);
        // Fork placement gives CPUs 0, 1 and 2 two tasks each: 7 vs 4.
        assert_eq!(
            (0..8).map(|c| sim.nr_running(c)).collect::<Vec<_>>(),
            [2, 2, 2, 1, 1, 1, 1, 1]
        );
        let t = sim.rqs[2].queue[0];
        sim.migrate(t, 2, 4);
        // Past the cache-hot window of every task.
        sim.now_ns = 10_000_000;
        sim
    }

    /// The KUnit row of Guittot's 2/4 (2020), through the whole balancer: the
    /// 20% imbalance of 6 vs 5 is balanced under 125, not under 117, and
    /// with 117 the waiting task moves once a failure halves its load
    /// (1/4: 1024 >> 1 is not above the imbalance of 512).
    #[test]
    fn six_versus_five_at_pkg() {
        let mut old = eleven_on_2x4(125);
        let b = old.balance_rq(4, 1, IdleType::NotIdle);
        assert_eq!(b.moved, 0);
        assert_eq!(old.rqs[4].dom[1].nr_balance_failed, 0);

        let mut new = eleven_on_2x4(117);
        let b = new.balance_rq(4, 1, IdleType::NotIdle);
        assert_eq!(b.moved, 0);
        assert_eq!(new.rqs[4].dom[1].nr_balance_failed, 1);
        // The load test was asked and said skip every time, as the
        // guest's module counts it (`detach_skip/calls`, `/skipped`).
        let m = new.schedstat.module;
        assert!(m.detach_skip_calls > 0);
        assert_eq!(m.detach_skip_skipped, m.detach_skip_calls);
        let b = new.balance_rq(4, 1, IdleType::NotIdle);
        assert_eq!(b.moved, 1);
        assert_eq!(new.rqs[4].dom[1].nr_balance_failed, 0);
        let m = new.schedstat.module;
        assert_eq!(
            m.detach_skip_calls - m.detach_skip_skipped,
            1,
            "the one moved passed it"
        );
        let cluster = |s: &Sim, lo: u32| (lo..lo + 4).map(|c| s.nr_running(c)).sum::<u32>();
        assert_eq!((cluster(&new, 0), cluster(&new, 4)), (5, 6));
    }

    /// The same A/B as a policy: with `LB_REDUCED_IMBALANCE_PCT` off, the
    /// PKG domain keeps its 6.12 imbalance_pct (117) but tests against
    /// v5.9's 125, so 6 vs 5 stays as it is, failure after failure.
    #[test]
    fn six_versus_five_with_the_flag_off() {
        let mut off = eleven_on_2x4(117);
        off.cfg.flags.lb_reduced_imbalance_pct = false;
        for _ in 0..3 {
            let b = off.balance_rq(4, 1, IdleType::NotIdle);
            assert_eq!(b.moved, 0);
            assert_eq!(
                off.rqs[4].dom[1].nr_balance_failed, 0,
                "balanced, not failed"
            );
        }
    }

    /// Only the first CPU of a busy group balances the level above it.
    #[test]
    fn only_the_group_balance_cpu_balances_when_busy() {
        let mut s = eleven_on_2x4(117);
        let b = s.balance_rq(5, 1, IdleType::NotIdle);
        assert_eq!(b.moved, 0);
        // should_we_balance() said no: out_balanced, the interval doubles.
        assert_eq!(s.rqs[5].dom[1].balance_interval_ms, 16);
        assert_eq!(s.rqs[5].dom[1].nr_balance_failed, 0);
    }

    /// xeon2x22 (x86 numbering: LLC 0 = CPUs 0-21 and 44-65, siblings
    /// n and n + 44), one always-running task per CPU, STEAL on.
    fn one_task_per_cpu_xeon() -> Sim {
        let mut cfg = Config::new(
            Topology::preset("xeon2x22").unwrap(),
            Workload::parse("fairness:88").unwrap(),
            1,
            1_000_000_000,
        );
        cfg.flags.steal = true;
        let sim = Sim::new(cfg);
        assert!((0..88).all(|c| sim.nr_running(c) == 1));
        sim
    }

    /// Empties `from` by moving its task to `to`.
    fn move_curr(sim: &mut Sim, from: u32, to: u32) {
        sim.put_prev(from);
        let t = sim.rqs[from as usize].queue[0];
        sim.migrate(t, from, to);
    }

    /// Each LLC has its own mask from its first CPU: with x86 numbering
    /// LLC 1 (CPUs 22-43, 66-87) starts at 22, and both hold 66 elements,
    /// the span's hole included: 9 lines.
    #[test]
    fn steal_mask_per_llc() {
        let mut s = one_task_per_cpu_xeon();
        assert_eq!(s.llc[0].overloaded_base, 0);
        assert_eq!(s.llc[1].overloaded_base, 22);
        for l in &s.llc {
            assert_eq!(l.overloaded.len(), sparsemask::words_for(66, 8) as usize);
        }
        move_curr(&mut s, 1, 66);
        let set: Vec<u32> = sparsemask::elements(&s.llc[1].overloaded[..], 8).collect();
        assert_eq!(set, [66 - 22]);
        assert!(s.llc[0].overloaded.iter().all(|w| w.get() == 0));
    }

    /// The sibling is tried first, then the LLC from the CPU after the
    /// stealer; a steal is a pull, which ends the newidle failure count.
    #[test]
    fn steal_sibling_first_then_llc() {
        let mut s = one_task_per_cpu_xeon();
        move_curr(&mut s, 0, 5); // 0 idle, 5 overloaded
        move_curr(&mut s, 1, 44); // 1 idle, 44 (0's sibling) overloaded
        s.rqs[0].newidle_streak.failures = 50;
        assert!(s.try_steal(0));
        assert_eq!(
            (s.nr_running(0), s.nr_running(44), s.nr_running(5)),
            (1, 1, 2),
            "0 took from its sibling 44, not from 5"
        );
        assert_eq!(s.rqs[0].newidle_streak.failures, 0);
        // The task queued on 5 ran an instant ago, and nothing has failed
        // at the MC level: detach_tasks() would leave it as cache hot, but
        // inside the LLC STEAL has no task_hot() test, so it moves.
        let hot = s.rqs[5].queue[0];
        assert_eq!(s.tasks[hot].exec_start_ns, s.now_ns);
        // Moved to 5, it would not be hot until it ran there: as if it had.
        s.tasks[hot].migrated = false;
        assert!(!s.can_migrate_task(hot, 1, 1), "hot for the balancer");
        assert!(s.try_steal(1));
        assert_eq!((s.nr_running(1), s.nr_running(5)), (1, 1));
        assert_eq!(s.tasks[hot].cpu, 1);
        assert!(s.llc[0].overloaded.iter().all(|w| w.get() == 0));
        assert!(!s.try_steal(2), "not idle");
    }

    /// A task moved to another CPU is not cache hot there until it runs:
    /// `enqueue_entity()` with `ENQUEUE_MIGRATED` zeroes `se.exec_start`,
    /// for the balancer's moves and a wakeup's (`WF_MIGRATED`) alike.
    #[test]
    fn a_moved_task_is_not_hot_until_it_runs() {
        let mut s = one_task_per_cpu_xeon();
        move_curr(&mut s, 0, 5); // 0 idle, 5 runs one and queues one
        let t = s.rqs[5].queue[0];
        assert_eq!(s.tasks[t].exec_start_ns, s.now_ns, "it ran an instant ago");
        assert!(!s.task_hot(t, 1, 1), "moved: not hot");
        // It runs on 5: hot again, for the MC level, not for the SMT one.
        s.put_prev(5);
        let i = s.rqs[5].queue.iter().position(|&x| x == t).unwrap();
        s.set_next(5, i);
        s.put_prev(5);
        assert!(s.task_hot(t, 1, 1));
        assert!(!s.task_hot(t, 49, 0), "SMT siblings share cache");
        // A wakeup that moves it: not hot either.
        let mut w = one_task_per_cpu_xeon();
        let u = w.rqs[5].curr.unwrap();
        w.block_curr(5, crate::sim::State::Blocked);
        assert!(w.task_hot(u, 1, 1), "it ran an instant ago, on 5");
        // Allowed only CPU 7 now, so the wakeup moves it there, to queue.
        w.tasks[u].pinned = Some(7);
        w.wake(u, Some((0, w.rqs[0].curr.unwrap())), false);
        assert_eq!(w.tasks[u].cpu, 7);
        assert!(w.rqs[7].queue.contains(&u));
        assert!(!w.task_hot(u, 1, 1), "woken elsewhere: not hot");
    }

    /// `sched_lb_steal_detach()`: STEAL takes the least recently run task, not the
    /// smallest vruntime, and with no cache-hot test: both tasks ran less
    /// than 500 us ago, and nothing has failed at the MC level.
    #[test]
    fn steal_takes_the_least_recently_run_task() {
        let mut s = one_task_per_cpu_xeon();
        move_curr(&mut s, 0, 5);
        move_curr(&mut s, 1, 5); // 0 and 1 idle, 5 runs one and queues two
        let q = s.rqs[5].queue.clone();
        assert_eq!(q.len(), 2);
        let (old, recent) = (q[0], q[1]);
        s.now_ns = 10 * MIGRATION_COST_NS;
        // `old` ran before `recent` but has the larger vruntime.
        s.tasks[old].exec_start_ns = s.now_ns - MIGRATION_COST_NS / 2;
        s.tasks[recent].exec_start_ns = s.now_ns - MIGRATION_COST_NS / 4;
        // Both were moved to 5; as if they had run there since.
        s.tasks[old].migrated = false;
        s.tasks[recent].migrated = false;
        assert!(!s.can_migrate_task(old, 0, 1), "hot for the balancer");
        s.tasks[old].vruntime = s.tasks[recent].vruntime.saturating_add(1_000_000);
        assert!(s.try_steal(0));
        assert_eq!(s.tasks[old].cpu, 0, "the least recently run task moves");
        assert_eq!(s.tasks[recent].cpu, 5);
    }

    /// `sched_lb_steal_detach()` skips delayed-dequeue tasks: the least recently run one
    /// is delayed, so the next one moves; with only one runnable task
    /// left besides it, nothing does (h_nr_runnable below 2).
    #[test]
    fn steal_skips_a_delayed_task() {
        let mut s = one_task_per_cpu_xeon();
        move_curr(&mut s, 0, 5);
        move_curr(&mut s, 1, 5);
        let q = s.rqs[5].queue.clone();
        let (old, recent) = (q[0], q[1]);
        s.now_ns = 10 * MIGRATION_COST_NS;
        s.tasks[old].exec_start_ns = 0;
        s.tasks[recent].exec_start_ns = MIGRATION_COST_NS;
        s.tasks[old].delayed = true;
        s.tasks[old].state = crate::sim::State::Blocked;
        s.rqs[5].nr_delayed = 1;
        assert_eq!((s.nr_running(5), s.nr_runnable(5)), (3, 2));
        assert_eq!(s.steal_victim_task(5), Some(recent));
        s.tasks[recent].delayed = true;
        s.rqs[5].nr_delayed = 2;
        assert_eq!(s.steal_victim_task(5), None);
    }

    /// A STEAL attempt takes its time (the mask read, the victim's lock):
    /// the task moves only when it lands, and meanwhile the stealer is no
    /// wakeup's idle CPU (its `__schedule()` still has the task that
    /// blocked).
    #[test]
    fn a_steal_lands_after_its_cost() {
        let mut s = one_task_per_cpu_xeon();
        move_curr(&mut s, 0, 5);
        assert!(s.start_steal(0));
        let p = s.rqs[0].steal.unwrap();
        assert_eq!(p.victim, 5);
        // Entry, 9 lines (x86 numbering), one victim.
        assert_eq!(p.cost_ns, 200 + 9 * 50 + 100);
        assert_eq!((s.nr_running(0), s.nr_running(5)), (0, 2));
        assert!(s.idle(0) && !s.available_idle(0));
        let m = s.schedstat.module;
        assert_eq!((m.steal_tried, m.steal_attempts, m.steal_stolen), (1, 1, 0));
        assert!(!s.start_steal(0), "one attempt at a time");
        s.steal_land(0);
        assert_eq!((s.nr_running(0), s.nr_running(5)), (1, 1));
        assert_eq!(s.schedstat.module.steal_stolen, 1);
        assert!(s.rqs[0].steal.is_none());
    }

    /// The idle-CPU test's counters count as the guest's module does
    /// (`idle_cpus_balanced/calls`, `/balanced`): on `numa2` without
    /// `prefer_sibling` at the node level, an idle CPU 0 with one task at
    /// home (3 CPUs idle) against three tasks on the other node (1 idle)
    /// is asked the test; stock says "not balanced" (3 > 1 + 1), Guittot's
    /// `NO_BALANCE_IDLE_CPUS` (a margin of the LLC's 4) "balanced".
    #[test]
    fn the_idle_cpu_test_counts_its_calls_and_balanced_answers() {
        for (flag, balanced) in [("+BALANCE_IDLE_CPUS", 0), ("-BALANCE_IDLE_CPUS", 1)] {
            let mut cfg = Config::new(
                Topology::preset("numa2").unwrap(),
                Workload::parse("fairness:8").unwrap(),
                1,
                1_000_000_000,
            );
            cfg.knobs.prefer_sibling = crate::flags::PreferSibling::SmtOnly;
            cfg.flags.apply(flag).unwrap();
            let mut s = Sim::new(cfg);
            for cpu in [0, 1, 2, 7] {
                s.block_curr(cpu, crate::sim::State::Blocked);
            }
            let nr: Vec<u32> = (0..8).map(|c| s.nr_running(c)).collect();
            assert_eq!(nr, [0, 0, 0, 1, 1, 1, 1, 0]);
            s.balance_rq(0, 1, IdleType::Idle);
            let m = s.schedstat.module;
            assert_eq!(
                (m.idle_cpus_calls, m.idle_cpus_balanced),
                (1, balanced),
                "{flag}"
            );
            let t = s.schedstat.totals();
            assert_eq!(t["idle_cpus_balanced_calls"], 1);
            assert_eq!(t["idle_cpus_balanced_balanced"], balanced);
        }
    }

    /// STEAL's gate learns only from the attempts it lets through: one
    /// attempt that took 100 ms would close it for good on a CPU that idles
    /// 500 us. `sched_lb_steal_cost()` forgets an average a second old, and
    /// the attempt that then goes through starts a new one.
    #[test]
    fn a_long_steal_closes_the_gate_for_a_second_only() {
        let mut s = one_task_per_cpu_xeon();
        move_curr(&mut s, 0, 5);
        let hz = u64::from(s.cfg.hz);
        let measured = s.jiffies();
        let rq = &mut s.rqs[0];
        rq.avg_idle_ns = 500_000;
        rq.avg_steal_cost_ns = 100_000_000;
        rq.steal_cost_stamp = Some(measured);
        s.now_ns = (measured + hz) * s.tick_ns;
        assert!(!s.start_steal(0), "a second after, the cost still holds");
        assert_eq!(s.schedstat.module.steal_tried, 0);
        s.now_ns += s.tick_ns;
        assert_eq!(s.steal_gate_cost_ns(0), 0);
        assert!(s.start_steal(0));
        s.steal_land(0);
        // The attempt's whole cost, the move included: the first measured.
        let cost = s.stats.steal_cost_ns;
        assert!(cost > 0 && cost < 100_000);
        assert_eq!(s.rqs[0].avg_steal_cost_ns, cost, "a new average");
        assert_eq!(s.rqs[0].steal_cost_stamp, Some(measured + hz + 1));
        assert_eq!(s.steal_gate_cost_ns(0), cost);
    }

    /// The victim ran its queued task before the lock was taken: nothing
    /// to steal, the attempt failed (tried, not stolen).
    #[test]
    fn a_steal_fails_when_the_victim_ran_its_task_meanwhile() {
        let mut s = one_task_per_cpu_xeon();
        move_curr(&mut s, 0, 5);
        assert!(s.start_steal(0));
        s.block_curr(5, crate::sim::State::Blocked);
        assert_eq!(s.nr_runnable(5), 1);
        s.steal_land(0);
        assert_eq!((s.nr_running(0), s.stats.steal_lost), (0, 1));
        let m = s.schedstat.module;
        assert_eq!((m.steal_tried, m.steal_stolen), (1, 0));
        // The CPU went on to newidle balancing and then idled.
        assert_eq!(s.schedstat.totals()["sched_goidle"], 1);
    }

    /// Work came to the stealer while its lock was dropped: it stops, and
    /// the victim keeps its tasks.
    #[test]
    fn a_steal_stops_when_work_comes_to_the_stealer() {
        let mut s = one_task_per_cpu_xeon();
        move_curr(&mut s, 0, 5);
        move_curr(&mut s, 1, 5);
        assert!(s.start_steal(0));
        let t = s.rqs[5].queue[0];
        s.migrate(t, 5, 0);
        s.steal_land(0);
        assert_eq!((s.nr_running(0), s.nr_running(5)), (1, 2));
        assert_eq!(s.stats.steal_aborted, 1);
        assert_eq!(s.schedstat.module.steal_stolen, 0);
    }

    /// `task_hot()` returns 0 in an SMT domain: an idle SMT sibling takes a
    /// task that ran an instant ago, which the MC level would leave.
    #[test]
    fn nothing_is_cache_hot_between_smt_siblings() {
        let cfg = Config::new(
            Topology::preset("qemu8").unwrap(),
            Workload::parse("fairness:9").unwrap(),
            1,
            1_000_000_000,
        );
        let mut s = Sim::new(cfg);
        assert_eq!(s.nr_running(0), 2);
        move_curr(&mut s, 1, 2); // 1 idle; 0 (its sibling) runs one, queues one
        s.now_ns = 10 * MIGRATION_COST_NS;
        s.resched(0); // the queued task is the one that just ran: hot
        let hot = s.rqs[0].queue[0];
        assert!(!s.can_migrate_task(hot, 1, 1), "hot at MC");
        assert!(s.can_migrate_task(hot, 1, 0), "not hot at SMT");
        let b = s.balance_rq(1, 0, IdleType::Idle);
        assert_eq!(b.moved, 1);
        assert_eq!(s.tasks[hot].cpu, 1);
    }

    /// 2x4 with one task on each of CPUs 0-4: cluster 0 fully busy, CPU 5
    /// idle. Its PKG balance wants one task (`migrate_task`) from a CPU
    /// that runs one, fails, and after `cache_nice_tries + 2` failures
    /// pushes it actively.
    fn five_on_2x4(active_balance: &str) -> Sim {
        let mut cfg = Config::new(
            Topology::preset("2x4").unwrap(),
            Workload::parse("fairness:5").unwrap(),
            1,
            1_000_000_000,
        );
        cfg.knobs
            .apply(&format!("active_balance={active_balance}"))
            .unwrap();
        let mut s = Sim::new(cfg);
        assert_eq!(
            (0..8).map(|c| s.nr_running(c)).collect::<Vec<_>>(),
            [1, 1, 1, 1, 1, 0, 0, 0]
        );
        s.now_ns = 10 * MIGRATION_COST_NS;
        for failed in 1..=3 {
            assert_eq!(s.balance_rq(5, 1, IdleType::Idle).moved, 0);
            assert_eq!(s.rqs[5].dom[1].nr_balance_failed, failed);
        }
        s
    }

    /// 6.12's `active_load_balance_cpu_stop()`: "Active balancing done,
    /// reset the failure counter"; v5.9 set it to `cache_nice_tries + 1`.
    #[test]
    fn active_push_resets_the_failure_count() {
        let mut s = five_on_2x4("6.12");
        let b = s.balance_rq(5, 1, IdleType::Idle);
        assert_eq!((b.moved, s.stats.active_balances), (1, 1));
        assert_eq!(s.nr_running(5), 1);
        assert_eq!(s.rqs[5].dom[1].nr_balance_failed, 0);

        let mut old = five_on_2x4("v5.9");
        assert_eq!(old.balance_rq(5, 1, IdleType::Idle).moved, 1);
        let cnt = old.cfg.topology.domains[5][1].cache_nice_tries;
        assert_eq!(old.rqs[5].dom[1].nr_balance_failed, cnt + 1);
    }

    /// LB_MIN (off in 6.12.117): a task of load below 16 is skipped while
    /// nothing has failed, only when the flag is on.
    #[test]
    fn lb_min_only_when_on() {
        for (lb_min, moved) in [(false, 1), (true, 0)] {
            let mut s = eleven_on_2x4(117);
            s.cfg.flags.lb_min = lb_min;
            // The queued tasks of the busiest cluster barely ran.
            for c in 0..4 {
                for t in s.rqs[c].queue.clone() {
                    s.tasks[t].load = crate::pelt::Pelt::entity(s.now_ns, s.tasks[t].weight, 10);
                }
            }
            let b = s.balance_rq(4, 1, IdleType::NotIdle);
            assert_eq!(b.moved, moved, "LB_MIN {lb_min}");
        }
    }

    /// 6.12's group_is_overloaded(): more tasks than CPUs and runnable time
    /// above the capacity margin is overloaded even with low utilisation.
    #[test]
    fn runnable_time_makes_a_group_overloaded() {
        let mut s = eleven_on_2x4(117);
        assert_eq!(s.nr_running(0), 2);
        let now = s.now_ns;
        // CPU 0 ran little lately (util 400) but had two tasks waiting
        // (runnable 2048): 1024 * 117 < 2048 * 100.
        s.rqs[0].util = crate::pelt::Pelt::new(now, 400);
        s.rqs[0].load = crate::pelt::Pelt::new(now, 2048);
        let gid = *s.cfg.topology.domains[1][0]
            .groups
            .iter()
            .find(|&&g| s.cfg.topology.groups[g].cpus == [0])
            .unwrap();
        let mut cost = 0;
        let g = s.group_stats(1, 0, gid, false, IdleType::NotIdle, &mut cost);
        assert_eq!(g.gtype, GroupType::Overloaded);
        // Runnable at the margin (1024 * 117 / 100 = 1198): not overloaded,
        // and with utilisation that low the group has spare capacity.
        s.rqs[0].load = crate::pelt::Pelt::new(now, 1198);
        let g = s.group_stats(1, 0, gid, false, IdleType::NotIdle, &mut cost);
        assert_eq!(g.gtype, GroupType::HasSpare);
    }

    /// 2x4, fairness:9: CPU 0 runs two tasks; CPU 3's task is moved to CPU
    /// 1, so CPU 3 is idle with an overloaded CPU in its MC domain.
    fn idle_cpu3_on_2x4(ni_random: bool) -> Sim {
        let mut cfg = Config::new(
            Topology::preset("2x4").unwrap(),
            Workload::parse("fairness:9").unwrap(),
            1,
            1_000_000_000,
        );
        cfg.flags.ni_random = ni_random;
        let mut s = Sim::new(cfg);
        move_curr(&mut s, 3, 1);
        assert_eq!(s.nr_running(3), 0);
        s.now_ns = 10 * MIGRATION_COST_NS;
        s
    }

    /// NI_RANDOM: a domain whose newidle balances never pull (ratio 0) is
    /// balanced on 2 die faces of 1024; without NI_RANDOM, always.
    #[test]
    fn ni_random_skips_domains_that_do_not_pull() {
        let mut s = idle_cpu3_on_2x4(true);
        for d in s.rqs[3].dom.iter_mut() {
            d.newidle_ratio = 0;
        }
        s.newidle_balance(3);
        assert_eq!(s.nr_running(3), 0, "the dice skipped every domain");
        assert_eq!(
            (s.stats.newidle_dice_skipped, s.stats.newidle_domains),
            (2, 0)
        );
        // A skipped visit counts as a call without success.
        assert!(s.rqs[3].dom.iter().all(|d| d.newidle_call == 513));

        let mut s = idle_cpu3_on_2x4(false);
        for d in s.rqs[3].dom.iter_mut() {
            d.newidle_ratio = 0;
        }
        s.newidle_balance(3);
        assert_eq!(s.nr_running(3), 1);
        assert_eq!(s.stats.newidle_dice_skipped, 0);
    }

    /// `Config::lb_clock_factor`: the newidle walk's domain costs as the
    /// kernel's clock reads them (its `max_newidle_lb_cost`, the walk's
    /// `max_idle_balance_cost`) are the factor times what the CPU is
    /// charged, which stays the model's cost.
    #[test]
    fn the_lb_clock_scales_the_measured_cost_not_the_charge() {
        let walk = |factor: u32| {
            let mut s = idle_cpu3_on_2x4(false);
            s.cfg.lb_clock_factor = factor;
            let before = s.rqs[3].overhead_total_ns;
            s.newidle_balance(3);
            assert_eq!(s.nr_running(3), 1);
            (
                s.rqs[3].dom[0].max_newidle_lb_cost_ns,
                s.rqs[3].overhead_total_ns - before,
                s.stats.newidle_cost_ns,
            )
        };
        let (max1, charged1, cost1) = walk(1);
        let (max300, charged300, cost300) = walk(300);
        assert!(max1 > 0);
        assert_eq!(max300, 300 * max1);
        assert_eq!((charged300, cost300), (charged1, cost1));
        assert_eq!(charged1, cost1);
    }

    /// NI_RANDOM: a domain that always pulls (ratio 1023) is always
    /// balanced, and its pull counts `(1024 + 512) / 1024` = 1.
    #[test]
    fn ni_random_weights_a_pull_by_its_odds() {
        let mut s = idle_cpu3_on_2x4(true);
        s.rqs[3].dom[0].newidle_ratio = 1023;
        s.newidle_balance(3);
        assert_eq!(s.nr_running(3), 1);
        let d = &s.rqs[3].dom[0];
        assert_eq!((d.newidle_call, d.newidle_success), (513, 257));
        // Without NI_RANDOM the weight is 1 too, and the statistics
        // are kept all the same (they only steer the dice).
        let mut s = idle_cpu3_on_2x4(false);
        s.newidle_balance(3);
        let d = &s.rqs[3].dom[0];
        assert_eq!((d.newidle_call, d.newidle_success), (513, 257));
    }

    /// `update_newidle_stats()`: at 1024 calls the ratio becomes the
    /// success count and both halve; a visit that cost nothing (the
    /// periodic balancer's decay) is not a call.
    #[test]
    fn newidle_stats_window() {
        let mut s = idle_cpu3_on_2x4(true);
        s.update_newidle_cost(3, 0, 0, 0);
        assert_eq!(s.rqs[3].dom[0].newidle_call, 512);
        for _ in 0..511 {
            s.update_newidle_cost(3, 0, 1_000, 0);
        }
        let d = &s.rqs[3].dom[0];
        assert_eq!(
            (d.newidle_call, d.newidle_success, d.newidle_ratio),
            (1023, 256, 512)
        );
        s.update_newidle_cost(3, 0, 1_000, 3);
        let d = &s.rqs[3].dom[0];
        assert_eq!(
            (d.newidle_call, d.newidle_success, d.newidle_ratio),
            (512, 129, 259)
        );
    }

    /// qemu8 with one always-running task per CPU, 10 s in: every level of
    /// every CPU is due, none has decayed its newidle cost for a second.
    fn busy_qemu8() -> Sim {
        let cfg = Config::new(
            Topology::preset("qemu8").unwrap(),
            Workload::parse("fairness:8").unwrap(),
            1,
            20_000_000_000,
        );
        let mut s = Sim::new(cfg);
        assert!((0..8).all(|c| s.nr_running(c) == 1));
        s.now_ns = 10_000_000_000;
        let j = s.jiffies();
        for rq in s.rqs.iter_mut() {
            for d in rq.dom.iter_mut() {
                d.max_newidle_lb_cost_ns = 256_000;
                d.last_decay_jiffies = j;
            }
        }
        s
    }

    /// `continue_balancing`: CPU 1 is not its busy core's balance CPU, so
    /// `should_we_balance()` says no at MC and the walk stops there: PKG
    /// is neither balanced nor visited. CPU 0 balances all three levels.
    #[test]
    fn a_no_from_should_we_balance_stops_the_upper_levels() {
        let mut s = busy_qemu8();
        s.rebalance_domains(1);
        assert_eq!(s.stats.lb_periodic, 2, "SMT and MC only");
        let j = s.jiffies();
        let last: Vec<u64> = s.rqs[1].dom.iter().map(|d| d.last_balance).collect();
        assert_eq!(last, [j, j, 0]);
        // next_balance comes from the levels visited, SMT's the earliest.
        assert_eq!(s.rqs[1].next_balance, j + s.interval_jiffies(1, 0, true));
        s.rebalance_domains(0);
        assert_eq!(s.stats.lb_periodic, 5, "CPU 0: all three");
        assert_eq!(s.rqs[0].dom[2].last_balance, j);
    }

    /// A busy CPU's next balance is a busy interval away (SMT: 2 ms x 16,
    /// 7 jiffies at HZ 250 with LB_BUSY_INTERVAL_DEC); going idle brings
    /// it forward to its idle interval, whether the newidle balance runs
    /// or is skipped (`update_next_balance()` in `sched_balance_newidle()`),
    /// so that the idle CPU balances at its next tick, not 7 jiffies on.
    #[test]
    fn going_idle_brings_the_next_balance_forward() {
        for overloaded in [0, 1] {
            let mut s = busy_qemu8();
            s.rebalance_domains(1);
            let j = s.jiffies();
            let busy_due = j + s.interval_jiffies(1, 0, true);
            assert_eq!(s.rqs[1].next_balance, busy_due);
            // Skipped, the first level's idle interval; walked, every
            // level's, PKG's from its last balance, which was never.
            let idle_due = if overloaded == 0 {
                j + s.interval_jiffies(1, 0, false)
            } else {
                (0..3)
                    .map(|k| s.rqs[1].dom[k].last_balance + s.interval_jiffies(1, k, false))
                    .min()
                    .unwrap()
            };
            assert!(idle_due < busy_due);
            // Its task blocks: the newidle balance is skipped (nothing
            // overloaded), or runs and finds nothing to pull.
            s.nr_overloaded = overloaded;
            s.rqs[1].avg_idle_ns = 10_000_000;
            s.block_curr(1, crate::sim::State::Blocked);
            assert!(s.idle(1));
            assert_eq!(s.rqs[1].next_balance, idle_due, "overloaded {overloaded}");
        }
    }

    /// With the walk stopped, a level above still has its newidle cost
    /// decayed when the level's decay is due (`if (need_decay) continue;`),
    /// without being balanced, and the rq-wide cost follows.
    #[test]
    fn a_stopped_walk_still_decays() {
        let mut s = busy_qemu8();
        let j = s.jiffies();
        for d in s.rqs[1].dom.iter_mut() {
            d.last_decay_jiffies = j - 2 * s.cfg.hz as u64;
        }
        s.rebalance_domains(1);
        let costs: Vec<u64> = s.rqs[1]
            .dom
            .iter()
            .map(|d| d.max_newidle_lb_cost_ns)
            .collect();
        assert_eq!(costs, [253_000, 253_000, 253_000]);
        assert_eq!(s.rqs[1].dom[2].last_balance, 0, "decayed, not balanced");
        assert_eq!(s.rqs[1].max_idle_balance_cost_ns, 3 * 253_000);
    }

    /// `need_decay = update_newidle_cost(sd, 0, 0);` assigns: only the
    /// last domain visited decides whether `max_idle_balance_cost` is
    /// refreshed. SMT decays, MC and PKG do not: the rq-wide value stays.
    #[test]
    fn need_decay_is_the_last_domain_s() {
        let mut s = busy_qemu8();
        let j = s.jiffies();
        s.rqs[0].dom[0].last_decay_jiffies = j - 2 * s.cfg.hz as u64;
        s.rqs[0].max_idle_balance_cost_ns = 123;
        s.rebalance_domains(0);
        assert_eq!(s.rqs[0].dom[0].max_newidle_lb_cost_ns, 253_000);
        assert_eq!(s.rqs[0].dom[2].max_newidle_lb_cost_ns, 256_000);
        assert_eq!(s.rqs[0].max_idle_balance_cost_ns, 123);
        // PKG decaying too makes it the max of the floor and the sum.
        s.rqs[0].dom[2].last_decay_jiffies = j - 2 * s.cfg.hz as u64;
        s.rebalance_domains(0);
        assert_eq!(
            s.rqs[0].max_idle_balance_cost_ns,
            MIGRATION_COST_NS.max(253_000 + 256_000 + 253_000)
        );
    }

    /// The jiffy follows HZ: intervals in ms become jiffies of 4 ms at 250,
    /// of 1 ms at 1000, and so does `max_load_balance_interval`.
    #[test]
    fn balance_intervals_follow_hz() {
        for (hz, idle_j, busy_j, max_j) in [(250, 2, 31, 200), (1000, 8, 127, 800)] {
            let mut cfg = Config::new(
                Topology::preset("2x4").unwrap(),
                Workload::parse("fairness:9").unwrap(),
                1,
                1_000_000_000,
            );
            cfg.hz = hz;
            let mut s = Sim::new(cfg);
            // PKG of 2x4: balance_interval 8 ms, busy_factor 16.
            assert_eq!(s.interval_jiffies(0, 1, false), idle_j, "HZ {hz}");
            assert_eq!(s.interval_jiffies(0, 1, true), busy_j, "HZ {hz}");
            assert_eq!(s.max_lb_interval_jiffies(), max_j);
            s.now_ns = 1_000_000_000;
            assert_eq!(s.jiffies(), u64::from(hz));
        }
    }
}
