// SPDX-License-Identifier: GPL-2.0

//! What Linux 6.12 decides, named by the series' flags: the value of each
//! `sched_feat` flag of `kunit/flags` under which a rule of this crate
//! gives 6.12's own answer.
//!
//! The series' defaults in `kernel/sched/features.h` are these values
//! (its cover letter: "every flag at its default is 6.12"), and the test
//! below holds the two together. For seed 000 and seed 001, whose changes
//! 6.12 already carries, "stock" is the flag on (off selects the older
//! rule the thread replaced); every other flag is off in stock.
//!
//! Why the rule under these flags is 6.12's answer, not merely close to
//! it: `rust/cref`'s differential tests run each rule with these flags
//! against the C of the 6.12 tree (the idle-CPU test, `detach_tasks()`'s
//! load test, the `imbalance_pct` test, the newidle stop test and the
//! balance interval), over 10^6 inputs with no mismatch allowed. That is
//! what lets [`verdict`](super::verdict) count "differs from stock"
//! without asking the kernel.

/// The flags whose 6.12 behaviour is "on". Every other flag of
/// `kunit/flags` is off in 6.12.
pub const ON_IN_6_12: &[&str] = &[
    "BALANCE_IDLE_CPUS",
    "LB_RELAX_FAILED",
    "LB_REDUCED_IMBALANCE_PCT",
    "LB_BUSY_INTERVAL_DEC",
];

/// Whether `flag` is on in stock 6.12 (usable in `const` items, which is
/// how the module builds each hook's stock flags).
pub const fn is_on(flag: &str) -> bool {
    let mut i = 0;
    while i < ON_IN_6_12.len() {
        if same(ON_IN_6_12[i].as_bytes(), flag.as_bytes()) {
            return true;
        }
        i += 1;
    }
    false
}

/// Byte-wise string equality in a `const fn`.
const fn same(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::*;
    use std::format;
    use std::string::{String, ToString};
    use std::vec::Vec;

    /// Each series flag's default as the series leaves `features.h`: the
    /// last `+SCHED_FEAT(NAME, true|false)` line of the patches, in
    /// `patches/series` order, that no later patch removes.
    fn series_defaults() -> Vec<(String, bool)> {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../patches");
        let list = std::fs::read_to_string(format!("{dir}/series")).unwrap();
        let mut defaults: Vec<(String, bool)> = Vec::new();
        for patch in list
            .lines()
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
        {
            let text = std::fs::read_to_string(format!("{dir}/{patch}")).unwrap();
            for line in text.lines() {
                let (added, rest) = match line.as_bytes().first() {
                    Some(b'+') => (true, &line[1..]),
                    Some(b'-') => (false, &line[1..]),
                    _ => continue,
                };
                let Some(args) = rest.strip_prefix("SCHED_FEAT(") else {
                    continue;
                };
                let Some((name, value)) = args.trim_end_matches(')').split_once(',') else {
                    continue;
                };
                let (name, value) = (name.trim().to_string(), value.trim() == "true");
                defaults.retain(|(n, _)| *n != name);
                if added {
                    defaults.push((name, value));
                }
            }
        }
        defaults
    }

    #[test]
    fn stock_is_the_series_default_of_every_flag() {
        let series = series_defaults();
        let flags = include_str!("../../../kunit/flags");
        for name in flags.lines() {
            let (_, default) = series
                .iter()
                .find(|(n, _)| n == name)
                .unwrap_or_else(|| panic!("{name}: no SCHED_FEAT() line in patches/"));
            assert_eq!(is_on(name), *default, "{name}");
        }
        for name in ON_IN_6_12 {
            assert!(flags.lines().any(|l| l == *name), "{name} is not a flag");
        }
    }

    #[test]
    fn names_match_whole() {
        assert!(is_on("LB_RELAX_FAILED"));
        assert!(!is_on("LB_RELAX_FAILE"));
        assert!(!is_on("LB_RELAX_FAILED_"));
        assert!(!is_on("STEAL"));
        assert!(!is_on(""));
    }
}
