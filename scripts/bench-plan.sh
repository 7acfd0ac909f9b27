# SPDX-License-Identifier: GPL-2.0
#
# The benchmark plan, sourced by scripts/bench.sh (QEMU guests), by
# scripts/lib.sh and by scripts/slb-bench (a machine booted into the
# series). POSIX sh: slb-bench runs under busybox ash in the guest too.
#
#   slb_topologies          the named topologies, one line each
#   topology_names          their names; topology_known T: one of them?
#   bench_lengths QUICK     sets the runs' lengths experiments_of reads
#   experiments_of T NCPU   topology T's experiments, one line each
#   topology_fits T SHAPE   whether a machine of SHAPE (cpu0's domain
#                           levels, "SMT:2 MC:4 PKG:8") has what T's
#                           experiments ask of it; else prints why not
#
# experiments_of reads: quick, hooks (make bench-hooks), hb_loops,
# fair_ms, pp_ms, rr_ms, tools_dir (the directory of bench/'s spin,
# pingpong, reqresp) and hackbench (its path).

# bench_lengths QUICK: the lengths of make bench's runs (QUICK 0) or of
# its quick ones (1), for make bench, make replay and slb-bench alike.
# Seed 001's spinners run 20 s (fair_ms): fairness over a run is capped
# by how long it is (the simulator gives 83 / 88 / 94% at 4 / 10 / 30 s,
# issue 31).
bench_lengths() {
	if [ "$1" = 1 ]; then
		hb_loops=30 fair_ms=1500 pp_ms=1500 rr_ms=1500
	else
		hb_loops=80 fair_ms=20000 pp_ms=3000 rr_ms=3000
	fi
}

# NAME, QEMU -smp, the domain levels and spans cpu0 must have (checked by
# bench_report.py), the NUMA nodes as qemu_numa takes them ("-": none),
# and what the layout stands for.
slb_topologies() {
	cat <<-'EOF'
	guittot 8,sockets=2,cores=4,threads=1 MC:4,PKG:8 - Guittot's arm64 2x4 (seed 001)
	x5472 8,sockets=4,cores=2,threads=1 MC:2,PKG:8 - Galbraith's X5472, LLCs of 2 cores (seed 000)
	smt2 8,sockets=2,cores=2,threads=2 SMT:2,MC:4,PKG:8 - 2 sockets of 2 SMT2 cores (seed 002)
	smt4 8,sockets=1,cores=2,threads=4 SMT:4,MC:8 - 2 SMT4 cores, one LLC (seed 002, SIS_FOLD)
	numa2 8,sockets=2,cores=4,threads=1 MC:4,NUMA:8 1G:0-3,1G:4-7 2 NUMA nodes of 4 CPUs (seeds 002 STEAL, 003, 004)
	llc16 16,sockets=1,cores=16,threads=1 MC:16 - one LLC of 16 CPUs (seed 002's scan, STEAL)
	EOF
}

# topology_names: the topologies' names, space-separated, in the list's
# order (make bench's default plan, slb-bench's).
topology_names() {
	slb_topologies | cut -d' ' -f1 | tr '\n' ' ' | sed 's/ $//'
}

# topology_known T: succeeds for a topology of the list; otherwise prints
# why, naming the known ones, and fails.
topology_known() {
	slb_topologies | cut -d' ' -f1 | grep -qx "$1" && return 0
	echo "unknown topology '$1': one of $(topology_names)"
	return 1
}

# topology_fits T SHAPE: what each topology's experiments need of a
# machine, read from its domain levels (LEVEL:SPAN, cpu0's, lowest
# first). The guests have exactly their topology's shape; a real machine
# runs the experiments of every topology whose need it meets, with the
# fairness threads scaled to its CPU count (experiments_of).
topology_fits() {
	local t=$1 shape=$2 smt= llc= top= lv
	for lv in $shape; do
		case $lv in
		SMT:*) smt=${lv#SMT:} ;;
		MC:*) llc=${lv#MC:} ;;
		CLS:*) ;;
		esac
		top=$lv
	done
	case $t in
	guittot)
		# Seed 001: spinners spread over two or more LLCs of equal CPUs,
		# no SMT (a sibling would be a second, slower CPU).
		[ -z "$smt" ] && [ -n "$llc" ] && [ "${top%%:*}" != MC ] && return 0
		echo "needs two or more LLCs and no SMT, as seed 001's 2x4" ;;
	x5472)
		[ "$llc" = 2 ] && [ "${top%%:*}" != MC ] && return 0
		echo "needs LLCs of 2 CPUs, more than one, as seed 000's X5472 (BALANCE_IDLE_LLC2 acts only there)" ;;
	smt2)
		[ "$smt" = 2 ] && return 0
		echo "needs SMT2 (an SMT level of 2 CPUs)" ;;
	smt4)
		[ "$smt" = 4 ] && return 0
		echo "needs SMT4 (an SMT level of 4 CPUs)" ;;
	numa2)
		case " $shape " in *" NUMA:"*) return 0 ;; esac
		echo "needs a NUMA level (two or more nodes with CPUs)" ;;
	llc16)
		[ -n "$llc" ] && [ "$llc" -ge 16 ] && return 0
		echo "needs an LLC of 16 CPUs or more" ;;
	*) echo "no such topology" ;;
	esac
	return 1
}

# An experiment: "ID KIND FLAG COMMAND". KIND flag: FLAG off against on,
# FLAG being "BASE+...+FLAG" with the bases set in both states (NO_X: X
# off in both, how upstream's own flags are held still or compared);
# same: an A/A pair, both states alike (the run's false-positive rate);
# set: a comma list switched as one, flags on against off and
# "knob=OFF:ON" per-domain values; module: the module loaded against not.
experiments_of() {
	local spin=$tools_dir/spin pp=$tools_dir/pingpong rr=$tools_dir/reqresp
	local hb="$hackbench -g 2 -l $hb_loops" lo=$(($2 + 1)) hi=$(($2 + 3))
	# Every topology's A/A, on the workload its flags are judged on.
	case $1 in
	guittot) echo "aa_fair$hi same - $spin $hi $fair_ms" ;;
	x5472) echo "aa_stream same - $pp -u $pp_ms" ;;
	smt2 | smt4 | numa2 | llc16) [ "$hooks" = 1 ] || echo "aa_hb same - $hb" ;;
	esac
	case $1 in
	guittot)
		echo "fair${lo}_relax flag LB_RELAX_FAILED $spin $lo $fair_ms"
		echo "fair${hi}_relax flag LB_RELAX_FAILED $spin $hi $fair_ms"
		[ "$quick" = 1 ] && return
		# Guittot's 2/4: 11 threads on 2x4, 6 vs 5 across the PKG level
		# (CPUs + 1 and + 3 threads: 9 and 11 on his 8).
		echo "fair${hi}_imbpct flag LB_REDUCED_IMBALANCE_PCT $spin $hi $fair_ms"
		echo "fair${lo}_busydec flag LB_BUSY_INTERVAL_DEC $spin $lo $fair_ms"
		echo "fair${hi}_busydec flag LB_BUSY_INTERVAL_DEC $spin $hi $fair_ms"
		# 4/4: busy_factor 32 (v5.9) against 16, every domain.
		echo "fair${hi}_busyfactor set busy_factor=32:16 $spin $hi $fair_ms"
		# The thread's headline: v5.9 against v5.10, all four together.
		echo "fair${hi}_all4 set LB_RELAX_FAILED,LB_REDUCED_IMBALANCE_PCT,LB_BUSY_INTERVAL_DEC,busy_factor=32:16 $spin $hi $fair_ms"
		echo "fair${lo}_all4 set LB_RELAX_FAILED,LB_REDUCED_IMBALANCE_PCT,LB_BUSY_INTERVAL_DEC,busy_factor=32:16 $spin $lo $fair_ms"
		;;
	x5472)
		# Seed 000's gain was a stream (netperf UDP_STREAM, 64 KB
		# datagrams, both ends mostly runnable); its ping-pong stays in
		# one LLC. pingpong -u is that stream over loopback. In quick
		# runs of the plain kernel it did not split across LLCs in
		# either state (apart_llc at most 0.002), nor did a pipe stream,
		# alone or beside two spinners: 6.12's wake-affine pulls the
		# ends back together. The counters say whether the flag acted.
		echo "stream_llc2 flag BALANCE_IDLE_LLC2 $pp -u $pp_ms"
		echo "stream_idle_cpus flag BALANCE_IDLE_CPUS $pp -u $pp_ms"
		echo "stream_busy_llc2 flag BALANCE_IDLE_LLC2 $spin 2 $pp_ms > /dev/null & $pp -u $pp_ms; wait"
		[ "$quick" = 1 ] && return
		echo "buddy_llc2 flag BALANCE_IDLE_LLC2 $pp $pp_ms"
		echo "buddy_idle_cpus flag BALANCE_IDLE_CPUS $pp $pp_ms"
		# The split made to happen: with wake-affine off in both states
		# (NO_WA_IDLE, NO_WA_WEIGHT) a wakee stays in its own LLC, so
		# nothing pulls the ends back together once fork or a balance
		# has put them apart. What the threshold decides then shows.
		echo "stream_nowa_llc2 flag NO_WA_IDLE+NO_WA_WEIGHT+BALANCE_IDLE_LLC2 $pp -u $pp_ms"
		echo "stream_nowa_idle_cpus flag NO_WA_IDLE+NO_WA_WEIGHT+BALANCE_IDLE_CPUS $pp -u $pp_ms"
		;;
	smt2)
		if [ "$hooks" = 1 ]; then
			echo "hooks_as_built module - $hb"
			hook_variants | while read -r name _; do echo "hooks_$name module $name $hb"; done
			return
		fi
		echo "hook_overhead module - $hb"
		echo "hb_sis_prop flag SIS_PROP $hb"
		[ "$quick" = 1 ] && return
		echo "hb_pipe_sis_prop flag SIS_PROP $hackbench -p -g 2 -l $hb_loops"
		echo "hb_sis_age flag SIS_PROP+SIS_AGE $hb"
		echo "hb_sis_once flag SIS_PROP+SIS_ONCE $hb"
		echo "hb_sis_fold flag SIS_FOLD $hb"
		# SIS_FOLD only acts where cores exist (SMT): here, and without
		# SIS_UTIL's budget beside it.
		echo "hb_sis_fold_no_util flag NO_SIS_UTIL+SIS_FOLD $hb"
		echo "hb_sis_prop_no_util flag NO_SIS_UTIL+SIS_PROP $hb"
		;;
	smt4)
		echo "hb_sis_prop flag SIS_PROP $hb"
		echo "hb_sis_fold flag SIS_FOLD $hb"
		echo "hb_sis_fold_no_util flag NO_SIS_UTIL+SIS_FOLD $hb"
		;;
	numa2)
		echo "hb_steal flag STEAL $hb"
		# Seed 003: many short sleeps, a newidle entry per sleep.
		echo "rr_newidle_backoff flag NEWIDLE_BACKOFF $rr 4 3 50 100 $rr_ms"
		[ "$quick" = 1 ] && return
		echo "hb1_steal flag STEAL $hackbench -g 1 -l $hb_loops"
		echo "hb_newidle_backoff flag NEWIDLE_BACKOFF $hb"
		echo "hb_migration_cost flag SD_MIGRATION_COST $hb"
		# Upstream's answer to 003 in this tree: 6.12.117's NI_RANDOM
		# (on by default) against none, and the backoff with it off;
		# with the line above, all four combinations, pairwise.
		echo "rr_ni_random flag NI_RANDOM $rr 4 3 50 100 $rr_ms"
		echo "rr_newidle_backoff_no_ni_random flag NO_NI_RANDOM+NEWIDLE_BACKOFF $rr 4 3 50 100 $rr_ms"
		;;
	llc16)
		# One LLC of 16 CPUs (NR_CPUS of the kernels is 16): the biggest
		# this project's kernels boot, where the seeds' SIS_PROP and STEAL
		# gains came from LLCs of 22 to 56. Sistare measured STEAL with
		# hackbench process groups 1, 2 and 4.
		for g in 1 2 4; do
			echo "hb${g}_steal_llc16 flag STEAL $hackbench -g $g -l $hb_loops"
		done
		# Seed 002: hackbench -g 2 (80 tasks) keeps the 16 CPUs' wakees'
		# targets and previous CPUs busy, so the scan runs on nearly
		# every wakeup (a quick run of the plain kernel: 19176 scans of
		# 19842 wakeups), not the 3-9% of the lockdep kernel's smt2
		# runs. With SIS_UTIL on, SIS_PROP's budget is seldom the tighter
		# (0 answers differed, 21 of 15722 undecided at -g 4): its own
		# case, the 2018 thread's, is SIS_UTIL off.
		echo "hb_sis_prop_no_util_llc16 flag NO_SIS_UTIL+SIS_PROP $hb"
		[ "$quick" = 1 ] && return
		# Upstream's answer: SIS_UTIL (on in 6.12) against no budget.
		echo "hb_sis_util_llc16 flag SIS_UTIL $hb"
		echo "hb_sis_prop_llc16 flag SIS_PROP $hb"
		echo "hb_sis_fold_llc16 flag SIS_FOLD $hb"
		echo "hb_newidle_backoff_llc16 flag NEWIDLE_BACKOFF $hb"
		echo "rr_newidle_backoff_llc16 flag NEWIDLE_BACKOFF $rr 4 3 50 100 $rr_ms"
		;;
	esac
}
