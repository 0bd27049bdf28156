#!/usr/bin/env bash
# The prepared GPU run (issue 20): on a machine with a GPU, no network, no Deno and no npm, from
# the working tree plus the carried .device/ folder (tests/device/prepare.sh builds it), measure
#   - the WebGPU adapter (vendor, architecture, fallback flag, limits, shader-f16);
#   - `deno task bench onnx` and `bench models` on webgpu;
#   - the real-size shapes of tests/device/shapes.json (Qwen2.5-0.5B and 1.5B): LoRA r 16 train
#     step at 8x512 and 32x512 (in micro-batches whose logits fit one WebGPU storage binding:
#     8 x 512 x 151936 float32 is 2.5 GB), generation of 64 sequences x 256 new tokens
#     with the KV cache, webgpu float32 and, where the adapter has shader-f16, a float16 base;
#   - the same shapes with PyTorch + PEFT on the same GPU (eager, float32 and bfloat16);
# and write every figure to OUTDIR/figures.json (the ratios ours / PyTorch included) and a log
# to OUTDIR/log.txt. Every stage has its own timeout inside one overall deadline (7.5 minutes),
# so a slow stage cannot eat the others' time; figures are written as they are measured, so a
# stage cut short keeps what it finished. Peak GPU memory per figure comes from nvidia-smi,
# polled every 0.2 s, over the figure's window (PyTorch's own peak is reported beside it).
#
# --local runs the same steps here on Mesa's software adapter (lavapipe) at the `tiny` shape, in
# about a minute (tests/device/h200_test.ts runs it in CI); the native stages run on Mesa 25's
# lavapipe from $POLYRL_SOFTWARE_VULKAN (.ci/software-vulkan.sh) and are skipped, saying so,
# without it. --cpu measures the real shapes on the
# cpu backend and PyTorch on the CPU at a batch a 2-core machine finishes in minutes (train step
# 1x128; generation 4x32 new tokens for 0.5B, 2x16 for 1.5B), 2 threads each. --carried uses
# the carried Deno and node_modules even here (prepare.sh's check of the carry).
#
# Two WebGPU paths are measured: `native-*` stages on onnxruntime-node's native WebGPU EP
# (--backend webgpu, issue 32), the others on onnxruntime-web's through Deno (webgpu-web, issue
# 20). bench-webgpu compares the two per train step, and native generation with every fused op
# against RMSNorm and RoPE alone (deno task bench webgpu).
#
# --no-peer leaves the PyTorch stages out (a rerun after the peer's figures came back).
# --stages=A,B,... runs only the named device stages, in the default order: native-0.5b-float32,
# native-0.5b-check, native-0.5b-profile, native-0.5b-fused, native-1.5b-float32, native-0.5b-float16,
# native-1.5b-float16,
# bench-webgpu, 0.5b-float32, 0.5b-profile, bench-onnx, 1.5b-float32, 0.5b-float16, 1.5b-float16,
# bench-models (the peer stages follow their shape's first float32 stage). Each ours stage generates first (64 x 256 new), then
# trains 8x512 and 32x512 on one runner; 0.5b-profile writes onnxruntime's per-op profile of a
# 0.5B micro-step and decode step. Measured on the H200 (2026-12-04): loading the 0.5B train step's
# sessions took 30 s (1.5B: 50 s), a 0.5B 8x512 step 5 s, each peer stage 31-36 s; all of it does
# not fit in one run's 7.5 minutes, so the order puts the figures still missing first, and
# --stages picks the rest for a second run.
#
# Usage: tests/device/h200.sh [--local | --cpu] [--carried] [--no-peer] [--stages=LIST] [OUTDIR]
#   (or OUT=OUTDIR); on the device: run(command="bash tests/device/h200.sh $OUT", carry=[".device"])
#        tests/device/h200.sh --unpack: unpacks the carried Deno (and, on the device, the Vulkan
#   packages) into .device-run/ and exits, the first of two calls where the carry does not fit one.
# .device/ holds deno.xz, node_modules.tar.xz and vulkan/*.deb, as tests/device/prepare.sh builds
# and sizes them. Where the tracked tree and all of .device pass the device tool's 64 MiB,
# prepare.sh says to carry them in two calls on the same warm machine, as it prints them:
#   run(command="bash tests/device/h200.sh --unpack", carry=[".device/deno.xz", ".device/vulkan"])
#   run(command="bash tests/device/h200.sh $OUT", carry=[".device/node_modules.tar.xz"])
# the second within the machine's 30 s idle release; ignored folders stay between calls, so it
# finds the Deno the first unpacked in .device-run/ (and a fresh machine says to repeat the first).
# Both onnxruntime packages do not fit the device tool's 64 MiB together: the default carry has
# onnxruntime-node (the native stages and nothing of onnxruntime-web but its JS bundle),
# `prepare.sh --web` issue 20's (onnxruntime-web's WASM, no onnxruntime-node); the stages a carry
# cannot run are skipped with that reason.
# Works on an H100 or an H200 (the machine is named from nvidia-smi).
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"

mode=device
carried=0
unpack_only=0
with_peer=1
all_stages="native-0.5b-float32 native-0.5b-check native-0.5b-profile native-0.5b-fused"
all_stages+=" native-1.5b-float32"
all_stages+=" native-0.5b-float16"
all_stages+=" native-1.5b-float16 bench-webgpu"
all_stages+=" 0.5b-float32 0.5b-profile bench-onnx 1.5b-float32 0.5b-float16 1.5b-float16 bench-models"
chosen="$all_stages"
# What the fused stages build as one node each (DecoderSpec.fused).
fused_ops=rms_norm,rotary_embedding,attention,grad_norm
outdir="${OUT:-}"
for arg in "$@"; do
  case "$arg" in
    --local) mode=local ;;
    --cpu) mode=cpu ;;
    --carried) carried=1 ;;
    --unpack) unpack_only=1 ;;
    --no-peer) with_peer=0 ;;
    --stages=*)
      chosen="${arg#--stages=}"
      chosen="${chosen//,/ }"
      for name in $chosen; do
        if [[ " $all_stages " != *" $name "* ]]; then
          echo "h200.sh: --stages names $name; expected some of: ${all_stages// /, }" >&2
          exit 2
        fi
      done
      ;;
    -h | --help)
      awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"
      exit 0
      ;;
    -*)
      echo "h200.sh: unknown option $arg (expected --local, --cpu, --carried, --unpack, --no-peer, --stages=LIST or --help)" >&2
      exit 2
      ;;
    *) outdir="$arg" ;;
  esac
done
if [ "$unpack_only" = 1 ] && [ "$mode" != device ] && [ "$carried" = 0 ]; then
  echo "h200.sh: --unpack unpacks a carried .device: on the device, or here with --carried" >&2
  exit 2
fi
# --unpack measures nothing: its log goes to a folder of its own.
[ "$unpack_only" = 1 ] && [ -z "$outdir" ] && outdir="$(mktemp -d /tmp/polyrl-unpack.XXXXXX)"
if [ -z "$outdir" ]; then
  echo "h200.sh: name an output folder (argument or OUT=...)" >&2
  exit 2
fi
mkdir -p "$outdir"
outdir="$(cd "$outdir" && pwd)"
log="$outdir/log.txt"
lines="$outdir/figures.jsonl"
stages="$outdir/stages.jsonl"
: >"$lines"
: >"$stages"
exec > >(tee -a "$log") 2>&1

say() { echo "[$(date -u +%H:%M:%S)] $*"; }
start=$(date +%s)
case "$mode" in # seconds for everything
  device) budget=450 ;;
  local) budget=300 ;;
  cpu) budget=1800 ;;
esac
[ -n "${POLYRL_DEVICE_BUDGET_S:-}" ] && budget="$POLYRL_DEVICE_BUDGET_S"
deadline=$((start + budget))

# ---- tools: the carried Deno and node_modules, the Vulkan loader ----
work="$(mktemp -d /tmp/polyrl-device.XXXXXX)"
poller=""
cleanup() {
  [ -n "$poller" ] && kill "$poller" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
export DENO_DIR="$work/deno-dir" DENO_NO_UPDATE_CHECK=1
# Where a carried piece is unpacked: git-ignored, so it stays on a warm machine for a later call.
unpacked="$root/.device-run"
if [ "$mode" = device ] || [ "$carried" = 1 ]; then
  if [ -s .device/deno.xz ]; then
    mkdir -p "$unpacked/bin"
    xz -dc .device/deno.xz >"$unpacked/bin/deno.partial" && chmod +x "$unpacked/bin/deno.partial"
    mv "$unpacked/bin/deno.partial" "$unpacked/bin/deno"
  elif [ ! -x "$unpacked/bin/deno" ]; then
    echo "h200.sh: no Deno: carry .device (tests/device/prepare.sh builds it), or where it is" \
      "carried in two calls, run the first (--unpack with .device/deno.xz) again: this machine" \
      "is not the one it unpacked on" >&2
    exit 2
  fi
  export PATH="$unpacked/bin:$PATH"
fi
if [ "$mode" = device ]; then
  # The image has NVIDIA's Vulkan ICD (libGLX_nvidia) but maybe not the loader or libglvnd it
  # links; the carried Debian packages fill in what is missing (files already there are kept).
  if ls .device/vulkan/*.deb >/dev/null 2>&1; then
    for f in .device/vulkan/*.deb; do dpkg -x "$f" /; done
    ldconfig
    mkdir -p "$unpacked" && touch "$unpacked/vulkan-unpacked"
  elif [ ! -e "$unpacked/vulkan-unpacked" ]; then
    echo "h200.sh: the Vulkan packages (.device/vulkan) were carried to no call on this machine" >&2
    exit 2
  fi
fi
if [ "$unpack_only" = 1 ]; then
  echo "h200.sh: unpacked into $unpacked: $(cd "$unpacked" && find . -type f | sort | tr '\n' ' ')"
  exit 0
fi
if [ "$mode" = device ] || [ "$carried" = 1 ]; then
  if [ ! -d node_modules/.deno ]; then
    if [ ! -s .device/node_modules.tar.xz ]; then
      echo "h200.sh: no node_modules: carry .device/node_modules.tar.xz" >&2
      exit 2
    fi
    tar -xJf .device/node_modules.tar.xz -C "$root"
  fi
fi
if [ "$mode" = device ]; then
  icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
  if [ -f "$icd" ] && [ -z "${VK_DRIVER_FILES:-}" ] && [ -z "${VK_ICD_FILENAMES:-}" ]; then
    export VK_DRIVER_FILES="$icd"
  fi
  egl=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
  [ -f "$egl" ] && export __EGL_VENDOR_LIBRARY_FILENAMES="${__EGL_VENDOR_LIBRARY_FILENAMES:-$egl}"
fi
# What this tree can run: onnxruntime-node for the native stages, onnxruntime-web's WASM for the
# webgpu-web ones (a device carry holds one of the two: tests/device/prepare.sh [--web]).
has_native=0
[ -e node_modules/onnxruntime-node ] && has_native=1
has_web=0
ls node_modules/.deno/onnxruntime-web@*/node_modules/onnxruntime-web/dist/*.wasm >/dev/null 2>&1 &&
  has_web=1
no_native="this carry has no onnxruntime-node (tests/device/prepare.sh without --web builds one)"
no_web="this carry has no onnxruntime-web WASM (tests/device/prepare.sh --web builds one)"
say "mode $mode; deno $(deno --version | head -1); $(uname -m); $(nproc) cores; native $has_native, web $has_web"
if [ "$mode" = device ]; then
  command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  say "vulkan: VK_DRIVER_FILES=${VK_DRIVER_FILES:-unset}; ICDs: $(ls /usr/local/nvidia/share/vulkan/icd.d \
    /usr/share/vulkan/icd.d /etc/vulkan/icd.d 2>/dev/null | tr '\n' ' ')"
  ldconfig -p | grep -E 'libvulkan|libGLX_nvidia|libGLdispatch|libnvidia-gpucomp' | sed 's/^/  /'
  [ -n "${VK_DRIVER_FILES:-}" ] && sed 's/^/  /' "$VK_DRIVER_FILES"
fi

# ---- GPU memory poller: "epoch-ms MiB" lines ----
gpumem="$outdir/gpu-memory.txt"
: >"$gpumem"
if command -v nvidia-smi >/dev/null; then
  (while :; do
    echo "$(date +%s%3N) $(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits | head -1)"
    sleep 0.2
  done >>"$gpumem") &
  poller=$!
fi

# stage NAME SECONDS COMMAND...: runs under its timeout, cut to the overall deadline.
stage() {
  local name="$1" limit="$2"
  shift 2
  local now left rc t0 load
  now=$(date +%s)
  left=$((deadline - now))
  [ "$left" -lt "$limit" ] && limit="$left"
  if [ "$limit" -lt 5 ]; then
    say "skip $name: out of time (overall budget ${budget}s)"
    echo "{\"stage\":\"$name\",\"status\":\"skipped\",\"reason\":\"out of time\"}" >>"$stages"
    return
  fi
  say "stage $name (timeout ${limit}s; load average $(cut -d' ' -f1-3 /proc/loadavg)): $*"
  t0=$(date +%s)
  load="$(cut -d' ' -f1-3 /proc/loadavg)"
  stage_out="$work/stage-$(date +%s%N).txt"
  timeout -k 5 "$limit" "$@" 2>&1 | tee "$stage_out"
  rc=${PIPESTATUS[0]}
  local status=ok
  [ "$rc" = 124 ] || [ "$rc" = 137 ] && status=timeout
  [ "$status" = ok ] && [ "$rc" != 0 ] && status=failed
  say "stage $name: $status (exit $rc, $(($(date +%s) - t0)) s)"
  printf '{"stage":"%s","status":"%s","exit":%s,"seconds":%s,"loadAverage":"%s","output":"%s"}\n' \
    "$name" "$status" "$rc" "$(($(date +%s) - t0))" "$load" "$stage_out" >>"$stages"
}

# skip NAME REASON: a stage that cannot run here, said so in figures.json.
skip() {
  say "skip $1: $2"
  printf '{"stage":"%s","status":"skipped","reason":"%s"}\n' "$1" "$2" >>"$stages"
}

case "$mode" in
  device) machine="$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 |
    sed 's/^NVIDIA //')"
    machine="${machine:-GPU}" ;;
  local) machine="local lavapipe" ;;
  cpu) machine="local cpu (2 cores, shared)" ;;
esac
shapes=(--machine "$machine")
ours=(deno run -A tests/device/shapes.ts "${shapes[@]}" --out "$lines")

stage adapter 30 "${ours[@]}" --adapter
f16=$(grep -c '"shaderF16":true' "$lines" || true)
gpu=$(grep -c '"kind":"adapter","found":true' "$lines" || true)
if [ "$gpu" = 0 ] && [ "$mode" = local ]; then
  # Only the WebGPU stages need an adapter; say why they did not run rather than fail them.
  reason="no WebGPU adapter here (install mesa-vulkan-drivers and libvulkan1)"
  for name in "ours tiny float32" "profile tiny float32" "ours tiny float16" "bench onnx"; do
    skip "$name" "$reason"
  done
fi

python=""
for p in python3 /usr/bin/python3; do
  if "$p" -c 'import torch' 2>/dev/null; then
    python="$p"
    break
  fi
done
export PYTHONUNBUFFERED=1
peer=("$python" tests/device/torch_peer.py "${shapes[@]}" --out "$lines")

if [ "$mode" = device ]; then
  # Stage limits from the H200 runs of 2026-12-04 (seconds): 0.5B weights 5, train-step sessions
  # 30, 8x512 step 5 (first 6.5), so 32x512 (8 micro-batches of 4, no warm-up: the runner has run
  # that shape) about 20, generation 64x256 not yet measured (estimated 45); 1.5B weights 13,
  # sessions 50, 8x512 step 9 (first 9.4), 32x512 about 36; the peer's stages 31-36.
  big=(--generate 64x256 --prompt 32 --train 8x512,32x512 --micro-batch auto --steps 1)
  declare -A limit=([qwen2.5-0.5b]=120 [qwen2.5-1.5b]=180)
  declare -A peered=()
  for name in $all_stages; do
    [[ " $chosen " == *" $name "* ]] || continue
    # native-X: stage X on onnxruntime-node's WebGPU EP; X alone: on onnxruntime-web's.
    base="${name#native-}"
    if [ "$base" != "$name" ]; then
      backend=(--backend webgpu) label=native
    else
      backend=(--backend webgpu-web) label=ours
    fi
    shape="qwen2.5-${base%%-*}"
    case "$label/$base/$has_native$has_web" in
      native/*/0? | ours/bench-webgpu/0?) skip "$name" "$no_native" && continue ;;
      ours/*/?0) skip "$name" "$no_web" && continue ;;
    esac
    case "$base" in
      *-float32)
        stage "$label $shape float32" "${limit[$shape]}" "${ours[@]}" "${backend[@]}" \
          --shape "$shape" --dtype float32 --graphs "${big[@]}"
        # PyTorch + PEFT once per shape, after the first of its float32 stages.
        [ "$with_peer" = 0 ] || [ -n "${peered[$shape]:-}" ] && continue
        peered[$shape]=1
        for dtype in float32 bfloat16; do
          stage "torch $shape $dtype" 40 "${peer[@]}" --shape "$shape" --device cuda --dtype "$dtype" \
            --train 8x512,32x512 --steps 2 --generate 64x256 --prompt 32
        done
        ;;
      *-profile)
        # One warm-up and one timed step of 2 micro-batches, then 2 + 4 decode steps: the profile
        # averages the runs after each session's first.
        stage "$label profile $shape float32" 90 "${ours[@]}" "${backend[@]}" --shape "$shape" \
          --dtype float32 --profile --train 8x512 --micro-batch 4 --steps 1 --generate 64x4 --prompt 32
        ;;
      *-check)
        # This GPU's numbers against the cpu backend's on the same weights, at the real shape:
        # 8 tokens of 4 rows after a 40-token prompt (logits), one 1x64 train step (loss,
        # gradient norm, entropy). The tests hold the backends together only at their sizes.
        stage "$label check $shape float32" 150 "${ours[@]}" "${backend[@]}" --shape "$shape" \
          --dtype float32 --check-cpu --generate 4x8 --prompt 40 --train 1x64 --steps 1
        ;;
      *-fused)
        # RMSNorm, RoPE, attention and the gradient norm fused (runtime.fused_ops): generation and the
        # 8x512 step (whose graph keeps attention composed), after the fused decoder's logits are
        # held against the composed one's on this GPU (--check-fused).
        stage "$label $shape float32 fused" "${limit[$shape]}" "${ours[@]}" "${backend[@]}" \
          --shape "$shape" --dtype float32 --fused "$fused_ops" --check-fused --generate 64x256 \
          --prompt 32 --train 8x512 --micro-batch auto --steps 1
        ;;
      *-float16)
        if [ "$f16" -gt 0 ]; then
          stage "$label $shape float16" "${limit[$shape]}" "${ours[@]}" "${backend[@]}" \
            --shape "$shape" --dtype float16 "${big[@]}"
        else
          skip "$label $shape float16" "the adapter has no shader-f16"
        fi
        ;;
      bench-webgpu) stage "bench webgpu" 180 deno task bench webgpu ;;
      bench-onnx) stage "bench onnx" 20 deno task bench --backend webgpu-web onnx ;;
      bench-models) stage "bench models" 90 deno task bench --backend webgpu-web models ;;
    esac
  done
elif [ "$mode" = cpu ]; then
  [ -z "$python" ] && skip "torch" "no python3 with torch here (apt-get install python3-torch)"
  # Debian's python3-torch calls whatever libblas.so.3 the system has, by default the reference
  # BLAS (libblas3), a strawman for matrix products. The peer runs on OpenBLAS instead, unpacked
  # into .peer-blas/ and put first on its library path only (the system stays as it is).
  blas="$root/.peer-blas/usr/lib/x86_64-linux-gnu/openblas-pthread"
  if [ -n "$python" ] && [ ! -f "$blas/libblas.so.3" ]; then
    mkdir -p "$root/.peer-blas"
    (cd "$work" && apt-get -qq -oAPT::Sandbox::User=root download libopenblas0-pthread &&
      dpkg -x libopenblas0-pthread_*.deb "$root/.peer-blas") ||
      say "no OpenBLAS for the peer (apt-get download failed): it runs on the system BLAS"
  fi
  for shape in qwen2.5-0.5b qwen2.5-1.5b; do
    gen=$([ "$shape" = qwen2.5-0.5b ] && echo 4x32 || echo 2x16)
    stage "ours $shape cpu float32" 900 "${ours[@]}" --shape "$shape" --backend cpu --threads 2 \
      --dtype float32 --train 1x128 --steps 1 --generate "$gen" --prompt 32
    [ -n "$python" ] && stage "torch $shape cpu float32" 900 \
      env LD_LIBRARY_PATH="$blas${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" OPENBLAS_NUM_THREADS=2 \
      "${peer[@]}" --shape "$shape" --device cpu --threads 2 --dtype float32 --train 1x128 \
      --steps 1 --generate "$gen" --prompt 32
  done
else
  tiny=(--shape tiny --generate 4x8 --prompt 8 --train 2x32,4x32 --micro-batch 2 --steps 1)
  tinyProfile=(--shape tiny --dtype float32 --profile --train 4x32 --micro-batch 2 --steps 1
    --generate 4x4 --prompt 8)
  if [ "$gpu" -gt 0 ] && [ "$has_web" = 0 ]; then
    for name in "ours tiny float32" "profile tiny float32" "ours tiny float16" "bench onnx"; do
      skip "$name" "$no_web"
    done
  elif [ "$gpu" -gt 0 ]; then
    stage "ours tiny float32" 90 "${ours[@]}" "${tiny[@]}" --backend webgpu-web --dtype float32 --graphs
    stage "profile tiny float32" 60 "${ours[@]}" "${tinyProfile[@]}" --backend webgpu-web
    if [ "$f16" -gt 0 ]; then
      stage "ours tiny float16" 60 "${ours[@]}" "${tiny[@]}" --backend webgpu-web --dtype float16
    else
      skip "ours tiny float16" "the adapter has no shader-f16"
    fi
  fi
  # The native EP on Mesa 25's lavapipe, set at launch for these processes only (the layout
  # .ci/software-vulkan.sh unpacks; adapters/onnx/runtime/software-vulkan.ts reads the same).
  sv="${POLYRL_SOFTWARE_VULKAN:-}"
  if [ "$has_native" = 0 ]; then
    for name in "native tiny float32" "native profile tiny float32" "native tiny float16" \
      "native tiny float32 fused"; do
      skip "$name" "$no_native"
    done
  elif [ -n "$sv" ]; then
    native=(env VK_ICD_FILENAMES="$sv/lvp_icd.json"
      LD_LIBRARY_PATH="$sv/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
      "${ours[@]}" --backend webgpu)
    stage "native tiny float32" 60 "${native[@]}" "${tiny[@]}" --dtype float32 --check-cpu
    stage "native profile tiny float32" 60 "${native[@]}" "${tinyProfile[@]}"
    stage "native tiny float16" 60 "${native[@]}" "${tiny[@]}" --dtype float16
    stage "native tiny float32 fused" 60 "${native[@]}" "${tiny[@]}" --dtype float32 \
      --fused "$fused_ops" --check-fused
  else
    for name in "native tiny float32" "native profile tiny float32" "native tiny float16" \
      "native tiny float32 fused"; do
      skip "$name" "POLYRL_SOFTWARE_VULKAN is unset: no Mesa 25 lavapipe for the native WebGPU EP (.ci/software-vulkan.sh DIR)"
    done
  fi
  if [ -n "$python" ]; then
    stage "torch tiny float32" 30 "${peer[@]}" --shape tiny --device cpu --threads 1 --dtype float32 \
      --train 2x32,4x32 --steps 1 --generate 4x8 --prompt 8
  else
    skip "torch tiny float32" "no python3 with torch here (apt-get install python3-torch)"
  fi
  skip "torch bfloat16" "bfloat16 is the GPU peer's dtype; CPU bfloat16 matmuls are emulated"
  [ "$gpu" -gt 0 ] && [ "$has_web" = 1 ] && stage "bench onnx" 60 deno task bench --backend webgpu-web onnx
  skip "bench models" "the embedded model's generation workloads take minutes on a software adapter; run on the GPU"
  skip "bench webgpu" "onnxruntime-web compiles the decoder's shaders for minutes on a software adapter; run on the GPU or deno task bench webgpu"
fi

[ -n "$poller" ] && kill "$poller" 2>/dev/null
poller=""
deno run -A tests/device/figures.ts --lines "$lines" --stages "$stages" --gpu-memory "$gpumem" \
  --log "$log" --out "$outdir/figures.json"
rc=$?
say "done in $(($(date +%s) - start)) s; figures: $outdir/figures.json"
exit $rc
