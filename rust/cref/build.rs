// SPDX-License-Identifier: GPL-2.0

//! Builds the C references of the differential tests from the real sources
//! (issue 12): nothing the tests compare against is retyped.
//!
//! - Linux 6.12: the files below are read out of Debian's
//!   `/usr/src/linux-source-6.12.tar.xz` (the package `kernel.version` pins,
//!   installed by `make setup`), once per target directory (next to the
//!   OUT_DIRs, shared by `cargo test` and `cargo clippy`). Only where
//!   that tarball is missing, an unpacked tree is used instead: `$SLB_SRC`,
//!   else the repository's `.cache/linux-src` (its `sched-lb-base` tag,
//!   which is the tree before the series, when it is a git tree). With
//!   neither, the build fails and says how to get one.
//! - The seed threads (`$SLB_SEEDS`, else the copies in `rust/cref/seeds`,
//!   so a clean clone builds on its own): the hunks of the patches the
//!   series replaces or brings back, found by message, file and a line of
//!   the hunk.
//!
//! `src/extract.rs` finds each function, macro, type, member, condition or
//! statement by name (or by a line it holds) and fails the build when it
//! does not find exactly one. The pieces are written to two headers in
//! `$OUT_DIR/gen/`, each with its origin in a comment (and a `#line`, so a
//! compiler message points at the real file); `c/ref.c` and `c/ref_hz.c`
//! are the glue that calls them, `c/shim.h` the userspace stand-ins for
//! kernel infrastructure, and `c/transcribed.h` the one thing no source
//! declares. `c/ref_hz.c` is compiled once per HZ in [`HZ`], with the
//! `timeconst.h` that the tree's own `kernel/time/timeconst.bc` generates
//! for it through `bc`, as Kbuild does. `$OUT_DIR/sources.txt` lists every
//! piece and where it came from (`sched_lb_cref::SOURCES`).
//!
//! The C is compiled as the kernel compiles it, whatever the cargo profile:
//! with clang where installed (the kernel is built with LLVM=1; `$CC`
//! still wins), `-O2` and the top Makefile's `-fno-strict-aliasing
//! -fno-strict-overflow -fno-delete-null-pointer-checks`, because rule_cost
//! (`src/bin/rule_cost.rs`) counts its instructions against the Rust's.
//! `sched_lb_cref::C_COMPILER` and `C_FLAGS` say what was used.

#[path = "src/extract.rs"]
#[allow(dead_code)]
mod extract;

use std::fmt::Write as _;
use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use extract::{Piece, Side};

/// HZ values the per-HZ references are built for. They reach every branch
/// of `jiffies_to_msecs()` and `_msecs_to_jiffies()`:
/// - HZ dividing 1000 (first branches): 2, 8, 100, 250, 1000;
/// - HZ a multiple of 1000 above it (second branches): 2000, 3000;
/// - the general branch below 1000, where `jiffies_to_msecs()` rounds up:
///   3, 24, 48, 300, 999;
/// - the general branch above 1000, where `_msecs_to_jiffies()` also caps
///   m at `jiffies_to_msecs(MAX_JIFFY_OFFSET)`, so the rounding moves the
///   cap: by one at 1002, 1016 and 1023 (below 2^31, so reached); by one
///   but above 2^31 (never reached: larger m are negative ints) at 1001,
///   1024 and 1500; not at all at 1200; and at 2001 and 4096 from a
///   32-bit value to 0, as the rounded-up quotient truncates to 0 in
///   `unsigned int`, so every m > 0 is capped.
pub const HZ: [u32; 21] = [
    2, 3, 8, 24, 48, 100, 250, 300, 999, 1000, 1001, 1002, 1016, 1023, 1024, 1200, 1500, 2000,
    2001, 3000, 4096,
];

/// Every file read from the 6.12 tree.
const FILES: &[&str] = &[
    "include/asm-generic/bitsperlong.h",
    "include/asm-generic/int-ll64.h",
    "include/linux/bits.h",
    "include/linux/compiler.h",
    "include/linux/compiler_attributes.h",
    "include/linux/compiler_types.h",
    "include/linux/jiffies.h",
    "include/linux/math.h",
    "include/linux/math64.h",
    "include/linux/minmax.h",
    "include/linux/sched/topology.h",
    "include/uapi/linux/const.h",
    "include/vdso/limits.h",
    "include/vdso/time64.h",
    "kernel/sched/fair.c",
    "kernel/sched/sched.h",
    "kernel/time/time.c",
    "kernel/time/timeconst.bc",
];

fn main() {
    if let Err(e) = run() {
        eprintln!("\nrust/cref build.rs: {e}\n");
        std::process::exit(1);
    }
}

fn run() -> Result<(), String> {
    let manifest = PathBuf::from(env("CARGO_MANIFEST_DIR")?);
    let repo = manifest.join("../..");
    let out = PathBuf::from(env("OUT_DIR")?);
    for p in ["c", "src/extract.rs", "build.rs"] {
        println!("cargo:rerun-if-changed={p}");
    }
    for v in ["SLB_SRC", "SLB_SEEDS"] {
        println!("cargo:rerun-if-env-changed={v}");
    }

    let tree = Tree::get(&repo, &out)?;
    let seeds = Seeds::find(&repo)?;
    let gen = out.join("gen");
    mkdir(&gen)?;
    let mut sources = format!(
        "6.12 tree: {}\nseed threads: {}\n\n",
        tree.origin,
        seeds.dir.display()
    );

    let patches = repo.join("patches");
    println!("cargo:rerun-if-changed={}", patches.display());
    let (ref_h, ref_list) = ref_header(&tree, &seeds, &patches)?;
    write(&gen.join("ref_gen.h"), &ref_h)?;
    let (hz_h, hz_list) = hz_header(&tree, &seeds)?;
    write(&gen.join("ref_hz_gen.h"), &hz_h)?;
    let (sis_h, sis_list) = sis_header(&tree, &seeds)?;
    write(&gen.join("ref_sis_gen.h"), &sis_h)?;
    sources += &ref_list;
    sources += &hz_list;
    sources += &sis_list;
    write(&out.join("sources.txt"), &sources)?;

    // timeconst.h includes <linux/param.h> and <linux/types.h>; HZ and the
    // types come from the wrapper and c/shim.h instead.
    let shim = out.join("shim-include/linux");
    mkdir(&shim)?;
    write(
        &shim.join("param.h"),
        "/* empty: HZ is defined by the per-HZ wrapper */\n",
    )?;
    write(
        &shim.join("types.h"),
        "/* empty: the types are in c/shim.h */\n",
    )?;

    let c = manifest.join("c");
    let clang = kernel_cc();
    let build = || {
        let mut b = cc::Build::new();
        if let Some(clang) = &clang {
            b.compiler(clang);
        }
        // The kernel's optimisation and semantics (the top Makefile's
        // KBUILD_CFLAGS), not the cargo profile's: rule_cost counts the
        // instructions of this C against the Rust, and release would give
        // it -O3.
        b.include(&c)
            .include(&gen)
            .include(out.join("shim-include"))
            .warnings(false)
            .opt_level(2)
            .flag("-std=gnu11")
            .flag("-fno-strict-aliasing")
            .flag("-fno-strict-overflow")
            .flag("-fno-delete-null-pointer-checks")
            .flag("-Werror=implicit-function-declaration")
            .flag("-Werror=implicit-int");
        b
    };
    let tool = build().try_get_compiler().map_err(|e| e.to_string())?;
    let version = Command::new(tool.path())
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|v| v.lines().next().map(str::to_string))
        .unwrap_or_else(|| format!("{} (no --version)", tool.path().display()));
    let flags: Vec<String> = tool
        .args()
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .filter(|a| a.starts_with("-O") || a.starts_with("-f") || a.starts_with("-std"))
        .collect();
    println!("cargo:rustc-env=SLB_CREF_CC={version}");
    println!("cargo:rustc-env=SLB_CREF_CFLAGS={}", flags.join(" "));
    build().file(c.join("ref.c")).compile("sched_lb_cref");
    // A unit of its own: its stand-in structs are not ref.c's.
    build()
        .file(c.join("ref_sis.c"))
        .compile("sched_lb_cref_sis");

    let bc_script = tree.path("kernel/time/timeconst.bc");
    let mut hz_build = build();
    let mut rs = String::from(
        "// Generated by rust/cref/build.rs: the per-HZ references and their table.\n\
         extern \"C\" {\n",
    );
    let mut table = String::from(
        "/// Every HZ `build.rs` compiled the references for.\npub const HZ_REFS: &[HzRef] = &[\n",
    );
    for hz in HZ {
        let dir = out.join(format!("hz{hz}"));
        mkdir(&dir)?;
        let timeconst = dir.join("timeconst.h");
        write(&timeconst, &timeconst_h(&bc_script, hz)?)?;
        let wrapper = dir.join(format!("ref_hz{hz}.c"));
        write(
            &wrapper,
            &format!(
                "/* Generated by rust/cref/build.rs. */\n#define HZ {hz}\n#define REF_SUFFIX hz{hz}\n\
                 #define TIMECONST_H \"{}\"\n#include \"ref_hz.c\"\n",
                timeconst.display()
            ),
        )?;
        hz_build.file(&wrapper);
        let _ = write!(
            rs,
            "    pub fn ref_jiffies_to_msecs_hz{hz}(j: c_ulong) -> c_uint;\n\
             \x20   pub fn ref_msecs_to_jiffies_hz{hz}(m: c_uint) -> c_ulong;\n\
             \x20   pub fn ref_balance_interval_hz{hz}(balance_interval: c_uint, busy_factor: c_uint, \
             cpu_busy: c_int, max_load_balance_interval: c_ulong, busy_dec: bool) -> c_ulong;\n"
        );
        let _ = writeln!(
            table,
            "    HzRef {{ hz: {hz}, jiffies_to_msecs: ref_jiffies_to_msecs_hz{hz}, \
             msecs_to_jiffies: ref_msecs_to_jiffies_hz{hz}, balance_interval: ref_balance_interval_hz{hz} }},"
        );
    }
    hz_build.compile("sched_lb_cref_hz");
    rs += "}\n\n";
    rs += &table;
    rs += "];\n";
    write(&out.join("hz_refs.rs"), &rs)?;
    Ok(())
}

/// The kernel of this project is built with clang (LLVM=1): the
/// references are too, when it is installed, so that rule_cost compares
/// like with like. `$CC` still wins (cc reads it), and without either cc
/// falls back to the system's `cc`.
fn kernel_cc() -> Option<PathBuf> {
    for v in [
        "CC",
        "TARGET_CC",
        "CC_x86_64-unknown-linux-gnu",
        "CC_x86_64_unknown_linux_gnu",
    ] {
        println!("cargo:rerun-if-env-changed={v}");
        if std::env::var_os(v).is_some() {
            return None;
        }
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join("clang"))
        .find(|p| p.is_file())
}

/// Says what was looked for, and where, in front of an extraction error.
fn ctx<'a>(what: &'a str, file: &'a str) -> impl Fn(String) -> String + 'a {
    move |e| format!("{what} in {file}: {e}")
}

fn env(v: &str) -> Result<String, String> {
    std::env::var(v).map_err(|_| format!("${v} is not set (run through cargo)"))
}

fn mkdir(p: &Path) -> Result<(), String> {
    fs::create_dir_all(p).map_err(|e| format!("mkdir {}: {e}", p.display()))
}

fn write(p: &Path, s: &str) -> Result<(), String> {
    // Unchanged files keep their mtime, so nothing recompiles for nothing.
    if fs::read_to_string(p).is_ok_and(|old| old == s) {
        return Ok(());
    }
    fs::write(p, s).map_err(|e| format!("write {}: {e}", p.display()))
}

fn read(p: &Path) -> Result<String, String> {
    fs::read_to_string(p).map_err(|e| format!("read {}: {e}", p.display()))
}

/// The 6.12 files, unpacked into `$OUT_DIR/linux/<top>/`.
struct Tree {
    root: PathBuf,
    /// `linux-source-6.12/`: how pieces are cited.
    top: String,
    /// Where the files came from, for `sources.txt`.
    origin: String,
}

impl Tree {
    fn get(repo: &Path, out: &Path) -> Result<Tree, String> {
        let version = repo.join("kernel.version");
        println!("cargo:rerun-if-changed={}", version.display());
        let pinned = read(&version)?;
        let field = |k: &str| {
            pinned
                .lines()
                .find_map(|l| l.strip_prefix(k)?.strip_prefix('='))
                .map(|v| v.trim().to_string())
                .ok_or(format!("{} has no {k}=", version.display()))
        };
        let pkg = field("LINUX_SOURCE_PKG")?;
        let pkg_version = field("LINUX_SOURCE_VERSION")?;
        let tarball = PathBuf::from(format!("/usr/src/{pkg}.tar.xz"));
        // Reruns when the tarball appears, changes or goes.
        println!("cargo:rerun-if-changed={}", tarball.display());
        let base = out.join("linux");
        let root = base.join(&pkg);

        if let Ok(meta) = fs::metadata(&tarball) {
            let mtime = meta
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_secs());
            let key = format!(
                "{} {} {mtime}\n{}\n",
                tarball.display(),
                meta.len(),
                FILES.join("\n")
            );
            // Unpacking means decompressing the whole tarball (about 14 s
            // on one core), so it is done once per target directory:
            // `cargo test` and `cargo clippy` have an OUT_DIR each, side by
            // side in <target>/<profile>/build/. A directory per key, made
            // under a temporary name and renamed into place, so a build
            // never sees a half-unpacked tree.
            let shared = out
                .parent()
                .and_then(Path::parent)
                .filter(|b| b.file_name().is_some_and(|n| n == "build"))
                .unwrap_or(out);
            let mut h = std::collections::hash_map::DefaultHasher::new();
            std::hash::Hash::hash(&key, &mut h);
            let cache = shared.join(format!(
                "sched-lb-cref-{pkg}-{:016x}",
                std::hash::Hasher::finish(&h)
            ));
            let stamp = cache.join("stamp");
            if fs::read_to_string(&stamp).ok().as_deref() != Some(key.as_str()) {
                let tmp = shared.join(format!(
                    "{}.tmp{}",
                    cache
                        .file_name()
                        .and_then(|n| n.to_str())
                        .unwrap_or("cache"),
                    std::process::id()
                ));
                let _ = fs::remove_dir_all(&tmp);
                mkdir(&tmp)?;
                let members: Vec<String> = FILES.iter().map(|f| format!("{pkg}/{f}")).collect();
                let o = Command::new("tar")
                    .arg("-xJf")
                    .arg(&tarball)
                    .arg("-C")
                    .arg(&tmp)
                    .args(&members)
                    .output()
                    .map_err(|e| {
                        format!("cannot run tar (with xz) on {}: {e}", tarball.display())
                    })?;
                if !o.status.success() {
                    let _ = fs::remove_dir_all(&tmp);
                    return Err(format!(
                        "tar -xJf {} failed:\n{}",
                        tarball.display(),
                        String::from_utf8_lossy(&o.stderr)
                    ));
                }
                write(&tmp.join("stamp"), &key)?;
                let _ = fs::remove_dir_all(&cache);
                if fs::rename(&tmp, &cache).is_err() {
                    // Another build put it there first.
                    let _ = fs::remove_dir_all(&tmp);
                }
                if fs::read_to_string(&stamp).ok().as_deref() != Some(key.as_str()) {
                    return Err(format!(
                        "could not unpack {} into {}",
                        tarball.display(),
                        cache.display()
                    ));
                }
            }
            return Ok(Tree {
                root: cache.join(&pkg),
                top: pkg.clone(),
                origin: format!("{} (Debian {pkg} {pkg_version})", tarball.display()),
            });
        }

        let unpacked = match std::env::var_os("SLB_SRC").map(PathBuf::from) {
            Some(p) if p.join("kernel/sched/fair.c").is_file() => Some(p),
            Some(p) => {
                return Err(format!(
                    "{} is missing, and SLB_SRC={} is not a Linux source tree",
                    tarball.display(),
                    p.display()
                ))
            }
            None => Some(repo.join(".cache/linux-src"))
                .filter(|p| p.join("kernel/sched/fair.c").is_file()),
        };
        let Some(src) = unpacked else {
            return Err(format!(
                "the Linux 6.12 source is needed to build the C references, and neither\n\
                 {} nor an unpacked tree ($SLB_SRC, or .cache/linux-src) is there.\n\
                 Run 'make setup' (it installs the Debian package {pkg} {pkg_version}), or\n\
                 point SLB_SRC at an unpacked linux-source-6.12 tree.",
                tarball.display()
            ));
        };
        // The series' own tree: read the files as they were before it.
        let base_tag = Command::new("git")
            .arg("-C")
            .arg(&src)
            .args(["rev-parse", "-q", "--verify", "sched-lb-base^{commit}"])
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
        let _ = fs::remove_dir_all(&base);
        for f in FILES {
            let dst = root.join(f);
            mkdir(dst.parent().unwrap_or(&root))?;
            let text = match &base_tag {
                Some(rev) => {
                    let o = Command::new("git")
                        .arg("-C")
                        .arg(&src)
                        .args(["show", &format!("{rev}:{f}")])
                        .output()
                        .map_err(|e| format!("git show in {}: {e}", src.display()))?;
                    if !o.status.success() {
                        return Err(format!("{}: no {f} at sched-lb-base", src.display()));
                    }
                    String::from_utf8_lossy(&o.stdout).into_owned()
                }
                None => {
                    println!("cargo:rerun-if-changed={}", src.join(f).display());
                    read(&src.join(f))?
                }
            };
            write(&dst, &text)?;
        }
        let origin = match &base_tag {
            Some(rev) => format!("{} at sched-lb-base ({rev})", src.display()),
            None => src.display().to_string(),
        };
        println!(
            "cargo:warning={} is missing; the C references come from {origin}",
            tarball.display()
        );
        Ok(Tree {
            root,
            top: pkg,
            origin,
        })
    }

    fn path(&self, f: &str) -> PathBuf {
        self.root.join(f)
    }

    fn read(&self, f: &str) -> Result<String, String> {
        read(&self.path(f))
    }
}

/// The seed threads.
struct Seeds {
    dir: PathBuf,
}

impl Seeds {
    fn find(repo: &Path) -> Result<Seeds, String> {
        if let Some(d) = std::env::var_os("SLB_SEEDS").map(PathBuf::from) {
            if !d.is_dir() {
                return Err(format!("SLB_SEEDS={} is not a directory", d.display()));
            }
            return Ok(Seeds { dir: d });
        }
        // The copies in the repository (rust/cref/seeds), so a clean clone
        // builds on its own.
        let dir = [repo.join("rust/cref/seeds")]
            .into_iter()
            .find(|d| d.is_dir())
            .ok_or(
                "the seed threads (000_*.txt ... 004_*.txt) hold the patches whose C the\n\
                 differential tests compare against, and rust/cref/seeds is missing: restore\n\
                 it from git, or set SLB_SEEDS to their directory."
                    .to_string(),
            )?;
        Ok(Seeds { dir })
    }

    /// The thread whose file name starts with `prefix`, and its name.
    fn thread(&self, prefix: &str) -> Result<(String, String), String> {
        let mut hits: Vec<PathBuf> = fs::read_dir(&self.dir)
            .map_err(|e| format!("{}: {e}", self.dir.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with(prefix) && n.ends_with(".txt"))
            })
            .collect();
        hits.sort();
        match hits.as_slice() {
            [one] => {
                println!("cargo:rerun-if-changed={}", one.display());
                let name = one
                    .file_name()
                    .and_then(|n| n.to_str())
                    .unwrap_or(prefix)
                    .to_string();
                Ok((read(one)?, name))
            }
            _ => Err(format!(
                "{}: want one {prefix}*.txt, found {}",
                self.dir.display(),
                hits.len()
            )),
        }
    }
}

/// A generated header: pieces with their origin, and the list for
/// `sources.txt`.
struct Gen {
    name: &'static str,
    text: String,
    list: String,
}

impl Gen {
    fn new(name: &'static str, what: &str, tree: &Tree, seeds: &Seeds) -> Gen {
        Gen {
            name,
            text: format!(
                "/* SPDX-License-Identifier: GPL-2.0 */\n/*\n * Generated by rust/cref/build.rs: {what}\n * taken from {} and the seed threads in {}.\n * Do not edit; see build.rs.\n */\n",
                tree.origin,
                seeds.dir.display()
            ),
            list: format!("{name}:\n"),
        }
    }

    /// Lists a piece and returns where it came from: `origin:first-last`
    /// for a file of the tree, or, for a hunk (an `origin` holding `@@`),
    /// the thread file, the hunk's line there and its header.
    fn cite(&mut self, what: &str, origin: &str, p: &Piece) -> String {
        let at = if origin.contains("@@") {
            origin.to_string()
        } else if p.first_line == p.last_line {
            format!("{origin}:{}", p.first_line)
        } else {
            format!("{origin}:{}-{}", p.first_line, p.last_line)
        };
        let _ = writeln!(self.list, "  {what:<40} {at}");
        at
    }

    /// Code as it is in the file, under a `#line` that points there.
    fn code(&mut self, what: &str, origin: &str, p: Piece) {
        let at = self.cite(what, origin, &p);
        let _ = writeln!(
            self.text,
            "\n/* {what}: {at} */\n#line {} \"{origin}\"\n{}",
            p.first_line, p.text
        );
        let next = self.text.matches('\n').count() + 2;
        let _ = writeln!(self.text, "#line {next} \"{}\"", self.name);
    }

    /// A condition or statement as a macro (`paren`: in parentheses).
    fn define(&mut self, name: &str, what: &str, origin: &str, p: Piece, paren: bool) {
        let at = self.cite(&format!("{name}: {what}"), origin, &p);
        let body = p.text.lines().collect::<Vec<_>>().join(" \\\n\t");
        let body = if paren { format!("({body})") } else { body };
        let _ = writeln!(
            self.text,
            "\n/* {what}: {at} */\n#define {name} \\\n\t{body}"
        );
    }

    fn raw(&mut self, s: &str) {
        self.text += s;
    }
}

/// The pieces of `c/ref.c`: 6.12's tests and the threads' code that the
/// HZ-independent rules replace.
fn ref_header(tree: &Tree, seeds: &Seeds, patches: &Path) -> Result<(String, String), String> {
    let mut g = Gen::new("ref_gen.h", "the C that c/ref.c wraps,", tree, seeds);
    let t = &tree.top;
    let f = |p: &str| format!("{t}/{p}");
    let fair = tree.read("kernel/sched/fair.c")?;
    let sched_h = tree.read("kernel/sched/sched.h")?;
    let topo = tree.read("include/linux/sched/topology.h")?;

    for (file, names) in [
        ("include/vdso/limits.h", &["INT_MAX"][..]),
        ("include/linux/bits.h", &["BITS_PER_BYTE", "BITS_PER_TYPE"]),
        ("include/linux/compiler_types.h", &["___PASTE", "__PASTE"]),
        ("include/linux/compiler.h", &["__UNIQUE_ID", "unlikely"]),
        ("include/asm-generic/bitsperlong.h", &["BITS_PER_LONG"]),
        (
            "include/linux/minmax.h",
            &[
                "__cmp_op_min",
                "__cmp_op_max",
                "__cmp",
                "__cmp_once_unique",
                "__cmp_once",
                "min_t",
            ],
        ),
    ] {
        let src = tree.read(file)?;
        for n in names {
            g.code(
                n,
                &f(file),
                extract::macro_def(&src, n).map_err(ctx(n, file))?,
            );
        }
    }
    g.code(
        "shr_bound",
        &f("kernel/sched/sched.h"),
        extract::macro_def(&sched_h, "shr_bound").map_err(ctx("shr_bound", "sched.h"))?,
    );
    let math64 = tree.read("include/linux/math64.h")?;
    for n in ["div_u64_rem", "div_u64"] {
        g.code(
            &format!("{n}()"),
            &f("include/linux/math64.h"),
            extract::function(&math64, n).map_err(ctx(n, "math64.h"))?,
        );
    }
    g.code(
        "enum group_type",
        &f("kernel/sched/fair.c"),
        extract::type_def(&fair, "enum group_type").map_err(ctx("enum group_type", "fair.c"))?,
    );

    // Structs of just the members the tests set, declared as in 6.12.
    let strukt = |g: &mut Gen,
                  tag: &str,
                  src: &str,
                  file: &str,
                  names: &[&str],
                  extra: &str|
     -> Result<(), String> {
        let p = extract::members(src, tag, names).map_err(ctx(tag, file))?;
        let at = g.cite(&format!("{tag} {{ {} }}", names.join(", ")), &f(file), &p);
        let _ = writeln!(
            g.text,
            "\n/* {tag}, members of {at} */\n{tag} {{\n{}\n{extra}}};",
            p.text
        );
        Ok(())
    };
    strukt(
        &mut g,
        "struct sched_domain",
        &topo,
        "include/linux/sched/topology.h",
        &[
            "nr_balance_failed",
            "cache_nice_tries",
            "imbalance_pct",
            "max_newidle_lb_cost",
            "span_weight",
        ],
        "\tRFC_SCHED_DOMAIN_MEMBERS /* c/transcribed.h */\n",
    )?;
    strukt(
        &mut g,
        "struct lb_env",
        &fair,
        "kernel/sched/fair.c",
        &["sd", "imbalance"],
        "",
    )?;
    strukt(
        &mut g,
        "struct sg_lb_stats",
        &fair,
        "kernel/sched/fair.c",
        &["avg_load", "idle_cpus", "group_weight", "group_type"],
        "",
    )?;

    // Zijlstra's RFC 02/11 (2018) adds two members to struct rq.
    let (t002, n002) = seeds.thread("002_")?;
    let s002 = format!("seeds/{n002}");
    let rfc02_rq = extract::hunk(
        &t002,
        "[RFC 02/11]",
        "Peter Zijlstra",
        "kernel/sched/sched.h",
        "wake_stamp;",
    )?;
    let rq_new = extract::lines_span(&rfc02_rq.side(Side::New), "wake_stamp;", "wake_avg;")?;
    let rq_cite = g.cite(
        "struct rq { wake_stamp, wake_avg }",
        &format!(
            "{s002}:{} [RFC 02/11] {}, new side",
            rfc02_rq.at_line, rfc02_rq.header
        ),
        &rq_new,
    );
    strukt(
        &mut g,
        "struct rq",
        &sched_h,
        "kernel/sched/sched.h",
        &["avg_idle"],
        &format!("\t/* {rq_cite} */\n{}\n", rq_new.text),
    )?;

    // 6.12's tests, as conditions of the ifs that hold them.
    let fair_c = f("kernel/sched/fair.c");
    for (name, func, needle) in [
        (
            "LINUX_IDLE_CPUS_BALANCED",
            "sched_balance_find_src_group",
            "local->idle_cpus <= (busiest->idle_cpus + 1)",
        ),
        (
            "LINUX_DETACH_LOAD_SKIP",
            "detach_tasks",
            "shr_bound(load, env->sd->nr_balance_failed)",
        ),
        (
            "LINUX_AVG_LOAD_BALANCED",
            "sched_balance_find_src_group",
            "imbalance_pct * local->avg_load",
        ),
        (
            "LINUX_NEWIDLE_STOP",
            "sched_balance_newidle",
            "curr_cost + sd->max_newidle_lb_cost",
        ),
    ] {
        let p = extract::if_condition(&fair, func, needle).map_err(ctx(name, "fair.c"))?;
        g.define(
            name,
            &format!("the if around '{needle}' in {func}()"),
            &fair_c,
            p,
            true,
        );
    }

    // The threads' code.
    let (t000, n000) = seeds.thread("000_")?;
    let (t001, n001) = seeds.thread("001_")?;
    let s000 = format!("seeds/{n000}");
    let s001 = format!("seeds/{n001}");
    let idle_stmt = "if (busiest->group_type != group_overloaded) {";
    for (name, title, author, needle) in [
        (
            "GALBRAITH_V2_IDLE_CPUS",
            "[v2 patch v3.18+ regression fix]",
            "Mike Galbraith",
            "== 2 ? 2 : 1",
        ),
        (
            "GUITTOT_IDLE_CPUS",
            "Re: [v2 patch v3.18+ regression fix]",
            "Vincent Guittot",
            "sched_feat(BALANCE_IDLE_CPUS)",
        ),
    ] {
        let h = extract::hunk(&t000, title, author, "kernel/sched/fair.c", needle)?;
        let p = extract::statement(&h.side(Side::New), idle_stmt).map_err(ctx(name, &s000))?;
        g.define(
            name,
            &format!("'{title}' ({author})"),
            &format!("{s000}:{} {}, new side", h.at_line, h.header),
            p,
            false,
        );
    }
    let h = extract::hunk(
        &t001,
        "[PATCH 1/4]",
        "Vincent Guittot",
        "kernel/sched/fair.c",
        "load/2 > env->imbalance",
    )?;
    let p = extract::condition(&h.side(Side::Old), "load/2 > env->imbalance")
        .map_err(ctx("V59_DETACH_LOAD_SKIP", &s001))?;
    g.define(
        "V59_DETACH_LOAD_SKIP",
        "detach_tasks() before [PATCH 1/4] (Vincent Guittot)",
        &format!("{s001}:{} {}, old side", h.at_line, h.header),
        p,
        true,
    );

    let rfc = |title: &str, file: &str, needle: &str| {
        extract::hunk(&t002, title, "Peter Zijlstra", file, needle)
    };
    let fair_rel = "kernel/sched/fair.c";
    let h01a = rfc("[RFC 01/11]", fair_rel, "int cpu, loops = 0, nr = INT_MAX;")?;
    let h01b = rfc("[RFC 01/11]", fair_rel, "time = div_u64(time, loops);")?;
    let h02 = rfc("[RFC 02/11]", fair_rel, "this_rq->wake_avg >>= 1;")?;
    let h03 = rfc("[RFC 03/11]", fair_rel, "this_rq->wake_avg -= time;")?;
    let h06a = rfc("[RFC 06/11]", fair_rel, "#define sis_min_cores")?;
    let h06b = rfc("[RFC 06/11]", fair_rel, "sis_min_cores * avg_cost")?;
    let at =
        |h: &extract::Hunk, t: &str| format!("{s002}:{} {t} {}, new side", h.at_line, h.header);
    let pieces = [
        (
            "RFC01_DECLS",
            "select_idle_cpu()'s locals",
            &h01a,
            "[RFC 01/11]",
            extract::lines_span(&h01a.side(Side::New), "int cpu, loops", "s64 delta;"),
        ),
        (
            "RFC01_SCAN_COST",
            "the per-CPU scan cost",
            &h01b,
            "[RFC 01/11]",
            extract::lines_span(
                &h01b.side(Side::New),
                "time = div_u64(time, loops);",
                "this_sd->avg_scan_cost += delta;",
            ),
        ),
        (
            "RFC02_AGE_DECLS",
            "SIS_AGE's locals",
            &h02,
            "[RFC 02/11]",
            extract::lines_span(
                &h02.side(Side::New),
                "unsigned long now = jiffies;",
                "struct rq *this_rq = this_rq();",
            ),
        ),
        (
            "RFC02_AGE",
            "wake_avg's ageing",
            &h02,
            "[RFC 02/11]",
            extract::statement(
                &h02.side(Side::New),
                "if (unlikely(this_rq->wake_stamp < now)) {",
            ),
        ),
        (
            "RFC02_AVG_COST",
            "avg_cost",
            &h02,
            "[RFC 02/11]",
            extract::statement(
                &h02.side(Side::New),
                "avg_cost = this_sd->avg_scan_cost + 1;",
            ),
        ),
        (
            "RFC03_ONCE",
            "SIS_ONCE's spending of the scan's time",
            &h03,
            "[RFC 03/11]",
            extract::statement(&h03.side(Side::New), "if (sched_feat(SIS_ONCE)) {"),
        ),
        (
            "RFC06_SIS_PROP",
            "SIS_PROP's budget",
            &h06b,
            "[RFC 06/11]",
            extract::statement(&h06b.side(Side::New), "if (sched_feat(SIS_PROP)) {"),
        ),
    ];
    for (name, what, h, title, p) in pieces {
        let p = p.map_err(ctx(name, &s002))?;
        g.define(
            name,
            &format!("{what}, {title} (Peter Zijlstra)"),
            &at(h, title),
            p,
            false,
        );
    }
    let p = extract::lines_span(
        &h06a.side(Side::New),
        "#define sis_min_cores",
        "#define sis_min_cores",
    )?;
    let cite = g.cite("sis_min_cores", &at(&h06a, "[RFC 06/11]"), &p);
    g.raw(&format!(
        "\n/* sis_min_cores: {cite} */\n{}\n",
        p.text.trim()
    ));

    // The series' own C where a policy rule decides in C before any hook
    // runs: the last hunk of the series (patches/series order) that holds
    // the function's definition is its final form.
    let (name, needle) = (
        "sched_lb_sis_wanted",
        "static inline bool sched_lb_sis_wanted(",
    );
    let (p, origin) = series_function(patches, "kernel/sched/fair.c", name, needle)?;
    g.raw("\n/* The flags sched_lb_sis_wanted() reads; c/ref.c sets them. */\nstatic bool sched_feat_SIS_FOLD, sched_feat_SIS_PROP;\n");
    g.code(
        &format!("{name}(), the series' entry test of the SIS policy scan"),
        &origin,
        p,
    );

    // Seed 004: Rohit Jain's stop test. No message of the thread carries
    // his patch with its diff header; his own replies quote its added lines
    // whole (the others' quotes break the lines differently).
    let (t004, n004) = seeds.thread("004_")?;
    let s004 = format!("seeds/{n004}");
    let name = "JAIN_NEWIDLE_STOP";
    let needle = "sd->max_newidle_lb_cost +";
    let q = extract::quoted_added(&t004, "Re: [RFC 1/2]", "Rohit Jain", needle)
        .map_err(ctx(name, &s004))?;
    let p = extract::condition(&q.text, needle).map_err(ctx(name, &s004))?;
    g.define(
        name,
        "the newidle stop test of [RFC 1/2] (Rohit Jain), as his reply quotes it",
        &s004,
        Piece {
            first_line: q.first_line + p.first_line - 1,
            last_line: q.first_line + p.last_line - 1,
            ..p
        },
        true,
    );

    Ok((g.text, g.list))
}

/// The function `name` as the series leaves it: from the last hunk, in
/// `patches/series` order, of `file` that holds `needle` (its definition's
/// first line), read from that hunk's new side. Returns the piece and its
/// origin (patch file and hunk).
fn series_function(
    patches: &Path,
    file: &str,
    name: &str,
    needle: &str,
) -> Result<(Piece, String), String> {
    let list = read(&patches.join("series"))?;
    let mut last = None;
    for p in list
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
    {
        let text = read(&patches.join(p))?;
        if let Some(h) = extract::patch_hunks(&text, file, needle)?.pop() {
            last = Some((p.to_string(), h));
        }
    }
    let (p, h) = last.ok_or(format!(
        "no patch of patches/series defines {name}() in {file}"
    ))?;
    let origin = format!("patches/{p}:{} {}, new side", h.at_line, h.header);
    let piece = extract::function(&h.side(Side::New), name).map_err(ctx(name, &origin))?;
    Ok((piece, origin))
}

/// The pieces of `c/ref_hz.c`: 6.12's jiffies conversions and balance
/// interval, for the HZ the includer defines.
/// The pieces of `c/ref_sis.c`: 6.12's `select_idle_cpu()`, the stock
/// scan the SIS hook is judged against, and the functions of `fair.c` it
/// calls (two of them defined once per `CONFIG_SCHED_SMT` branch: the
/// whole conditional, which the glue compiles with SMT).
fn sis_header(tree: &Tree, seeds: &Seeds) -> Result<(String, String), String> {
    let mut g = Gen::new(
        "ref_sis_gen.h",
        "6.12's select_idle_cpu() for c/ref_sis.c,",
        tree,
        seeds,
    );
    let fair = tree.read("kernel/sched/fair.c")?;
    let origin = format!("{}/kernel/sched/fair.c", tree.top);
    for n in [
        "__select_idle_cpu",
        "set_idle_cores",
        "select_idle_core",
        "select_idle_cpu",
    ] {
        g.code(
            &format!("{n}()"),
            &origin,
            extract::function(&fair, n).map_err(ctx(n, "fair.c"))?,
        );
    }
    Ok((g.text, g.list))
}

fn hz_header(tree: &Tree, seeds: &Seeds) -> Result<(String, String), String> {
    let mut g = Gen::new(
        "ref_hz_gen.h",
        "the C that c/ref_hz.c wraps, for the HZ it defines,",
        tree,
        seeds,
    );
    let t = &tree.top;
    let f = |p: &str| format!("{t}/{p}");
    for (file, names) in [
        ("include/asm-generic/int-ll64.h", &["U64_C"][..]),
        ("include/vdso/limits.h", &["LONG_MAX"]),
        ("include/asm-generic/bitsperlong.h", &["BITS_PER_LONG"]),
        ("include/vdso/time64.h", &["MSEC_PER_SEC"]),
        ("include/uapi/linux/const.h", &["__KERNEL_DIV_ROUND_UP"]),
        ("include/linux/math.h", &["DIV_ROUND_UP"]),
        ("include/linux/compiler_attributes.h", &["__always_inline"]),
        ("include/linux/compiler_types.h", &["___PASTE", "__PASTE"]),
        ("include/linux/compiler.h", &["__UNIQUE_ID"]),
        (
            "include/linux/minmax.h",
            &["__clamp", "__clamp_once", "__careful_clamp", "clamp"],
        ),
        ("include/linux/jiffies.h", &["MAX_JIFFY_OFFSET"]),
    ] {
        let src = tree.read(file)?;
        for n in names {
            g.code(
                n,
                &f(file),
                extract::macro_def(&src, n).map_err(ctx(n, file))?,
            );
        }
    }
    let topo = tree.read("include/linux/sched/topology.h")?;
    let p = extract::members(
        &topo,
        "struct sched_domain",
        &["balance_interval", "busy_factor"],
    )
    .map_err(ctx("struct sched_domain", "topology.h"))?;
    let at = g.cite(
        "struct sched_domain { balance_interval, busy_factor }",
        &f("include/linux/sched/topology.h"),
        &p,
    );
    let _ = writeln!(
        g.text,
        "\n/* struct sched_domain, members of {at} */\nstruct sched_domain {{\n{}\n}};",
        p.text
    );

    // In the order they call each other.
    let time_c = tree.read("kernel/time/time.c")?;
    let jiffies_h = tree.read("include/linux/jiffies.h")?;
    for (file, src, name) in [
        ("kernel/time/time.c", &time_c, "jiffies_to_msecs"),
        ("include/linux/jiffies.h", &jiffies_h, "_msecs_to_jiffies"),
        ("kernel/time/time.c", &time_c, "__msecs_to_jiffies"),
        ("include/linux/jiffies.h", &jiffies_h, "msecs_to_jiffies"),
    ] {
        g.code(
            &format!("{name}()"),
            &f(file),
            extract::function(src, name).map_err(ctx(name, file))?,
        );
    }

    // get_sd_balance_interval() as in 6.12, and as before Guittot's 2020
    // [PATCH 3/4] (Vincent Guittot) added the busy decrement: the same
    // function with that hunk reversed.
    let fair = tree.read("kernel/sched/fair.c")?;
    let gsbi = extract::function(&fair, "get_sd_balance_interval")
        .map_err(ctx("get_sd_balance_interval", "fair.c"))?;
    let (t001, n001) = seeds.thread("001_")?;
    let h = extract::hunk(
        &t001,
        "[PATCH 3/4]",
        "Vincent Guittot",
        "kernel/sched/fair.c",
        "interval -= 1;",
    )?;
    let v59 =
        extract::reverse_apply(&gsbi.text, &h).map_err(ctx("get_sd_balance_interval", &n001))?;
    let lines = format!(
        "{}:{}-{}",
        f("kernel/sched/fair.c"),
        gsbi.first_line,
        gsbi.last_line
    );
    let cite = g.cite(
        "get_sd_balance_interval() before 3/4",
        &format!(
            "{lines} with seeds/{n001}:{} [PATCH 3/4] {} reversed",
            h.at_line, h.header
        ),
        &gsbi,
    );
    let _ = writeln!(
        g.text,
        "\n/* get_sd_balance_interval() before [PATCH 3/4]: {cite} */\n\
         #define get_sd_balance_interval get_sd_balance_interval_v59\n{v59}\n#undef get_sd_balance_interval"
    );
    g.code("get_sd_balance_interval()", &f("kernel/sched/fair.c"), gsbi);
    Ok((g.text, g.list))
}

/// `echo HZ | bc -q kernel/time/timeconst.bc`, as Kbuild makes
/// `include/generated/timeconst.h`.
fn timeconst_h(script: &Path, hz: u32) -> Result<String, String> {
    let mut bc = Command::new("bc")
        .arg("-q")
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("bc is needed to generate timeconst.h (Debian package bc; make setup installs it): {e}"))?;
    bc.stdin
        .take()
        .ok_or("bc has no stdin")?
        .write_all(format!("{hz}\n").as_bytes())
        .map_err(|e| format!("bc: {e}"))?;
    let o = bc.wait_with_output().map_err(|e| format!("bc: {e}"))?;
    if !o.status.success() || o.stdout.is_empty() {
        return Err(format!("bc {} failed for HZ={hz}", script.display()));
    }
    String::from_utf8(o.stdout).map_err(|e| format!("bc output: {e}"))
}
