#!/usr/bin/env bash
# Installs the Debian packages pipelens builds against, only those that are missing, so a
# fresh Debian machine needs nothing but `make demo` or `make test`. Safe to run repeatedly:
# with everything present it exits in well under a second without touching apt.
# The optional packages (clang and its libFuzzer runtime, for the fuzz targets) are tried too;
# when they cannot be installed the build goes on and the fuzz tests report themselves skipped.
set -euo pipefail

packages=(
    build-essential cmake ninja-build pkg-config git
    libsqlite3-dev zlib1g-dev libgtest-dev libgmock-dev libbenchmark-dev
    libcli11-dev nlohmann-json3-dev libtomlplusplus-dev libfmt-dev libspdlog-dev
    libtorch-dev libgloo-dev
    # LibTorch's BLAS. Debian's libtorch only recommends an optimised one, so without recommends
    # its matrix products ran on the reference BLAS (17x slower steps of an mlp run on the 2-core
    # development machine). The OpenMP build obeys --threads: LibTorch sets OpenMP's thread count
    # in every rank thread, where the pthread build would start one thread per core of its own.
    libopenblas0-openmp
    libimgui-dev libglfw3-dev libgl-dev libstb-dev
    xvfb xauth libgl1-mesa-dri
    python3  # scripts/check_layers.py, run by ctest
    # The install and package tests (tests/install): the .deb's checks, the desktop entry's and
    # MIME type's validators, the zsh completion's shell.
    dpkg-dev lintian desktop-file-utils shared-mime-info libglib2.0-bin zsh man-db
)
# libclang-rt-dev holds libclang_rt.fuzzer-x86_64.a (dpkg -S names libclang-rt-14-dev, which
# this unversioned package pulls in).
optional_packages=(clang libclang-rt-dev)

missing_from() {
    local package
    for package in "$@"; do
        dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" ||
            echo "$package"
    done
}

mapfile -t missing < <(missing_from "${packages[@]}")
mapfile -t missing_optional < <(missing_from "${optional_packages[@]}")

if [ ${#missing[@]} -eq 0 ] && [ ${#missing_optional[@]} -eq 0 ]; then
    exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
        sudo_cmd=(sudo)
    elif [ ${#missing[@]} -eq 0 ]; then
        echo "pipelens: not installing optional ${missing_optional[*]} (needs root); fuzz tests will be skipped" >&2
        exit 0
    else
        echo "pipelens: need root to install ${missing[*]} (run as root or install them yourself)" >&2
        exit 1
    fi
else
    sudo_cmd=()
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
if [ ${#missing[@]} -gt 0 ]; then
    echo "pipelens: installing missing Debian packages: ${missing[*]}"
    "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
if [ ${#missing_optional[@]} -gt 0 ]; then
    echo "pipelens: installing optional Debian packages: ${missing_optional[*]}"
    "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing_optional[@]}" ||
        echo "pipelens: could not install ${missing_optional[*]}; fuzz tests will be skipped" >&2
fi
