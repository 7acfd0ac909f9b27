// SPDX-License-Identifier: GPL-2.0

//! Idle balancing: `sched_balance_newidle()` with NI_RANDOM and the
//! series' NEWIDLE_BACKOFF and SD_MIGRATION_COST (`sched_lb_policy::
//! newidle_walk`, with the failure count of `newidle_streak`), and
//! Sistare's STEAL, which tries first (`sched_lb_policy::steal_chain`;
//! the victim task is the series' `sched_lb_steal_detach()`).
//!
//! Mirrors, much reduced, `kernel/sched/fair.c` of Linux 6.12.117:
//! `sched_balance_newidle()`, `update_newidle_cost()` and
//! `update_newidle_stats()`; the balance of one domain it runs is
//! `balance.rs`'s `balance_rq()`.

use super::balance::*;
use super::*;
use sched_lb_policy::newidle_streak;
use sched_lb_policy::newidle_walk::{stop_at_domain, WalkStep};
use sched_lb_policy::sparsemask;
use sched_lb_policy::steal::{StealOutcome, STEAL_MAX_NUMA_NODES};
use sched_lb_policy::steal_chain::{self, StealArgs};

/// NI_RANDOM's die: `sched_rng() % 1024`.
const NI_DIE_SIDES: u32 = 1024;
/// `update_newidle_stats()` halves its counts when the calls reach this.
const NEWIDLE_CALLS_WINDOW: u32 = 1024;

impl Sim {
    /// `update_newidle_stats()`: one newidle visit of domain `k` of `cpu`,
    /// `success` its weighted pull (0: none, or the die said skip).
    pub(super) fn update_newidle_stats(&mut self, cpu: u32, k: usize, success: u32) {
        let d = &mut self.rqs[cpu as usize].dom[k];
        d.newidle_call = d.newidle_call.saturating_add(1);
        d.newidle_success = d.newidle_success.saturating_add(success);
        if d.newidle_call >= NEWIDLE_CALLS_WINDOW {
            d.newidle_ratio = d.newidle_success;
            d.newidle_call /= 2;
            d.newidle_success /= 2;
        }
    }

    /// `update_newidle_cost()`; true if the cost decayed. Only a balance
    /// that cost something counts for NI_RANDOM's statistics, so the
    /// periodic balancer's decay visits (`cost_ns` 0) do not.
    pub(super) fn update_newidle_cost(
        &mut self,
        cpu: u32,
        k: usize,
        cost_ns: u64,
        success: u32,
    ) -> bool {
        if cost_ns != 0 {
            self.update_newidle_stats(cpu, k, success);
        }
        let j = self.jiffies();
        let hz = self.hz();
        let d = &mut self.rqs[cpu as usize].dom[k];
        if cost_ns > d.max_newidle_lb_cost_ns {
            d.max_newidle_lb_cost_ns = cost_ns;
            d.last_decay_jiffies = j;
        } else if j > d.last_decay_jiffies.saturating_add(hz) {
            // 1% a second.
            d.max_newidle_lb_cost_ns = d.max_newidle_lb_cost_ns.saturating_mul(253) / 256;
            d.last_decay_jiffies = j;
            return true;
        }
        false
    }

    /// `sched_balance_newidle()` with the series' walk rule and 6.12.117's
    /// NI_RANDOM: past the walk rule, each domain is balanced only when a
    /// 1024-sided die (this CPU's stream, as `sched_rng()` is per CPU)
    /// falls at or below `1 + newidle_ratio`, its recent pulls per 1024
    /// visits; a pull then counts `1024 / (1 + newidle_ratio)`, rounded,
    /// so that the ratio stays an estimate of every visit's success, the
    /// skipped ones included. True if a task was pulled.
    pub(crate) fn newidle_balance(&mut self, cpu: u32) -> bool {
        let levels = self.cfg.topology.domains[cpu as usize].len();
        if levels == 0 {
            return false;
        }
        // "There is a task waiting to run. No need to search for one."
        if !self.rqs[cpu as usize].wake_list.is_empty() {
            return false;
        }
        // The idle balance it leaves to the tick comes due as an idle
        // CPU's would, not when the busy CPU's interval said: each domain
        // it visits (the first, if it visits none) brings this CPU's
        // next_balance forward to its idle interval (update_next_balance()).
        let mut next_balance = self.jiffies().saturating_add(self.hz());
        let avg_idle = self.rqs[cpu as usize].avg_idle_ns;
        if self.nr_overloaded == 0
            || avg_idle < self.rqs[cpu as usize].dom[0].max_newidle_lb_cost_ns
        {
            self.stats.newidle_skipped += 1;
            self.update_next_balance(cpu, 0, &mut next_balance);
            self.move_next_balance(cpu, next_balance);
            return false;
        }
        self.stats.newidle_walks += 1;
        let f = self.cfg.flags;
        // The walk's cost as the kernel measures it, and as the CPU pays it.
        let mut curr_cost = 0u64;
        let mut charged_ns = 0u64;
        let mut pulled = false;
        let mut stopped = false;
        for k in 0..levels {
            self.update_next_balance(cpu, k, &mut next_balance);
            let step = WalkStep {
                avg_idle_ns: avg_idle,
                curr_cost_ns: curr_cost,
                max_newidle_lb_cost_ns: self.rqs[cpu as usize].dom[k].max_newidle_lb_cost_ns,
                migration_cost_ns: self.cfg.topology.domains[cpu as usize][k].migration_cost_ns,
                consecutive_failures: self.rqs[cpu as usize].newidle_streak.failures,
                newidle_backoff: f.newidle_backoff,
                sd_migration_cost: f.sd_migration_cost,
            };
            if stop_at_domain(step) {
                stopped = true;
                break;
            }
            // Every level has SD_BALANCE_NEWIDLE (sd_init()).
            let mut weight = 1u32;
            if f.ni_random {
                let d1k = self.ni_rng[cpu as usize].below(u64::from(NI_DIE_SIDES)) as u32;
                weight = self.rqs[cpu as usize].dom[k]
                    .newidle_ratio
                    .saturating_add(1);
                if d1k > weight {
                    self.update_newidle_stats(cpu, k, 0);
                    self.stats.newidle_dice_skipped += 1;
                    continue;
                }
                // The pull's weight: 1024 / weight, rounded to nearest.
                weight = NI_DIE_SIDES.saturating_add(weight / 2) / weight;
            }
            let b = self.balance_rq(cpu, k, IdleType::NewlyIdle);
            self.stats.newidle_domains += 1;
            let pulled_here = b.moved > 0;
            // What sched_clock_cpu() reads around the balance: its cost,
            // or under TCG much more (`Config::lb_clock_factor`).
            let measured_ns = b
                .cost_ns
                .saturating_mul(u64::from(self.cfg.lb_clock_factor.max(1)));
            self.update_newidle_cost(
                cpu,
                k,
                measured_ns,
                weight.saturating_mul(u32::from(pulled_here)),
            );
            curr_cost = curr_cost.saturating_add(measured_ns);
            charged_ns = charged_ns.saturating_add(b.cost_ns);
            if pulled_here || !b.continue_balancing || self.nr_running(cpu) > 0 {
                pulled = true;
                break;
            }
        }
        if stopped {
            self.stats.newidle_stopped += 1;
        }
        self.move_next_balance(cpu, next_balance);
        let rq = &mut self.rqs[cpu as usize];
        if curr_cost > rq.max_idle_balance_cost_ns {
            rq.max_idle_balance_cost_ns = curr_cost;
        }
        // Every attempt counts, a walk the backoff cut short at its first
        // domain too: counting only walks that balanced a domain latched.
        self.newidle_account(cpu, pulled);
        if pulled {
            self.stats.newidle_pulled += 1;
        }
        self.stats.newidle_cost_ns += charged_ns;
        self.charge(cpu, charged_ns);
        pulled
    }

    /// `update_next_balance()`: domain `k`'s next idle balance, if sooner
    /// than `next`.
    fn update_next_balance(&self, cpu: u32, k: usize, next: &mut u64) {
        let due = self.rqs[cpu as usize].dom[k]
            .last_balance
            .saturating_add(self.interval_jiffies(cpu, k, false));
        *next = (*next).min(due);
    }

    /// `sched_balance_newidle()`'s "Move the next balance forward".
    fn move_next_balance(&mut self, cpu: u32, next: u64) {
        let rq = &mut self.rqs[cpu as usize];
        rq.next_balance = rq.next_balance.min(next);
    }

    /// The kernel's `newidle_account` hook: one newidle attempt on `cpu`,
    /// or one pull into it by any balancer, at the current jiffy.
    pub(super) fn newidle_account(&mut self, cpu: u32, pulled: bool) {
        let (now, hz) = (self.jiffies(), self.cfg.hz);
        let rq = &mut self.rqs[cpu as usize];
        rq.newidle_streak = newidle_streak::account(rq.newidle_streak, now, hz, pulled);
    }

    /// The series' `sched_lb_steal_detach()`, which follows Sistare's
    /// `can_migrate_task_llc()`: the task STEAL takes from `src`. Not
    /// Sistare's leftmost task (with group scheduling that tree holds group
    /// entities) but `detach_one_task()`'s order: from the least recently
    /// run end of `cfs_tasks`, at most `sysctl_sched_nr_migrate` tasks, the
    /// first that may move to the stealer. There is no `task_hot()` test
    /// and so no `nr_balance_failed`: victim and stealer share the LLC,
    /// the cache warmth that test protects ("sharing LLC provides cache
    /// warmth at that level"). Delayed-dequeue tasks are skipped; the
    /// kernel's other exclusions (running, affinity, per-CPU kthreads,
    /// migration disabled) never apply to a queued task of the model.
    pub(super) fn steal_victim_task(&self, src: u32) -> Option<usize> {
        // A stale bit: fewer than two runnable, nothing to take.
        if self.nr_runnable(src) < 2 {
            return None;
        }
        let mut cands: Vec<usize> = self.rqs[src as usize].queue.clone();
        cands.sort_by_key(|&t| (self.tasks[t].exec_start_ns, t));
        // can_migrate_task_llc(): a task allowed only its CPU stays.
        cands
            .into_iter()
            .take(NR_MIGRATE)
            .find(|&t| !self.tasks[t].delayed && self.tasks[t].pinned.is_none())
    }

    /// Sistare's STEAL, whole: starts an attempt and lands it at once,
    /// with no time for the victim or the stealer to change between the
    /// mask read and the lock (the unit tests' view of the victim order).
    /// True if a task was stolen.
    #[cfg(test)]
    pub(crate) fn try_steal(&mut self, cpu: u32) -> bool {
        if !self.start_steal(cpu) {
            return false;
        }
        let stolen = self.schedstat.module.steal_stolen;
        self.finish_steal(cpu);
        self.schedstat.module.steal_stolen > stolen
    }

    /// Sistare's STEAL, before newidle balancing: reads this LLC's
    /// overloaded mask and picks the victim the policy's chain tries
    /// first, skipping stale bits (fewer than 2 runnable: "a stale bit
    /// costs a read, not a lock"). The move waits for the mask read and
    /// the victim's lock: [`Sim::steal_land`] after their cost. True if an
    /// attempt is under way (the CPU stays in the kernel until it lands).
    pub(crate) fn start_steal(&mut self, cpu: u32) -> bool {
        if !self.cfg.flags.steal || self.rqs[cpu as usize].steal.is_some() {
            return false;
        }
        self.schedstat.module.steal_calls += 1;
        let topo = &self.cfg.topology;
        let l = topo.llc_of[cpu as usize] as usize;
        // The walk below holds these while the closure reads `self`: the
        // mask by sharing its cells, the topology masks, which never
        // change, by copy.
        let words = Rc::clone(&self.llc[l].overloaded);
        let base = self.llc[l].overloaded_base;
        let llc_span = topo.llc_span[l].clone();
        let siblings = topo.smt_mask[cpu as usize].clone();
        let nodes = if self.cfg.steal_ignore_node_limit {
            topo.nodes().min(STEAL_MAX_NUMA_NODES)
        } else {
            topo.nodes()
        };
        let rq = &self.rqs[cpu as usize];
        let args = StealArgs {
            enabled: true,
            numa_nodes: nodes,
            nr_runnable: self.nr_runnable(cpu),
            avg_idle_ns: rq.avg_idle_ns,
            avg_steal_cost_ns: self.steal_gate_cost_ns(cpu),
            this_cpu: cpu,
            bits_per_line: crate::sim::SPARSE_BITS_PER_LINE,
            overloaded_base: base,
        };
        // The walk reads this LLC's own lines, each once.
        let lines = words.len() as u64 / u64::from(sparsemask::WORDS_PER_LINE);
        let mut cost = self.cost.steal_base_ns + lines * self.cost.steal_per_line_ns;
        let mut victim = None;
        // The policy crate's chain, the one the kernel's `steal` hook runs;
        // the closure is `sched_lb_steal_from()` up to its lock: the first
        // victim with 2 runnable ends the walk (the guest's victims per
        // attempt are 1.01-1.06, `make bench` of 2026-12-04).
        let res = steal_chain::steal(&args, &words[..], llc_span.words(), siblings.words(), |v| {
            cost += self.cost.steal_per_victim_ns;
            if self.nr_runnable(v) < 2 {
                return StealOutcome::NotStolen;
            }
            victim = Some(v);
            StealOutcome::Stolen
        });
        let m = &mut self.schedstat.module;
        m.steal_tried += u64::from(res.tried);
        m.steal_attempts += u64::from(res.attempts);
        if !res.tried {
            return false;
        }
        self.stats.steal_attempts += 1;
        // The stealer spends the read and the lock in the kernel: an idle
        // CPU's time, or a delay to the work that comes meanwhile.
        self.charge(cpu, cost);
        self.rqs[cpu as usize].steal = Some(StealPending {
            victim: victim.unwrap_or(cpu),
            cost_ns: cost,
        });
        if victim.is_none() {
            // Every bit was stale: nothing to lock, done now.
            self.finish_steal(cpu);
            return false;
        }
        self.push(self.now_ns.saturating_add(cost), Ev::StealLand { cpu });
        true
    }

    /// The victim's lock is taken (`sched_lb_steal_from()` after
    /// `rq_lock_irqsave()`): the steal succeeds or fails on what is there
    /// now. True if a task was stolen.
    fn finish_steal(&mut self, cpu: u32) -> bool {
        let Some(p) = self.rqs[cpu as usize].steal.take() else {
            return false;
        };
        let mut cost = p.cost_ns;
        let stolen = if p.victim == cpu {
            false
        } else if self.nr_running(cpu) > 0 {
            // The stealer's lock was dropped for the victim's, and work
            // came: "stop stealing then".
            self.stats.steal_aborted += 1;
            false
        } else {
            // `sched_lb_steal_detach()`: the queued task may have run or
            // been taken meanwhile, or only delayed ones remain.
            match self.steal_victim_task(p.victim) {
                Some(t) => {
                    self.migrate(t, p.victim, cpu);
                    self.charge(cpu, self.cost.migrate_task_ns);
                    cost += self.cost.migrate_task_ns;
                    true
                }
                None => {
                    self.stats.steal_lost += 1;
                    false
                }
            }
        };
        self.schedstat.module.steal_stolen += u64::from(stolen);
        if stolen {
            self.stats.steals += 1;
            self.newidle_account(cpu, true);
        }
        let stale = self.steal_cost_stale(cpu);
        let now = self.jiffies();
        let rq = &mut self.rqs[cpu as usize];
        rq.avg_steal_cost_ns = if stale {
            cost
        } else {
            update_avg(rq.avg_steal_cost_ns, cost)
        };
        rq.steal_cost_stamp = Some(now);
        self.stats.steal_cost_ns += cost;
        stolen
    }

    /// `sched_lb_steal_cost()`'s test: the average was last measured more
    /// than a second (HZ jiffies) ago, or never.
    fn steal_cost_stale(&self, cpu: u32) -> bool {
        let hz = u64::from(self.cfg.hz);
        self.rqs[cpu as usize]
            .steal_cost_stamp
            .is_none_or(|stamp| self.jiffies() > stamp.saturating_add(hz))
    }

    /// The cost STEAL's gate is given (`sched_lb_steal_cost()`): the
    /// average, or 0 once it is a second old, so that one long attempt
    /// cannot close the gate for good.
    pub(super) fn steal_gate_cost_ns(&self, cpu: u32) -> u64 {
        if self.steal_cost_stale(cpu) {
            0
        } else {
            self.rqs[cpu as usize].avg_steal_cost_ns
        }
    }

    /// A STEAL attempt's victim lock is taken: finish it, and if the CPU
    /// is still idle, go on as `go_idle()` would have (newidle balance,
    /// then the idle task), all one `__schedule()`.
    pub(super) fn steal_land(&mut self, cpu: u32) {
        if self.rqs[cpu as usize].steal.is_none() {
            return;
        }
        let outer = self.going_idle.replace(cpu);
        self.finish_steal(cpu);
        if self.idle(cpu) {
            self.go_idle_pull(cpu);
        }
        self.going_idle = outer;
        self.enter_idle(cpu);
    }
}
