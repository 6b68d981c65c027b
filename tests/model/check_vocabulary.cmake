# model_vocabulary: every public call (each SALVO_API function declared in
# include/salvo/*.h) must be made by model_random (named as a call in
# model.c, comments left out) and listed in the coverage table of
# tests/model/README.md (as `name`), so the tester's vocabulary cannot fall
# behind the API silently. Run by ctest (label model):
#   cmake -DINCLUDE_DIR=include/salvo -DMODEL=tests/model/model.c
#         -DREADME=tests/model/README.md -P tests/model/check_vocabulary.cmake
foreach(var INCLUDE_DIR MODEL README)
    if(NOT DEFINED ${var})
        message(FATAL_ERROR "check_vocabulary: -D${var}=... is required")
    endif()
endforeach()

include("${CMAKE_CURRENT_LIST_DIR}/../public_calls.cmake")
salvo_public_calls("${INCLUDE_DIR}" api)
list(LENGTH api count)

file(READ "${MODEL}" code)
# Comments out: a name in a comment is not a call.
string(REGEX REPLACE "/\\*([^*]|\\*+[^*/])*\\*+/" " " code "${code}")
string(REGEX REPLACE "//[^\n]*" " " code "${code}")
file(READ "${README}" readme)

set(not_called "")
set(not_listed "")
foreach(name IN LISTS api)
    if(NOT code MATCHES "[^A-Za-z0-9_]${name}[ \t\n]*\\(")
        list(APPEND not_called "${name}")
    endif()
    string(FIND "${readme}" "`${name}`" at)
    if(at EQUAL -1)
        list(APPEND not_listed "${name}")
    endif()
endforeach()

if(not_called OR not_listed)
    string(REPLACE ";" " " not_called "${not_called}")
    string(REPLACE ";" " " not_listed "${not_listed}")
    message(FATAL_ERROR
        "model_random's vocabulary is behind the public API (${count} SALVO_API functions).\n"
        "  never called in ${MODEL}: ${not_called}\n"
        "  missing from the coverage table of ${README}: ${not_listed}\n"
        "Add an op that calls each (with its outcome checked against the model) and a row "
        "for it in the table.")
endif()
message(STATUS "model_random calls all ${count} public functions, each listed in the table")
