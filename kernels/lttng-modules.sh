#!/bin/sh
# lttng-modules.sh RELEASE LTTNG_SOURCE OUT [PROBE...] - build lttng-modules
# for Debian's kernel RELEASE (like 6.1.0-57-amd64), for the qemu backend's
# lttng: block (docs/experiment.md, "lttng"): the kernel's headers
# (linux-headers-RELEASE, linux-headers-*-common and the linux-kbuild
# package they depend on) are fetched with apt-get download and unpacked
# into a private folder, never installed; the modules are built against
# them and copied to OUT/lib/modules/RELEASE/extra with depmod's files
# (depmod -b OUT), so that the guest loads them by name with modprobe.
#
# Only what a session loads is built: the core (the tracer, whose syscall
# events need nothing more, the ring buffer and its clients, the clock,
# the state dump and its probe, and the kprobe, kretprobe and uprobe
# modules, whose symbols lttng-tracer links against: without them modpost
# fails) and the probe modules named (PROBE is lttng-probe-PROBE, like
# sched: the events of the variant, qemu_lttng.c), not the other fifty
# probes and the test module: a fifth of the whole build.
#
# The ring buffer is built with its event counting on
# (LTTNG_RING_BUFFER_COUNT_EVENTS): its "records written" per buffer is
# the runs' lttng_events.  A probe module that does not build against
# this kernel is left out (its error is in the log); the core modules
# must build.  JOBS (default: nproc) sets make -j.
set -eu

if [ $# -lt 3 ]; then
	echo "usage: $0 RELEASE LTTNG_SOURCE OUT [PROBE...]" >&2
	exit 2
fi
release=$1
src=$(cd "$2" && pwd)
mkdir -p "$(dirname "$3")"
out=$(cd "$(dirname "$3")" && pwd)/$(basename "$3")
shift 3
probes=statedump
for p in "$@"; do
	[ -f "$src/src/probes/lttng-probe-$p.c" ] ||
		{ echo "$0: no probe '$p' in $src (src/probes/lttng-probe-$p.c)" >&2; exit 2; }
	probes="$probes $p"
done
work=$(mktemp -d "${out}.build.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM
jobs=${JOBS:-$(nproc)}
start=$(date +%s)

cd "$work"
common=linux-headers-${release%-*}-common
kbuild=$(apt-cache depends "linux-headers-$release" 2>/dev/null |
	 sed -n 's/^ *Depends: \(linux-kbuild-[^ ]*\)$/\1/p' | head -n 1)
if [ -z "$kbuild" ]; then
	echo "$0: apt knows no linux-headers-$release (or it names no linux-kbuild package)" >&2
	exit 1
fi
apt-get download "linux-headers-$release" "$common" "$kbuild"
for deb in ./*.deb; do
	dpkg-deb -x "$deb" root
done
hdr=$work/root/usr/src/linux-headers-$release
[ -f "$hdr/Makefile" ] || { echo "$0: no $hdr/Makefile in linux-headers-$release" >&2; exit 1; }
# the headers' Makefile includes the common part at its installed path
sed -i "s|^include /usr/src/|include $work/root/usr/src/|" "$hdr/Makefile"

cp -r "$src" lttng
# the modules left out: kbuild reads a whole Kbuild file before it uses
# obj-m, so a last assignment filters what the lines above added
echo 'obj-m := $(filter-out tests/,$(obj-m))' >>lttng/src/Kbuild
echo "obj-m := \$(filter lttng-kprobes.o lttng-kretprobes.o lttng-uprobes.o $(for p in $probes; do printf 'lttng-probe-%s.o ' "$p"; done),\$(obj-m))" \
	>>lttng/src/probes/Kbuild
echo "$0: the core and the probes: $probes" >&2
# a probe that fails stops kbuild before modpost, even with -k: it is left
# out of src/probes/Kbuild and the build goes on (at most a few rounds)
round=0
until make -k -C lttng KERNELDIR="$hdr" KCPPFLAGS=-DLTTNG_RING_BUFFER_COUNT_EVENTS \
	   -j"$jobs" modules >make.out 2>&1; do
	cat make.out
	failed=$(sed -n 's|.*/src/probes/\(lttng-probe-[a-z0-9_-]*\)\.o\] Error.*|\1|p' make.out | sort -u)
	round=$((round + 1))
	if [ -z "$failed" ] || [ $round -gt 5 ]; then
		echo "$0: lttng-modules did not build against $release (the errors above)" >&2
		exit 1
	fi
	for p in $failed; do
		echo "$0: leaving out $p: it does not build against $release" >&2
		sed -i "/+= $p\.o/d" lttng/src/probes/Kbuild
	done
done
cat make.out
for m in lttng-lib-ring-buffer lttng-tracer lttng-statedump lttng-clock \
	 lttng-ring-buffer-client-discard lttng-ring-buffer-client-overwrite \
	 lttng-ring-buffer-metadata-client; do
	if [ -z "$(find lttng/src -name "$m.ko")" ]; then
		echo "$0: the core module $m.ko did not build against $release" >&2
		exit 1
	fi
done

tmp=$out.tmp.$$
rm -rf "$tmp"
mods=$tmp/lib/modules/$release/extra
mkdir -p "$mods"
(cd lttng/src && find . -name '*.ko') | while read -r ko; do
	mkdir -p "$mods/$(dirname "$ko")"
	cp "lttng/src/$ko" "$mods/$ko"
	# the initramfs carries them: without debug information, a tenth the size
	strip --strip-debug "$mods/$ko"
done
echo "$0: built: $(cd "$mods" && find . -name '*.ko' | sed 's|.*/||; s|\.ko$||' | sort | tr '\n' ' ')" >&2
# what depmod reads of the kernel's own modules: none here (the image's
# modules are not in the guest); without them libkmod cannot load its
# indexes, so lttng-sessiond could load nothing
for f in modules.order modules.builtin modules.builtin.modinfo; do
	: >"$tmp/lib/modules/$release/$f"
done
depmod -b "$tmp" "$release"
rm -rf "$out"
mv "$tmp" "$out"
echo "$0: $out built in $(( $(date +%s) - start )) s" >&2
