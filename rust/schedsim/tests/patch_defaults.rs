// SPDX-License-Identifier: GPL-2.0

//! The numbers the simulator takes from the patch series, read out of
//! `patches/` when the tests run, so that each is written once, in the
//! patch, and a copy that drifts fails here (the PKG migration cost was 0
//! in the simulator and 50 us in patch 0009).
//!
//! As `rust/cref/build.rs` takes its C from the tree, nothing here is
//! retyped from a patch:
//!
//! - C: the series' last word on a line is what counts, as
//!   `sched_lb_policy::stock`'s tests read `SCHED_FEAT()` lines: in
//!   `patches/series` order, the `+` lines that no later patch removes
//!   (each patch's `-` lines first, so a line a patch moves survives). A
//!   table entry is taken only inside the named array: the declaration
//!   that encloses it in its hunk, or the hunk header's (git's function
//!   context), must name it.
//! - Prose: the policy crate's constants, which the simulator runs but does
//!   not copy, are stated by the patches in words ("after N x 5 newidle
//!   balances"); each is read from one exact phrase of one patch.
//!
//! - State: each field the series adds to a per-CPU or per-LLC
//!   structure is listed once ([`STATE`]) with the simulator's field that
//!   keeps it, in a structure of the same scope ([`HOMES`]).
//!
//! Every lookup must find what it looks for, exactly once where that
//! matters, and every value must parse, or the test fails with a message
//! naming the patch (or `patches/series`) and the pattern: a renamed
//! symbol or a reworded sentence stops the test, it never passes on
//! nothing.

use std::fs;
use std::path::PathBuf;

/// One patch of `patches/series`: its file name and text.
struct Patch {
    name: String,
    text: String,
}

/// The patches of `patches/series`, in order.
fn series() -> Vec<Patch> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../patches");
    let list = fs::read_to_string(dir.join("series"))
        .unwrap_or_else(|e| panic!("{}: {e}", dir.join("series").display()));
    let patches: Vec<Patch> = list
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|name| Patch {
            text: fs::read_to_string(dir.join(name))
                .unwrap_or_else(|e| panic!("patches/{name} (in patches/series): {e}")),
            name: name.to_string(),
        })
        .collect();
    assert!(!patches.is_empty(), "patches/series lists no patch");
    patches
}

/// A line a patch adds or removes.
struct Change<'a> {
    /// The file the hunk is in (`b/` side).
    file: String,
    /// `+` (true) or `-`.
    added: bool,
    /// The line without its `+` or `-`.
    text: &'a str,
    /// The declaration it is in on its side of the hunk: the last line
    /// before it that starts with an identifier, else the hunk header's
    /// function context.
    scope: String,
    /// 1-based line in the patch.
    line: usize,
}

/// Numbers of old and new lines of a hunk header `@@ -a,b +c,d @@ ...`
/// and its function context.
fn hunk_header(l: &str) -> Option<(usize, usize, &str)> {
    let rest = l.strip_prefix("@@ -")?;
    let (ranges, context) = rest.split_once(" @@")?;
    let (old, new) = ranges.split_once(" +")?;
    let count = |r: &str| match r.split_once(',') {
        Some((_, n)) => n.parse().ok(),
        None => Some(1),
    };
    Some((count(old)?, count(new)?, context.trim()))
}

/// Starts a declaration or definition at file scope.
fn starts_scope(text: &str) -> bool {
    text.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
}

/// The `+` and `-` lines of a patch's diffs; hunk ends come from the
/// header's counts, so the mail signature after the last hunk is not
/// taken for a removed line.
fn changes(p: &Patch) -> Result<Vec<Change<'_>>, String> {
    let lines: Vec<&str> = p.text.lines().collect();
    let mut out = Vec::new();
    let mut file = String::new();
    let mut in_diff = false;
    let mut i = 0;
    while i < lines.len() {
        let l = lines[i];
        i += 1;
        if l.starts_with("diff --git ") {
            in_diff = true;
        } else if !in_diff {
            // The commit message.
        } else if let Some(f) = l.strip_prefix("+++ ") {
            file = f.trim().trim_start_matches("b/").to_string();
        } else if l.starts_with("@@ ") {
            let (mut old, mut new, context) = hunk_header(l)
                .ok_or_else(|| format!("patches/{}:{i}: bad hunk header '{l}'", p.name))?;
            let (mut scope_old, mut scope_new) = (context.to_string(), context.to_string());
            while old > 0 || new > 0 {
                let at = i + 1;
                let Some(&x) = lines.get(i) else {
                    return Err(format!("patches/{}: hunk cut short at its end", p.name));
                };
                i += 1;
                let (kind, text) = match x.chars().next() {
                    Some('\\') => continue,
                    None => (' ', ""),
                    Some(c) => (c, &x[1..]),
                };
                let short = || format!("patches/{}:{at}: hunk longer than its header", p.name);
                match kind {
                    ' ' => {
                        old = old.checked_sub(1).ok_or_else(short)?;
                        new = new.checked_sub(1).ok_or_else(short)?;
                    }
                    '-' => old = old.checked_sub(1).ok_or_else(short)?,
                    '+' => new = new.checked_sub(1).ok_or_else(short)?,
                    _ => return Err(format!("patches/{}:{at}: not a hunk line: '{x}'", p.name)),
                }
                if kind != ' ' {
                    out.push(Change {
                        file: file.clone(),
                        added: kind == '+',
                        text,
                        scope: if kind == '+' { &scope_new } else { &scope_old }.clone(),
                        line: at,
                    });
                }
                if starts_scope(text) {
                    if kind != '+' {
                        scope_old = text.to_string();
                    }
                    if kind != '-' {
                        scope_new = text.to_string();
                    }
                }
            }
        }
    }
    Ok(out)
}

/// A value the series leaves, and where it was added.
#[derive(Clone, Debug)]
struct Def {
    value: String,
    origin: String,
}

/// The definitions the whole series leaves of the lines `key_of` picks
/// (its key and value), in `file`: each patch's removals, then its
/// additions, in `patches/series` order.
fn surviving(
    series: &[Patch],
    file: &str,
    key_of: impl Fn(&Change) -> Option<(String, String)>,
) -> Result<Vec<(String, Def)>, String> {
    let mut defs: Vec<(String, Def)> = Vec::new();
    for p in series {
        let ch = changes(p)?;
        let mine = || ch.iter().filter(|c| c.file == file);
        for c in mine().filter(|c| !c.added) {
            if let Some((k, _)) = key_of(c) {
                defs.retain(|(d, _)| *d != k);
            }
        }
        for c in mine().filter(|c| c.added) {
            if let Some((k, value)) = key_of(c) {
                let origin = format!("patches/{}:{}", p.name, c.line);
                defs.push((k, Def { value, origin }));
            }
        }
    }
    Ok(defs)
}

/// The one surviving definition of `key`, or an error that says what was
/// looked for (`pattern`), where, and which patch (`from`) added it.
fn one(defs: &[(String, Def)], key: &str, pattern: &str, from: &str) -> Result<Def, String> {
    let found: Vec<&Def> = defs
        .iter()
        .filter(|(k, _)| k == key)
        .map(|(_, d)| d)
        .collect();
    match found.as_slice() {
        [d] => Ok((*d).clone()),
        [] => Err(format!(
            "no patch of patches/series leaves a line `{pattern}` (patch {from} \
             added it): renamed or removed? The simulator's copy can no longer be checked"
        )),
        many => Err(format!(
            "`{pattern}` is left defined {} times: {}",
            many.len(),
            many.iter()
                .map(|d| d.origin.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

/// A C constant expression of the kind the series' defaults are written
/// in: decimal integers (with `U`/`L` suffixes) and the kernel's `NSEC_PER_*`
/// units (`include/vdso/time64.h`), multiplied. Anything else is refused,
/// so that a new form is read by a new rule, not misread.
fn c_value(expr: &str) -> Result<u64, String> {
    let mut v = 1u64;
    for f in expr.split('*').map(str::trim) {
        let n = match f {
            "NSEC_PER_USEC" => 1_000,
            "NSEC_PER_MSEC" => 1_000_000,
            "NSEC_PER_SEC" => 1_000_000_000,
            _ => {
                let digits = f.trim_end_matches(['U', 'L', 'u', 'l']);
                if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(format!("cannot read `{f}` in `{expr}`"));
                }
                digits.parse().map_err(|e| format!("`{expr}`: {e}"))?
            }
        };
        v = v
            .checked_mul(n)
            .ok_or_else(|| format!("`{expr}` overflows u64"))?;
    }
    Ok(v)
}

/// Patch 0009's `sched_lb_migration_cost_ns[]`, after the whole series:
/// (level, ns, origin) of `SMT`, `LLC`, `PKG`, `NUMA`.
fn migration_costs(series: &[Patch]) -> Result<Vec<(&'static str, u64, String)>, String> {
    const FILE: &str = "kernel/sched/lb_hooks.c";
    const ARRAY: &str = "sched_lb_migration_cost_ns[";
    let defs = surviving(series, FILE, |c| {
        if !c.scope.contains(ARRAY) {
            return None;
        }
        let rest = c.text.trim().strip_prefix("[SCHED_LB_LEVEL_")?;
        let (level, rest) = rest.split_once(']')?;
        let value = rest.trim().strip_prefix('=')?.trim().trim_end_matches(',');
        Some((level.to_string(), value.trim().to_string()))
    })?;
    ["SMT", "LLC", "PKG", "NUMA"]
        .into_iter()
        .map(|level| {
            let pattern = format!("[SCHED_LB_LEVEL_{level}] = <ns>, in {ARRAY}] of {FILE}");
            let d = one(&defs, level, &pattern, "0009")?;
            let ns = c_value(&d.value).map_err(|e| format!("{}: {e}", d.origin))?;
            Ok((level, ns, d.origin))
        })
        .collect()
}

/// The value of `#define name` that the series leaves in `file`, which
/// patch `from` added.
fn define(series: &[Patch], from: &str, file: &str, name: &str) -> Result<(u64, String), String> {
    let defs = surviving(series, file, |c| {
        let rest = c.text.trim().strip_prefix("#define")?;
        let (n, v) = rest
            .trim()
            .split_once(char::is_whitespace)
            .unwrap_or((rest.trim(), ""));
        (n == name).then(|| (n.to_string(), v.trim().to_string()))
    })?;
    let d = one(
        &defs,
        name,
        &format!("#define {name} <value> in {file}"),
        from,
    )?;
    let v = c_value(&d.value).map_err(|e| format!("{}: {e}", d.origin))?;
    Ok((v, d.origin))
}

/// The patch of `patches/series` whose file name starts with `number-`.
fn patch<'a>(series: &'a [Patch], number: &str) -> Result<&'a Patch, String> {
    let prefix = format!("{number}-");
    let found: Vec<&Patch> = series
        .iter()
        .filter(|p| p.name.starts_with(&prefix))
        .collect();
    match found.as_slice() {
        [p] => Ok(p),
        _ => Err(format!(
            "patches/series has {} patches named {prefix}*, not one",
            found.len()
        )),
    }
}

/// The number a patch states in the phrase `before<number>after`: every
/// occurrence must agree, and there must be one.
fn stated(series: &[Patch], number: &str, before: &str, after: &str) -> Result<u64, String> {
    let p = patch(series, number)?;
    let mut seen: Vec<u64> = Vec::new();
    for (at, _) in p.text.match_indices(before) {
        let rest = &p.text[at + before.len()..];
        let end = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        if end > 0 && rest[end..].starts_with(after) {
            seen.push(
                rest[..end]
                    .parse()
                    .map_err(|e| format!("patches/{}: {e}", p.name))?,
            );
        }
    }
    seen.dedup();
    match seen.as_slice() {
        [v] => Ok(*v),
        [] => Err(format!(
            "patches/{} no longer says \"{before}<number>{after}\": reworded? \
             The constant can no longer be checked against it",
            p.name
        )),
        _ => Err(format!(
            "patches/{} says \"{before}<number>{after}\" with different numbers: {seen:?}",
            p.name
        )),
    }
}

fn ok<T>(r: Result<T, String>) -> T {
    r.unwrap_or_else(|e| panic!("{e}"))
}

/// SD_MIGRATION_COST's per-level defaults (`rust/schedsim/src/topology.rs`)
/// are patch 0009's table as the series leaves it.
#[test]
fn migration_costs_are_the_series_table() {
    use schedsim::topology::*;
    let ours = [
        ("SMT", MIGRATION_COST_SMT_NS),
        ("LLC", MIGRATION_COST_LLC_NS),
        ("PKG", MIGRATION_COST_PKG_NS),
        ("NUMA", MIGRATION_COST_NUMA_NS),
    ];
    let series = series();
    for ((level, want, origin), (name, got)) in ok(migration_costs(&series)).into_iter().zip(ours) {
        assert_eq!(level, name);
        assert_eq!(
            got, want,
            "MIGRATION_COST_{level}_NS is {got} ns; {origin} sets {want} ns"
        );
    }
}

/// Patch 0023's debugfs documentation states the same defaults as the
/// table, in the same order (`{smt,llc,pkg,numa}`): a reader of the
/// kernel's docs and a user of the simulator see the same numbers.
#[test]
fn documented_migration_costs_are_the_tables() {
    let series = series();
    let p = ok(patch(&series, "0023"));
    let head = "``migration_cost_ns/{smt,llc,pkg,numa}``";
    let at = p
        .text
        .find(head)
        .unwrap_or_else(|| panic!("patches/{} no longer has the item {head}", p.name));
    let item = &p.text[at..];
    let close = item
        .find(" by default)")
        .unwrap_or_else(|| panic!("patches/{}: no \"(... by default)\" after {head}", p.name));
    let open = item[..close].rfind('(').unwrap_or_else(|| {
        panic!(
            "patches/{}: no \"(\" before \"by default)\" after {head}",
            p.name
        )
    });
    // "0, 50000, 50000 and 500000", possibly across lines of `+  `.
    let list = item[open + 1..close].replace("\n+", " ");
    let doc: Vec<u64> = list
        .split([',', ' '])
        .filter(|w| !w.is_empty() && *w != "and")
        .map(|w| {
            w.parse()
                .unwrap_or_else(|e| panic!("patches/{}: `{w}` in `{list}`: {e}", p.name))
        })
        .collect();
    let table: Vec<u64> = ok(migration_costs(&series))
        .into_iter()
        .map(|(_, v, _)| v)
        .collect();
    assert_eq!(doc, table, "patches/{} documents other defaults", p.name);
}

/// STEAL's sparsemask puts as many CPUs in a cache line as patch 0015's
/// `SCHED_LB_STEAL_BITS_PER_LINE`.
#[test]
fn steal_mask_bits_per_line_is_the_series() {
    let (want, origin) = ok(define(
        &series(),
        "0015",
        "include/linux/sched/lb_hooks.h",
        "SCHED_LB_STEAL_BITS_PER_LINE",
    ));
    let got = u64::from(schedsim::sim::SPARSE_BITS_PER_LINE);
    assert_eq!(
        got, want,
        "SPARSE_BITS_PER_LINE is {got}; {origin} says {want}"
    );
}

/// The policy constants the simulator runs (it takes them from
/// `sched_lb_policy`, the crate the kernel module runs, and copies none)
/// are the ones the patches state in their messages and `features.h`.
#[test]
fn policy_constants_are_the_ones_the_patches_state() {
    use sched_lb_policy::{newidle_backoff, sis_age, sis_budget, steal};
    let series = series();
    let cases: [(&str, u64, &str, &str, &str); 5] = [
        // RFC 06's floor on SIS_PROP's budget, in cores.
        (
            "sis_budget::SIS_MIN_CORES",
            u64::from(sis_budget::SIS_MIN_CORES),
            "0012",
            "at least sis_min_cores = ",
            ",",
        ),
        // SIS_PROP's idle prediction without SIS_AGE (features.h).
        (
            "sis_age::AVG_IDLE_FUZZ",
            sis_age::AVG_IDLE_FUZZ,
            "0013",
            "instead of avg_idle / ",
            ".",
        ),
        // NEWIDLE_BACKOFF's step (features.h).
        (
            "newidle_backoff::FAILURES_PER_STEP",
            u64::from(newidle_backoff::FAILURES_PER_STEP),
            "0008",
            "after N x ",
            " newidle balances",
        ),
        // STEAL's overloaded mask (features.h).
        (
            "steal::OVERLOADED_NR_RUNNING",
            u64::from(steal::OVERLOADED_NR_RUNNING),
            "0015",
            "the CPUs with ",
            " or more runnable",
        ),
        // STEAL's node limit.
        (
            "steal::STEAL_MAX_NUMA_NODES",
            u64::from(steal::STEAL_MAX_NUMA_NODES),
            "0016",
            "at most ",
            " NUMA nodes",
        ),
    ];
    for (name, got, number, before, after) in cases {
        let want = ok(stated(&series, number, before, after));
        let p = &ok(patch(&series, number)).name;
        assert_eq!(
            got, want,
            "{name} is {got}; patches/{p} says \"{before}{want}{after}\""
        );
    }
}

/// The reader itself: it follows a value a later patch changes, keeps one
/// a patch moves, reads only the named array, refuses what it cannot
/// read, and says what it looked for when it finds nothing.
#[test]
fn the_reader_follows_the_series_and_fails_loudly() {
    let table = |name: &str, body: &str| {
        Patch {
        name: name.into(),
        text: format!(
            "Subject: x\n\n-- not a removal\n---\ndiff --git a/kernel/sched/lb_hooks.c b/kernel/sched/lb_hooks.c\n\
             --- a/kernel/sched/lb_hooks.c\n+++ b/kernel/sched/lb_hooks.c\n{body}-- \n2.47.3\n"
        ),
    }
    };
    let first = table(
        "0001-a.patch",
        "@@ -1,0 +1,7 @@\n\
         +u64 sched_lb_migration_cost_ns[SCHED_LB_NR_LEVELS] = {\n\
         +\t[SCHED_LB_LEVEL_SMT]\t= 0,\n\
         +\t[SCHED_LB_LEVEL_LLC]\t= 50 * NSEC_PER_USEC,\n\
         +\t[SCHED_LB_LEVEL_PKG]\t= 0,\n\
         +\t[SCHED_LB_LEVEL_NUMA]\t= 500 * NSEC_PER_USEC,\n\
         +};\n\
         +static const char * const names[] = { [SCHED_LB_LEVEL_PKG] = \"pkg\" };\n",
    );
    // Changes PKG with only git's function context naming the array, and
    // adds another array with the same designators.
    let second = table(
        "0002-b.patch",
        "@@ -3,3 +3,3 @@ u64 sched_lb_migration_cost_ns[SCHED_LB_NR_LEVELS] = {\n\
         \x20\t[SCHED_LB_LEVEL_LLC]\t= 50 * NSEC_PER_USEC,\n\
         -\t[SCHED_LB_LEVEL_PKG]\t= 0,\n\
         +\t[SCHED_LB_LEVEL_PKG]\t= 40 * NSEC_PER_USEC,\n\
         \x20\t[SCHED_LB_LEVEL_NUMA]\t= 500 * NSEC_PER_USEC,\n\
         @@ -8,0 +8,3 @@ void f(void)\n\
         +u32 other[SCHED_LB_NR_LEVELS] = {\n\
         +\t[SCHED_LB_LEVEL_PKG]\t= 7,\n\
         +};\n",
    );
    let costs = ok(migration_costs(&[first, second]));
    let values: Vec<u64> = costs.iter().map(|c| c.1).collect();
    assert_eq!(values, [0, 50_000, 40_000, 500_000]);
    assert!(
        costs[2].2.starts_with("patches/0002-b.patch:"),
        "{}",
        costs[2].2
    );

    // A patch that moves the table (adds it above, removes it below)
    // keeps it; one that drops it loses it, and the reader says what it
    // looked for.
    let opener = "u64 sched_lb_migration_cost_ns[SCHED_LB_NR_LEVELS] = {";
    let small = |name: &str, sign: char, at: &str| {
        table(
            name,
            &format!("@@ {at} @@\n{sign}{opener}\n{sign}\t[SCHED_LB_LEVEL_SMT]\t= 3,\n{sign}}};\n"),
        )
    };
    let moved = Patch {
        name: "0002-b.patch".into(),
        text: [
            small("", '+', "-1,0 +1,3").text,
            small("", '-', "-9,3 +12,0").text,
        ]
        .concat(),
    };
    let defs = ok(surviving(
        &[small("0001-a.patch", '+', "-9,0 +9,3"), moved],
        "kernel/sched/lb_hooks.c",
        |c| {
            (c.scope.contains("sched_lb_migration_cost_ns[") && c.text.contains("LEVEL_SMT"))
                .then(|| ("SMT".into(), c.text.into()))
        },
    ));
    assert_eq!(defs.len(), 1, "{defs:?}");
    assert!(
        defs[0].1.origin.starts_with("patches/0002-b.patch:"),
        "{defs:?}"
    );
    let e = migration_costs(&[
        small("0001-a.patch", '+', "-1,0 +1,3"),
        small("0002-b.patch", '-', "-1,3 +1,0"),
    ])
    .unwrap_err();
    assert!(
        e.contains("[SCHED_LB_LEVEL_SMT] = <ns>") && e.contains("sched_lb_migration_cost_ns["),
        "{e}"
    );
    // Renamed: nothing is read as the table.
    let renamed = table(
        "0001-a.patch",
        "@@ -1,0 +1,3 @@\n+u64 sched_lb_level_cost_ns[SCHED_LB_NR_LEVELS] = {\n\
         +\t[SCHED_LB_LEVEL_SMT]\t= 0,\n+};\n",
    );
    assert!(migration_costs(&[renamed])
        .unwrap_err()
        .contains("SCHED_LB_LEVEL_SMT"));

    assert_eq!(c_value("50 * NSEC_PER_USEC"), Ok(50_000));
    assert_eq!(c_value("100000000ULL"), Ok(100_000_000));
    for bad in ["HZ / 2", "0x10", "", "5 * FOO"] {
        assert!(c_value(bad).is_err(), "{bad}");
    }

    let prose = [Patch {
        name: "0008-x.patch".into(),
        text: "after N x 5 newidle balances, or after N x 6 newidle balances".into(),
    }];
    assert!(stated(&prose, "0008", "after N x ", " newidle balances")
        .unwrap_err()
        .contains("different numbers"));
    let e = stated(&prose, "0008", "before N x ", " newidle").unwrap_err();
    assert!(
        e.contains("patches/0008-x.patch") && e.contains("before N x <number> newidle"),
        "{e}"
    );
    assert!(stated(&prose, "0009", "x", "y")
        .unwrap_err()
        .contains("0009-*"));
}

/// Where the simulator keeps a piece of state the series adds to a C
/// structure.
enum Mirror {
    /// In the field `field` of the simulator's structure `home`
    /// (`src/sim/mod.rs` or `src/topology.rs`).
    Field {
        home: &'static str,
        field: &'static str,
    },
    /// Not kept as such, and why.
    Not(&'static str),
}

/// The C structures the series adds state to, each with its scope and the
/// simulator's structures that may hold a copy: per CPU stays per CPU, per LLC per
/// LLC. SIS_PROP's scan cost sat in the simulator's per-LLC state while
/// patch 0012 keeps it in `struct rq`; this table is what says that is
/// wrong.
const HOMES: [(&str, &str, &str, &[&str]); 3] = [
    ("kernel/sched/sched.h", "struct rq", "CPU", &["Rq"]),
    (
        "kernel/sched/sched.h",
        "struct sched_lb_llc",
        "LLC",
        &["LlcShared", "Topology"],
    ),
    (
        "include/linux/sched/topology.h",
        "struct sched_domain_shared",
        "LLC",
        &["LlcShared"],
    ),
];

/// Every field the series leaves in a structure of [`HOMES`], and where
/// the simulator keeps it: one list, which a new field fails until it
/// says.
const STATE: [(&str, &str, Mirror); 14] = [
    ("struct rq", "sis_avg_scan_cost", Mirror::Field { home: "Rq", field: "sis_avg_scan_cost_ns" }),
    ("struct rq", "wake_avg", Mirror::Field { home: "Rq", field: "wake_avg_ns" }),
    ("struct rq", "wake_stamp", Mirror::Field { home: "Rq", field: "wake_stamp" }),
    ("struct rq", "newidle_fail_streak", Mirror::Field { home: "Rq", field: "newidle_streak" }),
    ("struct rq", "newidle_fail_stamp", Mirror::Field { home: "Rq", field: "newidle_streak" }),
    ("struct rq", "avg_steal_cost", Mirror::Field { home: "Rq", field: "avg_steal_cost_ns" }),
    ("struct rq", "steal_cost_stamp", Mirror::Field { home: "Rq", field: "steal_cost_stamp" }),
    (
        "struct rq",
        "steal_overloaded",
        Mirror::Not("the kernel's copy of the CPU's bit, kept so that an update writes the mask only on a change; the model reads its bit in LlcShared::overloaded"),
    ),
    ("struct sched_lb_llc", "smt_weight", Mirror::Field { home: "Topology", field: "smt_weight" }),
    ("struct sched_lb_llc", "cores", Mirror::Field { home: "Topology", field: "llc_cores" }),
    ("struct sched_lb_llc", "steal_mask", Mirror::Field { home: "LlcShared", field: "overloaded" }),
    ("struct sched_lb_llc", "steal_base", Mirror::Field { home: "LlcShared", field: "overloaded_base" }),
    ("struct sched_lb_llc", "steal_words", Mirror::Not("the length of LlcShared::overloaded")),
    (
        "struct sched_domain_shared",
        "lb_llc",
        Mirror::Not("the pointer to struct sched_lb_llc, which LlcShared is"),
    ),
];

/// The fields the series leaves in `strukt` (`struct rq` and the like)
/// in `file`: `+` lines inside its body, `type name;` or `type name[];`.
fn fields(series: &[Patch], file: &str, strukt: &str) -> Result<Vec<(String, Def)>, String> {
    let opening = format!("{strukt} {{");
    surviving(series, file, |c| {
        if !c.scope.starts_with(&opening) {
            return None;
        }
        let decl = c.text.trim().strip_suffix(';')?;
        if decl.contains('(') || decl.starts_with('#') || decl.starts_with("/*") {
            return None;
        }
        let name = decl
            .rsplit(|ch: char| ch.is_whitespace() || ch == '*')
            .next()?
            .split('[')
            .next()?;
        (!name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'))
            .then(|| (name.to_string(), strukt.to_string()))
    })
}

/// The `pub` fields of the simulator's `pub struct home` in `src/sim/mod.rs`
/// or `src/topology.rs`.
fn sim_fields(home: &str) -> Result<Vec<String>, String> {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src");
    let opening = format!("pub struct {home} {{");
    for file in ["sim/mod.rs", "topology.rs"] {
        let text = fs::read_to_string(src.join(file)).map_err(|e| format!("src/{file}: {e}"))?;
        let Some((_, body)) = text.split_once(&opening) else {
            continue;
        };
        let body = body.split("\n}").next().unwrap_or(body);
        return Ok(body
            .lines()
            .filter_map(|l| l.trim().strip_prefix("pub "))
            .filter_map(|l| l.split_once(':').map(|(n, _)| n.trim().to_string()))
            .collect());
    }
    Err(format!(
        "no `{opening}` in src/sim/mod.rs or src/topology.rs"
    ))
}

/// The state the series adds lives where the simulator keeps its copy:
/// per CPU or per LLC as the patch has it, in a field that exists.
#[test]
fn state_lives_where_the_series_keeps_it() {
    let series = series();
    let mut left = Vec::new();
    for (file, strukt, _, _) in HOMES {
        left.extend(ok(fields(&series, file, strukt)));
    }
    for (field, def) in &left {
        assert!(
            STATE.iter().any(|(s, f, _)| f == field && *s == def.value),
            "{}: the series adds `{field}` to `{}`; say in STATE where the simulator keeps it",
            def.origin,
            def.value
        );
    }
    for (strukt, field, mirror) in &STATE {
        assert!(
            left.iter().any(|(f, d)| f == field && d.value == *strukt),
            "STATE names `{strukt}.{field}`, which the series does not leave"
        );
        let (home, ours) = match mirror {
            Mirror::Field { home, field } => (home, field),
            Mirror::Not(why) => {
                assert!(!why.trim().is_empty(), "`{strukt}.{field}`: say why none");
                continue;
            }
        };
        let (_, _, per, homes) = HOMES.iter().find(|(_, s, _, _)| s == strukt).unwrap();
        assert!(
            homes.contains(home),
            "`{strukt}.{field}` is kept in {home}, but {strukt} is per {per}: {homes:?}"
        );
        let have = ok(sim_fields(home));
        assert!(
            have.iter().any(|f| f == ours),
            "{home} has no field `{ours}`: {have:?}"
        );
    }
}
