#!/usr/bin/env bash
# Installs the Debian packages pipelens builds against, only those that are missing, so a
# fresh Debian machine needs nothing but `make demo` or `make test`. Safe to run repeatedly:
# with everything present it exits in well under a second without touching apt.
set -euo pipefail

packages=(
    build-essential cmake ninja-build pkg-config git
    libsqlite3-dev libgtest-dev libgmock-dev libbenchmark-dev
    libcli11-dev nlohmann-json3-dev libtomlplusplus-dev libfmt-dev libspdlog-dev
    libtorch-dev libgloo-dev
    libimgui-dev libglfw3-dev libgl-dev libstb-dev
    xvfb xauth libgl1-mesa-dri
)

missing=()
for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" ||
        missing+=("$package")
done

if [ ${#missing[@]} -eq 0 ]; then
    exit 0
fi

echo "pipelens: installing missing Debian packages: ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
        sudo_cmd=(sudo)
    else
        echo "pipelens: need root to install ${missing[*]} (run as root or install them yourself)" >&2
        exit 1
    fi
else
    sudo_cmd=()
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
