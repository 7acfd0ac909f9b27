#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench [QUICK=1]: an in-guest A/B of every flag on topologies that
# mirror the seeds, plus the hook overhead, as tables and plots.
#
#   1. Builds the guest workloads (bench/spin.c, bench/pingpong.c,
#      bench/reqresp.c; hackbench from rt-tests is already in the
#      initramfs).
#   2. Counts instructions per call of each Rust rule and of the 6.12 C it
#      replaces, in userspace under callgrind (deterministic), with overflow
#      checks off and on (scripts/rule-cost.sh).
#   3. Boots the test kernel once per topology (QEMU TCG), checks the sched
#      domains have the shape the topology needs, and runs each experiment
#      off and on, alternated, REPS times in the same boot.
#   4. scripts/bench_report.py turns the console logs into a Markdown table
#      (median, min-max spread, on/off ratio), SVG plots and bench.json
#      (every sample, median and 95% interval; schedsim calibrate reads it).
#
# QUICK=1 runs three topologies (or SLB_BENCH_TOPOLOGIES) with 2
# repetitions of short runs (a few minutes) and writes only to
# .cache/bench/. A full run also writes
# Documentation/results/ (the generated tables and plots that
# Documentation/results.rst includes).
#
# HOOKS=1 (make bench-hooks) asks where the cost of loading the module
# comes from: on smt2, hackbench with no module against builds of it that
# leave hooks out of the table (Kbuild's SLB_HOOKS_OFF) and run no KUnit at
# load (SLB_KUNIT=n): every hook, none (static key on, arguments built,
# stock C), each hook that runs with the default flags alone, and the
# module as 'make module' builds it. Writes .cache/bench-hooks/ and
# Documentation/results/hooks.rst (with its plot in results/hooks/).
#
# Knobs: SLB_BENCH_REPS (11), SLB_BENCH_FAIR_MS (20000: seed 001's runs),
# SLB_BENCH_TOPOLOGIES (all six, llc16 being
# one LLC of 16 CPUs; a run of fewer writes only to SLB_BENCH_OUT),
# SLB_BENCH_SETTLE (seconds between setting a state and measuring, 0.5),
# SLB_BENCH_EXPERIMENTS (an extended regex on the experiment ids; a run of
# some writes only to SLB_BENCH_OUT, like one of some topologies),
# SLB_BENCH_TIMEOUT (per guest; default 600 s and 60 s a run of its plan),
# SLB_BENCH_JOBS (guests booted at once, 1; see below),
# SLB_BENCH_OUT (.cache/bench, or
# .cache/bench-hooks with HOOKS=1).
#
# Needs the kernel of 'make run' (or 'make kernel'); builds the module.
set -euo pipefail
# Timings come from the plain kernel (no KASAN, UBSAN or DEBUG_PREEMPT,
# which the test kernel has and which would be what is measured).
export SLB_FLAVOR=${SLB_FLAVOR:-plain}
. "$(dirname "$0")/lib.sh"

quick=${QUICK:-0}
hooks=${HOOKS:-0}
out_default=$SLB_CACHE/bench
[ "$hooks" = 1 ] && out_default=$SLB_CACHE/bench-hooks
out=${SLB_BENCH_OUT:-$out_default}
# SLB_BENCH_JOBS: how many guests run at once. TCG without MTTCG runs all
# of a guest's vCPUs on one host thread, so on a host of N cores N guests
# finish in about the time of the longest (llc16) instead of the sum: on
# this project's 2-core machine 2 halves a full run. Each guest alternates
# its states in its own boot, so its on/off ratios stay fair; what a guest
# beside it changes is every run's absolute time (shared caches and memory
# bandwidth), which the fitted work per message of schedsim calibrate
# depends on. Refused before anything is built.
jobs=${SLB_BENCH_JOBS:-1}
[[ "$jobs" =~ ^[1-9][0-9]*$ ]] || die "SLB_BENCH_JOBS=$jobs: need a whole number of guests, 1 or more"
# Full runs: 11 alternated runs per state, the first of each dropped as
# warm-up, so each verdict rests on 10 against 10 (bench_report.py:
# bootstrap intervals need at least 5 a state). The lengths are
# bench-plan.sh's bench_lengths.
bench_lengths "$quick"
if [ "$quick" = 1 ]; then
	reps=2 warmup=0
	topologies=${SLB_BENCH_TOPOLOGIES:-guittot smt2 numa2}
else
	reps=${SLB_BENCH_REPS:-11} warmup=${SLB_BENCH_WARMUP:-1}
	fair_ms=${SLB_BENCH_FAIR_MS:-$fair_ms}
	topologies=${SLB_BENCH_TOPOLOGIES:-$(topology_names)}
fi
for t in $topologies; do
	topology_field "$t" 2 > /dev/null
done
[[ "$fair_ms" =~ ^[1-9][0-9]*$ ]] || die "SLB_BENCH_FAIR_MS=$fair_ms: need a whole number of milliseconds"
[ "$hooks" = 1 ] && topologies=smt2
[[ "$reps" =~ ^[0-9]+$ && "$warmup" =~ ^[0-9]+$ && $warmup -lt $reps ]] ||
	die "SLB_BENCH_REPS=$reps, SLB_BENCH_WARMUP=$warmup: need whole numbers, fewer warm-up runs than runs"
need_tool valgrind
need_tool python3
need_tool cargo
flavor_kernel_and_module
rm -rf "$out"
mkdir -p "$out"

# The SLB_HOOKS_OFF switches of the hook table (rust/hooks.rs), as the
# module states them in .modinfo; the ones
# that run with every flag at its default are all but these two, which
# only run with SIS_PROP/SIS_FOLD or STEAL on.
all_hooks=$(slb_hook_switches "$SLB_MODULE" | paste -sd" ")
flag_gated_hooks="sis_select steal"
for h in $flag_gated_hooks; do
	grep -qw "$h" <<< "$all_hooks" || die "bench.sh: $h is not a hook switch of rust/hooks.rs ($all_hooks)"
done
default_hooks=$(tr ' ' '\n' <<< "$all_hooks" | grep -vxF "$(tr ' ' '\n' <<< "$flag_gated_hooks")" | paste -sd' ')
# hook_variants: NAME and the hooks it leaves out, one per line.
hook_variants() {
	echo "all -"
	echo "none $all_hooks"
	local h
	for h in $default_hooks; do
		echo "only_$h $(tr ' ' '\n' <<< "$all_hooks" | grep -vx "$h" | paste -sd' ')"
	done
}
build_hook_variants() {
	local name off
	while read -r name off; do
		[ "$off" = - ] && off=""
		module_variant "$1" "$name" SLB_HOOKS_OFF="$off" SLB_KUNIT=n
		log "variant $name: hooks left out: ${off:-none}"
	done < <(hook_variants)
}

stage "bench: guest workloads"
bench_tools "$out/guest"
stage_end

if [ "$hooks" = 1 ]; then
	stage "bench: module variants"
	build_hook_variants "$out/guest"
	stage_end
fi

[ "$hooks" = 1 ] || {
stage "bench: instructions per rule call (callgrind)"
# Every rule and chain, the Rust built as the kernel builds it with
# overflow checks off and on, the C with the kernel's clang -O2.
"$SLB_ROOT/scripts/rule-cost.sh" "$out/rule_cost.txt"
stage_end
}

# The topologies and their experiments are scripts/bench-plan.sh's
# (slb_topologies, experiments_of), shared with slb-bench on a machine
# booted into the series. The guests' tools and hackbench:
tools_dir=/slb/bench hackbench=/bin/hackbench

# Each guest's plan first, so that with SLB_BENCH_JOBS > 1 the longest
# starts first and the others fill the remaining slots.
plan=()
for t in $topologies; do
	dir="$out/guest-$t"
	cp -r "$out/guest" "$dir"
	# SLB_BENCH_EXPERIMENTS: only the experiments whose id matches this
	# extended regex (a rerun of what a cut-short run missed).
	experiments_of "$t" "$(smp_of "$t" | cut -d, -f1)" | awk -v re="${SLB_BENCH_EXPERIMENTS:-.}" '$1 ~ re' > "$dir/conf"
	[ -s "$dir/conf" ] || die "SLB_BENCH_EXPERIMENTS=${SLB_BENCH_EXPERIMENTS:-}: no experiment of $t matches"
	echo "$reps" > "$dir/reps"
	echo "${SLB_BENCH_SETTLE:-0.5}" > "$dir/settle"
	domains_of "$t" > "$out/$t.domains"
	plan+=("$(( $(grep -c . "$dir/conf") * reps * 2 )) $t")
done

# bench_guest TOPOLOGY RUNS: boots one guest on its plan; dies (in its
# subshell, with SLB_BENCH_JOBS > 1) if the guest fails.
bench_guest() {
	local t=$1 runs=$2 dir="$out/guest-$1" timeout_s
	# The guest's time limit grows with its plan: a fixed 1800 s cut the
	# full llc16 run (132 hackbench runs of 7 to 25 s, 16 vCPUs on one
	# host thread) short at its 97th run. 10 minutes for boot and KUnit,
	# then 60 s a run, over twice the slowest run seen (28 s).
	timeout_s=${SLB_BENCH_TIMEOUT:-$(( 600 + 60 * runs ))}
	log "bench guest $t: $runs runs, time limit ${timeout_s}s"
	SLB_BENCH_DIR="$dir" SLB_QEMU_EXTRA="$(extra_of "$t")" SLB_BOOT_TIMEOUT=$timeout_s \
		"$SLB_ROOT/scripts/boot.sh" "bench-$t" "kunit bench" "$(smp_of "$t")" > "$out/$t.boot.txt" 2>&1 ||
		{ tail -20 "$out/$t.boot.txt" >&2; die "bench guest $t failed"; }
	cp "$SLB_LOGS/bench-$t.console.log" "$out/$t.console.log"
	log "bench guest $t: done"
}

failed=0
while read -r runs t; do
	if [ "$jobs" = 1 ]; then
		bench_guest "$t" "$runs" < /dev/null
		continue
	fi
	while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do
		wait -n || failed=1
	done
	bench_guest "$t" "$runs" < /dev/null &
done < <(printf '%s\n' "${plan[@]}" | { [ "$jobs" = 1 ] && cat || sort -k1,1nr; })
while [ -n "$(jobs -rp)" ]; do
	wait -n || failed=1
done
[ "$failed" = 0 ] || die "a bench guest failed (above); no tables written"
# The tables keep the topologies' order, whatever order they ran in.
logs=()
for t in $topologies; do
	logs+=("$t=$out/$t.console.log")
done

stage "bench: report"
report=(python3 "$SLB_ROOT/scripts/bench_report.py" --warmup "$warmup"
	--domains-dir "$out" --md "$out/results.md" --svg-dir "$out/svg" --json "$out/bench.json")
[ -f "$out/rule_cost.txt" ] && report+=(--rule-cost "$out/rule_cost.txt")
if [ "$hooks" = 1 ]; then
	report+=(--rst "$SLB_ROOT/Documentation/results/hooks.rst"
		--svg-dir "$SLB_ROOT/Documentation/results/hooks" --rst-images results/hooks
		--made-by "make bench-hooks")
elif [ "$quick" != 1 ] && [ -z "${SLB_BENCH_TOPOLOGIES:-}" ] && [ -z "${SLB_BENCH_EXPERIMENTS:-}" ]; then
	report+=(--rst "$SLB_ROOT/Documentation/results/generated.rst"
		--svg-dir "$SLB_ROOT/Documentation/results"
		--json "$SLB_ROOT/Documentation/results/bench.json")
fi
"${report[@]}" "${logs[@]}"
stage_end
cat "$out/results.md"
# Documentation/results/ holds whole runs only: a run of some topologies
# (SLB_BENCH_TOPOLOGIES) writes to $out alone.
docs=", Documentation/results/"
[ "$quick" = 1 ] || [ -n "${SLB_BENCH_TOPOLOGIES:-}${SLB_BENCH_EXPERIMENTS:-}" ] && docs=""
log "bench: tables in $out/results.md$docs"
