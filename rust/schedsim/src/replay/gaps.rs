// SPDX-License-Identifier: GPL-2.0

//! Where each of the model's own gaps sits (issue 32: "the gap explained
//! mechanism by mechanism").
//!
//! A goal row (migrations at one level, by one cause; LLC placement)
//! that is neither within 20% of the guest, as far off as the control,
//! nor counting noise is one of the model's own gaps
//! ([`super::report::Census::own`]). A row is a sum of several
//! mechanisms, so this module parts each such row by the measures of
//! the same two runs that replay already takes, and names the part that
//! carries the gap: its *signature*. `Documentation/schedsim.rst`
//! ("The own gaps by signature") gives each signature its mechanism,
//! measured; [`Signature::ALL`] is the one list the report and that
//! section's test read.
//!
//! How a row is parted:
//!
//! - **Balancing moves** at a level are the moves of four balancers
//!   that the record tells apart by the CPU that logged them
//!   ([`Puller`]): the newidle balance, a busy CPU's periodic balance, an
//!   idle CPU's, an active balance's push (and the NOHZ balancer's, on
//!   another CPU's behalf). The gap sits with the balancer whose count
//!   differs most the row's way. For the busy CPUs, which pull only
//!   from an overloaded group and only as much load as the imbalance
//!   they computed, `/proc/schedstat`'s `lb_imbalance` over the
//!   balances that found one says which half it is: an imbalance
//!   smaller than the guest's (less to move: the state the balance
//!   met), or one as large (what `detach_tasks()` could take of it).
//! - **Wakeup moves** at a level are the task wakeups times the moves
//!   per wakeup. Where the count of wakeups is farther from the guest's
//!   (by the log of the ratio), the gap is the wakes replay lost ("Replay
//!   loses wakeups one way": a wake that finds its wakee not yet blocked
//!   is a token, and no wakeup). Else the moves per wakeup are parted by
//!   where the waker sat relative to the wakee's previous CPU (the
//!   *seat*: on it, or across which level), as a shift-share: the seats'
//!   shares changed at the guest's odds of a move from each (the state
//!   the decision met), and the odds changed at the model's shares (the
//!   decision, `wake_affine()` and `select_idle_sibling()`). The part
//!   that moves the rate the row's way carries the gap.
//! - **LLC placement** is already a share of the wakeups: the same
//!   shift-share of the odds of landing in the waker's LLC.
//!
//! A signature locates a gap; it is not the mechanism. That the model
//! spreads hackbench's tasks more evenly than the guest, so that its
//! busy CPUs find a smaller imbalance, is a finding of the traces
//! ("The balancers' own counts"); this module only says which rows it
//! accounts for.

use super::compare::Replayed;
use super::metrics::{Metrics, Puller};
use super::report::{self, mean_imbalance, Row, TOLERANCE};
use std::fmt::Write as _;

/// Where an own gap sits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Signature {
    /// Busy CPUs' pulls, their balances finding an imbalance smaller than
    /// the guest's (below `1 - TOLERANCE` of its mean).
    BusyImbalance,
    /// Busy CPUs' pulls, the imbalance found as large as the guest's:
    /// what the balance could detach of it.
    BusyDetach,
    /// The newidle balance's pulls (STEAL's among them).
    Newidle,
    /// Idle CPUs' periodic pulls.
    Idle,
    /// Active balances' pushes.
    Active,
    /// Moves neither CPU logged: the NOHZ idle balancer's.
    Nohz,
    /// Wakeups: how many the model's tasks made of the guest's (the
    /// wakes replay lost), farther off than the moves per wakeup.
    Wakeups,
    /// Wakeups: where the waker sat relative to the wakee's previous CPU.
    WakerSeat,
    /// Wakeups: given where the waker sat, how many the decision moved.
    WakeDecision,
    /// None of the above can be read: the guest's trace lacks the
    /// measure (a trace without `/proc/schedstat`), or no part differs
    /// the row's way.
    Unplaced,
}

impl Signature {
    /// Every signature, in the report's order.
    pub const ALL: [Signature; 10] = [
        Signature::BusyImbalance,
        Signature::BusyDetach,
        Signature::Newidle,
        Signature::Idle,
        Signature::Active,
        Signature::Nohz,
        Signature::Wakeups,
        Signature::WakerSeat,
        Signature::WakeDecision,
        Signature::Unplaced,
    ];

    /// The name the report prints and `schedsim.rst` gives its
    /// mechanism under.
    pub fn name(self) -> &'static str {
        match self {
            Signature::BusyImbalance => "busy balance, smaller imbalance",
            Signature::BusyDetach => "busy balance, same imbalance",
            Signature::Newidle => "newidle balance",
            Signature::Idle => "idle balance",
            Signature::Active => "active balance",
            Signature::Nohz => "NOHZ balancer",
            Signature::Wakeups => "the wakeups replayed",
            Signature::WakerSeat => "where the waker sat",
            Signature::WakeDecision => "the wakeup decision",
            Signature::Unplaced => "unplaced",
        }
    }
}

/// How far a ratio is from 1, either way.
fn far(ratio: f64) -> f64 {
    if ratio == 0.0 {
        f64::INFINITY
    } else {
        ratio.ln().abs()
    }
}

/// Per task wakeup, what a wakeup row counts, parted by seat: for each
/// seat (`Metrics::seat_wakes`' index) its wakes and those of them the
/// row counts.
type Parts = Vec<(u64, u64)>;

/// The wakeup moves at level `k` by seat.
fn moves_at(m: &Metrics, k: usize) -> Parts {
    m.seat_wakes
        .iter()
        .zip(&m.seat_moves)
        .map(|(&n, moves)| (n, moves.get(k).copied().unwrap_or(0)))
        .collect()
}

/// The wakes placed in the waker's LLC, by seat.
fn in_llc(m: &Metrics) -> Parts {
    m.seat_wakes
        .iter()
        .copied()
        .zip(m.seat_in_llc.iter().copied())
        .collect()
}

/// A shift-share of the per-wakeup rate `Σ share(s) · p(s)` between the
/// guest's parts `g` and the model's `m` (wakes `(n, x)` by seat `s`,
/// `share(s) = n / Σ n`, `p(s) = x / n`): (the part the seats' shares
/// make, at the guest's odds; the part the odds make, at the model's
/// shares). The two add up to the difference of the rates.
fn shift_share(g: &Parts, m: &Parts) -> (f64, f64) {
    let total = |v: &Parts| v.iter().map(|&(n, _)| n).sum::<u64>().max(1) as f64;
    let (tg, tm) = (total(g), total(m));
    let odds = |(n, x): (u64, u64)| if n == 0 { 0.0 } else { x as f64 / n as f64 };
    let mut seat = 0.0;
    let mut decision = 0.0;
    for (&gs, &ms) in g.iter().zip(m) {
        let (sg, sm) = (gs.0 as f64 / tg, ms.0 as f64 / tm);
        // A seat the guest never had has no odds of its own: the model's
        // stand for them, so that its wakes there count as the seat's.
        let pg = if gs.0 == 0 { odds(ms) } else { odds(gs) };
        seat += (sm - sg) * pg;
        decision += sm * (odds(ms) - pg);
    }
    (seat, decision)
}

/// [`Signature::WakerSeat`] or [`Signature::WakeDecision`]: the part of
/// the shift-share that carries the gap the row's way (`low`: the
/// model's rate is below the guest's), the larger where both do.
fn seat_or_decision(g: &Parts, m: &Parts, low: bool) -> Signature {
    let (seat, decision) = shift_share(g, m);
    let way = |x: f64| if low { -x } else { x };
    if way(seat) >= way(decision) {
        Signature::WakerSeat
    } else {
        Signature::WakeDecision
    }
}

/// A wakeup row's signature: the wakeups themselves where their count is
/// farther from the guest's than the moves per wakeup are, else the seat
/// or the decision.
fn wake_signature(g: &Metrics, m: &Metrics, k: usize) -> Signature {
    let (gp, mp) = (moves_at(g, k), moves_at(m, k));
    let rate = |v: &Parts, w: u64| v.iter().map(|&(_, x)| x).sum::<u64>() as f64 / w.max(1) as f64;
    let (rg, rm) = (rate(&gp, g.task_wakeups), rate(&mp, m.task_wakeups));
    let count = if g.task_wakeups == 0 {
        f64::INFINITY
    } else {
        m.task_wakeups as f64 / g.task_wakeups as f64
    };
    let per_wakeup = if rg == 0.0 {
        if rm == 0.0 {
            1.0
        } else {
            f64::INFINITY
        }
    } else {
        rm / rg
    };
    if far(count) >= far(per_wakeup) {
        Signature::Wakeups
    } else {
        seat_or_decision(&gp, &mp, rm < rg)
    }
}

/// The signature of `row` of the replay `r`, if it is one of the model's
/// own gaps (a goal row neither within, as the control, nor noise).
pub fn signature(r: &Replayed, row: &Row) -> Option<Signature> {
    if !report::graded(&row.metric) || row.within || row.as_control || row.noise {
        return None;
    }
    let (g, m) = (&r.guest, &r.model);
    let levels = &g.migrations.levels;
    let low = row.model < row.guest;
    if row.metric == "wakeups in waker's LLC" {
        // A share of the wakeups already: no count to part.
        return Some(seat_or_decision(&in_llc(g), &in_llc(m), low));
    }
    let mut words = row.metric.split(' ');
    let (Some("migrations"), Some(cause), Some(level)) = (words.next(), words.next(), words.next())
    else {
        return Some(Signature::Unplaced);
    };
    let Some(k) = levels.iter().position(|l| *l == level) else {
        return Some(Signature::Unplaced);
    };
    match cause {
        "wakeup" => Some(wake_signature(g, m, k)),
        "balance" => {
            let (Some(gb), Some(mb)) = (g.balance_by.get(k), m.balance_by.get(k)) else {
                return Some(Signature::Unplaced);
            };
            // The puller whose count differs most the row's way.
            let by = Puller::ALL
                .into_iter()
                .map(|p| {
                    let d = mb[p as usize] as i64 - gb[p as usize] as i64;
                    (p, if low { -d } else { d })
                })
                .filter(|&(_, d)| d > 0)
                .max_by_key(|&(_, d)| d)
                .map(|(p, _)| p);
            Some(match by {
                Some(Puller::Busy) => {
                    let guest = r.balance_guest.as_ref();
                    match (
                        guest.and_then(|b| mean_imbalance(b, "busy", level)),
                        mean_imbalance(&r.balance_model, "busy", level),
                    ) {
                        (Some(gi), Some(mi)) if gi > 0.0 && mi / gi < 1.0 - TOLERANCE => {
                            Signature::BusyImbalance
                        }
                        (Some(_), Some(_)) => Signature::BusyDetach,
                        _ => Signature::Unplaced,
                    }
                }
                Some(Puller::Newidle) => Signature::Newidle,
                Some(Puller::Idle) => Signature::Idle,
                Some(Puller::Active) => Signature::Active,
                Some(Puller::Other) => Signature::Nohz,
                None => Signature::Unplaced,
            })
        }
        _ => Some(Signature::Unplaced),
    }
}

/// Every own gap of `all`, with its trace and signature.
pub fn own_gaps(all: &[Replayed]) -> Vec<(&Replayed, Row, Signature)> {
    all.iter()
        .flat_map(|r| {
            report::rows(r)
                .into_iter()
                .filter_map(move |row| signature(r, &row).map(|s| (r, row, s)))
        })
        .collect()
}

/// The own gaps by signature and topology, as the report's lines.
pub fn table(all: &[Replayed]) -> String {
    let gaps = own_gaps(all);
    let mut topologies: Vec<&str> = all.iter().map(|r| r.topology.as_str()).collect();
    topologies.sort_unstable();
    topologies.dedup();
    let mut s = format!(
        "the model's own gaps by where they sit (replay::gaps; each signature's mechanism: \
         Documentation/schedsim.rst, \"The own gaps by signature\"): {}\n",
        gaps.len()
    );
    let _ = write!(s, "   {:<34} {:>5}", "signature", "rows");
    for t in &topologies {
        let _ = write!(s, " {t:>8}");
    }
    s.push('\n');
    for sig in Signature::ALL {
        let of: Vec<_> = gaps.iter().filter(|(_, _, s)| *s == sig).collect();
        let _ = write!(s, "   {:<34} {:>5}", sig.name(), of.len());
        for t in &topologies {
            let n = of.iter().filter(|(r, _, _)| r.topology == *t).count();
            let _ = write!(s, " {n:>8}");
        }
        s.push('\n');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn a_ratio_is_as_far_either_way_and_zero_infinitely() {
        assert!((far(0.5) - far(2.0)).abs() < 1e-12);
        assert_eq!(far(1.0), 0.0);
        assert_eq!(far(0.0), f64::INFINITY);
    }

    /// A replay on two levels (MC, the LLC; PKG above it) whose guest
    /// made 100 balancing moves at MC, 60 of them by busy CPUs.
    fn replay() -> Replayed {
        let mut r = Replayed {
            topology: "numa2".into(),
            ..Replayed::default()
        };
        for m in [&mut r.guest, &mut r.model] {
            m.migrations.levels = vec!["MC", "PKG"];
            m.migrations.wakeup = vec![0, 0];
            m.migrations.balance = vec![0, 0];
            m.migrations.fork = vec![0, 0];
            m.llc_levels = 1;
            m.balance_by = vec![[0; 5]; 2];
        }
        r.guest.migrations.balance[0] = 100;
        r.guest.balance_by[0] = [30, 60, 10, 0, 0];
        r
    }

    fn row_of(r: &Replayed, metric: &str) -> Row {
        report::rows(r)
            .into_iter()
            .find(|x| x.metric == metric)
            .unwrap()
    }

    /// The balancer that differs most the row's way carries it; for the
    /// busy CPUs, the imbalance they found says which half.
    #[test]
    fn a_balancing_gap_sits_with_the_balancer_that_differs_most() {
        let mut r = replay();
        r.model.migrations.balance[0] = 50;
        r.model.balance_by[0] = [40, 5, 5, 0, 0];
        let set = |b: &mut BTreeMap<String, u64>, count, balanced, imbalance| {
            b.insert("lb_count_busy@MC".into(), count);
            b.insert("lb_balanced_busy@MC".into(), balanced);
            b.insert("lb_imbalance_busy@MC".into(), imbalance);
        };
        // No schedstat from the guest: the busy balance's half is unread.
        let row = row_of(&r, "migrations balance MC");
        assert_eq!(signature(&r, &row), Some(Signature::Unplaced));
        let mut g = BTreeMap::new();
        set(&mut g, 100, 50, 50_000);
        r.balance_guest = Some(g);
        set(&mut r.balance_model, 100, 50, 20_000);
        assert_eq!(signature(&r, &row), Some(Signature::BusyImbalance));
        set(&mut r.balance_model, 100, 60, 39_000);
        assert_eq!(
            signature(&r, &row),
            Some(Signature::BusyDetach),
            "975 of 1000"
        );
        // Too many moves: the newidle balance's ten more carry it, not
        // the busy CPUs' fewer.
        r.model.migrations.balance[0] = 150;
        r.model.balance_by[0] = [100, 40, 10, 0, 0];
        let row = row_of(&r, "migrations balance MC");
        assert_eq!(signature(&r, &row), Some(Signature::Newidle));
        r.model.balance_by[0] = [30, 40, 20, 60, 0];
        assert_eq!(signature(&r, &row), Some(Signature::Active));
        // A row within 20% is no gap at all.
        r.model.migrations.balance[0] = 110;
        let row = row_of(&r, "migrations balance MC");
        assert_eq!(signature(&r, &row), None);
    }

    /// One run's wakes for [`a_wakeup_gap_sits_with_the_wakeups_the_seat_or_the_decision`]:
    /// task wakeups, then by seat (on the previous CPU, across MC, across
    /// PKG) the wakes, the moves at PKG and those placed in the waker's
    /// LLC.
    type Wakes = (u64, [u64; 3], [u64; 3], [u64; 3]);

    fn set(m: &mut Metrics, (wakeups, seats, moves_pkg, llc): Wakes) {
        m.task_wakeups = wakeups;
        m.seat_wakes = seats.to_vec();
        m.seat_moves = moves_pkg.iter().map(|&x| vec![0, x]).collect();
        m.seat_in_llc = llc.to_vec();
        m.in_waker_llc = llc.iter().sum();
        m.migrations.wakeup[1] = moves_pkg.iter().sum();
    }

    /// A wakeup gap sits with the wakeups, the seat or the decision:
    /// whichever moves the row the most.
    #[test]
    fn a_wakeup_gap_sits_with_the_wakeups_the_seat_or_the_decision() {
        const PKG: &str = "migrations wakeup PKG";
        const LLC: &str = "wakeups in waker's LLC";
        // Of the guest's 1000 wakes, 200 with the waker across PKG, half
        // of those moved into its LLC.
        const GUEST: Wakes = (1000, [600, 200, 200], [0, 0, 100], [600, 200, 100]);
        // The guest's wakers across PKG got into their LLC a tenth of
        // the time; and another guest, whose wakers sat across PKG most.
        const TENTH: Wakes = (1000, [600, 200, 200], [0, 0, 100], [600, 200, 20]);
        const FAR: Wakes = (1000, [200, 100, 700], [0, 0, 350], [200, 100, 70]);
        let cases: [(&str, Wakes, Wakes, Signature); 5] = [
            // As many across PKG, a quarter moved.
            (
                PKG,
                GUEST,
                (1000, [600, 200, 200], [0, 0, 50], [600, 200, 50]),
                Signature::WakeDecision,
            ),
            // Half as many across PKG, each moved as the guest's.
            (
                PKG,
                GUEST,
                (1000, [700, 200, 100], [0, 0, 50], [700, 200, 50]),
                Signature::WakerSeat,
            ),
            // Half the wakeups, each as the guest's: the wakes replay lost.
            (
                PKG,
                GUEST,
                (500, [300, 100, 100], [0, 0, 50], [300, 100, 50]),
                Signature::Wakeups,
            ),
            // LLC placement reads the odds of landing in the waker's LLC:
            // the model's wakers sit across PKG more often.
            (LLC, TENTH, FAR, Signature::WakerSeat),
            // The same seats, six times the odds across PKG.
            (
                LLC,
                FAR,
                (1000, [200, 100, 700], [0, 0, 350], [200, 100, 420]),
                Signature::WakeDecision,
            ),
        ];
        for (metric, guest, model, want) in cases {
            let mut r = replay();
            set(&mut r.guest, guest);
            set(&mut r.model, model);
            let row = row_of(&r, metric);
            assert_eq!(signature(&r, &row), Some(want), "{metric}: {model:?}");
        }
    }

    /// The two parts of a shift-share add up to the change of the rate.
    #[test]
    fn a_shift_share_adds_up() {
        let g: Parts = vec![(600, 60), (300, 30), (100, 50)];
        let m: Parts = vec![(200, 40), (500, 25), (300, 90)];
        let (seat, decision) = shift_share(&g, &m);
        let rate = |v: &Parts| {
            v.iter().map(|p| p.1).sum::<u64>() as f64 / v.iter().map(|p| p.0).sum::<u64>() as f64
        };
        assert!((seat + decision - (rate(&m) - rate(&g))).abs() < 1e-12);
        assert!(seat > 0.0, "more wakes where moves are likelier");
    }

    /// Each signature has its mechanism in the doc the report points to,
    /// under its own name.
    #[test]
    fn each_signature_has_its_mechanism_in_the_doc() {
        let doc = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../Documentation/schedsim.rst"
        ))
        .unwrap();
        let (_, section) = doc
            .split_once("The own gaps by signature\n")
            .expect("the section the report names");
        let section = section.split("\n=====").next().unwrap_or(section);
        for sig in Signature::ALL {
            assert!(
                section.contains(&format!("**{}**", sig.name())),
                "{} has no bullet",
                sig.name()
            );
        }
    }
}
