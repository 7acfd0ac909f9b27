// SPDX-License-Identifier: GPL-2.0

//! The "slb-trace 1" format: a guest run's scheduler events, as
//! `scripts/guest/trace.awk` writes them from the kernel's
//! `sched_waking`, `sched_wakeup`, `sched_wakeup_new`, `sched_switch`,
//! `sched_migrate_task`, `sched_process_fork` and `sched_process_exit`
//! trace events (`include/trace/events/sched.h`), and as the model writes
//! its own run when `Config::record_events` asks for it.
//!
//! Header lines start with `#` (unknown keys are skipped, so the format
//! can grow):
//!
//! ```text
//! # slb-trace 1
//! # topology <bench topology> cpus <N>
//! # experiment <id> state <off|on> kind <flag|same|set|module> flag <spec>
//! # features <sched/features at the run: NAME or NO_NAME each>
//! # comm <the workload's process names>
//! # ctr <module counter> <delta over the run>
//! # counters <run: read before the trace's dump | run+dump: after it>
//! # schedstat <balance counter>_<busy|idle|newidle>@<level> <delta over the run>
//! # lost <events overwritten>
//! # wakee_flips <the bench shell's wakee_flips, which its first fork inherits>
//! # dropped <events a full buffer refused: the trace is the run's start>
//! # run_ns <the whole run's wall time, with dropped>
//! # duration_ns <the span the events cover>
//! ```
//!
//! Event lines are `<ts_ns> <cpu> <code> <fields>`, in time order:
//!
//! | code | fields | kernel event |
//! |---|---|---|
//! | `T` | pid comm | (names a pid; again after exec) |
//! | `W` | pid prev_cpu ctx | `sched_waking`, on the waker's CPU; ctx `t` task, `s` softirq, `h` hardirq |
//! | `U` | pid target_cpu | `sched_wakeup` |
//! | `N` | pid target_cpu | `sched_wakeup_new` |
//! | `S` | prev_pid prev_state next_pid | `sched_switch`; `R`: preempted, else blocked |
//! | `M` | pid orig_cpu dest_cpu | `sched_migrate_task` |
//! | `F` | parent_pid child_pid | `sched_process_fork` |
//! | `X` | pid | `sched_process_exit` |
//! | `B` | function caller | a function's entry, from the function tracer |
//!
//! pid 0 is the idle task. `B` lines come from a recording that named
//! functions to trace (`SLB_REPLAY_FUNCS` of `scripts/replay.sh`, the
//! balancer's entry points by default): they say when and where the
//! kernel ran that code, so the state the events show at that instant is
//! the state it saw. They are kept apart from the events
//! ([`Trace::calls`]): a script and every measure of the events read the
//! trace as if they were not there.

use std::fmt::Write as _;

/// Where a `sched_waking` ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ctx {
    /// Task context: the waker is the task running on the event's CPU.
    Task,
    /// Softirq: on loopback networking, the sender's own way out of its
    /// syscall, so the running task is still the one that caused it.
    Softirq,
    /// Hardirq (a timer, an IPI): no task caused it.
    Hardirq,
}

/// One event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ev {
    /// `T`: names a pid.
    Name {
        /// The pid.
        pid: u32,
        /// Its name.
        comm: String,
    },
    /// `W`: `sched_waking`, on the waker's CPU.
    Waking {
        /// The woken pid.
        pid: u32,
        /// Its CPU before placement.
        prev_cpu: u32,
        /// Where the wake ran.
        ctx: Ctx,
    },
    /// `U`: `sched_wakeup`.
    Wakeup {
        /// The woken pid.
        pid: u32,
        /// The CPU it was placed on.
        target: u32,
    },
    /// `N`: `sched_wakeup_new`.
    WakeupNew {
        /// The new pid.
        pid: u32,
        /// The CPU it was placed on.
        target: u32,
    },
    /// `S`: `sched_switch`.
    Switch {
        /// The pid switched out (0: idle).
        prev: u32,
        /// The state letter as traced.
        prev_state: char,
        /// The pid switched in (0: idle).
        next: u32,
    },
    /// `M`: `sched_migrate_task`.
    Migrate {
        /// The pid.
        pid: u32,
        /// From.
        orig: u32,
        /// To.
        dest: u32,
    },
    /// `F`: `sched_process_fork`.
    Fork {
        /// The parent.
        parent: u32,
        /// The child.
        child: u32,
    },
    /// `X`: `sched_process_exit`.
    Exit {
        /// The pid.
        pid: u32,
    },
}

/// Whether a `sched_switch`'s `prev_state` is the kernel's `R`: the task
/// was preempted and is still runnable (any other state: it blocked).
pub fn preempted(prev_state: char) -> bool {
    prev_state == 'R'
}

/// An event at a time on a CPU.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    /// Trace clock, ns.
    pub ts_ns: u64,
    /// The CPU that recorded it.
    pub cpu: u32,
    /// What happened.
    pub ev: Ev,
}

/// The function whose entry is a periodic balance: `sched_tick()` raised
/// `SCHED_SOFTIRQ` because `rq->next_balance` had come, and the softirq
/// runs `sched_balance_domains()` for this CPU.
pub const TICK_BALANCE: &str = "sched_balance_softirq";

/// The function whose entry is a CPU's tick: `update_process_times()`
/// calls `sched_tick()` from the timer interrupt, so on an idle CPU it
/// says the interrupt came (`replay::ticks`).
pub const TICK: &str = "sched_tick";

/// A function's entry (`B`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Call {
    /// Trace clock, ns.
    pub ts_ns: u64,
    /// The CPU that ran it.
    pub cpu: u32,
    /// The function.
    pub func: String,
    /// Its caller, as the function tracer names it.
    pub caller: String,
    /// How many events came before it in the record: where it falls
    /// among events of the same timestamp.
    pub after: usize,
}

/// The header.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Header {
    /// The bench topology's name (`scripts/bench-plan.sh`).
    pub topology: String,
    /// CPUs.
    pub cpus: u32,
    /// Experiment id.
    pub experiment: String,
    /// `off` or `on`.
    pub state: String,
    /// The experiment's kind (`flag`, `same`, `set`, `module`).
    pub kind: String,
    /// The experiment's flag or set.
    pub flag: String,
    /// `sched/features` during the run.
    pub features: Vec<String>,
    /// The workload's process names.
    pub comm: Vec<String>,
    /// The module's counters over the run, as the header has them
    /// (`Header::ctr` reads them only when `counters_run`).
    pub ctr: Vec<(String, i64)>,
    /// The counters were read before the trace's dump (`# counters
    /// run`), so they are the run's; a trace recorded before the third
    /// recording of 2026-12-06 read them after it, and they take in the
    /// dump's seconds of awk, gzip and the serial console (`# counters
    /// run+dump`, or no line).
    pub counters_run: bool,
    /// The run's balance counters from `/proc/schedstat`, per domain
    /// level and idle type (`lb_count_idle@NUMA`), read before the dump:
    /// none in traces recorded before the third recording of
    /// 2026-12-06.
    pub schedstat: Vec<(String, u64)>,
    /// Events the buffer overwrote.
    pub lost: u64,
    /// The `wakee_flips` of the shell that started the workload, read
    /// before the run (`sched_lb_rs/wakee_flips`): what the workload's
    /// first tasks inherit. None in traces recorded before it was.
    pub wakee_flips: Option<u32>,
    /// Events full buffers refused (the trace is the run's start).
    pub dropped: u64,
    /// The whole run's wall time where the trace is its start
    /// (`dropped`), ns: the counters cover it, the events `duration_ns`.
    pub run_ns: Option<u64>,
    /// The span the events cover, ns.
    pub duration_ns: u64,
}

impl Header {
    /// The module counter `name` over the run (`# ctr`), if the header
    /// has it and it counted the run alone (`counters_run`).
    pub fn ctr(&self, name: &str) -> Option<i64> {
        if !self.counters_run {
            return None;
        }
        self.ctr.iter().find(|(n, _)| n == name).map(|&(_, v)| v)
    }

    /// The run's balance counters (`# schedstat`), if the header has
    /// them. `replay_extract.py` writes them only where both of the run's
    /// `/proc/schedstat` dumps came before the trace's dump, so they are
    /// the run's alone whether or not the module's counters were there to
    /// say so (`counters_run`: a run without the module has none).
    pub fn run_schedstat(&self) -> Option<&[(String, u64)]> {
        (!self.schedstat.is_empty()).then_some(&self.schedstat[..])
    }

    /// What of the run's counters the events cover: `duration_ns` over
    /// `run_ns` where a full buffer cut the trace to the run's start, 1
    /// otherwise. A count over the whole run times this is the share of
    /// it in the window, at the run's mean rate.
    pub fn counter_share(&self) -> f64 {
        match self.run_ns {
            Some(run) if run > 0 && self.dropped > 0 => {
                (self.duration_ns as f64 / run as f64).min(1.0)
            }
            _ => 1.0,
        }
    }
}

/// A parsed trace.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Trace {
    /// Header.
    pub header: Header,
    /// Events, in file order.
    pub events: Vec<Event>,
    /// Function entries (`B`), in file order: none unless the recording
    /// traced functions.
    pub calls: Vec<Call>,
}

fn num<T: std::str::FromStr>(f: Option<&str>, what: &str, line: usize) -> Result<T, String> {
    let f = f.ok_or_else(|| format!("line {line}: missing {what}"))?;
    f.parse::<T>()
        .map_err(|_| format!("line {line}: {what} '{f}' is not a number"))
}

/// A header line's "<name> <number>" after its key.
fn named<'a, T: std::str::FromStr>(
    it: &mut impl Iterator<Item = &'a str>,
    key: &str,
    line: usize,
) -> Result<(String, T), String> {
    let name = it
        .next()
        .ok_or_else(|| format!("line {line}: {key} without a name"))?;
    Ok((
        name.to_string(),
        num(it.next(), &format!("{key} value"), line)?,
    ))
}

fn header(h: &mut Header, rest: &str, line: usize) -> Result<(), String> {
    let mut it = rest.split_whitespace();
    let key = it.next().unwrap_or("");
    match key {
        "slb-trace" => {
            let v = it.next().unwrap_or("");
            if v != "1" {
                return Err(format!(
                    "line {line}: slb-trace version '{v}', this reads 1"
                ));
            }
        }
        "topology" => {
            h.topology = it.next().unwrap_or("").to_string();
            if it.next() == Some("cpus") {
                h.cpus = num(it.next(), "cpus", line)?;
            }
        }
        "experiment" => {
            h.experiment = it.next().unwrap_or("").to_string();
            while let Some(k) = it.next() {
                let v = it.next().unwrap_or("").to_string();
                match k {
                    "state" => h.state = v,
                    "kind" => h.kind = v,
                    "flag" => h.flag = v,
                    _ => {}
                }
            }
        }
        "features" => h.features = it.map(str::to_string).collect(),
        "comm" => h.comm = it.map(str::to_string).collect(),
        "ctr" => h.ctr.push(named(&mut it, key, line)?),
        "counters" => h.counters_run = it.next() == Some("run"),
        "schedstat" => h.schedstat.push(named(&mut it, key, line)?),
        "lost" => h.lost = num(it.next(), "lost", line)?,
        "wakee_flips" => h.wakee_flips = Some(num(it.next(), "wakee_flips", line)?),
        "dropped" => h.dropped = num(it.next(), "dropped", line)?,
        "run_ns" => h.run_ns = Some(num(it.next(), "run_ns", line)?),
        "duration_ns" => h.duration_ns = num(it.next(), "duration_ns", line)?,
        _ => {}
    }
    Ok(())
}

/// Parses a trace. Errors name the line and what was expected.
pub fn parse(text: &str) -> Result<Trace, String> {
    let mut t = Trace::default();
    let mut versioned = false;
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let l = raw.trim();
        if l.is_empty() {
            continue;
        }
        if let Some(rest) = l.strip_prefix('#') {
            if rest.trim_start().starts_with("slb-trace") {
                versioned = true;
            }
            header(&mut t.header, rest, line)?;
            continue;
        }
        if !versioned {
            return Err(format!(
                "line {line}: an event before the '# slb-trace 1' line"
            ));
        }
        let mut f = l.split_whitespace();
        let ts_ns = num(f.next(), "timestamp", line)?;
        let cpu: u32 = num(f.next(), "cpu", line)?;
        let code = f
            .next()
            .ok_or_else(|| format!("line {line}: missing event code"))?;
        if t.header.cpus > 0 && cpu >= t.header.cpus {
            return Err(format!(
                "line {line}: cpu {cpu} beyond the header's {} CPUs",
                t.header.cpus
            ));
        }
        if code == "B" {
            let mut word = |what: &str| {
                f.next()
                    .map(str::to_string)
                    .ok_or_else(|| format!("line {line}: B without its {what}"))
            };
            let (func, caller) = (word("function")?, word("caller")?);
            t.calls.push(Call {
                ts_ns,
                cpu,
                func,
                caller,
                after: t.events.len(),
            });
            continue;
        }
        let mut n = |what: &str| num::<u32>(f.next(), what, line);
        let ev = match code {
            "T" => {
                let pid = n("pid")?;
                let comm = f.next().unwrap_or("").to_string();
                Ev::Name { pid, comm }
            }
            "W" => {
                let pid = n("pid")?;
                let prev_cpu = n("prev_cpu")?;
                let ctx = match f.next() {
                    Some("t") => Ctx::Task,
                    Some("s") => Ctx::Softirq,
                    Some("h") => Ctx::Hardirq,
                    other => {
                        return Err(format!(
                            "line {line}: context '{}' is not t, s or h",
                            other.unwrap_or("")
                        ))
                    }
                };
                Ev::Waking { pid, prev_cpu, ctx }
            }
            "U" => Ev::Wakeup {
                pid: n("pid")?,
                target: n("target_cpu")?,
            },
            "N" => Ev::WakeupNew {
                pid: n("pid")?,
                target: n("target_cpu")?,
            },
            "S" => {
                let prev = n("prev_pid")?;
                let st = f
                    .next()
                    .and_then(|s| s.chars().next())
                    .ok_or_else(|| format!("line {line}: missing prev_state"))?;
                let next = num(f.next(), "next_pid", line)?;
                Ev::Switch {
                    prev,
                    prev_state: st,
                    next,
                }
            }
            "M" => Ev::Migrate {
                pid: n("pid")?,
                orig: n("orig_cpu")?,
                dest: n("dest_cpu")?,
            },
            "F" => Ev::Fork {
                parent: n("parent_pid")?,
                child: n("child_pid")?,
            },
            "X" => Ev::Exit { pid: n("pid")? },
            other => return Err(format!("line {line}: unknown event code '{other}'")),
        };
        t.events.push(Event { ts_ns, cpu, ev });
    }
    if !versioned {
        return Err("no '# slb-trace 1' line: not a trace".to_string());
    }
    if t.header.topology.is_empty() || t.header.cpus == 0 {
        return Err("no '# topology NAME cpus N' line".to_string());
    }
    Ok(t)
}

/// One function entry as a line of the format (no newline).
pub fn call_line(c: &Call) -> String {
    format!("{} {} B {} {}", c.ts_ns, c.cpu, c.func, c.caller)
}

/// A record's events and calls as the format's lines, in its order: each
/// call before the event it came before.
pub fn body_lines(events: &[Event], calls: &[Call]) -> Vec<String> {
    let mut out = Vec::with_capacity(events.len().saturating_add(calls.len()));
    let mut calls = calls.iter().peekable();
    for (i, e) in events.iter().enumerate() {
        while let Some(c) = calls.next_if(|c| c.after <= i) {
            out.push(call_line(c));
        }
        out.push(event_line(e));
    }
    out.extend(calls.map(call_line));
    out
}

/// One event as a line of the format (no newline).
pub fn event_line(e: &Event) -> String {
    let mut s = format!("{} {} ", e.ts_ns, e.cpu);
    let _ = match &e.ev {
        Ev::Name { pid, comm } => write!(s, "T {pid} {comm}"),
        Ev::Waking { pid, prev_cpu, ctx } => {
            let c = match ctx {
                Ctx::Task => 't',
                Ctx::Softirq => 's',
                Ctx::Hardirq => 'h',
            };
            write!(s, "W {pid} {prev_cpu} {c}")
        }
        Ev::Wakeup { pid, target } => write!(s, "U {pid} {target}"),
        Ev::WakeupNew { pid, target } => write!(s, "N {pid} {target}"),
        Ev::Switch {
            prev,
            prev_state,
            next,
            ..
        } => write!(s, "S {prev} {prev_state} {next}"),
        Ev::Migrate { pid, orig, dest } => write!(s, "M {pid} {orig} {dest}"),
        Ev::Fork { parent, child } => write!(s, "F {parent} {child}"),
        Ev::Exit { pid } => write!(s, "X {pid}"),
    };
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL: &str = "# slb-trace 1\n# topology guittot cpus 8\n\
        # experiment fair9_relax state on kind flag flag LB_RELAX_FAILED\n\
        # features NI_RANDOM NO_STEAL\n# comm spin\n# ctr differs_STEAL 3\n# lost 0\n\
        # wakee_flips 12\n# duration_ns 5000\n# future key ignored\n\
        1000 0 T 5 spin\n1000 0 S 0 R 5\n1200 0 W 6 1 t\n1300 1 U 6 1\n1400 1 S 6 D 0\n";

    #[test]
    fn counters_are_the_runs_only_when_read_before_the_dump() {
        for (line, run) in [
            ("# counters run\n", Some(3)),
            ("# counters run+dump\n", None),
            ("", None),
        ] {
            let t = parse(&SMALL.replace("# lost 0\n", &format!("{line}# lost 0\n"))).unwrap();
            assert_eq!(t.header.ctr("differs_STEAL"), run, "{line:?}");
            assert_eq!(t.header.ctr("differs_SIS_AGE"), None);
        }
    }

    /// A trace cut at a full buffer covers its run's start: its counters
    /// are the whole run's, and the window is their share.
    #[test]
    fn a_cut_traces_counters_cover_more_than_its_window() {
        let whole = parse(SMALL).unwrap();
        assert_eq!(
            (whole.header.run_ns, whole.header.counter_share()),
            (None, 1.0)
        );
        let cut = SMALL.replace(
            "# duration_ns 5000\n",
            "# dropped 7\n# run_ns 20000\n# duration_ns 5000\n",
        );
        let h = parse(&cut).unwrap().header;
        assert_eq!((h.dropped, h.run_ns), (7, Some(20000)));
        assert_eq!(h.counter_share(), 0.25);
    }

    #[test]
    fn parses_header_and_events() {
        let t = parse(SMALL).unwrap();
        assert_eq!(t.header.topology, "guittot");
        assert_eq!(t.header.cpus, 8);
        assert_eq!(t.header.state, "on");
        assert_eq!(t.header.flag, "LB_RELAX_FAILED");
        assert_eq!(t.header.features, vec!["NI_RANDOM", "NO_STEAL"]);
        assert_eq!(t.header.comm, vec!["spin"]);
        assert_eq!(t.header.ctr, vec![("differs_STEAL".to_string(), 3)]);
        // No "# counters run": read after the dump, so not the run's.
        assert!(!t.header.counters_run);
        assert_eq!(t.header.ctr("differs_STEAL"), None);
        assert_eq!(t.header.duration_ns, 5000);
        assert_eq!(t.header.wakee_flips, Some(12));
        assert_eq!(t.events.len(), 5);
        assert_eq!(
            t.events[2].ev,
            Ev::Waking {
                pid: 6,
                prev_cpu: 1,
                ctx: Ctx::Task
            }
        );
        assert_eq!(
            t.events[4].ev,
            Ev::Switch {
                prev: 6,
                prev_state: 'D',
                next: 0
            }
        );
        // Lines round-trip.
        let body: Vec<String> = t.events.iter().map(event_line).collect();
        assert_eq!(body[2], "1200 0 W 6 1 t");
        assert_eq!(body[4], "1400 1 S 6 D 0");
    }

    /// Function entries stay out of the events, keep their place among
    /// them and come back out where they were.
    #[test]
    fn calls_are_kept_apart_and_in_place() {
        let with = SMALL
            .replace(
                "1200 0 W 6 1 t\n",
                "1200 0 W 6 1 t\n1250 1 B sched_balance_softirq handle_softirqs\n",
            )
            .replace(
                "1400 1 S 6 D 0\n",
                "1400 1 S 6 D 0\n1400 1 B sched_balance_rq sched_balance_domains\n",
            );
        let (t, plain) = (parse(&with).unwrap(), parse(SMALL).unwrap());
        assert_eq!(t.events, plain.events);
        assert_eq!(t.calls.len(), 2);
        assert_eq!(
            t.calls[0],
            Call {
                ts_ns: 1250,
                cpu: 1,
                func: TICK_BALANCE.into(),
                caller: "handle_softirqs".into(),
                after: 3,
            }
        );
        assert_eq!(t.calls[1].after, 5);
        let lines = body_lines(&t.events, &t.calls);
        let body: Vec<&str> = with.lines().filter(|l| !l.starts_with('#')).collect();
        assert_eq!(lines, body);
        let h = "# slb-trace 1\n# topology smt2 cpus 8\n";
        assert!(parse(&format!("{h}10 0 B f\n"))
            .unwrap_err()
            .contains("line 3: B without its caller"));
        assert!(parse(&format!("{h}10 8 B f g\n"))
            .unwrap_err()
            .contains("line 3: cpu 8 beyond"));
    }

    #[test]
    fn bad_input_names_the_line() {
        let e = |s: &str| parse(s).unwrap_err();
        assert!(e("").contains("not a trace"));
        assert!(e("1 0 S 0 R 1\n").contains("line 1: an event before"));
        assert!(e("# slb-trace 2\n").contains("version '2'"));
        assert!(e("# slb-trace 1\n").contains("topology"));
        let h = "# slb-trace 1\n# topology smt2 cpus 8\n";
        assert!(e(&format!("{h}10 0 Q 1\n")).contains("line 3: unknown event code 'Q'"));
        assert!(e(&format!("{h}10 0 W 1 2 x\n")).contains("line 3: context 'x'"));
        assert!(e(&format!("{h}10 9 U 1 2\n")).contains("line 3: cpu 9 beyond"));
        assert!(e(&format!("{h}x 0 U 1 2\n")).contains("line 3: timestamp 'x'"));
        assert!(e(&format!("{h}10 0 S 1\n")).contains("line 3: missing prev_state"));
        assert!(e(&format!("{h}# ctr\n")).contains("line 3: ctr without a name"));
        assert!(e(&format!("{h}# schedstat lb_count_idle@MC x\n"))
            .contains("line 3: schedstat value 'x' is not a number"));
    }

    #[test]
    fn no_input_panics() {
        // Every prefix of a good trace, and lines of junk, give a result
        // or an error, never a panic.
        for cut in 0..SMALL.len() {
            if SMALL.is_char_boundary(cut) {
                let _ = parse(&SMALL[..cut]);
            }
        }
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let alphabet = b"0123456789 TWUNSMFXBRst#-\n";
        for _ in 0..2000 {
            let mut s = String::from("# slb-trace 1\n# topology smt2 cpus 8\n");
            for _ in 0..40 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                s.push(alphabet[(x % alphabet.len() as u64) as usize] as char);
            }
            let _ = parse(&s);
        }
    }
}
