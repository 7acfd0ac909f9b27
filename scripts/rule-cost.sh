#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Instructions per call of each Rust rule and of the Linux 6.12 C it
# replaces (rust/cref/src/bin/rule_cost.rs), counted by callgrind, which
# is deterministic where time on a shared machine is not. The Rust is
# built as the kernel builds its Rust (the workspace profiles kernel-o2,
# overflow checks off, and kernel-o2-ovf, on as CONFIG_RUST_OVERFLOW_CHECKS
# has them in the test kernel); rust/cref/build.rs builds the C with the
# kernel's compiler (clang) and -O2.
#
#   scripts/rule-cost.sh OUT            every rule and chain (make bench)
#   scripts/rule-cost.sh --check OUT    the rules with a C counterpart, and
#                                       fail where the Rust takes more
#                                       instructions per call than the C in
#                                       either column (tests/scripts.sh)
#   scripts/rule-cost.sh --verdict IN   only that verdict, on a file an
#                                       earlier run wrote
#
# OUT (read by scripts/bench_report.py --rule-cost): '#' lines, then per
# rule "RULE ITERS NONE RUST C NONE_OVF RUST_OVF C_OVF", the Ir of whole
# runs of ITERS calls, C '-' for a chain that rust/cref has no C of. Per
# call and column: (RUST - NONE) / ITERS against (C - NONE) / ITERS.
#
# "More" is more than 0.01 instruction per call: a tie is at most 1.00x.
# The check allows the rules of rust/cref/rule-cost-exceptions.txt up to
# the ratio listed there, each with the instruction-level reason, and
# fails on an entry that no longer needs it.
#
# SLB_RULE_COST_ITERS: calls per run (100000; --check 20000: instruction
# counts are exact, so fewer calls only mean fewer inputs).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

check=0 measure=1
case ${1:-} in
--check) check=1 && shift ;;
--verdict) check=1 measure=0 && shift ;;
esac
[ $# = 1 ] || die "usage: scripts/rule-cost.sh [--check | --verdict] FILE"
out=$1
exceptions=$SLB_ROOT/rust/cref/rule-cost-exceptions.txt

# measure: builds rule_cost with both profiles and writes $out.
measure() {
	need_tool valgrind
	need_tool cargo
	need_tool python3
	local iters=${SLB_RULE_COST_ITERS:-$([ $check = 1 ] && echo 20000 || echo 100000)}
	[[ "$iters" =~ ^[1-9][0-9]*$ ]] || die "SLB_RULE_COST_ITERS=$iters: expected a positive integer"
	# The target directory as cargo sees it (CARGO_TARGET_DIR, config).
	local target p
	target=$(cd "$SLB_ROOT" && cargo metadata --format-version 1 --no-deps --locked |
		python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
	for p in kernel-o2 kernel-o2-ovf; do
		(cd "$SLB_ROOT" && cargo build --profile "$p" --locked -q -p sched-lb-cref --bin rule_cost) ||
			die "rule_cost did not build with profile $p"
	done
	local bin_off=$target/kernel-o2/rule_cost bin_on=$target/kernel-o2-ovf/rule_cost
	# ir BIN RULE MODE: instructions of one run.
	ir() {
		local n
		n=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null "$1" "$2" "$3" "$iters" 2>&1 |
			sed -n 's/.*Collected : \([0-9]*\).*/\1/p')
		[ -n "$n" ] || die "callgrind gave no count for $2 $3 ($1)"
		echo "$n"
	}
	{
		echo "# scripts/rule-cost.sh: callgrind Ir of whole runs of ITERS calls; columns"
		echo "# NONE RUST C with overflow checks off (profile kernel-o2), then on (kernel-o2-ovf)"
		echo "# C: $("$bin_off" --cc)"
		echo "# rule iters none rust c none_ovf rust_ovf c_ovf"
	} > "$out"
	local rule has_c line bin c
	while read -r rule has_c; do
		[ $check = 1 ] && [ "$has_c" != c ] && continue
		line="$rule $iters"
		for bin in "$bin_off" "$bin_on"; do
			c=-
			[ "$has_c" = c ] && c=$(ir "$bin" "$rule" c)
			line+=" $(ir "$bin" "$rule" none) $(ir "$bin" "$rule" rust) $c"
		done
		echo "$line" >> "$out"
	done < <("$bin_off" --list)
}

if [ $measure = 1 ]; then
	measure
fi
[ -f "$out" ] || die "rule-cost: no $out"

# Per call, ratios, and the verdicts of the check.
awk -v check=$check -v exceptions="$exceptions" '
	BEGIN {
		while ((getline l < exceptions) > 0)
			if (l ~ /^[a-z_]+ [0-9.]+$/) { split(l, f, " "); allow[f[1]] = f[2] }
		bad = 0
	}
	/^#/ { next }
	{
		rule = $1; it = $2; over = 0; worst = 0
		s = sprintf("%-18s", rule)
		for (k = 0; k < 2; k++) {
			none = $(3 + 3 * k); rust = $(4 + 3 * k); c = $(5 + 3 * k)
			r = (rust - none) / it
			if (c == "-") { s = s sprintf("  %s Rust %8.2f", k ? "on " : "off", r); continue }
			cc = (c - none) / it
			q = cc > 0 ? r / cc : 0
			s = s sprintf("  %s C %7.2f Rust %7.2f = %.3fx", k ? "on " : "off", cc, r, q)
			# More than 0.01 instruction a call: what is left is the
			# once-per-run difference of the two paths into the loop
			# (below 100 instructions), not the rule.
			if (rust - c > it / 100) over = 1
			if (q > worst) worst = q
		}
		if (!check) { print s; next }
		if (rule in allow) {
			if (!over) { s = s "  STALE: at most 1.00x now, remove it from " exceptions; bad = 1 }
			else if (worst > allow[rule] + 0) { s = s "  FAIL: above the " allow[rule] "x its exception allows"; bad = 1 }
			else s = s "  (exception: up to " allow[rule] "x)"
		} else if (over) { s = s "  FAIL: above 1.00x"; bad = 1 }
		print s
		seen[rule] = 1
	}
	END {
		if (check) for (e in allow) if (!(e in seen)) { print "rule-cost: no count of " e ", which " exceptions " lists"; bad = 1 }
		exit bad
	}' "$out" || die "rule-cost: some Rust rule takes more instructions per call than its C (above)"
