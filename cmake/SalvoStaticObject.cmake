# cmake -DLINKER=<ld> -DNM=<nm> -DOBJCOPY=<objcopy> -DREADELF=<readelf>
#       -DOBJECTS=<salvo's own objects> [-DEXTRA=<more objects or archives>]
#       -DOUTPUT=<salvo.o> -P SalvoStaticObject.cmake
#
# Makes the one object that libsalvo.a holds, so that the static archive
# defines as globals exactly what the shared library exports (the SALVO_API
# functions, salvo_*), and none of the functions salvo's files share with
# each other (queue_init, retire_run, glsl_compile, salvo_volk_vk*, ...):
# an application with a queue_init of its own links beside it and keeps it.
#
#  1. ld -r: OBJECTS and EXTRA (the glslang bundle, see
#     SalvoGlslBundle.cmake: whole archives are taken whole) partially
#     linked into a single relocatable object, in which every call between
#     salvo's files is already a reference inside that object;
#  2. the names to keep global: what OBJECTS define with default visibility.
#     salvo compiles with -fvisibility=hidden and SALVO_API is
#     visibility("default"), so this is the list the shared library exports;
#  3. objcopy --keep-global-symbols: every other definition made local,
#     internal functions and the bundle's salvo_glslang_* C++ symbols alike.
#     objcopy does not localize STB_GNU_UNIQUE symbols (nm 'u': the static
#     locals of C++ inline functions and their guards, in the bundle), so
#     those are made weak first, in a pass of their own, then local.
#     Localizing is safe where it would not be for code shared with the
#     application: the bundle renamed every symbol and COMDAT group it
#     defines, so nothing outside this object names or shares any of them.
# References to the C and C++ runtimes (undefined symbols) stay as they are.

cmake_minimum_required(VERSION 3.20)

foreach(var LINKER NM OBJCOPY READELF OBJECTS OUTPUT)
    if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
        message(FATAL_ERROR "SalvoStaticObject.cmake: ${var} not given")
    endif()
endforeach()

set(extra "")
foreach(item IN LISTS EXTRA)
    if(item MATCHES "\\.a$")
        list(APPEND extra --whole-archive "${item}" --no-whole-archive)
    else()
        list(APPEND extra "${item}")
    endif()
endforeach()

set(raw "${OUTPUT}.raw.o")
set(weak "${OUTPUT}.weak.o")
file(REMOVE "${weak}")
execute_process(COMMAND "${LINKER}" -r -o "${raw}" ${OBJECTS} ${extra}
    RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "partial link of libsalvo.a's object failed (${rc}):\n${err}")
endif()

# readelf -sW: "  Num: Value Size Type Bind Vis Ndx Name". The definitions
# (Ndx not UND) bound GLOBAL or WEAK with DEFAULT visibility.
execute_process(COMMAND "${READELF}" -sW ${OBJECTS}
    OUTPUT_VARIABLE out RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${READELF} -sW failed (${rc}):\n${err}")
endif()
string(REGEX MATCHALL
       "\n *[0-9]+: [0-9a-fA-F]+ +[0-9a-fA-Fx]+ [A-Z_]+ +(GLOBAL|WEAK) +DEFAULT +[0-9A-Z]+ [^\n]+"
       rows "${out}")
set(keep "")
foreach(row IN LISTS rows)
    if(row MATCHES " UND ")
        continue()
    endif()
    string(REGEX REPLACE ".* ([^ ]+)$" "\\1" name "${row}")
    list(APPEND keep "${name}")
endforeach()
list(REMOVE_DUPLICATES keep)
list(SORT keep)
if(NOT keep)
    message(FATAL_ERROR "${OBJECTS}: no symbol of default visibility (no SALVO_API function?)")
endif()
list(JOIN keep "\n" text)
file(WRITE "${OUTPUT}.keep" "${text}\n")

# The unique (nm 'u') definitions, made weak so that the next pass can
# localize them.
execute_process(COMMAND "${NM}" --defined-only "${raw}"
    OUTPUT_VARIABLE out RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${NM} --defined-only ${raw} failed (${rc}):\n${err}")
endif()
string(REGEX MATCHALL "(^|\n)[0-9a-fA-F]* u [^\n]+" unique "${out}")
list(TRANSFORM unique REPLACE "^\n?[0-9a-fA-F]* u " "")
list(REMOVE_DUPLICATES unique)
if(unique)
    list(JOIN unique "\n" text)
    file(WRITE "${OUTPUT}.unique" "${text}\n")
    execute_process(
        COMMAND "${OBJCOPY}" "--weaken-symbols=${OUTPUT}.unique" "${raw}" "${weak}"
        RESULT_VARIABLE rc ERROR_VARIABLE err)
    if(NOT rc EQUAL 0)
        message(FATAL_ERROR "${OBJCOPY} --weaken-symbols failed (${rc}):\n${err}")
    endif()
    set(localize_from "${weak}")
else()
    file(REMOVE "${OUTPUT}.unique")
    set(localize_from "${raw}")
endif()

execute_process(
    COMMAND "${OBJCOPY}" "--keep-global-symbols=${OUTPUT}.keep" "${localize_from}" "${OUTPUT}"
    RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${OBJCOPY} --keep-global-symbols failed (${rc}):\n${err}")
endif()

# The result defines as globals exactly the list: every name of it still
# there, nothing else left.
execute_process(COMMAND "${NM}" -g --defined-only "${OUTPUT}" OUTPUT_VARIABLE out)
string(REGEX MATCHALL "[^\n]+" lines "${out}")
list(TRANSFORM lines REPLACE "^[0-9a-fA-F]* *[A-Za-z] " "")
set(missing ${keep})
if(lines)
    list(REMOVE_ITEM missing ${lines})
endif()
set(extra_globals ${lines})
list(REMOVE_ITEM extra_globals ${keep})
if(missing OR extra_globals)
    list(JOIN missing " " missing)
    list(JOIN extra_globals " " extra_globals)
    file(REMOVE "${OUTPUT}")
    message(FATAL_ERROR "${OUTPUT}: global symbols differ from ${OUTPUT}.keep; "
                        "missing: ${missing}; not localized: ${extra_globals}")
endif()
file(REMOVE "${raw}" "${weak}")
