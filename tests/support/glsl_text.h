/*
 * The library's kernels as GLSL text, for the runtime-compilation suites
 * (they compare what glslang makes at run time with the SPIR-V built from
 * the same files at build time).
 */
#ifndef SALVO_TESTS_GLSL_TEXT_H
#define SALVO_TESTS_GLSL_TEXT_H

/* shaders/add.comp, as text. */
static const char ADD_COMP[] =
    "#version 450\n"
    "// data[i] += value for i < n: the unit of the dependent-chain tests.\n"
    "layout(local_size_x_id = 0) in;\n"
    "layout(std430, set = 0, binding = 0) buffer Data { uint data[]; };\n"
    "layout(push_constant) uniform Push { uint n; uint value; } pc;\n"
    "void main()\n"
    "{\n"
    "    uint i = gl_GlobalInvocationID.x;\n"
    "    if (i < pc.n)\n"
    "        data[i] += pc.value;\n"
    "}\n";

/* shaders/saxpy.comp, as text. */
static const char SAXPY_COMP[] =
    "#version 450\n"
    "layout(local_size_x_id = 0) in;\n"
    "layout(std430, set = 0, binding = 0) readonly buffer X { float x[]; };\n"
    "layout(std430, set = 0, binding = 1) buffer Y { float y[]; };\n"
    "layout(push_constant) uniform Push { float a; uint n; } pc;\n"
    "void main()\n"
    "{\n"
    "    uint i = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * gl_WorkGroupSize.x +\n"
    "             gl_LocalInvocationID.x;\n"
    "    if (i < pc.n)\n"
    "        y[i] = pc.a * x[i] + y[i];\n"
    "}\n";

#endif
