#!/bin/sh
# Regenerates the fuzzer's seed corpus from the project's shaders: each
# compute shader compiled for Vulkan 1.0 (SPIR-V 1.0: buffers as Uniform +
# BufferBlock) and Vulkan 1.1 (SPIR-V 1.3: the StorageBuffer class), the two
# buffer shapes reflect_spirv reads; and every kernel of the compatibility
# suite (tests/compat/, lava_compat) for each target its "// targets:" line
# names, as compat_<name>-<env>.spv: feature kernels (capabilities, 8/16/64-bit
# types, buffer references, LocalSizeId in SPIR-V 1.6), arrays of buffers,
# aliased bindings, and the modules salvo refuses (images, samplers,
# acceleration structures, runtime arrays, set 1, oversized workgroup memory
# and push blocks). A compat file with an "// optional:" line is left out
# where this glslang does not compile it, unless tests/compat/ holds the same
# kernel in SPIR-V assembly (<name>.spvasm), assembled instead. Needs
# glslangValidator (glslang-tools), and spirv-as (spirv-tools) for those.
set -eu
cd "$(dirname "$0")/../.."
out=tests/fuzz/corpus
mkdir -p "$out"
for src in shaders/*.comp tests/shaders/*.comp; do
    name=$(basename "$src" .comp)
    for env in vulkan1.0 vulkan1.1; do
        glslangValidator -V --target-env "$env" -o "$out/$name-$env.spv" "$src" >/dev/null
    done
done
for src in tests/compat/*.comp; do
    name=$(basename "$src" .comp)
    envs=$(sed -n 's|^// targets:[[:space:]]*||p' "$src")
    if [ -z "$envs" ]; then
        echo "$src: no '// targets:' line" >&2
        exit 1
    fi
    for env in $envs; do
        dst="$out/compat_$name-$env.spv"
        if grep -q '^// optional:' "$src"; then
            if ! glslangValidator -V --target-env "$env" -o "$dst" "$src" >/dev/null 2>&1; then
                rm -f "$dst"
                asm="tests/compat/$name.spvasm"
                if [ -f "$asm" ]; then
                    spirv-as --target-env "$env" -o "$dst" "$asm"
                else
                    echo "left out: $src ($env) does not compile here" >&2
                fi
            fi
        else
            glslangValidator -V --target-env "$env" -o "$dst" "$src" >/dev/null
        fi
    done
done
ls -l "$out"
