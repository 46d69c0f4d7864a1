#!/usr/bin/env bash
# Builds llama.cpp's CUDA backend (libggml-cuda.so) on this box, for this box's GPU and CUDA toolkit, and puts it in
# place of the one node-llama-cpp ships prebuilt. Offline: the source is the llama.cpp release node-llama-cpp carries
# (node_modules/node-llama-cpp/llama/gitRelease.bundle), so it matches the prebuilt libraries it loads beside.
#
# Why: the prebuilt backend can load, see the GPU, then fail at the first decode when the driver is older than the
# toolkit it was built with (seen on an H200, driver 580 / CUDA 13.0: "the provided PTX was compiled with an
# unsupported toolchain"). Hearth then runs the chat model on the CPU and `hearth doctor` says so (check "gpu").
# Proven on an H200 with CUDA 13.0 (docs/appliance.md, "The GPU"): 2 to 3 minutes on 16 cores (the script ran there end
# to end: 149 s).
#
#   scripts/build-cuda-backend.sh              # the GPU's own architecture (nvidia-smi), FlashAttention kernels off
#   CUDA_ARCHITECTURES="86" scripts/...        # another architecture (86: an Ampere card), or a list: "86;90"
#   GGML_CUDA_FA=ON scripts/...                # with llama.cpp's FlashAttention kernels (a build several times longer)
#   scripts/build-cuda-backend.sh --restore    # put the prebuilt back
#
# Needs git, cmake (3.18+), a C++ compiler and the CUDA toolkit (nvcc and cuBLAS; PATH or /usr/local/cuda/bin). Reinstalling
# node-llama-cpp puts the prebuilt back: run this again after it. Then restart Hearth and check `hearth doctor` (gpu: OK).
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
llama="$root/node_modules/node-llama-cpp/llama"
arch="$(node -p 'process.arch')"
bins="$root/node_modules/@node-llama-cpp/linux-$arch-cuda/bins/linux-$arch-cuda"
target="$bins/libggml-cuda.so"

die() { echo "build-cuda-backend: $*" >&2; exit 1; }

[ -d "$bins" ] || die "node-llama-cpp has no prebuilt CUDA build for linux-$arch ($bins): build all of it from source instead (npx --no node-llama-cpp source build --gpu cuda)"
if [ "${1:-}" = "--restore" ]; then
  [ -f "$target.prebuilt" ] || die "no prebuilt kept at $target.prebuilt: nothing to restore (reinstalling node-llama-cpp puts it back)"
  mv -f "$target.prebuilt" "$target"
  echo "build-cuda-backend: the prebuilt libggml-cuda.so is back"
  exit 0
fi

export PATH="$PATH:/usr/local/cuda/bin"
for tool in git cmake nvcc; do command -v "$tool" >/dev/null || die "$tool not found: install it (nvcc comes with the CUDA toolkit)"; done
[ -f "$llama/gitRelease.bundle" ] || die "$llama/gitRelease.bundle is missing: reinstall node-llama-cpp (npm install)"

archs="${CUDA_ARCHITECTURES:-}"
if [ -z "$archs" ]; then
  command -v nvidia-smi >/dev/null || die "nvidia-smi not found: name the architecture, e.g. CUDA_ARCHITECTURES=86"
  archs="$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d '.[:space:]')"
  [ -n "$archs" ] || die "nvidia-smi names no GPU: name the architecture, e.g. CUDA_ARCHITECTURES=86"
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/hearth-cuda-XXXXXX")"
trap 'rm -rf "$work"' EXIT
echo "build-cuda-backend: llama.cpp from $llama/gitRelease.bundle, CUDA architectures $archs, nvcc $(nvcc --version | sed -n 's/.*release \([0-9.]*\).*/\1/p')"
git -c advice.detachedHead=false clone --quiet "$llama/gitRelease.bundle" "$work/llama.cpp"
# ggml built on its own wants its pkg-config template, which the release leaves out.
touch "$work/llama.cpp/ggml/ggml.pc.in"
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
# As node-llama-cpp builds it: backends loaded at run time (GGML_BACKEND_DL), unversioned sonames.
cmake -S "$work/llama.cpp/ggml" -B "$work/build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DGGML_BUILD_TESTS=OFF -DGGML_BUILD_EXAMPLES=OFF -DBUILD_SHARED_LIBS=ON -DGGML_BACKEND_DL=ON -DGGML_NATIVE=OFF -DGGML_CPU=OFF \
  -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES="$archs" -DGGML_CUDA_FA="${GGML_CUDA_FA:-OFF}" -DGGML_CUDA_NCCL=OFF \
  -DCMAKE_PLATFORM_NO_VERSIONED_SONAME=ON -DCMAKE_BUILD_RPATH='$ORIGIN' -DCMAKE_BUILD_RPATH_USE_ORIGIN=ON >"$work/configure.log" || { tail -30 "$work/configure.log"; die "cmake could not configure the build"; }
cmake --build "$work/build" --target ggml-cuda -j "$(nproc)" || die "the build failed (output above)"
built="$(find "$work/build" -name libggml-cuda.so -type f -newer "$work/configure.log" | head -1)"
[ -n "$built" ] || die "the build produced no libggml-cuda.so"
[ -f "$target.prebuilt" ] || cp -p "$target" "$target.prebuilt"
install -m 0755 "$built" "$target"
echo "build-cuda-backend: installed $target (the prebuilt is kept as libggml-cuda.so.prebuilt; --restore puts it back)"
echo "build-cuda-backend: now restart Hearth and run hearth doctor: the gpu check should read OK"
