#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make replay (issue 32): the simulator against the guest on what the
# guest's tasks did, not on a workload model of them.
#
#   1. Boots the plain kernel with the module on each topology, as make
#      bench does, and runs that topology's experiments (scripts/
#      bench-plan.sh, make bench's lengths, so that each replay is of an
#      experiment of bench.json) once in each state, with the
#      scheduler's trace events on (sched_waking, sched_wakeup,
#      sched_wakeup_new, sched_switch, sched_migrate_task,
#      sched_process_fork, sched_process_exit): scripts/bench-runner.sh
#      with a "trace" file in the bench dir.
#   2. scripts/replay_extract.py writes each run's trace as an
#      "slb-trace 1" file: OUT/TOPOLOGY/ID.STATE.r1.trace.
#   3. schedsim replay runs each experiment's off and on traces: each
#      workload task's recorded CPU bursts, blocks and who woke it, replayed
#      into the model on the same topology with the same flags, and the
#      same metrics computed from the guest's events and the model's
#      (migrations per domain level, wakeups placed in the waker's LLC,
#      idle time while another CPU had waiting tasks, the differs
#      counters), written to OUT/replay.txt and OUT/replay.json, and
#      again with the guest's own wakeup latency onto an idle CPU given
#      to the model (OUT/replay-wake-idle.txt).
#
# Knobs: SLB_REPLAY_TOPOLOGIES (all six), SLB_REPLAY_EXPERIMENTS (an
# extended regex on the experiment ids; default every experiment of
# make bench), QUICK=1 (make bench's quick plan and lengths),
# SLB_REPLAY_TRACE_KB (buffer per CPU, 1024; a run that fills it is
# replayed over its start, up to where the first CPU's buffer filled),
# SLB_REPLAY_FUNCS (kernel functions whose entries the trace logs, by the
# function tracer; sched_tick and sched_balance_softirq, each CPU's tick
# and periodic balance, by default; empty: none),
# SLB_REPLAY_OUT (.cache/replay), SLB_REPLAY_REUSE=1 (no guest: the model
# again on the traces a run left in SLB_REPLAY_OUT), SLB_REPLAY_RERUN (the
# OUT of an earlier recording: the tables say how far the guest is from
# itself there, row by row; schedsim replay --rerun). A full run (no
# topology or experiment chosen, not quick) also writes
# Documentation/schedsim/replay.txt and replay-wake-idle.txt.
set -euo pipefail
export SLB_FLAVOR=${SLB_FLAVOR:-plain}
. "$(dirname "$0")/lib.sh"

out=${SLB_REPLAY_OUT:-$SLB_CACHE/replay}
topologies=${SLB_REPLAY_TOPOLOGIES:-$(topology_names)}
for t in $topologies; do
	topology_field "$t" 2 > /dev/null
done
quick=${QUICK:-0}
trace_kb=${SLB_REPLAY_TRACE_KB:-1024}
# The functions whose entries the trace logs too ("B" lines): the tick
# and the periodic balance by default, which replay's idle-tick rows,
# each trace's own tick odds and `schedsim ticks` read; set empty, none.
funcs=${SLB_REPLAY_FUNCS-sched_tick sched_balance_softirq}
[[ "$funcs" =~ ^[A-Za-z0-9_\ ]*$ ]] || die "replay: SLB_REPLAY_FUNCS='$funcs': need function names"

[[ "$trace_kb" =~ ^[1-9][0-9]*$ ]] || die "replay: trace_kb=$trace_kb: need a whole number above 0"
reuse=${SLB_REPLAY_REUSE:-0}
rerun=()
if [ -n "${SLB_REPLAY_RERUN:-}" ]; then
	ls "$SLB_REPLAY_RERUN"/*/*.trace > /dev/null 2>&1 ||
		die "replay: SLB_REPLAY_RERUN=$SLB_REPLAY_RERUN has no TOPOLOGY/*.trace (an earlier SLB_REPLAY_OUT)"
	rerun=(--rerun "$SLB_REPLAY_RERUN")
fi
need_tool python3
need_tool cargo
if [ "$reuse" = 1 ]; then
	ls "$out"/*/*.trace > /dev/null 2>&1 || die "replay: SLB_REPLAY_REUSE=1 but no trace in $out/*/: run make replay first"
else
	flavor_kernel_and_module
	rm -rf "$out"
	mkdir -p "$out"
	stage "replay: guest workloads"
	bench_tools "$out/guest"
	echo "$trace_kb" > "$out/guest/trace"
	[ -z "$funcs" ] || echo "$funcs" > "$out/guest/funcs"
	stage_end
fi

# experiments_of's variables, as scripts/bench.sh sets them.
bench_lengths "$quick"
# shellcheck disable=SC2034 # read by experiments_of (scripts/bench-plan.sh)
hooks=0 tools_dir=/slb/bench hackbench=/bin/hackbench

stage "replay: schedsim"
cargo build --release --locked -q -p schedsim
schedsim=$SLB_ROOT/target/release/schedsim
stage_end

for t in $topologies; do
	[ "$reuse" = 1 ] && break
	dir="$out/guest-$t"
	cp -r "$out/guest" "$dir"
	ncpu=$(smp_of "$t" | cut -d, -f1)
	experiments_of "$t" "$ncpu" |
		awk -v re="${SLB_REPLAY_EXPERIMENTS:-.}" '$1 ~ re' > "$dir/conf"
	if [ ! -s "$dir/conf" ]; then
		log "replay: no experiment of $t matches '${SLB_REPLAY_EXPERIMENTS:-}'"
		continue
	fi
	echo 1 > "$dir/reps"
	echo 0.5 > "$dir/settle"
	runs=$(( $(grep -c . "$dir/conf") * 2 ))
	# Each traced run pays for its dump over the serial console.
	SLB_BENCH_DIR="$dir" SLB_QEMU_EXTRA="$(extra_of "$t")" \
		SLB_BOOT_TIMEOUT=${SLB_REPLAY_TIMEOUT:-$(( 600 + 240 * runs ))} \
		"$SLB_ROOT/scripts/boot.sh" "replay-$t" "kunit bench" "$(smp_of "$t")" > "$out/$t.boot.txt" 2>&1 ||
		{ tail -20 "$out/$t.boot.txt" >&2; die "replay guest $t failed"; }
	cp "$SLB_LOGS/replay-$t.console.log" "$out/$t.console.log"
	stage "replay: $t traces"
	python3 "$SLB_ROOT/scripts/replay_extract.py" "$out/$t.console.log" "$dir/conf" "$t" \
		"$ncpu" "$out/$t"
	stage_end
done

stage "replay: model against guest"
traces=()
for t in $topologies; do
	[ -d "$out/$t" ] && traces+=("$out/$t"/*.trace)
done
[ ${#traces[@]} -gt 0 ] || die "replay: no trace written"
# The tables end with the span of the goal's row counts over four of
# the model's seeds: they move with it by more than most single changes
# to the model do.
"$schedsim" replay --seeds 4 "${rerun[@]}" --format table "${traces[@]}" > "$out/replay.txt"
"$schedsim" replay --format json "${traces[@]}" > "$out/replay.json"
# The same with each trace's own TCG latencies given to the model (it
# has none as calibrated): a wakeup onto an idle CPU, the wake list's
# and a fork's.
"$schedsim" replay --seeds 4 --wake-idle-us guest "${rerun[@]}" --format table "${traces[@]}" > "$out/replay-wake-idle.txt"
stage_end
sed -n '/within 20% of the guest/,/^--/p' "$out/replay.txt" | sed '$d'
tail -n 1 "$out/replay.txt"
if [ "$quick" != 1 ] && [ -z "${SLB_REPLAY_TOPOLOGIES:-}${SLB_REPLAY_EXPERIMENTS:-}" ]; then
	mkdir -p "$SLB_ROOT/Documentation/schedsim"
	cp "$out/replay.txt" "$out/replay-wake-idle.txt" "$SLB_ROOT/Documentation/schedsim/"
	log "replay: Documentation/schedsim/replay.txt and replay-wake-idle.txt written"
fi
log "replay: traces in $out/TOPOLOGY/, tables in $out/replay.txt"
