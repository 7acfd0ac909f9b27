// SPDX-License-Identifier: GPL-2.0

//! EEVDF, the fair class's pick of 6.12.117, on one runqueue's entities.
//!
//! Mirrors `kernel/sched/fair.c` of Debian's 6.12.117: `calc_delta_fair()`,
//! `avg_vruntime()` (with `zero_vruntime` as its reference point),
//! `entity_lag()`, `vruntime_eligible()` / `entity_eligible()`,
//! `pick_eevdf()` with RUN_TO_PARITY's `protect_slice()`,
//! `update_deadline()` and `place_entity()` with PLACE_LAG and
//! PLACE_DEADLINE_INITIAL. The functions here are pure: the simulator
//! (`sim/runqueue.rs`) keeps the entities and calls them where the kernel does
//! (`update_curr()`, `dequeue_entity()`, `enqueue_entity()`,
//! `requeue_delayed_entity()`, `check_preempt_wakeup_fair()`).
//!
//! The kernel keeps the queued entities in a tree ordered by deadline,
//! an entity placed after the ones with an equal deadline; the model keeps
//! them in insertion order and takes the first of equal deadlines, which
//! is the same order. Virtual times are `u64` compared through their
//! signed difference, as the kernel's `(s64)(a - b)`; sums are `i128`, so
//! nothing the kernel keeps in `s64` can overflow here.

/// `NICE_0_LOAD`, scaled down: the weight `calc_delta_fair()` leaves alone.
pub const NICE_0_WEIGHT: u64 = 1024;

/// What EEVDF reads of one `sched_entity`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Se {
    /// `se->vruntime`.
    pub vruntime: u64,
    /// `se->deadline`.
    pub deadline: u64,
    /// `scale_load_down(se->load.weight)`.
    pub weight: u64,
}

/// `(s64)(a - b)`.
fn diff(a: u64, b: u64) -> i64 {
    a.wrapping_sub(b) as i64
}

/// `calc_delta_fair()`: `delta_ns` of real time as virtual time of an
/// entity of `weight`. The kernel's `__calc_delta()` uses a fixed-point
/// inverse weight; for nice 0, the only weight the workloads use, both
/// leave `delta_ns` as it is.
pub fn calc_delta_fair(delta_ns: u64, weight: u64) -> u64 {
    if weight == NICE_0_WEIGHT {
        return delta_ns;
    }
    let v =
        u128::from(delta_ns).saturating_mul(u128::from(NICE_0_WEIGHT)) / u128::from(weight.max(1));
    u64::try_from(v).unwrap_or(u64::MAX)
}

/// `\Sum (v_i - v0) * w_i` and `\Sum w_i` over the queued entities and
/// `curr` (only while it is on the runqueue: pass `None` otherwise).
fn sums(queued: &[Se], curr: Option<Se>, v0: u64) -> (i128, i128) {
    queued
        .iter()
        .chain(curr.iter())
        .fold((0i128, 0i128), |(s, w), e| {
            let wi = i128::from(e.weight);
            (
                s.saturating_add(i128::from(diff(e.vruntime, v0)).saturating_mul(wi)),
                w.saturating_add(wi),
            )
        })
}

/// `avg_vruntime()`: the weighted average vruntime `V`, rounded down (the
/// kernel's "left bias", so that `V` itself is eligible). An empty
/// runqueue leaves `zero_vruntime` where the last call put it; the caller
/// stores the result as the new `zero_vruntime`, as the kernel does.
pub fn avg_vruntime(queued: &[Se], curr: Option<Se>, zero_vruntime: u64) -> u64 {
    let (s, w) = sums(queued, curr, zero_vruntime);
    if w == 0 {
        return zero_vruntime;
    }
    // Floor division: "sign flips effective floor / ceiling".
    let d = s.div_euclid(w);
    zero_vruntime.wrapping_add(d as i64 as u64)
}

/// `vruntime_eligible()`: an entity at `vruntime` has received no more
/// service than it is owed, `V >= v`, tested as the kernel does without
/// the division: `\Sum (v_i - v) * w_i >= 0`.
pub fn vruntime_eligible(queued: &[Se], curr: Option<Se>, vruntime: u64) -> bool {
    Sums::of(queued, curr).eligible(vruntime)
}

/// The sums `vruntime_eligible()` reads, taken once for many tests.
struct Sums {
    s: i128,
    w: i128,
    v0: u64,
}

impl Sums {
    fn of(queued: &[Se], curr: Option<Se>) -> Self {
        let v0 = curr.or(queued.first().copied()).map_or(0, |e| e.vruntime);
        let (s, w) = sums(queued, curr, v0);
        Self { s, w, v0 }
    }

    /// `\Sum (v_i - v) * w_i = \Sum (v_i - v0) * w_i - (v - v0) * W`.
    fn eligible(&self, vruntime: u64) -> bool {
        let shift = i128::from(diff(vruntime, self.v0)).saturating_mul(self.w);
        self.s.saturating_sub(shift) >= 0
    }
}

/// `entity_lag()`: `V - v`, clamped to the virtual time of twice the slice
/// (at least a tick).
pub fn entity_lag(avg: u64, se: Se, slice_ns: u64, tick_ns: u64) -> i64 {
    let limit = calc_delta_fair(slice_ns.saturating_mul(2).max(tick_ns), se.weight);
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    diff(avg, se.vruntime).clamp(limit.saturating_neg(), limit)
}

/// `entity_before()`: the earlier deadline.
fn before(a: Se, b: Se) -> bool {
    diff(a.deadline, b.deadline) < 0
}

/// `pick_eevdf()`'s answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pick {
    /// The running entity stays.
    Curr,
    /// The queued entity at this index.
    Queued(usize),
}

/// `pick_eevdf()`: of `curr` (only if on the runqueue) and the queued
/// entities (in tree order for equal deadlines), the eligible one with
/// the earliest deadline. RUN_TO_PARITY (on in 6.12.117): an eligible
/// `curr` whose slice is still protected (`protect`: picked with the
/// deadline it still has) keeps the CPU.
pub fn pick_eevdf(queued: &[Se], curr: Option<Se>, protect: bool) -> Option<Pick> {
    // "We can safely skip eligibility check if there is only one entity".
    match (curr, queued.len()) {
        (None, 0) => return None,
        (Some(_), 0) => return Some(Pick::Curr),
        (None, 1) => return Some(Pick::Queued(0)),
        _ => {}
    }
    // Eligibility is against the whole runqueue, `curr` included, even
    // when `curr` itself is not a candidate.
    let sums = Sums::of(queued, curr);
    let cand = curr.filter(|c| sums.eligible(c.vruntime));
    if cand.is_some() && protect {
        return Some(Pick::Curr);
    }
    let mut best: Option<(usize, Se)> = None;
    for (i, &e) in queued.iter().enumerate() {
        if best.is_some_and(|(_, b)| !before(e, b)) {
            continue;
        }
        if sums.eligible(e.vruntime) {
            best = Some((i, e));
        }
    }
    match (best, cand) {
        (Some((_, b)), Some(c)) if before(c, b) => Some(Pick::Curr),
        (Some((i, _)), _) => Some(Pick::Queued(i)),
        (None, Some(_)) => Some(Pick::Curr),
        (None, None) => None,
    }
}

/// `update_deadline()`: once `se` has run past its deadline it gets a new
/// request of one slice, and the caller reschedules. Returns the new
/// deadline, or `None` if the current one still holds.
pub fn update_deadline(se: Se, slice_ns: u64) -> Option<u64> {
    if diff(se.vruntime, se.deadline) < 0 {
        return None;
    }
    Some(
        se.vruntime
            .wrapping_add(calc_delta_fair(slice_ns, se.weight)),
    )
}

/// `place_entity()` for an entity of `weight` with saved lag `vlag`,
/// joining a runqueue with `queued` and `curr` (on the runqueue) whose
/// average is `avg`. PLACE_LAG: the lag is inflated by `(W + w) / W` so
/// that it is what the entity has once its own weight is in the average.
/// PLACE_DEADLINE_INITIAL: a new task asks for half a slice. Returns
/// `(vruntime, deadline)`.
pub fn place_entity(
    queued: &[Se],
    curr: Option<Se>,
    avg: u64,
    vlag: i64,
    weight: u64,
    slice_ns: u64,
    initial: bool,
) -> (u64, u64) {
    let mut vslice = calc_delta_fair(slice_ns, weight);
    let load: i128 = queued
        .iter()
        .chain(curr.iter())
        .map(|e| i128::from(e.weight))
        .sum();
    let mut lag = 0i128;
    if load != 0 {
        // div_s64() truncates toward zero.
        lag = i128::from(vlag).saturating_mul(load.saturating_add(i128::from(weight))) / load;
    }
    let lag = i64::try_from(lag).unwrap_or(if lag < 0 { i64::MIN } else { i64::MAX });
    let vruntime = avg.wrapping_sub(lag as u64);
    if initial {
        vslice /= 2;
    }
    (vruntime, vruntime.wrapping_add(vslice))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn se(vruntime: u64, deadline: u64) -> Se {
        Se {
            vruntime,
            deadline,
            weight: NICE_0_WEIGHT,
        }
    }

    /// V is the weighted mean, rounded down, whatever the reference point
    /// (and across a `u64` wrap, as `zero_vruntime` starts at -2^20).
    #[test]
    fn avg_vruntime_is_the_floor_of_the_weighted_mean() {
        let q = [se(10, 0), se(21, 0)];
        assert_eq!(avg_vruntime(&q, None, 0), 15);
        assert_eq!(avg_vruntime(&q, Some(se(0, 0)), 12), 10);
        let heavy = Se {
            vruntime: 40,
            deadline: 0,
            weight: 3 * NICE_0_WEIGHT,
        };
        // (10 + 3 * 40) / 4 = 32.5
        assert_eq!(avg_vruntime(&[se(10, 0)], Some(heavy), 7), 32);
        let z = 0u64.wrapping_sub(1 << 20);
        let q = [se(z.wrapping_sub(3), 0), se(z.wrapping_add(4), 0)];
        assert_eq!(avg_vruntime(&q, None, z), z);
        assert_eq!(avg_vruntime(&[], None, 99), 99, "empty: unchanged");
    }

    /// Eligible is `v <= V`, with `curr` in the average.
    #[test]
    fn eligibility() {
        let q = [se(10 * MS, 0), se(14 * MS, 0)];
        // V = 12 ms.
        assert!(vruntime_eligible(&q, None, 12 * MS));
        assert!(!vruntime_eligible(&q, None, 12 * MS + 1));
        // curr at 24 ms: V = 16 ms, so 14 ms becomes eligible.
        let curr = Some(se(24 * MS, 0));
        assert!(vruntime_eligible(&q, curr, 14 * MS));
        assert!(vruntime_eligible(&q, curr, 16 * MS));
        assert!(!vruntime_eligible(&q, curr, 16 * MS + 1));
    }

    /// Of the eligible entities the earliest deadline wins, not the
    /// smallest vruntime; an ineligible entity with an earlier deadline
    /// loses; equal deadlines go to the one queued first.
    #[test]
    fn earliest_eligible_deadline() {
        // V = 10 ms: entity 2 (11 ms) is not eligible.
        let q = [
            se(8 * MS, 12 * MS),
            se(11 * MS, 9 * MS),
            se(9 * MS, 11 * MS),
            se(12 * MS, 20 * MS),
        ];
        assert_eq!(pick_eevdf(&q, None, false), Some(Pick::Queued(2)));
        let q = [se(10 * MS, 12 * MS), se(10 * MS, 12 * MS)];
        assert_eq!(pick_eevdf(&q, None, false), Some(Pick::Queued(0)));
        // A lone entity is picked without the test.
        assert_eq!(pick_eevdf(&[se(99, 0)], None, false), Some(Pick::Queued(0)));
        assert_eq!(pick_eevdf(&[], Some(se(99, 0)), true), Some(Pick::Curr));
    }

    /// RUN_TO_PARITY: an eligible `curr` with a protected slice keeps the
    /// CPU against an earlier deadline; once its deadline was renewed
    /// (not protected) or it is no longer eligible, EEVDF decides.
    #[test]
    fn run_to_parity() {
        let curr = se(10 * MS, 13 * MS);
        let q = [se(10 * MS, 11 * MS)];
        assert_eq!(pick_eevdf(&q, Some(curr), true), Some(Pick::Curr));
        assert_eq!(pick_eevdf(&q, Some(curr), false), Some(Pick::Queued(0)));
        // curr ahead of V = 11 ms: not eligible, the protection is moot.
        let curr = se(12 * MS, 13 * MS);
        assert_eq!(pick_eevdf(&q, Some(curr), true), Some(Pick::Queued(0)));
        // curr eligible with the earlier deadline stays unprotected too.
        let curr = se(10 * MS, 10 * MS + 1);
        assert_eq!(pick_eevdf(&q, Some(curr), false), Some(Pick::Curr));
    }

    /// `update_deadline()`: nothing before the deadline, a slice past the
    /// vruntime at or after it.
    #[test]
    fn deadline_renewal() {
        let slice = 2_800_000;
        assert_eq!(update_deadline(se(10 * MS - 1, 10 * MS), slice), None);
        assert_eq!(
            update_deadline(se(10 * MS, 10 * MS), slice),
            Some(10 * MS + slice)
        );
        assert_eq!(
            update_deadline(se(11 * MS, 10 * MS), slice),
            Some(11 * MS + slice)
        );
    }

    /// PLACE_LAG: a lag of 1 ms placed on a runqueue of one entity of the
    /// same weight is doubled before placement, so that once the new
    /// entity is in the average its lag is 1 ms again; PLACE_DEADLINE_INITIAL
    /// halves the first request; an empty runqueue places at V.
    #[test]
    fn lag_placement() {
        let slice = 2_800_000;
        let q = [se(20 * MS, 22 * MS)];
        let avg = avg_vruntime(&q, None, 0);
        let (v, d) = place_entity(&q, None, avg, MS as i64, NICE_0_WEIGHT, slice, false);
        assert_eq!((v, d), (18 * MS, 18 * MS + slice));
        let placed = se(v, d);
        let v_after = avg_vruntime(&[q[0], placed], None, 0);
        assert_eq!(entity_lag(v_after, placed, slice, 4 * MS), MS as i64);
        // Negative lag: placed after V.
        let (v, _) = place_entity(&q, None, avg, -(MS as i64), NICE_0_WEIGHT, slice, false);
        assert_eq!(v, 22 * MS);
        // A new task: no lag, half a slice.
        let (v, d) = place_entity(&q, None, avg, 0, NICE_0_WEIGHT, slice, true);
        assert_eq!((v, d), (20 * MS, 20 * MS + slice / 2));
        // Empty: at V, lag or not (nothing to compensate).
        assert_eq!(
            place_entity(&[], None, 5, 77, NICE_0_WEIGHT, slice, false).0,
            5
        );
    }

    /// `entity_lag()` clamps to twice the slice, at least a tick.
    #[test]
    fn lag_is_clamped() {
        let slice = 2_800_000;
        assert_eq!(
            entity_lag(100 * MS, se(0, 0), slice, 4 * MS),
            2 * slice as i64
        );
        assert_eq!(
            entity_lag(0, se(100 * MS, 0), slice, 4 * MS),
            -2 * slice as i64
        );
        assert_eq!(entity_lag(0, se(100 * MS, 0), MS, 4 * MS), -4 * MS as i64);
    }
}
