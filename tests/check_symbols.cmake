# cmake -DNM=<nm> -DSTATIC=<libsalvo.a> -DSHARED=<libsalvo.so> -P check_symbols.cmake
#
# The names salvo takes from a program that links it: every global symbol
# libsalvo.a defines, and every symbol libsalvo.so exports, is salvo_*,
# and the two are the same set (the SALVO_API functions). Internal
# functions (queue_init, retire_run, ...), salvo's volk (salvo_volk_*) and
# its glslang (salvo_glslang_*) are local in the archive (see
# cmake/SalvoStaticObject.cmake) and hidden in the shared library.
#
# No allow-list: nothing in the library needs a global name of its own. The
# C++ symbols of the bundled glslang and SPIRV-Tools (vtables, typeinfo,
# inline functions, STB_GNU_UNIQUE statics) are all localized; the C and
# C++ runtimes' symbols are only referenced (undefined), never defined.
# (tests/embed/check_symbols.cmake, test embed_symbols, checks the
# references too: no vk*/volk* one.)

cmake_minimum_required(VERSION 3.20)

foreach(var NM STATIC SHARED)
    if(NOT ${var})
        message(FATAL_ERROR "check_symbols.cmake: ${var} not given")
    endif()
endforeach()

set(failed FALSE)

# "<value> <type> <name>" lines (archives add "member.o:" headers and
# blank lines) -> "<type> <name>" list.
function(defined_globals out)
    execute_process(COMMAND "${NM}" ${ARGN} OUTPUT_VARIABLE text RESULT_VARIABLE rc
                    ERROR_VARIABLE err)
    if(NOT rc EQUAL 0)
        message(FATAL_ERROR "${NM} ${ARGN} failed (${rc}):\n${err}")
    endif()
    string(REGEX MATCHALL "[0-9a-fA-F]+ [A-Za-z] [^\n]+" rows "${text}")
    list(TRANSFORM rows REPLACE "^[0-9a-fA-F]+ " "")
    set(${out} "${rows}" PARENT_SCOPE)
endfunction()

# salvo_* names of the list, and the rows that are not.
function(split_salvo rows names_out others_out)
    set(names "")
    set(others "")
    foreach(row IN LISTS rows)
        string(REGEX REPLACE "^[A-Za-z] " "" name "${row}")
        if(name MATCHES "^salvo_")
            list(APPEND names "${name}")
        else()
            list(APPEND others "${row}")
        endif()
    endforeach()
    list(REMOVE_DUPLICATES names)
    list(SORT names)
    set(${names_out} "${names}" PARENT_SCOPE)
    set(${others_out} "${others}" PARENT_SCOPE)
endfunction()

function(report what rows)
    list(LENGTH rows n)
    list(SUBLIST rows 0 40 shown)
    list(JOIN shown "\n  " text)
    if(n GREATER 40)
        string(APPEND text "\n  ... and more")
    endif()
    message(SEND_ERROR "${what}: ${n} global symbol(s) not named salvo_*:\n  ${text}")
endfunction()

defined_globals(static_rows -g --defined-only "${STATIC}")
split_salvo("${static_rows}" static_names static_others)
if(static_others)
    report("${STATIC}" "${static_others}")
    set(failed TRUE)
endif()

defined_globals(shared_rows -D --defined-only "${SHARED}")
split_salvo("${shared_rows}" shared_names shared_others)
if(shared_others)
    report("${SHARED}" "${shared_others}")
    set(failed TRUE)
endif()

list(LENGTH static_names static_count)
list(LENGTH shared_names shared_count)
if(static_count EQUAL 0 OR shared_count EQUAL 0)
    message(SEND_ERROR "no salvo_* symbol: ${static_count} in ${STATIC}, "
                       "${shared_count} in ${SHARED}")
    set(failed TRUE)
endif()

# The same API both ways: a salvo_* name global in one only is an internal
# name that slipped out (a salvo_-prefixed helper the archive left global)
# or a SALVO_API function one of the two lost.
set(only_static ${static_names})
set(only_shared ${shared_names})
if(shared_names)
    list(REMOVE_ITEM only_static ${shared_names})
endif()
if(static_names)
    list(REMOVE_ITEM only_shared ${static_names})
endif()
if(only_static)
    list(JOIN only_static " " text)
    message(SEND_ERROR "global in ${STATIC}, not exported by ${SHARED}: ${text}")
    set(failed TRUE)
endif()
if(only_shared)
    list(JOIN only_shared " " text)
    message(SEND_ERROR "exported by ${SHARED}, not global in ${STATIC}: ${text}")
    set(failed TRUE)
endif()

if(failed)
    message(FATAL_ERROR "symbol check failed")
endif()
message(STATUS "${STATIC}: ${static_count} global symbols, all salvo_*; "
               "${SHARED}: the same ${shared_count} exported")
