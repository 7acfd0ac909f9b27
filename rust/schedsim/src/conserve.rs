// SPDX-License-Identifier: GPL-2.0

//! Work-conservation checker after "The Linux Scheduler: a Decade of
//! Wasted Cores" (Lozi et al., EuroSys 2016).
//!
//! The paper's invariant: no CPU may sit idle while a CPU it could balance
//! with has a task waiting (2 or more runnable). Every preset's top domain
//! spans the whole machine, so "could balance with" is "any CPU"; the
//! checker keeps the number of idle and of overloaded CPUs, updated at
//! every `nr_running` change, and integrates the idle CPU time spent while
//! both are non-zero. An episode is a maximal stretch of violation of
//! positive length: a CPU that goes idle and pulls a task at the same
//! instant (newidle balancing and STEAL take no simulated time before the
//! pull) broke nothing, and counting it would make the rules that pull
//! most look worst. The paper's own checker flagged stretches over 100 ms,
//! so episodes over 1 ms and over 100 ms are counted apart from the short
//! ones a wakeup or a tick always causes.

use crate::topology::cpulist;

/// Episode length thresholds, ns.
pub const LONG_NS: u64 = 1_000_000;
/// The paper's threshold.
pub const VERY_LONG_NS: u64 = 100_000_000;

/// Running state of the checker.
#[derive(Clone, Debug)]
pub struct Conservation {
    last_ns: u64,
    violating: bool,
    episode_start_ns: u64,
    idle_cpus: u32,
    wasted_ns: u64,
    episodes: u64,
    long: u64,
    very_long: u64,
    violation_ns: u64,
    worst_ns: u64,
    worst_start_ns: u64,
    worst_idle: Vec<u32>,
    idle_mask: Vec<bool>,
    cur_idle_snapshot: Vec<u32>,
}

/// What the checker found.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct ConservationReport {
    /// Idle CPU time while some CPU had a waiting task, ns.
    pub wasted_cpu_ns: u64,
    /// Wall time with at least one violation, ns.
    pub violation_ns: u64,
    /// Episodes.
    pub episodes: u64,
    /// Episodes of 1 ms or more.
    pub episodes_over_1ms: u64,
    /// Episodes of 100 ms or more.
    pub episodes_over_100ms: u64,
    /// Longest episode, ns.
    pub worst_ns: u64,
    /// When it started, ns.
    pub worst_start_ns: u64,
    /// CPUs idle when it started, as a CPU list.
    pub worst_idle_cpus: String,
}

impl Conservation {
    /// A checker for `nr` CPUs, all idle at time 0.
    pub fn new(nr: u32) -> Self {
        Self {
            last_ns: 0,
            violating: false,
            episode_start_ns: 0,
            idle_cpus: nr,
            wasted_ns: 0,
            episodes: 0,
            long: 0,
            very_long: 0,
            violation_ns: 0,
            worst_ns: 0,
            worst_start_ns: 0,
            worst_idle: Vec::new(),
            idle_mask: vec![true; nr as usize],
            cur_idle_snapshot: Vec::new(),
        }
    }

    fn integrate(&mut self, now_ns: u64) {
        let dt = now_ns.saturating_sub(self.last_ns);
        if self.violating {
            self.wasted_ns = self
                .wasted_ns
                .saturating_add(dt.saturating_mul(u64::from(self.idle_cpus)));
            self.violation_ns = self.violation_ns.saturating_add(dt);
        }
        self.last_ns = now_ns;
    }

    fn close(&mut self, now_ns: u64) {
        let len = now_ns.saturating_sub(self.episode_start_ns);
        if len == 0 {
            // Opened and closed at one instant: no CPU time was lost.
            return;
        }
        self.episodes += 1;
        if len >= LONG_NS {
            self.long += 1;
        }
        if len >= VERY_LONG_NS {
            self.very_long += 1;
        }
        if len > self.worst_ns {
            self.worst_ns = len;
            self.worst_start_ns = self.episode_start_ns;
            self.worst_idle = std::mem::take(&mut self.cur_idle_snapshot);
        }
    }

    /// `cpu` went from `old` to `new` runnable tasks; `idle` and
    /// `overloaded` are the machine's counts after the change.
    pub fn update(
        &mut self,
        now_ns: u64,
        cpu: u32,
        old: u32,
        new: u32,
        idle: u32,
        overloaded: u32,
    ) {
        self.integrate(now_ns);
        if (old == 0) != (new == 0) {
            if let Some(m) = self.idle_mask.get_mut(cpu as usize) {
                *m = new == 0;
            }
        }
        self.idle_cpus = idle;
        let v = idle > 0 && overloaded > 0;
        if v && !self.violating {
            self.episode_start_ns = now_ns;
            self.cur_idle_snapshot = self
                .idle_mask
                .iter()
                .enumerate()
                .filter(|(_, &i)| i)
                .map(|(c, _)| c as u32)
                .collect();
        } else if !v && self.violating {
            self.close(now_ns);
        }
        self.violating = v;
    }

    /// Ends the run at `now_ns`.
    pub fn finish(&mut self, now_ns: u64) {
        self.integrate(now_ns);
        if self.violating {
            self.close(now_ns);
            self.violating = false;
        }
    }

    /// The findings.
    pub fn report(&self) -> ConservationReport {
        ConservationReport {
            wasted_cpu_ns: self.wasted_ns,
            violation_ns: self.violation_ns,
            episodes: self.episodes,
            episodes_over_1ms: self.long,
            episodes_over_100ms: self.very_long,
            worst_ns: self.worst_ns,
            worst_start_ns: self.worst_start_ns,
            worst_idle_cpus: cpulist(&self.worst_idle),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_an_episode_and_its_waste() {
        let mut c = Conservation::new(2);
        // CPU 0 gets 2 tasks at t=10 while CPU 1 stays idle until t=30.
        c.update(10, 0, 0, 1, 1, 0);
        c.update(10, 0, 1, 2, 1, 1);
        c.update(30, 1, 0, 1, 0, 1);
        c.finish(100);
        let r = c.report();
        assert_eq!(r.episodes, 1);
        assert_eq!(r.wasted_cpu_ns, 20);
        assert_eq!(r.worst_ns, 20);
        assert_eq!(r.worst_start_ns, 10);
        assert_eq!(r.worst_idle_cpus, "1");
    }

    /// A CPU that blocks and pulls at the same instant opens and closes
    /// a violation at one time: not an episode.
    #[test]
    fn zero_length_episodes_do_not_count() {
        let mut c = Conservation::new(2);
        // CPU 0 runs two tasks, CPU 1 one.
        c.update(0, 0, 0, 1, 1, 0);
        c.update(0, 0, 1, 2, 1, 1);
        c.update(0, 1, 0, 1, 0, 1);
        // At t=50 CPU 1's task blocks and CPU 1 pulls one from CPU 0 at
        // once: idle and overloaded both for no time.
        c.update(50, 1, 1, 0, 1, 1);
        c.update(50, 0, 2, 1, 1, 0);
        c.update(50, 1, 0, 1, 0, 0);
        c.finish(100);
        let r = c.report();
        assert_eq!(r.episodes, 0, "{r:?}");
        assert_eq!((r.wasted_cpu_ns, r.violation_ns, r.worst_ns), (0, 0, 0));
        assert_eq!(r.worst_idle_cpus, "");
    }

    #[test]
    fn open_episode_is_closed_at_the_end() {
        let mut c = Conservation::new(2);
        c.update(0, 0, 0, 2, 1, 1);
        c.finish(2_000_000);
        let r = c.report();
        assert_eq!((r.episodes, r.episodes_over_1ms), (1, 1));
        assert_eq!(r.wasted_cpu_ns, 2_000_000);
    }
}
