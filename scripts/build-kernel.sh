#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Builds the patched kernel of flavour $SLB_FLAVOR (scripts/lib.sh) out of
# tree (O=$SLB_OUT) with LLVM=1 and the flavour's config fragments
# ($SLB_KCONFIG). The fragments are checked after olddefconfig: an option
# Kconfig silently dropped is an error here, not a mystery in the guest.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

for t in clang ld.lld rustc bindgen make; do need_tool "$t"; done
[ -d "$SLB_SRC/.git" ] || die "no kernel tree in $SLB_SRC: run scripts/prepare-kernel.sh"
mkdir -p "$SLB_OUT" "$SLB_LOGS"
frags=()
for f in $SLB_KCONFIG; do
	[ -f "$SLB_ROOT/$f" ] || die "config fragment $f is missing"
	frags+=("$SLB_ROOT/$f")
done

stage "kernel config"
cd "$SLB_SRC"
kmake O="$SLB_OUT" rustavailable >/dev/null ||
	die "rustc/bindgen/libclang are not usable for this tree ('make LLVM=1 rustavailable' failed)"
want=$(cat "${frags[@]}" | grep '^CONFIG_' | sort)
dup=$(sed 's/=.*//' <<< "$want" | uniq -d)
[ -z "$dup" ] || die "config fragments ($SLB_KCONFIG) set $dup twice"
# SLB_BASE_CONFIG (make deb DEB_CONFIG=): a distribution's config under
# the fragment, which then wins where the two differ.
stamp=$want
if [ -n "${SLB_BASE_CONFIG:-}" ]; then
	[ -r "$SLB_BASE_CONFIG" ] || die "SLB_BASE_CONFIG=$SLB_BASE_CONFIG: no such readable file"
	stamp="$want
base $(md5sum < "$SLB_BASE_CONFIG")"
fi
if [ ! -f "$SLB_OUT/.config" ] || [ "$stamp" != "$(cat "$SLB_OUT/.sched-lb-frag" 2>/dev/null)" ]; then
	{ [ -z "${SLB_BASE_CONFIG:-}" ] || cat "$SLB_BASE_CONFIG"; echo "$want"; } > "$SLB_OUT/.config"
	echo "$stamp" > "$SLB_OUT/.sched-lb-frag"
fi
kmake O="$SLB_OUT" olddefconfig
missing=0
while read -r line; do
	case "$line" in
	*=n) grep -q "^${line%=n}=" "$SLB_OUT/.config" && { warn "config fragment line not honoured: $line"; missing=1; } ;;
	*) grep -qxF "$line" "$SLB_OUT/.config" || { warn "config fragment line not honoured: $line"; missing=1; } ;;
	esac
done <<< "$want"
[ $missing = 0 ] || die "$SLB_KCONFIG ask for options Kconfig would not set (see above)"

stage "kernel build"
log "building the $SLB_FLAVOR kernel $(kmake -C "$SLB_SRC" O="$SLB_OUT" kernelrelease 2>/dev/null) (log: $SLB_LOGS/kernel-build.log)"
# shellcheck disable=SC2086 # SLB_KMAKE_FLAGS: words, by design
if ! kmake O="$SLB_OUT" $SLB_KMAKE_FLAGS all > "$SLB_LOGS/kernel-build.log" 2>&1; then
	tail -40 "$SLB_LOGS/kernel-build.log" >&2
	die "kernel build failed; full log in $SLB_LOGS/kernel-build.log"
fi
stage_end
log "kernel: $SLB_OUT/arch/x86/boot/bzImage"
