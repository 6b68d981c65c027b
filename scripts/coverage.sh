#!/usr/bin/env bash
# Line and branch coverage of src/ by the unit and lavapipe suites.
#
#   scripts/coverage.sh [ctest arguments...]
#
# Configures a gcc --coverage Debug build in build-cov/, runs the unit and
# lavapipe labels (or what the arguments select instead), then summarizes
# gcov's counts per file, per directory and in total. Needs only gcc and
# gcov; nothing is installed. Not part of CI.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
build=$root/build-cov

cmake -S . -B "$build" -DCMAKE_C_COMPILER=gcc -DCMAKE_BUILD_TYPE=Debug \
      -DCMAKE_C_FLAGS=--coverage -DCMAKE_EXE_LINKER_FLAGS=--coverage \
      -DCMAKE_SHARED_LINKER_FLAGS=--coverage -DCMAKE_MODULE_LINKER_FLAGS=--coverage \
      -DSALVO_BUILD_EXAMPLES=OFF >/dev/null
cmake --build "$build" --parallel "$(nproc)" >/dev/null

# Counts from an earlier run would add up with this one.
find "$build" -name '*.gcda' -delete
if (($#)); then
    ctest --test-dir "$build" --output-on-failure "$@" || echo "coverage.sh: some tests failed" >&2
else
    ctest --test-dir "$build" --output-on-failure -L 'unit|lavapipe' ||
        echo "coverage.sh: some tests failed (coverage below is still what ran)" >&2
fi

# The library's objects: each .c of src/ is compiled once, into
# salvo_objects (or a target of its own, as salvo_glsl); the tests link
# those objects, so their counts land beside them.
notes=$(find "$build/CMakeFiles" -path '*.dir/src/*' -name '*.c.gcno' |
        awk -F'[.]dir/src/' '{ print $2 "\t" $0 }' | sort | cut -f2)
if [[ -z $notes ]]; then
    echo "coverage.sh: no notes (.gcno) of src/ under $build/CMakeFiles" >&2
    exit 1
fi

summary=$(mktemp)
trap 'rm -f "$summary"' EXIT
(
    cd "$build"
    for gcno in $notes; do
        rel=${gcno#*.dir/src/}          # api/device.c.gcno
        src=$root/src/${rel%.gcno}      # .../src/api/device.c
        # -n: no .gcov files, only the summary; -b: branches too. -o names
        # the object (CMake's notes are device.c.gcno, not device.gcno).
        gcov -b -n -o "${gcno%.gcno}.o" "$src" 2>/dev/null || true
    done
) >"$summary"

# gcov prints, per source file it saw (headers included):
#   File '/abs/path'
#   Lines executed:85.00% of 400
#   Branches executed:90.00% of 200
#   Taken at least once:70.00% of 200
# Only src/*.c files are counted, each once.
awk -v root="$root/src/" '
function count(pct, total) { return int(pct * total / 100 + 0.5) }
/^File / {
    f = $0; sub(/^File \047/, "", f); sub(/\047$/, "", f)
    keep = index(f, root) == 1 && f ~ /\.c$/ && !(f in seen)
    if (keep) { seen[f] = 1; name = substr(f, length(root) + 1); order[++n] = name }
    next
}
keep && /^Lines executed:/ {
    split($0, a, /[:% ]+/); l_tot[name] = a[5]; l_hit[name] = count(a[3], a[5])
}
keep && /^Taken at least once:/ {
    split($0, a, /[:% ]+/); b_tot[name] = a[7]; b_hit[name] = count(a[5], a[7])
}
function pct(h, t) { return t ? sprintf("%6.1f%%", 100 * h / t) : "     -" }
END {
    printf "%-28s %18s %18s\n", "src/", "lines", "branches taken"
    for (i = 1; i <= n; i++) {
        f = order[i]; d = f; sub(/\/.*/, "", d)
        printf "%-28s %7d/%-6d %s %7d/%-6d %s\n", f, l_hit[f], l_tot[f], pct(l_hit[f], l_tot[f]),
               b_hit[f], b_tot[f], pct(b_hit[f], b_tot[f])
        dl_h[d] += l_hit[f]; dl_t[d] += l_tot[f]; db_h[d] += b_hit[f]; db_t[d] += b_tot[f]
        L_h += l_hit[f]; L_t += l_tot[f]; B_h += b_hit[f]; B_t += b_tot[f]
    }
    print ""
    split("accel api base core", dirs, " ")
    for (i = 1; i <= 4; i++) {
        d = dirs[i]
        if (!(d in dl_t))
            continue
        printf "%-28s %7d/%-6d %s %7d/%-6d %s\n", d "/", dl_h[d], dl_t[d], pct(dl_h[d], dl_t[d]),
               db_h[d], db_t[d], pct(db_h[d], db_t[d])
    }
    printf "%-28s %7d/%-6d %s %7d/%-6d %s\n", "total", L_h, L_t, pct(L_h, L_t), B_h, B_t, pct(B_h, B_t)
}' "$summary"
