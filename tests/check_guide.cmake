# cmake -DGUIDE=<docs/guide.md> -DCC=<C compiler> -DINCLUDES=<dir|dir> -DWORK=<dir>
#       -P check_guide.cmake
#
# The guide's C samples, joined in order into one file, must compile as C11
# with -Wall -Wextra -Werror against the public header (docs_guide test):
# a sample that drifts from include/salvo/salvo.h fails here.

cmake_minimum_required(VERSION 3.20)

foreach(var GUIDE CC INCLUDES WORK)
    if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
        message(FATAL_ERROR "check_guide.cmake: ${var} not given")
    endif()
endforeach()

file(READ "${GUIDE}" text)
# A plain scan, not a CMake list: C is full of ';' (and '[' ']').
set(source "")
set(count 0)
set(fence "```")
while(TRUE)
    string(FIND "${text}" "${fence}c\n" start)
    if(start EQUAL -1)
        break()
    endif()
    math(EXPR start "${start} + 5")
    string(SUBSTRING "${text}" ${start} -1 text)
    string(FIND "${text}" "${fence}" end)
    if(end EQUAL -1)
        message(FATAL_ERROR "${GUIDE}: a C sample is not closed")
    endif()
    string(SUBSTRING "${text}" 0 ${end} block)
    string(APPEND source "${block}\n")
    math(EXPR end "${end} + 3")
    string(SUBSTRING "${text}" ${end} -1 text)
    math(EXPR count "${count} + 1")
endwhile()
if(count EQUAL 0)
    message(FATAL_ERROR "${GUIDE} has no C sample")
endif()
file(MAKE_DIRECTORY "${WORK}")
file(WRITE "${WORK}/guide_samples.c" "${source}")

set(flags -std=c11 -Wall -Wextra -Werror -Wno-unused-function -fsyntax-only)
string(REPLACE "|" ";" INCLUDES "${INCLUDES}")
foreach(dir IN LISTS INCLUDES)
    list(APPEND flags "-I${dir}")
endforeach()
execute_process(COMMAND "${CC}" ${flags} "${WORK}/guide_samples.c"
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "the guide's samples (${WORK}/guide_samples.c) do not compile:\n${out}${err}")
endif()
message(STATUS "${count} samples of ${GUIDE} compile")
