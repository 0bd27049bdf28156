#!/usr/bin/env bash
# Builds .device/ (git-ignored), everything tests/device/h200.sh needs on a machine with no
# network, no Deno and no Vulkan loader, and prints its sizes:
#   deno.xz              the Deno binary of the pinned npm package (@deno/linux-x64-glibc)
#   node_modules.tar.xz  the node_modules the device steps import. Both onnxruntime packages
#                        do not fit the 64 MiB with Deno (30.7 MB) and the tracked tree (19 MB):
#                        measured 67.5 MB of 67.1. So the default carry is the native one:
#                        onnxruntime-node (the webgpu backend) cut to its linux-x64 binding and
#                        library (45 MB, 13 MB under xz), onnxruntime-web cut to the bundle its
#                        ./webgpu export names (imported at load, its WASM fetched only when a
#                        webgpu-web session starts, so left out). --web builds issue 20's carry
#                        instead: onnxruntime-web with its asyncify loader and WASM, no
#                        onnxruntime-node. h200.sh skips, saying why, the stages a carry lacks.
#   vulkan/*.deb         Debian's Vulkan loader and the GL vendor-neutral dispatch libraries
#                        (amd64; NVIDIA's Vulkan ICD is libGLX_nvidia, which links libGLdispatch),
#                        unpacked there with dpkg -x
# The tree that travels (tracked files + .device) must stay under the device tool's 64 MiB: in
# one call, or where it does not fit, in two on one warm machine (Deno and the Vulkan packages,
# unpacked by `h200.sh --unpack`; then node_modules and the stages), which it prints with their
# carry lists. Then it proves the set complete: a copy of the tracked tree plus the carried
# files alone, as the calls bring them, without network, runs `h200.sh --local` from them.
#
# Usage: tests/device/prepare.sh [--web] [--no-check]     (run from anywhere; needs npm and apt-get)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
DENO_VERSION="2.9.6" # keep in step with .ci/run and README.md
dest="$root/.device"
check=1
carry=native
for arg in "$@"; do
  case "$arg" in
    --no-check) check=0 ;;
    --web) carry=web ;;
    -h | --help)
      awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"
      exit 0
      ;;
    *)
      echo "prepare.sh: unknown argument $arg (expected --web, --no-check or --help)" >&2
      exit 2
      ;;
  esac
done
mkdir -p "$dest/vulkan"
work="$(mktemp -d /tmp/polyrl-prepare.XXXXXX)"
trap 'rm -rf "$work"' EXIT

# 1. Deno, from the npm package the README installs (its binary lives in the platform package).
#    xz's x86 filter and -9e in one thread: 28.8 MB where -6 -T2 gave 30.7 (a minute and a half,
#    once per Deno version).
packed="$DENO_VERSION xz --x86 -9e"
if [ "$(cat "$dest/deno.version" 2>/dev/null)" != "$packed" ] || [ ! -s "$dest/deno.xz" ]; then
  echo "deno: npm pack @deno/linux-x64-glibc@$DENO_VERSION"
  (cd "$work" && npm pack --silent "@deno/linux-x64-glibc@$DENO_VERSION" >/dev/null)
  tar -xzf "$work"/deno-linux-x64-glibc-*.tgz -C "$work" package/deno
  xz --x86 --lzma2=preset=9e -T1 -c "$work/package/deno" >"$dest/deno.xz.partial"
  mv "$dest/deno.xz.partial" "$dest/deno.xz"
  echo "$packed" >"$dest/deno.version"
fi

# 2. node_modules: the packages the device entry points import and everything they link to.
#    onnxruntime-web is cut to the bundle its ./webgpu export names (plus, for --web, the
#    asyncify loader and WASM that bundle loads), onnxruntime-node (native carry) to the
#    linux-x64 binaries its binding loads (step 4 proves that set complete: drop one and the bare
#    copy fails to load a model).
if [ ! -d node_modules/.deno ]; then
  echo "prepare.sh: node_modules/ is missing; run deno install --frozen first" >&2
  exit 1
fi
# The packages come from the module graphs of what h200.sh runs (deno info), so one the code
# starts to import is carried without a list to keep (leven was missed that way, 2026-12-07).
# onnx-bench.ts and tests/model/bench.ts are left out: their graphs, dynamic imports included,
# reach DuckDB and Playwright, which no stage loads; the proof in step 4 runs them.
entries=(tests/device/shapes.ts tests/device/figures.ts tests/bench/webgpu-bench.ts events/cli/command.ts)
mapfile -t roots < <(for e in "${entries[@]}"; do deno info --json "$e"; done |
  grep -o 'node_modules/\.deno/[^/]*/node_modules/\(@[^/]*/\)\?[^/"]*' | sed 's|.*/node_modules/||' |
  sort -u)
# The web carry has no onnxruntime-node (the native stages are skipped, saying so).
[ "$carry" = web ] && mapfile -t roots < <(printf '%s\n' "${roots[@]}" | grep -vx onnxruntime-node)
nm="$work/nm/node_modules"
mkdir -p "$nm/.deno"
declare -A seen=()
copy_package() { # $1: a .deno entry such as onnxruntime-web@1.30.0
  local entry="$1" link
  [ -n "${seen[$entry]:-}" ] && return
  seen[$entry]=1
  cp -a "node_modules/.deno/$entry" "$nm/.deno/"
  for link in "node_modules/.deno/$entry/node_modules"/* "node_modules/.deno/$entry/node_modules"/@*/*; do
    [ -L "$link" ] || continue
    local target
    target="$(readlink "$link")" # ../../<entry>/node_modules/<name>, one level deeper for @scope
    target="${target#../}"
    target="${target#../}"
    target="${target#../}"
    copy_package "${target%%/*}"
  done
}
for name in "${roots[@]}"; do
  link="$(readlink "node_modules/$name")" # .deno/<entry>/node_modules/<name>
  entry="${link#*.deno/}"
  copy_package "${entry%%/*}"
  mkdir -p "$(dirname "$nm/$name")"
  cp -a "node_modules/$name" "$nm/$name"
done
ortweb="$(ls -d "$nm"/.deno/onnxruntime-web@*/node_modules/onnxruntime-web)"
if [ "$carry" = web ]; then
  find "$ortweb/dist" -type f ! -name ort.webgpu.bundle.min.mjs \
    ! -name ort-wasm-simd-threaded.asyncify.mjs ! -name ort-wasm-simd-threaded.asyncify.wasm -delete
else
  find "$ortweb/dist" -type f ! -name ort.webgpu.bundle.min.mjs -delete
  ortnode="$(ls -d "$nm"/.deno/onnxruntime-node@*/node_modules/onnxruntime-node)"
  find "$ortnode/bin" -mindepth 3 -maxdepth 3 -type d ! -path '*/linux/x64' -exec rm -rf {} +
  rm -rf "$ortnode/script" "$ortnode/lib"
fi
rm -rf "$ortweb/docs" "$ortweb/lib"
find "$nm" -name '*.map' -delete
# The x86 filter for onnxruntime's library: 12.3 MB where -6 -T2 gave 13.6.
tar -C "$work/nm" -cf - node_modules | xz --x86 --lzma2=preset=9e -T1 >"$dest/node_modules.tar.xz"
echo "node_modules ($carry carry): ${!seen[*]}"

# 3. Debian's Vulkan loader for amd64 (the device image has the NVIDIA ICD but maybe no loader).
gl_packages=(libvulkan1 libglvnd0 libegl1 libgl1 libglx0 libopengl0 libgles2)
if [ "$(ls "$dest"/vulkan/*.deb 2>/dev/null | wc -l)" != "${#gl_packages[@]}" ]; then
  rm -f "$dest"/vulkan/*.deb
  o="-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=$work/lists -oAPT::Sandbox::User=root"
  mkdir -p "$work/lists/partial"
  # shellcheck disable=SC2086
  apt-get $o update -qq
  # shellcheck disable=SC2086
  (cd "$dest/vulkan" && apt-get $o download "${gl_packages[@]}" >/dev/null)
fi

echo "sizes (bytes):"
du -b "$dest/deno.xz" "$dest/node_modules.tar.xz" "$dest"/vulkan/*.deb
size() { du -cb "$@" | tail -1 | cut -f1; }
tracked=$(git ls-files -z | du -cb --files0-from=- | tail -1 | cut -f1)
limit=$((64 * 1024 * 1024))
# 95% of the limit, room for the tree to grow a little between this run and the device's.
fits() { [ $(($1 + tracked)) -le $((limit * 95 / 100)) ]; }
share() { echo "$(($1 + tracked)) of $limit ($((100 * ($1 + tracked) / limit))%)"; }
carried=$(size "$dest")
first=$(size "$dest/deno.xz" "$dest/vulkan")
second=$(size "$dest/node_modules.tar.xz")
echo "tracked tree: $tracked; with all of .device: $(share "$carried")"
if fits "$carried"; then
  split=0
  echo "carry: one call, carry=[\".device\"], command \"bash tests/device/h200.sh \$OUT\""
elif fits "$first" && fits "$second"; then
  # The tree grew past one call (the study's models, 2026-12-07: 27.8 MB of tracked files).
  split=1
  echo "carry: two calls on one warm machine, the second at once after the first:"
  echo "  1. carry=[\".device/deno.xz\", \".device/vulkan\"], command" \
    "\"bash tests/device/h200.sh --unpack\": $(share "$first")"
  echo "  2. carry=[\".device/node_modules.tar.xz\"], command" \
    "\"bash tests/device/h200.sh \$OUT\": $(share "$second")"
else
  echo "prepare.sh: even in two calls the carry passes 95% of the 64 MiB the device tool" \
    "carries; cut the carry" >&2
  exit 1
fi

# 4. The proof: a bare copy (tracked files + .device), no network, no node_modules of its own.
if [ "$check" = 1 ]; then
  copy="$work/copy"
  mkdir -p "$copy"
  git ls-files -z | xargs -0 cp --parents -t "$copy"
  cp -a "$dest" "$copy/.device"
  xz -dc "$dest/deno.xz" >"$work/check-deno" && chmod +x "$work/check-deno"
  bare() { (cd "$copy" && unshare -rn env -u DENO_DIR PATH=/usr/bin:/bin "$@"); }
  if [ "$split" = 1 ]; then
    # As the device gets them: the first call's files, then only the second's.
    echo "check: the first call, h200.sh --local --unpack --carried, with .device/deno.xz and vulkan/"
    rm "$copy/.device/node_modules.tar.xz"
    bare bash tests/device/h200.sh --local --unpack --carried || {
      echo "prepare.sh: the first call failed in the bare copy" >&2
      exit 1
    }
    rm -r "$copy/.device"
    mkdir "$copy/.device"
    cp "$dest/node_modules.tar.xz" "$copy/.device/"
  fi
  echo "check: h200.sh --local in a bare copy without network"
  bare bash tests/device/h200.sh --local --carried "$work/check-out" || {
    echo "prepare.sh: the bare copy failed; see $work/check-out/log.txt" >&2
    cat "$work/check-out/log.txt" >&2 || true
    exit 1
  }
  # --local skips `bench models` (minutes on a software adapter); its imports must resolve too.
  (cd "$copy" && unshare -rn env -u DENO_DIR PATH=/usr/bin:/bin DENO_DIR="$work/deno-dir" \
    "$work/check-deno" eval 'await import("./tests/model/bench.ts")') || {
    echo "prepare.sh: the bare copy cannot import tests/model/bench.ts" >&2
    exit 1
  }
  echo "check: passed"
fi
