#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Bisectability: applies the series one patch at a time to a scratch branch
# of the kernel tree and builds the kernel after each, in the same build
# tree (so each step is incremental). Leaves the tree at the full series.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

"$SLB_ROOT/scripts/prepare-kernel.sh"
cd "$SLB_SRC"
full=$(git rev-parse HEAD)
mapfile -t commits < <(git rev-list --reverse sched-lb-base..HEAD)
i=0
for c in "${commits[@]}"; do
	i=$((i + 1))
	git checkout -q --detach "$c"
	stage "series step $i/${#commits[@]}"
	log "$(git log -1 --format=%s)"
	# Re-merge the fragment at each step: an option that a later patch
	# introduces is dropped by olddefconfig here and is back at that step.
	grep '^CONFIG_' "$SLB_ROOT/kunit/.kunitconfig" > "$SLB_OUT/.config"
	rm -f "$SLB_OUT/.sched-lb-frag"
	if ! { kmake O="$SLB_OUT" olddefconfig && kmake O="$SLB_OUT" all; } > "$SLB_LOGS/series-$i.log" 2>&1; then
		tail -30 "$SLB_LOGS/series-$i.log" >&2
		git checkout -q --detach "$full"
		die "the kernel does not build after patch $i ($(git log -1 --format=%s "$c"))"
	fi
done
git checkout -q --detach "$full"
stage "series rebuild at the full series"
"$SLB_ROOT/scripts/build-kernel.sh"
stage_end
log "each of the ${#commits[@]} patches builds on its own"
