// SPDX-License-Identifier: GPL-2.0

//! The paired on/off comparison of one metric, as
//! `scripts/bench_report.py` computes it for the guest.
//!
//! No kernel code is mirrored. `paired_stats()`, `t_quantile()`,
//! `t_two_sided_p()`, `betai()` and `_betacf()` of `bench_report.py` are
//! mirrored: each repetition ran its off and on runs back to back, so the
//! runs are analysed as pairs. With every value positive the ratio is the
//! geometric mean of the pairs' ratios and the interval the paired t
//! interval of their logarithms; otherwise (a counter that read 0 in some
//! run) it is `mean(on) / mean(off)` with the paired t interval of the
//! differences scaled by the off mean. `bench.json` keeps the samples, not
//! these results, so calibration computes them from the samples the same
//! way (`Documentation/results/generated.rst` has the script's numbers to
//! check them against). `lgamma()`, which Python's `math` has and Rust's
//! `std` has not, is the Lanczos approximation.

/// `bench_report.py`'s MIN_RUNS_CI: fewer pairs give no interval.
pub const MIN_RUNS_CI: usize = 5;

/// The interval's level, as `bench.json`'s `"interval"`.
const LEVEL: f64 = 0.95;

/// One metric's paired comparison.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Paired {
    /// Pairs.
    pub n: usize,
    /// On over off; None when the off values are all 0.
    pub ratio: Option<f64>,
    /// The paired t 95% interval of the ratio; None with `ratio`.
    pub ci95: Option<(f64, f64)>,
}

impl Paired {
    /// Whether the interval lies clear of 1.0 (an effect seen, unadjusted).
    pub fn excludes_one(&self) -> bool {
        self.ci95.is_some_and(|(lo, hi)| lo > 1.0 || hi < 1.0)
    }
}

/// The per-pair differences the ratio is built from, and the base that
/// scales them: log ratios (base 1) when every value is positive, else
/// on - off scaled by the off mean.
fn differences(pairs: &[(f64, f64)]) -> (Vec<f64>, f64, bool) {
    let logs = pairs.iter().all(|&(x, y)| x > 0.0 && y > 0.0);
    if logs {
        (
            pairs.iter().map(|&(x, y)| (y / x).ln()).collect(),
            1.0,
            true,
        )
    } else {
        let off: Vec<f64> = pairs.iter().map(|&(x, _)| x).collect();
        (
            pairs.iter().map(|&(x, y)| y - x).collect(),
            mean(&off),
            false,
        )
    }
}

fn mean(v: &[f64]) -> f64 {
    if v.is_empty() {
        0.0
    } else {
        v.iter().sum::<f64>() / v.len() as f64
    }
}

/// The ratio from a mean difference, by the method `differences()` chose.
fn to_ratio(d: f64, base: f64, logs: bool) -> f64 {
    if logs {
        d.exp()
    } else {
        1.0 + d / base
    }
}

/// The on/off ratio of pairs without an interval (the model's, over its
/// seeds, which may be fewer than MIN_RUNS_CI): the same estimate as
/// [`paired`]. `f64::INFINITY` when the off values are all 0 and some on
/// value is not; None when every value is 0 or there are no pairs.
pub fn point_ratio(pairs: &[(f64, f64)]) -> Option<f64> {
    if pairs.is_empty() {
        return None;
    }
    let (d, base, logs) = differences(pairs);
    if !logs && base == 0.0 {
        let on: f64 = pairs.iter().map(|&(_, y)| y).sum();
        return (on > 0.0).then_some(f64::INFINITY);
    }
    Some(to_ratio(mean(&d), base, logs))
}

/// `bench_report.py`'s `paired_stats()`: None with fewer than
/// MIN_RUNS_CI pairs.
pub fn paired(pairs: &[(f64, f64)]) -> Option<Paired> {
    let n = pairs.len();
    if n < MIN_RUNS_CI {
        return None;
    }
    let (d, base, logs) = differences(pairs);
    if !logs && base == 0.0 {
        return Some(Paired {
            n,
            ratio: None,
            ci95: None,
        });
    }
    let m = mean(&d);
    let var = d.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n - 1) as f64;
    let se = var.sqrt() / (n as f64).sqrt();
    let tc = t_quantile(1.0 - (1.0 - LEVEL) / 2.0, (n - 1) as f64);
    let (a, b) = (
        to_ratio(m - tc * se, base, logs),
        to_ratio(m + tc * se, base, logs),
    );
    Some(Paired {
        n,
        ratio: Some(to_ratio(m, base, logs)),
        // A negative off mean (never, for counters) would swap the ends.
        ci95: Some((a.min(b), a.max(b))),
    })
}

/// ln Γ(x) for x > 0: Lanczos, g = 7, 9 terms (about 15 digits), with
/// the reflection formula below 1/2.
fn lgamma(x: f64) -> f64 {
    const G: f64 = 7.0;
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - lgamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut a = C[0];
    let t = x + G + 0.5;
    for (i, c) in C.iter().enumerate().skip(1) {
        a += c / (x + i as f64);
    }
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

/// `_betacf()`: the continued fraction of the regularised incomplete beta
/// function (modified Lentz), as Numerical Recipes' `betacf`.
fn betacf(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let floor = |v: f64| if v.abs() > TINY { v } else { TINY };
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 / floor(1.0 - qab * x / qap);
    let mut h = d;
    for m in 1..300 {
        let m = f64::from(m);
        let m2 = 2.0 * m;
        let aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1.0 / floor(1.0 + aa * d);
        c = floor(1.0 + aa / c);
        h *= d * c;
        let aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1.0 / floor(1.0 + aa * d);
        c = floor(1.0 + aa / c);
        let delta = d * c;
        h *= delta;
        if (delta - 1.0).abs() < 1e-15 {
            break;
        }
    }
    h
}

/// `betai()`: the regularised incomplete beta function I_x(a, b).
fn betai(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let lbeta = lgamma(a + b) - lgamma(a) - lgamma(b);
    let front = (lbeta + a * x.ln() + b * (1.0 - x).ln()).exp();
    if x < (a + 1.0) / (a + b + 2.0) {
        front * betacf(a, b, x) / a
    } else {
        1.0 - front * betacf(b, a, 1.0 - x) / b
    }
}

/// `t_two_sided_p()`: P(|T| >= |t|) for Student's t with `df` degrees of
/// freedom.
fn t_two_sided_p(t: f64, df: f64) -> f64 {
    betai(df / 2.0, 0.5, df / (df + t * t))
}

/// `t_quantile()`: the q quantile (q > 0.5) of Student's t, by the same
/// bisection on `t_two_sided_p()`.
fn t_quantile(q: f64, df: f64) -> f64 {
    let (mut lo, mut hi) = (0.0f64, 1000.0f64);
    for _ in 0..200 {
        let mid = (lo + hi) / 2.0;
        if 1.0 - t_two_sided_p(mid, df) / 2.0 < q {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (lo + hi) / 2.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t_quantiles_are_the_tables() {
        // Student's t, 97.5%: df 1, 4, 9, 30.
        for (df, t) in [(1.0, 12.706), (4.0, 2.776), (9.0, 2.262), (30.0, 2.042)] {
            assert!((t_quantile(0.975, df) - t).abs() < 1e-3, "df {df}");
        }
        assert!((lgamma(5.0) - 24f64.ln()).abs() < 1e-12);
        assert!((lgamma(0.5) - std::f64::consts::PI.sqrt().ln()).abs() < 1e-12);
    }

    /// `bench_report.py`'s numbers for the same pairs (python3:
    /// `paired_stats([(1,1.1),(2,2.3),(3,3.1),(4,4.5),(5,5.2)])` gives
    /// ratio 1.08869, interval 1.02641-1.15474; with a 0 in an off
    /// run the ratio of means 1.2, interval 0.97330-1.42670).
    #[test]
    fn as_bench_report_computes_it() {
        let p = paired(&[(1.0, 1.1), (2.0, 2.3), (3.0, 3.1), (4.0, 4.5), (5.0, 5.2)]).unwrap();
        let (lo, hi) = p.ci95.unwrap();
        assert!((p.ratio.unwrap() - 1.08869).abs() < 1e-5, "{p:?}");
        assert!(
            (lo - 1.02641).abs() < 1e-5 && (hi - 1.15474).abs() < 1e-5,
            "{p:?}"
        );
        let p = paired(&[(0.0, 1.0), (2.0, 2.0), (3.0, 4.0), (4.0, 4.0), (6.0, 7.0)]).unwrap();
        let (lo, hi) = p.ci95.unwrap();
        assert!((p.ratio.unwrap() - 1.2).abs() < 1e-9, "{p:?}");
        assert!(
            (lo - 0.97330).abs() < 1e-5 && (hi - 1.42670).abs() < 1e-5,
            "{p:?}"
        );
        assert!(paired(&[(1.0, 1.0); 4]).is_none());
        let zero = paired(&[(0.0, 3.0); 5]).unwrap();
        assert_eq!((zero.ratio, zero.ci95), (None, None));
        assert_eq!(point_ratio(&[(0.0, 3.0)]), Some(f64::INFINITY));
        assert_eq!(point_ratio(&[(0.0, 0.0)]), None);
        assert_eq!(point_ratio(&[(2.0, 1.0), (0.0, 1.0)]), Some(1.0));
    }
}
