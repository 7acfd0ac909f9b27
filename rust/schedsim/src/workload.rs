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
//! - `hackbench:G[:fds[:send_us[:recv_us[:queue]]]]`: G groups of `fds`
//!   senders and `fds` receivers (hackbench's default 20), senders writing
//!   to every receiver of their group round-robin, blocking on a receiver
//!   with `queue` messages waiting (default [`HACKBENCH_QUEUE_CAP`])
//!   (Zijlstra and Sistare 2018, Low 2013, Jain 2018);
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
        /// CPU work per message, us.
        work_us: u64,
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
                    let v = nums(kind, &fields, 1, 3)?;
                    Part::Buddy {
                        pairs: count(kind, v[0])?,
                        work_us: time_us(kind, v.get(1).copied().unwrap_or(20))?,
                        overlap_us: v.get(2).copied().unwrap_or(10),
                    }
                }
                "hackbench" => {
                    let v = nums(kind, &fields, 1, 5)?;
                    Part::Hackbench {
                        groups: count(kind, v[0])?,
                        fds: count(kind, v.get(1).copied().unwrap_or(20))?,
                        send_us: time_us(kind, v.get(2).copied().unwrap_or(20))?,
                        recv_us: time_us(kind, v.get(3).copied().unwrap_or(20))?,
                        queue: count(
                            kind,
                            v.get(4).copied().unwrap_or(u64::from(HACKBENCH_QUEUE_CAP)),
                        )?,
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
                        "bad workload '{other}': known kinds are fairness:N, buddy:P[:work_us[:overlap_us]], hackbench:G[:fds[:send_us[:recv_us[:queue]]]], periodic:N:run_us:sleep_us"
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
                work_us: 20,
                overlap_us: 10
            }
        );
        assert_eq!(w.task_count(), 9 + 2 + 40 + 3);
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
            "fairness:5000+fairness:5000+fairness:5000+fairness:5000+fairness:4000",
        ] {
            assert!(Workload::parse(bad).is_err(), "{bad}");
        }
    }
}
