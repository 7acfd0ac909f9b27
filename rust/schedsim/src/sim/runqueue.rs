// SPDX-License-Identifier: GPL-2.0

//! One CPU's CFS runqueue under 6.12.117's EEVDF: enqueue and dequeue
//! with DELAY_DEQUEUE, `update_curr()`, the pick, wakeup preemption,
//! migration between runqueues, and going idle.
//!
//! Mirrors, much reduced, `kernel/sched/fair.c`'s `enqueue_entity()`,
//! `dequeue_entity()`, `requeue_delayed_entity()`, `place_entity()`,
//! `update_curr()`, `pick_task_fair()`, `set_next_entity()`,
//! `put_prev_entity()` and `check_preempt_wakeup_fair()`; the EEVDF
//! arithmetic itself is `eevdf.rs`.

use super::*;

impl Sim {
    /// Called whenever `nr_running` or `nr_runnable` of `cpu` may have
    /// changed from `old`.
    pub(crate) fn nr_changed(&mut self, cpu: u32, old: Nr) {
        let new = self.nr(cpu);
        if new == old {
            return;
        }
        if (old.running == 0) != (new.running == 0) {
            if new.running == 0 {
                self.nr_idle += 1;
            } else {
                self.nr_idle -= 1;
            }
        }
        if (old.running >= 2) != (new.running >= 2) {
            if new.running >= 2 {
                self.nr_overloaded += 1;
            } else {
                self.nr_overloaded -= 1;
            }
        }
        if (old.runnable >= 2) != (new.runnable >= 2) {
            if new.runnable >= 2 {
                self.nr_waiting += 1;
            } else {
                self.nr_waiting -= 1;
            }
        }
        // STEAL's mask: only 1 <-> 2 crossings of h_nr_runnable write it
        // (`sched_lb_overload_update()`: a delayed task is queued but not runnable).
        if let Some(set) = sched_lb_policy::steal::overload_transition(old.runnable, new.runnable) {
            let llc = &self.llc[self.cfg.topology.llc_of[cpu as usize] as usize];
            let elem = cpu - llc.overloaded_base;
            let (w, b) = sparsemask::locate(elem, SPARSE_BITS_PER_LINE);
            let word = &llc.overloaded[w as usize];
            if set {
                word.set(word.get() | 1u64 << b);
            } else {
                word.set(word.get() & !(1u64 << b));
            }
        }
        let now = self.now_ns;
        self.conserve.update(
            now,
            cpu,
            old.running,
            new.running,
            self.nr_idle,
            self.nr_waiting,
        );
    }

    /// Puts `t` on `cpu`'s queue, where `place_entity()` placed it; a
    /// delayed task (moved by the balancer) stays delayed.
    pub(crate) fn enqueue(&mut self, cpu: u32, t: usize) {
        let old = self.nr(cpu);
        self.pelt_sync_rq(cpu);
        self.pelt_sync_task(t);
        if self.tasks[t].delayed {
            let rq = &mut self.rqs[cpu as usize];
            rq.nr_delayed = rq.nr_delayed.saturating_add(1);
        } else {
            self.tasks[t].state = State::Runnable;
        }
        self.tasks[t].cpu = cpu;
        self.rqs[cpu as usize].queue.push(t);
        self.nr_changed(cpu, old);
    }

    /// Takes a queued `t` off `cpu`.
    pub(crate) fn dequeue_queued(&mut self, cpu: u32, t: usize) {
        let old = self.nr(cpu);
        self.pelt_sync_rq(cpu);
        self.pelt_sync_task(t);
        let rq = &mut self.rqs[cpu as usize];
        if let Some(i) = rq.queue.iter().position(|&x| x == t) {
            rq.queue.remove(i);
            if self.tasks[t].delayed {
                rq.nr_delayed = rq.nr_delayed.saturating_sub(1);
            }
        }
        self.nr_changed(cpu, old);
    }

    /// Task `t` as EEVDF sees it.
    pub(super) fn se(&self, t: usize) -> Se {
        let task = &self.tasks[t];
        Se {
            vruntime: task.vruntime,
            deadline: task.deadline,
            weight: task.weight,
        }
    }

    /// The entities of `cpu`'s runqueue: the queued ones in tree order, and
    /// `curr` (the model's `curr` is always on the runqueue).
    pub(super) fn entities(&self, cpu: u32) -> (Vec<Se>, Option<Se>) {
        let rq = &self.rqs[cpu as usize];
        let queued = rq.queue.iter().map(|&t| self.se(t)).collect();
        (queued, rq.curr.map(|c| self.se(c)))
    }

    /// `avg_vruntime()`, which moves `zero_vruntime` to the average.
    pub(super) fn avg_vruntime(&mut self, cpu: u32) -> u64 {
        let (queued, curr) = self.entities(cpu);
        let rq = &mut self.rqs[cpu as usize];
        rq.zero_vruntime = eevdf::avg_vruntime(&queued, curr, rq.zero_vruntime);
        rq.zero_vruntime
    }

    /// `entity_eligible()` of task `t` on `cpu`'s runqueue.
    pub(crate) fn eligible(&self, cpu: u32, t: usize) -> bool {
        let (queued, curr) = self.entities(cpu);
        eevdf::vruntime_eligible(&queued, curr, self.tasks[t].vruntime)
    }

    /// `update_entity_lag()`: `t`'s lag on `cpu`'s runqueue, saved in
    /// `vlag` and returned.
    pub(super) fn update_entity_lag(&mut self, cpu: u32, t: usize) -> i64 {
        let avg = self.avg_vruntime(cpu);
        let lag = eevdf::entity_lag(avg, self.se(t), self.base_slice_ns, self.tick_ns);
        self.tasks[t].vlag = lag;
        lag
    }

    /// `place_entity()`: `t`'s `vruntime` and `deadline` for joining
    /// `cpu`'s runqueue, from the lag it kept (`initial`: a new task).
    pub(super) fn place_entity(&mut self, cpu: u32, t: usize, initial: bool) {
        let avg = self.avg_vruntime(cpu);
        let (queued, curr) = self.entities(cpu);
        let (vruntime, deadline) = eevdf::place_entity(
            &queued,
            curr,
            avg,
            self.tasks[t].vlag,
            self.tasks[t].weight,
            self.base_slice_ns,
            initial,
        );
        self.tasks[t].vruntime = vruntime;
        self.tasks[t].deadline = deadline;
    }

    /// RUN_TO_PARITY's `protect_slice()` for `cpu`'s `curr`.
    pub(super) fn protected(&self, cpu: u32) -> bool {
        let rq = &self.rqs[cpu as usize];
        rq.curr
            .is_some_and(|c| rq.protect_deadline == Some(self.tasks[c].deadline))
    }

    /// `update_curr()`: runtime up to now, then `update_deadline()`; a
    /// renewed deadline, or PREEMPT_SHORT's unprotected and no longer
    /// eligible `curr`, sets `need_resched` when something else is queued.
    pub(crate) fn update_curr(&mut self, cpu: u32) {
        self.account(cpu);
        let Some(c) = self.rqs[cpu as usize].curr else {
            return;
        };
        let mut resched = false;
        if let Some(d) = eevdf::update_deadline(self.se(c), self.base_slice_ns) {
            self.tasks[c].deadline = d;
            self.avg_vruntime(cpu);
            resched = true;
        }
        if self.rqs[cpu as usize].queue.is_empty() {
            return;
        }
        // did_preempt_short(): only an unprotected slice is cut short.
        if resched || (!self.protected(cpu) && !self.eligible(cpu, c)) {
            self.rqs[cpu as usize].need_resched = true;
        }
    }

    /// `__schedule()` on `cpu`: `pick_task_fair()` (whose `pick_eevdf()`
    /// sees `curr` while it is still on the runqueue; a delayed task it
    /// picks is dequeued for good and it picks again), then
    /// `put_prev_entity()` and `set_next_entity()` if the task changes,
    /// which is when RUN_TO_PARITY protects the new `curr`'s slice. A
    /// `curr` picked again keeps its protection state. False if nothing is
    /// left to run.
    pub(super) fn schedule(&mut self, cpu: u32) -> bool {
        if self.going_idle != Some(cpu) {
            self.ss_schedule(cpu);
        }
        self.update_curr(cpu);
        self.rqs[cpu as usize].need_resched = false;
        loop {
            let (queued, curr) = self.entities(cpu);
            match eevdf::pick_eevdf(&queued, curr, self.protected(cpu)) {
                None => return false,
                Some(Pick::Curr) => return true,
                Some(Pick::Queued(i)) => {
                    let t = self.rqs[cpu as usize].queue[i];
                    if self.tasks[t].delayed {
                        self.finish_delayed_dequeue(cpu, t);
                        continue;
                    }
                    if self.rqs[cpu as usize].curr.is_some() {
                        self.put_prev(cpu);
                    }
                    self.set_next(cpu, i);
                    return true;
                }
            }
        }
    }

    /// `dequeue_entities(DEQUEUE_SLEEP | DEQUEUE_DELAYED)`: a delayed task
    /// was picked, so it is eligible; it leaves the runqueue, its lag kept
    /// but clipped to 0 (DELAY_ZERO).
    pub(super) fn finish_delayed_dequeue(&mut self, cpu: u32, t: usize) {
        let lag = self.update_entity_lag(cpu, t);
        self.tasks[t].vlag = lag.min(0);
        self.dequeue_queued(cpu, t);
        self.tasks[t].delayed = false;
        self.trace(&[5, u64::from(cpu), t as u64]);
    }

    /// `pick_next_task_fair()` on a CPU with no `curr`. False if nothing
    /// is left to run (every queued task was a delayed one).
    pub(crate) fn pick_next(&mut self, cpu: u32) -> bool {
        debug_assert!(self.rqs[cpu as usize].curr.is_none());
        self.schedule(cpu)
    }

    /// `set_next_entity()`: queued task `i` becomes `curr`, its slice
    /// protected until its deadline moves.
    pub(super) fn set_next(&mut self, cpu: u32, i: usize) {
        self.account(cpu);
        self.pelt_sync_rq(cpu);
        let rq = &mut self.rqs[cpu as usize];
        let t = rq.queue.remove(i);
        rq.curr = Some(t);
        rq.protect_deadline = Some(self.tasks[t].deadline);
        rq.last_acct_ns = self.now_ns;
        let switched = rq.last_task != Some(t);
        rq.last_task = Some(t);
        if rq.idle_stamp_ns != 0 {
            rq.idle_stamp_ns = 0;
        }
        self.pelt_sync_task(t);
        self.tasks[t].state = State::Running;
        self.tasks[t].exec_start_ns = self.now_ns;
        self.tasks[t].migrated = false;
        if switched {
            self.stats.context_switches += 1;
            let c = self.cost.ctx_switch_ns;
            let rq = &mut self.rqs[cpu as usize];
            rq.overhead_ns = rq.overhead_ns.saturating_add(c);
        }
        self.trace(&[1, u64::from(cpu), t as u64]);
        self.rec_switch(cpu, Some(t));
        self.arm_burst(cpu);
    }

    /// The running task gives the CPU back and goes to the queue
    /// (`put_prev_entity()`).
    pub(crate) fn put_prev(&mut self, cpu: u32) {
        self.account(cpu);
        self.pelt_sync_rq(cpu);
        let rq = &mut self.rqs[cpu as usize];
        rq.protect_deadline = None;
        if let Some(t) = rq.curr.take() {
            rq.queue.push(t);
            self.pelt_sync_task(t);
            self.tasks[t].state = State::Runnable;
        }
        self.rqs[cpu as usize].gen += 1;
    }

    /// `resched_curr()` acted on: pick again, `curr` included.
    pub(crate) fn resched(&mut self, cpu: u32) {
        self.schedule(cpu);
    }

    /// `check_preempt_wakeup_fair()` after `t` was enqueued on `cpu`,
    /// which runs something: a pending resched stands; otherwise `t`
    /// preempts when `pick_eevdf()` would now pick it (no wakeup
    /// granularity in 6.12).
    pub(crate) fn wakeup_preempt(&mut self, cpu: u32, t: usize) {
        if self.rqs[cpu as usize].curr.is_none() {
            return;
        }
        if !self.rqs[cpu as usize].need_resched {
            self.update_curr(cpu);
        }
        let preempt = self.rqs[cpu as usize].need_resched || {
            let (queued, curr) = self.entities(cpu);
            match eevdf::pick_eevdf(&queued, curr, self.protected(cpu)) {
                Some(Pick::Queued(i)) => self.rqs[cpu as usize].queue[i] == t,
                _ => false,
            }
        };
        if !preempt {
            return;
        }
        match self.syscall_cpu {
            // The waker's own CPU acts on it on the way back from the
            // syscall.
            Some(here) if here == cpu => self.rqs[cpu as usize].need_resched = true,
            // Another CPU's, by IPI, slow under TCG (`resched_busy_ns`):
            // the flag is set now, so that its task entering the kernel
            // acts on it first.
            Some(_) if self.cost.resched_busy_ns > 0 => {
                self.rqs[cpu as usize].need_resched = true;
                let wait_ns = self.latency_ns(|s| &s.resched_busy_ns, self.cost.resched_busy_ns);
                self.push(self.now_ns.saturating_add(wait_ns), Ev::ReschedIpi { cpu });
            }
            _ => self.resched(cpu),
        }
    }

    /// `resched_curr()`'s IPI reaches `cpu` (`CostModel::resched_busy_ns`):
    /// the `need_resched` it was sent for, unless the CPU acted on it
    /// already (its task entered the kernel, or blocked).
    pub(super) fn resched_ipi(&mut self, cpu: u32) {
        let rq = &self.rqs[cpu as usize];
        if rq.need_resched && rq.curr.is_some() {
            self.resched(cpu);
        }
    }

    /// Migrates a queued task (`detach_task()` + `attach_task()`): its lag
    /// and its deadline relative to its vruntime (PLACE_REL_DEADLINE) go
    /// with it, and the destination checks for preemption. A delayed task
    /// moves delayed, as 6.12.117's `can_migrate_task()` lets it.
    pub(crate) fn migrate(&mut self, t: usize, src: u32, dst: u32) {
        self.migrate_by(t, src, dst, dst);
    }

    /// [`Self::migrate`] done by CPU `on` (the record's CPU for it).
    pub(crate) fn migrate_by(&mut self, t: usize, src: u32, dst: u32, on: u32) {
        self.update_curr(src);
        self.update_entity_lag(src, t);
        let rel_deadline = self.tasks[t].deadline.wrapping_sub(self.tasks[t].vruntime);
        self.dequeue_queued(src, t);
        self.move_signals(t, src, dst);
        let task = &mut self.tasks[t];
        task.migrations += 1;
        task.refill_ns =
            task.refill_ns
                .saturating_add(self.cost.refill_ns(&self.cfg.topology, src, dst));
        // enqueue_entity() with ENQUEUE_MIGRATED: "no longer consider
        // this task hot".
        task.migrated = true;
        self.stats.migrations += 1;
        self.trace(&[2, t as u64, u64::from(src), u64::from(dst)]);
        self.rec_migrate(t, src, dst, on);
        self.update_curr(dst);
        self.place_entity(dst, t, false);
        let task = &mut self.tasks[t];
        task.deadline = task.vruntime.wrapping_add(rel_deadline);
        self.enqueue(dst, t);
        self.track_buddy(t);
        if self.rqs[dst as usize].curr.is_none() {
            self.pick_next(dst);
        } else {
            self.wakeup_preempt(dst, t);
        }
    }

    /// Moves a task's load and utilisation from one runqueue to another.
    pub(super) fn move_signals(&mut self, t: usize, src: u32, dst: u32) {
        if src == dst {
            return;
        }
        self.detach_signals(t, src);
        self.attach_signals(t, dst);
    }

    /// `attach_entity_load_avg()`: task `t`'s load and utilisation join
    /// `cpu`'s, on its clock. A migration's second half; also a new task's
    /// first enqueue (`wake_up_new_task()`, whose `last_update_time` of 0
    /// makes `update_load_avg(DO_ATTACH)` attach it) and a replayed task
    /// that already lived on `cpu` when the trace began. Without those two
    /// a waker's CPU read a load without its own tasks', under half the
    /// waker's in a run's first 80 ms, and a migration took off a load
    /// that had never been added. The task is not brought up to now: a
    /// new one's signal has no past to decay.
    pub(super) fn attach_signals(&mut self, t: usize, cpu: u32) {
        self.pelt_sync_rq(cpu);
        let (mut load, mut util) = (self.tasks[t].load, self.tasks[t].util);
        self.rqs[cpu as usize].load.attach(&mut load);
        self.rqs[cpu as usize].util.attach(&mut util);
        (self.tasks[t].load, self.tasks[t].util) = (load, util);
    }

    /// `detach_entity_load_avg()`: task `t`'s signals, brought up to now,
    /// leave `cpu`'s. A migration's first half; also an exited task's
    /// (`task_dead_fair()`'s `remove_entity_load_avg()`).
    pub(super) fn detach_signals(&mut self, t: usize, cpu: u32) {
        self.pelt_sync_task(t);
        self.pelt_sync_rq(cpu);
        let (load, util) = (self.tasks[t].load, self.tasks[t].util);
        self.rqs[cpu as usize].load.detach(&load);
        self.rqs[cpu as usize].util.detach(&util);
    }

    /// Buddy bookkeeping: a pair split over two LLCs, or joined again.
    pub(super) fn track_buddy(&mut self, t: usize) {
        if let Kind::Buddy { pair, partner, .. } = self.tasks[t].kind {
            let a = self.tasks[t].cpu;
            let b = self.tasks[partner].cpu;
            let split = !self.cfg.topology.share_cache(a, b);
            if let Some(slot) = self.buddy_split.get_mut(pair) {
                if split && !*slot {
                    self.stats.buddy_splits += 1;
                }
                *slot = split;
            }
        }
    }

    /// The running task stops running (blocks or sleeps):
    /// `dequeue_entity(DEQUEUE_SLEEP)`. DELAY_DEQUEUE: if it is not
    /// eligible it stays queued, delayed, and competes until it is picked
    /// or woken; otherwise it leaves with its lag.
    pub(super) fn block_curr(&mut self, cpu: u32, state: State) {
        if self.cfg.record_events && self.recorder.prev_state[cpu as usize] == 'R' {
            self.rec_leaves(cpu, 'S');
        }
        self.update_curr(cpu);
        self.pelt_sync_rq(cpu);
        let old = self.nr(cpu);
        let Some(t) = self.rqs[cpu as usize].curr else {
            return;
        };
        let delay = self.cfg.flags.delay_dequeue && !self.eligible(cpu, t);
        if !delay {
            self.update_entity_lag(cpu, t);
        }
        let rq = &mut self.rqs[cpu as usize];
        rq.curr = None;
        rq.protect_deadline = None;
        rq.gen += 1;
        self.pelt_sync_task(t);
        self.tasks[t].state = state;
        if delay {
            self.tasks[t].delayed = true;
            let rq = &mut self.rqs[cpu as usize];
            rq.queue.push(t);
            rq.nr_delayed = rq.nr_delayed.saturating_add(1);
        }
        self.trace(&[3, u64::from(cpu), t as u64]);
        self.nr_changed(cpu, old);
        if !self.pick_next(cpu) {
            self.go_idle(cpu);
        }
    }

    /// The CPU has nothing to run: STEAL, then newidle balance. A pull
    /// that brought only a delayed task leaves the CPU idle once the pick
    /// dequeues it, and `pick_next_task_fair()` balances again (newidle;
    /// STEAL tries once a `__schedule()`).
    pub(super) fn go_idle(&mut self, cpu: u32) {
        let now = self.now_ns;
        self.rqs[cpu as usize].idle_stamp_ns = now.max(1);
        self.update_idle_core(cpu);
        let outer = self.going_idle.replace(cpu);
        // A STEAL attempt under way goes on when its victim's lock is
        // taken (`steal_land()`), newidle balancing after it.
        let stealing = self.start_steal(cpu);
        if !stealing {
            self.go_idle_pull(cpu);
        }
        self.going_idle = outer;
        if !stealing {
            self.enter_idle(cpu);
        }
    }

    /// The end of `go_idle()`'s `__schedule()`: the idle task runs, if
    /// nothing was pulled. sched_goidle counts only a CPU that ends up
    /// running it, and the recorded trace switches to it only then
    /// (delayed tasks may still count in nr_running).
    pub(super) fn enter_idle(&mut self, cpu: u32) {
        if self.rqs[cpu as usize].curr.is_none() {
            self.rec_switch(cpu, None);
            // The vCPU halts: under TCG its turn ends.
            self.tcg_turn_end();
        }
        self.ss_goidle(cpu);
    }

    /// `go_idle()`'s newidle balance, retried while a pull brought only a
    /// delayed task.
    pub(super) fn go_idle_pull(&mut self, cpu: u32) {
        for _ in 0..GO_IDLE_RETRIES {
            if !self.newidle_balance(cpu) || !self.idle(cpu) {
                return;
            }
        }
    }

    /// `__update_idle_core()`: a CPU going idle with all its SMT siblings
    /// idle sets `has_idle_cores`.
    pub(super) fn update_idle_core(&mut self, cpu: u32) {
        let topo = &self.cfg.topology;
        if topo.smt_weight < 2 {
            return;
        }
        let all_idle = topo.smt_mask[cpu as usize].iter().all(|s| self.idle(s));
        if all_idle {
            let l = topo.llc_of[cpu as usize] as usize;
            self.llc[l].has_idle_cores = true;
        }
    }

    /// `ttwu_do_activate()` + `wakeup_preempt()`.
    pub(super) fn activate(&mut self, t: usize, cpu: u32) {
        let now = self.now_ns;
        let rq = &mut self.rqs[cpu as usize];
        if rq.idle_stamp_ns != 0 {
            // update_rq_avg_idle(): avg += (sample - avg) / 8, capped.
            let delta = now.saturating_sub(rq.idle_stamp_ns);
            let max = rq.max_idle_balance_cost_ns.saturating_mul(2);
            rq.avg_idle_ns = update_avg(rq.avg_idle_ns, delta).min(max);
            rq.idle_stamp_ns = 0;
            // SIS_AGE's estimate restarts at avg_idle / 2.
            rq.wake_stamp = now / self.tick_ns;
            rq.wake_avg_ns = rq.avg_idle_ns / 2;
        }
        // enqueue_entity(): update_curr(), then place_entity() with the
        // lag kept since the task slept.
        self.update_curr(cpu);
        self.place_entity(cpu, t, false);
        self.tasks[t].wakeups += 1;
        self.enqueue(cpu, t);
        self.trace(&[4, t as u64, u64::from(cpu)]);
        self.track_buddy(t);
        if self.rqs[cpu as usize].curr.is_none() {
            if self.cost.wake_idle_ns > 0 {
                let wait_ns = self.latency_ns(|s| &s.wake_idle_ns, self.cost.wake_idle_ns);
                self.push(now.saturating_add(wait_ns), Ev::IdlePick { cpu });
            } else {
                self.pick_next(cpu);
            }
        } else {
            self.wakeup_preempt(cpu, t);
        }
    }

    /// `ttwu_runnable()` for a delayed task: it is still queued where it
    /// blocked, so it wakes there, with no `select_task_rq()`:
    /// `requeue_delayed_entity()` (DELAY_ZERO: a positive lag is dropped
    /// and the task placed again at the average) and `wakeup_preempt()`.
    pub(super) fn requeue_delayed(&mut self, t: usize) {
        let cpu = self.tasks[t].cpu;
        let old = self.nr(cpu);
        self.pelt_sync_rq(cpu);
        self.pelt_sync_task(t);
        if self.update_entity_lag(cpu, t) > 0 {
            let rq = &mut self.rqs[cpu as usize];
            if let Some(i) = rq.queue.iter().position(|&x| x == t) {
                rq.queue.remove(i);
            }
            self.tasks[t].vlag = 0;
            self.place_entity(cpu, t, false);
            self.rqs[cpu as usize].queue.push(t);
        }
        self.tasks[t].delayed = false;
        self.tasks[t].state = State::Runnable;
        let rq = &mut self.rqs[cpu as usize];
        rq.nr_delayed = rq.nr_delayed.saturating_sub(1);
        self.nr_changed(cpu, old);
        self.tasks[t].wakeups += 1;
        self.trace(&[4, t as u64, u64::from(cpu)]);
        self.wakeup_preempt(cpu, t);
    }
}
