// SPDX-License-Identifier: GPL-2.0

//! Determinism: a seed in, the same trace and numbers out.
//!
//! Mirrors no kernel code; this is the simulator's own contract
//! (`Documentation/schedsim.rst`, "Determinism").

use schedsim::flags::Flags;
use schedsim::topology::Topology;
use schedsim::workload::Workload;
use schedsim::{report, run, Config};

fn cfg(topo: &str, wl: &str, seed: u64, ms: u64, flags: &str) -> Config {
    let mut c = Config::new(
        Topology::preset(topo).unwrap(),
        Workload::parse(wl).unwrap(),
        seed,
        ms * 1_000_000,
    );
    let mut f = Flags::default();
    f.apply(flags).unwrap();
    c.flags = f;
    c
}

#[test]
fn same_seed_same_trace_and_bytes() {
    for (topo, wl, flags) in [
        ("2x4", "fairness:9", ""),
        (
            "qemu8",
            "hackbench:1:4+buddy:1",
            "+SIS_PROP,+SIS_AGE,+SIS_ONCE,+SIS_FOLD,+STEAL",
        ),
        (
            "x5472",
            "periodic:6:300:700",
            "+NEWIDLE_BACKOFF,+SD_MIGRATION_COST",
        ),
    ] {
        let a = run(cfg(topo, wl, 7, 300, flags));
        let b = run(cfg(topo, wl, 7, 300, flags));
        assert_eq!(a.trace_hash, b.trace_hash, "{topo} {wl}");
        assert_eq!(report::to_json(&a), report::to_json(&b), "{topo} {wl}");
        assert_eq!(report::to_table(&a), report::to_table(&b));
    }
}

#[test]
fn different_seed_different_trace() {
    // Always-running tasks only diverge once the seeded tick order has
    // decided a balancing race differently, which takes a few seconds.
    let a = run(cfg("2x4", "fairness:9", 1, 3000, ""));
    let b = run(cfg("2x4", "fairness:9", 2, 3000, ""));
    assert_ne!(a.trace_hash, b.trace_hash);
    let a = run(cfg("qemu8", "hackbench:1:4", 1, 100, ""));
    let b = run(cfg("qemu8", "hackbench:1:4", 2, 100, ""));
    assert_ne!(a.trace_hash, b.trace_hash);
}

#[test]
fn flags_change_the_trace() {
    let a = run(cfg("qemu8", "hackbench:1:4", 3, 100, ""));
    let b = run(cfg("qemu8", "hackbench:1:4", 3, 100, "-SIS_UTIL"));
    assert_ne!(a.trace_hash, b.trace_hash);
}

#[test]
fn plots_are_deterministic_too() {
    let mut c = cfg("2x4", "fairness:9", 5, 200, "");
    c.samples = 50;
    let a = schedsim::svg::render(&run(c.clone())).unwrap();
    let b = schedsim::svg::render(&run(c)).unwrap();
    assert_eq!(a, b);
    assert!(a.starts_with("<svg") && a.trim_end().ends_with("</svg>"));
}
