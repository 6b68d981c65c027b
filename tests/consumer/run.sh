#!/bin/sh
# Installs the build into a fresh prefix under the build tree, then uses it
# the three ways a project would:
#   c/          find_package(salvo), salvo_add_shader, salvo::static (C11)
#   cpp/        find_package(salvo), salvo::salvo (shared), C++17 through salvo.hpp
#   pkgconfig/  cc main.c $(pkg-config --cflags --libs salvo), and with
#               salvo-static instead (libsalvo.a by its path)
# and runs each program. Exit 77 (ctest: skipped) when the programs find no
# Vulkan device, 0 when all pass, 1 on the first failure.
#
# Set by tests/CMakeLists.txt (ctest: install_consumers):
#   CMAKE BUILD_DIR WORK SRC GENERATOR CC_BIN, and optionally CONFIG (the
#   build's configuration), MAKE_PROGRAM, CXX_BIN and PKG_CONFIG (either
#   empty: that consumer is left out, with a note) and EXTRA_FLAGS (the build's sanitizer flags,
#   which whatever links the library needs too)
set -eu

fail() {
    echo "install_consumers: $*" >&2
    exit 1
}

for var in CMAKE BUILD_DIR WORK SRC GENERATOR CC_BIN; do
    eval "val=\${$var:-}"
    [ -n "$val" ] || fail "$var is not set"
done
EXTRA_FLAGS=${EXTRA_FLAGS:-}
CONFIG=${CONFIG:-}
PKG_CONFIG=${PKG_CONFIG:-}
CXX_BIN=${CXX_BIN:-}
MAKE_PROGRAM=${MAKE_PROGRAM:-}

prefix="$WORK/prefix"
rm -rf "$WORK"
mkdir -p "$WORK"

echo "== cmake --install $BUILD_DIR --prefix $prefix"
"$CMAKE" --install "$BUILD_DIR" ${CONFIG:+--config "$CONFIG"} --prefix "$prefix" >"$WORK/install.log" ||
    { cat "$WORK/install.log" >&2; fail "cmake --install failed"; }

# What the install must contain. The library directory is whatever
# GNUInstallDirs chose (lib, lib64, lib/<multiarch>): find it by salvo.pc.
pc=$(find "$prefix" -name salvo.pc -path '*/pkgconfig/*' | head -n 1)
[ -n "$pc" ] || fail "no salvo.pc installed"
libdir=$(dirname "$(dirname "$pc")")
for f in include/salvo/salvo.h include/salvo/salvo_vulkan.h include/salvo/salvo.hpp; do
    [ -f "$prefix/$f" ] || fail "$f not installed"
done
for f in libsalvo.a libsalvo.so libsalvo.so.0 libsalvo.so.0.1.0 cmake/salvo/salvoConfig.cmake \
    cmake/salvo/salvoConfigVersion.cmake cmake/salvo/salvoTargets.cmake \
    cmake/salvo/SalvoShaders.cmake; do
    [ -e "$libdir/$f" ] || fail "$libdir/$f not installed"
done
soname=$(LC_ALL=C readelf -d "$libdir/libsalvo.so.0.1.0" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = "libsalvo.so.0" ] || fail "SONAME is '$soname', want libsalvo.so.0"
echo "installed: headers, libsalvo.a, libsalvo.so.0.1.0 (SONAME $soname), CMake package, salvo.pc"

skipped=0
# run <name> <program>: 0 passes, 77 counts as skipped, anything else fails.
run() {
    name=$1
    shift
    echo "== run $name"
    set +e
    "$@"
    rc=$?
    set -e
    case $rc in
    0) ;;
    77) skipped=$((skipped + 1)) ;;
    *) fail "$name exited $rc" ;;
    esac
}

# Multi-config generators put the program in a folder per configuration.
program() {
    if [ -n "$CONFIG" ] && [ -x "$1/$CONFIG/$2" ]; then echo "$1/$CONFIG/$2"; else echo "$1/$2"; fi
}

consumer() {
    name=$1
    shift
    echo "== configure and build tests/consumer/$name"
    set -- -S "$SRC/$name" -B "$WORK/$name" -G "$GENERATOR" -DCMAKE_PREFIX_PATH="$prefix" \
        -DCMAKE_BUILD_TYPE="$CONFIG" "$@"
    if [ -n "$MAKE_PROGRAM" ]; then
        set -- "$@" -DCMAKE_MAKE_PROGRAM="$MAKE_PROGRAM"
    fi
    "$CMAKE" "$@" >"$WORK/$name.configure.log" 2>&1 ||
        { cat "$WORK/$name.configure.log" >&2; fail "configuring $name failed"; }
    # The package found must be the one just installed, not one on the system.
    found=$(sed -n 's/^salvo_DIR:PATH=//p' "$WORK/$name/CMakeCache.txt")
    [ "$found" = "$libdir/cmake/salvo" ] || fail "$name found salvo in '$found'"
    "$CMAKE" --build "$WORK/$name" ${CONFIG:+--config "$CONFIG"} >"$WORK/$name.build.log" 2>&1 ||
        { cat "$WORK/$name.build.log" >&2; fail "building $name failed"; }
}

consumer c -DCMAKE_C_COMPILER="$CC_BIN" -DCMAKE_C_FLAGS="$EXTRA_FLAGS" \
    -DCMAKE_EXE_LINKER_FLAGS="$EXTRA_FLAGS"
exe=$(program "$WORK/c" consumer_c)
# Static: the program must not need libsalvo.so at all.
if LC_ALL=C readelf -d "$exe" | grep -q 'NEEDED.*libsalvo'; then
    fail "consumer_c links salvo::static but needs libsalvo.so"
fi
run consumer_c "$exe"

if [ -n "$CXX_BIN" ]; then
    consumer cpp -DCMAKE_CXX_COMPILER="$CXX_BIN" -DCMAKE_CXX_FLAGS="$EXTRA_FLAGS" \
        -DCMAKE_EXE_LINKER_FLAGS="$EXTRA_FLAGS"
    exe=$(program "$WORK/cpp" consumer_cpp)
    # Shared, found through the RPATH into the prefix (no LD_LIBRARY_PATH).
    resolved=$(env -u LD_LIBRARY_PATH ldd "$exe" | sed -n 's/^[[:space:]]*libsalvo\.so\.0 => \([^ ]*\).*/\1/p')
    case $resolved in
    "$libdir"/libsalvo.so.0) ;;
    *) fail "consumer_cpp resolves libsalvo.so.0 to '$resolved', not into $libdir" ;;
    esac
    run consumer_cpp env -u LD_LIBRARY_PATH "$exe"
else
    echo "== no C++ compiler: tests/consumer/cpp not built"
fi

if [ -z "$PKG_CONFIG" ]; then
    echo "== no pkg-config: tests/consumer/pkgconfig not built"
    if [ "$skipped" -gt 0 ]; then exit 77; fi
    exit 0
fi
echo "== pkg-config"
PKG_CONFIG_PATH="$libdir/pkgconfig"
export PKG_CONFIG_PATH
version=$("$PKG_CONFIG" --modversion salvo)
[ "$version" = "0.1.0" ] || fail "pkg-config --modversion salvo: '$version', want 0.1.0"
static_libs=$("$PKG_CONFIG" --static --libs salvo)
for l in -lpthread -ldl -lm; do
    case " $static_libs " in
    *" $l "*) ;;
    *) fail "pkg-config --static --libs salvo lacks $l: $static_libs" ;;
    esac
done
flags=$("$PKG_CONFIG" --cflags --libs salvo)
echo "pkg-config --cflags --libs salvo: $flags"
# Word splitting of the flags is intended, as in $(pkg-config ...).
# shellcheck disable=SC2086
"$CC_BIN" -std=c11 -Wall -Wextra -Werror $EXTRA_FLAGS -o "$WORK/consumer_pkgconfig" \
    "$SRC/pkgconfig/main.c" $flags || fail "compiling with pkg-config's flags failed"
run consumer_pkgconfig env LD_LIBRARY_PATH="$libdir" "$WORK/consumer_pkgconfig"

# The static library through pkg-config: salvo-static.pc names the archive
# by its path (-lsalvo would pick libsalvo.so, which is installed beside
# it), with what it needs, under --static or not.
static_flags=$("$PKG_CONFIG" --cflags --libs salvo-static)
echo "pkg-config --cflags --libs salvo-static: $static_flags"
[ "$("$PKG_CONFIG" --modversion salvo-static)" = "0.1.0" ] || fail "salvo-static.pc: wrong version"
[ "$("$PKG_CONFIG" --static --libs salvo-static)" = "$("$PKG_CONFIG" --libs salvo-static)" ] ||
    fail "pkg-config --static --libs salvo-static differs from --libs"
archive=""
for word in $static_flags; do
    case $word in */libsalvo.a) archive=$word ;; esac
done
[ -n "$archive" ] && [ "$(cd "$(dirname "$archive")" && pwd -P)" = "$(cd "$libdir" && pwd -P)" ] ||
    fail "pkg-config --libs salvo-static does not name $libdir/libsalvo.a: $static_flags"
# shellcheck disable=SC2086
"$CC_BIN" -std=c11 -Wall -Wextra -Werror $EXTRA_FLAGS -DCONSUMER_LINKAGE='"static"' \
    -o "$WORK/consumer_pkgconfig_static" "$SRC/pkgconfig/main.c" $static_flags ||
    fail "compiling with pkg-config's salvo-static flags failed"
if LC_ALL=C readelf -d "$WORK/consumer_pkgconfig_static" | grep -q 'NEEDED.*libsalvo'; then
    fail "consumer_pkgconfig_static links salvo-static but needs libsalvo.so"
fi
run consumer_pkgconfig_static env -u LD_LIBRARY_PATH "$WORK/consumer_pkgconfig_static"

if [ "$skipped" -gt 0 ]; then
    echo "install_consumers: built and installed fine; $skipped program(s) found no Vulkan device"
    exit 77
fi
echo "install_consumers: all consumers passed"
