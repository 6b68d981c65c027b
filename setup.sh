#!/usr/bin/env bash
# Installs what salvo needs (Debian 12), configures and builds it in build/,
# and runs build/salvo-demo. Safe to run again: installed packages are
# skipped and the build is incremental.
#
#   ./setup.sh [--no-demo]
#   SALVO_CMAKE_ARGS="-DSALVO_SANITIZE=address" ./setup.sh   # extra cmake arguments
set -euo pipefail

usage() {
    sed -n '2,8s/^# \{0,1\}//p' "$0"
}

run_demo=1
for arg in "$@"; do
    case "$arg" in
    --no-demo) run_demo=0 ;;
    -h | --help) usage; exit 0 ;;
    *) echo "setup.sh: unknown argument '$arg'" >&2; usage >&2; exit 2 ;;
    esac
done

cd "$(dirname "$0")"

packages=(
    cmake gcc g++ pkg-config
    libvulkan-dev libvulkan-volk-dev glslang-tools glslang-dev spirv-tools
    libcmocka-dev libpng-dev
    mesa-vulkan-drivers vulkan-validationlayers
    clang libclang-rt-14-dev
)

if command -v apt-get >/dev/null && command -v dpkg-query >/dev/null; then
    missing=()
    for p in "${packages[@]}"; do
        if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
            missing+=("$p")
        fi
    done
    if ((${#missing[@]})); then
        sudo=()
        if [ "$(id -u)" -ne 0 ]; then
            if ! command -v sudo >/dev/null; then
                echo "setup.sh: need root or sudo to install: ${missing[*]}" >&2
                exit 1
            fi
            sudo=(sudo)
        fi
        echo "setup.sh: installing ${missing[*]}"
        "${sudo[@]}" apt-get update
        "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
            apt-get install -y --no-install-recommends "${missing[@]}"
    fi
else
    echo "setup.sh: not a Debian system; install the equivalents of these yourself:" >&2
    echo "  ${packages[*]}" >&2
fi

# Word-split on purpose: SALVO_CMAKE_ARGS holds several arguments.
read -r -a extra_args <<<"${SALVO_CMAKE_ARGS:-}"
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo "${extra_args[@]}"
cmake --build build --parallel "$(nproc)"

if ((run_demo)); then
    build/salvo-demo
fi
