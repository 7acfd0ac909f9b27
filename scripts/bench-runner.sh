# SPDX-License-Identifier: GPL-2.0
#
# The benchmark runner: every experiment of a plan, each state of each
# repetition, with its counters, as "SLB-BENCH-..." lines on stdout that
# scripts/bench_report.py reads. POSIX sh, sourced by the guest's init
# (make bench, the busybox guest) and by scripts/slb-bench (a machine
# booted into the series), so both run the same alternation.
#
# The sourcing script provides say MSG, fail MSG and bench_insmod KO (a
# "module on" state), and may set feat (sched/features), bench_ko (the
# module a "module on" state loads; builds of it beside, in bench_dir)
# and bench_tmp.
feat=${feat:-/sys/kernel/debug/sched/features}
bench_ko=${bench_ko:-/slb/sched_lb_rs.ko}
bench_dir=${bench_dir:-/slb/bench}
bench_tmp=${bench_tmp:-/tmp}
trace_awk=${trace_awk:-/slb/trace.awk}

# domain_knob NAME VALUE: writes VALUE to NAME of every CPU's every sched
# domain (the series' writable per-domain debugfs files).
domain_knob() {
	for d in /sys/kernel/debug/sched/domains/cpu*/domain*; do
		echo "$2" > "$d/$1" || fail "bench: $d/$1 refused $2"
	done
}

# bench_state KIND STATE FLAG: sets one state of an experiment. A plan
# holds one experiment per line, "ID KIND FLAG COMMAND...", KIND "flag"
# (A/B of sched_feat FLAG), "same" (A/A), "set" (flags and domain knobs
# as one) or "module" (module loaded or not; FLAG "-" or the name of a
# build of it in bench_dir). Each repetition runs both states, in
# alternating order, so drift over the run falls on both equally. Raw
# numbers go to stdout; scripts/bench_report.py computes deltas, medians
# and ratios.
bench_state() {
	# FLAG may be "BASE+...+FLAG": the bases are set in both states (a
	# base may be NO_X: X off in both).
	case "$1" in flag)
		f=$3
		while [ "${f#*+}" != "$f" ]; do echo "${f%%+*}" > $feat; f=${f#*+}; done
		set -- "$1" "$2" "$f" ;;
	esac
	case "$1 $2" in
	"flag on") echo "$3" > $feat ;;
	"flag off") echo "NO_$3" > $feat ;;
	# A/A: both arms the same state; the run's own false-positive rate.
	"same on"|"same off") ;;
	# A set switched as one: "A,B,knob=OFF:ON": flags A and B on in
	# "on" and off in "off"; a domain knob OFF in "off", ON in "on" (seed
	# 001: v5.9 against v5.10, busy_factor 32 against 16).
	"set on"|"set off")
		for item in $(echo "$3" | tr ',' ' '); do
			case "$item" in
			*=*:*)
				k=${item%%=*} v=${item#*=}
				[ "$2" = on ] && v=${v#*:} || v=${v%%:*}
				domain_knob "$k" "$v" ;;
			*)
				if [ "$2" = on ]; then
					echo "$item" > $feat
				else
					echo "NO_$item" > $feat
				fi ;;
			esac
		done ;;
	# make bench-hooks: FLAG names a build of the module in /slb/bench.
	"module on")
		ko=$bench_ko
		[ -n "${3:-}" ] && [ "$3" != - ] && ko=$bench_dir/$3.ko
		lsmod | grep -q '^sched_lb_rs' || bench_insmod "$ko" > /dev/null 2>&1
		lsmod | grep -q '^sched_lb_rs' || fail "bench: insmod $ko" ;;
	"module off") lsmod | grep -q '^sched_lb_rs' && rmmod sched_lb_rs ;;
	esac
}

# Every counter of the module (its hooks', flags/ and differs/, not the
# shadow switches) as "SLB-BENCH-CTR <dir>_<file> <value>", read with the
# shell's own read and names cut with parameter expansion: no fork per
# file, with some 60 files read twice per run.
bench_counters() {
	local f d v
	for f in /sys/kernel/debug/sched_lb_rs/*/*; do
		[ -f "$f" ] || continue
		d=${f%/*}
		d=${d##*/}
		[ "$d" = shadow ] && continue
		read -r v < "$f" || continue
		echo "SLB-BENCH-CTR ${d}_${f##*/} $v"
	done
}

# make replay (issue 32): with a file "trace" in bench_dir, each run is
# traced: the scheduler's own events, every one, into a buffer of
# bench_dir/trace's KB per CPU that keeps the run's start (overwrite off:
# a CPU whose buffer fills drops its later events, and says how many).
# After the run the events go out on stdout in schedsim's slb-trace
# format (trace_awk: scripts/guest/trace.awk), gzipped and in base64 as
# "SLB-TRACE-GZ " lines (a ping-pong's 3 s are a million events; the
# serial console carries some 70 KB a second), between SLB-TRACE-BEGIN
# and SLB-TRACE-END lines, with what ran and each CPU's dropped events.
# scripts/replay_extract.py writes them into trace files.
# With a file "funcs" too (SLB_REPLAY_FUNCS of scripts/replay.sh), the
# function tracer logs the entry of the functions it names
# (set_ftrace_filter) into the same buffer: a "B" line each, when and
# where the kernel ran them (sched_tick(): a CPU's tick;
# sched_balance_softirq(): its periodic balance).
trace_events="sched_waking sched_wakeup sched_wakeup_new sched_switch sched_migrate_task sched_process_fork sched_process_exit"
tracefs=/sys/kernel/tracing
bench_traced() { [ -f "$bench_dir/trace" ]; }
# bench_trace_arm: everything but the start, before the run's first
# counters are read, so that their window is the run's and not the
# setup's too: under TCG, turning the function tracer on patches the
# kernel's text on every vCPU and takes long enough to fill the window
# with idle balances (a traced hackbench on smt2 read 892 idle SMT
# balances where its record held 247 ticks of a free CPU).
bench_trace_arm() {
	local e
	[ -d $tracefs/events ] || mount -t tracefs nodev $tracefs 2>/dev/null
	echo 0 > $tracefs/tracing_on
	echo 0 > $tracefs/options/overwrite
	echo > $tracefs/trace
	cat "$bench_dir/trace" > $tracefs/buffer_size_kb ||
		fail "replay: the trace buffer refused $(cat "$bench_dir/trace") KB a CPU"
	for e in $trace_events; do
		echo 1 > $tracefs/events/sched/$e/enable || fail "replay: no trace event sched/$e"
	done
	if [ -f "$bench_dir/funcs" ]; then
		cat "$bench_dir/funcs" > $tracefs/set_ftrace_filter ||
			fail "replay: set_ftrace_filter refused '$(cat "$bench_dir/funcs")'"
		echo function > $tracefs/current_tracer || fail "replay: no function tracer"
	fi
}
# bench_trace_begin: the run's events start here, at once before it.
bench_trace_begin() {
	echo 1 > $tracefs/tracing_on
}
# bench_trace_stop: the run's events end here. Called at once after the
# run, before its counters are read: the dump (bench_trace_dump) keeps
# the guest busy for seconds, and counters read after it counted those
# seconds too (a traced reqresp run on numa2 read 5 times the bench's
# balance_interval/calls).
bench_trace_stop() {
	local e
	echo 0 > $tracefs/tracing_on
	for e in $trace_events; do echo 0 > $tracefs/events/sched/$e/enable; done
}
# bench_trace_dump ID STATE REP CMD FLIPS: the stopped trace on stdout,
# after the run's counters (scripts/replay_extract.py reads that order as
# counters of the run alone).
bench_trace_dump() {
	local w lost
	lost=$(awk '/^overrun:/ { n += $2 } END { print n + 0 }' $tracefs/per_cpu/cpu*/stats)
	echo "SLB-TRACE-BEGIN $1 $2 $3"
	# The workload's processes are the programs its command runs.
	echo "SLB-TRACE-META comm $(for w in $4; do
		case $w in /*) [ -x "$w" ] && echo "${w##*/}" ;; esac
	done | sort -u | tr '\n' ' ')"
	echo "SLB-TRACE-META features $(cat $feat)"
	echo "SLB-TRACE-META lost $lost"
	# What the run's first task inherited (see bench_run).
	[ -n "$5" ] && echo "SLB-TRACE-META wakee_flips $5"
	[ "$lost" = 0 ] || fail "replay: $lost events of $1 $2 overwritten in the trace buffer"
	# One pass over every CPU's stats: FILENAME says which CPU.
	awk '/^dropped events:/ && $3 > 0 {
		cpu = FILENAME
		sub(/\/stats$/, "", cpu)
		sub(/.*cpu/, "", cpu)
		print "SLB-TRACE-META dropped " cpu " " $3
	}' $tracefs/per_cpu/cpu*/stats
	awk -f "$trace_awk" $tracefs/trace | gzip -c | base64 | sed 's/^/SLB-TRACE-GZ /'
	echo "SLB-TRACE-END $1 $2 $3"
	# Only now: a tracer's switch empties the buffer (tracer_init()).
	if [ -f "$bench_dir/funcs" ]; then echo nop > $tracefs/current_tracer; fi
	echo > $tracefs/trace
	echo 1 > $tracefs/options/overwrite
}

# bench_run CONF REPS SETTLE: runs every experiment of CONF REPS times
# in both states, alternating which goes first, SETTLE seconds after
# each state is set; sets bench_runs to the runs made. Puts the flags,
# the domain knobs and the module back as it found them after each
# experiment.
bench_run() {
	local reps=$2 settle=$3 d
	# The schedstat counters (CONFIG_SCHEDSTATS) count only while enabled.
	echo 1 > /proc/sys/kernel/sched_schedstats
	for d in /sys/kernel/debug/sched/domains/cpu0/domain*; do
		echo "SLB-BENCH-DOMAIN $(basename $d) $(cat $d/name)"
	done
	awk '/^cpu0 /{on=1; next} /^cpu/{on=0} on' /proc/schedstat | sed 's/^/SLB-BENCH-CPU0SD /'
	defaults=$(cat $feat)
	# The domain knobs a "set" experiment may write, to put back after it.
	knobs_saved=$(for d in /sys/kernel/debug/sched/domains/cpu*/domain*; do
		echo "$d $(cat $d/busy_factor) $(cat $d/imbalance_pct)"
	done)
	bench_runs=0
	while read -r id kind flag cmd; do
		case "$id" in ''|'#'*) continue ;; esac
		r=1
		while [ $r -le $reps ]; do
			order="off on"
			[ $((r % 2)) = 0 ] && order="on off"
			for state in $order; do
				bench_state $kind $state $flag
				bench_traced && bench_trace_arm
				sleep "$settle"
				echo "SLB-BENCH-BEGIN $id $state $r"
				# The module's counters are read outside the schedstat
				# window: each read forks a cat, whose wakeups and idle
				# entries were counted against "module on" alone.
				bench_counters
				cat /proc/schedstat
				# This shell's wakee_flips (read, a builtin, reads in
				# this process), which the workload's first task
				# inherits (dup_task_struct()) and its own children
				# from it; one that never wakes another keeps it, and
				# wake_wide() weighs it.
				flips=
				bench_traced && read -r flips < /sys/kernel/debug/sched_lb_rs/wakee_flips 2>/dev/null
				bench_traced && bench_trace_begin
				t0=$(cut -d' ' -f1 /proc/uptime)
				eval "$cmd" < /dev/null > "$bench_tmp/bench.out" 2>&1
				rc=$?
				t1=$(cut -d' ' -f1 /proc/uptime)
				bench_traced && bench_trace_stop
				out=$(tr '\n' ' ' < "$bench_tmp/bench.out")
				cat /proc/schedstat
				bench_counters
				bench_traced && bench_trace_dump "$id" "$state" "$r" "$cmd" "$flips"
				echo "SLB-BENCH-END $id $state $r t0=$t0 t1=$t1 rc=$rc out=$out"
				bench_runs=$((bench_runs + 1))
			done
			r=$((r + 1))
		done
		# Back to the boot defaults and the module loaded.
		for f in $defaults; do echo "$f" > $feat 2>/dev/null; done
		echo "$knobs_saved" | while read -r d bf ip; do
			echo "$bf" > "$d/busy_factor"
			echo "$ip" > "$d/imbalance_pct"
		done
		bench_state module on
	done < "$1"
}
