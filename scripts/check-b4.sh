#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make check-b4: the checks kernel developers' b4 runs before sending a
# series ("b4 prep --check": checkpatch on every commit, as b4 calls it),
# on a scratch branch of the patched tree enrolled with "b4 prep -e".
# Works offline. b4 and what the kernel's spdxcheck.py needs (ply,
# GitPython) come from PyPI. Fails on any error; warnings are printed
# (the accepted ones are in patches/checkpatch-accepted).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

"$SLB_ROOT/scripts/prepare-kernel.sh" >/dev/null
if ! command -v b4 >/dev/null 2>&1; then
	log "installing b4 from PyPI"
	python3 -m pip install -q b4 ply GitPython || die "cannot install b4 (pip install b4 ply GitPython)"
fi
python3 -c 'import ply, git' 2>/dev/null || python3 -m pip install -q ply GitPython ||
	die "the kernel's spdxcheck.py needs ply and GitPython (pip install ply GitPython)"
stage "b4 prep --check"
wt="$SLB_CACHE/b4-check"
git -C "$SLB_SRC" worktree remove --force "$wt" 2>/dev/null || true
git -C "$SLB_SRC" branch -D b4-check >/dev/null 2>&1 || true
git -C "$SLB_SRC" worktree add -q -b b4-check "$wt" HEAD
out=$(cd "$wt" && b4 prep -e sched-lb-base >/dev/null 2>&1 && b4 prep --check 2>&1 | sed 's/\x1b\[[0-9;]*m//g') ||
	die "b4 prep failed: $out"
git -C "$SLB_SRC" worktree remove --force "$wt"
git -C "$SLB_SRC" branch -D b4-check >/dev/null
stage_end
echo "$out"
summary=$(tail -1 <<< "$out")
[[ "$summary" =~ Error:\ 0$ ]] || die "b4 prep --check: $summary"
log "b4 prep --check: $summary"
