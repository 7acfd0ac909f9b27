#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# scripts/checkpatch.pl --strict on every patch of the series. Fails on any
# error, and on any warning or check that is not listed, with its reason,
# in patches/checkpatch-accepted.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ -x "$SLB_SRC/scripts/checkpatch.pl" ] || die "no kernel tree at $SLB_SRC: run scripts/prepare-kernel.sh"
accepted="$SLB_ROOT/patches/checkpatch-accepted"
stage "checkpatch --strict"
bad=0 n=0
while read -r p; do
	case "$p" in ''|'#'*) continue ;; esac
	n=$((n + 1))
	# /usr/bin first: spdxcheck.py needs Debian's python3-ply, not a pyenv python.
	out=$(cd "$SLB_SRC" && PATH=/usr/bin:$PATH ./scripts/checkpatch.pl --strict --no-summary --terse \
		"$SLB_ROOT/patches/$p" 2>&1 | grep -E ': (ERROR|WARNING|CHECK):' || true)
	while IFS= read -r line; do
		[ -n "$line" ] || continue
		msg=${line#*: }
		if [ -f "$accepted" ] && grep -qF "$msg" "$accepted" && [[ $line != *ERROR:* ]]; then
			log "accepted: $line"
		else
			echo "$line" >&2
			bad=1
		fi
	done <<< "$out"
done < "$SLB_ROOT/patches/series"
stage_end
[ $bad = 0 ] || die "checkpatch --strict found problems (above)"
log "checkpatch --strict: $n patches, 0 errors, 0 unexplained warnings"
