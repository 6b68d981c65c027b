#version 450
// targets: vulkan1.0 vulkan1.1 vulkan1.3
// The Vulkan memory model: device-scope atomics with explicit semantics
// and a coherent buffer.
#pragma use_vulkan_memory_model
#extension GL_KHR_memory_scope_semantics : require
layout(local_size_x = 64) in;
layout(std430, binding = 0) coherent buffer Out { uint count; uint sum; uint d[]; };
void main()
{
    uint i = gl_GlobalInvocationID.x;
    atomicAdd(count, 1u, gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsRelaxed);
    atomicAdd(sum, i, gl_ScopeWorkgroup, gl_StorageSemanticsBuffer, gl_SemanticsAcquireRelease);
    atomicStore(d[i], i * 9u + 1u, gl_ScopeDevice, gl_StorageSemanticsBuffer,
                gl_SemanticsRelease);
}
