#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Tests of the host scripts' refusals: each bad input must fail with a clear
# message and change nothing. Needs no kernel build; runs in seconds, but
# for the instruction counts of the rules (scripts/rule-cost.sh --check:
# two cargo builds of rust/cref, cached after the first, and callgrind,
# about 20 s).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0

# expect WANT NAME PATTERN CMD...: CMD must exit non-zero (WANT=fail) or
# zero (WANT=pass), and print PATTERN either way.
expect() {
	local want=$1 name=$2 pat=$3
	shift 3
	local out rc
	out=$("$@" 2>&1)
	rc=$?
	if { [ "$want" = fail ] && [ $rc -ne 0 ]; } || { [ "$want" = pass ] && [ $rc -eq 0 ]; }; then
		grep -qE "$pat" <<< "$out" && {
			echo "ok - $name"
			pass=$((pass + 1))
			return
		}
	fi
	echo "not ok - $name (rc=$rc)"
	sed 's/^/#   /' <<< "$out"
	fail=$((fail + 1))
}
expect_fail() { expect fail "$@"; }
expect_pass() { expect pass "$@"; }

# A fake kernel tree at each stage of readiness.
mk_kdir() {
	local d="$tmp/$1"
	mkdir -p "$d/rust"
	touch "$d/Makefile"
	printf '%s\n' "${@:2}" > "$d/.config"
	echo "$d"
}

expect_fail "KDIR missing" "KDIR=.* does not exist" \
	env KDIR="$tmp/nope" "$root/scripts/build-module.sh"
d=$(mkdir -p "$tmp/empty" && echo "$tmp/empty")
expect_fail "KDIR not configured" "not a configured kernel tree" \
	env KDIR="$d" "$root/scripts/build-module.sh"
d=$(mk_kdir norust 'CONFIG_SMP=y' '# CONFIG_RUST is not set')
expect_fail "KDIR not Rust-enabled" "is not Rust-enabled" \
	env KDIR="$d" "$root/scripts/build-module.sh"
d=$(mk_kdir unpatched 'CONFIG_RUST=y' 'CONFIG_SMP=y')
expect_fail "KDIR without the series" "does not carry the sched-lb-rs series" \
	env KDIR="$d" "$root/scripts/build-module.sh"
d=$(mk_kdir unbuilt 'CONFIG_RUST=y' 'CONFIG_SCHED_LB_HOOKS=y')
expect_fail "KDIR configured but not built" "configured but not built" \
	env KDIR="$d" "$root/scripts/build-module.sh"
d=$(mk_kdir otherrustc 'CONFIG_RUST=y' 'CONFIG_SCHED_LB_HOOKS=y' \
	'CONFIG_RUSTC_VERSION_TEXT="rustc 0.0.0 (000000000 1970-01-01)"')
touch "$d/rust/libkernel.rmeta" "$d/Module.symvers"
expect_fail "KDIR built with another rustc" "built with 'rustc 0.0.0" \
	env KDIR="$d" "$root/scripts/build-module.sh"
# An installed headers tree (/lib/modules/KREL/build): no .config, the
# same lines bare in include/config/auto.conf. Without rust/ it names the
# package that has it; with another rustc it says so, read from there.
h="$tmp/usr/src/linux-headers-6.12.117-sched-lb+"
mkdir -p "$h/include/config" && touch "$h/Makefile" "$h/Module.symvers"
printf '%s\n' CONFIG_RUST=y CONFIG_SCHED_LB_HOOKS=y \
	'CONFIG_RUSTC_VERSION_TEXT=rustc 0.0.0 (000000000 1970-01-01)' > "$h/include/config/auto.conf"
expect_fail "KDIR a headers package without rust/" \
	"install linux-sched-lb-headers-6.12.117-sched-lb\+ beside linux-headers" \
	env KDIR="$h" "$root/scripts/build-module.sh"
mkdir -p "$h/rust" && touch "$h/rust/libkernel.rmeta"
expect_fail "KDIR a headers package of another rustc" "built with 'rustc 0.0.0 \(000000000 1970-01-01\)' but" \
	env KDIR="$h" "$root/scripts/build-module.sh"
[ -z "$(ls -A "$tmp/nope" 2>/dev/null)" ] && [ ! -e "$tmp/nope" ] &&
	{ echo "ok - refused KDIR left untouched"; pass=$((pass + 1)); } ||
	{ echo "not ok - refused KDIR was created"; fail=$((fail + 1)); }

# A missing tool is named, with what to do about it.
bin="$tmp/bin"
mkdir -p "$bin"
for t in bash env dirname cat grep sed date mkdir printf id nproc; do
	ln -s "$(command -v $t)" "$bin/$t"
done
expect_fail "missing qemu named" "required tool 'qemu-system-x86_64' not found; run 'make setup'" \
	env PATH="$bin" HOME="$tmp" "$root/scripts/boot.sh" t "kunit"
expect_fail "missing rustc named" "required tool 'rustc' not found" \
	env PATH="$bin" HOME="$tmp" KDIR="$tmp/nope" "$root/scripts/build-module.sh"

# A guest that outlasts its time limit: the host names the step it never
# finished and prints the console's end (CI keeps only the host's output).
fakeq="$tmp/fakeq"
mkdir -p "$fakeq"
cat > "$fakeq/qemu" <<'Q'
#!/bin/sh
printf 'SLB: step kunit started\nSLB: step kunit took 3 s\nSLB: step load started\n'
printf 'SLB: watchdog: step load still running after 600 s\ntask 42 (hackbench) state D wchan cpus_read_lock\n'
exec sleep 30
Q
chmod +x "$fakeq/qemu"
touch "$fakeq/bzImage"
# stand_in_ko KO ENTRIES: a stand-in module at KO, an object whose
# .modinfo holds ENTRIES (printf escapes: key=value\0...), which is all the
# host reads of a module (scripts/lib.sh: slb_modinfo).
stand_in_ko() {
	echo 'int x;' > "$1.c"
	cc -c "$1.c" -o "$1.o"
	printf "$2" > "$1.modinfo"
	objcopy --add-section .modinfo="$1.modinfo" "$1.o" "$1"
}
# The initramfs lists the module's hooks and judged flags for the guest.
stand_in_ko "$fakeq/m.ko" 'license=GPL\0slb_hooks=detach_skip \0slb_judged_flags=LB_RELAX_FAILED \0'
rc=0
env SLB_QEMU="$fakeq/qemu" SLB_KERNEL="$fakeq/bzImage" SLB_MODULE="$fakeq/m.ko" SLB_BOOT_TIMEOUT=2 \
	SLB_LOGS="$tmp/logs" SLB_CACHE="$tmp/cache" "$root/scripts/boot.sh" t "kunit load" > "$fakeq/out" 2>&1 || rc=$?
for pat in "timed out after 2s" "step 'load' did not finish" "state D wchan cpus_read_lock" "SLB: step kunit took 3 s"; do
	expect_fail "guest timeout output: $pat" "$pat" sh -c 'cat "$1"; exit "$2"' - "$fakeq/out" "$rc"
done

# The hostile step's expectation: one line per sched_lb_reject() site of
# the source, a call spread over lines included, comments and the macro's
# own name in prose not; a source without any is refused.
ks="$tmp/checksrc/kernel/sched"
mkdir -p "$ks"
cat > "$ks/fair.c" <<'C'
/* sched_lb_reject() sites below. */
	if (sched_lb_reject(steal, ++ctx->calls >= ctx->llc_weight,
			    "%u victims tried", ctx->calls))
		return -1;
	if (sched_lb_reject(sis_select, cpu != -1, "returned CPU %d", cpu) ||
	    sched_lb_reject(sis_select,
			    x > y, "%u loops reported, \"%u\" made", x, y))
C
: > "$ks/lb_hooks.c"
expect_pass "check sites: one line each" \
	'^steal: %u victims tried.sis_select: returned CPU %d.sis_select: %u loops reported, \\"%u\\" made$' \
	bash -c '. "$1/scripts/lib.sh"; SLB_SRC=$2 slb_check_sites | paste -sd.' - "$root" "$tmp/checksrc"
: > "$ks/fair.c"
expect_fail "check sites: none found" "no sched_lb_reject\(\) site found" \
	bash -c '. "$1/scripts/lib.sh"; SLB_SRC=$2 slb_check_sites' - "$root" "$tmp/checksrc"
expect_fail "check sites: no source" "no kernel/sched/fair.c under" \
	bash -c '. "$1/scripts/lib.sh"; SLB_SRC=$2 slb_check_sites' - "$root" "$tmp/nowhere"

# The module's lists come from its .modinfo (rust/sched_lb.rs: modinfo!):
# a stand-in module, an object with a .modinfo section, gives the KUnit
# inventory (each Rust case once, plus the C suite's KUNIT_CASE() lines),
# the hooks and the switches (prefix gone, each once); a module without
# the entries, or no module, is refused with its reason.
mkdir -p "$tmp/inv/kunit"
stand_in_ko "$tmp/inv/m.ko" 'license=GPL\0slb_kunit_case=s.one\0slb_kunit_case=s.two\0slb_kunit_case=t.one\0slb_hooks=a b c \0slb_hook_switches=slb_no_hook_a slb_no_hook_a slb_no_hook_c \0'
stand_in_ko "$tmp/inv/empty.ko" 'license=GPL\0'
printf 'KUNIT_CASE(a),\nKUNIT_CASE(b),\n' > "$tmp/inv/kunit/c_test.c"
expect_pass "kunit inventory: .modinfo cases and KUNIT_CASE()s" '^5$' \
	bash -c '. "$1/scripts/lib.sh"; slb_kunit_cases "$2/m.ko" "$2/kunit"' - "$root" "$tmp/inv"
expect_pass "hooks from .modinfo" '^a b c$' \
	bash -c '. "$1/scripts/lib.sh"; slb_hooks "$2/m.ko" | paste -sd" "' - "$root" "$tmp/inv"
expect_pass "hook switches from .modinfo, each once" '^a c$' \
	bash -c '. "$1/scripts/lib.sh"; slb_hook_switches "$2/m.ko" | paste -sd" "' - "$root" "$tmp/inv"
expect_fail "modinfo: no entry" "has no 'slb_hooks' entry" \
	bash -c '. "$1/scripts/lib.sh"; slb_hooks "$2/empty.ko"' - "$root" "$tmp/inv"
expect_fail "modinfo: no module" "no module at" \
	bash -c '. "$1/scripts/lib.sh"; slb_hooks "$2/none.ko"' - "$root" "$tmp/inv"

# The host's verdict on a guest that finished: its plan's steps each need
# "SLB: verdict STEP ok", and a FAIL line, a failed KUnit case in any
# reload's KTAP, or a missing "SLB: done" fails the run too.
# guest_says NAME WANT PATTERN LINES: a fake QEMU prints LINES (printf
# escapes) and exits; boot.sh runs the plan "load flags".
fake_boot=(env SLB_QEMU="$fakeq/qemu" SLB_KERNEL="$fakeq/bzImage" SLB_MODULE="$fakeq/m.ko"
	SLB_LOGS="$tmp/logs" SLB_CACHE="$tmp/cache" "$root/scripts/boot.sh" t "load flags")
fake_guest() { printf '#!/bin/sh\nprintf "%s"\n' "$1" > "$fakeq/qemu"; }
guest_says() {
	fake_guest "$4"
	expect "$2" "guest verdict: $1" "$3" "${fake_boot[@]}"
}
ok_steps='SLB: step load started\nSLB: load x ok\nSLB: verdict load ok\nSLB: verdict flags ok\n'
guest_says "every step ok" pass "guest t passed" "${ok_steps}SLB: done\n"
guest_says "a FAIL line" fail "SLB: FAIL load: lost" "${ok_steps}SLB: FAIL load: lost\nSLB: done\n"
guest_says "a failed KUnit case in a reload" fail "not ok 3 some_case" "${ok_steps}    not ok 3 some_case\nSLB: done\n"
guest_says "no SLB: done" fail "did not finish its plan" "${ok_steps}"
guest_says "a step without its verdict" fail "step 'flags': no verdict" \
	'SLB: step load started\nSLB: verdict load ok\nSLB: done\n'
guest_says "a step whose verdict is FAIL" fail "step 'load': SLB: verdict load FAIL" \
	'SLB: verdict load FAIL (0 failures, 0 ok lines)\nSLB: verdict flags ok\nSLB: done\n'
# CI keeps only the tail of the output: each reason is said again in the
# last lines, after the guest's own, whatever printed it first.
guest_says_last() {
	fake_guest "$3"
	expect fail "guest verdict, said last: $1" "$2" \
		bash -c '"$@" 2>&1 | tail -2; exit "${PIPESTATUS[0]}"' - "${fake_boot[@]}"
}
guest_says_last "a FAIL line" "guest t failed: 1 FAIL line\\(s\\), the first: SLB: FAIL load: lost" \
	"SLB: FAIL load: lost\n${ok_steps}SLB: done\n"
guest_says_last "a splat" "guest t failed: a kernel splat, the first: [0-9]+:WARNING: CPU: 1 PID: 7 at kernel/sched/fair.c:1" \
	"${ok_steps}WARNING: CPU: 1 PID: 7 at kernel/sched/fair.c:1\nSLB: done\n"

# One that hangs before its first step (in boot) still gets the message.
printf '#!/bin/sh\necho "Linux version 6.12"\nexec sleep 30\n' > "$fakeq/qemu"
expect_fail "guest timeout before any step" "timed out after 2s" \
	env SLB_QEMU="$fakeq/qemu" SLB_KERNEL="$fakeq/bzImage" SLB_MODULE="$fakeq/m.ko" SLB_BOOT_TIMEOUT=2 \
	SLB_LOGS="$tmp/logs" SLB_CACHE="$tmp/cache" "$root/scripts/boot.sh" t "kunit load"

# make tcg-check refuses a bad count or mode before it builds anything.
expect_fail "tcg-check: bad REPS" "REPS=x: expected a positive integer" \
	env REPS=x "$root/scripts/tcg-check.sh"
expect_fail "tcg-check: bad mode" "SLB_TCG_MODES: 'fast' is neither single nor multi" \
	env SLB_TCG_MODES="multi fast" "$root/scripts/tcg-check.sh"

# The series file names every patch and nothing else.
listed=$(grep -v '^#' "$root/patches/series" | sort)
present=$(cd "$root/patches" && ls [0-9][0-9][0-9][0-9]-*.patch | grep -v '^0000-' | sort)
if [ "$listed" = "$present" ]; then
	echo "ok - patches/series lists exactly the patches"
	pass=$((pass + 1))
else
	echo "not ok - patches/series and patches/*.patch differ"
	diff <(echo "$listed") <(echo "$present") | sed 's/^/#   /'
	fail=$((fail + 1))
fi

# Every flag the guest round-trips is defined by some patch.
for f in $(cat "$root/kunit/flags"); do
	if grep -hq "^+SCHED_FEAT($f," "$root"/patches/[0-9]*.patch; then
		echo "ok - flag $f defined by the series"
		pass=$((pass + 1))
	else
		echo "not ok - flag $f in kunit/flags is not defined by any patch"
		fail=$((fail + 1))
	fi
done

# 6.12.117 defines 28 sched features in an unsigned int; no patch may take
# the count past 32 before the patch that widens the mask to u64.
feats=28 widened=0 order_ok=1
while read -r p; do
	case "$p" in ''|'#'*) continue ;; esac
	grep -q '^+const_debug u64 sysctl_sched_features' "$root/patches/$p" && widened=1
	feats=$((feats + $(grep -c '^+SCHED_FEAT(' "$root/patches/$p")))
	if [ $feats -gt 32 ] && [ $widened = 0 ]; then
		order_ok=0
		echo "not ok - $p takes the features to $feats before the mask is widened"
	fi
done < "$root/patches/series"
if [ $order_ok = 1 ]; then
	echo "ok - $feats sched features, mask widened before bit 32"
	pass=$((pass + 1))
else
	fail=$((fail + 1))
fi

# The benchmark harness: no kernel, a log without runs, the wrong domains.
expect_fail "bench without a kernel" "no kernel at .*: unset SLB_KERNEL" \
	env SLB_KERNEL="$tmp/no-bzImage" QUICK=1 "$root/scripts/bench.sh"
# Refused before the kernel is looked for (which would fail otherwise).
expect_fail "bench with no guest slots" "SLB_BENCH_JOBS=0: need a whole number of guests" \
	env SLB_KERNEL="$tmp/no-bzImage" SLB_BENCH_JOBS=0 QUICK=1 "$root/scripts/bench.sh"
# One list of topologies (lib.sh): an unknown name is refused, with the
# known ones, before the kernel is looked for.
expect_fail "bench on an unknown topology" "unknown topology 'nope': one of guittot x5472 smt2 smt4 numa2 llc16" \
	env SLB_KERNEL="$tmp/no-bzImage" SLB_BENCH_TOPOLOGIES="smt2 nope" "$root/scripts/bench.sh"
expect_fail "shell on an unknown topology" "unknown topology 'nope': one of guittot x5472 smt2 smt4 numa2 llc16" \
	env SLB_KERNEL="$tmp/no-bzImage" TOPOLOGY=nope "$root/scripts/shell.sh"
expect_fail "shell without a terminal" "make shell is interactive: run it in a terminal" \
	env SLB_KERNEL="$tmp/no-bzImage" TOPOLOGY=smt2 "$root/scripts/shell.sh"
# slb-bench (make bench on a machine booted into the series) refuses a
# kernel without the series and one without the module, naming what is
# missing, on a made-up debugfs; the in-guest run is make test's.
mkdir -p "$tmp/dbg/sched"
echo "GENTLE_FAIR_SLEEPERS NO_HRTICK SIS_UTIL" > "$tmp/dbg/sched/features"
expect_fail "slb-bench on a kernel without the series" "lacks the sched-lb-rs series: no BALANCE_IDLE_CPUS .* STEAL in" \
	env SLB_DEBUGFS="$tmp/dbg" "$root/scripts/slb-bench" -q
tr '\n' ' ' < "$root/kunit/flags" > "$tmp/dbg/sched/features"
expect_fail "slb-bench without the module" "the sched_lb_rs module is not loaded" \
	env SLB_DEBUGFS="$tmp/dbg" "$root/scripts/slb-bench" -q
expect_fail "slb-bench on an unknown topology" "unknown topology 'nope': one of guittot" \
	env SLB_DEBUGFS="$tmp/dbg" "$root/scripts/slb-bench" -t "smt2 nope"
expect_fail "slb-bench with 1 run a state" "r 1: at least 2 runs a state" \
	env SLB_DEBUGFS="$tmp/dbg" "$root/scripts/slb-bench" -r 1
printf 'SLB: boot\nSLB: done\n' > "$tmp/empty.log"
expect_fail "bench report of a log without runs" "x: no benchmark runs" \
	python3 "$root/scripts/bench_report.py" --md "$tmp/r.md" "x=$tmp/empty.log"
cat > "$tmp/dom.log" <<'LOG'
SLB-BENCH-DOMAIN domain0 MC
SLB-BENCH-DOMAIN domain1 PKG
SLB-BENCH-CPU0SD domain0 0f 0 0
SLB-BENCH-CPU0SD domain1 ff 0 0
LOG
echo "SMT:2 MC:4 PKG:8" > "$tmp/y.domains"
expect_fail "bench report refuses the wrong sched domains" \
	"y: cpu0's sched domains are MC:4 PKG:8, the topology needs SMT:2 MC:4 PKG:8" \
	python3 "$root/scripts/bench_report.py" --domains-dir "$tmp" --md "$tmp/r.md" "y=$tmp/dom.log"

# bench_report.py --json (schedsim calibrate's guest numbers): the runs
# after warm-up (the guest numbers them from 1, so --warmup 1 drops rep 1),
# their median and its interval, counters also per second of wall time.
{
	echo "SLB-BENCH-DOMAIN domain0 MC"
	echo "SLB-BENCH-CPU0SD domain0 f 0"
	for rep in 1 2 3 4 5 6; do
		for state in off on; do
			echo "SLB-BENCH-BEGIN e1 $state $rep"
			echo "version 16"
			echo "cpu0 0 0 0 0 0 0 0 0 0"
			echo "version 16"
			echo "cpu0 0 0 0 $((rep * 10)) 0 0 0 0 0"
			echo "SLB-BENCH-END e1 $state $rep t0=1.00 t1=3.00 rc=0 out=Time: $rep.000"
		done
	done
} > "$tmp/json.log"
mkdir -p "$tmp/guest-j"
echo "e1 flag STEAL /bin/hackbench -g 1 -l 8" > "$tmp/guest-j/conf"
bench_json() {
	python3 "$root/scripts/bench_report.py" --warmup 1 --domains-dir "$tmp" --md "$tmp/j.md" \
		--json "$tmp/j.json" "j=$tmp/json.log" > /dev/null &&
	python3 - "$tmp/j.json" <<'PY'
import json, sys
e = json.load(open(sys.argv[1]))["topologies"]["j"]["experiments"]["e1"]
m = e["states"]["off"]["metrics"]
print(e["flag"], e["command"], m["time_s"]["samples"], m["time_s"]["median"],
      m["sched_goidle_per_s"]["median"], m["time_s"]["ci95"] is not None)
PY
}
expect_pass "bench report --json: warm-up dropped, medians, per-second counters, intervals" \
	"^STEAL /bin/hackbench -g 1 -l 8 \[2, 3, 4, 5, 6\] 4 20 True$" bench_json

# The verdict table: one row per experiment, with its flag, its p and
# Holm's, which way a called effect goes (bold: it survived Holm), and the
# other metrics that moved; and the count of intervals that exclude 1.0
# beside what chance alone gives.
{
	echo "SLB-BENCH-DOMAIN domain0 MC"
	echo "SLB-BENCH-CPU0SD domain0 f 0"
	for rep in 1 2 3 4 5 6 7; do
		for state in off on; do
			t=$((rep + 10)) g=$((rep * 10))
			[ $state = on ] && t=$((rep + 4)) g=$((rep * 30))
			echo "SLB-BENCH-BEGIN e1 $state $rep"
			echo "version 16"
			echo "cpu0 0 0 0 0 0 0 0 0 0"
			echo "version 16"
			echo "cpu0 0 0 0 $g 0 0 0 0 0"
			echo "SLB-BENCH-END e1 $state $rep t0=1.00 t1=3.00 rc=0 out=Time: $t.000"
		done
	done
} > "$tmp/sum.log"
mkdir -p "$tmp/guest-s"
echo "e1 flag STEAL /bin/hackbench -g 1 -l 8" > "$tmp/guest-s/conf"
bench_summary() {
	python3 "$root/scripts/bench_report.py" --warmup 1 --domains-dir "$tmp" --md "$tmp/s.md" \
		"s=$tmp/sum.log" > /dev/null && sed -n '3p;5p' "$tmp/s.md"
}
expect_pass "bench report: the verdict row names the flag, the direction and the counter that moved" \
	"^\| s \| e1 \| STEAL \| time_s \| 0\.5[0-9]* \| [0-9.]+-[0-9.]+ \| <0\.001 \(<0\.001\) \| \*\*effect\*\* \| better \| sched_goidle 3 \|$" bench_summary
expect_pass "bench report: intervals that exclude 1.0, against chance" \
	"^Main metrics: 1 of 1 raw 95% intervals exclude 1\.0, 1 survive Holm over 1 at 0\.05\. Other metrics: 1 of 2 intervals exclude 1\.0 \(about 0\.1 would by chance alone\)\.$" \
	bench_summary

# A flag experiment whose flag never changed an answer (its differs
# counter read 0 around every run) is "inert here", whatever its numbers
# do; the same runs with answers changed keep their verdict; the
# module's counters all reach the table, a zero differs row included.
inert_log() {
	echo "SLB-BENCH-DOMAIN domain0 MC"
	echo "SLB-BENCH-CPU0SD domain0 f 0"
	for rep in 1 2 3 4 5 6 7; do
		for state in off on; do
			t=$((rep + 10)) d=0 u=0
			[ $state = on ] && t=$((rep + 4)) d=$(($1 * rep)) u=$((${2:-0} * rep))
			echo "SLB-BENCH-BEGIN e1 $state $rep"
			echo "SLB-BENCH-CTR differs_STEAL 100"
			echo "SLB-BENCH-CTR detach_skip_calls 5"
			echo "SLB-BENCH-CTR sis_select_undecided 7"
			echo "version 16"
			echo "cpu0 0 0 0 0 0 0 0 0 0"
			echo "version 16"
			echo "cpu0 0 0 0 0 0 0 0 0 0"
			echo "SLB-BENCH-CTR differs_STEAL $((100 + d))"
			echo "SLB-BENCH-CTR detach_skip_calls $((5 + rep))"
			echo "SLB-BENCH-CTR sis_select_undecided $((7 + u))"
			echo "SLB-BENCH-END e1 $state $rep t0=1.00 t1=3.00 rc=0 out=Time: $t.000"
		done
	done
}
mkdir -p "$tmp/guest-i"
echo "e1 flag STEAL /bin/hackbench -g 1 -l 8" > "$tmp/guest-i/conf"
bench_inert() {
	inert_log "$1" "${2:-0}" > "$tmp/i.log"
	python3 "$root/scripts/bench_report.py" --warmup 1 --domains-dir "$tmp" --md "$tmp/i.md" \
		"i=$tmp/i.log" > /dev/null && grep -E "^\| i \| e1 \| (STEAL|time_s|differs_STEAL|detach_skip_calls|sis_select_undecided) " "$tmp/i.md" | paste -sd'#'
}
expect_pass "bench report: a flag whose differs counter stayed 0 is inert here" \
	"\| STEAL \| time_s \| 0\.5[0-9]* \| [^|]* \| [0-9.<]+ \| inert here \(differs_STEAL 0\) \| - \|.*\| detach_skip_calls \|.*\| differs_STEAL \| 0 \[0-0\] " bench_inert 0
expect_pass "bench report: the same runs with answers changed keep their verdict" \
	"\| STEAL \| time_s \| 0\.5[0-9]* \| [^|]* \| [^|]* \| \*\*effect\*\* \| better \|" bench_inert 3
# Calls the judge left undecided (live, the event off) may have differed:
# not inert, the verdict kept and the count in its own row.
expect_pass "bench report: a flag with undecided calls is not called inert" \
	"\| STEAL \| time_s \| 0\.5[0-9]* \| [^|]* \| [^|]* \| \*\*effect\*\* \| better \|.*\| sis_select_undecided \| 0 \[0-0\] \| 9 \[4-14\] " bench_inert 0 2

# bench/reqresp.c, seed 003's workload (frequent short sleeps): it runs
# rounds and reports them with the wakeup latency, refuses a bad argument
# with a message, and bench_report.py reads its line (main metric
# rounds_per_s, the latencies beside it).
cc -O2 -Wall -Wextra -Werror -pthread -o "$tmp/reqresp" "$root/bench/reqresp.c" 2>&1 ||
	echo "not ok - bench/reqresp.c does not build"
reqresp_ok() {
	"$tmp/reqresp" 2 3 10 50 300 | awk '{
		for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
		if (v["rounds"] > 0 && v["wake_p99_us"] >= v["wake_p50_us"] && v["wake_max_us"] >= v["wake_p99_us"]) print "rounds ok"
	}'
}
expect_pass "reqresp: rounds run, latencies ordered" "^rounds ok$" reqresp_ok
expect_fail "reqresp: a bad argument is refused" "THINK_US 'x': want a whole number" "$tmp/reqresp" 2 3 x 50 300
expect_fail "reqresp: a missing argument is refused" "^usage: reqresp" "$tmp/reqresp" 2 3
# bench/pingpong.c's modes: the ping-pong pair, seed 000's stream over a
# pipe (-s) and over UDP loopback (-u), each printing rounds and where
# the two ends ran; an unknown mode or no duration is refused.
cc -O2 -Wall -Wextra -Werror -o "$tmp/pingpong" "$root/bench/pingpong.c" 2>&1 ||
	echo "not ok - bench/pingpong.c does not build"
pingpong_ok() {
	"$tmp/pingpong" "$@" | awk '{
		for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
		if (v["rounds"] > 0 && v["apart"] >= 0 && v["apart"] <= 1 && v["apart_llc"] <= v["apart"]) print $1, "ok"
	}'
}
expect_pass "pingpong: the pair runs rounds" "^rounds=[0-9]+ ok$" pingpong_ok 200
expect_pass "pingpong -s: the pipe stream runs" "^stream ok$" pingpong_ok -s 200
expect_pass "pingpong -u: the UDP stream runs" "^udp ok$" pingpong_ok -u 200
expect_fail "pingpong: an unknown mode is refused" "^usage: pingpong \[-s\|-u\]" "$tmp/pingpong" -x 200
expect_fail "pingpong: no duration is refused" "^usage: pingpong" "$tmp/pingpong" -s
reqresp_log() {
	echo "SLB-BENCH-DOMAIN domain0 MC"
	echo "SLB-BENCH-CPU0SD domain0 f 0"
	for rep in 1 2 3 4 5 6; do
		for state in off on; do
			r=$((1000 + rep)) p=$((40 + rep))
			[ $state = on ] && r=$((1500 + rep)) p=$((20 + rep))
			echo "SLB-BENCH-BEGIN e3 $state $rep"
			echo "version 16"
			echo "cpu0 0 0 0 0 0 0 0 0 0"
			echo "version 16"
			echo "cpu0 0 0 0 0 0 0 0 0 0"
			echo "SLB-BENCH-END e3 $state $rep t0=1.00 t1=3.00 rc=0 out=reqresp groups=2 workers=3 think_us=10 sleep_us=50 ms=2000 rounds=$((2 * r)) rounds_per_s=$r.0 wake_p50_us=$p wake_p99_us=$((p * 3)) wake_max_us=900"
		done
	done
}
mkdir -p "$tmp/guest-r"
echo "e3 flag NEWIDLE_BACKOFF /bin/reqresp 2 3 10 50 2000" > "$tmp/guest-r/conf"
reqresp_report() {
	reqresp_log > "$tmp/r.log"
	python3 "$root/scripts/bench_report.py" --warmup 1 --domains-dir "$tmp" --md "$tmp/r.md" \
		"r=$tmp/r.log" > /dev/null && grep -E "^\| r \| e3 \| (NEWIDLE_BACKOFF|\*\*rounds_per_s\*\*|wake_p50_us) " "$tmp/r.md" | paste -sd'#'
}
expect_pass "bench report: reqresp's rounds a second are the main metric, its latencies beside" \
	"\| NEWIDLE_BACKOFF \| rounds_per_s \| 1\.4[0-9]* \|.*\| \*\*rounds_per_s\*\* \| 1004 .*\| wake_p50_us \| 44 " reqresp_report

# The cover letter's results (scripts/cover_results.py, which
# export-series.sh puts in): from Documentation/results/bench.json, every
# verdict row of generated.rst, which the same bench run wrote, with the
# same ratio, interval and verdict; and a file that is no bench document
# is refused.
cover_vs_generated() {
	python3 "$root/scripts/cover_results.py" "$root/Documentation/results/bench.json" > "$tmp/cover.txt" &&
	python3 - "$root/Documentation/results/generated.rst" "$tmp/cover.txt" <<'PY'
import re, sys
gen = {}
for line in open(sys.argv[1]):
    m = re.match(r'   (\w+), (\w+), (?:"[^"]*"|[^,]+), \w+, ([\d.]+|-), ([\d.]+-[\d.]+|-), ([^,]+), ([^,]+), ', line)
    if m:
        # The ratio, the interval, p with Holm's, and the verdict's kind
        # (the cover says it in fewer words).
        kind = m.group(6).strip("*").split(":")[0].split(" (")[0]
        gen[(m.group(1), m.group(2))] = (m.group(3), m.group(4), m.group(5), kind)
cover = {tuple(l.split()[:2]): l for l in open(sys.argv[2]) if l.startswith("  ")}
bad = [k for k, v in gen.items() if k not in cover or any(x not in cover[k] for x in v)]
print(f"{len(gen)} verdict rows, {len(gen) - len(bad)} in the cover", *bad)
PY
}
expect_pass "cover results: every verdict of generated.rst, from bench.json" \
	"^([1-9][0-9]*) verdict rows, \1 in the cover$" cover_vs_generated
echo '{"format": "something else"}' > "$tmp/not-bench.json"
expect_fail "cover results: not a bench document" "not a sched-lb-rs bench document" \
	python3 "$root/scripts/cover_results.py" "$tmp/not-bench.json"

# make bench's statistics (scripts/bench_report.py). Student's t against
# its printed table; the paired analysis against drift that moves both
# runs of a pair together (found with the pairs as run, lost when the
# same numbers are paired wrongly); Holm's adjustment against its
# textbook example; the verdicts' wording: an effect, an interval that
# excludes 1.0 but not after Holm, and "none seen" with how far the
# interval reaches and what 80% power would detect; too few pairs.
bench_stats() {
	python3 - "$root/scripts" <<'PY'
import math, sys
sys.path.insert(0, sys.argv[1])
import bench_report as b
print("t", *(f"{b.t_quantile(q, df):.4f}" for q, df in ((0.975, 9), (0.975, 4), (0.8, 9))),
      f"{b.t_two_sided_p(2.2622, 9):.4f}")
# The host's drift: each rep's speed, shared by its two runs; the flag
# makes on 3% slower.
drift = [1.0, 1.3, 0.8, 1.2, 0.7, 1.1, 0.9, 1.25, 0.75, 1.05]
pairs = [(100 * d, 103 * d + 0.3 * (-1) ** i) for i, d in enumerate(drift)]
st = b.paired_stats(pairs)
print("paired", f"{st['ratio']:.3f}", b.verdict(st, True, 0.001), f"{st['corr']:.2f}")
# The same numbers, each on paired with the next rep's off: wrong input.
wrong = [(pairs[i][0], pairs[(i + 1) % 10][1]) for i in range(10)]
print("mispaired", b.verdict(b.paired_stats(wrong), True, 1.0).split(":")[0])
print("holm", [round(p, 3) for p in b.holm([0.01, 0.04, 0.03, 0.005])])
# A raw interval clear of 1.0 whose adjusted p is not below 0.05.
print("holm lost", b.verdict(st, True, 0.2))
# Log ratios of +-0.1 around 0: no change; sd 0.105, se 0.033.
noise = [(100, 100 * math.exp(0.1 * (-1) ** i)) for i in range(10)]
print("noise", b.verdict(b.paired_stats(noise), True, 1.0))
print("few", b.verdict(b.paired_stats(pairs[:3]), True, None))
zero = [(0, 5 + i) for i in range(10)]
print("from 0", b.verdict(b.paired_stats(zero), True, None))
PY
}
expect_pass "bench stats: Student's t as its table has it" "^t 2\.2622 2\.7764 0\.8834 0\.0500$" bench_stats
expect_pass "bench stats: pairs that drift together, a 3% effect found" "^paired 1\.03[01] effect 1\.00$" bench_stats
expect_pass "bench stats: the same numbers mispaired find nothing" "^mispaired none seen$" bench_stats
expect_pass "bench stats: Holm's adjustment" "^holm \[0\.03, 0\.06, 0\.06, 0\.02\]$" bench_stats
expect_pass "bench stats: clear of 1.0 but not after Holm" "^holm lost not after Holm \(p <0\.001; Holm 0\.200\)$" bench_stats
expect_pass "bench stats: no change, the interval's reach and 80% power" \
	"^noise none seen: interval reaches \+-8%; 80% power at \+-11%$" bench_stats
expect_pass "bench stats: 3 pairs, no verdict" "^few n<5$" bench_stats
expect_pass "bench stats: a counter from 0, no ratio" "^from 0 no ratio \(off 0\)$" bench_stats

# An experiment on one of 6.12's own flags (NI_RANDOM, SIS_UTIL: no
# differs counter in a module that has them) says so in its label; a
# module flag on a base does not; a run whose module had no differs
# counters at all (an older bench.json) labels nothing.
bench_labels() {
	python3 - "$root/scripts" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import bench_report as b
print("old run:", b.label_of("flag", "NI_RANDOM"))
b.MODULE_COUNTERS.update({"differs_NEWIDLE_BACKOFF", "steal_calls"})
print("upstream:", b.label_of("flag", "NI_RANDOM"))
print("ours:", b.label_of("flag", "NO_NI_RANDOM+NEWIDLE_BACKOFF"))
print("A/A:", b.label_of("same", "-"))
PY
}
expect_pass "bench labels: 6.12's own flag" "^upstream: NI_RANDOM \(6\.12's own\)$" bench_labels
expect_pass "bench labels: a module flag on a base" "^ours: NO_NI_RANDOM\+NEWIDLE_BACKOFF$" bench_labels
expect_pass "bench labels: nothing without differs counters" "^old run: NI_RANDOM$" bench_labels
expect_pass "bench labels: A/A" "^A/A: A/A \(same state\)$" bench_labels

# A/A experiments (bench.sh's kind "same": both arms the same state)
# report the run's own false-positive rate, and one Holm family covers
# the run: an experiment of p 0.025 is an effect alone, not beside four
# that each need a share of the 5%.
aa_log() {
	echo "SLB-BENCH-DOMAIN domain0 MC"
	echo "SLB-BENCH-CPU0SD domain0 f 0"
	for e in $1; do
		for rep in 1 2 3 4 5 6 7 8 9 10 11; do
			for state in off on; do
				# Pair-shared drift, and noise of about 1.5% in the on runs;
				# e0's on runs are also slower by 1%.
				t=$((1000 + (rep % 3) * 200)) u=$t
				[ $state = on ] && u=$((t + ((rep * 7) % 5 - 2) * 10))
				[ "$e" = e0 ] && [ $state = on ] && u=$((u + t / 100))
				echo "SLB-BENCH-BEGIN $e $state $rep"
				echo "version 16"
				echo "cpu0 0 0 0 0 0 0 0 0 0"
				echo "version 16"
				echo "cpu0 0 0 0 0 0 0 0 0 0"
				echo "SLB-BENCH-END $e $state $rep t0=1.00 t1=3.00 rc=0 out=Time: $u.000"
			done
		done
	done
}
mkdir -p "$tmp/guest-a"
bench_aa() {
	aa_log "$1" > "$tmp/a.log"
	for e in $1; do
		case $e in e0) echo "e0 flag STEAL /bin/hackbench" ;; *) echo "$e same - /bin/hackbench" ;; esac
	done > "$tmp/guest-a/conf"
	python3 "$root/scripts/bench_report.py" --warmup 1 --domains-dir "$tmp" --md "$tmp/a.md" \
		"a=$tmp/a.log" > /dev/null && grep -E "^\| a \| e[0-9] \||^Main" "$tmp/a.md" | head -"$2"
}
expect_pass "bench report: an A/A experiment is labelled" \
	"^\| a \| e1 \| A/A \(same state\) \| time_s \| 1\.000 \|" bench_aa "e1" 9
expect_pass "bench report: an A/A experiment's intervals are counted" \
	"^Main.* A/A \(1 experiment, the same state in both arms\): 0 of 2 intervals exclude 1\.0 \(about 0\.1 expected\), 0 main" \
	bench_aa "e1" 9
expect_pass "bench report: alone, p 0.025 survives Holm" "^\| a \| e0 \| STEAL \|.* \*\*effect\*\* " bench_aa "e0" 1
expect_pass "bench report: beside four A/A, the same p does not" \
	"^\| a \| e0 \| STEAL \|.* not after Holm \(p 0\.0[0-9]*; Holm 0\.[0-9]*\) " bench_aa "e0 e1 e2 e3 e4" 1
# --from-json (the cover letter's numbers, a re-analysis of a committed
# run) pairs the samples by the repetitions bench.json keeps: the same
# verdict rows as from the logs; with the reps scrambled, not.
bench_from_json() {
	aa_log "e0 e1 e2 e3 e4" > "$tmp/a.log"
	python3 "$root/scripts/bench_report.py" --warmup 1 --domains-dir "$tmp" --md "$tmp/a.md" \
		--json "$tmp/a.json" "a=$tmp/a.log" > /dev/null &&
	if [ "${1:-}" = scramble ]; then
		python3 - "$tmp/a.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for e in d["topologies"]["a"]["experiments"].values():
    r = e["states"]["on"]["reps"]
    e["states"]["on"]["reps"] = r[1:] + r[:1]
json.dump(d, open(sys.argv[1], "w"))
PY
	fi &&
	python3 "$root/scripts/bench_report.py" --from-json "$tmp/a.json" --md "$tmp/aj.md" > /dev/null &&
	diff <(sed -n '3,7p' "$tmp/a.md") <(sed -n '3,7p' "$tmp/aj.md") > /dev/null && echo "same verdicts"
}
expect_pass "bench report --from-json: the logs' verdicts, paired by the kept reps" "^same verdicts$" bench_from_json
expect_fail "bench report --from-json: reps scrambled, other verdicts" "" bench_from_json scramble

# Issue 16: no Rust rule takes more instructions per call than the 6.12
# C it replaces (callgrind; overflow checks off and on), but for the
# exceptions rust/cref/rule-cost-exceptions.txt explains; without valgrind
# the check fails and says so. Then the verdict on made-up counts: one
# instruction a call more, an exception that is no longer one.
expect_fail "rule-cost: missing valgrind named" "required tool 'valgrind' not found; run 'make setup'" \
	env PATH="$bin" HOME="$tmp" "$root/scripts/rule-cost.sh" --check "$tmp/rc-nope.txt"
expect_pass "rule-cost: every Rust rule at most 1.00x its C per call, or its listed exception" \
	"^balance_interval .* = 0\.[0-9]+x .* = 0\.[0-9]+x" "$root/scripts/rule-cost.sh" --check "$tmp/rule_cost.txt"
printf '# made up\nidle_cpus 100 0 2600 2500 0 2500 2500\n' > "$tmp/rc-over.txt"
expect_fail "rule-cost: one instruction a call above the C" "^idle_cpus .* = 1\.040x .*FAIL: above 1\.00x" \
	"$root/scripts/rule-cost.sh" --verdict "$tmp/rc-over.txt"
printf 'newidle_stop 100 0 2000 2000 0 2000 2000\nsis_prop 100 0 3300 3200 0 3300 3200\n' > "$tmp/rc-stale.txt"
expect_fail "rule-cost: an exception at 1.00x is stale" "^newidle_stop .*STALE" \
	"$root/scripts/rule-cost.sh" --verdict "$tmp/rc-stale.txt"
rule_cost_columns() {
	python3 - "$root/scripts" "$tmp/rule_cost.txt" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import bench_report as b
for rule, cols in b.read_rule_cost(sys.argv[2]):
    print(rule, " ".join(b.cost_cells(cols)))
PY
}
expect_pass "bench report: C, Rust and Rust/C per overflow-check column" \
	"^msecs_to_jiffies [0-9.]+ [0-9.]+ [0-9.]+ [0-9.]+ [0-9.]+ [0-9.]+$" rule_cost_columns

# Kernel flavours, the stress step's knobs and the mutants check.
expect_fail "unknown kernel flavour" "SLB_FLAVOR=bogus: expected test, plain or kcsan" \
	env SLB_FLAVOR=bogus "$root/scripts/build-kernel.sh"
expect_fail "stress: bad SEED" "SEED=x1: expected a non-negative integer" \
	env SEED=x1 "$root/scripts/stress.sh"
expect_fail "stress: bad CYCLES" "CYCLES=0: expected a positive integer" \
	env CYCLES=0 SEED=1 "$root/scripts/stress.sh"
expect_fail "stress: bad KCSAN" "KCSAN=yes: expected 1 or nothing" \
	env KCSAN=yes "$root/scripts/stress.sh"
expect_fail "stress: bad CONTROL" "CONTROL=yes: expected 1 or nothing" \
	env CONTROL=yes "$root/scripts/stress.sh"
expect_fail "check-series: bad HOOKS" "HOOKS=off: expected y or n" \
	env HOOKS=off "$root/scripts/check-series.sh"
expect_fail "check-apply: a version the archive does not serve" "VERSIONS: linux-source-6.12 6.12.0-0 is not in the archive" \
	env VERSIONS=6.12.0-0 "$root/scripts/check-apply.sh"
expect_fail "check-configs: unknown config" "CONFIGS: unknown config 'nosmt'" \
	env CONFIGS="hooks-on nosmt" "$root/scripts/check-configs.sh"

# The guest's LLC check (scripts/guest/llc.awk) on made-up sysfs, debugfs
# and schedstat trees, under busybox awk (the guest's)
# and mawk (Debian's awk). mk_llc NAME ONLINE LB_LLC CPU... makes a
# tree; each CPU is "N:SIBLINGS:MASK/FLAG,FLAG;MASK/FLAG" (levels lowest
# first, no levels for a CPU without domains).
mk_llc() {
	local d="$tmp/llc-$1" online=$2 llc=$3 spec c sibs doms dom k
	shift 3
	mkdir -p "$d/cpu" "$d/proc" "$d/dbg/domains"
	echo "$online" > "$d/cpu/online"
	printf '%b' "$llc" > "$d/dbg/lb_llc"
	printf 'version 16\ntimestamp 4294892296\n' > "$d/proc/schedstat"
	for spec; do
		IFS=: read -r c sibs doms <<< "$spec"
		mkdir -p "$d/cpu/cpu$c/topology" "$d/dbg/domains/cpu$c"
		echo "$sibs" > "$d/cpu/cpu$c/topology/thread_siblings_list"
		echo "cpu$c 0 0 0 0 0 0 0 0 0" >> "$d/proc/schedstat"
		k=0
		for dom in ${doms//;/ }; do
			echo "domain$k ${dom%%/*} 0 0 0 0 0 0 0 0" >> "$d/proc/schedstat"
			mkdir -p "$d/dbg/domains/cpu$c/domain$k"
			echo "${dom#*/} " | tr , ' ' > "$d/dbg/domains/cpu$c/domain$k/flags"
			k=$((k + 1))
		done
	done
	echo "$d"
}
# llc_check AWK TREE: the guest's llc_errors with the tree for its root.
llc_check() {
	local out
	out=$($1 -f "$root/scripts/guest/llc.awk" "$2/cpu/online" "$2"/cpu/cpu[0-9]*/topology/thread_siblings_list \
		"$2/proc/schedstat" $(ls "$2"/dbg/domains/cpu*/domain*/flags 2>/dev/null) "$2/dbg/lb_llc" 2>&1) ||
		out="$out (awk exited $?)"
	[ -z "$out" ] && { echo "llc ok"; return 0; }
	echo "$out"
	return 1
}
smt="SD_SHARE_CPUCAPACITY,SD_SHARE_LLC" mc="SD_BALANCE_NEWIDLE,SD_SHARE_LLC,SD_PREFER_SIBLING"
smt4() { mk_llc "$1" 0-3 "$2" "0:0-1:3/$smt;f/$mc" "1:0-1:3/$smt;f/$mc" \
	"2:2-3:c/$smt;f/$mc" "3:2-3:c/$smt;00000000,0000000f/$mc"; }
good=$(smt4 good '0-3 cores 0,2 smt_weight 2 overloaded 1\n')
empty=$(smt4 empty '')
partial=$(smt4 partial '0-1 cores 0 smt_weight 2 overloaded -\n')
badcores=$(smt4 badcores '0-3 cores 0-1 smt_weight 2 overloaded -\n')
iso="0:0:7/$mc" iso1="1:1:7/$mc" iso2="2:2:7/$mc"
isolated=$(mk_llc isolated 0-3 '0-2 cores 0-2 smt_weight 1 overloaded -\n' "$iso" "$iso1" "$iso2" "3:3:")
stale=$(mk_llc stale 0-3 '0-3 cores 0-3 smt_weight 1 overloaded -\n' "$iso" "$iso1" "$iso2" "3:3:")
noverbose=$(mk_llc noverbose 0-1 '' "0:0:" "1:1:")
for a in "busybox awk" mawk; do
	command -v ${a%% *} > /dev/null || {
		echo "not ok - llc check: no ${a%% *} (make setup installs busybox-static; mawk is Debian's awk)"
		fail=$((fail + 1))
		continue
	}
	expect_pass "llc ($a): LLCs that match the domains" "^llc ok$" llc_check "$a" "$good"
	expect_fail "llc ($a): an empty lb_llc" "cpu 0: in no lb_llc line, its LLC domain spans 0,1,2,3" \
		llc_check "$a" "$empty"
	expect_fail "llc ($a): a partial lb_llc" "cpu 3: in no lb_llc line" llc_check "$a" "$partial"
	expect_fail "llc ($a): a cores mask off the topology" "cores 0-1 has 1, not the first sibling of a core" \
		llc_check "$a" "$badcores"
	expect_pass "llc ($a): an isolated CPU in no line" "^llc ok$" llc_check "$a" "$isolated"
	expect_fail "llc ($a): a CPU without an LLC domain in a line" \
		"cpu 3: in lb_llc span 0,1,2,3, but it has no LLC domain" llc_check "$a" "$stale"
	expect_fail "llc ($a): no domains to check against" "no sched domain flags read" \
		llc_check "$a" "$noverbose"
done

# make mutants' verdict (scripts/mutants.py check) on made-up outcomes:
# survivors count as a multiset against the list, so a name listed once
# that survives twice, an unlisted survivor and a stale entry each fail
# (a run that did not finish: below). mk_mutants DIR SUMMARY:NAME...: cargo-mutants'
# outcomes; the hand outcomes hold one caught mutant.
mk_mutants() {
	local d="$tmp/mut-$1"
	shift
	mkdir -p "$d/hand"
	python3 - "$d" "$@" <<'PY'
import json, sys
d, specs = sys.argv[1], sys.argv[2:]
outcomes, counts = [], {}
for spec in specs:
    summary, name = spec.split(":", 1)
    outcomes.append({"scenario": {"Mutant": {"name": f"rust/policy/src/x.rs:1:2: {name}",
                                             "file": "rust/policy/src/x.rs"}},
                     "summary": summary})
    key = {"CaughtMutant": "caught", "MissedMutant": "missed"}[summary]
    counts[key] = counts.get(key, 0) + 1
json.dump(dict(counts, end_time="2026-12-02T00:00:00Z",
               outcomes=[{"scenario": "Baseline", "summary": "Success"}] + outcomes),
          open(f"{d}/outcomes.json", "w"))
json.dump([{}] * len(specs), open(f"{d}/mutants.json", "w"))
PY
	printf 'caught\trust/policy/src/x.rs: replace .min( with .max( in f: `a.min(b)`\n' > "$d/hand/outcomes.txt"
	echo "$d"
}
printf '# a list\nrust/policy/src/x.rs: replace + with - in f\n    why: a reason long enough to count.\n' > "$tmp/equiv.txt"
mcheck() { env SLB_MUTANTS_EQUIV="$tmp/equiv.txt" python3 "$root/scripts/mutants.py" check "$1"; }
expect_pass "mutants check: every survivor listed" "0 unlisted survivors" \
	mcheck "$(mk_mutants listed 'MissedMutant:replace + with - in f' 'CaughtMutant:replace * with / in f')"
expect_fail "mutants check: an unlisted survivor" "UNLISTED SURVIVOR: rust/policy/src/x.rs: replace \* with / in f" \
	mcheck "$(mk_mutants unlisted 'MissedMutant:replace + with - in f' 'MissedMutant:replace * with / in f')"
expect_fail "mutants check: listed once, survives twice" "UNLISTED SURVIVOR: rust/policy/src/x.rs: replace \+ with - in f" \
	mcheck "$(mk_mutants twice 'MissedMutant:replace + with - in f' 'MissedMutant:replace + with - in f')"
expect_fail "mutants check: a stale entry" "STALE ENTRY \(not a survivor now\): rust/policy/src/x.rs: replace \+ with - in f" \
	mcheck "$(mk_mutants stale 'CaughtMutant:replace + with - in f')"

# Which kernel reports fail a guest run (scripts/splats.sh), on made-up
# console logs: a known stock KCSAN race passes, the same title with a
# frame of the series fails, an unknown race fails, and so does a warning.
kcsan_report() { # TITLE FRAME
	printf '%s\n' "==================================================================" \
		"BUG: KCSAN: $1" "" "read to 0xff of 8 bytes by task 1 on cpu 0:" " $2" "" \
		"Reported by Kernel Concurrency Sanitizer on:" \
		"==================================================================" "SLB: done"
}
kcsan_report "data-race in do_nanosleep / hrtimer_wakeup" "do_nanosleep+0xd3/0x280" > "$tmp/known.log"
expect_pass "splats: a known stock KCSAN race is counted, not failed" "1 KCSAN reports of known stock races" \
	"$root/scripts/splats.sh" "$tmp/known.log" t
kcsan_report "data-race in do_nanosleep / hrtimer_wakeup" "sched_lb_steal+0x10/0x80" > "$tmp/ours.log"
expect_fail "splats: a known title with a frame of the series" "kernel splat in the console log" \
	"$root/scripts/splats.sh" "$tmp/ours.log" t
# The series only further down the stack (STEAL's steal_from() calling
# the stock dequeue that races): the stock title stands.
kcsan_report "data-race in do_nanosleep / hrtimer_wakeup" "do_nanosleep+0xd3/0x280" |
	sed 's|^ do_nanosleep+0xd3/0x280$| do_nanosleep+0xd3/0x280\n sched_lb_steal_from+0x577/0x8b0|' > "$tmp/via.log"
expect_pass "splats: a stock race reached through the series is counted apart" \
	"1 of them with series code further down a stack" "$root/scripts/splats.sh" "$tmp/via.log" t
# make replay's base64 payload may spell "Oops"; the same word in a
# kernel line still fails.
printf '%s\n' "SLB-TRACE-GZ tnOPoy71irv+OopsdR2OOopsdRTY+j" "SLB: done" > "$tmp/gz.log"
expect_pass "splats: a replay payload that spells Oops" "^$" "$root/scripts/splats.sh" "$tmp/gz.log" t
printf '%s\n' "SLB-TRACE-GZ abc" "Oops: 0000 [#1] SMP" "SLB: done" > "$tmp/oops.log"
expect_fail "splats: an Oops beside a replay payload" "Oops: 0000" "$root/scripts/splats.sh" "$tmp/oops.log" t
kcsan_report "data-race in sched_balance_rq / sched_balance_rq+0x1/0x2" "sched_balance_rq+0x1/0x2" > "$tmp/new.log"
expect_fail "splats: an unknown KCSAN race" "BUG: KCSAN: data-race in sched_balance_rq" \
	"$root/scripts/splats.sh" "$tmp/new.log" t
expect_pass "splats: the control run counts an unlisted KCSAN race" "^ +1 data-race in sched_balance_rq / sched_balance_rq$" \
	bash -c 'SLB_KCSAN_CONTROL=1 "$1" "$2" t >/dev/null 2>&1 && cat "$2.kcsan"' _ "$root/scripts/splats.sh" "$tmp/new.log"
expect_fail "splats: the control run still fails a race in the series" "kernel splat in the console log" \
	env SLB_KCSAN_CONTROL=1 "$root/scripts/splats.sh" "$tmp/ours.log" t
printf '%s\n' "WARNING: CPU: 1 PID: 2 at kernel/sched/fair.c:1 f+0x1/0x2" > "$tmp/warn.log"
expect_fail "splats: a WARNING" "kernel/sched/fair.c:1" "$root/scripts/splats.sh" "$tmp/warn.log" t
expect_fail "splats: no log" "splats: no log at" "$root/scripts/splats.sh" "$tmp/none.log" t

expect_fail "mutants check without a run" "outcomes.json is missing: run 'make mutants'" \
	python3 "$root/scripts/mutants.py" check "$tmp/no-mutants.out"
mkdir -p "$tmp/m.out/hand"
echo '[{"name": "a"}]' > "$tmp/m.out/mutants.json"
echo '{"outcomes": [], "caught": 0, "missed": 0, "timeout": 0, "unviable": 0, "end_time": null}' > "$tmp/m.out/outcomes.json"
: > "$tmp/m.out/hand/outcomes.txt"
expect_fail "mutants check of an unfinished run" "0 of the 1 mutants found were tested" \
	python3 "$root/scripts/mutants.py" check "$tmp/m.out"

# The hook call sites (scripts/check_hook_calls.py, run by make test on
# fair.o): a function that calls a hook's static call and also makes an
# indirect call fails, so does a hook with no site; direct calls pass, and
# a function that only takes a trampoline's address adds no site.
printf 'SCHED_LB_HOOK(steal)\nSCHED_LB_HOOK_CHECKED(sis_select)\n' > "$tmp/hooks.h"
cat > "$tmp/sites.c" <<'C'
extern int __SCT__sched_lb_steal(int);
extern int __SCT__sched_lb_sis_select(int);
int (*other)(int);
int steal_site(int x) { return __SCT__sched_lb_steal(x) + 1; }
#ifdef INDIRECT
int sis_site(int x) { return __SCT__sched_lb_sis_select(x) + other(x); }
#else
int sis_site(int x) { return __SCT__sched_lb_sis_select(x) + 2; }
#endif
/* KUnit entry points may ask a table through a pointer. */
int sched_lb_test_steal(int x) { return other ? other(x) : __SCT__sched_lb_steal(x); }
/* Repointing a static call names its trampoline without calling it. */
void *sched_lb_set_calls(void) { return (void *)__SCT__sched_lb_steal; }
C
if gcc -O2 -c -o "$tmp/direct.o" "$tmp/sites.c" && gcc -O2 -DINDIRECT -c -o "$tmp/indirect.o" "$tmp/sites.c"; then
	expect_pass "hook sites: direct static calls" "2 call sites of 2 hooks, all direct" \
		python3 "$root/scripts/check_hook_calls.py" --list "$tmp/hooks.h" --obj "$tmp/direct.o"
	expect_fail "hook sites: an indirect call beside a hook" "sis_site calls hook\(s\) sis_select and makes 1 indirect" \
		python3 "$root/scripts/check_hook_calls.py" --list "$tmp/hooks.h" --obj "$tmp/indirect.o"
	printf 'SCHED_LB_HOOK(steal)\nSCHED_LB_HOOK(sis_select)\nSCHED_LB_HOOK(detach_skip)\n' > "$tmp/hooks3.h"
	expect_fail "hook sites: a hook without a site" "hook detach_skip has no static call site" \
		python3 "$root/scripts/check_hook_calls.py" --list "$tmp/hooks3.h" --obj "$tmp/direct.o"
	expect_fail "hook sites: sites not registered for inline patching" "hook steal: 2 call site\(s\) .* 0 registered" \
		python3 "$root/scripts/check_hook_calls.py" --list "$tmp/hooks.h" --obj "$tmp/direct.o" --sites "$tmp/direct.o"
else
	echo "not ok - hook sites: gcc could not build the test objects"
	fail=$((fail + 1))
fi
expect_fail "hook sites: no list" "cannot read the hook list" \
	python3 "$root/scripts/check_hook_calls.py" --list "$tmp/no-list.h" --obj "$tmp/direct.o"

# make site-cost's table (scripts/site_cost.py): instructions per call
# with the empty loop subtracted, the spread over the runs; a log without
# the KUnit case's lines is refused.
printf '[ 1.0] # site_cost: hook-site detach_skip passes 100 empty 300 stock 1300 hooked 4300 quiet 3300\n' > "$tmp/sc1.log"
printf '[ 1.0] # site_cost: hook-site detach_skip passes 100 empty 300 stock 1500 hooked 4500 quiet 3600\n' > "$tmp/sc2.log"
expect_pass "site cost: a table" "\| detach_skip \| 11\.0 \| 41\.0 \| \+30\.0 \| 3\.73x \| \+20\.5 \| 3\.0 \|" \
	python3 "$root/scripts/site_cost.py" "$tmp/sc1.log" "$tmp/sc2.log"
expect_fail "site cost: no KUnit lines" "has no 'hook-site' line" \
	python3 "$root/scripts/site_cost.py" "$tmp/hooks.h"
expect_fail "site cost: runs bad" "SLB_SITE_COST_RUNS='x'" env SLB_SITE_COST_RUNS=x "$root/scripts/site-cost.sh"
# make sched-cost's table (scripts/sched_cost.py): per function and state
# the median over the boots of each boot's median, the spread, and the
# ratio and difference to the first state; a log without the guest
# step's lines, a boot missing a state, and a bad run count are refused.
printf 'SLB-COST stock f 100 10 20 30 21\nSLB-COST on f 100 10 30 40 31\n' > "$tmp/cost1.log"
printf 'SLB-COST stock f 90 10 22 30 23\nSLB-COST on f 100 10 34 40 35\n' > "$tmp/cost2.log"
printf 'SLB-COST stock f 90 10 22 30 23\n' > "$tmp/cost3.log"
expect_pass "sched cost: trimmed means over boots, medians, spread, ratio and extra to stock" \
	"^\| f \| on \| 100 \| 33 \| 32 \| 4 \| 33 \| 1\.500 \| \+11 \|$" \
	python3 "$root/scripts/sched_cost.py" "$tmp/cost1.log" "$tmp/cost2.log"
# The tracer's own cost (state baseline) comes off each median.
printf 'SLB-COST baseline idle_cpu 500 8 10 12 11\n' | cat - "$tmp/cost1.log" > "$tmp/cost1b.log"
printf 'SLB-COST baseline idle_cpu 500 8 10 12 11\n' | cat - "$tmp/cost2.log" > "$tmp/cost2b.log"
expect_pass "sched cost: the tracer's baseline subtracted" \
	"^\| f \| on \| 100 \| 33 \| 32 \| 4 \| 22 \| 2\.000 \| \+11 \|$" \
	python3 "$root/scripts/sched_cost.py" "$tmp/cost1b.log" "$tmp/cost2b.log"
expect_fail "sched cost: a log without the step's lines" "has no 'SLB-COST' line" \
	python3 "$root/scripts/sched_cost.py" "$tmp/sc1.log"
expect_fail "sched cost: a boot missing a state" "cost3.log lacks on/f" \
	python3 "$root/scripts/sched_cost.py" "$tmp/cost1.log" "$tmp/cost3.log"
expect_fail "sched cost: runs bad" "SLB_SCHED_COST_RUNS='0'" env SLB_SCHED_COST_RUNS=0 "$root/scripts/sched-cost.sh"

# Documentation/adding-a-policy.rst's places, for every flag of
# kunit/flags (scripts/check_places.py): the checkout has them all; a copy
# with one place taken away (STEAL's bench experiment, SIS_ONCE's name in
# differential.rs, a flag's row of index.rst) fails naming the flag and
# the place, and only that.
expect_pass "policy places: the checkout" "[0-9]+ flags, each in all [0-9]+ places" \
	python3 "$root/scripts/check_places.py" "$root"
pl="$tmp/places"
for d in kunit patches rust/policy/src rust/kunit rust/cref/tests rust/schedsim/src/sim \
	scripts Documentation/policies; do
	mkdir -p "$pl/$d"
done
cp "$root"/kunit/flags "$root"/kunit/*.c "$pl/kunit/"
cp "$root"/patches/[0-9][0-9][0-9][0-9]-*.patch "$pl/patches/"
cp "$root"/rust/policy/src/*.rs "$pl/rust/policy/src/"
cp "$root"/rust/kunit/*.rs "$pl/rust/kunit/"
cp "$root"/rust/cref/tests/differential.rs "$pl/rust/cref/tests/"
cp "$root"/rust/schedsim/src/sim/*.rs "$pl/rust/schedsim/src/sim/"
mkdir -p "$pl/rust/schedsim/src" && cp "$root"/rust/schedsim/src/flags.rs "$pl/rust/schedsim/src/"
cp "$root"/scripts/bench-plan.sh "$pl/scripts/"
cp "$root"/Documentation/policies/*.rst "$pl/Documentation/policies/"
cp "$root"/README.md "$pl/" && cp "$root"/Documentation/index.rst "$pl/Documentation/"
expect_pass "policy places: a full copy" "each in all" python3 "$root/scripts/check_places.py" "$pl"
# places_lack NAME LINE: the copy fails with LINE as its one missing place.
places_lack() {
	expect_fail "policy places: $1" "^$2 check_places: 1 place\(s\) missing" \
		bash -c 'set -o pipefail; python3 "$1" "$2" 2>&1 | paste -sd" "' - "$root/scripts/check_places.py" "$pl"
}
sed -i '/ flag STEAL /d' "$pl/scripts/bench-plan.sh"
places_lack "no STEAL experiment" "STEAL: no bench: an experiment '<id> flag STEAL'"
cp "$root"/scripts/bench-plan.sh "$pl/scripts/"
sed -i 's/SIS_ONCE/SIS_1NCE/g' "$pl/rust/cref/tests/differential.rs"
places_lack "SIS_ONCE not in differential.rs" "SIS_ONCE: no cref: differential.rs's module doc names it"
cp "$root"/rust/cref/tests/differential.rs "$pl/rust/cref/tests/"
sed -i 's/``LB_RELAX_FAILED``/``LB_RELAX_FAIL``/' "$pl/Documentation/index.rst"
places_lack "a flag's index.rst row" "LB_RELAX_FAILED: no docs: index.rst's table"

# sched-lb-stat on a debugfs fixture: one row per flag with its state,
# live or shadow, calls and differs ("-" where the module has no
# counter), one row per hook with its refusals; busybox's sh as in the
# guest; a missing module and a bad interval are refused.
st="$tmp/stat"
mkdir -p "$st/sched/lb_violations" "$st"/sched_lb_rs/{flags,differs,shadow,steal,sis_select}
echo "GENTLE_FAIR_SLEEPERS NO_LB_RELAX_FAILED STEAL NO_SIS_PROP" > "$st/sched/features"
echo 41 > "$st/sched_lb_rs/flags/STEAL"
echo 17 > "$st/sched_lb_rs/differs/STEAL"
echo 1 > "$st/sched_lb_rs/shadow/STEAL"
echo 9 > "$st/sched_lb_rs/flags/LB_RELAX_FAILED"
echo 0 > "$st/sched_lb_rs/differs/LB_RELAX_FAILED"
echo 0 > "$st/sched_lb_rs/shadow/LB_RELAX_FAILED"
echo 7 > "$st/sched_lb_rs/flags/SIS_PROP"
for kv in calls=41 differs=17 shadowed=17 tried=0 stolen=0; do echo "${kv#*=}" > "$st/sched_lb_rs/steal/${kv%=*}"; done
echo 7 > "$st/sched_lb_rs/sis_select/calls"
echo 3 > "$st/sched/lb_violations/steal"
echo none > "$st/sched/lb_ejected"
stat_sh="$(command -v busybox >/dev/null && echo "busybox sh" || echo sh)"
expect_pass "sched-lb-stat: a flag in shadow" "^STEAL +on +shadow +41 +17$" env SLB_DEBUGFS="$st" $stat_sh "$root/scripts/sched-lb-stat"
expect_pass "sched-lb-stat: a live flag off" "^LB_RELAX_FAILED +off +live +9 +0$" env SLB_DEBUGFS="$st" $stat_sh "$root/scripts/sched-lb-stat"
expect_pass "sched-lb-stat: a flag not judged" "^SIS_PROP +off +- +7 +-$" env SLB_DEBUGFS="$st" $stat_sh "$root/scripts/sched-lb-stat"
expect_pass "sched-lb-stat: a hook row" "^steal +41 +17 +17 +3 +stolen=0 tried=0$" env SLB_DEBUGFS="$st" $stat_sh "$root/scripts/sched-lb-stat"
expect_pass "sched-lb-stat: a hook without verdicts" "^sis_select +7 +- +- +- *$" env SLB_DEBUGFS="$st" $stat_sh "$root/scripts/sched-lb-stat"
expect_fail "sched-lb-stat: bad interval" "[-]i 0: not a whole number" env SLB_DEBUGFS="$st" $stat_sh "$root/scripts/sched-lb-stat" -i 0
rm -r "$st/sched_lb_rs"
expect_fail "sched-lb-stat: module not loaded" "sched_lb_rs is missing: the sched_lb_rs module is not loaded" \
	env SLB_DEBUGFS="$st" $stat_sh "$root/scripts/sched-lb-stat"
expect_fail "sched-lb-stat: no debugfs" "is not readable: mount debugfs" env SLB_DEBUGFS="$tmp/none" $stat_sh "$root/scripts/sched-lb-stat"

# make replay's guest side: scripts/guest/trace.awk turns a 6.12 trace
# (tests/data/trace-6.12.txt: every event it reads, a function tracer's
# line, a comm with a space, the three contexts, an exec's new name, a
# CPU above 7 printed "012", which busybox awk would read as octal) into
# the slb-trace lines of tests/data/trace-6.12.slb, under the guest's
# awk and Debian's.
for a in "busybox awk" mawk; do
	command -v ${a%% *} > /dev/null || continue
	expect_pass "trace.awk ($a): a 6.12 trace into slb-trace lines" "^same$" \
		bash -c "$a -f '$root/scripts/guest/trace.awk' '$root/tests/data/trace-6.12.txt' |
			diff - '$root/tests/data/trace-6.12.slb' && echo same"
done
# scripts/replay_extract.py: a console with one traced run among kernel
# lines gives one file whose header has the plan's experiment, the
# counters' deltas and the run's wall time, and the events in order.
rlog="$tmp/replay.console.log" rconf="$tmp/replay.conf"
echo "hb_steal flag STEAL /bin/hackbench -g 2 -l 80" > "$rconf"
{
	echo "SLB-BENCH-BEGIN hb_steal on 1"
	echo "SLB-BENCH-CTR differs_STEAL 5"
	echo "SLB-BENCH-CTR steal_stolen 100"
	echo "cpu0 1 2 3"
	echo "SLB-TRACE-BEGIN hb_steal on 1"
	echo "SLB-TRACE-META comm hackbench "
	echo "SLB-TRACE-META features STEAL NO_SIS_PROP"
	echo "SLB-TRACE-META lost 0"
	echo "SLB-TRACE-META wakee_flips 12"
	echo "SLB-TRACE 1000 0 T 5 hackbench"
	echo "[   12.3] random: crng init done"
	echo "SLB-TRACE 1000 0 S 0 R 5"
	echo "SLB-TRACE-END hb_steal on 1"
	echo "cpu0 4 5 6"
	echo "SLB-BENCH-CTR differs_STEAL 12"
	echo "SLB-BENCH-CTR steal_stolen 140"
	echo "SLB-BENCH-END hb_steal on 1 t0=10.50 t1=12.75 rc=0 out=Time: 2.2"
} > "$rlog"
expect_pass "replay_extract: one traced run" "hb_steal.on.r1.trace: 2 events" \
	python3 "$root/scripts/replay_extract.py" "$rlog" "$rconf" numa2 8 "$tmp/replay"
expect_pass "replay_extract: the header and events" "^same$" bash -c "diff - '$tmp/replay/hb_steal.on.r1.trace' <<'END' && echo same
# slb-trace 1
# topology numa2 cpus 8
# experiment hb_steal state on kind flag flag STEAL
# features STEAL NO_SIS_PROP
# comm hackbench
# ctr differs_STEAL 7
# ctr steal_stolen 40
# counters run+dump
# lost 0
# wakee_flips 12
# duration_ns 2250000000
1000 0 T 5 hackbench
1000 0 S 0 R 5
END"
# The order bench-runner.sh writes since the third recording of 2026-12-06: both blocks of
# counters before the trace, so they are the run's alone, and the
# header says so; the deltas are the same.
awk '/^SLB-TRACE-BEGIN/ { t = 1 } t && /^SLB-TRACE/ { held = held $0 "\n"; next }
	/^SLB-BENCH-END/ { printf "%s", held } { print }' "$rlog" > "$tmp/replay.run.log"
expect_pass "replay_extract: counters read before the dump" "hb_steal.on.r1.trace: 2 events" \
	python3 "$root/scripts/replay_extract.py" "$tmp/replay.run.log" "$rconf" numa2 8 "$tmp/replay-run"
expect_pass "replay_extract: ... are the run's alone" "^same$" bash -c \
	"diff <(sed 's/^# counters run+dump$/# counters run/' '$tmp/replay/hb_steal.on.r1.trace') \
		'$tmp/replay-run/hb_steal.on.r1.trace' && echo same"
# ... and the run's balance counters from its two /proc/schedstat dumps
# (both before the trace), summed over CPUs per level (named by the
# SLB-BENCH-DOMAIN lines) and idle type; none from the old order, whose
# second dump came after the trace's.
schedstat_dump() { # $1: each CPU's idle lb_count at MC; $2: cpu0's at NUMA
	echo "version 16"
	echo "timestamp 100"
	echo "cpu0 0 0 1 1 1 1 0 0 0"
	echo "domain0 0f 5 5 0 0 0 0 0 0 $1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0"
	echo "domain1 ff 0 0 0 0 0 0 0 0 $2 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0"
	echo "cpu1 0 0 1 1 1 1 0 0 0"
	echo "domain0 0f 0 0 0 0 0 0 0 0 $1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0"
	echo "domain1 ff 0 0 0 0 0 0 0 0 1 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0"
}
{
	echo "SLB-BENCH-DOMAIN domain0 MC"
	echo "SLB-BENCH-DOMAIN domain1 NUMA"
	echo "SLB-BENCH-BEGIN hb_steal on 1"
	echo "SLB-BENCH-CTR differs_STEAL 5"
	schedstat_dump 3 4
	schedstat_dump 10 9
	echo "SLB-BENCH-CTR differs_STEAL 12"
	grep '^SLB-TRACE' "$rlog"
	echo "SLB-BENCH-END hb_steal on 1 t0=10.50 t1=12.75 rc=0 out=Time: 2.2"
} > "$tmp/replay.ss.log"
expect_pass "replay_extract: the run's schedstat" "hb_steal.on.r1.trace: 2 events" \
	python3 "$root/scripts/replay_extract.py" "$tmp/replay.ss.log" "$rconf" numa2 8 "$tmp/replay-ss"
expect_pass "replay_extract: ... summed per level and idle type" "^same$" bash -c \
	"grep -E '^# schedstat lb_(count|balanced)_idle@' '$tmp/replay-ss/hb_steal.on.r1.trace' |
		diff - <(printf '%s\n' '# schedstat lb_balanced_idle@MC 0' '# schedstat lb_balanced_idle@NUMA 0' \
			'# schedstat lb_count_idle@MC 14' '# schedstat lb_count_idle@NUMA 5') && echo same"
# A run without the module (hook_overhead off) has no module counters,
# and its schedstat all the same.
grep -v '^SLB-BENCH-CTR' "$tmp/replay.ss.log" > "$tmp/replay.ssnomod.log"
expect_pass "replay_extract: a run without the module" "hb_steal.on.r1.trace: 2 events" \
	python3 "$root/scripts/replay_extract.py" "$tmp/replay.ssnomod.log" "$rconf" numa2 8 "$tmp/replay-ssnm"
expect_pass "replay_extract: ... has its schedstat" "^same$" bash -c \
	"diff <(grep '^# schedstat' '$tmp/replay-ss/hb_steal.on.r1.trace') \
		<(grep '^# schedstat' '$tmp/replay-ssnm/hb_steal.on.r1.trace') && echo same"
# A domain line a console message cut short: no schedstat for that run,
# rather than counts that are not its own.
sed '0,/^domain1 ff 0 0 0 0 0 0 0 0 9 1/s//domain1 ff 0 0 0 0 0[   12.3] clocksource: Long readout interval/' \
	"$tmp/replay.ss.log" > "$tmp/replay.ssbroken.log"
expect_pass "replay_extract: a broken schedstat line" "hb_steal.on.r1.trace: 2 events" \
	python3 "$root/scripts/replay_extract.py" "$tmp/replay.ssbroken.log" "$rconf" numa2 8 "$tmp/replay-ssb"
expect_pass "replay_extract: ... gives no schedstat" "^0$" \
	bash -c "grep -c '^# schedstat' '$tmp/replay-ssb/hb_steal.on.r1.trace' || true"
expect_pass "replay_extract: no schedstat from the old order" "^0$" \
	bash -c "grep -c '^# schedstat' '$tmp/replay/hb_steal.on.r1.trace' || true"
# The same run sent gzipped in base64, with CPU 1's buffer full: the
# trace ends where CPU 1's record does, and duration_ns is that window.
{
	echo "SLB-BENCH-BEGIN hb_steal off 1"
	echo "SLB-BENCH-CTR differs_STEAL 0"
	echo "cpu0 1 2 3"
	echo "SLB-TRACE-BEGIN hb_steal off 1"
	echo "SLB-TRACE-META comm hackbench"
	echo "SLB-TRACE-META lost 0"
	echo "SLB-TRACE-META dropped 1 40"
	printf '%s\n' "1000 0 T 5 hackbench" "1000 0 S 0 R 5" "1500 1 S 0 R 6" "2000 1 S 6 S 0" \
		"2500 0 S 5 R 0" "3000 0 S 0 R 5" | gzip -c | base64 -w 20 | sed 's/^/SLB-TRACE-GZ /'
	echo "SLB-TRACE-END hb_steal off 1"
	echo "cpu0 4 5 6"
	echo "SLB-BENCH-CTR differs_STEAL 0"
	echo "SLB-BENCH-END hb_steal off 1 t0=1.0 t1=3.0 rc=0 out="
} > "$tmp/replay.gz.log"
expect_pass "replay_extract: a gzipped run cut at a full buffer" "hb_steal.off.r1.trace: 4 events \\(the first 0 ms: buffers filled\\)" \
	python3 "$root/scripts/replay_extract.py" "$tmp/replay.gz.log" "$rconf" numa2 8 "$tmp/replay4"
expect_pass "replay_extract: the cut run's window" "^same$" bash -c "grep -A3 '^# lost' '$tmp/replay4/hb_steal.off.r1.trace' |
	diff - <(printf '%s\n' '# lost 0' '# dropped 40' '# run_ns 2000000000' '# duration_ns 1000') && echo same"
expect_pass "replay_extract: the cut run's events" "^same$" bash -c "grep -v '^#' '$tmp/replay4/hb_steal.off.r1.trace' |
	diff - <(printf '%s\n' '1000 0 T 5 hackbench' '1000 0 S 0 R 5' '1500 1 S 0 R 6' '2000 1 S 6 S 0') && echo same"
# A kernel message the console printed into a base64 line (seen on
# llc16: "clocksource: Long readout interval, ..." 15 characters into
# one): the line's start, the message, a newline, then the line's rest
# alone. The extract is the same run, event for event; so is one where
# the message came at a line's end.
awk 'done == 0 && /^SLB-TRACE-GZ / && NR > 9 { print substr($0, 1, 20) "clocksource: Long readout interval"; print substr($0, 21); done = 1; next } { print }' \
	"$tmp/replay.gz.log" > "$tmp/replay.mid.log"
awk 'done == 0 && /^SLB-TRACE-GZ / && NR > 9 { print $0 "clocksource: Long readout interval"; done = 1; next } { print }' \
	"$tmp/replay.gz.log" > "$tmp/replay.end.log"
for at in mid end; do
	expect_pass "replay_extract: a console message inside a base64 line ($at)" "hb_steal.off.r1.trace: 4 events" \
		python3 "$root/scripts/replay_extract.py" "$tmp/replay.$at.log" "$rconf" numa2 8 "$tmp/replay-$at"
	expect_pass "replay_extract: the mended run is the run ($at)" "^same$" bash -c \
		"diff '$tmp/replay4/hb_steal.off.r1.trace' '$tmp/replay-$at/hb_steal.off.r1.trace' && echo same"
done
# A message that broke a line whose rest is longer than a whole line:
# no way to mend it, and it says so.
awk 'done == 0 && /^SLB-TRACE-GZ / && NR > 9 { print substr($0, 1, 20) "clocksource: Long"; print "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"; done = 1; next } { print }' \
	"$tmp/replay.gz.log" > "$tmp/replay.unmendable.log"
expect_fail "replay_extract: a broken line it cannot mend" "where it cannot be mended" \
	python3 "$root/scripts/replay_extract.py" "$tmp/replay.unmendable.log" "$rconf" numa2 8 "$tmp/replay6"
sed 's/^SLB-TRACE-GZ .*/SLB-TRACE-GZ !!notbase64/' "$tmp/replay.gz.log" > "$tmp/replay.bad.log"
expect_fail "replay_extract: a payload that does not decode" "does not decode" \
	python3 "$root/scripts/replay_extract.py" "$tmp/replay.bad.log" "$rconf" numa2 8 "$tmp/replay5"
head -n 9 "$rlog" > "$tmp/replay.cut.log"
expect_fail "replay_extract: a trace cut short" "has no SLB-TRACE-END \\(guest cut short\\?\\)" \
	python3 "$root/scripts/replay_extract.py" "$tmp/replay.cut.log" "$rconf" numa2 8 "$tmp/replay2"
grep -v TRACE "$rlog" > "$tmp/replay.none.log"
expect_fail "replay_extract: no traced run" "no traced run" \
	python3 "$root/scripts/replay_extract.py" "$tmp/replay.none.log" "$rconf" numa2 8 "$tmp/replay3"
expect_fail "replay: an unknown topology" "unknown topology 'nope'" \
	env SLB_REPLAY_TOPOLOGIES=nope "$root/scripts/replay.sh"
expect_fail "replay: a bad trace buffer size" "trace_kb=0: need a whole number" \
	env SLB_REPLAY_TOPOLOGIES=smt2 SLB_REPLAY_TRACE_KB=0 "$root/scripts/replay.sh"
mkdir -p "$tmp/no-rerun/smt2"
expect_fail "replay: a rerun without traces" "SLB_REPLAY_RERUN=$tmp/no-rerun has no TOPOLOGY/\\*.trace" \
	env SLB_REPLAY_RERUN="$tmp/no-rerun" "$root/scripts/replay.sh"

echo "scripts: $pass passed, $fail failed"
[ $fail = 0 ]
