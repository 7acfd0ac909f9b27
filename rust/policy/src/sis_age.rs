// SPDX-License-Identifier: GPL-2.0

//! The predicted idle time that sizes `select_idle_cpu()`'s scan:
//! "[RFC 02/11] sched/fair: Age the average idle time" (SIS_AGE) and
//! "[RFC 03/11] sched/fair: Only use time once" (SIS_ONCE), Peter
//! Zijlstra, 2018.
//!
//! `rq->avg_idle` only changes when the CPU goes idle, so a busy CPU kept
//! sizing its scans from an idle period long past. SIS_AGE keeps a second
//! estimate, `wake_avg`, set to `avg_idle / 2` when the CPU wakes from
//! idle, and halves it for every jiffy that passes before the next scan:
//!
//! ```c
//! while (this_rq->wake_stamp < now && this_rq->wake_avg) {
//!         this_rq->wake_stamp++;
//!         this_rq->wake_avg >>= 1;
//! }
//! ```
//!
//! SIS_ONCE then takes each scan's time out of `wake_avg`, so one idle
//! period pays for all the wakeups until the next one. The RFC measured
//! hackbench improving with both (40 groups: 10.48 s -> 9.76 s).
//!
//! The loop is replaced by its closed form, which is bounded: it runs
//! `min(elapsed jiffies, bit length of wake_avg)` times, so the result is
//! one saturating shift. Unlike `wake_stamp < now`, the elapsed time is
//! computed as a wrapping difference, so aging keeps working across a
//! `jiffies` wrap-around (`time_after()` semantics); a stamp in the future
//! (elapsed negative as a signed value) ages nothing.

/// `(wake_avg_ns, wake_stamp)` after aging to `now_jiffies`.
pub fn age_wake_avg(wake_avg_ns: u64, wake_stamp: u64, now_jiffies: u64) -> (u64, u64) {
    let elapsed = now_jiffies.wrapping_sub(wake_stamp);
    if (elapsed as i64) <= 0 || wake_avg_ns == 0 {
        return (wake_avg_ns, wake_stamp);
    }
    // The C loop stops as soon as wake_avg reaches 0, leaving the stamp
    // behind: after bit-length shifts any value is 0.
    let bit_len = u64::from(u64::BITS - wake_avg_ns.leading_zeros());
    let shifts = elapsed.min(bit_len);
    let aged = wake_avg_ns.checked_shr(shifts as u32).unwrap_or(0);
    (aged, wake_stamp.wrapping_add(shifts))
}

/// Before the RFC, SIS_PROP divided `avg_idle` by this: "due to large
/// variance we need a large fuzz factor".
pub const AVG_IDLE_FUZZ: u64 = 512;

/// The idle time the scan may spend: `wake_avg` with SIS_AGE, else the
/// pre-RFC `avg_idle / AVG_IDLE_FUZZ`.
pub fn predicted_idle_ns(sis_age: bool, wake_avg_ns: u64, avg_idle_ns: u64) -> u64 {
    if sis_age {
        wake_avg_ns
    } else {
        avg_idle_ns / AVG_IDLE_FUZZ
    }
}

/// SIS_ONCE: `wake_avg` after a scan that took `scan_time_ns`.
pub fn spend_wake_avg(wake_avg_ns: u64, scan_time_ns: u64) -> u64 {
    wake_avg_ns.saturating_sub(scan_time_ns)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The RFC's loop, for comparison where `stamp < now` means what it
    /// should (no wrap).
    fn rfc_loop(mut avg: u64, mut stamp: u64, now: u64) -> (u64, u64) {
        while stamp < now && avg != 0 {
            stamp += 1;
            avg >>= 1;
        }
        (avg, stamp)
    }

    #[test]
    fn halves_per_jiffy() {
        assert_eq!(age_wake_avg(1000, 10, 10), (1000, 10));
        assert_eq!(age_wake_avg(1000, 10, 11), (500, 11));
        assert_eq!(age_wake_avg(1000, 10, 13), (125, 13));
        // 1000 has 10 bits: zero after 10 jiffies, stamp left there.
        assert_eq!(age_wake_avg(1000, 10, 1_000_000), (0, 20));
        assert_eq!(age_wake_avg(0, 10, 1_000_000), (0, 10));
    }

    #[test]
    fn survives_jiffies_wrap() {
        // Stamp 2 jiffies before the wrap, now 3 after it: 5 elapsed.
        let stamp = u64::MAX - 1;
        assert_eq!(age_wake_avg(1 << 20, stamp, 3), (1 << 15, 3));
        // The RFC's `stamp < now` would not age at all here.
        assert_eq!(rfc_loop(1 << 20, stamp, 3), (1 << 20, stamp));
        // A stamp in the future ages nothing.
        assert_eq!(age_wake_avg(1 << 20, 100, 90), (1 << 20, 100));
    }

    #[test]
    fn once_spends_the_idle_time() {
        let mut w = 10_000;
        for _ in 0..4 {
            w = spend_wake_avg(w, 3000);
        }
        assert_eq!(w, 0);
        assert_eq!(spend_wake_avg(5000, 3000), 2000);
    }

    #[test]
    fn predicted_idle_switch() {
        assert_eq!(predicted_idle_ns(true, 7, 512_000), 7);
        assert_eq!(predicted_idle_ns(false, 7, 512_000), 1000);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(20_000))]

        #[test]
        fn equals_the_rfc_loop(avg in any::<u64>(), stamp in 0u64..1 << 40, d in 0u64..200) {
            prop_assert_eq!(age_wake_avg(avg, stamp, stamp + d), rfc_loop(avg, stamp, stamp + d));
        }

        #[test]
        fn total_and_never_grows(avg in any::<u64>(), stamp in any::<u64>(), now in any::<u64>()) {
            let (a, _) = age_wake_avg(avg, stamp, now);
            prop_assert!(a <= avg);
        }
    }
}
