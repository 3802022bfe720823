#!/bin/sh
# build.sh SOURCE_TREE FRAGMENT OUT - build a guest kernel for perturb's qemu
# backend: tinyconfig + kernels/configs/base.config + FRAGMENT, merged with
# the kernel's own scripts/kconfig/merge_config.sh, then bzImage, copied to
# OUT (and OUT.config, the resolved .config).
#
# Reproducible: the build happens in a fresh output folder next to OUT with
# a fixed timestamp, user, host and version, so the same tree and fragment
# give the same image.  SOURCE_TREE is any kernel source (Debian's
# linux-source-6.1 package: tar xf /usr/src/linux-source-6.1.tar.xz).
# JOBS (default: nproc) sets make -j.  Needs gcc, make, flex, bison, bc,
# libelf-dev, libssl-dev.
#
#   kernels/build.sh /usr/src/linux-source-6.1 kernels/configs/tracing.config \
#           ~/.cache/perturb/kernels/tracing.bzImage
set -eu

if [ $# -ne 3 ]; then
	echo "usage: $0 SOURCE_TREE FRAGMENT OUT" >&2
	exit 2
fi
src=$(cd "$1" && pwd)
frag=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
here=$(cd "$(dirname "$0")" && pwd)
base=$here/configs/base.config

[ -f "$src/Makefile" ] || { echo "$0: '$src' is not a kernel source tree" >&2; exit 2; }
[ -f "$frag" ] || { echo "$0: no fragment '$2'" >&2; exit 2; }

# absolute: the kernel's make runs in the source tree (make -C)
mkdir -p "$(dirname "$3")"
out=$(cd "$(dirname "$3")" && pwd)/$(basename "$3")
obj=$(mktemp -d "${out}.build.XXXXXX")
trap 'rm -rf "$obj"' EXIT INT TERM

export KBUILD_BUILD_TIMESTAMP='Thu Jan  1 00:00:00 UTC 1970'
export KBUILD_BUILD_USER=perturb
export KBUILD_BUILD_HOST=perturb
export KBUILD_BUILD_VERSION=1
export LOCALVERSION=-perturb-$(basename "$frag" .config)
export SOURCE_DATE_EPOCH=0
jobs=${JOBS:-$(nproc)}

start=$(date +%s)
make -s -C "$src" O="$obj" ARCH=x86_64 tinyconfig
"$src/scripts/kconfig/merge_config.sh" -m -O "$obj" "$obj/.config" "$base" "$frag" >/dev/null
make -s -C "$src" O="$obj" ARCH=x86_64 olddefconfig
# warn about options of the fragment that olddefconfig dropped (a missing
# dependency): the image is built anyway, its .config is kept next to it
grep -E '^(CONFIG_[A-Z0-9_]+=.*|# CONFIG_[A-Z0-9_]+ is not set)' "$frag" | while read -r line; do
	case $line in
	"# "*) opt=${line#\# }; opt=${opt%% *}
	       if grep -q "^$opt=y" "$obj/.config"; then echo "warning: $opt is still set" >&2; fi ;;
	*)     grep -qx "$line" "$obj/.config" || echo "warning: $line did not survive olddefconfig" >&2 ;;
	esac
done
make -s -C "$src" O="$obj" ARCH=x86_64 -j"$jobs" bzImage
cp "$obj/arch/x86/boot/bzImage" "$out"
cp "$obj/.config" "$out.config"
echo "$0: $out built in $(( $(date +%s) - start )) s" >&2
