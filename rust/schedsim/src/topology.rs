// SPDX-License-Identifier: GPL-2.0

//! Machines and their scheduling domains, built as
//! `kernel/sched/topology.c` of Linux 6.12 builds them.
//!
//! - The topology table is x86's and arm64's default one: SMT (SMT
//!   siblings, `SD_SHARE_CPUCAPACITY | SD_SHARE_LLC`), MC (the LLC,
//!   `SD_SHARE_LLC`), PKG (`cpu_cpu_mask()`, the node), then one NUMA level
//!   spanning the machine when it has more than one node (`SD_NUMA`,
//!   `SD_SERIALIZE`, no `SD_PREFER_SIBLING`).
//! - `sd_init()` gives each level `min_interval` = span weight ms,
//!   `max_interval` = twice that, `balance_interval` = `min_interval`,
//!   `busy_factor` 16 and `imbalance_pct` 117 (Guittot's 2/4 and 4/4, seed
//!   001), then 110 on SMT; `cache_nice_tries` is 0 on SMT, 1 on MC and
//!   PKG, 2 on NUMA.
//! - Groups (`build_sched_groups()`) are the child level's spans, the
//!   local group first, then in `for_each_cpu_wrap()` order from the CPU;
//!   the lowest level's groups are single CPUs.
//! - `cpu_attach_domain()` drops a parent whose span equals its child's
//!   (handing `SD_PREFER_SIBLING` down) and a bottom level of one CPU.
//! - `imb_numa_nr` as `build_sched_domains()` computes it, `sd_llc_size`
//!   from the highest `SD_SHARE_LLC` domain.
//!
//! A NUMA machine here has one distance tier (every remote node at the
//! same distance), so the NUMA level never has the overlapping groups of
//! `build_overlap_sched_groups()`; that is stated in the docs.

use crate::cpumask::CpuMask;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// `SD_SHARE_CPUCAPACITY`: SMT siblings.
pub const SD_SHARE_CPUCAPACITY: u32 = 1 << 0;
/// `SD_SHARE_LLC`: the domain shares a last-level cache.
pub const SD_SHARE_LLC: u32 = 1 << 1;
/// `SD_PREFER_SIBLING`: spread tasks to sibling groups first.
pub const SD_PREFER_SIBLING: u32 = 1 << 2;
/// `SD_NUMA`: the domain crosses NUMA nodes.
pub const SD_NUMA: u32 = 1 << 3;
/// `SD_SERIALIZE`: one CPU at a time balances it.
pub const SD_SERIALIZE: u32 = 1 << 4;

// SD_MIGRATION_COST's cost of each level, in ns: the defaults of patch
// 0009's `sched_lb_migration_cost_ns[]` (`kernel/sched/lb_hooks.c`,
// debugfs `migration_cost_ns/{smt,llc,pkg,numa}`), after Jain's RFC
// (2018). `tests/patch_defaults.rs` reads them out of the patch, so a
// change on either side fails the tests.

/// SMT level (`SD_SHARE_CPUCAPACITY`): 0, the siblings share every cache.
pub const MIGRATION_COST_SMT_NS: u64 = 0;
/// LLC level (`SD_SHARE_LLC`): 50 us.
pub const MIGRATION_COST_LLC_NS: u64 = 50_000;
/// PKG level (any other level below NUMA): 50 us, the LLC's. Jain's RFC
/// left it at 0; the series does not, because a PKG domain that is not the
/// LLC joins several LLCs, and a pull across it loses at least what a pull
/// inside one LLC does (0 would let the walk reach further at PKG than at
/// the LLC below it).
pub const MIGRATION_COST_PKG_NS: u64 = 50_000;
/// NUMA level (`SD_NUMA`): 500 us (the thread caught it written as
/// 5000 us).
pub const MIGRATION_COST_NUMA_NS: u64 = 500_000;

/// Topology level a domain was built from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum LevelKind {
    /// SMT siblings.
    Smt,
    /// The LLC ("multi-core").
    Mc,
    /// The package / node.
    Pkg,
    /// Across NUMA nodes.
    Numa,
}

impl LevelKind {
    /// The name `sched_domain_debug()` prints.
    pub fn name(self) -> &'static str {
        match self {
            LevelKind::Smt => "SMT",
            LevelKind::Mc => "MC",
            LevelKind::Pkg => "PKG",
            LevelKind::Numa => "NUMA",
        }
    }
}

/// How CPU numbers map to threads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Numbering {
    /// The threads of a core are consecutive (arm64, QEMU).
    Consecutive,
    /// x86 firmware order: first thread of every core of every node, then
    /// the second threads, and so on (siblings are `n` and `n + cores`).
    X86,
}

/// A machine description.
#[derive(Clone, Debug)]
pub struct MachineSpec {
    /// Preset name.
    pub name: &'static str,
    /// One-line description for the docs and `--help`.
    pub about: &'static str,
    /// NUMA nodes.
    pub nodes: u32,
    /// LLCs per node.
    pub llcs_per_node: u32,
    /// Cores per LLC.
    pub cores_per_llc: u32,
    /// Hardware threads per core.
    pub threads_per_core: u32,
    /// CPU numbering.
    pub numbering: Numbering,
}

/// The presets of issue 7.
pub const PRESETS: &[MachineSpec] = &[
    MachineSpec {
        name: "2x4",
        about: "Guittot's arm64 board (Guittot 2020): 2 clusters x 4 cores, no SMT",
        nodes: 1,
        llcs_per_node: 2,
        cores_per_llc: 4,
        threads_per_core: 1,
        numbering: Numbering::Consecutive,
    },
    MachineSpec {
        name: "x5472",
        about: "Galbraith's Xeon X5472 (Galbraith 2016): 4 L2s x 2 cores, sd_llc_size 2",
        nodes: 1,
        llcs_per_node: 4,
        cores_per_llc: 2,
        threads_per_core: 1,
        numbering: Numbering::Consecutive,
    },
    MachineSpec {
        name: "xeon2x22",
        about: "2 sockets x 22 cores x SMT2 = 88 CPUs (Jain 2018, Sistare 2018)",
        nodes: 2,
        llcs_per_node: 1,
        cores_per_llc: 22,
        threads_per_core: 2,
        numbering: Numbering::X86,
    },
    MachineSpec {
        name: "thx2",
        about: "ThunderX2: 2 nodes x 28 cores x SMT4 = 224 CPUs (Guittot 2020)",
        nodes: 2,
        llcs_per_node: 1,
        cores_per_llc: 28,
        threads_per_core: 4,
        numbering: Numbering::Consecutive,
    },
    MachineSpec {
        name: "8socket",
        about: "8 NUMA nodes x 10 cores x SMT2 = 160 CPUs (Low's 8-socket HT box, Sistare's limit)",
        nodes: 8,
        llcs_per_node: 1,
        cores_per_llc: 10,
        threads_per_core: 2,
        numbering: Numbering::X86,
    },
    MachineSpec {
        name: "qemu8",
        about: "the test guest: -smp 8,sockets=2,cores=2,threads=2",
        nodes: 1,
        llcs_per_node: 2,
        cores_per_llc: 2,
        threads_per_core: 2,
        numbering: Numbering::Consecutive,
    },
    MachineSpec {
        name: "smt4",
        about: "the bench guest smt4: -smp 8,sockets=1,cores=2,threads=4 (SMT:4 MC:8)",
        nodes: 1,
        llcs_per_node: 1,
        cores_per_llc: 2,
        threads_per_core: 4,
        numbering: Numbering::Consecutive,
    },
    MachineSpec {
        name: "numa2",
        about: "the bench guest numa2: -smp 8,sockets=2,cores=4, two NUMA nodes (MC:4 NUMA:8)",
        nodes: 2,
        llcs_per_node: 1,
        cores_per_llc: 4,
        threads_per_core: 1,
        numbering: Numbering::Consecutive,
    },
    MachineSpec {
        name: "llc16",
        about: "the bench guest llc16: -smp 16,sockets=1,cores=16, one LLC of 16 (MC:16)",
        nodes: 1,
        llcs_per_node: 1,
        cores_per_llc: 16,
        threads_per_core: 1,
        numbering: Numbering::Consecutive,
    },
];

/// A scheduling group: one child span.
#[derive(Clone, Debug)]
pub struct Group {
    /// `sched_group_span()`.
    pub span: CpuMask,
    /// The same CPUs as a list, in increasing order.
    pub cpus: Vec<u32>,
    /// `group_balance_cpu()`: the first CPU of the span.
    pub balance_cpu: u32,
    /// `sg->cores`: cores in the group.
    pub cores: u32,
}

/// One CPU's domain at one level.
#[derive(Clone, Debug)]
pub struct Domain {
    /// Level it was built from.
    pub kind: LevelKind,
    /// `sched_domain_span()`.
    pub span: CpuMask,
    /// The span as a list.
    pub cpus: Vec<u32>,
    /// `SD_*` flags.
    pub flags: u32,
    /// Groups (indices into [`Topology::groups`]), local group first.
    pub groups: Vec<usize>,
    /// `sd->imbalance_pct`.
    pub imbalance_pct: u32,
    /// `sd->busy_factor`.
    pub busy_factor: u32,
    /// `sd->cache_nice_tries`.
    pub cache_nice_tries: u32,
    /// `sd->min_interval`, ms (also the initial `balance_interval`).
    pub min_interval_ms: u32,
    /// `sd->max_interval`, ms.
    pub max_interval_ms: u32,
    /// `sd->imb_numa_nr`.
    pub imb_numa_nr: u32,
    /// SD_MIGRATION_COST's cost of this level (Jain 2018), ns: one of the
    /// `MIGRATION_COST_*_NS`, chosen as patch 0010's
    /// `sd_migration_cost_ns()` chooses it.
    pub migration_cost_ns: u64,
}

impl Domain {
    /// `sd->span_weight`.
    pub fn weight(&self) -> u32 {
        self.cpus.len() as u32
    }
}

/// A built machine.
#[derive(Clone, Debug)]
pub struct Topology {
    /// The spec it was built from.
    pub spec: MachineSpec,
    /// CPUs.
    pub nr_cpus: u32,
    /// Node of each CPU.
    pub node_of: Vec<u32>,
    /// Core of each CPU (global core index).
    pub core_of: Vec<u32>,
    /// LLC index of each CPU.
    pub llc_of: Vec<u32>,
    /// `cpu_smt_mask()` of each CPU.
    pub smt_mask: Vec<CpuMask>,
    /// Span of each LLC.
    pub llc_span: Vec<CpuMask>,
    /// `sched_domain_cores()` of each LLC: the first thread of each core.
    pub llc_cores: Vec<CpuMask>,
    /// `per_cpu(sd_llc_size)`.
    pub llc_size: Vec<u32>,
    /// Threads per core in each LLC.
    pub smt_weight: u32,
    /// Domains of each CPU, bottom up.
    pub domains: Vec<Vec<Domain>>,
    /// Every distinct group.
    pub groups: Vec<Group>,
}

/// Looks a preset up by name.
pub fn preset(name: &str) -> Option<&'static MachineSpec> {
    PRESETS.iter().find(|p| p.name == name)
}

struct RawLevel {
    kind: LevelKind,
    span: CpuMask,
    flags: u32,
    imb_numa_nr: u32,
}

/// `imb_numa_nr` as `build_sched_domains()` computes it: on the levels
/// before `cpu_attach_domain()` drops the degenerate ones, so a node with
/// one LLC gets 12.5% of the node (`span_weight >> 3`).
fn set_imb_numa_nr(raw: &mut [RawLevel]) {
    let mut imb = 0u32;
    let mut imb_span = 1u32;
    for k in 0..raw.len() {
        let w = raw[k].span.weight();
        let child_llc = k > 0 && raw[k - 1].flags & SD_SHARE_LLC != 0;
        if raw[k].flags & SD_SHARE_LLC == 0 && child_llc {
            let nr_llcs = w / raw[k - 1].span.weight().max(1);
            imb = if nr_llcs == 1 { w >> 3 } else { nr_llcs }.max(1);
            raw[k].imb_numa_nr = imb;
            imb_span = raw[k + 1..]
                .iter()
                .find(|d| d.flags & SD_NUMA != 0)
                .map_or(w, |d| d.span.weight());
        } else {
            let factor = (w / imb_span.max(1)).max(1);
            raw[k].imb_numa_nr = imb.saturating_mul(factor);
        }
    }
}

impl Topology {
    /// Builds the preset `name`, or says which presets exist.
    pub fn preset(name: &str) -> Result<Self, String> {
        match preset(name) {
            Some(s) => Ok(Self::build(s.clone())),
            None => Err(format!(
                "unknown topology '{name}'; known: {}",
                PRESETS
                    .iter()
                    .map(|p| p.name)
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        }
    }

    /// Builds the domains of `spec`.
    pub fn build(spec: MachineSpec) -> Self {
        let threads = spec.threads_per_core.max(1);
        let cores_per_node = spec.llcs_per_node.max(1) * spec.cores_per_llc.max(1);
        let total_cores = spec.nodes.max(1) * cores_per_node;
        let nr = total_cores * threads;
        // (global core, thread) of each CPU number.
        let place = |cpu: u32| -> (u32, u32) {
            match spec.numbering {
                Numbering::Consecutive => (cpu / threads, cpu % threads),
                Numbering::X86 => (cpu % total_cores, cpu / total_cores),
            }
        };
        let core_of: Vec<u32> = (0..nr).map(|c| place(c).0).collect();
        let llc_of: Vec<u32> = core_of
            .iter()
            .map(|&core| core / spec.cores_per_llc.max(1))
            .collect();
        let node_of: Vec<u32> = core_of.iter().map(|&core| core / cores_per_node).collect();
        let mask_where =
            |f: &dyn Fn(u32) -> bool| CpuMask::from_cpus(nr, (0..nr).filter(|&c| f(c)));
        let smt_mask: Vec<CpuMask> = (0..nr)
            .map(|c| mask_where(&|o| core_of[o as usize] == core_of[c as usize]))
            .collect();
        let nr_llcs = spec.nodes.max(1) * spec.llcs_per_node.max(1);
        let llc_span: Vec<CpuMask> = (0..nr_llcs)
            .map(|l| mask_where(&|o| llc_of[o as usize] == l))
            .collect();
        let llc_cores: Vec<CpuMask> = (0..nr_llcs)
            .map(|l| {
                mask_where(&|o| llc_of[o as usize] == l && smt_mask[o as usize].first() == Some(o))
            })
            .collect();

        // Raw levels per CPU, then cpu_attach_domain()'s collapsing.
        let mut per_cpu_levels: Vec<Vec<RawLevel>> = Vec::new();
        for c in 0..nr {
            let cu = c as usize;
            let mut raw = vec![
                RawLevel {
                    kind: LevelKind::Smt,
                    span: smt_mask[cu].clone(),
                    flags: SD_SHARE_CPUCAPACITY | SD_SHARE_LLC | SD_PREFER_SIBLING,
                    imb_numa_nr: 0,
                },
                RawLevel {
                    kind: LevelKind::Mc,
                    span: llc_span[llc_of[cu] as usize].clone(),
                    flags: SD_SHARE_LLC | SD_PREFER_SIBLING,
                    imb_numa_nr: 0,
                },
                RawLevel {
                    kind: LevelKind::Pkg,
                    span: mask_where(&|o| node_of[o as usize] == node_of[cu]),
                    flags: SD_PREFER_SIBLING,
                    imb_numa_nr: 0,
                },
            ];
            if spec.nodes > 1 {
                raw.push(RawLevel {
                    kind: LevelKind::Numa,
                    span: mask_where(&|_| true),
                    flags: SD_NUMA | SD_SERIALIZE,
                    imb_numa_nr: 0,
                });
            }
            set_imb_numa_nr(&mut raw);
            // sd_parent_degenerate(): a parent with its child's span goes.
            let mut i = 0;
            while i + 1 < raw.len() {
                if raw[i + 1].span == raw[i].span {
                    let parent = raw.remove(i + 1);
                    if parent.flags & SD_PREFER_SIBLING != 0 {
                        raw[i].flags |= SD_PREFER_SIBLING;
                    }
                } else {
                    i += 1;
                }
            }
            // sd_degenerate(): a bottom level of one CPU goes.
            while raw.first().is_some_and(|l| l.span.weight() == 1) && raw.len() > 1 {
                raw.remove(0);
            }
            if raw.first().is_some_and(|l| l.span.weight() == 1) {
                raw.clear();
            }
            per_cpu_levels.push(raw);
        }

        let mut groups: Vec<Group> = Vec::new();
        let mut group_ids: BTreeMap<CpuMask, usize> = BTreeMap::new();
        let mut domains: Vec<Vec<Domain>> = Vec::new();
        for c in 0..nr {
            let cu = c as usize;
            let mut doms = Vec::new();
            for (k, lvl) in per_cpu_levels[cu].iter().enumerate() {
                // build_sched_groups(): child spans, local first, wrapping.
                let mut covered = CpuMask::new(nr);
                let mut gids = Vec::new();
                let span_cpus: Vec<u32> = lvl.span.iter().collect();
                let start = span_cpus.iter().position(|&x| x == c).unwrap_or(0);
                for idx in 0..span_cpus.len() {
                    let i = span_cpus[(start + idx) % span_cpus.len()];
                    if covered.test(i) {
                        continue;
                    }
                    let gspan = if k == 0 {
                        CpuMask::from_cpus(nr, [i])
                    } else {
                        per_cpu_levels[i as usize][k - 1].span.clone()
                    };
                    for x in gspan.iter() {
                        covered.set(x);
                    }
                    let id = *group_ids.entry(gspan.clone()).or_insert_with(|| {
                        let cpus: Vec<u32> = gspan.iter().collect();
                        let cores = {
                            let mut seen = CpuMask::new(nr);
                            let mut n = 0u32;
                            for &x in &cpus {
                                if !seen.test(x) {
                                    n += 1;
                                    for s in smt_mask[x as usize].iter() {
                                        seen.set(s);
                                    }
                                }
                            }
                            n
                        };
                        groups.push(Group {
                            balance_cpu: cpus[0],
                            cpus,
                            span: gspan,
                            cores,
                        });
                        groups.len() - 1
                    });
                    gids.push(id);
                }
                let weight = lvl.span.weight();
                let (imbalance_pct, cache_nice_tries) = if lvl.flags & SD_SHARE_CPUCAPACITY != 0 {
                    (110, 0)
                } else if lvl.flags & SD_SHARE_LLC != 0 {
                    (117, 1)
                } else if lvl.flags & SD_NUMA != 0 {
                    (117, 2)
                } else {
                    (117, 1)
                };
                // sd_migration_cost_ns(): NUMA, else SMT, else LLC, else PKG.
                let migration_cost_ns = if lvl.flags & SD_NUMA != 0 {
                    MIGRATION_COST_NUMA_NS
                } else if lvl.flags & SD_SHARE_CPUCAPACITY != 0 {
                    MIGRATION_COST_SMT_NS
                } else if lvl.flags & SD_SHARE_LLC != 0 {
                    MIGRATION_COST_LLC_NS
                } else {
                    MIGRATION_COST_PKG_NS
                };
                doms.push(Domain {
                    kind: lvl.kind,
                    span: lvl.span.clone(),
                    cpus: span_cpus,
                    flags: lvl.flags,
                    groups: gids,
                    imbalance_pct,
                    busy_factor: 16,
                    cache_nice_tries,
                    min_interval_ms: weight,
                    max_interval_ms: weight.saturating_mul(2),
                    imb_numa_nr: lvl.imb_numa_nr,
                    migration_cost_ns,
                });
            }
            domains.push(doms);
        }
        let llc_size = (0..nr as usize)
            .map(|c| {
                domains[c]
                    .iter()
                    .rev()
                    .find(|d| d.flags & SD_SHARE_LLC != 0)
                    .map_or(1, |d| d.weight())
            })
            .collect();
        Self {
            nr_cpus: nr,
            node_of,
            core_of,
            llc_of,
            smt_mask,
            llc_span,
            llc_cores,
            llc_size,
            smt_weight: threads,
            domains,
            groups,
            spec,
        }
    }

    /// The lowest of `cpu`'s domain levels whose span holds `other`
    /// (0 for `cpu` itself; None if no level joins them).
    pub fn lowest_level_spanning(&self, cpu: u32, other: u32) -> Option<usize> {
        self.domains
            .get(cpu as usize)?
            .iter()
            .position(|d| d.span.test(other))
    }

    /// Whether two CPUs share an LLC (`cpus_share_cache()`).
    pub fn share_cache(&self, a: u32, b: u32) -> bool {
        self.llc_of[a as usize] == self.llc_of[b as usize]
    }

    /// NUMA nodes.
    pub fn nodes(&self) -> u32 {
        self.spec.nodes.max(1)
    }

    /// Index of the LLC domain (highest `SD_SHARE_LLC`) of `cpu`, if any.
    pub fn llc_level(&self, cpu: u32) -> Option<usize> {
        self.domains[cpu as usize]
            .iter()
            .rposition(|d| d.flags & SD_SHARE_LLC != 0)
    }

    /// `sched_domain_debug()`-style description of one CPU's domains.
    pub fn describe_cpu(&self, cpu: u32) -> String {
        let mut s = format!("CPU{cpu} attaching sched-domain(s):\n");
        for (k, d) in self.domains[cpu as usize].iter().enumerate() {
            let _ = writeln!(
                s,
                " domain-{k}: span={} level={}",
                cpulist(&d.cpus),
                d.kind.name()
            );
            let gs: Vec<String> = d
                .groups
                .iter()
                .map(|&g| {
                    let g = &self.groups[g];
                    format!("{}:{{ span={} }}", g.balance_cpu, cpulist(&g.cpus))
                })
                .collect();
            let _ = writeln!(s, "  groups: {}", gs.join(", "));
        }
        s
    }
}

/// `%*pbl`: a CPU list with ranges, as the kernel prints it.
pub fn cpulist(cpus: &[u32]) -> String {
    let mut sorted = cpus.to_vec();
    sorted.sort_unstable();
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        let mut j = i;
        while j + 1 < sorted.len() && sorted[j + 1] == sorted[j] + 1 {
            j += 1;
        }
        out.push(if i == j {
            sorted[i].to_string()
        } else {
            format!("{}-{}", sorted[i], sorted[j])
        });
        i = j + 1;
    }
    out.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (level name, span weight, group count) of CPU 0's domains.
    fn shape(name: &str) -> Vec<(&'static str, u32, usize)> {
        let t = Topology::preset(name).unwrap();
        t.domains[0]
            .iter()
            .map(|d| (d.kind.name(), d.weight(), d.groups.len()))
            .collect()
    }

    #[test]
    fn qemu8_matches_the_kernel_log() {
        // What 6.12 prints for -smp 8,sockets=2,cores=2,threads=2 with
        // sched_verbose: SMT span 0-1, MC span 0-3, PKG span 0-7.
        assert_eq!(
            shape("qemu8"),
            vec![("SMT", 2, 2), ("MC", 4, 2), ("PKG", 8, 2)]
        );
        let t = Topology::preset("qemu8").unwrap();
        assert_eq!(
            t.describe_cpu(0),
            "CPU0 attaching sched-domain(s):\n domain-0: span=0-1 level=SMT\n  groups: 0:{ span=0 }, 1:{ span=1 }\n domain-1: span=0-3 level=MC\n  groups: 0:{ span=0-1 }, 2:{ span=2-3 }\n domain-2: span=0-7 level=PKG\n  groups: 0:{ span=0-3 }, 4:{ span=4-7 }\n"
        );
        // Local group first, then wrapping from the CPU.
        assert_eq!(
            t.describe_cpu(5).lines().nth(4).unwrap(),
            "  groups: 4:{ span=4-5 }, 6:{ span=6-7 }"
        );
        assert!(t
            .describe_cpu(5)
            .ends_with("groups: 4:{ span=4-7 }, 0:{ span=0-3 }\n"));
        assert_eq!(t.llc_size[0], 4);
        assert_eq!(t.domains[0][0].imbalance_pct, 110);
        assert_eq!(t.domains[0][0].cache_nice_tries, 0);
        assert_eq!(t.domains[0][2].flags & SD_SHARE_LLC, 0);
    }

    #[test]
    fn every_preset_has_the_expected_levels() {
        assert_eq!(shape("2x4"), vec![("MC", 4, 4), ("PKG", 8, 2)]);
        assert_eq!(shape("x5472"), vec![("MC", 2, 2), ("PKG", 8, 4)]);
        // PKG equals the node, which equals the LLC: dropped.
        assert_eq!(
            shape("xeon2x22"),
            vec![("SMT", 2, 2), ("MC", 44, 22), ("NUMA", 88, 2)]
        );
        assert_eq!(
            shape("thx2"),
            vec![("SMT", 4, 4), ("MC", 112, 28), ("NUMA", 224, 2)]
        );
        assert_eq!(
            shape("8socket"),
            vec![("SMT", 2, 2), ("MC", 20, 10), ("NUMA", 160, 8)]
        );
        // The bench guests' shapes, as scripts/bench.sh's domains_of wants
        // them of cpu0 (level:span weight).
        assert_eq!(shape("smt4"), vec![("SMT", 4, 4), ("MC", 8, 2)]);
        assert_eq!(shape("numa2"), vec![("MC", 4, 4), ("NUMA", 8, 2)]);
        assert_eq!(shape("llc16"), vec![("MC", 16, 16)]);
    }

    #[test]
    fn llc_sizes_intervals_and_flags() {
        let t = Topology::preset("x5472").unwrap();
        assert!(t.llc_size.iter().all(|&s| s == 2));
        let t = Topology::preset("2x4").unwrap();
        assert!(t.llc_size.iter().all(|&s| s == 4));
        let pkg = &t.domains[3][1];
        assert_eq!((pkg.min_interval_ms, pkg.max_interval_ms), (8, 16));
        assert_eq!((pkg.imbalance_pct, pkg.busy_factor), (117, 16));
        assert_eq!(pkg.flags & SD_PREFER_SIBLING, SD_PREFER_SIBLING);
        let t = Topology::preset("thx2").unwrap();
        assert_eq!(t.llc_size[100], 112);
        let numa = &t.domains[0][2];
        assert_eq!(numa.flags & (SD_NUMA | SD_PREFER_SIBLING), SD_NUMA);
        assert_eq!(numa.cache_nice_tries, 2);
        assert_eq!(numa.migration_cost_ns, MIGRATION_COST_NUMA_NS);
        assert_eq!(t.domains[0][1].migration_cost_ns, MIGRATION_COST_LLC_NS);
        assert_eq!(t.domains[0][0].migration_cost_ns, MIGRATION_COST_SMT_NS);
        // A PKG level above the LLC (2x4's clusters): the PKG cost, which is
        // never below the LLC's (patch 0009).
        let t = Topology::preset("2x4").unwrap();
        assert_eq!(t.domains[0][1].kind, LevelKind::Pkg);
        assert_eq!(t.domains[0][1].migration_cost_ns, MIGRATION_COST_PKG_NS);
        const { assert!(MIGRATION_COST_PKG_NS >= MIGRATION_COST_LLC_NS) };
        // One LLC per node: 12.5% of the node, 112 >> 3.
        assert_eq!(numa.imb_numa_nr, 14);
        let t = Topology::preset("xeon2x22").unwrap();
        assert_eq!(t.domains[0][2].imb_numa_nr, 5);
    }

    #[test]
    fn x86_numbering_puts_siblings_a_socket_apart() {
        let t = Topology::preset("xeon2x22").unwrap();
        assert_eq!(t.smt_mask[0].iter().collect::<Vec<_>>(), vec![0, 44]);
        assert_eq!(t.node_of[21], 0);
        assert_eq!(t.node_of[22], 1);
        assert_eq!(t.node_of[44 + 22], 1);
        assert_eq!(t.llc_cores[0].weight(), 22);
        assert!(t.share_cache(0, 65) && !t.share_cache(0, 66));
    }

    #[test]
    fn groups_partition_every_span() {
        for p in PRESETS {
            let t = Topology::build(p.clone());
            for (cpu, doms) in t.domains.iter().enumerate() {
                for (k, d) in doms.iter().enumerate() {
                    let mut seen = CpuMask::new(t.nr_cpus);
                    for &g in &d.groups {
                        for &c in &t.groups[g].cpus {
                            assert!(!seen.test(c), "{} overlap", p.name);
                            seen.set(c);
                        }
                    }
                    assert_eq!(seen, d.span, "{} cpu {cpu} level {k}", p.name);
                    assert!(t.groups[d.groups[0]].span.test(cpu as u32));
                    if k > 0 {
                        assert!(doms[k - 1].span.is_subset(&d.span));
                    }
                }
            }
        }
    }

    #[test]
    fn unknown_preset_lists_the_known_ones() {
        let e = Topology::preset("pdp11").unwrap_err();
        assert!(e.contains("pdp11") && e.contains("thx2") && e.contains("qemu8"));
    }

    #[test]
    fn cpulist_ranges() {
        assert_eq!(cpulist(&[0, 1, 2, 5, 7, 8]), "0-2,5,7-8");
    }
}
