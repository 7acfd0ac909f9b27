// SPDX-License-Identifier: GPL-2.0

//! Replayed tasks and the run's record (issue 32's replay).
//!
//! A `Kind::Scripted` task runs its script (`crate::replay::script`): each
//! `Run` is a CPU burst through the model's usual burst machinery, so
//! preemption, wakeup placement and every balancer act on it as on any
//! task; `Wake` goes through `try_to_wake_up()`'s model (`wakeup.rs`),
//! `Fork` through fork placement, as `wake_up_new_task()` does. A wake of
//! a task that is not blocked on it is kept as a token its next `Block`
//! takes.
//!
//! The recorder writes what the run did as the guest's trace events say
//! it (`sched_switch`, `sched_waking`, `sched_wakeup(_new)`,
//! `sched_migrate_task`, `sched_process_fork/exit`), with pid = task
//! index + 1 (0 is idle), so that `crate::replay::metrics` measures the
//! model's run as it measures the guest's; and its ticks and periodic
//! balances as the guest's function tracer records `sched_tick()` and
//! `sched_balance_softirq()` (`trace::TICK`, `trace::TICK_BALANCE`).

use super::*;
use crate::replay::script::{Op, Script, Start};
use crate::replay::trace::{Call, Ctx, Ev as TEv, Event, TICK, TICK_BALANCE};

/// Where each script stands.
#[derive(Default)]
pub(super) struct Replay {
    /// The scripts.
    pub(super) scripts: Rc<Vec<Script>>,
    /// Task index of each script.
    pub(super) task: Vec<usize>,
    /// Next op of each script.
    pc: Vec<usize>,
    /// Wakes received and not yet taken by a `Block`.
    tokens: Vec<u32>,
    /// Blocked in a `Block`, waiting for a wake.
    waiting: Vec<bool>,
    /// Ran its `Exit` (or ran out of ops).
    exited: Vec<bool>,
    /// When a script last blocked in a `Block`, ns.
    last_block_ns: u64,
    /// `Script::timer_due_ns` of each script (`Config::timer_turn`).
    timer_due_ns: Vec<Option<u64>>,
    /// The timer sleep each script is in (`Config::timer_turn`), None
    /// once its timer has been handled.
    timers: Vec<Option<TimerSleep>>,
}

/// A replayed task's timer sleep under `Config::timer_turn`.
///
/// # Invariants
///
/// `due_ns <= end_ns`.
#[derive(Clone, Copy, Debug)]
struct TimerSleep {
    /// From here its timer has fired and waits for the vCPU's turn.
    due_ns: u64,
    /// Its recorded end, when its `Ev::TimerWake` comes.
    end_ns: u64,
}

/// The run's events (only with `cfg.record_events`).
pub(super) struct Recorder {
    pub(super) events: Vec<Event>,
    /// Function entries, as the guest's function tracer records them.
    pub(super) calls: Vec<Call>,
    /// pid each CPU runs as the record has it (0: idle).
    cur: Vec<u32>,
    /// The state its last switch-out will show: `R` preempted, `S`
    /// blocked, `X` exited.
    pub(super) prev_state: Vec<char>,
}

impl Recorder {
    pub(super) fn new(nr_cpus: u32) -> Self {
        Self {
            events: Vec::new(),
            calls: Vec::new(),
            cur: vec![0; nr_cpus as usize],
            prev_state: vec!['R'; nr_cpus as usize],
        }
    }
}

fn pid(t: usize) -> u32 {
    u32::try_from(t).unwrap_or(u32::MAX - 1).saturating_add(1)
}

impl Sim {
    fn rec(&mut self, cpu: u32, ev: TEv) {
        if self.cfg.record_events {
            self.recorder.events.push(Event {
                ts_ns: self.now_ns,
                cpu,
                ev,
            });
        }
    }

    /// `sched_tick()` on `cpu`, as the guest's function tracer logs it
    /// (from `update_process_times()`).
    pub(super) fn rec_tick(&mut self, cpu: u32) {
        self.rec_call(cpu, TICK, "update_process_times");
    }

    /// `sched_balance_softirq()` on `cpu`: its periodic balance, as the
    /// guest's function tracer logs it (from `handle_softirqs()`).
    pub(super) fn rec_tick_balance(&mut self, cpu: u32) {
        self.rec_call(cpu, TICK_BALANCE, "handle_softirqs");
    }

    fn rec_call(&mut self, cpu: u32, func: &str, caller: &str) {
        if self.cfg.record_events {
            let after = self.recorder.events.len();
            self.recorder.calls.push(Call {
                ts_ns: self.now_ns,
                cpu,
                func: func.into(),
                caller: caller.into(),
                after,
            });
        }
    }

    /// `cpu` now runs task `t` (None: idle): a `sched_switch` if that is
    /// news to the record.
    pub(super) fn rec_switch(&mut self, cpu: u32, t: Option<usize>) {
        if !self.cfg.record_events {
            return;
        }
        let next = t.map_or(0, pid);
        let c = cpu as usize;
        let prev = self.recorder.cur[c];
        if prev == next {
            return;
        }
        let st = if prev == 0 {
            'R'
        } else {
            self.recorder.prev_state[c]
        };
        self.recorder.cur[c] = next;
        self.recorder.prev_state[c] = 'R';
        self.rec(
            cpu,
            TEv::Switch {
                prev,
                prev_state: st,
                next,
            },
        );
    }

    /// The running task of `cpu` leaves it in state `st` (the record's
    /// next switch shows it).
    pub(super) fn rec_leaves(&mut self, cpu: u32, st: char) {
        if self.cfg.record_events {
            self.recorder.prev_state[cpu as usize] = st;
        }
    }

    /// `sched_waking` on the waker's CPU.
    pub(super) fn rec_waking(&mut self, t: usize, waker_cpu: u32, by_task: bool) {
        let prev_cpu = self.tasks[t].cpu;
        let ctx = if by_task { Ctx::Task } else { Ctx::Hardirq };
        self.rec(
            waker_cpu,
            TEv::Waking {
                pid: pid(t),
                prev_cpu,
                ctx,
            },
        );
    }

    /// `sched_migrate_task`, logged by `on`, the CPU that moves it, as
    /// the guest's trace logs it: a wakeup's by the waking CPU, a pull's
    /// by the puller, an active balance's by the stopper on `orig`. A task
    /// the record still has running on `orig` (active balance puts the
    /// running task back and may move it, leaving `orig` idle without
    /// `go_idle()`) is switched out there first, as the kernel's stopper
    /// thread would have switched it out.
    pub(super) fn rec_migrate(&mut self, t: usize, orig: u32, dest: u32, on: u32) {
        if !self.cfg.record_events {
            return;
        }
        if self.recorder.cur[orig as usize] == pid(t) {
            self.recorder.prev_state[orig as usize] = 'R';
            self.rec_switch(orig, None);
        }
        self.rec(
            on,
            TEv::Migrate {
                pid: pid(t),
                orig,
                dest,
            },
        );
    }

    /// `sched_wakeup`, logged by `on`, the CPU that enqueues the task:
    /// the waking CPU, or the target taking its wake list.
    pub(super) fn rec_wakeup(&mut self, t: usize, target: u32, on: u32) {
        self.rec(
            on,
            TEv::Wakeup {
                pid: pid(t),
                target,
            },
        );
    }

    /// Creates the tasks of `scripts`; those that start at a time sleep
    /// until it, on the CPU the trace had them on.
    pub(super) fn spawn_scripts(&mut self, scripts: Rc<Vec<Script>>) {
        let first = self.tasks.len();
        for (id, s) in scripts.iter().enumerate() {
            let t = self.new_task(Kind::Scripted { id });
            debug_assert_eq!(t, first + id);
            self.tasks[t].wakee_flips = s.wakee_flips;
            self.replay.task.push(t);
            self.replay.pc.push(0);
            self.replay.tokens.push(0);
            self.replay.waiting.push(false);
            self.replay.exited.push(false);
            self.replay.timer_due_ns.push(s.timer_due_ns());
            self.replay.timers.push(None);
            let comm = if s.comm.is_empty() {
                "task".to_string()
            } else {
                s.comm.clone()
            };
            self.rec(0, TEv::Name { pid: pid(t), comm });
        }
        let nr = self.cfg.topology.nr_cpus.max(1);
        for (id, s) in scripts.iter().enumerate() {
            let t = first + id;
            self.tasks[t].pinned = s.pin.filter(|&p| p < nr);
            if let Start::At { ns, cpu } = s.start {
                let cpu = self.tasks[t].pinned.unwrap_or(cpu % nr);
                self.tasks[t].cpu = cpu;
                self.tasks[t].recent_used_cpu = cpu;
                self.tasks[t].state = State::Sleeping;
                self.attach_signals(t, cpu);
                // A start is no sleep: its timer fires when it says.
                self.replay.timers[id] = Some(TimerSleep {
                    due_ns: ns,
                    end_ns: ns,
                });
                self.push(ns, Ev::TimerWake { task: t });
            }
        }
        self.replay.scripts = scripts;
    }

    /// When a replay that did not end got stuck: every script that has
    /// not exited waits in a `Block` for a wake no script is left to give,
    /// and one of them has ops after it. Replay keeps a wake that finds its
    /// wakee not yet blocked as a token for its next block (replay's
    /// one-way loss, `schedsim.rst`); when that token went to another
    /// block than the recorded one, two scripts can end up each waiting
    /// for the other. A trace that ends with its tasks blocked leaves them
    /// waiting with nothing after: that is its end, not this. The time is
    /// the last block's, where the run's events stop.
    pub(super) fn replay_stuck_ns(&self) -> Option<u64> {
        if !self.replay_quiet() {
            return None;
        }
        let r = &self.replay;
        let work_left =
            (0..r.exited.len()).any(|i| !r.exited[i] && r.pc[i] < r.scripts[i].ops.len());
        work_left.then_some(r.last_block_ns)
    }

    /// Whether the replay has fallen quiet: it has scripts, and every
    /// one that has not exited waits in a `Block`. Only a script's `Wake`
    /// ends a block, so nothing of the replay can happen again; the run
    /// stops there (a trace cut at a full buffer, or ending with tasks
    /// blocked, leaves them so), as it does at the last `Exit`: CPUs
    /// idling on after it would count balances (schedstat) the guest's
    /// record does not cover.
    pub(super) fn replay_quiet(&self) -> bool {
        let r = &self.replay;
        !r.exited.is_empty() && (0..r.exited.len()).all(|i| r.exited[i] || r.waiting[i])
    }

    /// Whether sleeping task `t`'s timer event at `at_ns` wakes it now
    /// (`Config::timer_turn`). Its sleep's timer may have been handled
    /// at a turn already ([`Self::timers_at_turn`]): then the event is
    /// that sleep's and is dropped. A timer whose idle CPU waits for the
    /// wake list's IPI waits with it for the turn.
    pub(super) fn timer_fires(&mut self, t: usize, at_ns: u64) -> bool {
        if !self.cfg.timer_turn {
            return true;
        }
        let Kind::Scripted { id } = self.tasks[t].kind else {
            return true;
        };
        match self.replay.timers.get(id).copied().flatten() {
            // Handled at a turn already; its wakee may still be on its
            // way, on a wake list, and sleeping until it is enqueued.
            None => false,
            // An earlier sleep's, handled at a turn.
            Some(sleep) if sleep.end_ns != at_ns => false,
            Some(_) => {
                let rq = &self.rqs[self.tasks[t].cpu as usize];
                if rq.curr.is_none() && !rq.wake_list.is_empty() {
                    return false;
                }
                self.replay.timers[id] = None;
                true
            }
        }
    }

    /// The replayed timers of `cpu` that the wake list's IPI, just
    /// taken, brings in (`Config::timer_turn`): those whose recorded end
    /// came while the IPI waited ([`Self::timer_fires`]), and, if the IPI
    /// gave an `idle` vCPU its turn, those that fell due before it. Each
    /// wakes its task now, in the order they fell due, from the CPU the
    /// IPI's wakees have just made busy.
    pub(super) fn timers_at_turn(&mut self, cpu: u32, idle: bool) {
        let now = self.now_ns;
        let mut due: Vec<(u64, usize)> = (0..self.replay.timers.len())
            .filter_map(|id| {
                let sleep = self.replay.timers[id]?;
                let t = *self.replay.task.get(id)?;
                let task = &self.tasks[t];
                let fired = sleep.end_ns <= now || (idle && sleep.due_ns <= now);
                (fired && task.cpu == cpu && task.state == State::Sleeping)
                    .then_some((sleep.due_ns, id))
            })
            .collect();
        due.sort_unstable();
        for (_, id) in due {
            self.replay.timers[id] = None;
            self.wake(self.replay.task[id], None, false);
        }
    }

    /// `wake_up_new_task()`: places forked task `t` as the workloads' first
    /// tasks are placed, and lets it preempt.
    pub(super) fn fork_place(&mut self, t: usize) {
        let cpu = self.fork_cpu();
        self.fork_place_on(t, cpu);
    }

    /// `fork_place()` onto a CPU already chosen.
    fn fork_place_on(&mut self, t: usize, cpu: u32) {
        self.tasks[t].cpu = cpu;
        self.tasks[t].recent_used_cpu = cpu;
        // wake_up_new_task(): ENQUEUE_INITIAL, then WF_FORK preemption.
        self.update_curr(cpu);
        self.place_entity(cpu, t, true);
        self.attach_signals(t, cpu);
        self.enqueue(cpu, t);
        if self.rqs[cpu as usize].curr.is_none() {
            // resched_curr()'s IPI to the idle CPU, slow under TCG
            // (`CostModel::fork_idle_ns`); the child is queued meanwhile.
            if self.cost.fork_idle_ns > 0 {
                let wait_ns = self.latency_ns(|s| &s.fork_idle_ns, self.cost.fork_idle_ns);
                self.push(self.now_ns.saturating_add(wait_ns), Ev::IdlePick { cpu });
            } else {
                self.pick_next(cpu);
            }
        } else {
            self.wakeup_preempt(cpu, t);
        }
    }

    /// Runs script `id` of task `t`, on `cpu`, from where it stands until
    /// it runs, blocks, sleeps or exits.
    pub(super) fn script_step(&mut self, cpu: u32, t: usize, id: usize) {
        loop {
            let pc = self.replay.pc[id];
            let op = self.replay.scripts[id]
                .ops
                .get(pc)
                .copied()
                .unwrap_or(Op::Exit);
            self.replay.pc[id] = pc.saturating_add(1);
            match op {
                Op::Run(ns) => {
                    if ns == 0 {
                        continue;
                    }
                    self.tasks[t].burst_left_ns = ns;
                    self.arm_burst(cpu);
                    return;
                }
                Op::Block => {
                    if self.replay.tokens[id] > 0 {
                        self.replay.tokens[id] -= 1;
                        continue;
                    }
                    self.replay.waiting[id] = true;
                    self.replay.last_block_ns = self.now_ns;
                    self.block_curr(cpu, State::Blocked);
                    if self.replay_quiet() {
                        self.quiet_ns = Some(self.now_ns);
                    }
                    return;
                }
                Op::Sleep(ns) => {
                    let end_ns = self.now_ns.saturating_add(ns);
                    if self.cfg.timer_turn {
                        let due_ns = self.replay.timer_due_ns[id]
                            .map_or(end_ns, |d| self.now_ns.saturating_add(d).min(end_ns));
                        self.replay.timers[id] = Some(TimerSleep { due_ns, end_ns });
                    }
                    self.push(end_ns, Ev::TimerWake { task: t });
                    self.block_curr(cpu, State::Sleeping);
                    return;
                }
                Op::Wake(j) => {
                    let Some(&u) = self.replay.task.get(j) else {
                        continue;
                    };
                    if self.replay.waiting[j] && self.tasks[u].state == State::Blocked {
                        self.replay.waiting[j] = false;
                        self.tasks[u].burst_left_ns = 0;
                        self.wake(u, Some((cpu, t)), self.replay.scripts[id].sync_wakes);
                    } else {
                        // Where the wakee is when the guest's wakee had
                        // already blocked: how far the model's schedule
                        // runs behind the guest's (`schedsim replay`).
                        let n = match self.tasks[u].state {
                            State::Runnable => &mut self.stats.replay_wakes_queued,
                            State::Running => &mut self.stats.replay_wakes_running,
                            State::Sleeping | State::Blocked => &mut self.stats.replay_wakes_other,
                        };
                        *n = n.saturating_add(1);
                        self.replay.tokens[j] = self.replay.tokens[j].saturating_add(1);
                    }
                }
                Op::Fork(j) => {
                    let Some(&c) = self.replay.task.get(j) else {
                        continue;
                    };
                    if self.tasks[c].state != State::Blocked || self.replay.pc[j] != 0 {
                        continue;
                    }
                    self.tasks[c].burst_left_ns = 0;
                    // dup_task_struct() copies the parent's record_wakee()
                    // state, and nothing resets it: a child that never
                    // wakes another keeps its parent's flips.
                    let (flips, last, decay) = {
                        let p = &self.tasks[t];
                        (p.wakee_flips, p.last_wakee, p.wakee_flip_decay_jiffies)
                    };
                    let child = &mut self.tasks[c];
                    child.wakee_flips = flips;
                    child.last_wakee = last;
                    child.wakee_flip_decay_jiffies = decay;
                    self.rec(
                        cpu,
                        TEv::Fork {
                            parent: pid(t),
                            child: pid(c),
                        },
                    );
                    // wake_up_new_task() sets the CPU with __set_task_cpu(),
                    // which traces no sched_migrate_task: neither does this.
                    // Its sched_wakeup_new comes before the switch to it.
                    // Where the trace forked it, when it says.
                    let traced = match self.replay.scripts[j].start {
                        Start::Forked { cpu: Some(f) } if f < self.cfg.topology.nr_cpus => Some(f),
                        _ => None,
                    };
                    let dest = self.tasks[c]
                        .pinned
                        .or(traced)
                        .unwrap_or_else(|| self.fork_cpu());
                    self.rec(
                        dest,
                        TEv::WakeupNew {
                            pid: pid(c),
                            target: dest,
                        },
                    );
                    self.fork_place_on(c, dest);
                }
                Op::Exit => {
                    self.replay.exited[id] = true;
                    self.rec(cpu, TEv::Exit { pid: pid(t) });
                    self.rec_leaves(cpu, 'X');
                    self.block_curr(cpu, State::Blocked);
                    // task_dead_fair(): its signals leave its last CPU's.
                    self.detach_signals(t, cpu);
                    // The run ends with its last script, as the guest's
                    // trace does: idle CPUs balancing on after it would
                    // count in schedstat what the guest never ran.
                    if self.replay.exited.iter().all(|&e| e) {
                        self.ended_ns = Some(self.now_ns);
                    } else if self.replay_quiet() {
                        self.quiet_ns = Some(self.now_ns);
                    }
                    return;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::Workload;

    /// Two always-running tasks put on CPU 0 of qemu8, pinned there or
    /// not, then 200 ticks of balancing.
    fn two_on_cpu0(pinned: bool) -> Sim {
        let topo = Topology::preset("qemu8").unwrap();
        let cfg = Config::new(
            topo,
            Workload::parse("fairness:2").unwrap(),
            1,
            1_000_000_000,
        );
        let mut s = Sim::new(cfg);
        for t in 0..2 {
            if pinned {
                s.tasks[t].pinned = Some(0);
            }
            let c = s.tasks[t].cpu;
            if c != 0 {
                s.block_curr(c, State::Sleeping);
                s.tasks[t].cpu = 0;
                // A wake that wants CPU 0: pinned, it gets it; else
                // placement may choose, so put it there by hand.
                s.wake(t, None, false);
                if s.tasks[t].cpu != 0 {
                    let cur = s.tasks[t].cpu;
                    if s.rqs[cur as usize].curr == Some(t) {
                        s.block_curr(cur, State::Sleeping);
                        s.tasks[t].cpu = 0;
                        s.activate(t, 0);
                    }
                }
            }
        }
        s.stats.migrations = 0;
        for _ in 0..200 {
            s.tick();
            s.now_ns += s.tick_ns;
        }
        s
    }

    /// A script of `ops` that starts as `start`, with the shell's
    /// `wakee_flips`.
    fn script(start: Start, wakee_flips: u32, ops: Vec<Op>) -> Script {
        Script {
            pid: 0,
            comm: String::new(),
            start,
            pin: None,
            kthread: false,
            sync_wakes: true,
            wakee_flips,
            ops,
        }
    }

    /// A root script on CPU 0 that forks script 1 onto CPU 1, then runs
    /// 1 ms; the root starts with `flips`, the child does `child_ops`.
    fn fork_onto_cpu1(flips: u32, child_ops: Vec<Op>) -> Sim {
        sim_of(vec![
            script(
                Start::At { ns: 0, cpu: 0 },
                flips,
                vec![Op::Fork(1), Op::Run(1_000_000)],
            ),
            script(Start::Forked { cpu: Some(1) }, 0, child_ops),
        ])
    }

    /// `scripts` replayed on qemu8, for 1 s at most.
    fn sim_of(scripts: Vec<Script>) -> Sim {
        let scripts = Rc::new(scripts);
        let workload = Workload {
            parts: vec![crate::workload::Part::Replay { scripts }],
            text: "replay".into(),
        };
        let cfg = Config::new(
            Topology::preset("qemu8").unwrap(),
            workload,
            1,
            1_000_000_000,
        );
        Sim::new(cfg)
    }

    /// `Config::timer_turn`: a sleeper on CPU 2 (asleep from about 10
    /// us for 400 us, its timer due `due_us` in) and a wakee blocked there,
    /// which a task on CPU 0 wakes at about 200 us through the wake list,
    /// its IPI `ipi_us` later. Returns the sleeper's timer wakeup,
    /// `sched_waking`'s time and `sched_wakeup`'s CPU, and the time the
    /// IPI enqueued the wakee (its `sched_wakeup`), us.
    fn timer_beside_an_ipi(timer_turn: bool, ipi_us: u64, due_us: u64) -> (u64, u32, u64) {
        let mut s = sim_of(vec![
            script(
                Start::At { ns: 0, cpu: 2 },
                0,
                vec![
                    Op::Run(10_000),
                    Op::Sleep(400_000),
                    Op::Run(10_000),
                    Op::Exit,
                ],
            ),
            script(
                Start::At { ns: 0, cpu: 0 },
                0,
                vec![Op::Run(200_000), Op::Wake(2), Op::Run(300_000), Op::Exit],
            ),
            script(
                Start::At { ns: 20_000, cpu: 2 },
                0,
                vec![Op::Block, Op::Run(20_000), Op::Exit],
            ),
        ]);
        s.cfg.timer_turn = timer_turn;
        s.cost.wake_list_ns = ipi_us * 1000;
        s.cfg.record_events = true;
        // As `Script::timer_due_ns` reads it off a run's sleeps.
        s.replay.timer_due_ns[0] = Some(due_us * 1000);
        let (sleeper, wakee) = (pid(s.replay.task[0]), pid(s.replay.task[2]));
        let (_, events, _) = s.run_recorded();
        // Each one's first wakeup is its start, the second the one wanted.
        let second = |want: u32, waking: bool| {
            events
                .iter()
                .filter(|e| match e.ev {
                    TEv::Waking { pid, .. } => waking && pid == want,
                    TEv::Wakeup { pid, .. } => !waking && pid == want,
                    _ => false,
                })
                .nth(1)
                .unwrap()
        };
        let TEv::Wakeup { target, .. } = second(sleeper, false).ev else {
            unreachable!()
        };
        (
            second(sleeper, true).ts_ns / 1000,
            target,
            second(wakee, false).ts_ns / 1000,
        )
    }

    /// Under TCG an idle vCPU handles all its interrupts at its one turn:
    /// a timer that fired while the wake list's IPI waited is handled at
    /// the IPI, after its wakee is enqueued, and its own wakee goes to
    /// another CPU; a timer whose end comes first waits for the IPI, and
    /// so does its wakee. On time, the sleeper wakes at its end on its
    /// own CPU, which the IPI's wakee has left by then.
    #[test]
    fn a_timer_comes_on_its_idle_vcpus_turn() {
        let (on_time_us, cpu, ipi_us) = timer_beside_an_ipi(false, 150, 100);
        assert_eq!(cpu, 2, "on time, on its own idle CPU");
        assert!(
            (350..400).contains(&ipi_us) && on_time_us > 400,
            "{ipi_us} {on_time_us}"
        );
        let (at_us, cpu, ipi_us) = timer_beside_an_ipi(true, 150, 100);
        assert_eq!(at_us, ipi_us, "handled at the IPI's turn");
        assert_ne!(cpu, 2, "its CPU is busy with the IPI's wakee");
        let (at_us, cpu, ipi_us) = timer_beside_an_ipi(true, 300, 100);
        assert!(ipi_us > on_time_us, "{ipi_us}");
        assert_eq!(at_us, ipi_us, "waits for the IPI's turn");
        assert_ne!(cpu, 2);
        // An IPI before the timer falls due is an earlier turn: the timer
        // fires at its end.
        let (at_us, cpu, ipi_us) = timer_beside_an_ipi(true, 50, 300);
        assert!(ipi_us < 300, "{ipi_us}");
        assert_eq!((at_us, cpu), (on_time_us, 2));
    }

    /// A root script starts with the flips the trace's shell had; a fork
    /// copies its parent's `record_wakee()` state (`dup_task_struct()`),
    /// as it stands at the fork, not as the script began.
    #[test]
    fn a_forked_task_inherits_its_parents_wakee_flips() {
        let mut s = fork_onto_cpu1(12, vec![Op::Block]);
        let (root, child) = (s.replay.task[0], s.replay.task[1]);
        assert_eq!(
            (s.tasks[root].wakee_flips, s.tasks[child].wakee_flips),
            (12, 0)
        );
        // The root woke others since it began.
        s.tasks[root].wakee_flips = 30;
        s.tasks[root].last_wakee = Some(child);
        s.tasks[root].wakee_flip_decay_jiffies = 7;
        s.wake(root, None, false);
        let cpu = s.tasks[root].cpu;
        assert_eq!(s.rqs[cpu as usize].curr, Some(root));
        s.script_step(cpu, root, 0);
        let c = &s.tasks[child];
        assert_eq!(
            (c.wakee_flips, c.last_wakee, c.wakee_flip_decay_jiffies),
            (30, Some(child), 7)
        );
    }

    /// A task's load joins its runqueue's when it starts there, as
    /// `wake_up_new_task()`'s first enqueue attaches it, and leaves it at
    /// its exit (`task_dead_fair()`): `wake_affine_weight()` takes the
    /// wakee's load off its previous CPU's, and a CPU's own tasks count
    /// in the load a balancer or a waker reads.
    #[test]
    fn a_task_load_joins_its_cpu_at_start_and_leaves_at_exit() {
        let mut s = fork_onto_cpu1(0, vec![Op::Exit]);
        let (root, child) = (s.replay.task[0], s.replay.task[1]);
        // Asleep on CPU 0 when the trace began: its load is CPU 0's.
        assert_eq!(s.cpu_load(0), s.tasks[root].load.value());
        assert!(s.cpu_load(0) > 0);
        assert_eq!(s.cpu_load(1), 0);
        s.wake(root, None, false);
        let cpu = s.tasks[root].cpu;
        s.script_step(cpu, root, 0);
        assert_eq!(s.tasks[child].cpu, 1);
        let new_load = s.tasks[child].load.value();
        assert!(new_load > 0, "a new task starts at its weight");
        assert_eq!(s.cpu_load(1), new_load);
        if s.rqs[1].curr != Some(child) {
            s.pick_next(1);
        }
        assert_eq!(s.rqs[1].curr, Some(child));
        s.script_step(1, child, 1);
        assert_eq!(s.cpu_load(1), 0, "an exited task leaves no load");
    }

    /// Two scripts that each wait for the other's wake before giving
    /// their own: the run gets stuck when the second blocks, just after it
    /// starts at 2 ms, and says so. A pair whose first wake comes before
    /// any block runs to its end; one whose scripts end in a block (a
    /// trace that stops with its tasks asleep) ends there, not stuck.
    #[test]
    fn a_replay_where_every_script_waits_says_when_it_got_stuck_and_stops() {
        let at = |ns| Start::At { ns, cpu: 0 };
        let stuck = sim_of(vec![
            script(at(1_000_000), 0, vec![Op::Block, Op::Wake(1), Op::Exit]),
            script(at(2_000_000), 0, vec![Op::Block, Op::Wake(0), Op::Exit]),
        ])
        .run();
        assert!(!stuck.ended);
        let ns = stuck.stats.replay_stuck_ns.unwrap();
        assert!((2_000_000..2_100_000).contains(&ns), "{ns}");
        // A run that fell quiet stops there, not at its 1 s: its idle CPUs
        // do not balance on for a second the record does not cover.
        assert_eq!(stuck.duration_ns, ns);
        assert!(stuck.schedstat.totals()["lb_count_idle"] < 50);
        let fine = sim_of(vec![
            script(at(1_000_000), 0, vec![Op::Block, Op::Wake(1), Op::Exit]),
            script(at(2_000_000), 0, vec![Op::Wake(0), Op::Block, Op::Exit]),
        ])
        .run();
        assert!(fine.ended);
        assert_eq!(fine.stats.replay_stuck_ns, None);
        let asleep = sim_of(vec![
            script(at(1_000_000), 0, vec![Op::Wake(1), Op::Block]),
            script(at(2_000_000), 0, vec![Op::Block]),
        ])
        .run();
        assert!(!asleep.ended);
        assert_eq!(asleep.stats.replay_stuck_ns, None);
        assert!(asleep.duration_ns < 2_100_000, "{}", asleep.duration_ns);
        // Scripts left waiting while another still has work: not quiet.
        let working = sim_of(vec![
            script(at(1_000_000), 0, vec![Op::Block]),
            script(at(1_000_000), 1, vec![Op::Run(5_000_000), Op::Block]),
        ])
        .run();
        assert!(
            (6_000_000..7_000_000).contains(&working.duration_ns),
            "{}",
            working.duration_ns
        );
    }

    #[test]
    fn a_pinned_task_stays_on_its_cpu() {
        let free = two_on_cpu0(false);
        assert!(free.stats.migrations > 0, "the balancer spreads two tasks");
        let pinned = two_on_cpu0(true);
        assert_eq!(pinned.stats.migrations, 0);
        assert!(pinned.tasks.iter().all(|t| t.cpu == 0));
    }
}
