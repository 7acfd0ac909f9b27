// SPDX-License-Identifier: GPL-2.0

//! What each of the workload's tasks did, from a guest trace, as a script
//! the model can run again: its CPU bursts, its blocks, whom it woke and
//! when in its own CPU time, whom it forked, when it slept on a timer.
//! Replaying causes rather than timestamps lets the model's placement and
//! balancing decide where and when each burst runs, as the kernel's did.
//!
//! - `Run(ns)`: CPU time the task had between two of its actions, summed
//!   over preemptions (switched out in state `R`);
//! - `Block`: switched out in any other state; it runs again once woken;
//! - `Wake(task)`: the `W` that ended another task's block, placed in the
//!   waker's script at the waker's CPU time then. A `W` in softirq
//!   context is the running task's (loopback networking delivers on the
//!   sender's way out of its syscall); one in hardirq context, or by a
//!   task not of the workload, makes the block a `Sleep` of its length;
//! - `Fork(task)`, `Exit`.
//!
//! A wake is replayed as a token: `Block` takes one if the task has one,
//! else waits. A trace's wake and block of the same task can come in
//! either order across CPUs (a `W` recorded before the `S` that blocks),
//! so a script must not deadlock on their order.

use super::metrics::{quantile, task_waker};
use super::trace::{preempted, Ev, Event};
use std::collections::{HashMap, HashSet};

/// One action.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// Runs this much CPU time, ns.
    Run(u64),
    /// Blocks until woken (or takes a pending wake).
    Block,
    /// Sleeps this long, ns (a timer wakes it).
    Sleep(u64),
    /// Wakes script `i` (or leaves it a token).
    Wake(usize),
    /// Forks script `i`.
    Fork(usize),
    /// Exits.
    Exit,
}

/// How a script starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Start {
    /// At this time after the trace's first event, woken on `cpu`.
    At {
        /// ns after the trace's start.
        ns: u64,
        /// Its CPU in the trace then.
        cpu: u32,
    },
    /// When its parent's `Fork` runs, on the CPU the trace's
    /// `sched_wakeup_new` put it on (None: the trace does not show it).
    /// The model's fork placement is not the kernel's
    /// `sched_balance_fork()`, which weighs the blocked load PELT still
    /// holds: a replay that placed hackbench's children by the model's
    /// would stack them all on one CPU, their parent's, since each blocks
    /// before the next fork, and its balancers would spread them in a
    /// burst the guest never had (`Documentation/schedsim.rst`).
    Forked {
        /// Its CPU in the trace.
        cpu: Option<u32>,
    },
}

/// One task's script.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Script {
    /// Its pid in the trace.
    pub pid: u32,
    /// Its last name.
    pub comm: String,
    /// How it starts.
    pub start: Start,
    /// The CPU a per-CPU kthread is bound to (`kworker/N:M`,
    /// `ksoftirqd/N`), None for any.
    pub pin: Option<u32>,
    /// Not the workload's: a kernel thread replayed beside it, not
    /// measured.
    pub kthread: bool,
    /// Its wakes of other tasks are `WF_SYNC` (the waker is about to
    /// sleep): a pipe's or a socket's, as hackbench's and the ping-pong's.
    /// The trace does not say; [`wakes_sync`] knows the bench's programs.
    pub sync_wakes: bool,
    /// The `wakee_flips` it starts with, if it starts `At` a time: the
    /// trace's `# wakee_flips`, the shell's that forked it (0 when the
    /// trace does not say). A `Forked` one takes its parent's at the fork,
    /// as `dup_task_struct()` copies them, and this is 0.
    pub wakee_flips: u32,
    /// What it does.
    pub ops: Vec<Op>,
}

/// Timer sleeps a script needs before [`Script::timer_due_ns`] reads a
/// length off them.
pub const TIMER_DUE_MIN_SLEEPS: usize = 20;

impl Script {
    /// How long its timer sleeps last at the least, ns: the 5th
    /// percentile of its `Sleep`s (None with fewer than
    /// [`TIMER_DUE_MIN_SLEEPS`]).
    ///
    /// A recorded sleep is the length the task asked for, its timer's
    /// slack, and then the wait for its vCPU's turn of TCG's one host
    /// thread: an idle vCPU handles its timer's interrupt only when the
    /// thread comes to it. The shortest sleeps are the ones whose turn
    /// came at once, so past this length a sleep's timer has fired and
    /// waits for the turn (`Config::timer_turn`). A low percentile, not
    /// the least, as a few sleeps end early, ended by something else
    /// than their timer (`reqresp` on numa2: 5 us against 150 us asked).
    pub fn timer_due_ns(&self) -> Option<u64> {
        let mut sleeps: Vec<u64> = self
            .ops
            .iter()
            .filter_map(|op| match *op {
                Op::Sleep(ns) => Some(ns),
                _ => None,
            })
            .collect();
        if sleeps.len() < TIMER_DUE_MIN_SLEEPS {
            return None;
        }
        sleeps.sort_unstable();
        Some(quantile(&sleeps, 1, 20))
    }
}

/// The scripts made so far, by pid.
struct Builder {
    first_ts: u64,
    index: HashMap<u32, usize>,
    scripts: Vec<Script>,
    st: Vec<Tracked>,
    forked: HashSet<u32>,
}

impl Builder {
    /// Script of pid `p`, made at its first sight (at `ts` on `cpu`).
    fn slot(&mut self, p: u32, ts: u64, cpu: u32) -> usize {
        if let Some(&i) = self.index.get(&p) {
            return i;
        }
        self.scripts.push(Script {
            pid: p,
            comm: String::new(),
            start: if self.forked.contains(&p) {
                Start::Forked { cpu: None }
            } else {
                Start::At {
                    ns: ts.saturating_sub(self.first_ts),
                    cpu,
                }
            },
            ops: Vec::new(),
            pin: None,
            kthread: false,
            sync_wakes: true,
            wakee_flips: 0,
        });
        self.st.push(Tracked::default());
        self.index.insert(p, self.scripts.len() - 1);
        self.scripts.len() - 1
    }
}

#[derive(Default)]
struct Tracked {
    running_since: Option<u64>,
    /// CPU time since its last op, ns.
    pending_ns: u64,
    /// Index in `ops` of the block a wake will make a Block or a Sleep.
    blocked: Option<(usize, u64)>,
    exiting: bool,
    seen: bool,
}

/// Whether a task of this name wakes others `WF_SYNC`: the bench's
/// programs wake through pipes and sockets (hackbench, the ping-pong and
/// stream: `sock_def_readable()` and `pipe_write()` wake sync), but
/// reqresp's threads through pthread condition variables, whose futex
/// wakes are not. Any other name: sync, as a pipe's.
pub fn wakes_sync(comm: &str) -> bool {
    comm != "reqresp"
}

/// The CPU a per-CPU kernel thread of this name is bound to: `kworker/N:M`
/// (and `kworker/N:MH`), `ksoftirqd/N`; None for any other name (an
/// unbound `kworker/uN:M` too).
pub fn percpu_kthread_cpu(comm: &str) -> Option<u32> {
    let cpu = if let Some(rest) = comm.strip_prefix("kworker/") {
        rest.split_once(':')?.0
    } else {
        comm.strip_prefix("ksoftirqd/")?
    };
    if cpu.is_empty() || !cpu.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    cpu.parse().ok()
}

/// The pids of per-CPU kernel threads, by their names.
pub fn percpu_kthread_pids(events: &[Event]) -> HashSet<u32> {
    events
        .iter()
        .filter_map(|e| match &e.ev {
            Ev::Name { pid, comm } if percpu_kthread_cpu(comm).is_some() => Some(*pid),
            _ => None,
        })
        .collect()
}

/// Extracts the scripts of the `workload` pids, in order of first sight.
pub fn extract(events: &[Event], workload: &HashSet<u32>) -> Vec<Script> {
    let first_ts = events.first().map_or(0, |e| e.ts_ns);
    let mut b = Builder {
        first_ts,
        index: HashMap::new(),
        scripts: Vec::new(),
        st: Vec::new(),
        forked: HashSet::new(),
    };
    let mut cur: HashMap<u32, u32> = HashMap::new();
    let mut names: HashMap<u32, String> = HashMap::new();
    // Wakes seen before the block they may have ended: (script, op).
    let mut tentative: HashSet<(usize, usize)> = HashSet::new();
    let mut cand: HashMap<usize, (usize, usize)> = HashMap::new();
    // Adds a running task's CPU time up to ts to its pending time.
    fn flush_time(t: &mut Tracked, ts: u64) {
        if let Some(since) = t.running_since {
            t.pending_ns = t.pending_ns.saturating_add(ts.saturating_sub(since));
            t.running_since = Some(ts);
        }
    }
    // Flushes a task's CPU time up to ts into a Run op.
    fn flush(s: &mut Script, t: &mut Tracked, ts: u64) {
        flush_time(t, ts);
        if t.pending_ns > 0 {
            s.ops.push(Op::Run(t.pending_ns));
            t.pending_ns = 0;
        }
    }
    // The waker's Wake of script i at ts, after its CPU time so far;
    // returns the op's index.
    fn wake_op(b: &mut Builder, wi: usize, i: usize, ts: u64) -> usize {
        flush(&mut b.scripts[wi], &mut b.st[wi], ts);
        b.scripts[wi].ops.push(Op::Wake(i));
        b.scripts[wi].ops.len() - 1
    }
    for e in events {
        let ts = e.ts_ns;
        match e.ev {
            Ev::Name { pid, ref comm } => {
                names.insert(pid, comm.clone());
            }
            Ev::Fork { parent, child } => {
                if !workload.contains(&child) {
                    continue;
                }
                if workload.contains(&parent) {
                    b.forked.insert(child);
                    let p = b.slot(parent, ts, e.cpu);
                    let c = b.slot(child, ts, e.cpu);
                    b.st[c].seen = true;
                    flush(&mut b.scripts[p], &mut b.st[p], ts);
                    b.scripts[p].ops.push(Op::Fork(c));
                }
            }
            Ev::Switch {
                prev,
                prev_state,
                next,
            } => {
                if workload.contains(&prev) {
                    let i = b.slot(prev, ts, e.cpu);
                    let (s, t) = (&mut b.scripts[i], &mut b.st[i]);
                    // Running since before the trace: since its start.
                    if !t.seen {
                        t.running_since.get_or_insert(first_ts);
                    }
                    t.seen = true;
                    // Its CPU time so far; a preemption only adds to it.
                    flush_time(t, ts);
                    t.running_since = None;
                    if !preempted(prev_state) {
                        flush(s, t, ts);
                        if t.exiting {
                            s.ops.push(Op::Exit);
                        } else {
                            t.blocked = Some((s.ops.len(), ts));
                            s.ops.push(Op::Block);
                        }
                    }
                }
                if workload.contains(&next) {
                    let i = b.slot(next, ts, e.cpu);
                    cand.remove(&i);
                    b.st[i].seen = true;
                    b.st[i].running_since = Some(ts);
                }
                cur.insert(e.cpu, next);
            }
            Ev::Waking { pid, ctx, .. } => {
                let Some(&i) = b.index.get(&pid) else {
                    continue;
                };
                let running = cur.get(&e.cpu).copied().unwrap_or(0);
                let wi =
                    task_waker(ctx, running, pid, workload).and_then(|w| b.index.get(&w).copied());
                let Some((at, since)) = b.st[i].blocked else {
                    // Not blocked as the trace has it so far. The CPUs'
                    // records interleave to the microsecond, so this may
                    // be the wake of a block whose switch comes next:
                    // kept tentatively, made good by a wakeup (U) that
                    // follows that block, dropped otherwise.
                    if let Some(wi) = wi {
                        let op = wake_op(&mut b, wi, i, ts);
                        tentative.insert((wi, op));
                        cand.insert(i, (wi, op));
                    }
                    continue;
                };
                b.st[i].blocked = None;
                cand.remove(&i);
                match wi {
                    Some(wi) => {
                        wake_op(&mut b, wi, i, ts);
                    }
                    None => b.scripts[i].ops[at] = Op::Sleep(ts.saturating_sub(since).max(1)),
                }
            }
            Ev::Exit { pid } => {
                if let Some(&i) = b.index.get(&pid) {
                    b.st[i].exiting = true;
                }
            }
            Ev::Wakeup { pid, target } | Ev::WakeupNew { pid, target } => {
                if workload.contains(&pid) && !b.index.contains_key(&pid) {
                    b.slot(pid, ts, target);
                }
                if let (Ev::WakeupNew { .. }, Some(&i)) = (&e.ev, b.index.get(&pid)) {
                    if let Start::Forked { cpu: c @ None } = &mut b.scripts[i].start {
                        *c = Some(target);
                    }
                }
                // A wakeup of a block no W after it ended: the tentative
                // wake from just before the block was its wake.
                if let Some(&i) = b.index.get(&pid) {
                    if b.st[i].blocked.is_some() {
                        if let Some(c) = cand.remove(&i) {
                            tentative.remove(&c);
                            b.st[i].blocked = None;
                        }
                    }
                }
            }
            Ev::Migrate { .. } => {}
        }
    }
    let last_ts = events.iter().map(|e| e.ts_ns).max().unwrap_or(first_ts);
    // Tentative wakes no wakeup made good are dropped.
    for (i, s) in b.scripts.iter_mut().enumerate() {
        let mut k = 0;
        s.ops.retain(|_| {
            k += 1;
            !tentative.contains(&(i, k - 1))
        });
    }
    for (i, s) in b.scripts.iter_mut().enumerate() {
        flush(s, &mut b.st[i], last_ts);
        s.comm = names.get(&s.pid).cloned().unwrap_or_default();
        s.pin = percpu_kthread_cpu(&s.comm);
        s.sync_wakes = wakes_sync(&s.comm);
    }
    b.scripts
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::metrics::workload_pids;
    use crate::replay::trace::parse;

    const PINGPONG: &str = "# slb-trace 1\n# topology smt2 cpus 8\n# comm pp\n\
        0 0 T 1 pp\n0 1 T 2 pp\n0 0 S 0 R 1\n\
        100 0 W 2 1 t\n105 1 U 2 1\n110 1 S 0 R 2\n\
        150 0 S 1 S 0\n\
        300 1 W 1 0 t\n310 0 U 1 0\n320 0 S 0 R 1\n\
        330 1 S 2 S 0\n\
        400 0 W 9 3 h\n\
        500 0 S 1 S 0\n900 0 W 1 0 h\n910 0 U 1 0\n920 0 S 0 R 1\n950 0 X 1\n960 0 S 1 X 0\n";

    #[test]
    fn a_timer_is_due_at_the_short_end_of_its_sleeps() {
        let mut s = Script {
            pid: 1,
            comm: "rr".into(),
            start: Start::Forked { cpu: None },
            pin: None,
            kthread: false,
            sync_wakes: false,
            wakee_flips: 0,
            ops: Vec::new(),
        };
        // 40 sleeps of 101..=140 us, one ended early at 5 us, a run
        // between each: the 5th percentile passes over the early one.
        s.ops.push(Op::Sleep(5_000));
        for us in 101..=140 {
            s.ops.push(Op::Run(50_000));
            s.ops.push(Op::Sleep(us * 1000));
        }
        assert_eq!(s.timer_due_ns(), Some(102_000));
        // Too few sleeps to read one off.
        s.ops.truncate(2 * (TIMER_DUE_MIN_SLEEPS - 1) - 1);
        assert_eq!(
            s.ops.iter().filter(|o| matches!(o, Op::Sleep(_))).count(),
            TIMER_DUE_MIN_SLEEPS - 1
        );
        assert_eq!(s.timer_due_ns(), None);
    }

    #[test]
    fn a_ping_pong_into_scripts() {
        let t = parse(PINGPONG).unwrap();
        let w = workload_pids(&t.events, &["pp".to_string()]);
        let s = extract(&t.events, &w);
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].pid, 1);
        assert_eq!(s[0].start, Start::At { ns: 0, cpu: 0 });
        // 1 runs 0-150 and blocks (its wake of 2 at 100 ended a block from
        // before the trace, which no script holds); woken by 2; runs
        // 320-500, sleeps on a timer 400 ns; runs 920-960 and exits.
        assert_eq!(
            s[0].ops,
            vec![
                Op::Run(150),
                Op::Block,
                Op::Run(180),
                Op::Sleep(400),
                Op::Run(40),
                Op::Exit
            ]
        );
        // 2 first appears woken at 105, so it starts then; it wakes 1 at
        // 300, in its own CPU time 190.
        assert_eq!(s[1].start, Start::At { ns: 105, cpu: 1 });
        assert_eq!(
            s[1].ops,
            vec![Op::Run(190), Op::Wake(0), Op::Run(30), Op::Block]
        );
    }

    /// reqresp's threads wake through futexes, not `WF_SYNC`; the
    /// ping-pong's pipes and every other name do.
    #[test]
    fn sync_wakes_by_program() {
        let t = parse(PINGPONG).unwrap();
        let w = workload_pids(&t.events, &["pp".to_string()]);
        assert!(extract(&t.events, &w).iter().all(|s| s.sync_wakes));
        let rr = parse(&PINGPONG.replace(" pp", " reqresp")).unwrap();
        let w = workload_pids(&rr.events, &["reqresp".to_string()]);
        let s = extract(&rr.events, &w);
        assert_eq!(s.len(), 2);
        assert!(s.iter().all(|s| !s.sync_wakes && s.comm == "reqresp"));
    }

    #[test]
    fn per_cpu_kthreads_by_name() {
        assert_eq!(percpu_kthread_cpu("kworker/3:1"), Some(3));
        assert_eq!(percpu_kthread_cpu("kworker/12:0H"), Some(12));
        assert_eq!(percpu_kthread_cpu("ksoftirqd/7"), Some(7));
        assert_eq!(percpu_kthread_cpu("kworker/u16:1"), None);
        assert_eq!(percpu_kthread_cpu("kworker/"), None);
        assert_eq!(percpu_kthread_cpu("hackbench"), None);
        assert_eq!(percpu_kthread_cpu("ksoftirqd/x"), None);
    }

    #[test]
    fn fork_makes_a_forked_child() {
        let t = parse(
            "# slb-trace 1\n# topology smt2 cpus 8\n# comm hb\n\
             0 0 T 1 hb\n0 0 S 0 R 1\n50 0 T 2 hb\n50 0 F 1 2\n50 0 N 2 3\n\
             60 3 S 0 R 2\n80 3 S 2 S 0\n90 0 S 1 S 0\n",
        )
        .unwrap();
        let w = workload_pids(&t.events, &["hb".to_string()]);
        let s = extract(&t.events, &w);
        assert_eq!(
            s[0].ops,
            vec![Op::Run(50), Op::Fork(1), Op::Run(40), Op::Block]
        );
        assert_eq!(s[1].start, Start::Forked { cpu: Some(3) });
        assert_eq!(s[1].ops, vec![Op::Run(20), Op::Block]);
    }
}
