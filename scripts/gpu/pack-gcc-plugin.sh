#!/usr/bin/env bash
# Packs Debian's g++ 12 with its plugin headers into gpu-pack/gcc-plugin.tar.xz, for measuring
# check mode's compiler pass on the GPU machine's CPU: that machine's g++ (13.3, and a 12.4 beside
# it) has no plugin headers and it reaches no package registry, so there check mode calls
# ThreadSanitizer's hooks. g++ finds cc1plus, its headers and the plugin folder relative to its
# own path, so the unpacked tree works from any folder. Then, through the device tool:
#   run(command="tar -xJf gpu-pack/gpu-bin.tar.xz && mkdir -p /tmp/g &&
#                tar -C /tmp/g -xJf gpu-pack/gcc-plugin.tar.xz &&
#                CXX=/tmp/g/root/usr/bin/g++-12 bash gpu-bin/extra-emu-bench.sh", carry=["gpu-pack"])
# (~29 MB; with prepare.sh's pack it stays under the device tool's 64 MiB.)
set -euo pipefail
cd "$(dirname "$0")/../.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/debs" "$work/root" "$work/extra"
( cd "$work/debs" && apt-get download gcc-12 g++-12 cpp-12 libstdc++-12-dev libgcc-12-dev gcc-12-plugin-dev \
    libtsan2 libgmp-dev libmpc-dev libmpfr-dev )
for deb in "$work"/debs/*.deb; do
  case $(basename "$deb") in
    libgmp-dev*|libmpc-dev*|libmpfr-dev*) dpkg -x "$deb" "$work/extra" ;;
    *) dpkg -x "$deb" "$work/root" ;;
  esac
done
gcc_dir=$work/root/usr/lib/gcc/x86_64-linux-gnu/12
# The plugin headers include gmp.h, mpfr.h and mpc.h, which the -dev packages put in /usr/include.
cp "$work"/extra/usr/include/x86_64-linux-gnu/gmp.h "$work"/extra/usr/include/{mpfr.h,mpc.h} "$gcc_dir/plugin/include/"
# What the emulator never runs: LTO, gcov, the address sanitizer, the manuals.
rm -rf "$work"/root/usr/share/{doc,man,info} "$work"/root/usr/bin/*{lto-dump,gcov}* "$gcc_dir/lto1" "$gcc_dir"/libasan*
mkdir -p gpu-pack
tar -C "$work" -cf - root | xz -T0 -6 > gpu-pack/gcc-plugin.tar.xz
ls -la gpu-pack/gcc-plugin.tar.xz
