#!/usr/bin/env bash
# build.sh PREFIX_DIR BUILD_DIR: builds what the GPU checks run (`pipelens`, `pipelens-runtime`,
# the runtime's tests and the uneven model writer of partition_real_check.sh) against the
# packages gather-deps.sh downloaded.
#
# Runs on the GPU machine (no package registry there: the .debs travel in .device-deps/) and
# HERE (Debian, CPU LibTorch) end to end. Writes: PREFIX_DIR (the .debs unpacked with
# `dpkg -x`, never into /), BUILD_DIR (CMake + the binaries) and BUILD_DIR/device-build.env
# (what was built against, read by check.sh). Prints how long each phase took.
#
# LibTorch: python3's torch (torch.utils.cmake_prefix_path) when it imports, else the system's
# (Debian's libtorch-dev here). The CUDA + NCCL transport: on when /usr/local/cuda has the
# runtime's headers and NCCL is found there or in the wheel's nvidia-nccl package.
# Environment: JOBS (default nproc), DEVICE_DEPS_DIR (default .device-deps), BUILD_TARGETS
# (default below), CCACHE=0 to build without ccache.
set -euo pipefail

if [ $# -ne 2 ]; then
    echo "usage: $0 PREFIX_DIR BUILD_DIR" >&2
    exit 2
fi
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
mkdir -p "$1" "$2"
prefix="$(cd "$1" && pwd)"
build_dir="$(cd "$2" && pwd)"
deps_dir="${DEVICE_DEPS_DIR:-$repo_root/.device-deps}"
gloo_options=()  # -DPIPELENS_GLOO_INCLUDE=... when the carried gloo headers stand in for the wheel's
jobs="${JOBS:-$(nproc)}"
targets=(${BUILD_TARGETS:-pipelens pipelens-runtime pipelens_runtime_tests
    pipelens_runtime_transport_tests pipelens_transport_peer pipelens_run_cli_tests
    pipelens_bench_runtime pipelens_write_uneven_mlp})

now() { date +%s.%N; }
phase_start=$(now)
phase_done() {  # NAME: prints the seconds since the last phase ended
    local end
    end=$(now)
    awk -v name="$1" -v a="$phase_start" -v b="$end" \
        'BEGIN { printf "build.sh: phase %-9s %6.1f s\n", name, b - a }'
    phase_start=$end
}

# A .deb without dpkg: an ar archive whose data.tar.* holds the files.
extract_deb() {  # DEB DESTINATION
    if command -v dpkg >/dev/null 2>&1; then
        dpkg -x "$1" "$2"
        return
    fi
    local scratch
    scratch="$(mktemp -d)"
    (cd "$scratch" && ar x "$1" && tar -xf data.tar.* -C "$2")
    rm -rf "$scratch"
}

# Debian's -dev packages point some links at absolute paths (/lib/x86_64-linux-gnu/libz.so.1.2.13):
# inside the prefix they must point at the prefix's copy.
relink_absolute_links() {
    local link target
    while IFS= read -r -d '' link; do
        target="$(readlink "$link")"
        if [[ "$target" == /* ]] && [ -e "$prefix$target" ]; then
            ln -sfn "$prefix$target" "$link"
        fi
    done < <(find "$prefix" -type l -print0)
}

unpack_deps() {
    if [ ! -f "$deps_dir/MANIFEST" ]; then
        echo "build.sh: no $deps_dir/MANIFEST: building against this machine's own packages" \
            "(run scripts/device/gather-deps.sh where apt works to carry them)"
        return
    fi
    local stamp="$prefix/.unpacked-manifest"
    if [ -f "$stamp" ] && cmp -s "$stamp" "$deps_dir/MANIFEST"; then
        echo "build.sh: $prefix already holds the packages of $deps_dir/MANIFEST"
        return
    fi
    local deb count=0
    for deb in "$deps_dir"/*.deb; do
        extract_deb "$(cd "$(dirname "$deb")" && pwd)/$(basename "$deb")" "$prefix"
        count=$((count + 1))
    done
    relink_absolute_links
    cp "$deps_dir/MANIFEST" "$stamp"
    echo "build.sh: unpacked $count packages into $prefix"
}

python_torch() {  # EXPRESSION: prints it evaluated with torch imported, or fails
    python3 -c "import torch, sys; print($1)" 2>/dev/null
}

# Sets torch_source, torch_prefix_path, torch_cuda, cxx11_abi.
find_torch() {
    torch_cuda=no
    cxx11_abi=unknown
    if torch_prefix_path="$(python_torch torch.utils.cmake_prefix_path)"; then
        torch_source="pip $(python_torch torch.__version__)"
        cxx11_abi="$(python_torch torch._C._GLIBCXX_USE_CXX11_ABI)"
        [ "$(python_torch 'torch.version.cuda is not None')" = "True" ] && torch_cuda=yes
        echo "build.sh: LibTorch from python3's torch $torch_source at $torch_prefix_path" \
            "(CUDA build: $torch_cuda, _GLIBCXX_USE_CXX11_ABI=$cxx11_abi; Debian's packages" \
            "use the C++11 ABI, so this must be True)"
        if [ "$cxx11_abi" != "True" ]; then
            echo "build.sh: LibTorch uses the old C++ ABI: it cannot link Debian's fmt/gtest" >&2
            exit 1
        fi
        local include="$torch_prefix_path/../../include"
        if [ -d "$include/gloo" ]; then
            echo "build.sh: gloo headers: $(cd "$include/gloo" && pwd)"
        elif [ -d "$deps_dir/gloo-include/gloo" ]; then
            gloo_options=(-DPIPELENS_GLOO_INCLUDE="$(cd "$deps_dir/gloo-include" && pwd)")
            echo "build.sh: no gloo headers under torch/include: trying the carried ones" \
                "($(grep '^gloo-headers ' "$deps_dir/MANIFEST" | cut -d' ' -f2))"
        else
            echo "build.sh: warning: no gloo headers under torch/include nor carried" \
                "(gather-deps.sh with GLOO_GIT_DIR): the gloo transport is not built" >&2
        fi
    else
        torch_source="system"
        torch_prefix_path=""
        cxx11_abi="system"
        echo "build.sh: python3 cannot import torch: using the system's LibTorch" \
            "(here Debian's CPU-only libtorch-dev: no tensors on a GPU)"
    fi
}

# The folder that holds include/nccl.h and lib/libnccl.so*. With a CUDA LibTorch, the wheel's
# own NCCL first: one process loads one libnccl.so.2, and it should be the one torch uses.
find_nccl_root() {
    local header=""
    if [ "$torch_cuda" = yes ]; then
        header="$(wheel_nccl_header)"
    fi
    if [ -z "$header" ] && [ -f /usr/local/cuda/include/nccl.h ]; then
        header=/usr/local/cuda/include/nccl.h
    fi
    [ -n "$header" ] || return 1
    dirname "$(dirname "$header")"
}

# nccl.h of python3's nvidia-nccl package (nvidia/nccl/include), wherever its layout puts it.
wheel_nccl_header() {
    local folders
    folders="$(python3 -c 'import site; print("\n".join(site.getsitepackages()))' 2>/dev/null)" ||
        return 0
    local folder
    while IFS= read -r folder; do
        [ -d "$folder/nvidia" ] || continue
        find "$folder/nvidia" -name nccl.h -path '*include*' -print -quit
    done <<<"$folders" | head -n 1
}

# Sets cuda_options, with_cuda and cuda_reason. The NCCL transport needs only CUDA's runtime and
# NCCL (as the project's own AUTO does); whether LibTorch can put tensors on the GPU is
# torch_cuda, which check.sh reads apart.
find_cuda() {
    cuda_options=(-DPIPELENS_CUDA=OFF)
    with_cuda="OFF"
    if [ ! -f /usr/local/cuda/include/cuda_runtime_api.h ]; then
        cuda_reason="no /usr/local/cuda/include/cuda_runtime_api.h"
    elif ! nccl_root="$(find_nccl_root)"; then
        cuda_reason="no nccl.h in /usr/local/cuda or python3's nvidia.nccl package"
    else
        with_cuda="ON"
        cuda_reason="CUDA /usr/local/cuda, NCCL $nccl_root"
        cuda_options=(-DPIPELENS_CUDA=ON -DPIPELENS_CUDA_ROOT=/usr/local/cuda
            -DPIPELENS_NCCL_ROOT="$nccl_root")
    fi
    if [ "$torch_cuda" = yes ]; then
        # Torch's CMake config finds the toolkit itself and otherwise probes the GPU for the
        # architectures to name.
        cuda_options+=(-DCUDAToolkit_ROOT=/usr/local/cuda)
        [ -x /usr/local/cuda/bin/nvcc ] &&
            cuda_options+=(-DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc)
        local capability
        capability="$(python_torch \
            '"%d.%d" % torch.cuda.get_device_capability() if torch.cuda.is_available() else ""')"
        export TORCH_CUDA_ARCH_LIST="${TORCH_CUDA_ARCH_LIST:-${capability:-9.0}}"
    fi
    echo "build.sh: CUDA + NCCL transport: $with_cuda ($cuda_reason); LibTorch with CUDA:" \
        "$torch_cuda"
}

configure() {
    local prefix_path="$prefix/usr"
    [ -n "$torch_prefix_path" ] && prefix_path="$prefix_path;$torch_prefix_path"
    local generator=()
    command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
    local launcher=()
    if [ "${CCACHE:-1}" != 0 ] && command -v ccache >/dev/null 2>&1; then
        launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
    fi
    cmake -S "$repo_root" -B "$build_dir" "${generator[@]}" "${launcher[@]}" \
        -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix_path" \
        -DPIPELENS_TORCH=ON -DPIPELENS_GUI=OFF -DPIPELENS_FUZZ_TESTS=OFF "${cuda_options[@]}" \
        "${gloo_options[@]}" \
        >"$build_dir/configure.log" 2>&1 || {
        cat "$build_dir/configure.log"
        echo "build.sh: configure failed (log: $build_dir/configure.log)" >&2
        exit 1
    }
    grep "pipelens: " "$build_dir/configure.log" || true
}

write_build_env() {
    cat >"$build_dir/device-build.env" <<ENV
# Written by scripts/device/build.sh; read by scripts/device/check.sh.
DEVICE_TORCH_SOURCE='$torch_source'
DEVICE_TORCH_CUDA='$torch_cuda'
DEVICE_CXX11_ABI='$cxx11_abi'
DEVICE_WITH_CUDA='$with_cuda'
DEVICE_CUDA_REASON='$cuda_reason'
ENV
}

echo "build.sh: $(uname -m), $(nproc) cores, -j$jobs; cmake $(cmake --version | head -1 |
    awk '{print $3}'), $(c++ --version | head -1)"
command -v nvcc >/dev/null 2>&1 && echo "build.sh: $(nvcc --version | tail -1)"
unpack_deps
phase_done unpack
find_torch
find_cuda
configure
write_build_env
phase_done configure
cmake --build "$build_dir" -j"$jobs" --target "${targets[@]}"
phase_done build
echo "build.sh: built ${targets[*]} in $build_dir"
