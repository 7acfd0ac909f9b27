#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Unpacks Debian's linux-source-6.12 into the ignored cache as a git tree,
# commits it as the baseline (tag sched-lb-base) and applies patches/ with
# `git am` in the order of patches/series. Re-running is cheap: the tree is
# re-patched only when the series changed, and the build tree is kept.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

tarball=/usr/src/$LINUX_SOURCE_PKG.tar.xz
[ -f "$tarball" ] || die "$tarball missing: run 'make setup' first"
need_tool git

stage "unpack kernel source"
if [ ! -d "$SLB_SRC/.git" ]; then
	rm -rf "$SLB_SRC.tmp"
	mkdir -p "$SLB_SRC.tmp"
	tar -xf "$tarball" -C "$SLB_SRC.tmp" --strip-components=1
	(
		cd "$SLB_SRC.tmp"
		git init -q
		git config user.name "sched-lb-rs"
		git config user.email "sched-lb-rs@localhost"
		# No background auto-gc after committing ~90k files: it would
		# hold HEAD.lock while the series is being applied.
		git config gc.auto 0
		git config gc.autoDetach false
		git config maintenance.auto false
		# Debian's tarball ignores everything at the top level ("/*").
		git add -A -f
		git commit -q -m "linux-source-6.12 $(dpkg-query -W -f='${Version}' "$LINUX_SOURCE_PKG")"
		git tag sched-lb-base
	)
	mv "$SLB_SRC.tmp" "$SLB_SRC"
else
	log "reusing $SLB_SRC"
	git -C "$SLB_SRC" config gc.auto 0
fi

stage "apply patch series"
series_id=$(cd "$SLB_ROOT/patches" && cat series $(grep -v '^#' series) | sha256sum | cut -c1-16)
stamp="$SLB_SRC/.git/sched-lb-series"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$series_id" ] &&
	git -C "$SLB_SRC" diff --quiet HEAD; then
	log "series $series_id already applied"
else
	git -C "$SLB_SRC" am --abort >/dev/null 2>&1 || true
	git -C "$SLB_SRC" reset -q --hard sched-lb-base
	git -C "$SLB_SRC" clean -q -fdx -e .git
	while read -r p; do
		case "$p" in ''|'#'*) continue ;; esac
		git -C "$SLB_SRC" am -q --keep-cr "$SLB_ROOT/patches/$p" ||
			die "git am failed on $p (tree left in $SLB_SRC for inspection)"
		log "applied $p"
	done < "$SLB_ROOT/patches/series"
	echo "$series_id" > "$stamp"
fi
stage_end
