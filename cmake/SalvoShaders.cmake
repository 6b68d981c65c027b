# salvo_add_shader(<target> <glsl file> [NAME <name>] [TARGET_ENV <env>])
#
# Compiles a GLSL compute shader to SPIR-V at build time and embeds it as a C
# header, so that a program needs no shader files at run time:
#
#     salvo_add_shader(my_app shaders/add.comp)
#
#     #include "add.spv.h"          /* const uint32_t add_spv[]; sizeof = bytes */
#     desc.spirv = add_spv;
#     desc.spirv_size = sizeof add_spv;
#
# NAME defaults to the file name without its extension; the array is <name>_spv.
# TARGET_ENV defaults to vulkan1.1 (SPIR-V 1.3), the oldest Vulkan salvo runs on.
#
# The header lands in ${CMAKE_CURRENT_BINARY_DIR}/shaders, so call this from
# the directory that defines <target>. Several targets of one directory may
# share a shader: the rule is created once and each target depends on it.

include_guard(GLOBAL)

# Installed with salvo's CMake package: find_package(salvo) includes this
# file, so glslangValidator is looked for at the first call rather than
# here, and a project that embeds no shader does not need it.
function(salvo_add_shader target file)
    find_program(GLSLANG_VALIDATOR glslangValidator REQUIRED
                 DOC "glslangValidator (Debian: glslang-tools)")
    cmake_parse_arguments(PARSE_ARGV 2 arg "" "NAME;TARGET_ENV" "")
    if(arg_UNPARSED_ARGUMENTS)
        message(FATAL_ERROR "salvo_add_shader: unexpected arguments: ${arg_UNPARSED_ARGUMENTS}")
    endif()
    if(NOT TARGET ${target})
        message(FATAL_ERROR "salvo_add_shader: ${target} is not a target")
    endif()

    get_filename_component(src "${file}" ABSOLUTE)
    if(NOT EXISTS "${src}")
        message(FATAL_ERROR "salvo_add_shader: ${src} does not exist")
    endif()
    set(name "${arg_NAME}")
    if(NOT name)
        get_filename_component(name "${src}" NAME_WE)
    endif()
    if(NOT name MATCHES "^[A-Za-z_][A-Za-z0-9_]*$")
        message(FATAL_ERROR "salvo_add_shader: '${name}' cannot name a C array; pass NAME")
    endif()
    set(env "${arg_TARGET_ENV}")
    if(NOT env)
        set(env vulkan1.1)
    endif()

    set(dir "${CMAKE_CURRENT_BINARY_DIR}/shaders")
    set(out "${dir}/${name}.spv.h")
    # glslangValidator does not create the directory it writes to.
    file(MAKE_DIRECTORY "${dir}")

    # One rule per output: a second add_custom_command for the same file is an
    # error, and with Makefiles two targets each owning the rule would race to
    # write it. Two different shaders mapping to one name would silently
    # shadow each other, so that is refused.
    string(MD5 key "${out}")
    get_property(known GLOBAL PROPERTY "SALVO_SHADER_${key}" SET)
    if(known)
        get_property(rule GLOBAL PROPERTY "SALVO_SHADER_${key}")
        list(GET rule 0 rule_target)
        list(GET rule 1 rule_src)
        list(GET rule 2 rule_env)
        if(NOT rule_src STREQUAL src OR NOT rule_env STREQUAL env)
            message(FATAL_ERROR "salvo_add_shader: ${name}.spv.h is already built from "
                                "${rule_src} (${rule_env}); cannot also build it from "
                                "${src} (${env}) in ${CMAKE_CURRENT_SOURCE_DIR}. Rename one or pass NAME.")
        endif()
    else()
        add_custom_command(
            OUTPUT "${out}"
            COMMAND "${GLSLANG_VALIDATOR}" -V --target-env ${env} --vn ${name}_spv
                    --depfile "${out}.d" -o "${out}" "${src}"
            MAIN_DEPENDENCY "${src}"
            DEPENDS "${GLSLANG_VALIDATOR}"
            # GLSL #include lines become dependencies too.
            DEPFILE "${out}.d"
            COMMENT "Compiling shader ${name} (${env})"
            VERBATIM)
        file(RELATIVE_PATH rel "${CMAKE_BINARY_DIR}" "${dir}")
        string(MAKE_C_IDENTIFIER "salvo_shader_${rel}_${name}" rule_target)
        add_custom_target(${rule_target} DEPENDS "${out}")
        set_property(GLOBAL PROPERTY "SALVO_SHADER_${key}" "${rule_target};${src};${env}")
    endif()

    target_sources(${target} PRIVATE "${out}")
    target_include_directories(${target} PRIVATE "${dir}")
    add_dependencies(${target} ${rule_target})
endfunction()
