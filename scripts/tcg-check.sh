#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make tcg-check: is a QEMU's multi-threaded TCG safe for the test guest,
# and what does it buy? Boots the test kernel REPS times with each QEMU of
# SLB_TCG_QEMUS under each TCG mode of SLB_TCG_MODES, interleaved (one boot
# of each in turn, so that host load falls on all alike), on the guest
# step "patching": SLB_PATCH_ROUNDS rounds of module load, every flag
# flipped and back, and unload, under load, each a batch of text_poke_bp()
# on code that busy vCPUs execute. Counts the boots that failed, those
# with "Oops: int3" (the multi-threaded TCG flake of QEMU 7.2,
# Documentation/testing.rst), and each mode's median step time.
#
#   SLB_TCG_QEMUS  QEMU binaries (default: qemu-system-x86_64 from PATH)
#   SLB_TCG_MODES  TCG thread modes (default: multi)
#   REPS           boots of each (default 10)
#   SLB_PATCH_ROUNDS  rounds per boot (default 20)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

qemus=${SLB_TCG_QEMUS:-qemu-system-x86_64}
modes=${SLB_TCG_MODES:-multi}
reps=${REPS:-10}
[[ "$reps" =~ ^[1-9][0-9]*$ ]] || die "REPS=$reps: expected a positive integer"
[[ "${SLB_PATCH_ROUNDS:-20}" =~ ^[1-9][0-9]*$ ]] ||
	die "SLB_PATCH_ROUNDS=$SLB_PATCH_ROUNDS: expected a positive integer"
for m in $modes; do
	case $m in single | multi) ;; *) die "SLB_TCG_MODES: '$m' is neither single nor multi" ;; esac
done
# Each QEMU's version, once: the table's rows are keyed by it.
vers=()
for q in $qemus; do
	need_tool "$q"
	vers+=("$("$q" --version | sed -n '1s/.*version \([^ ]*\).*/\1/p')")
done

"$SLB_ROOT/scripts/prepare-kernel.sh"
"$SLB_ROOT/scripts/build-kernel.sh"
"$SLB_ROOT/scripts/build-module.sh"
stage "no-KUnit module build"
module_variant "$SLB_CACHE/guest-modules" nokunit SLB_KUNIT=n
stage_end

out=$SLB_CACHE/tcg-check
mkdir -p "$out"
: > "$out/boots"
for r in $(seq "$reps"); do
	qi=0
	for q in $qemus; do
		qi=$((qi + 1))
		for m in $modes; do
			name=tcg-$qi-$m-$r
			ver=${vers[qi - 1]}
			rc=0
			SLB_QEMU=$q SLB_TCG_THREAD=$m SLB_GUEST_MODULES="$SLB_CACHE/guest-modules/nokunit.ko" \
				SLB_BOOT_TIMEOUT=${SLB_BOOT_TIMEOUT:-1200} \
				"$SLB_ROOT/scripts/boot.sh" "$name" "patching" > "$out/$name.txt" 2>&1 || rc=$?
			con=$SLB_LOGS/$name.console.log
			int3=$(grep -c 'Oops: int3' "$con" 2>/dev/null || true)
			secs=$(sed -n 's/^SLB: step patching took \([0-9]*\) s$/\1/p' "$con" 2>/dev/null | tail -1)
			printf '%s %s %s %s %s %s\n' "$qi:$ver" "$m" "$r" "$rc" "${int3:-0}" "${secs:--}" >> "$out/boots"
			log "boot $r: QEMU $ver, $m TCG: exit $rc, int3 oopses ${int3:-0}, patching step ${secs:--} s"
			[ "$rc" = 0 ] || { tail -5 "$out/$name.txt" >&2; cp "$con" "$out/$name.console.log" 2>/dev/null || true; }
		done
	done
done

echo
python3 - "$out/boots" <<'PY'
import collections, statistics, sys
rows = collections.defaultdict(list)
for line in open(sys.argv[1]):
    qemu, mode, _rep, rc, int3, secs = line.split()
    rows[qemu, mode].append((rc != "0", int(int3) > 0, secs))
print("QEMU  TCG  boots  failed  with int3  median step s")
for (qemu, mode), boots in sorted(rows.items()):
    times = [int(s) for _, _, s in boots if s != "-"]
    median = f"{statistics.median(times):g}" if times else "-"
    print(qemu, mode, len(boots), sum(f for f, _, _ in boots), sum(o for _, o, _ in boots), median, sep="  ")
PY
echo "(every boot: $out/boots; failed boots' logs beside it)"
