#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Bisectability: applies the series one patch at a time to a scratch branch
# of the kernel tree and builds the kernel after each, in the same build
# tree (so each step is incremental). Leaves the tree at the full series.
# HOOKS=n builds kernel/sched/ after each patch with CONFIG_SCHED_LB_HOOKS=n
# instead (and without Rust and KUnit), in a build tree of its own, so a
# distribution that leaves the option off can bisect through the series.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

case "${HOOKS:-y}" in
y)
	out=$SLB_OUT target=all
	fragment() { grep -h '^CONFIG_' "$SLB_ROOT/kunit/.kunitconfig" "$SLB_ROOT/kunit/debug.config"; }
	;;
n)
	out=$SLB_CACHE/series-hooks-off target=kernel/sched/
	fragment() {
		slb_fragment_norust | sed 's/^CONFIG_SCHED_LB_HOOKS=y$/CONFIG_SCHED_LB_HOOKS=n/'
	}
	;;
*) die "HOOKS=$HOOKS: expected y or n" ;;
esac
mkdir -p "$out"

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
	fragment > "$out/.config"
	rm -f "$out/.sched-lb-frag"
	log_i="$SLB_LOGS/series-hooks-${HOOKS:-y}-$i.log"
	if ! { kmake O="$out" olddefconfig && kmake O="$out" $target; } > "$log_i" 2>&1; then
		tail -30 "$log_i" >&2
		git checkout -q --detach "$full"
		die "$target does not build after patch $i with SCHED_LB_HOOKS=${HOOKS:-y} ($(git log -1 --format=%s "$c"))"
	fi
	if [ "${HOOKS:-y}" = n ] && grep -q '^CONFIG_SCHED_LB_HOOKS=y' "$out/.config"; then
		git checkout -q --detach "$full"
		die "patch $i: Kconfig turned SCHED_LB_HOOKS on in a HOOKS=n build"
	fi
done
git checkout -q --detach "$full"
if [ "${HOOKS:-y}" = y ]; then
	stage "series rebuild at the full series"
	"$SLB_ROOT/scripts/build-kernel.sh"
fi
stage_end
log "each of the ${#commits[@]} patches builds on its own ($target, SCHED_LB_HOOKS=${HOOKS:-y})"
