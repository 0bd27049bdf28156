#!/usr/bin/env bash
# Unpacks Mesa 25's software Vulkan driver (lavapipe) from bookworm-backports into DIR, for
# onnxruntime-node's native WebGPU EP (Dawn refuses Debian 12's Mesa 22.3), without installing it:
# the system's Vulkan, which Deno's own WebGPU uses, stays as it is. Writes DIR/lvp_icd.json with
# an absolute library_path. A process then runs the native EP on it when started with
#   VK_ICD_FILENAMES=DIR/lvp_icd.json LD_LIBRARY_PATH=DIR/usr/lib/x86_64-linux-gnu
# (the tests set these for their child processes when POLYRL_SOFTWARE_VULKAN=DIR).
# Needs apt-get with bookworm-backports among its sources (.ci/run adds it); amd64 only.
#
# Usage: .ci/software-vulkan.sh DIR
set -euo pipefail
dir="${1:?usage: .ci/software-vulkan.sh DIR}"
mkdir -p "$dir"
dir="$(cd "$dir" && pwd)"
if [ -s "$dir/lvp_icd.json" ]; then exit 0; fi
debs="$(mktemp -d /tmp/polyrl-vulkan-debs.XXXXXX)"
trap 'rm -rf "$debs"' EXIT
# lavapipe 25 needs libdrm 2.4.121 or newer (backports too); the Vulkan loader comes along for
# machines that have none installed. Its other libraries (libllvm15, libxcb*, ...) are bookworm's.
(cd "$debs" && apt-get download -qq \
  mesa-vulkan-drivers/bookworm-backports libdrm2/bookworm-backports \
  libdrm-amdgpu1/bookworm-backports libvulkan1 2>&1 | grep -v '^W: Download is performed unsandboxed' || true)
if ! ls "$debs"/mesa-vulkan-drivers_25.*.deb >/dev/null 2>&1; then
  echo "software-vulkan.sh: no Mesa 25 package downloaded; add bookworm-backports to apt's sources" \
    "(deb http://deb.debian.org/debian bookworm-backports main) and run apt-get update" >&2
  exit 1
fi
for f in "$debs"/*.deb; do dpkg -x "$f" "$dir"; done
lib="$dir/usr/lib/x86_64-linux-gnu"
missing="$(LD_LIBRARY_PATH="$lib" ldd "$lib/libvulkan_lvp.so" | grep 'not found' || true)"
if [ -n "$missing" ]; then
  echo "software-vulkan.sh: libvulkan_lvp.so lacks libraries (install them):" >&2
  echo "$missing" >&2
  exit 1
fi
version="$(sed -n 's/.*"api_version": *"\([^"]*\)".*/\1/p' "$dir/usr/share/vulkan/icd.d/lvp_icd.json")"
printf '{"file_format_version":"1.0.0","ICD":{"library_path":"%s","api_version":"%s"}}\n' \
  "$lib/libvulkan_lvp.so" "$version" >"$dir/lvp_icd.json"
