#!/bin/sh
# Regenerates the fuzzer's seed corpus from the project's shaders: each
# compute shader compiled for Vulkan 1.0 (SPIR-V 1.0: buffers as Uniform +
# BufferBlock) and Vulkan 1.1 (SPIR-V 1.3: the StorageBuffer class), the two
# shapes reflect_spirv accepts. Needs glslangValidator (glslang-tools).
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
ls -l "$out"
