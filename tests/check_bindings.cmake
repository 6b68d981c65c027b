# bindings_cpp and bindings_python: every public call (each SALVO_API
# function declared in include/salvo/*.h) is made by the binding (named in
# its sources, comments left out: a call, or a destroy handed over as a
# function), or named in its list below with
# the reason it is left to C. A call added to the header without its
# wrapper fails here, not in a user's hands. Run by ctest (label unit):
#   cmake -DINCLUDE_DIR=include/salvo -DBINDING=cpp|python
#         "-DSOURCES=include/salvo/salvo.hpp" -P tests/check_bindings.cmake
foreach(var INCLUDE_DIR BINDING SOURCES)
    if(NOT DEFINED ${var})
        message(FATAL_ERROR "check_bindings: -D${var}=... is required")
    endif()
endforeach()

# Left to C, with why. Both: the Vulkan interop of salvo_vulkan.h hands out
# and takes Vulkan handles, which a program includes that header for.
set(vulkan_interop salvo_device_create_vk salvo_device_vk_handles salvo_buffer_vk_handle
                   salvo_vk_stream_record salvo_vk_loader_lock salvo_vk_loader_unlock)
set(except_cpp ${vulkan_interop})
set(except_python ${vulkan_interop}
    # The imported memory's lifetime is the program's, past what Python can
    # see of the buffer's pending work: NumPy data goes through Buffer.write,
    # Stream.write or a HOST buffer's view instead.
    salvo_buffer_import_host
    # A process-wide C allocator for salvo's own memory.
    salvo_default_allocator_set
    # Buffer.size keeps the size the buffer was made with.
    salvo_buffer_size)
if(NOT DEFINED except_${BINDING})
    message(FATAL_ERROR "check_bindings: BINDING is cpp or python, not '${BINDING}'")
endif()

include("${CMAKE_CURRENT_LIST_DIR}/public_calls.cmake")
salvo_public_calls("${INCLUDE_DIR}" api)
list(LENGTH api count)

set(code "")
foreach(source IN LISTS SOURCES)
    file(READ "${source}" text)
    string(APPEND code "${text}\n")
endforeach()
string(REGEX REPLACE "/\\*([^*]|\\*+[^*/])*\\*+/" " " code "${code}")
string(REGEX REPLACE "//[^\n]*" " " code "${code}")

set(missing "")
set(stale "")
foreach(name IN LISTS api)
    list(FIND except_${BINDING} "${name}" excepted)
    if(code MATCHES "[^A-Za-z0-9_]${name}[^A-Za-z0-9_]")
        if(NOT excepted EQUAL -1)
            list(APPEND stale "${name}")
        endif()
    elseif(excepted EQUAL -1)
        list(APPEND missing "${name}")
    endif()
endforeach()
foreach(name IN LISTS except_${BINDING})
    list(FIND api "${name}" at)
    if(at EQUAL -1)
        list(APPEND stale "${name}")
    endif()
endforeach()

if(missing OR stale)
    string(REPLACE ";" " " missing "${missing}")
    string(REPLACE ";" " " stale "${stale}")
    message(FATAL_ERROR
        "the ${BINDING} binding is behind the public API (${count} SALVO_API functions).\n"
        "  never called in it: ${missing}\n"
        "  listed as left to C but called there, or no longer in the header: ${stale}\n"
        "Wrap each (with a test of its outcome), or list it in tests/check_bindings.cmake "
        "with the reason.")
endif()
message(STATUS "check_bindings: the ${BINDING} binding makes ${count} public calls, less those "
               "it leaves to C")
