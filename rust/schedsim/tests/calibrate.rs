// SPDX-License-Identifier: GPL-2.0

//! The fast form of `make calibrate`: one guest experiment (llc16, STEAL,
//! `hackbench -g 1 -l 80`) from the guest numbers the models were fitted
//! to (`tests/data/guest-bench-2026-12-02.json`: that experiment and the
//! buddy pair's, from `make bench`'s run of 2026-12-01/02 on the plain
//! kernel as it then was, with lockdep), simulated for 2 s with seed 1.
//! A later run's `Documentation/results/bench.json` times another kernel
//! (no lockdep since issue 31); refitting to it is issue 32's.
//!
//! Tolerance, stated and checked: hackbench's time agrees (inside the
//! guest's 95% interval of the median) in both states and is within 15% of
//! the guest's median; periodic busy balances (`lb_count_busy`) per second
//! are within 25% of the guest's median in both states. And the check can
//! fail: the unfitted hackbench model (20 us a message, 8 deep) and a
//! doctored guest (every time tripled) are both reported as disagreeing.

use schedsim::calibrate::{calibrate, parse_guest, Calibration, HackbenchModel, Opts, Row};

fn guest_json() -> String {
    let p = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/guest-bench-2026-12-02.json"
    );
    std::fs::read_to_string(p).expect("tests/data/guest-bench-2026-12-02.json")
}

fn opts() -> Opts {
    Opts {
        topology: Some("llc16".into()),
        experiment: Some("hb1_steal_llc16".into()),
        seeds: 1,
        max_ms: 2_000,
        ..Opts::default()
    }
}

fn row<'a>(cal: &'a Calibration, state: &str, metric: &str) -> &'a Row {
    cal.rows
        .iter()
        .find(|r| r.state == state && r.metric == metric)
        .unwrap_or_else(|| panic!("no row {state} {metric}"))
}

#[test]
fn hackbench_on_llc16_agrees_within_the_stated_tolerance() {
    let guest = parse_guest(&guest_json()).unwrap();
    let cal = calibrate(&guest, &opts()).unwrap();
    for state in ["off", "on"] {
        let t = row(&cal, state, "time_s");
        assert!(
            t.agrees,
            "{state} time_s: {} outside {:?}",
            t.sim,
            t.guest.interval()
        );
        let q = t.ratio().unwrap();
        assert!(
            (0.85..=1.15).contains(&q),
            "{state} time_s: sim/guest {q:.3}"
        );
        let b = row(&cal, state, "lb_count_busy_per_s");
        let q = b.ratio().unwrap();
        assert!(
            (0.75..=1.25).contains(&q),
            "{state} lb_count_busy_per_s: sim/guest {q:.3}"
        );
    }
    // The STEAL state has the module's counters beside schedstat's.
    assert!(cal
        .rows
        .iter()
        .any(|r| r.state == "on" && r.metric == "steal_calls_per_s"));
    let (ok, n) = cal.summary();
    assert!(ok >= 3 && ok < n, "{ok} of {n}");
}

#[test]
fn a_wrong_model_or_a_doctored_guest_disagrees() {
    let guest = parse_guest(&guest_json()).unwrap();
    let wrong = Opts {
        hackbench: HackbenchModel {
            send_us: 20,
            recv_us: 20,
            queue: 8,
        },
        ..opts()
    };
    let cal = calibrate(&guest, &wrong).unwrap();
    assert!(
        !row(&cal, "off", "time_s").agrees,
        "20 us a message cannot take the guest's time"
    );

    let mut doctored = guest.clone();
    for e in &mut doctored {
        for mets in e.states.values_mut() {
            if let Some(m) = mets.get_mut("time_s") {
                m.median *= 3.0;
                m.samples.iter_mut().for_each(|x| *x *= 3.0);
                m.ci95 = m.ci95.map(|(lo, hi)| (lo * 3.0, hi * 3.0));
            }
        }
    }
    let cal = calibrate(&doctored, &opts()).unwrap();
    assert!(!row(&cal, "off", "time_s").agrees && !row(&cal, "on", "time_s").agrees);
}

/// The buddy pair (x5472, `pingpong 3000`) with its fitted work per message
/// (`FIT_BUDDY_WORK_US`): round trips a second inside the guest's interval
/// in both states, and the idle entries and wakeups each round trip brings
/// within 25% of the guest's. With the model's native 20 us a message the
/// pair runs about 11 times as many round trips as the guest.
#[test]
fn the_buddy_pair_on_x5472_agrees_within_the_stated_tolerance() {
    let guest = parse_guest(&guest_json()).unwrap();
    let o = Opts {
        topology: Some("x5472".into()),
        experiment: Some("buddy_llc2".into()),
        seeds: 1,
        ..Opts::default()
    };
    let cal = calibrate(&guest, &o).unwrap();
    for state in ["off", "on"] {
        let r = row(&cal, state, "rounds_per_s");
        assert!(
            r.agrees,
            "{state} rounds_per_s: {} outside {:?}",
            r.sim,
            r.guest.interval()
        );
        for m in ["sched_goidle_per_s", "ttwu_count_per_s"] {
            let q = row(&cal, state, m).ratio().unwrap();
            assert!((0.75..=1.25).contains(&q), "{state} {m}: sim/guest {q:.3}");
        }
    }
}

/// The guest document is read into types: a field calibration needs that
/// is missing is an error naming it, not an empty string or a skipped
/// metric; another document says its format.
#[test]
fn guest_json_fields_are_required() {
    let ok = r#"{"format": "sched-lb-rs bench 1", "topologies": {"smt2": {"experiments": {"e": {
        "kind": "flag", "flag": "STEAL", "command": "/bin/x",
        "states": {"off": {"metrics": {"time_s": {"samples": [1.0, 2.0], "median": 1.5, "ci95": null}}}}}}}}}"#;
    let g = parse_guest(ok).unwrap();
    assert_eq!(g.len(), 1);
    let m = &g[0].states["off"]["time_s"];
    assert_eq!((m.median, m.ci95, m.interval()), (1.5, None, (1.0, 2.0)));
    let no_command = ok.replace(r#""command": "/bin/x","#, "");
    let e = parse_guest(&no_command).unwrap_err();
    assert!(e.contains("command"), "{e}");
    let no_median = ok.replace(r#""median": 1.5, "#, "");
    let e = parse_guest(&no_median).unwrap_err();
    assert!(e.contains("median"), "{e}");
    let e = parse_guest(r#"{"format": "other 2"}"#).unwrap_err();
    assert!(e.contains("format 'other 2'"), "{e}");
}
