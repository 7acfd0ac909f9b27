// SPDX-License-Identifier: GPL-2.0

//! The qualitative direction of each seed's experiment, on short runs.
//!
//! Each test names the thread it follows; the tolerances are justified in
//! `Documentation/schedsim.rst` ("Regression tests"). They assert a
//! direction with a margin well inside the spread seen over seeds in the
//! full runs, never a thread's number.

use schedsim::experiments::{self, mean_sd, run_variant, Opts, Variant, STOCK};
use schedsim::flags::PreferSibling;

fn quick() -> Opts {
    Opts {
        quick: true,
        ..Opts::default()
    }
}

/// Guittot 2020: with 11 threads on 2x4 the 6-vs-5 split is under
/// 125% and over 117%, so the series' rules must raise min/max work.
#[test]
fn fairness_11_threads_improves_with_the_series() {
    let (_, rows) = experiments::fairness(&quick()).unwrap();
    let get = |n: u32, mode: &str| {
        let r = rows
            .iter()
            .find(|r| r.threads == n && r.mode == mode)
            .unwrap();
        mean_sd(&r.ratios).0
    };
    let (before, after) = (get(11, "v5.9 switches"), get(11, STOCK));
    assert!(
        after > before + 5.0,
        "11 threads: {before:.1}% -> {after:.1}%"
    );
    // 9 threads: the model does not reproduce the thread's gain (see the
    // docs); the series must at least not make it worse beyond the spread
    // between seeds.
    let (b9, a9) = (get(9, "v5.9 switches"), get(9, STOCK));
    assert!(a9 + 5.0 >= b9, "9 threads: {b9:.1}% -> {a9:.1}%");
}

/// Galbraith 2016: with v4.8's SD_PREFER_SIBLING placement the +2
/// threshold stops the pair from being split; with 6.12's, the
/// prefer-sibling path decides first and the flag changes nothing.
#[test]
fn buddy_pair_llc2_threshold() {
    let (_, rows) = experiments::buddy(&quick()).unwrap();
    let get = |p: &str, l: &str| {
        rows.iter()
            .find(|r| r.prefer.starts_with(p) && r.label.starts_with(l))
            .unwrap()
            .clone()
    };
    let stock48 = get("v4.8", "stock");
    let llc2_48 = get("v4.8", "BALANCE_IDLE_LLC2");
    assert!(stock48.splits >= 2.0, "{stock48:?}");
    assert!(
        llc2_48.splits * 4.0 <= stock48.splits,
        "{llc2_48:?} vs {stock48:?}"
    );
    assert!(llc2_48.msgs_per_s >= stock48.msgs_per_s);
    let stock612 = get("6.12", "stock");
    let llc2_612 = get("6.12", "BALANCE_IDLE_LLC2");
    assert_eq!(stock612.splits, llc2_612.splits);
}

/// Zijlstra's RFC 06/11 (2018): SIS_PROP bounds the scan where SIS_UTIL
/// is off, so it reads fewer CPUs per scan than no limit at all once the
/// machine is busy; AGE+ONCE shrink it further.
#[test]
fn sis_prop_bounds_the_scan() {
    let run = |f: &str| {
        run_variant("xeon2x22", "hackbench:10", &Variant::new("x", f), 1, 150, 0).unwrap()
    };
    let none = run("-SIS_UTIL");
    let prop = run("-SIS_UTIL,+SIS_PROP");
    let age = run("-SIS_UTIL,+SIS_PROP,+SIS_AGE,+SIS_ONCE");
    let per_scan =
        |r: &schedsim::RunResult| r.stats.sis_scan_cpus as f64 / r.stats.sis_scans.max(1) as f64;
    assert!(
        per_scan(&prop) < per_scan(&none),
        "{} vs {}",
        per_scan(&prop),
        per_scan(&none)
    );
    assert!(
        per_scan(&age) < per_scan(&prop),
        "{} vs {}",
        per_scan(&age),
        per_scan(&prop)
    );
}

/// Low 2013 and Jain 2018: both rules only ever stop the walk earlier, so with
/// the per-level costs they balance fewer domains and spend less on
/// newidle balancing. The backoff alone has no direction one short run can
/// show: 200 ms of hackbench:4 is bimodal on both machines (at HZ 250 with
/// NI_RANDOM, stock's newidle cost varies 2.4x between seeds), and in the
/// full runs the backoff is within the spread of stock. Its count's latch
/// is tested in the policy crate (`newidle_streak`); here it must still
/// balance, per walk, at least a quarter as many domains as stock.
#[test]
fn newidle_rules_cut_the_walk() {
    let (_, rows) = experiments::newidle(&quick()).unwrap();
    for topo in ["8socket", "xeon2x22"] {
        let get = |l: &str| {
            rows.iter()
                .find(|r| r.topo == topo && r.label == l)
                .unwrap()
        };
        let stock = get(STOCK);
        for l in ["SD_MIGRATION_COST", "both"] {
            let r = get(l);
            assert!(
                r.cost_pct < stock.cost_pct,
                "{topo} {l}: {} vs {}",
                r.cost_pct,
                stock.cost_pct
            );
        }
        let per_walk = |r: &experiments::NewidleRow| r.domains as f64 / r.walks.max(1) as f64;
        let r = get("NEWIDLE_BACKOFF");
        assert!(
            per_walk(r) > 0.25 * per_walk(stock),
            "{topo} NEWIDLE_BACKOFF: {} domains per walk vs {}",
            per_walk(r),
            per_walk(stock)
        );
        assert!(get("both").domains < stock.domains);
    }
}

/// Sistare 2018: STEAL steals on a 2-node machine, and a steal, tried
/// first, leaves fewer newidle walks; on 8 nodes `should_steal()` refuses,
/// so the run is the stock run event for event. Utilisation has no
/// direction one short run shows: with EEVDF's DELAY_DEQUEUE, 200 ms of
/// hackbench:2 already reaches the second node in stock's seed 1 (89%
/// busy), which STEAL, keeping its pulls inside the LLC, never does.
#[test]
fn steal_and_its_node_limit() {
    let (_, rows) = experiments::steal(&quick()).unwrap();
    let get = |t: &str, l: &str| rows.iter().find(|r| r.topo == t && r.label == l).unwrap();
    let off = get("xeon2x22", STOCK);
    let on = get("xeon2x22", "STEAL");
    assert!(on.steals > 0);
    assert!(on.walks < off.walks, "{} vs {}", on.walks, off.walks);
    let off8 = get("8socket", STOCK);
    let on8 = get("8socket", "STEAL");
    assert_eq!(on8.steals, 0);
    assert_eq!(on8.trace, off8.trace);
    assert!(get("8socket", "STEAL, node limit ignored").steals > 0);
}

#[test]
fn prefer_sibling_knob_reaches_the_domains() {
    let mut v = Variant::new("x", "");
    let a = run_variant("x5472", "buddy:1", &v, 1, 2000, 0).unwrap();
    v.knobs.prefer_sibling = PreferSibling::SmtOnly;
    v.flags = "+BALANCE_IDLE_LLC2".into();
    let b = run_variant("x5472", "buddy:1", &v, 1, 2000, 0).unwrap();
    assert_ne!(a.trace_hash, b.trace_hash);
}
