# cmake -DGUIDE=<docs/guide.md> -DCXX=<C++ compiler> -DINCLUDES=<dir|dir> -DWORK=<dir>
#       -P check_guide_cpp.cmake
#
# The guide's C++ samples (```cpp blocks) must each compile on its own as
# C++17 with -Wall -Wextra -Werror against salvo.hpp (ctest: cpp_docs_guide):
# a sample that drifts from the header fails here. A sample picks its
# error mode itself (#define SALVO_HPP_NO_EXCEPTIONS before the include).

cmake_minimum_required(VERSION 3.20)

foreach(var GUIDE CXX INCLUDES WORK)
    if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
        message(FATAL_ERROR "check_guide_cpp.cmake: ${var} not given")
    endif()
endforeach()

file(READ "${GUIDE}" text)
set(fence "```")
set(flags -std=c++17 -Wall -Wextra -Werror -Wno-unused-function -fsyntax-only)
string(REPLACE "|" ";" INCLUDES "${INCLUDES}")
foreach(dir IN LISTS INCLUDES)
    list(APPEND flags "-I${dir}")
endforeach()
file(MAKE_DIRECTORY "${WORK}")
set(count 0)
while(TRUE)
    string(FIND "${text}" "${fence}cpp\n" start)
    if(start EQUAL -1)
        break()
    endif()
    math(EXPR start "${start} + 7")
    string(SUBSTRING "${text}" ${start} -1 text)
    string(FIND "${text}" "${fence}" end)
    if(end EQUAL -1)
        message(FATAL_ERROR "${GUIDE}: a C++ sample is not closed")
    endif()
    string(SUBSTRING "${text}" 0 ${end} block)
    math(EXPR end "${end} + 3")
    string(SUBSTRING "${text}" ${end} -1 text)
    math(EXPR count "${count} + 1")
    set(file "${WORK}/guide_sample_${count}.cpp")
    file(WRITE "${file}" "${block}")
    execute_process(COMMAND "${CXX}" ${flags} "${file}"
        RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
    if(NOT rc EQUAL 0)
        message(FATAL_ERROR "the guide's C++ sample ${count} (${file}) does not compile:\n${out}${err}")
    endif()
endwhile()
if(count EQUAL 0)
    message(FATAL_ERROR "${GUIDE} has no C++ sample")
endif()
message(STATUS "${count} C++ samples of ${GUIDE} compile")
