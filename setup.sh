#!/usr/bin/env bash
# Installs what salvo needs (Debian 12), configures build/, builds the
# library and salvo-demo first and runs the demo, then builds the rest
# (tests, examples). Safe to run again: installed packages are skipped and
# the build is incremental.
#
#   ./setup.sh [--no-demo]
#   SALVO_CMAKE_ARGS="-DSALVO_SANITIZE=address" ./setup.sh   # extra cmake arguments
set -euo pipefail

usage() {
    sed -n '2,9s/^# \{0,1\}//p' "$0"
}

start=$SECONDS
step_number=0
step() { # step WHAT: a line saying what runs now, and since when
    step_number=$((step_number + 1))
    echo "setup.sh: [$step_number/5, $((SECONDS - start)) s] $*"
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
    cmake ninja-build gcc g++ pkg-config
    libvulkan-dev libvulkan-volk-dev glslang-tools glslang-dev spirv-tools
    libcmocka-dev libpng-dev
    mesa-vulkan-drivers vulkan-validationlayers
    clang libclang-rt-14-dev
    python3-dev python3-numpy
)

step "packages"
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
# Ninja where it is installed; a build/ configured before keeps the
# generator it was made with (CMake refuses to change it).
generator=()
if [ -f build/CMakeCache.txt ]; then
    existing=$(sed -n 's/^CMAKE_GENERATOR:INTERNAL=//p' build/CMakeCache.txt)
    step "configuring build/ (${existing:-its generator})"
elif command -v ninja >/dev/null; then
    generator=(-G Ninja)
    step "configuring build/ (Ninja)"
else
    step "configuring build/"
fi
cmake -S . -B build "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo "${extra_args[@]}"

# No examples (SALVO_BUILD_EXAMPLES=OFF): no demo to build or run.
no_demo_why="--no-demo"
if grep -q '^SALVO_BUILD_EXAMPLES:BOOL=OFF$' build/CMakeCache.txt; then
    run_demo=0
    no_demo_why="no examples"
    step "building the library (no examples: SALVO_BUILD_EXAMPLES is OFF)"
    cmake --build build --parallel "$(nproc)" --target salvo_static salvo_shared
else
    step "building the library and salvo-demo"
    cmake --build build --parallel "$(nproc)" --target salvo-demo
fi

demo_rc=0
if ((run_demo)); then
    step "running build/salvo-demo"
    build/salvo-demo || demo_rc=$?
else
    step "salvo-demo not run ($no_demo_why)"
fi

step "building the rest: tests and examples"
cmake --build build --parallel "$(nproc)"

if ((demo_rc)); then
    echo "setup.sh: built in $((SECONDS - start)) s, but salvo-demo failed (exit $demo_rc)" >&2
    exit "$demo_rc"
fi
echo "setup.sh: done in $((SECONDS - start)) s; the tests: ctest --test-dir build --output-on-failure"
