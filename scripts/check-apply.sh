#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make check-apply [VERSIONS="..."]: git am the series onto Debian's
# linux-source-6.12 of each version given, by default the pinned one
# (kernel.version) and the oldest the archive serves (apt-cache madison),
# so a user on an older 6.12 point release knows whether it applies. Each
# source package is downloaded (apt-get download, into .cache/debs) and
# only the files the series touches are unpacked, so a version takes
# seconds after its download. Applying is checked; building is what make
# check-series does on the pinned tree.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

for t in apt-get apt-cache dpkg-deb git tar; do need_tool "$t"; done
pkg=$LINUX_SOURCE_PKG
all=$(apt-cache madison "$pkg" | awk -F'|' '{ gsub(/ /, "", $2); print $2 }' | sort -uV)
[ -n "$all" ] || die "apt-cache knows no $pkg: run 'apt-get update' (make setup)"
oldest=$(head -1 <<< "$all")
versions=${VERSIONS:-"$LINUX_SOURCE_VERSION $oldest"}
for v in $versions; do
	grep -qxF "$v" <<< "$all" || die "VERSIONS: $pkg $v is not in the archive (it serves: $(tr '\n' ' ' <<< "$all"))"
done

# The files the series touches, as the tarball names them.
mapfile -t files < <(grep -v '^#' "$SLB_ROOT/patches/series" | sed "s|^|$SLB_ROOT/patches/|" |
	xargs grep -h '^diff --git a/' | awk '{ sub(/^a\//, "", $3); print $3 }' | sort -u)
debs="$SLB_CACHE/debs"
mkdir -p "$debs"
summary=""
for v in $versions; do
	stage "git am onto $pkg $v"
	deb=$(ls "$debs/${pkg}_${v//:/%3a}_"*.deb 2>/dev/null | head -1 || true)
	if [ -z "$deb" ]; then
		(cd "$debs" && apt-get download -q -o APT::Sandbox::User=root "$pkg=$v" >/dev/null) ||
			die "cannot download $pkg=$v (network or archive)"
		deb=$(ls "$debs/${pkg}_${v//:/%3a}_"*.deb | head -1)
	fi
	tree="$SLB_CACHE/apply/$v"
	rm -rf "$tree"
	mkdir -p "$tree"
	# The .deb holds usr/src/linux-source-6.12.tar.xz; only the touched
	# files (those that exist in this version) come out of it.
	dpkg-deb --fsys-tarfile "$deb" | tar -xO "./usr/src/$pkg.tar.xz" |
		tar -xJ -C "$tree" --strip-components=1 --wildcards \
			$(printf "$pkg/%s " "${files[@]}") 2>/dev/null || true
	(
		cd "$tree"
		git init -q
		git config user.name sched-lb-rs
		git config user.email sched-lb-rs@localhost
		git add -A -f
		git commit -q -m "$pkg $v (the files the series touches)"
	)
	n=0
	while read -r p; do
		case "$p" in '' | '#'*) continue ;; esac
		if ! git -C "$tree" am -q --keep-cr "$SLB_ROOT/patches/$p" >"$tree.am.log" 2>&1; then
			cat "$tree.am.log" >&2
			die "$pkg $v: git am failed on $p (tree left in $tree)"
		fi
		n=$((n + 1))
	done < "$SLB_ROOT/patches/series"
	log "$pkg $v: all $n patches apply with git am"
	summary="$summary$pkg $v: $n patches apply"$'\n'
done
stage_end
printf '%s' "$summary"
