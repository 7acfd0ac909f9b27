// SPDX-License-Identifier: GPL-2.0

//! The workloads' tasks as the simulated kernel sees them: their
//! creation and placement at fork, their CPU bursts, the syscalls that
//! end them (block, sleep, send to a peer) and message delivery, which
//! wakes the receiver. What each workload does is `workload.rs`.

use super::*;

impl Sim {
    pub(super) fn new_task(&mut self, kind: Kind) -> usize {
        let t = Task {
            kind,
            state: State::Blocked,
            cpu: 0,
            vruntime: 0,
            deadline: 0,
            vlag: 0,
            delayed: false,
            weight: NICE_0_LOAD,
            work_ns: 0,
            burst_left_ns: 0,
            refill_ns: 0,
            exec_start_ns: 0,
            migrated: false,
            attach_at_enqueue: false,
            load: Pelt::entity(0, NICE_0_LOAD, NICE_0_LOAD),
            util: Pelt::new(0, CAPACITY / 2),
            migrations: 0,
            wakeups: 0,
            last_wakee: None,
            wakee_flips: 0,
            wakee_flip_decay_jiffies: 0,
            recent_used_cpu: 0,
            inbox: 0,
            phase: Phase::Work,
            next_rx: 0,
            waiting_on: None,
            waiters: Vec::new(),
            pinned: None,
            msgs_left: u64::MAX,
        };
        let id = self.tasks.len();
        self.tasks.push(t);
        self.task_rng
            .push(Rng::stream(self.cfg.seed, Purpose::Task, id as u64));
        self.task_draws.push(Vec::new());
        id
    }

    /// `base_ns` jittered by `pct` percent, from task `t`'s own stream:
    /// the k-th draw of a task is the same whatever the flags did to the
    /// schedule before it.
    pub(super) fn task_jitter_ns(&mut self, t: usize, base_ns: u64, pct: u64) -> u64 {
        let v = self.task_rng[t].jitter_ns(base_ns, pct);
        if self.cfg.record_draws {
            self.task_draws[t].push(v);
        }
        v
    }

    /// Creates the workload's tasks and places the runnable ones as
    /// `sched_balance_find_dst_cpu()` would at fork: on the least loaded
    /// CPU, idle cores first, lowest number on ties.
    pub(super) fn spawn_tasks(&mut self) {
        let parts = self.cfg.workload.parts.clone();
        let mut runnable = Vec::new();
        let mut scripts = None;
        for p in parts {
            match p {
                Part::Replay { scripts: s } => scripts = Some(s),
                Part::Fairness { n } => {
                    for _ in 0..n {
                        let t = self.new_task(Kind::Always);
                        self.tasks[t].burst_left_ns = u64::MAX;
                        runnable.push(t);
                    }
                }
                Part::Periodic {
                    n,
                    run_us,
                    sleep_us,
                } => {
                    for _ in 0..n {
                        let t = self.new_task(Kind::Periodic {
                            run_ns: run_us * 1000,
                            sleep_ns: sleep_us * 1000,
                        });
                        let b = self.task_jitter_ns(t, run_us * 1000, 10);
                        self.tasks[t].burst_left_ns = b;
                        runnable.push(t);
                    }
                }
                Part::Buddy {
                    pairs,
                    work_ns,
                    overlap_us,
                } => {
                    for _ in 0..pairs {
                        let a = self.tasks.len();
                        let b = a + 1;
                        let pair = self.buddy_split.len();
                        for (me, other) in [(a, b), (b, a)] {
                            let t = self.new_task(Kind::Buddy {
                                pair,
                                partner: other,
                                work_ns,
                                overlap_ns: overlap_us * 1000,
                            });
                            debug_assert_eq!(t, me);
                        }
                        self.tasks[a].burst_left_ns = work_ns;
                        runnable.push(a);
                        self.buddy_split.push(false);
                    }
                }
                Part::Hackbench {
                    groups,
                    fds,
                    send_us,
                    recv_us,
                    queue,
                    loops,
                } => {
                    // hackbench -l: `loops` messages from each sender to
                    // each receiver of its group.
                    let msgs = match loops {
                        0 => u64::MAX,
                        l => u64::from(l).saturating_mul(u64::from(fds)),
                    };
                    for _ in 0..groups {
                        let first_rx = self.tasks.len();
                        for _ in 0..fds {
                            let t = self.new_task(Kind::Receiver {
                                recv_ns: recv_us * 1000,
                            });
                            self.tasks[t].msgs_left = msgs;
                        }
                        for i in 0..fds {
                            let t = self.new_task(Kind::Sender {
                                first_rx,
                                nr_rx: fds as usize,
                                send_ns: send_us * 1000,
                                queue,
                            });
                            self.tasks[t].next_rx = i as usize % fds as usize;
                            self.tasks[t].msgs_left = msgs;
                            self.tasks[t].burst_left_ns =
                                self.task_jitter_ns(t, send_us * 1000, 20);
                            runnable.push(t);
                        }
                    }
                    if loops > 0 {
                        self.hb_live = self
                            .hb_live
                            .saturating_add(groups.saturating_mul(fds).saturating_mul(2));
                    }
                }
            }
        }
        for t in runnable {
            self.fork_place(t);
        }
        // The machine has been running this mix for a while: signals
        // start at their inputs instead of ramping up from 0.
        for c in 0..self.cfg.topology.nr_cpus {
            let w = self.runnable_weight(c);
            let running = if self.rqs[c as usize].curr.is_some() {
                CAPACITY
            } else {
                0
            };
            self.rqs[c as usize].load = Pelt::new(0, w);
            self.rqs[c as usize].util = Pelt::new(0, running);
        }
        // Blocked tasks start spread over the CPUs, so the first wakeup
        // has a sensible `prev`.
        for t in 0..self.tasks.len() {
            if self.tasks[t].state == State::Blocked {
                self.tasks[t].cpu = (t as u32) % self.cfg.topology.nr_cpus;
                self.tasks[t].recent_used_cpu = self.tasks[t].cpu;
            }
        }
        if let Some(s) = scripts {
            self.spawn_scripts(s);
        }
    }

    pub(super) fn fork_cpu(&self) -> u32 {
        let topo = &self.cfg.topology;
        let mut best = 0u32;
        let mut best_key = (u32::MAX, u32::MAX);
        for c in 0..topo.nr_cpus {
            let core_busy = topo.smt_mask[c as usize]
                .iter()
                .map(|s| self.nr_running(s))
                .sum::<u32>();
            let key = (self.nr_running(c), core_busy);
            if key < best_key {
                best_key = key;
                best = c;
            }
        }
        best
    }

    /// (Re)arms the burst-end event of the running task.
    pub(crate) fn arm_burst(&mut self, cpu: u32) {
        let rq = &mut self.rqs[cpu as usize];
        rq.gen = rq.gen.wrapping_add(1);
        let gen = rq.gen;
        let Some(t) = rq.curr else { return };
        let task = &self.tasks[t];
        if task.burst_left_ns == u64::MAX {
            return;
        }
        let at = self
            .now_ns
            .saturating_add(rq.overhead_ns)
            .saturating_add(task.refill_ns)
            .saturating_add(task.burst_left_ns);
        self.push(at, Ev::BurstEnd { cpu, gen });
    }

    /// A burst finished: the running task enters the kernel to send,
    /// receive or sleep. A wakeup it causes on its own CPU that should
    /// preempt it only sets `need_resched`, acted on when it returns to
    /// user space, if it has not blocked by then.
    pub(super) fn burst_end(&mut self, cpu: u32) {
        let outer = self.syscall_cpu.replace(cpu);
        self.burst_end_syscall(cpu);
        self.syscall_cpu = outer;
        if self.rqs[cpu as usize].need_resched && self.rqs[cpu as usize].curr.is_some() {
            self.resched(cpu);
        }
    }

    /// What the task does in the kernel at the end of its burst.
    pub(super) fn burst_end_syscall(&mut self, cpu: u32) {
        self.account(cpu);
        let Some(t) = self.rqs[cpu as usize].curr else {
            return;
        };
        if self.tasks[t].burst_left_ns > 0 {
            self.arm_burst(cpu);
            return;
        }
        match self.tasks[t].kind {
            Kind::Scripted { id } => self.script_step(cpu, t, id),
            Kind::Always => {
                self.tasks[t].burst_left_ns = u64::MAX;
            }
            Kind::Periodic { run_ns, sleep_ns } => {
                let s = self.task_jitter_ns(t, sleep_ns, 10);
                self.tasks[t].burst_left_ns = self.task_jitter_ns(t, run_ns, 10);
                self.push(self.now_ns + s, Ev::TimerWake { task: t });
                self.block_curr(cpu, State::Sleeping);
            }
            Kind::Buddy {
                partner,
                work_ns,
                overlap_ns,
                ..
            } => match self.tasks[t].phase {
                Phase::Work => {
                    self.stats.messages += 1;
                    self.deliver(t, partner, cpu);
                    self.tasks[t].phase = Phase::Overlap;
                    self.tasks[t].burst_left_ns = overlap_ns.max(1);
                    self.arm_burst(cpu);
                }
                Phase::Overlap => {
                    self.tasks[t].phase = Phase::Work;
                    self.tasks[t].burst_left_ns = work_ns;
                    if self.tasks[t].inbox > 0 {
                        self.tasks[t].inbox -= 1;
                        self.arm_burst(cpu);
                    } else {
                        self.block_curr(cpu, State::Blocked);
                    }
                }
            },
            Kind::Sender {
                first_rx,
                nr_rx,
                send_ns,
                queue,
            } => {
                let rx = first_rx + self.tasks[t].next_rx;
                if self.tasks[rx].inbox >= queue {
                    self.tasks[t].waiting_on = Some(rx);
                    self.tasks[rx].waiters.push(t);
                    self.block_curr(cpu, State::Blocked);
                    return;
                }
                self.tasks[t].next_rx = (self.tasks[t].next_rx + 1) % nr_rx.max(1);
                self.tasks[t].burst_left_ns = self.task_jitter_ns(t, send_ns, 20);
                self.deliver(t, rx, cpu);
                if self.count_message(t) {
                    self.hb_exit(cpu);
                    return;
                }
                self.arm_burst(cpu);
            }
            Kind::Receiver { recv_ns } => {
                self.stats.messages += 1;
                // Its last message read: every sender of the group has
                // written all of its, so none waits on this one.
                if self.count_message(t) {
                    self.hb_exit(cpu);
                    return;
                }
                if let Some(s) =
                    (!self.tasks[t].waiters.is_empty()).then(|| self.tasks[t].waiters.remove(0))
                {
                    self.tasks[s].waiting_on = None;
                    self.tasks[s].burst_left_ns = 0;
                    self.wake(s, Some((cpu, t)), true);
                }
                if self.tasks[t].inbox > 0 {
                    self.tasks[t].inbox -= 1;
                    self.tasks[t].burst_left_ns = self.task_jitter_ns(t, recv_ns, 20);
                    self.arm_burst(cpu);
                } else {
                    self.block_curr(cpu, State::Blocked);
                }
            }
        }
    }

    /// One message of a finite hackbench task written or read: true when
    /// it was its last.
    fn count_message(&mut self, t: usize) -> bool {
        let left = &mut self.tasks[t].msgs_left;
        if *left == u64::MAX {
            return false;
        }
        *left = left.saturating_sub(1);
        *left == 0
    }

    /// The running hackbench task on `cpu` exits: it blocks for good, and
    /// the last one to go ends the run.
    fn hb_exit(&mut self, cpu: u32) {
        self.hb_live = self.hb_live.saturating_sub(1);
        if self.hb_live == 0 {
            self.ended_ns = Some(self.now_ns);
        }
        self.block_curr(cpu, State::Blocked);
    }

    /// A message from `from` (running on `cpu`) to `to`.
    pub(super) fn deliver(&mut self, from: usize, to: usize, cpu: u32) {
        let xcost = {
            let topo = &self.cfg.topology;
            self.cost.message_ns(topo, cpu, self.tasks[to].cpu)
        };
        self.tasks[to].refill_ns = self.tasks[to].refill_ns.saturating_add(xcost);
        if self.tasks[to].state == State::Blocked {
            match self.tasks[to].kind {
                Kind::Buddy { work_ns, .. } => {
                    self.tasks[to].burst_left_ns = work_ns;
                    self.tasks[to].phase = Phase::Work;
                }
                Kind::Receiver { recv_ns } => {
                    self.tasks[to].burst_left_ns = self.task_jitter_ns(to, recv_ns, 20);
                }
                _ => {}
            }
            self.wake(to, Some((cpu, from)), true);
        } else {
            self.tasks[to].inbox = self.tasks[to].inbox.saturating_add(1);
        }
    }
}
