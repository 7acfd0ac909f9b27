#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Packs the test guest's initramfs: static busybox, scripts/guest/init, the
# module (and the builds of it in SLB_GUEST_MODULES), and the plan (which
# steps to run) and flag list it is told.
#   mkinitramfs.sh OUT.cpio "PLAN" "FLAGS"
set -euo pipefail
. "$(dirname "$0")/lib.sh"

out=$1 plan=$2 flags=$3
bb=/bin/busybox
applets=$("$bb" --list 2>/dev/null || true)
grep -qx insmod <<< "$applets" ||
	die "static busybox not found at $bb: run 'make setup' (package busybox-static)"
# SLB_MODULE: a build for another kernel flavour (scripts/stress.sh).
ko=${SLB_MODULE:-$SLB_ROOT/sched_lb_rs.ko}
[ -f "$ko" ] || die "$ko not built: run 'make module'"
need_tool cpio

root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root"/{bin,sbin,proc,sys,dev,tmp,slb}
cp "$bb" "$root/bin/busybox"
for a in $applets; do
	[ "$a" = busybox ] || ln -s busybox "$root/bin/$a"
done
install -m 0755 "$SLB_ROOT/scripts/guest/init" "$root/init"
install -m 0644 "$SLB_ROOT/scripts/guest/llc.awk" "$root/slb/llc.awk"
install -m 0644 "$SLB_ROOT/scripts/guest/trace.awk" "$root/slb/trace.awk"
install -m 0755 "$SLB_ROOT/scripts/sched-lb-stat" "$root/bin/sched-lb-stat"
# The benchmark runner the init sources, and slb-bench with its plan.
install -m 0644 "$SLB_ROOT/scripts/bench-runner.sh" "$root/slb/bench-runner.sh"
install -m 0644 "$SLB_ROOT/scripts/bench-plan.sh" "$root/slb/bench-plan.sh"
install -m 0755 "$SLB_ROOT/scripts/slb-bench" "$root/bin/slb-bench"
need_tool cc
for prog in sleeper coresched; do
	cc -O2 -Wall -Wextra -Werror -static -o "$root/bin/$prog" "$SLB_ROOT/scripts/guest/$prog.c" ||
		die "cannot build scripts/guest/$prog.c statically (needs libc6-dev: run 'make setup')"
done
# hackbench (rt-tests) with the shared libraries it links, so the guest
# can load the scheduler with a real workload while flags flip.
hb=$(command -v hackbench || true)
[ -n "$hb" ] || die "hackbench not found: run 'make setup' (package rt-tests)"
cp "$hb" "$root/bin/hackbench"
for lib in $(ldd "$hb" | grep -o '/[^ ]*'); do
	mkdir -p "$root$(dirname "$lib")"
	cp -L "$lib" "$root$lib"
done
cp "$ko" "$root/slb/sched_lb_rs.ko"
# Other builds of the module the plan loads (the hostile step's).
for extra in ${SLB_GUEST_MODULES:-}; do
	cp "$extra" "$root/slb/"
done
# Benchmarks (scripts/bench.sh): their programs and experiment list.
if [ -n "${SLB_BENCH_DIR:-}" ]; then
	cp -r "$SLB_BENCH_DIR" "$root/slb/bench"
fi
# Checksums the guest compares before each insmod (slb_insmod).
for m in "$root"/slb/*.ko "$root"/slb/bench/*.ko; do
	if [ -f "$m" ]; then md5sum < "$m" | cut -d' ' -f1 > "$m.md5"; fi
done
echo "$plan" > "$root/slb/plan"
# Sched domain levels each CPU must have: 2 for the test topology (SMT,
# MC, PKG survive as 3); fewer for layouts where levels degenerate.
echo "${SLB_MIN_DOMAINS:-2}" > "$root/slb/min_domains"
echo "$flags" > "$root/slb/flags"
# The module's hooks, from its hook table: the load step requires each
# one's counters and calls.
slb_hooks "$ko" > "$root/slb/hooks"
# The flags the shadow step puts in shadow and then live.
slb_judged_flags "$ko" > "$root/slb/judged_flags"
# The series' check sites, one line each, from the kernel source: the
# hostile step expects each to refuse an answer once.
case " $plan " in
*" hostile "*) slb_check_sites > "$root/slb/check_sites" ;;
esac
# The stress step's seed and size (scripts/stress.sh, scripts/test.sh).
echo "${SLB_STRESS:-1 4}" > "$root/slb/stress"
# Seconds between the step watchdog's reports (scripts/guest/init).
wd_s=${SLB_STEP_WATCHDOG_S:-600}
[[ "$wd_s" =~ ^[1-9][0-9]*$ ]] || die "SLB_STEP_WATCHDOG_S=$wd_s: expected a positive number of seconds"
echo "$wd_s" > "$root/slb/watchdog_s"
# The patching step's rounds (scripts/tcg-check.sh).
echo "${SLB_PATCH_ROUNDS:-20}" > "$root/slb/patching"
mkdir -p "$(dirname "$out")"
(cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc --quiet -R 0:0) > "$out"
