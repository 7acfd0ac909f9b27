#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# splats.sh LOG [WHAT]: fails (exit 1) if the console log LOG holds a kernel
# splat, printing each; WHAT names the run in messages. scripts/boot.sh runs
# it on every guest log; tests/scripts.sh on made-up logs.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

log_file=$1 what=${2:-$1}
[ -r "$log_file" ] || die "splats: no log at $log_file"
bad=0
# BUG: covers KASAN and KCSAN reports, UBSAN: the sanitizer's own.
# One exception, reported but not failed: a KASAN report taken on the
# boot CPU inside start_kernel(), before rest_init(), so before any sched
# domain is built, any hook is reachable or the module exists. Stock
# 6.12 under QEMU gives one now and then ("wild-memory-access in
# do_raw_spin_lock" from handle_edge_irq() during identify_boot_cpu():
# identify_cpu() clears the LA57 bit that KASAN's address check reads under
# 5-level paging, with interrupts on; Documentation/testing.rst).
early=$(awk '/BUG: KASAN/ { b = 1; blk = ""; ln = NR }
	b { blk = blk "\n" $0 }
	b && /^==========/ { if (blk ~ / start_kernel\+/) print ln; b = 0 }' "$log_file" | paste -sd'|')
if [ -n "$early" ]; then
	warn "$what: early-boot KASAN report inside start_kernel() at log line(s) ${early//|/, } (not failed; see Documentation/testing.rst)"
fi
# KCSAN reports of known stock races (scripts/guest/kcsan-stock: each
# title there came in the control run too, without the module and with
# every flag at its default, or was read as stock code on stock data) are
# counted, not failed, unless the function that made one of the two
# accesses (the first frame under "read ..."/"write ...") is the series'
# (sched_lb*) or the module's. Series code further down a stack (STEAL
# calling detach_task(), which races in dequeue_entities()) does not make
# a stock race the series': those are counted apart, for review. In the
# control run itself (SLB_KCSAN_CONTROL=1) every KCSAN report is stock by
# construction. LOG.kcsan gets each title and its count.
kcsan=$(awk -v list="$SLB_ROOT/scripts/guest/kcsan-stock" -v control="${SLB_KCSAN_CONTROL:-0}" '
	BEGIN { while ((getline l < list) > 0) { sub(/[ \t]*#.*/, "", l); if (l != "") ok[l] = 1 } }
	/BUG: KCSAN: / { t = $0; sub(/.*BUG: KCSAN: /, "", t); gsub(/\+0x[0-9a-f]+\/0x[0-9a-f]+/, "", t)
		b = 1; ours = 0; via = 0; top = 0; ln = NR; next }
	b && /^(read|write|race at)/ { top = 1; next }
	b && /^ [^ ]/ { if ($0 ~ /sched_lb/) { if (top) ours = 1; else via = 1 } top = 0; next }
	b && /^==========/ { if ((control == 1 || (t in ok)) && !ours) print ln, via; b = 0 }' "$log_file")
known=$(awk '{ print $1 }' <<< "$kcsan" | paste -sd'|')
grep 'BUG: KCSAN: ' "$log_file" | sed 's/.*BUG: KCSAN: //; s/+0x[0-9a-f]*\/0x[0-9a-f]*//g' | sort | uniq -c | sort -rn > "$log_file.kcsan" || true
if [ -n "$known" ]; then
	why="known stock races (not failed; scripts/guest/kcsan-stock)"
	[ "${SLB_KCSAN_CONTROL:-0}" != 1 ] || why="the control run's, stock by construction (not failed)"
	warn "$what: $(echo "$known" | tr '|' '\n' | wc -l) KCSAN reports of $why, $(awk '$2 == 1' <<< "$kcsan" | wc -l) of them with series code further down a stack:"
	for l in ${known//|/ }; do sed -n "${l}p" "$log_file"; done | sed 's/+0x[0-9a-f]*\/0x[0-9a-f]*//g' | sort | uniq -c >&2
fi
skip="${early:-0}${known:+|$known}"
if grep -nE 'BUG:|WARNING:|UBSAN:|Oops|general protection fault|INFO: possible|INFO: task .* blocked|possible recursive locking|circular locking dependency|suspicious RCU usage|inconsistent lock state|Kernel panic' "$log_file" |
	grep -vE "^(${skip}):" |
	# make replay's gzipped traces, in base64, can spell "Oops" by chance.
	grep -vE '^[0-9]+:SLB-TRACE-GZ [A-Za-z0-9+/=]*$' >&2; then
	warn "$what: kernel splat in the console log (above)"
	bad=1
fi
exit $bad
