#!/usr/bin/env bash
# gather-deps.sh: downloads (never installs) the Debian packages that the GPU machine's build of
# pipelens needs and that machine lacks, into .device-deps/ (ignored by git), for `run` to carry.
#
# Runs HERE (the Debian 12 development machine, which has apt's package lists). Writes
# .device-deps/*.deb and .device-deps/MANIFEST (one "name version file" line per package).
# Idempotent: a package whose .deb of the candidate version is already there is not fetched
# again; .debs of other versions are removed so only one version of each travels.
#
# Which packages: what CMakeLists.txt, cmake/*.cmake, app/ and tests/CMakeLists.txt ask for
# (find_package fmt, CLI11, nlohmann_json, tomlplusplus, SQLite3, ZLIB, GTest, benchmark;
# find_library stb) with their runtime libraries, since a -dev package's .so link and CMake
# config name files of the runtime package. Not gathered: LibTorch (the GPU machine's pip
# wheel), CUDA and NCCL (/usr/local/cuda and the wheel's nvidia-nccl-cu13), gloo (built into
# the wheel's LibTorch, headers under torch/include), spdlog (pipelens does not use it), the
# GUI's packages (the device build is -DPIPELENS_GUI=OFF).
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
deps_dir="${DEVICE_DEPS_DIR:-$repo_root/.device-deps}"

# Development packages, then the runtime packages their .so links and CMake configs point to.
packages=(
    libfmt-dev libfmt9
    libcli11-dev
    nlohmann-json3-dev
    libtomlplusplus-dev libtomlplusplus3
    libsqlite3-dev libsqlite3-0
    zlib1g-dev zlib1g
    libgtest-dev
    libbenchmark-dev libbenchmark1debian
    libstb-dev libstb0
)

# As root, apt hands the download to its _apt user, who may not write here: keep it as root.
sandbox_option=()
[ "$(id -u)" -eq 0 ] && sandbox_option=(-o APT::Sandbox::User=root)

mkdir -p "$deps_dir"
cd "$deps_dir"
manifest_lines=()
for package in "${packages[@]}"; do
    version="$(apt-cache policy "$package" | awk '/Candidate:/ {print $2}')"
    if [ -z "$version" ] || [ "$version" = "(none)" ]; then
        echo "gather-deps: apt knows no candidate for $package (run apt-get update?)" >&2
        exit 1
    fi
    # apt-get download names files NAME_VERSION_ARCH.deb with ':' in the version as %3a.
    pattern="${package}_${version//:/%3a}_"
    existing="$(find . -maxdepth 1 -name "${pattern}*.deb" -print -quit)"
    find . -maxdepth 1 -name "${package}_*.deb" ! -name "${pattern}*.deb" -delete
    if [ -z "$existing" ]; then
        apt-get download -q "${sandbox_option[@]}" "$package=$version" >/dev/null
        existing="$(find . -maxdepth 1 -name "${pattern}*.deb" -print -quit)"
    fi
    manifest_lines+=("$package $version ${existing#./}")
done
# gloo's headers, for a LibTorch wheel that ships none (PyTorch 2.11's does not, so its
# ProcessGroupGloo.hpp cannot be compiled against): taken from a git directory of
# github.com/pytorch/gloo named by GLOO_GIT_DIR (a clone, or the bare snapshot the search tools'
# `fetch` brings), headers only, with the config.h gloo's CMake would write for a TCP build
# inside PyTorch (GLOO_USE_TORCH_DTYPES as PyTorch sets it). Build inputs that travel like the
# .debs, never committed. engine/CMakeLists.txt compiles ProcessGroupGloo.hpp against them before
# it builds the gloo transport, so headers that do not fit the wheel leave the stub instead.
rm -rf gloo-include
if [ -n "${GLOO_GIT_DIR:-}" ]; then
    gloo_commit="$(git --git-dir "$GLOO_GIT_DIR" rev-parse HEAD)"
    mkdir -p gloo-include
    git --git-dir "$GLOO_GIT_DIR" archive "$gloo_commit" gloo |
        tar -x -C gloo-include --wildcards '*.h' --exclude='gloo/test/*' \
            --exclude='gloo/benchmark/*' --exclude='gloo/examples/*'
    gloo_cmake="$(git --git-dir "$GLOO_GIT_DIR" show "$gloo_commit:CMakeLists.txt")"
    gloo_version() { sed -n "s/^set(GLOO_VERSION_$1 \([0-9]*\))/\1/p" <<<"$gloo_cmake" | head -1; }
    major="$(gloo_version MAJOR)" minor="$(gloo_version MINOR)" patch="$(gloo_version PATCH)"
    git --git-dir "$GLOO_GIT_DIR" show "$gloo_commit:gloo/config.h.in" |
        sed -e "s/@GLOO_VERSION_MAJOR@/${major:-0}/" -e "s/@GLOO_VERSION_MINOR@/${minor:-5}/" \
            -e "s/@GLOO_VERSION_PATCH@/${patch:-0}/" \
            -e 's/#cmakedefine01 \(GLOO_HAVE_TRANSPORT_TCP\|GLOO_USE_TORCH_DTYPES\)$/#define \1 1/' \
            -e 's/#cmakedefine01 \([A-Z_0-9]*\)$/#define \1 0/' >gloo-include/gloo/config.h
    manifest_lines+=("gloo-headers $gloo_commit gloo-include")
    echo "gloo-headers: $(find gloo-include -name '*.h' | wc -l) headers of pytorch/gloo" \
        "$gloo_commit (version ${major:-?}.${minor:-?}.${patch:-?})"
fi
printf '%s\n' "${manifest_lines[@]}" >MANIFEST

echo "gather-deps: ${#packages[@]} packages in $deps_dir:"
cat MANIFEST
echo "gather-deps: size of .device-deps: $(du -sh . | cut -f1)"
# What travels: tracked and untracked-not-ignored files plus the carried .device-deps.
tree_bytes="$(cd "$repo_root" && git ls-files -z --cached --others --exclude-standard |
    du -cb --files0-from=- 2>/dev/null | tail -1 | cut -f1)"
deps_bytes="$(du -sb . | cut -f1)"
total=$((tree_bytes + deps_bytes))
echo "gather-deps: working tree ${tree_bytes} B + deps ${deps_bytes} B = ${total} B" \
    "(limit 67108864 B)"
if [ "$total" -gt 67108864 ]; then
    echo "gather-deps: over the 64 MiB that a device run may carry" >&2
    exit 1
fi
