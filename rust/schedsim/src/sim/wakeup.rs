// SPDX-License-Identifier: GPL-2.0

//! Wakeups: `try_to_wake_up()` and where the woken task goes.
//!
//! Mirrors, much reduced, `kernel/sched/core.c`'s `try_to_wake_up()` with
//! `ttwu_runnable()` and `ttwu_do_activate()`'s `avg_idle` update, and
//! `kernel/sched/fair.c`'s `select_task_rq_fair()`, `wake_affine()`,
//! `wake_wide()` and `select_idle_sibling()` with stock 6.12's
//! `select_idle_cpu()` (SIS_UTIL) and the series' policy scan in its place
//! when SIS_PROP or SIS_FOLD asks for it (`sched_lb_policy::sis_chain`,
//! as the kernel's `sis_select` hook runs it).

use super::*;

impl Sim {
    /// `try_to_wake_up()`: picks a CPU and activates `t` there.
    /// `waker` is the waking CPU and task (None for a timer, which fires
    /// on the task's previous CPU). A delayed task is still queued and
    /// wakes where it is.
    pub(crate) fn wake(&mut self, t: usize, waker: Option<(u32, usize)>, sync: bool) {
        // The wakeup's own work (its locks, placement, the enqueue) runs on
        // the waking CPU, whatever it decides.
        let here = waker.map_or(self.tasks[t].cpu, |w| w.0);
        if self.cfg.record_events {
            self.rec_waking(t, here, waker.is_some());
        }
        self.charge(here, self.cost.wakeup_ns);
        if self.tasks[t].delayed {
            // ttwu_runnable() succeeds and ttwu_stat() counts it, at the
            // CPU where the task still is.
            let cpu = self.tasks[t].cpu;
            self.rec_wakeup(t, cpu, here);
            self.ss_ttwu(waker.map_or(cpu, |w| w.0), cpu);
            self.requeue_delayed(t);
            return;
        }
        let prev = self.tasks[t].cpu;
        let cpu = match (self.tasks[t].pinned, waker) {
            // select_task_rq() keeps a task allowed one CPU there.
            (Some(p), _) => p,
            (None, Some((wcpu, wtask))) => self.select_task_rq(t, prev, wcpu, Some(wtask), sync),
            (None, None) => self.select_task_rq(t, prev, prev, None, false),
        };
        // ttwu_queue_cond(): a CPU that shares no cache with the waking
        // one, or a remote one with nothing to run, takes its wakees
        // through the wake list; until its IPI arrives they are enqueued
        // nowhere and the CPU is not idle to anyone else.
        // The model has a wake list only where it is given the latency
        // of one (0: the wakee enqueued at once, as calibrated).
        let at_tick = self.cfg.wake_list_at_tick;
        let idle_target = self.nr_running(cpu) == 0;
        let queue = cpu != here && (idle_target || !self.cfg.topology.share_cache(here, cpu));
        let modelled = if idle_target {
            self.cost.wake_list_ns > 0 || at_tick
        } else {
            self.cost.wake_list_busy_ns > 0
        };
        let listed = queue && modelled;
        if cpu != prev {
            self.rec_migrate(t, prev, cpu, here);
            if listed {
                // The load leaves prev now and joins cpu's at the enqueue
                // (`ttwu_pending()`): a CPU with a wakee on its way does
                // not weigh it yet, to a balancer or to WA_WEIGHT.
                self.detach_signals(t, prev);
                self.tasks[t].attach_at_enqueue = true;
            } else {
                self.move_signals(t, prev, cpu);
            }
            let task = &mut self.tasks[t];
            task.migrations += 1;
            task.refill_ns =
                task.refill_ns
                    .saturating_add(self.cost.refill_ns(&self.cfg.topology, prev, cpu));
            // WF_MIGRATED, so enqueue_entity() with ENQUEUE_MIGRATED: "no
            // longer consider this task hot" (the wake list's wakees too:
            // p->sched_remote_wakeup keeps the flag).
            task.migrated = true;
            self.stats.wakeup_migrations += 1;
        }
        self.tasks[t].cpu = cpu;
        self.ss_ttwu(waker.map_or(prev, |w| w.0), cpu);
        if listed {
            let rq = &mut self.rqs[cpu as usize];
            rq.wake_list.push(t);
            if rq.wake_list.len() == 1 {
                let at_ns = if at_tick && idle_target {
                    // The tick of that instant is queued already: its
                    // balancers find the wakee still on its way.
                    self.jiffies()
                        .saturating_add(1)
                        .saturating_mul(self.tick_ns)
                } else {
                    let wait_ns = if idle_target {
                        self.latency_ns(|s| &s.wake_list_ns, self.cost.wake_list_ns)
                    } else {
                        self.latency_ns(|s| &s.wake_list_busy_ns, self.cost.wake_list_busy_ns)
                    };
                    self.now_ns.saturating_add(wait_ns)
                };
                self.push(at_ns, Ev::WakeList { cpu });
            }
            self.tcg_turn_end();
            return;
        }
        self.rec_wakeup(t, cpu, here);
        // Under TCG a turn ends at any interrupt QEMU raises: a timer's
        // (a wakeup with no waker) or an IPI. An idle target is woken by
        // an IPI (the wake list, or the resched of its idle task), a busy
        // one only when the wakee preempts it.
        let curr_before = self.rqs[cpu as usize].curr;
        self.activate(t, cpu);
        self.deferred_tick(cpu);
        let rq = &self.rqs[cpu as usize];
        let ipi =
            cpu != here && (curr_before.is_none() || rq.curr != curr_before || rq.need_resched);
        if waker.is_none() || ipi {
            self.tcg_turn_end();
        }
    }

    /// `sched_ttwu_pending()` on `cpu`, when the wake list's IPI arrives:
    /// each wakee is enqueued there (`sched_wakeup` is traced now, as the
    /// kernel's `ttwu_do_activate()` does) and may run or preempt.
    pub(super) fn ttwu_pending(&mut self, cpu: u32) {
        let idle = self.rqs[cpu as usize].curr.is_none();
        let list = std::mem::take(&mut self.rqs[cpu as usize].wake_list);
        for t in list {
            self.rec_wakeup(t, cpu, cpu);
            if std::mem::take(&mut self.tasks[t].attach_at_enqueue) {
                self.attach_signals(t, cpu);
            }
            self.activate(t, cpu);
        }
        // The timers that fired while the IPI waited for the vCPU's
        // turn are handled in it too.
        if self.cfg.timer_turn {
            self.timers_at_turn(cpu, idle);
        }
        self.deferred_tick(cpu);
    }

    /// `record_wakee()`.
    pub(super) fn record_wakee(&mut self, waker: usize, wakee: usize) {
        let j = self.jiffies();
        let hz = self.hz();
        let w = &mut self.tasks[waker];
        if j > w.wakee_flip_decay_jiffies.saturating_add(hz) {
            w.wakee_flips >>= 1;
            w.wakee_flip_decay_jiffies = j;
        }
        if w.last_wakee != Some(wakee) {
            w.last_wakee = Some(wakee);
            w.wakee_flips = w.wakee_flips.saturating_add(1);
        }
    }

    /// `wake_wide()`.
    pub(super) fn wake_wide(&self, waker: usize, wakee: usize, cpu: u32) -> bool {
        let mut master = self.tasks[waker].wakee_flips;
        let mut slave = self.tasks[wakee].wakee_flips;
        let factor = self.cfg.topology.llc_size[cpu as usize];
        if master < slave {
            std::mem::swap(&mut master, &mut slave);
        }
        !(slave < factor || master < slave.saturating_mul(factor))
    }

    /// `select_task_rq_fair()` for a wakeup.
    pub(super) fn select_task_rq(
        &mut self,
        t: usize,
        prev: u32,
        this_cpu: u32,
        waker: Option<usize>,
        sync: bool,
    ) -> u32 {
        let mut new_cpu = prev;
        if let Some(w) = waker {
            self.record_wakee(w, t);
            let want_affine = !self.wake_wide(w, t, this_cpu);
            if want_affine && this_cpu != prev {
                // The lowest domain of this_cpu spanning prev (all levels
                // have SD_WAKE_AFFINE here).
                let level = self.cfg.topology.domains[this_cpu as usize]
                    .iter()
                    .position(|d| d.span.test(prev));
                if let Some(k) = level {
                    new_cpu = self.wake_affine(k, t, this_cpu, prev, sync, w);
                    self.ss_wake_affine(this_cpu, k, new_cpu);
                }
            }
        }
        let target = self.select_idle_sibling(t, prev, new_cpu, this_cpu);
        if self.available_idle(target) {
            self.stats.sis_placed_idle += 1;
        }
        self.tasks[t].recent_used_cpu = prev;
        target
    }

    /// `wake_affine()`: WA_IDLE's answer, else WA_WEIGHT's; the waker's
    /// CPU only if one of them names it, the previous CPU otherwise (with
    /// both off, always).
    pub(super) fn wake_affine(
        &mut self,
        level: usize,
        t: usize,
        this_cpu: u32,
        prev: u32,
        sync: bool,
        waker: usize,
    ) -> u32 {
        let f = self.cfg.flags;
        let mut target = None;
        if f.wa_idle {
            target = self.wake_affine_idle(this_cpu, prev, sync);
        }
        if f.wa_weight && target.is_none() {
            target = self.wake_affine_weight(level, t, this_cpu, prev, sync, waker);
        }
        if target == Some(this_cpu) {
            this_cpu
        } else {
            prev
        }
    }

    /// `wake_affine_idle()`: None where the kernel returns
    /// `nr_cpumask_bits`.
    fn wake_affine_idle(&self, this_cpu: u32, prev: u32, sync: bool) -> Option<u32> {
        if self.available_idle(this_cpu) && self.cfg.topology.share_cache(this_cpu, prev) {
            return Some(if self.available_idle(prev) {
                prev
            } else {
                this_cpu
            });
        }
        // 6.12.117: `rq->nr_running - cfs_h_nr_delayed(rq) == 1`.
        if sync && self.nr_runnable(this_cpu) == 1 {
            return Some(this_cpu);
        }
        self.available_idle(prev).then_some(prev)
    }

    /// `wake_affine_weight()`: the waker's CPU if its load with the wakee
    /// is below the previous CPU's without it, the previous CPU's
    /// weighted up by half the domain's `imbalance_pct` under WA_BIAS.
    fn wake_affine_weight(
        &mut self,
        level: usize,
        t: usize,
        this_cpu: u32,
        prev: u32,
        sync: bool,
        waker: usize,
    ) -> Option<u32> {
        let pct = i128::from(self.cfg.topology.domains[this_cpu as usize][level].imbalance_pct);
        let mut this_eff = i128::from(self.cpu_load(this_cpu));
        if sync {
            let cur = i128::from(self.task_load(waker));
            if cur > this_eff {
                return Some(this_cpu);
            }
            this_eff -= cur;
        }
        let tl = i128::from(self.wakee_h_load(t));
        this_eff += tl;
        let mut prev_eff = i128::from(self.cpu_load(prev)) - tl;
        if self.cfg.flags.wa_bias {
            this_eff *= 100;
            prev_eff *= 100 + (pct - 100) / 2;
        }
        // Both capacities are CAPACITY in the model: kept for the
        // kernel's arithmetic (and its rounding) all the same.
        this_eff *= i128::from(CAPACITY);
        prev_eff *= i128::from(CAPACITY);
        if sync {
            prev_eff += 1;
        }
        if this_eff < prev_eff {
            self.stats.wake_affine_pulls += 1;
            Some(this_cpu)
        } else {
            None
        }
    }

    /// `select_idle_sibling()` of 6.12, with the series' policy scan in
    /// place of `select_idle_cpu()` when SIS_PROP or SIS_FOLD asks for it
    /// (the `sis_select` hook, `rust/hooks.rs`).
    pub(super) fn select_idle_sibling(
        &mut self,
        t: usize,
        prev: u32,
        target: u32,
        this_cpu: u32,
    ) -> u32 {
        self.stats.sis_calls += 1;
        if self.available_idle(target) {
            self.stats.sis_target_idle += 1;
            return target;
        }
        let topo = &self.cfg.topology;
        if prev != target && topo.share_cache(prev, target) && self.available_idle(prev) {
            self.stats.sis_target_idle += 1;
            return prev;
        }
        let recent = self.tasks[t].recent_used_cpu;
        if recent != prev
            && recent != target
            && topo.share_cache(recent, target)
            && self.available_idle(recent)
        {
            self.stats.sis_target_idle += 1;
            return recent;
        }
        let llc = topo.llc_of[target as usize] as usize;
        let smt = topo.smt_weight > 1;
        let has_idle_core = smt && self.llc[llc].has_idle_cores;
        if smt && !has_idle_core && topo.share_cache(prev, target) {
            // select_idle_smt() on prev.
            self.stats.sis_scans += 1;
            let sibs: Vec<u32> = topo.smt_mask[prev as usize].iter().collect();
            let mut visited = 0u64;
            for s in sibs {
                if s == prev {
                    continue;
                }
                visited += 1;
                if self.available_idle(s) {
                    self.charge_scan(this_cpu, visited);
                    self.stats.sis_found += 1;
                    return s;
                }
            }
            self.charge_scan(this_cpu, visited);
        }
        let f = self.cfg.flags;
        let flags = sched_lb_policy::sis_chain::SisFlags {
            prop: f.sis_prop,
            fold: f.sis_fold,
            ..Default::default()
        };
        let found = if sched_lb_policy::sis_chain::policy_scans(flags, has_idle_core) {
            self.sis_policy_scan(t, target, this_cpu, has_idle_core)
        } else {
            self.sis_stock_scan(target, this_cpu, has_idle_core)
        };
        match found {
            Some(c) => {
                self.stats.sis_found += 1;
                c
            }
            None => target,
        }
    }

    pub(super) fn charge_scan(&mut self, cpu: u32, visited: u64) -> u64 {
        let ns = self.cost.sis_scan_ns(visited);
        self.stats.sis_scan_cpus += visited;
        self.stats.sis_scan_ns += ns;
        self.charge(cpu, ns);
        ns
    }

    /// Stock 6.12 `select_idle_cpu()`: SIS_UTIL's budget on the CPU scan,
    /// the unbudgeted core scan while `has_idle_cores` is set.
    pub(super) fn sis_stock_scan(
        &mut self,
        target: u32,
        this_cpu: u32,
        has_idle_core: bool,
    ) -> Option<u32> {
        let topo = &self.cfg.topology;
        let llc = topo.llc_of[target as usize] as usize;
        let util = self
            .cfg
            .flags
            .sis_util
            .then(|| self.llc[llc].nr_idle_scan + 1);
        if !has_idle_core {
            let budget = sis_budget::combine(None, util, topo.smt_weight)?;
            self.stats.sis_scans += 1;
            let view = View { sim: self, llc };
            let span = &topo.llc_span[llc];
            let scan = sis_select::scan_cpus(
                &view,
                span.words(),
                topo.nr_cpus,
                target.wrapping_add(1),
                budget.cpus,
            );
            self.charge_scan(this_cpu, u64::from(scan.loops));
            return scan.cpu;
        }
        // select_idle_core() over every core, unbudgeted (6.12's fold).
        self.stats.sis_scans += 1;
        let span: Vec<u32> = {
            let s = &topo.llc_span[llc];
            let cpus: Vec<u32> = s.iter().collect();
            let start = cpus.iter().position(|&c| c > target).unwrap_or(0);
            cpus[start..]
                .iter()
                .chain(cpus[..start].iter())
                .copied()
                .collect()
        };
        let mut covered = crate::cpumask::CpuMask::new(topo.nr_cpus);
        let mut visited = 0u64;
        let mut idle_cpu = None;
        let mut result = None;
        for c in span {
            if covered.test(c) {
                continue;
            }
            let mut all_idle = true;
            for s in topo.smt_mask[c as usize].iter() {
                covered.set(s);
                visited += 1;
                if self.available_idle(s) {
                    idle_cpu = idle_cpu.or(Some(s));
                } else {
                    all_idle = false;
                }
            }
            if all_idle {
                result = Some(c);
                break;
            }
        }
        if result.is_none() {
            self.llc[llc].has_idle_cores = false;
        }
        self.charge_scan(this_cpu, visited);
        result.or(idle_cpu)
    }

    /// The series' scan: the policy crate's chain, the one the kernel's
    /// `sis_select`/`sis_account` hooks run; the simulator only supplies
    /// the LLC view, charges the scan's time and stores what it returns.
    /// Everything the scan reads and writes of its own is the waking CPU's
    /// (`this_rq()` in patch 0012's `sched_lb_select_idle_cpu()`):
    /// `avg_idle`, SIS_AGE's `wake_avg` and the average scan cost; the
    /// LLC's are only `nr_idle_scan` and `has_idle_cores`.
    pub(super) fn sis_policy_scan(
        &mut self,
        _t: usize,
        target: u32,
        this_cpu: u32,
        has_idle_core: bool,
    ) -> Option<u32> {
        let f = self.cfg.flags;
        let topo = &self.cfg.topology;
        let llc = topo.llc_of[target as usize] as usize;
        let rq = &self.rqs[this_cpu as usize];
        let input = SisInput {
            flags: SisFlags {
                prop: f.sis_prop,
                util: f.sis_util,
                age: f.sis_age,
                once: f.sis_once,
                fold: f.sis_fold,
            },
            wake: WakeAvg {
                avg_ns: rq.wake_avg_ns,
                stamp_jiffies: rq.wake_stamp,
            },
            now_jiffies: self.jiffies(),
            avg_idle_ns: rq.avg_idle_ns,
            avg_scan_cost_ns: rq.sis_avg_scan_cost_ns,
            span_weight: topo.llc_span[llc].weight(),
            util_nr: self.llc[llc].nr_idle_scan + 1,
            smt_weight: topo.smt_weight,
            has_idle_core,
            target,
            nbits: topo.nr_cpus,
        };
        let answer = sis_chain::select(&View { sim: self, llc }, &input);
        let m = &mut self.schedstat.module;
        m.sis_select_calls += 1;
        m.sis_select_found += u64::from(answer.scan.cpu.is_some());
        m.sis_account_calls += 1;
        if answer.scan.loops > 0 {
            m.sis_account_scans += 1;
            m.sis_account_loops += u64::from(answer.scan.loops);
        }
        let rq = &mut self.rqs[this_cpu as usize];
        (rq.wake_avg_ns, rq.wake_stamp) = (answer.wake.avg_ns, answer.wake.stamp_jiffies);
        let scan = answer.scan;
        if answer.clears_idle_cores() {
            self.llc[llc].has_idle_cores = false;
        }
        let visited = match answer.kind {
            ScanKind::Skipped => return None,
            ScanKind::Cpus => u64::from(scan.loops),
            // StockCores needs flags that want no policy scan, which the
            // caller hands to stock's own scan instead.
            ScanKind::Cores | ScanKind::StockCores => {
                u64::from(scan.loops) * u64::from(self.cfg.topology.smt_weight)
            }
        };
        self.stats.sis_scans += 1;
        let ns = self.charge_scan(this_cpu, visited);
        self.schedstat.module.sis_account_scan_ns += ns;
        // The waking CPU's own average, as patch 0012's shim reads and
        // writes `this_rq->sis_avg_scan_cost`, not the LLC's.
        let rq = &mut self.rqs[this_cpu as usize];
        let done = sis_chain::account(
            rq.sis_avg_scan_cost_ns,
            rq.wake_avg_ns,
            ns,
            scan.loops,
            f.sis_once,
        );
        rq.sis_avg_scan_cost_ns = done.avg_scan_cost_ns;
        rq.wake_avg_ns = done.wake_avg_ns;
        scan.cpu
    }
}

/// One LLC as the policy scans see it, as `__select_idle_cpu()` does.
struct View<'a> {
    sim: &'a Sim,
    llc: usize,
}

impl<'a> LlcView for View<'a> {
    type Mask = [u64];
    type Smt<'v>
        = &'v View<'a>
    where
        Self: 'v;

    fn cpus(&self) -> &[u64] {
        // No affinity masks in these workloads: the LLC's span.
        self.sim.cfg.topology.llc_span[self.llc].words()
    }

    fn cores(&self) -> &[u64] {
        self.sim.cfg.topology.llc_cores[self.llc].words()
    }

    fn smt(&self) -> Option<&View<'a>> {
        Some(self)
    }
}

impl SmtView for &View<'_> {
    type Mask = [u64];

    fn siblings(&mut self, core: u32) -> &[u64] {
        self.sim.cfg.topology.smt_mask[core as usize].words()
    }
}

impl sis_select::IdleView for View<'_> {
    fn idle(&self, cpu: u32) -> bool {
        self.sim.available_idle(cpu)
    }

    fn allowed(&self, _cpu: u32) -> bool {
        // No affinity masks in these workloads.
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::tests::fair;

    /// llc16 (one LLC of 16 CPUs, no SMT) with a task on every CPU, so a
    /// scan finds nothing idle and runs to its budget; SIS_PROP alone
    /// sizes it. Every CPU predicts 2 ns of idle time (`avg_idle / 512`),
    /// so the budget is `16 * 2 / (avg_scan_cost + 1)` cores, at least 2:
    /// the whole LLC at a cost of 0, a fraction of it once a few scans
    /// have raised the average.
    fn busy_llc16() -> Sim {
        let mut s = fair("llc16", 16, |c| {
            c.flags.apply("-SIS_UTIL,+SIS_PROP").unwrap()
        });
        for c in 0..16 {
            assert!(!s.idle(c), "CPU {c} idle");
            s.rqs[c as usize].avg_idle_ns = 1024;
        }
        s
    }

    /// A remote wakeup onto an idle CPU with a wake list latency
    /// (`CostModel::wake_list_ns`): the wakee is on no runqueue until the
    /// IPI, and the target is not idle to anyone meanwhile (a second
    /// wakeup that wants it goes elsewhere); then it runs there.
    #[test]
    fn a_wake_list_holds_its_target_busy() {
        let three_on_qemu8 =
            |wake_list_ns| fair("qemu8", 3, |c| c.cost.wake_list_ns = wake_list_ns);
        let mut s = three_on_qemu8(100_000);
        let cpu_of = |s: &Sim, t: usize| s.tasks[t].cpu;
        let (w, a, b) = (0, 1, 2);
        let (wc, ac) = (cpu_of(&s, w), cpu_of(&s, a));
        assert_ne!(wc, ac);
        assert_eq!(s.rqs[ac as usize].curr, Some(a));
        s.block_curr(ac, State::Blocked);
        let bc = cpu_of(&s, b);
        s.block_curr(bc, State::Blocked);
        assert!(s.idle(ac));
        s.wake(a, Some((wc, w)), false);
        assert_eq!(cpu_of(&s, a), ac, "its idle prev CPU");
        assert_eq!(s.rqs[ac as usize].wake_list, vec![a]);
        assert_eq!(s.nr_running(ac), 0, "on no runqueue yet");
        assert_eq!(s.tasks[a].state, State::Blocked);
        assert!(!s.idle(ac), "ttwu_pending: not idle");
        // b made to have last run on a's CPU: its wakeup, which would go
        // back there while it is idle, must find it busy now.
        s.tasks[b].cpu = ac;
        s.tasks[b].recent_used_cpu = ac;
        s.wake(b, Some((wc, w)), false);
        assert_ne!(
            cpu_of(&s, b),
            ac,
            "placed on a CPU with a wakeup on its way"
        );
        s.ttwu_pending(ac);
        assert!(s.rqs[ac as usize].wake_list.is_empty());
        assert_eq!(
            s.rqs[ac as usize].curr,
            Some(a),
            "the IPI enqueues it and it runs"
        );
        // Without the latency the wakeup enqueues at once.
        let mut s = three_on_qemu8(0);
        let (wc, ac) = (cpu_of(&s, w), cpu_of(&s, a));
        s.block_curr(ac, State::Blocked);
        s.wake(a, Some((wc, w)), false);
        assert!(s.rqs[ac as usize].wake_list.is_empty());
        assert_eq!(s.rqs[cpu_of(&s, a) as usize].curr, Some(a));
    }

    /// A wakee moved through the wake list: its load leaves its old CPU
    /// at the wakeup and joins the new one's when the IPI enqueues it
    /// (`migrate_task_rq_fair()` removes it; `enqueue_entity()` attaches
    /// it, `last_update_time` being 0), so a CPU with a wakee on its way
    /// does not weigh it yet: b, whose previous CPU has a's wakeup
    /// pending, goes elsewhere, and that CPU reads b's load only after
    /// its IPI.
    #[test]
    fn a_wake_listed_wakees_load_joins_its_cpu_at_the_enqueue() {
        let mut s = fair("qemu8", 3, |c| c.cost.wake_list_ns = 100_000);
        let (w, a, b) = (0, 1, 2);
        let (wc, ac, bc) = (s.tasks[w].cpu, s.tasks[a].cpu, s.tasks[b].cpu);
        // Both a and b last ran on ac.
        s.block_curr(ac, State::Blocked);
        s.put_prev(bc);
        s.migrate(b, bc, ac);
        if s.rqs[ac as usize].curr.is_none() {
            s.pick_next(ac);
        }
        assert_eq!(s.rqs[ac as usize].curr, Some(b));
        s.block_curr(ac, State::Blocked);
        s.now_ns += 1_000_000;
        s.wake(a, Some((wc, w)), false);
        assert_eq!(s.rqs[ac as usize].wake_list, vec![a]);
        let before_ac = s.cpu_load(ac);
        let b_load = s.task_load(b);
        assert!(b_load > 100, "{b_load}");
        s.wake(b, Some((wc, w)), false);
        let x = s.tasks[b].cpu;
        assert!(x != ac && x != wc, "moved to another idle CPU: {x}");
        assert_eq!(s.rqs[x as usize].wake_list, vec![b]);
        assert!(s.tasks[b].attach_at_enqueue);
        // b's load has left ac and not yet joined x.
        assert!(s.cpu_load(ac) + b_load / 2 < before_ac, "{before_ac}");
        let pending_x = s.cpu_load(x);
        s.ttwu_pending(x);
        assert!(!s.tasks[b].attach_at_enqueue);
        assert!(s.cpu_load(x) >= pending_x + b_load / 2, "{pending_x}");
    }

    /// `ttwu_queue_cond()` on a busy target: a wakee for a CPU of another
    /// LLC waits `CostModel::wake_list_busy_ns` on the wake list, one for
    /// a busy CPU of the waker's LLC is enqueued at once; with the
    /// latency at 0 (the default) neither waits.
    #[test]
    fn a_busy_cpu_across_llcs_takes_its_wakee_through_the_wake_list() {
        let on_2x4 = |busy_ns| fair("2x4", 9, |c| c.cost.wake_list_busy_ns = busy_ns);
        // Nine tasks on eight CPUs: the wakee is the running one of the
        // CPU that has two, so no CPU is idle when it wakes. The waker
        // runs on `from`, in the first LLC; the wakee last ran on `prev`
        // and is woken back there (a busy CPU: WA_IDLE and WA_WEIGHT
        // would weigh the waker's, so both are off).
        let wake_onto = |s: &mut Sim, prev: u32| {
            s.cfg.flags.apply("-WA_IDLE,-WA_WEIGHT").unwrap();
            let two = (0..8).find(|&c| s.nr_running(c) == 2).unwrap();
            let from = if two < 4 { (two + 1) % 4 } else { 0 };
            let w = s.rqs[from as usize].curr.unwrap();
            let t = s.rqs[two as usize].curr.unwrap();
            s.block_curr(two, State::Blocked);
            assert!((0..8).all(|c| !s.idle(c)), "a CPU idle");
            let prev = if prev < 4 { (from + 2) % 4 } else { prev };
            s.tasks[t].cpu = prev;
            s.tasks[t].recent_used_cpu = prev;
            let before = s.nr_running(prev);
            s.wake(t, Some((from, w)), false);
            (t, s.tasks[t].cpu, before)
        };
        let mut s = on_2x4(2_000_000);
        let (t, cpu, before) = wake_onto(&mut s, 5);
        assert_eq!(cpu, 5);
        assert_eq!(s.rqs[5].wake_list, vec![t], "across LLCs: the wake list");
        assert_eq!(s.nr_running(5), before, "on no runqueue yet");
        let due: Vec<u64> = s
            .events
            .iter()
            .filter_map(|Reverse((at, _, ev))| match ev {
                Ev::WakeList { cpu: 5 } => Some(*at),
                _ => None,
            })
            .collect();
        assert_eq!(due, vec![s.now_ns + 2_000_000]);
        s.ttwu_pending(5);
        assert_eq!(s.nr_running(5), before + 1, "enqueued when the IPI comes");
        // Within the waker's LLC: at once.
        let mut s = on_2x4(2_000_000);
        let (_, cpu, before) = wake_onto(&mut s, 0);
        assert!(cpu < 4);
        assert!(s.rqs[cpu as usize].wake_list.is_empty());
        assert_eq!(s.nr_running(cpu), before + 1);
        // No latency given: across LLCs at once too.
        let mut s = on_2x4(0);
        let (_, cpu, before) = wake_onto(&mut s, 5);
        assert_eq!(cpu, 5);
        assert!(s.rqs[5].wake_list.is_empty());
        assert_eq!(s.nr_running(5), before + 1);
    }

    /// `Config::wake_list_at_tick`: the wake list's IPI is taken at the
    /// next tick, after that tick's own work, whatever
    /// `CostModel::wake_list_ns` says; a wakeup onto a busy CPU does not
    /// wait.
    #[test]
    fn a_wake_list_at_tick_waits_for_the_tick() {
        let mut s = fair("qemu8", 3, |c| c.wake_list_at_tick = true);
        let (w, a) = (0, 1);
        let (wc, ac) = (s.tasks[w].cpu, s.tasks[a].cpu);
        s.block_curr(ac, State::Blocked);
        // The tick at 3 queued the one at 4; the wakeup comes after it.
        s.now_ns = 3 * s.tick_ns;
        s.push(4 * s.tick_ns, Ev::Tick);
        let tick_seq = s.seq;
        s.now_ns += 1_000;
        s.wake(a, Some((wc, w)), false);
        assert_eq!(s.rqs[ac as usize].wake_list, vec![a], "on the wake list");
        let due: Vec<(u64, u64)> = s
            .events
            .iter()
            .filter_map(|Reverse((at, seq, ev))| match ev {
                Ev::WakeList { cpu } if *cpu == ac => Some((*at, *seq)),
                _ => None,
            })
            .collect();
        assert_eq!(due.len(), 1);
        assert_eq!(due[0].0, 4 * s.tick_ns, "taken at the next tick");
        assert!(due[0].1 > tick_seq, "after that tick's own work");
        // Onto a busy CPU: at once.
        let b = 2;
        let bc = s.tasks[b].cpu;
        s.block_curr(bc, State::Blocked);
        s.tasks[b].cpu = wc;
        s.wake(b, Some((wc, w)), false);
        assert!(s.rqs[wc as usize].wake_list.is_empty());
    }

    /// `wake_affine()` under its three features, on x5472 (4 L2s of 2
    /// CPUs): a sync wakeup from CPU 0, whose waker runs alone there, of
    /// a task that last ran on CPU 2, across L2s. The loads are set so
    /// that each feature decides: the waker's CPU would carry the
    /// wakee's 1000 against the previous CPU's 960 without it, which only
    /// WA_BIAS's lean towards the previous CPU (by half of PKG's
    /// `imbalance_pct`) calls a pull; a light wakee of 100 is a pull to
    /// WA_WEIGHT with or without it. Both off, the previous CPU always
    /// (`stream_nowa_*`, Galbraith 2016).
    #[test]
    fn wake_affine_follows_wa_idle_wa_weight_and_wa_bias() {
        let (this_cpu, prev) = (0, 2);
        let affine = |features: &str, wakee_load: u64| {
            let mut s = fair("x5472", 8, |c| c.flags.apply(features).unwrap());
            let w = s.rqs[this_cpu as usize].curr.unwrap();
            let t = s.rqs[prev as usize].curr.unwrap();
            s.block_curr(prev, State::Blocked);
            assert_eq!(s.tasks[t].cpu, prev);
            assert_eq!(s.nr_runnable(this_cpu), 1, "the waker alone");
            let level = s.cfg.topology.domains[this_cpu as usize]
                .iter()
                .position(|d| d.span.test(prev))
                .unwrap();
            let pct = s.cfg.topology.domains[this_cpu as usize][level].imbalance_pct;
            assert!(100 + (pct - 100) / 2 > 105, "PKG's imbalance_pct {pct}");
            let (now, weight) = (s.now_ns, s.tasks[t].weight);
            s.rqs[this_cpu as usize].load = Pelt::new(now, 1024);
            s.tasks[w].load = Pelt::entity(now, weight, 1024);
            s.tasks[t].load = Pelt::entity(now, weight, wakee_load);
            // The previous CPU still carries the wakee's blocked load.
            s.rqs[prev as usize].load = Pelt::new(now, 960 + wakee_load);
            s.wake_affine(level, t, this_cpu, prev, true, w)
        };
        // WA_IDLE: a sync waker alone on its CPU takes the wakee.
        assert_eq!(affine("", 1000), this_cpu);
        assert_eq!(affine("-WA_WEIGHT", 1000), this_cpu);
        // WA_WEIGHT alone: the loads decide, WA_BIAS tipping them.
        assert_eq!(affine("-WA_IDLE", 100), this_cpu);
        assert_eq!(affine("-WA_IDLE,-WA_BIAS", 100), this_cpu);
        assert_eq!(affine("-WA_IDLE", 1000), this_cpu);
        assert_eq!(affine("-WA_IDLE,-WA_BIAS", 1000), prev);
        // Neither: the previous CPU, whatever the loads.
        assert_eq!(affine("-WA_IDLE,-WA_WEIGHT", 100), prev);
        assert_eq!(affine("-WA_IDLE,-WA_WEIGHT", 1000), prev);
    }

    /// `wake_affine_weight()` reads the wakee's load as its block left
    /// it (`task_h_load()` of a sleeper no one synced), not decayed over
    /// its sleep. A wakee that blocked at 1000 and slept 32 periods would
    /// read 500 brought up to date; the previous CPU, still running
    /// another task, has decayed its share to about 1524 - 1024 = 500.
    /// Against a waker's CPU at 300: with the stale 1000 the waker's side
    /// is 1300 and the previous CPU's 524 (no pull); with a decayed 500 it
    /// would be 800 against 1024 (a pull).
    #[test]
    fn wake_affine_weight_reads_a_sleepers_load_as_it_blocked() {
        let (this_cpu, prev) = (0, 2);
        let mut s = fair("x5472", 8, |c| c.flags.apply("-WA_IDLE").unwrap());
        let w = s.rqs[this_cpu as usize].curr.unwrap();
        let t = s.rqs[prev as usize].curr.unwrap();
        let weight = s.tasks[t].weight;
        s.block_curr(prev, State::Blocked);
        let blocked_ns = s.now_ns;
        s.tasks[t].load = Pelt::entity(blocked_ns, weight, 1000);
        s.now_ns += 32 * crate::pelt::PERIOD_NS;
        let now = s.now_ns;
        s.rqs[this_cpu as usize].load = Pelt::new(now, 300);
        s.rqs[prev as usize].load = Pelt::new(now, 1524);
        let level = s.cfg.topology.domains[this_cpu as usize]
            .iter()
            .position(|d| d.span.test(prev))
            .unwrap();
        assert_eq!(s.wakee_h_load(t), 999, "1000 * 1524 / 1525");
        assert_eq!(s.wake_affine(level, t, this_cpu, prev, false, w), prev);
        // The same wakee's load brought up to date is half: then it is a
        // pull, which is what the test tells apart.
        let decayed = s.task_load(t);
        assert!((490..=510).contains(&decayed), "{decayed}");
        s.tasks[t].load = Pelt::entity(now, weight, decayed);
        assert_eq!(s.wake_affine(level, t, this_cpu, prev, false, w), this_cpu);
    }

    /// CPUs visited by one policy scan woken from `cpu`, targeting `cpu`.
    fn scan_from(s: &mut Sim, cpu: u32) -> u64 {
        let before = s.stats.sis_scan_cpus;
        assert_eq!(s.sis_policy_scan(0, cpu, cpu, false), None);
        s.stats.sis_scan_cpus - before
    }

    /// Patch 0012 keeps SIS_PROP's average scan cost per CPU
    /// (`this_rq->sis_avg_scan_cost`): each waking CPU reads and updates
    /// its own. Two CPUs of one LLC must not share it: CPU 0's scans
    /// shrink CPU 0's budget, CPU 1's first scan still sees a cost of 0
    /// and scans as far as CPU 0's first did, and CPU 1's scans leave CPU
    /// 0's budget where CPU 0's own history put it. Kept per LLC (the
    /// 2017 code's `sd_llc_shared`), CPU 1 would inherit CPU 0's cost.
    #[test]
    fn scan_cost_average_is_the_waking_cpus() {
        let mut s = busy_llc16();
        let first = scan_from(&mut s, 0);
        assert!(first >= 16, "cost 0: the whole LLC, got {first} CPUs");
        let mut cpu0 = vec![first];
        for _ in 0..4 {
            cpu0.push(scan_from(&mut s, 0));
        }
        assert!(
            *cpu0.last().unwrap() < first,
            "CPU 0's own scans shrink its budget: {cpu0:?}"
        );
        // CPU 1 has never scanned: its average is still 0.
        assert_eq!(scan_from(&mut s, 1), first, "CPU 1 took CPU 0's cost");
        for _ in 0..8 {
            scan_from(&mut s, 1);
        }
        // CPU 0 goes on from its own history: the same as a machine where
        // only CPU 0 ever scanned.
        let mut alone = busy_llc16();
        let mut want = Vec::new();
        for _ in 0..6 {
            want.push(scan_from(&mut alone, 0));
        }
        cpu0.push(scan_from(&mut s, 0));
        assert_eq!(cpu0, want, "CPU 1's scans moved CPU 0's budget");
    }
}
