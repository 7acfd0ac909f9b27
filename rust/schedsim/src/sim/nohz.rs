// SPDX-License-Identifier: GPL-2.0

//! NOHZ idle balancing, `CONFIG_NO_HZ_IDLE` (`Config::nohz`), as
//! 6.12.117's `kernel/sched/fair.c` has it, reduced: an idle CPU's tick
//! is stopped, so it does not balance for itself; a busy CPU's tick runs
//! `nohz_balancer_kick()`, which, when the next of the idle CPUs'
//! balances is due and there is something to spread (this CPU runs two
//! or more tasks, or its LLC has more than one busy CPU), kicks the first
//! idle CPU (`find_new_ilb()`); that CPU runs `_nohz_idle_balance()`:
//! `sched_balance_domains()` for every idle CPU whose balance is due, the
//! others first and itself last, stopping once it has work of its own.
//!
//! Left out: the kick's IPI latency (the balance runs at the kicking
//! tick), `NOHZ_STATS_KICK`'s blocked-load updates (PELT decays here
//! without them), the asymmetric-capacity and misfit reasons to kick,
//! and newidle's `nohz_newidle_balance()`.

use super::*;

/// The kicks' state (`struct nohz`).
#[derive(Clone, Debug, Default)]
pub struct Nohz {
    /// `nohz.next_balance`: the earliest due balance of an idle CPU, in
    /// jiffies.
    pub next_balance: u64,
    /// Kicks sent.
    pub kicks: u64,
    /// `sched_balance_domains()` run by a kicked CPU for an idle one.
    pub balances: u64,
}

impl Sim {
    /// Idle CPUs whose tick is stopped (`nohz.idle_cpus_mask`), those
    /// with a wakeup on its way through their wake list among them (the
    /// balancer skips those: `idle_cpu()` says no for them).
    fn nohz_idle_cpus(&self) -> Vec<u32> {
        (0..self.cfg.topology.nr_cpus)
            .filter(|&c| self.rqs[c as usize].curr.is_none() && self.nr_running(c) == 0)
            .collect()
    }

    /// `nohz_balancer_kick()` at `cpu`'s tick.
    pub(super) fn nohz_balancer_kick(&mut self, cpu: u32) {
        if self.idle(cpu) {
            return;
        }
        let idle = self.nohz_idle_cpus();
        // find_new_ilb(): the first of them that is idle_cpu().
        let Some(&ilb) = idle.iter().find(|&&c| self.idle(c)) else {
            return;
        };
        let now = self.jiffies();
        if now < self.nohz.next_balance {
            return;
        }
        let llc = self.cfg.topology.llc_of[cpu as usize];
        let busy_in_llc = (0..self.cfg.topology.nr_cpus)
            .filter(|&c| self.cfg.topology.llc_of[c as usize] == llc && self.nr_running(c) > 0)
            .count();
        if self.nr_running(cpu) < 2 && busy_in_llc <= 1 {
            return;
        }
        self.nohz.kicks += 1;
        self.nohz_idle_balance(ilb, &idle);
    }

    /// `_nohz_idle_balance()` on `ilb` for the `idle` CPUs.
    fn nohz_idle_balance(&mut self, ilb: u32, idle: &[u32]) {
        let now = self.jiffies();
        let others = idle.iter().copied().filter(|&c| c != ilb);
        for c in others.chain(std::iter::once(ilb)) {
            // need_resched(): the kicked CPU got work of its own.
            if !self.idle(ilb) {
                break;
            }
            if !self.idle(c) {
                continue;
            }
            if now >= self.rqs[c as usize].next_balance {
                self.nohz.balances += 1;
                self.rebalance_domains(c);
            }
        }
        self.nohz.next_balance = self
            .nohz_idle_cpus()
            .iter()
            .map(|&c| self.rqs[c as usize].next_balance)
            .min()
            .unwrap_or(now.saturating_add(1));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::Workload;

    /// Two always-running tasks started on one CPU of qemu8's 8 (fork
    /// placement spreads them, so they are put together by hand).
    fn stacked(nohz: bool) -> Sim {
        let topo = Topology::preset("qemu8").unwrap();
        let mut cfg = Config::new(topo, Workload::parse("fairness:3").unwrap(), 1, 400_000_000);
        cfg.nohz = nohz;
        let mut s = Sim::new(cfg);
        for t in 0..s.tasks.len() {
            let c = s.tasks[t].cpu;
            if c != 0 && s.rqs[c as usize].curr == Some(t) {
                s.block_curr(c, State::Sleeping);
                s.tasks[t].cpu = 0;
                s.wake(t, Some((0, t)), true);
            }
        }
        s
    }

    #[test]
    fn periodic_kernel_balances_from_every_idle_tick() {
        let mut s = stacked(false);
        for _ in 0..50 {
            s.tick();
            s.now_ns += s.tick_ns;
        }
        assert_eq!(s.nohz.kicks, 0);
        assert!(s.stats.lb_idle > 0);
    }

    #[test]
    fn nohz_idle_cpus_balance_only_when_kicked() {
        let mut s = stacked(true);
        let mut before_kick = 0;
        for _ in 0..50 {
            let kicks = s.nohz.kicks;
            let idle_lb = s.stats.lb_idle;
            s.tick();
            s.now_ns += s.tick_ns;
            // Every idle balance of a tick came from a kick in it.
            if s.nohz.kicks == kicks {
                before_kick += s.stats.lb_idle - idle_lb;
            }
        }
        assert_eq!(before_kick, 0, "an idle CPU balanced on its own tick");
        assert!(s.nohz.kicks > 0 && s.nohz.balances > 0);
    }

    /// One task on eight CPUs: nothing to spread, so no kick; with their
    /// ticks stopped, the seven idle CPUs balance not at all, where the
    /// periodic kernel's balance at every idle interval.
    #[test]
    fn an_idle_cpu_with_its_tick_stopped_does_not_balance() {
        let run = |nohz: bool| {
            let topo = Topology::preset("qemu8").unwrap();
            let mut cfg = Config::new(topo, Workload::parse("fairness:1").unwrap(), 1, 100_000_000);
            cfg.nohz = nohz;
            let mut s = Sim::new(cfg);
            for _ in 0..50 {
                s.tick();
                s.now_ns += s.tick_ns;
            }
            s
        };
        assert!(run(false).stats.lb_idle > 0);
        let s = run(true);
        assert_eq!(s.nohz.kicks, 0);
        assert_eq!(s.stats.lb_idle, 0);
    }

    #[test]
    fn no_kick_without_idle_cpus_or_work_to_spread() {
        let topo = Topology::preset("qemu8").unwrap();
        let mut cfg = Config::new(topo, Workload::parse("fairness:8").unwrap(), 1, 100_000_000);
        cfg.nohz = true;
        let mut s = Sim::new(cfg);
        for _ in 0..20 {
            s.tick();
            s.now_ns += s.tick_ns;
        }
        assert_eq!(s.nohz.kicks, 0, "no CPU is idle");
    }
}
