// SPDX-License-Identifier: GPL-2.0

//! Workloads: what the tasks of a run do.
//!
//! Each mirrors the benchmark of a seed thread, reduced to what the
//! balancer sees (runnable, sleeping, who wakes whom):
//!
//! - `fairness:N`: N always-running threads, rt-app as Guittot ran it
//!   (Guittot 2020);
//! - `buddy:P[:work_us[:overlap_us]]`: P pairs that wake each other, a
//!   netperf UDP_STREAM to localhost as Galbraith ran it (Galbraith 2016);
//!   `work_us` may have up to 3 decimals (`12.5`): a message fitted to a
//!   fast guest costs a few us, where 1 us is several percent;
//! - `hackbench:G[:fds[:send_us[:recv_us[:queue[:loops]]]]]`: G groups of
//!   `fds` senders and `fds` receivers (hackbench's default 20), senders
//!   writing to every receiver of their group round-robin, blocking on a
//!   receiver with `queue` messages waiting (default
//!   [`HACKBENCH_QUEUE_CAP`]) (Zijlstra and Sistare 2018, Low 2013, Jain
//!   2018); with `loops` (hackbench's `-l`) each sender writes `loops`
//!   messages to each receiver and exits, each receiver exits after its
//!   `loops x fds`, and the run ends with the last of them, as hackbench's
//!   timer does; without, they run for the run's duration;
//! - `periodic:N:run_us:sleep_us`: N tasks that run and sleep.
//!
//! Parts combine with `+`: `fairness:4+buddy:1`.

/// One part of a workload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Part {
    /// N always-running tasks.
    Fairness {
        /// Tasks.
        n: u32,
    },
    /// Pairs that wake each other.
    Buddy {
        /// Pairs.
        pairs: u32,
        /// CPU work per message, ns (given in us, to the ns).
        work_ns: u64,
        /// Work the sender goes on with after waking its partner, us.
        overlap_us: u64,
    },
    /// Hackbench-like message groups.
    Hackbench {
        /// Groups.
        groups: u32,
        /// Senders and receivers per group.
        fds: u32,
        /// Sender work per message, us.
        send_us: u64,
        /// Receiver work per message, us.
        recv_us: u64,
        /// Messages a receiver holds before its senders block.
        queue: u32,
        /// hackbench's `-l`: messages a sender writes to each receiver
        /// before it exits (0: no end).
        loops: u32,
    },
    /// Tasks replaying a guest trace's scripts (`schedsim replay`; not
    /// written as text).
    Replay {
        /// One script per task.
        scripts: std::rc::Rc<Vec<crate::replay::script::Script>>,
    },
    /// Run/sleep tasks.
    Periodic {
        /// Tasks.
        n: u32,
        /// Run time per period, us.
        run_us: u64,
        /// Sleep time per period, us.
        sleep_us: u64,
    },
}

/// Messages a receiver may have queued before its sender blocks: a
/// socket buffer's worth of hackbench's 100-byte messages, in batches.
pub const HACKBENCH_QUEUE_CAP: u32 = 8;

/// A parsed workload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Workload {
    /// The parts.
    pub parts: Vec<Part>,
    /// The text it was parsed from.
    pub text: String,
}

fn nums(kind: &str, fields: &[&str], min: usize, max: usize) -> Result<Vec<u64>, String> {
    if fields.len() < min || fields.len() > max {
        return Err(format!(
            "bad workload '{kind}': expected {min} to {max} numbers after '{kind}:'"
        ));
    }
    fields
        .iter()
        .map(|f| {
            f.parse::<u64>()
                .map_err(|_| format!("bad workload '{kind}': '{f}' is not a number"))
        })
        .collect()
}

fn count(kind: &str, v: u64) -> Result<u32, String> {
    if v == 0 || v > 4096 {
        return Err(format!("bad workload '{kind}': count {v} not in 1..=4096"));
    }
    Ok(v as u32)
}

fn time_us(kind: &str, v: u64) -> Result<u64, String> {
    if v == 0 || v > 10_000_000 {
        return Err(format!(
            "bad workload '{kind}': time {v} us not in 1..=10000000"
        ));
    }
    Ok(v)
}

/// A time in us with up to 3 decimals (`12.5`), as ns, in the bounds of
/// [`time_us`].
fn time_us_to_ns(kind: &str, f: &str) -> Result<u64, String> {
    let bad = || format!("bad workload '{kind}': '{f}' is not a time in us (up to 3 decimals)");
    let (int, frac, point) = match f.split_once('.') {
        Some((i, fr)) => (i, fr, true),
        None => (f, "", false),
    };
    let frac_ok = !(point && frac.is_empty()) && frac.len() <= 3;
    if int.is_empty() || !frac_ok || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    let us = int.parse::<u64>().map_err(|_| bad())?;
    // Right-padded: "5" after the point is 500 ns.
    let frac_ns = if frac.is_empty() {
        0
    } else {
        format!("{frac:0<3}").parse::<u64>().map_err(|_| bad())?
    };
    let ns = us.saturating_mul(1000).saturating_add(frac_ns);
    if ns == 0 || ns > 10_000_000_000 {
        return Err(format!(
            "bad workload '{kind}': time {f} us not in 0.001..=10000000"
        ));
    }
    Ok(ns)
}

impl Workload {
    /// Parses `kind:args[+kind:args...]`.
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut parts = Vec::new();
        for p in text.split('+').map(str::trim) {
            let mut it = p.split(':');
            let kind = it.next().unwrap_or("");
            let fields: Vec<&str> = it.collect();
            let part = match kind {
                "fairness" => {
                    let v = nums(kind, &fields, 1, 1)?;
                    Part::Fairness {
                        n: count(kind, v[0])?,
                    }
                }
                "buddy" => {
                    // The work is read apart: it alone may be fractional.
                    let work = fields.get(1).copied();
                    let mut rest = fields.clone();
                    if rest.len() > 1 {
                        rest.remove(1);
                    }
                    let v = nums(kind, &rest, 1, 2)?;
                    Part::Buddy {
                        pairs: count(kind, v[0])?,
                        work_ns: match work {
                            Some(f) => time_us_to_ns(kind, f)?,
                            None => 20_000,
                        },
                        overlap_us: v.get(1).copied().unwrap_or(10),
                    }
                }
                "hackbench" => {
                    let v = nums(kind, &fields, 1, 6)?;
                    Part::Hackbench {
                        groups: count(kind, v[0])?,
                        fds: count(kind, v.get(1).copied().unwrap_or(20))?,
                        send_us: time_us(kind, v.get(2).copied().unwrap_or(20))?,
                        recv_us: time_us(kind, v.get(3).copied().unwrap_or(20))?,
                        queue: count(
                            kind,
                            v.get(4).copied().unwrap_or(u64::from(HACKBENCH_QUEUE_CAP)),
                        )?,
                        loops: match v.get(5).copied() {
                            None => 0,
                            Some(l @ 1..=1_000_000) => l as u32,
                            Some(l) => {
                                return Err(format!(
                                    "bad workload '{kind}': loops {l} not in 1..=1000000"
                                ))
                            }
                        },
                    }
                }
                "periodic" => {
                    let v = nums(kind, &fields, 3, 3)?;
                    Part::Periodic {
                        n: count(kind, v[0])?,
                        run_us: time_us(kind, v[1])?,
                        sleep_us: time_us(kind, v[2])?,
                    }
                }
                "" => return Err(format!("bad workload '{text}': empty part")),
                other => {
                    return Err(format!(
                        "bad workload '{other}': known kinds are fairness:N, buddy:P[:work_us[:overlap_us]], hackbench:G[:fds[:send_us[:recv_us[:queue[:loops]]]]], periodic:N:run_us:sleep_us"
                    ))
                }
            };
            parts.push(part);
        }
        let w = Self {
            parts,
            text: text.to_string(),
        };
        if w.task_count() > 20_000 {
            return Err(format!("bad workload '{text}': more than 20000 tasks"));
        }
        Ok(w)
    }

    /// Number of tasks.
    pub fn task_count(&self) -> u64 {
        self.parts
            .iter()
            .map(|p| match *p {
                Part::Fairness { n } | Part::Periodic { n, .. } => u64::from(n),
                Part::Buddy { pairs, .. } => 2 * u64::from(pairs),
                Part::Hackbench { groups, fds, .. } => 2 * u64::from(groups) * u64::from(fds),
                Part::Replay { ref scripts } => scripts.len() as u64,
            })
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_each_kind() {
        let w = Workload::parse("fairness:9+buddy:1+hackbench:2:10+periodic:3:100:200").unwrap();
        assert_eq!(w.parts[0], Part::Fairness { n: 9 });
        assert_eq!(
            w.parts[1],
            Part::Buddy {
                pairs: 1,
                work_ns: 20_000,
                overlap_us: 10
            }
        );
        assert_eq!(w.task_count(), 9 + 2 + 40 + 3);
        // Without loops hackbench runs for the run's duration.
        assert!(matches!(w.parts[2], Part::Hackbench { loops: 0, .. }));
        let h = Workload::parse("hackbench:4:20:5:6:16:80").unwrap();
        assert_eq!(
            h.parts[0],
            Part::Hackbench {
                groups: 4,
                fds: 20,
                send_us: 5,
                recv_us: 6,
                queue: 16,
                loops: 80
            }
        );
        // The buddy's work alone may have decimals, to the ns.
        let b = |t: &str| Workload::parse(t).map(|w| w.parts[0].clone());
        for (text, ns, ov) in [
            ("buddy:1:12.5", 12_500, 10),
            ("buddy:1:12.345:3", 12_345, 3),
            ("buddy:1:0.001", 1, 10),
            ("buddy:1:330", 330_000, 10),
        ] {
            assert_eq!(
                b(text),
                Ok(Part::Buddy {
                    pairs: 1,
                    work_ns: ns,
                    overlap_us: ov
                }),
                "{text}"
            );
        }
    }

    #[test]
    fn rejects_bad_input() {
        for bad in [
            "",
            "fairness",
            "fairness:0",
            "fairness:x",
            "fairness:1:2",
            "warp:3",
            "periodic:1:2",
            "buddy:1:0",
            "buddy:1:0.0",
            "buddy:1:1.2345",
            "buddy:1:.5",
            "buddy:1:1.",
            "buddy:1:-1",
            "buddy:1:1e3",
            "buddy:1:2:3:4",
            "buddy:1:2:3.5",
            "hackbench:1:20:1.5",
            "hackbench:1:20:10:10:8:0",
            "hackbench:1:20:10:10:8:1000001",
            "hackbench:1:20:10:10:8:5:5",
            "fairness:5000+fairness:5000+fairness:5000+fairness:5000+fairness:4000",
        ] {
            assert!(Workload::parse(bad).is_err(), "{bad}");
        }
    }
}
