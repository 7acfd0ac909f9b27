# SPDX-License-Identifier: GPL-2.0
# Shared helpers for the sched-lb-rs scripts: paths, pinned versions, stage timing.
# Sourced, never executed.

SLB_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=../kernel.version
. "$SLB_ROOT/kernel.version"

# Build trees live here; ignored by git and reused between runs.
SLB_CACHE=${SLB_CACHE:-$SLB_ROOT/.cache}
SLB_SRC=${SLB_SRC:-$SLB_CACHE/linux-src}
# Kernel flavours, a build tree each (reused): test = the fragment plus
# lockdep (debug.config) and sanitizers (make test, make run), plain = the
# fragment and the function_graph tracer (bench.config; make bench, make
# site-cost, make sched-cost: timings on a KASAN or lockdep kernel would
# measure KASAN or lockdep), kcsan = the fragment
# plus lockdep and KCSAN (make stress KCSAN=1; KCSAN and KASAN exclude
# each other).
SLB_FLAVOR=${SLB_FLAVOR:-test}
case $SLB_FLAVOR in
test) SLB_KCONFIG="kunit/.kunitconfig kunit/debug.config kunit/sanitizers.config" _slb_dir=linux-build ;;
plain) SLB_KCONFIG="kunit/.kunitconfig kunit/bench.config" _slb_dir=linux-build-plain ;;
kcsan)
	SLB_KCONFIG="kunit/.kunitconfig kunit/debug.config kunit/kcsan.config" _slb_dir=linux-build-kcsan
	# kernel/sched/Makefile turns KCSAN off for the whole directory
	# ("excessive noise"), which would leave every line of the series'
	# C unwatched. Instrument the three objects that hold it: fair.c,
	# build_policy.o (lb_hooks.c) and build_utility.o (topology.c). core.o
	# stays as stock has it. The noise this brings from stock code is what
	# the control run (CONTROL=1) and scripts/guest/kcsan-stock sort out.
	SLB_KMAKE_FLAGS="KCSAN_SANITIZE_fair.o=y KCSAN_SANITIZE_build_policy.o=y KCSAN_SANITIZE_build_utility.o=y"
	;;
*)
	printf '[sched-lb-rs] ERROR: SLB_FLAVOR=%s: expected test, plain or kcsan\n' "$SLB_FLAVOR" >&2
	exit 1
	;;
esac
SLB_KMAKE_FLAGS=${SLB_KMAKE_FLAGS:-}
SLB_OUT=${SLB_OUT:-$SLB_CACHE/$_slb_dir}
SLB_INITRAMFS=${SLB_INITRAMFS:-$SLB_CACHE/initramfs}
SLB_LOGS=${SLB_LOGS:-$SLB_CACHE/logs}
export PATH="$HOME/.cargo/bin:$PATH"
export CCACHE_DIR=${CCACHE_DIR:-$HOME/.cache/ccache}
# Rewrite absolute paths under the cache relative to the build directory,
# so a fresh clone elsewhere (CI) hits the objects an earlier tree built.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$SLB_CACHE}
export CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-true}

_slb_stage_name=""
_slb_stage_t0=0

log() { printf '[sched-lb-rs] %s\n' "$*" >&2; }
warn() { printf '[sched-lb-rs] WARNING: %s\n' "$*" >&2; }
die() { printf '[sched-lb-rs] ERROR: %s\n' "$*" >&2; exit 1; }

# stage NAME: closes the previous stage (printing its time) and opens NAME.
stage() {
	stage_end
	_slb_stage_name=$1
	_slb_stage_t0=$(date +%s)
	log "==> stage: $1"
}

stage_end() {
	if [ -n "$_slb_stage_name" ]; then
		local t=$(( $(date +%s) - _slb_stage_t0 ))
		printf '[sched-lb-rs] <== stage %-28s %4ds\n' "$_slb_stage_name" "$t" >&2
		mkdir -p "$SLB_LOGS"
		printf '%s %d\n' "$_slb_stage_name" "$t" >> "$SLB_LOGS/stage-times"
		_slb_stage_name=""
	fi
}

need_tool() {
	command -v "$1" >/dev/null 2>&1 ||
		die "required tool '$1' not found; run 'make setup' (scripts/setup.sh) first"
}

# One make invocation for the kernel and the module, so both are built with
# the same LLVM toolchain and rustc (a module must match its kernel's).
SLB_JOBS=${SLB_JOBS:-$(nproc)}
kmake() {
	local cc=clang
	command -v ccache >/dev/null 2>&1 && cc="ccache clang"
	make -s ARCH=x86_64 LLVM=1 CC="$cc" -j"$SLB_JOBS" "$@"
}

# The common config fragment (kunit/.kunitconfig) and the locking checks
# (kunit/debug.config) without Rust and KUnit:
# the base of the kernel/sched/-only builds of make check-configs and
# make check-series HOOKS=n, which build in minutes without them.
slb_fragment_norust() {
	grep -h '^CONFIG_' "$SLB_ROOT/kunit/.kunitconfig" "$SLB_ROOT/kunit/debug.config" |
		grep -vE '^CONFIG_(RUST|RUST_OVERFLOW_CHECKS|KUNIT|KUNIT_DEBUGFS|SCHED_LB_HOOKS_KUNIT)='
}

# kmake_module SRC LOG KNOB=VALUE...: builds the module in SRC against
# ${KDIR:-$SLB_OUT} with clippy (CLIPPY=1: clippy-driver compiles, so the
# object is the one rustc would make), output in LOG. Any warning, from
# rustc, clippy or the C compiler, fails the build and removes the objects,
# so the next build recompiles and shows it again.
kmake_module() {
	local src=$1 log=$2 rc=0
	shift 2
	kmake -C "${KDIR:-$SLB_OUT}" M="$src" CLIPPY=1 "$@" modules > "$log" 2>&1 || rc=$?
	if [ $rc != 0 ] || grep -qE '^(warning|error)(\[|:)|: warning:' "$log"; then
		grep -E -A12 '^(warning|error)(\[|:)|: (warning|error):|\*\*\*' "$log" | head -60 >&2
		find "$src" -name '*.o' -path '*/rust/*' -delete
		rm -f "$src/sched_lb_rs.ko"
		[ $rc != 0 ] && die "module build in $src failed (log: $log)"
		die "module build in $src: warnings are errors here (log: $log)"
	fi
}

# slb_modinfo KO KEY: the words of the module's .modinfo entries KEY, one
# a line. The module states its lists there (rust/sched_lb.rs: modinfo!),
# generated from the one list in its source, so no script parses Rust.
slb_modinfo() {
	local ko=$1 key=$2 out
	[ -f "$ko" ] || die "slb_modinfo: no module at $ko (build it first: make module)"
	case $ko in /*) ;; *) ko=$PWD/$ko ;; esac
	out=$(PATH=$PATH:/sbin:/usr/sbin modinfo -F "$key" "$ko") ||
		die "slb_modinfo: modinfo cannot read $ko"
	out=$(tr ' ' '\n' <<< "$out" | grep -v '^$') ||
		die "slb_modinfo: $ko has no '$key' entry (a module built before its lists went to .modinfo?)"
	echo "$out"
}
# The callbacks of the hook table in rust/hooks.rs (`hook_table!`), the
# one list of hooks, one name a line, as module KO (default: the
# checkout's build) states them; slb_hook_switches: the SLB_HOOKS_OFF
# names (a hook and the one that accounts for it share one), each once.
slb_hooks() { slb_modinfo "${1:-$SLB_ROOT/sched_lb_rs.ko}" slb_hooks; }
slb_hook_switches() {
	slb_modinfo "${1:-$SLB_ROOT/sched_lb_rs.ko}" slb_hook_switches |
		sed 's/^slb_no_hook_//' | awk '!seen[$0]++'
}
# The flags whose hook the module judges against stock 6.12: each has a
# shadow switch and a differs counter in debugfs (rust/hooks.rs, the
# "judged" lines of hook_table!).
slb_judged_flags() { slb_modinfo "${1:-$SLB_ROOT/sched_lb_rs.ko}" slb_judged_flags; }
# The series' answer checks, "hook: message" a line, from the sched_lb_reject()
# sites of the kernel source the module is built against: KDIR's (its
# source/ link in an O= build tree), else ours.
slb_check_sites() {
	local src=${KDIR:+$KDIR/source}
	[ -n "$src" ] && [ -f "$src/kernel/sched/fair.c" ] || src=${KDIR:-$SLB_SRC}
	[ -f "$src/kernel/sched/fair.c" ] || die "slb_check_sites: no kernel/sched/fair.c under $src"
	python3 - "$src"/kernel/sched/fair.c "$src"/kernel/sched/lb_hooks.c <<'PY'
import re, sys
site = re.compile(r'sched_lb_reject\(\s*([a-z_]+)\s*,.*?"((?:[^"\\]|\\.)*)"', re.S)
n = 0
for path in sys.argv[1:]:
    for m in site.finditer(open(path).read()):
        print(f"{m.group(1)}: {m.group(2)}")
        n += 1
if n == 0:
    sys.exit("slb_check_sites: no sched_lb_reject() site found")
PY
}
# The KUnit cases module KO registers: its Rust suites' cases, which it
# states in .modinfo (slb_kunit_case=<suite>.<case>, from rust/kunit.rs's
# suite!), and the C suite's KUNIT_CASE() lines in C_DIR/*.c. KO defaults
# to the checkout's build, C_DIR to its kunit/.
slb_kunit_cases() {
	local ko=${1:-$SLB_ROOT/sched_lb_rs.ko} cdir=${2:-$SLB_ROOT/kunit} rs c
	rs=$(slb_modinfo "$ko" slb_kunit_case) || return 1
	rs=$(sort -u <<< "$rs" | wc -l)
	c=$(cat "$cdir"/*.c | grep -c 'KUNIT_CASE(') || [ "$c" = 0 ] || return 1
	echo $((rs + c))
}

# slb_module_tree DIR: a fresh copy of the module's sources (what Kbuild
# builds) in DIR.
slb_module_tree() {
	rm -rf "$1"
	mkdir -p "$1/rust/policy" "$1/kunit"
	cp "$SLB_ROOT/Kbuild" "$1/"
	cp -r "$SLB_ROOT"/rust/*.rs "$SLB_ROOT/rust/kunit" "$SLB_ROOT/rust/hooks" "$1/rust/"
	cp -r "$SLB_ROOT/rust/policy/src" "$1/rust/policy/"
	cp "$SLB_ROOT"/kunit/*.c "$SLB_ROOT/kunit/flags" "$1/kunit/"
}
# module_variant DEST NAME KNOB=VALUE...: builds sched_lb_rs.ko with these
# Kbuild knobs (SLB_HOOKS_OFF, SLB_KUNIT, SLB_HOSTILE; see Kbuild) from a
# copy of the sources, into DEST/NAME.ko. A copy, because 6.12's
# out-of-tree Kbuild writes its objects next to the sources (MO= came in
# 6.13) and the default build in the checkout must stay as it is.
module_variant() {
	local dest=$1 name=$2 src
	shift 2
	src="$SLB_CACHE/variants/$name"
	mkdir -p "$dest"
	slb_module_tree "$src"
	kmake_module "$src" "$src/build.log" "$@"
	cp "$src/sched_lb_rs.ko" "$dest/$name.ko"
}

# The $SLB_FLAVOR kernel, built unless SLB_KERNEL points at a bzImage, and
# a build of the module for it, exported as SLB_MODULE: what make bench and
# make site-cost boot. Sets $kernel.
flavor_kernel_and_module() {
	if [ -z "${SLB_KERNEL:-}" ]; then
		"$SLB_ROOT/scripts/prepare-kernel.sh"
		"$SLB_ROOT/scripts/build-kernel.sh"
	fi
	kernel=${SLB_KERNEL:-$SLB_OUT/arch/x86/boot/bzImage}
	[ -f "$kernel" ] || die "no kernel at $kernel: unset SLB_KERNEL to build the $SLB_FLAVOR kernel, or point it at a bzImage"
	# The checkout's own module build belongs to the test kernel.
	stage "module build ($SLB_FLAVOR)"
	module_variant "$SLB_CACHE/guest-modules" "module-$SLB_FLAVOR"
	stage_end
	export SLB_MODULE="$SLB_CACHE/guest-modules/module-$SLB_FLAVOR.ko"
}

# icount_runs KNOB VALUE: dies unless VALUE, the boots knob KNOB asked
# for, is a whole number above 0 (checked before anything is built).
icount_runs() {
	case $2 in
	'' | *[!0-9]* | 0) die "$1='$2': expected a whole number of runs above 0" ;;
	esac
}

# icount_boots NAME PLAN SMP RUNS OUT: boots the $SLB_FLAVOR kernel RUNS
# times under QEMU -icount shift=0,sleep=off, where the guest's clock
# advances a nanosecond per instruction executed, running guest PLAN on
# -smp SMP (make site-cost, make sched-cost). Each console log is copied
# to OUT/runI.log and listed in the array icount_logs. SLB_BENCH_DIR and
# SLB_BOOT_TIMEOUT pass through to boot.sh.
icount_boots() {
	local i
	icount_logs=()
	for i in $(seq 1 "$4"); do
		SLB_QEMU_EXTRA="-icount shift=0,sleep=off" "$SLB_ROOT/scripts/boot.sh" "$1-$i" "$2" "$3"
		cp "$SLB_LOGS/$1-$i.console.log" "$5/run$i.log"
		icount_logs+=("$5/run$i.log")
	done
}

# qemu_numa SIZE:CPUS...: QEMU arguments for one NUMA node per argument,
# node i with SIZE of memory (the sizes add up to boot.sh's -m) and the
# CPUS range, or none ("512M:") for a memory-only node.
qemu_numa() {
	local i=0 spec cpus args=""
	for spec in "$@"; do
		cpus=${spec#*:}
		args="$args -object memory-backend-ram,id=m$i,size=${spec%%:*}"
		args="$args -numa node,nodeid=$i${cpus:+,cpus=$cpus},memdev=m$i"
		i=$((i + 1))
	done
	echo "${args# }"
}

# The named guest topologies (slb_topologies) and the bench's plan.
. "$SLB_ROOT/scripts/bench-plan.sh"

# topology_field NAME N: field N (2 -smp, 3 domains, 4 NUMA nodes, 5 the
# description) of topology NAME; dies naming the known ones if there is
# no such topology.
topology_field() {
	local line why
	why=$(topology_known "$1") || die "$why"
	line=$(slb_topologies | awk -v t="$1" '$1 == t')
	awk -v n="$2" '{ if (n < 5) print $n; else { $1 = $2 = $3 = $4 = ""; sub(/^ +/, ""); print } }' <<< "$line"
}

# QEMU's -smp, its extra arguments (NUMA nodes) and the domain levels
# cpu0 must have (LEVEL:SPAN ...) of a named topology.
smp_of() { topology_field "$1" 2; }
extra_of() {
	local nodes
	nodes=$(topology_field "$1" 4)
	[ "$nodes" = - ] || qemu_numa ${nodes//,/ }
}
domains_of() { topology_field "$1" 3 | tr ',' ' '; }

# The benchmarks' guest workloads (bench/*.c), static so the busybox
# initramfs runs them: bench_tools DIR.
bench_tools() {
	need_tool cc
	mkdir -p "$1"
	local prog
	for prog in spin pingpong reqresp; do
		cc -O2 -Wall -Wextra -static -pthread -o "$1/$prog" "$SLB_ROOT/bench/$prog.c" ||
			die "cannot build bench/$prog.c statically (needs libc6-dev: run 'make setup')"
	done
}
