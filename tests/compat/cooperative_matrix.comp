#version 450
// targets: vulkan1.3
// optional: built only where glslang knows GL_KHR_cooperative_matrix
// A cooperative matrix (CooperativeMatrixKHR): refused unless offered.
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
layout(local_size_x = 32) in;
layout(std430, binding = 0) buffer Out { float d[]; };
void main()
{
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> c =
        coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(1.0);
    coopMatStore(c, d, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
}
