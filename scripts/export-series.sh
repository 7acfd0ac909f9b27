#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Regenerates patches/ from a kernel tree whose commits since the baseline
# tag (sched-lb-base) are the series: git format-patch, the series file,
# and the cover letter filled from patches/cover-letter.in. The series is
# posted as [RFC PATCH]: it is a research tool, not a merge proposal.
#   export-series.sh [TREE]      (default: the project's kernel tree)
# To change a patch: edit and commit (or rebase) in the tree, then run this.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

tree=${1:-$SLB_SRC}
git -C "$tree" rev-parse -q --verify sched-lb-base >/dev/null ||
	die "$tree has no sched-lb-base tag: is it a tree made by prepare-kernel.sh?"
n=$(git -C "$tree" rev-list --count sched-lb-base..HEAD)
[ "$n" -gt 0 ] || die "$tree has no commits on top of sched-lb-base"

rm -f "$SLB_ROOT"/patches/[0-9][0-9][0-9][0-9]-*.patch
git -C "$tree" format-patch -q --zero-commit --cover-letter --no-signature --subject-prefix="RFC PATCH" -o "$SLB_ROOT/patches" sched-lb-base..HEAD
{
	echo "# Patch series for Debian linux-source-6.12, applied in this order with git am."
	echo "# 0000-cover-letter.patch is the cover letter and is not applied."
	(cd "$SLB_ROOT/patches" && ls [0-9][0-9][0-9][0-9]-*.patch | grep -v '^0000-')
} > "$SLB_ROOT/patches/series"
# The results section comes from the bench run Documentation/results.rst
# reports, never typed in.
results=$(python3 "$SLB_ROOT/scripts/cover_results.py" "$SLB_ROOT/Documentation/results/bench.json") ||
	die "scripts/cover_results.py could not summarise Documentation/results/bench.json"
RESULTS=$results python3 - "$SLB_ROOT/patches/0000-cover-letter.patch" "$SLB_ROOT/patches/cover-letter.in" <<'PY'
import os, sys
cover, tmpl = sys.argv[1], sys.argv[2]
lines = open(tmpl).read().splitlines()
subject = lines[0].removeprefix('SUBJECT: ')
blurb = '\n'.join(lines[1:]).strip('\n')
if blurb.count('@RESULTS@') != 1:
    sys.exit(f"{tmpl}: needs exactly one @RESULTS@ line")
blurb = blurb.replace('@RESULTS@', os.environ['RESULTS'])
s = open(cover).read()
s = s.replace('*** SUBJECT HERE ***', subject).replace('*** BLURB HERE ***', blurb)
open(cover, 'w').write(s)
PY
log "exported $n patches to patches/"
