# cmake -DNM=<nm> -DSTATIC=<libsalvo.a> -DSHARED=<libsalvo.so> -P check_symbols.cmake
#
# What an application linking salvo can collide with:
#  - the static archive must neither define nor reference a global symbol
#    named vk* or volk* (salvo's private volk is renamed salvo_volk_*);
#  - the shared library must export salvo_* functions and nothing else.

cmake_minimum_required(VERSION 3.20)

foreach(var NM STATIC SHARED)
    if(NOT ${var})
        message(FATAL_ERROR "check_symbols.cmake: ${var} not given")
    endif()
endforeach()

set(failed FALSE)

# nm -g: "<value> <type> <name>" for definitions, "<spaces> U <name>" for references.
execute_process(COMMAND "${NM}" -g "${STATIC}" OUTPUT_VARIABLE out RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${NM} -g ${STATIC} failed (${rc})")
endif()
string(REGEX MATCHALL "[^\n]* [A-Za-z] (vk|volk)[A-Za-z0-9_]*" bad "${out}")
list(LENGTH bad n)
if(n GREATER 0)
    list(JOIN bad "\n  " text)
    message(SEND_ERROR "${STATIC} has ${n} global vk*/volk* symbol(s):\n  ${text}")
    set(failed TRUE)
else()
    string(REGEX MATCHALL " [A-Za-z] salvo_volk_[A-Za-z0-9_]*" renamed "${out}")
    list(LENGTH renamed renamed_count)
    message(STATUS "static: no global vk*/volk* symbol (${renamed_count} salvo_volk_* instead)")
endif()

execute_process(COMMAND "${NM}" -D --defined-only "${SHARED}" OUTPUT_VARIABLE out RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${NM} -D ${SHARED} failed (${rc})")
endif()
string(REGEX MATCHALL " [A-Za-z] [^\n]+" exported "${out}")
set(others "")
set(count 0)
foreach(entry IN LISTS exported)
    string(REGEX REPLACE "^ [A-Za-z] " "" name "${entry}")
    if(name MATCHES "^salvo_")
        math(EXPR count "${count} + 1")
    else()
        list(APPEND others "${name}")
    endif()
endforeach()
if(others)
    list(JOIN others "\n  " text)
    message(SEND_ERROR "${SHARED} exports symbols other than salvo_*:\n  ${text}")
    set(failed TRUE)
endif()
if(count EQUAL 0)
    message(SEND_ERROR "${SHARED} exports no salvo_* symbol at all")
    set(failed TRUE)
endif()
message(STATUS "shared: exports ${count} salvo_* symbols and nothing else")

if(failed)
    message(FATAL_ERROR "symbol check failed")
endif()
