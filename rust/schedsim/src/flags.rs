// SPDX-License-Identifier: GPL-2.0

//! The `sched_feat` flags of the series, and the per-domain knobs.
//!
//! Mirrors the `SCHED_FEAT()` lines the patches add to
//! `kernel/sched/features.h` (the series' flags, `kunit/flags`), with the same
//! defaults, plus the stock 6.12.117 features the model reads, with
//! theirs: `DELAY_DEQUEUE` (on), `LB_MIN` (off), `WA_IDLE`, `WA_WEIGHT`
//! and `WA_BIAS` (on), `NI_RANDOM` (on) and `SIS_UTIL` (on). With
//! every flag at its default the simulated kernel is 6.12.117 as the
//! project boots it, the series' policies off: "6.12.117 stock" in the
//! experiments, NI_RANDOM on.
//!
//! Knobs are what the kernel exposes per domain in debugfs rather than as
//! flags (`busy_factor`, `imbalance_pct`), plus one simulator-only knob,
//! `prefer_sibling`, for the topology flags of the kernels the 2016 thread
//! ran (Galbraith 2016, see `Documentation/schedsim.rst`).

/// The flag table: one line per flag, `field = "KERNEL_NAME", default`,
/// with its doc. From it come [`Flags`], its `Default`, [`FLAG_NAMES`]
/// and the lookup by name, so a flag is written once.
macro_rules! flags {
    ($($(#[doc = $doc:literal])+ $field:ident = $name:literal, $default:literal;)+) => {
        /// The flags, by kernel name.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub struct Flags {
            $($(#[doc = $doc])+ pub $field: bool,)+
        }

        impl Default for Flags {
            fn default() -> Self {
                Self { $($field: $default,)+ }
            }
        }

        /// Every flag name, in the table's order.
        pub const FLAG_NAMES: &[&str] = &[$($name),+];

        impl Flags {
            fn slot(&mut self, name: &str) -> Option<&mut bool> {
                Some(match name {
                    $($name => &mut self.$field,)+
                    _ => return None,
                })
            }
        }
    };
}

// The stock features that come before the series' in `features.h`
// (`DELAY_DEQUEUE`, `LB_MIN`, the `WA_*` three, `NI_RANDOM`), then the series' in the order
// its patches add them, with stock `SIS_UTIL` among the SIS flags it
// combines with.
flags! {
    /// `DELAY_DEQUEUE` (stock 6.12.117, default on): a task that blocks
    /// while not eligible stays queued until picked or woken.
    delay_dequeue = "DELAY_DEQUEUE", true;
    /// `LB_MIN` (stock 6.12.117, default off): `detach_tasks()` skips
    /// tasks of load below 16 until balancing has failed once.
    lb_min = "LB_MIN", false;
    /// `WA_IDLE` (stock 6.12.117, default on): `wake_affine()` asks
    /// `wake_affine_idle()` first (an idle waker's CPU or previous CPU,
    /// or a sync waker alone on its CPU).
    wa_idle = "WA_IDLE", true;
    /// `WA_WEIGHT` (stock 6.12.117, default on): where `wake_affine_idle()`
    /// gave no answer, `wake_affine_weight()` compares the two CPUs' loads.
    wa_weight = "WA_WEIGHT", true;
    /// `WA_BIAS` (stock 6.12.117, default on): `wake_affine_weight()`
    /// leans towards the previous CPU by half the domain's
    /// `imbalance_pct`.
    wa_bias = "WA_BIAS", true;
    /// `NI_RANDOM` (stock 6.12.117, default on): newidle balancing of a
    /// domain runs with a probability that follows its success rate.
    ni_random = "NI_RANDOM", true;
    /// `BALANCE_IDLE_CPUS` (Galbraith 2016).
    balance_idle_cpus = "BALANCE_IDLE_CPUS", true;
    /// `BALANCE_IDLE_LLC2` (Galbraith 2016).
    balance_idle_llc2 = "BALANCE_IDLE_LLC2", false;
    /// `LB_RELAX_FAILED` (Guittot 2020 1/4).
    lb_relax_failed = "LB_RELAX_FAILED", true;
    /// `LB_REDUCED_IMBALANCE_PCT` (Guittot 2020 2/4).
    lb_reduced_imbalance_pct = "LB_REDUCED_IMBALANCE_PCT", true;
    /// `LB_BUSY_INTERVAL_DEC` (Guittot 2020 3/4).
    lb_busy_interval_dec = "LB_BUSY_INTERVAL_DEC", true;
    /// `NEWIDLE_BACKOFF` (Low 2013).
    newidle_backoff = "NEWIDLE_BACKOFF", false;
    /// `SD_MIGRATION_COST` (Jain 2018).
    sd_migration_cost = "SD_MIGRATION_COST", false;
    /// `SIS_PROP` (Zijlstra's RFC 2018).
    sis_prop = "SIS_PROP", false;
    /// `SIS_UTIL` (stock 6.12.117, default on).
    sis_util = "SIS_UTIL", true;
    /// `SIS_AGE` (Zijlstra's RFC 2018).
    sis_age = "SIS_AGE", false;
    /// `SIS_ONCE` (Zijlstra's RFC 2018).
    sis_once = "SIS_ONCE", false;
    /// `SIS_FOLD` (Zijlstra's RFC 2018).
    sis_fold = "SIS_FOLD", false;
    /// `STEAL` (Sistare 2018).
    steal = "STEAL", false;
}

impl Flags {
    /// Value of a flag by name.
    pub fn get(&self, name: &str) -> Option<bool> {
        let mut c = *self;
        c.slot(name).map(|b| *b)
    }

    /// Applies a comma-separated list: `+FLAG` or `FLAG` sets, `-FLAG` or
    /// `NO_FLAG` clears (the debugfs spelling). Names are case-insensitive.
    pub fn apply(&mut self, list: &str) -> Result<(), String> {
        for item in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let upper = item.to_ascii_uppercase();
            let (on, name) = if let Some(n) = upper.strip_prefix('+') {
                (true, n)
            } else if let Some(n) = upper.strip_prefix('-') {
                (false, n)
            } else if let Some(n) = upper.strip_prefix("NO_") {
                (false, n)
            } else {
                (true, upper.as_str())
            };
            match self.slot(name) {
                Some(b) => *b = on,
                None => {
                    return Err(format!(
                        "unknown flag '{item}'; known: {}",
                        FLAG_NAMES.join(", ")
                    ))
                }
            }
        }
        Ok(())
    }

    /// The flags that differ from the defaults, as `+X,-Y`.
    pub fn diff_from_default(&self) -> String {
        let d = Flags::default();
        FLAG_NAMES
            .iter()
            .filter(|n| self.get(n) != d.get(n))
            .map(|n| format!("{}{n}", if self.get(n) == Some(true) { '+' } else { '-' }))
            .collect::<Vec<_>>()
            .join(",")
    }
}

/// Which levels carry `SD_PREFER_SIBLING`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PreferSibling {
    /// 6.12 `sd_init()`: every level but NUMA.
    All,
    /// v4.8 (Galbraith's kernel in 2016): only SMT domains had it, so
    /// only their parents spread by `prefer_sibling`.
    SmtOnly,
}

/// Per-domain values the kernel exposes in debugfs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Knobs {
    /// `busy_factor` of every domain (6.12: 16; v5.9: 32).
    pub busy_factor: u32,
    /// `imbalance_pct` of the levels above the LLC (6.12: 117; v5.9: 125).
    pub imbalance_pct_above_llc: u32,
    /// Where `SD_PREFER_SIBLING` is set.
    pub prefer_sibling: PreferSibling,
    /// Simulator-only: v5.9's active balance. Its `need_active_balance()`
    /// kicked after `cache_nice_tries + 2` failures whatever the migration
    /// type (5.10 and later: only `migrate_task`), and the kick set
    /// `nr_balance_failed` to `cache_nice_tries + 1` (6.12 has no such
    /// line: `active_load_balance_cpu_stop()` resets it to 0 once it has
    /// pushed a task).
    pub active_balance_v5_9: bool,
}

impl Default for Knobs {
    fn default() -> Self {
        Self {
            busy_factor: 16,
            imbalance_pct_above_llc: 117,
            prefer_sibling: PreferSibling::All,
            active_balance_v5_9: false,
        }
    }
}

impl Knobs {
    /// Applies `name=value` pairs separated by commas.
    pub fn apply(&mut self, list: &str) -> Result<(), String> {
        for item in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (k, v) = item
                .split_once('=')
                .ok_or_else(|| format!("bad knob '{item}': expected name=value"))?;
            let num = || -> Result<u32, String> {
                v.parse::<u32>()
                    .map_err(|_| format!("bad value '{v}' for knob '{k}': expected a number"))
            };
            match k {
                "busy_factor" => self.busy_factor = num()?,
                "imbalance_pct" => {
                    let n = num()?;
                    if !(100..=1000).contains(&n) {
                        return Err(format!("imbalance_pct {n} out of range 100..=1000"));
                    }
                    self.imbalance_pct_above_llc = n;
                }
                "prefer_sibling" => {
                    self.prefer_sibling = match v {
                        "all" => PreferSibling::All,
                        "smt-only" => PreferSibling::SmtOnly,
                        _ => {
                            return Err(format!(
                                "bad value '{v}' for prefer_sibling: expected all or smt-only"
                            ))
                        }
                    }
                }
                "active_balance" => {
                    self.active_balance_v5_9 = match v {
                        "6.12" => false,
                        "v5.9" => true,
                        _ => {
                            return Err(format!(
                                "bad value '{v}' for active_balance: expected 6.12 or v5.9"
                            ))
                        }
                    }
                }
                _ => {
                    return Err(format!(
                        "unknown knob '{k}'; known: busy_factor, imbalance_pct, prefer_sibling, active_balance"
                    ))
                }
            }
        }
        Ok(())
    }

    /// v5.9-rc1, before Guittot's series: busy_factor 32, imbalance_pct
    /// 125 (what the kernel can A/B per domain).
    pub fn v5_9() -> Self {
        Self {
            busy_factor: 32,
            imbalance_pct_above_llc: 125,
            ..Self::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Stock 6.12.117 features the model reads (not the series' flags).
    const STOCK: &[&str] = &[
        "DELAY_DEQUEUE",
        "LB_MIN",
        "WA_IDLE",
        "WA_WEIGHT",
        "WA_BIAS",
        "NI_RANDOM",
        "SIS_UTIL",
    ];

    /// `kunit/flags` is the one list of the series' flags; the simulator
    /// adds only stock 6.12.117 features, each of them in the kernel's
    /// `features.h`.
    #[test]
    fn names_are_kunit_flags_plus_stock_ones() {
        let series: Vec<&str> = include_str!("../../../kunit/flags").lines().collect();
        let ours: Vec<&str> = FLAG_NAMES
            .iter()
            .copied()
            .filter(|n| !STOCK.contains(n))
            .collect();
        assert_eq!(ours, series);
        for n in STOCK {
            assert!(FLAG_NAMES.contains(n), "{n}");
        }
        for name in FLAG_NAMES {
            Flags::default().apply(name).unwrap();
        }
    }

    /// The simulator's default for every flag of `kunit/flags` is the one
    /// the series gives it (a default slipped through twice before this):
    /// `policy::stock`, which the policy crate's tests hold to the last
    /// `SCHED_FEAT()` line of each flag in `patches/`, and by which the
    /// module judges what differs from stock.
    #[test]
    fn defaults_follow_the_series_features_h() {
        let f = Flags::default();
        for name in include_str!("../../../kunit/flags").lines() {
            let want = sched_lb_policy::stock::is_on(name);
            assert_eq!(f.get(name), Some(want), "{name}'s default");
        }
    }

    #[test]
    fn defaults_are_the_series_defaults() {
        let f = Flags::default();
        // 6.12.117's features.h: SCHED_FEAT(DELAY_DEQUEUE, true),
        // SCHED_FEAT(LB_MIN, false), SCHED_FEAT(WA_IDLE, true),
        // SCHED_FEAT(WA_WEIGHT, true), SCHED_FEAT(WA_BIAS, true),
        // SCHED_FEAT(NI_RANDOM, true), SCHED_FEAT(SIS_UTIL, true).
        assert!(!f.lb_min && f.ni_random && f.delay_dequeue);
        assert!(f.wa_idle && f.wa_weight && f.wa_bias);
        assert!(f.balance_idle_cpus && f.lb_relax_failed && f.lb_busy_interval_dec && f.sis_util);
        assert!(!f.balance_idle_llc2 && !f.newidle_backoff && !f.sd_migration_cost);
        assert!(!f.sis_prop && !f.sis_age && !f.sis_once && !f.sis_fold && !f.steal);
        assert_eq!(f.diff_from_default(), "");
    }

    #[test]
    fn parse_plus_minus_and_no_prefix() {
        let mut f = Flags::default();
        f.apply("+STEAL,-SIS_UTIL, NO_LB_RELAX_FAILED,sis_fold")
            .unwrap();
        assert!(f.steal && !f.sis_util && !f.lb_relax_failed && f.sis_fold);
        assert_eq!(
            f.diff_from_default(),
            "-LB_RELAX_FAILED,-SIS_UTIL,+SIS_FOLD,+STEAL"
        );
        let e = f.apply("+WARP_DRIVE").unwrap_err();
        assert!(e.contains("WARP_DRIVE") && e.contains("SIS_PROP"));
    }

    #[test]
    fn knobs() {
        let mut k = Knobs::default();
        k.apply("busy_factor=32,imbalance_pct=125,prefer_sibling=smt-only")
            .unwrap();
        assert_eq!(k.busy_factor, 32);
        assert_eq!(k.imbalance_pct_above_llc, 125);
        assert_eq!(k.prefer_sibling, PreferSibling::SmtOnly);
        assert!(k.apply("busy_factor=x").is_err());
        assert!(k.apply("imbalance_pct=50").is_err());
        assert!(k.apply("nope=1").is_err());
        assert!(k.apply("nope").is_err());
    }
}
