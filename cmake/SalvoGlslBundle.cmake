# cmake -DLINKER=<ld> -DNM=<nm> -DOBJCOPY=<objcopy> -DOBJECTS=<glsl.o;...>
#       -DARCHIVES=<libglslang archives> -DKEEP=<symbols> -DPREFIX=<prefix>
#       -DOUTPUT=<bundle.o> -P SalvoGlslBundle.cmake
#
# Makes the one object through which libsalvo.a carries runtime GLSL with
# nothing left for its user to link but the C++ runtime (-lstdc++):
#
#  1. ld -r: OBJECTS and the members of ARCHIVES they need (glslang and
#     SPIRV-Tools), partially linked into a single relocatable object;
#  2. objcopy --redefine-syms: every symbol it defines, local or global,
#     renamed PREFIX<name>, except the KEEP list (what salvo's own objects
#     call). Renaming (not localizing) also renames the COMDAT groups'
#     signatures, so an application that links a glslang, SPIRV-Tools or
#     C++ template instantiations of its own shares no group with this
#     object: neither copy can discard the other's.
# References it makes to the C and C++ runtimes stay as they are.

cmake_minimum_required(VERSION 3.20)

foreach(var LINKER NM OBJCOPY OBJECTS ARCHIVES KEEP PREFIX OUTPUT)
    if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
        message(FATAL_ERROR "SalvoGlslBundle.cmake: ${var} not given")
    endif()
endforeach()

set(raw "${OUTPUT}.raw.o")
execute_process(
    COMMAND "${LINKER}" -r -o "${raw}" ${OBJECTS} --start-group ${ARCHIVES} --end-group
    RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "partial link of glslang failed (${rc}):\n${err}")
endif()

execute_process(COMMAND "${NM}" --defined-only "${raw}"
    OUTPUT_VARIABLE symbols RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${NM} --defined-only ${raw} failed (${rc}):\n${err}")
endif()
# "<value> <type> <name>" -> "<name>", then the ones salvo calls dropped.
# A local name (a static function, a .LC label) may be in several of the
# objects; objcopy wants each once. (Mangled names hold no ';' or brackets,
# so a CMake list holds them as they are.)
string(REGEX REPLACE "(^|\n)[0-9a-fA-F]* *[A-Za-z?-] " "\\1" symbols "${symbols}")
string(STRIP "${symbols}" symbols)
string(REPLACE "\n" ";" symbols "${symbols}")
list(REMOVE_DUPLICATES symbols)
list(REMOVE_ITEM symbols ${KEEP})
list(TRANSFORM symbols REPLACE "^(.+)$" "\\1 ${PREFIX}\\1")
list(JOIN symbols "\n" map)
file(WRITE "${OUTPUT}.map" "${map}\n")

execute_process(
    COMMAND "${OBJCOPY}" "--redefine-syms=${OUTPUT}.map" "${raw}" "${OUTPUT}"
    RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${OBJCOPY} --redefine-syms failed (${rc}):\n${err}")
endif()

# Every KEEP symbol must still be there under its own name.
execute_process(COMMAND "${NM}" -g --defined-only "${OUTPUT}" OUTPUT_VARIABLE out)
foreach(keep IN LISTS KEEP)
    if(NOT out MATCHES "[^\n]* [A-Za-z] ${keep}(\n|$)")
        message(FATAL_ERROR "${OUTPUT} does not define ${keep}")
    endif()
endforeach()
file(REMOVE "${raw}")
