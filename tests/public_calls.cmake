# salvo_public_calls(<dir> <var>): the names of the public calls (each
# SALVO_API function declared in <dir>/*.h) into <var>, failing where the
# pattern finds too few to be right. Included by the checks that hold a
# list against the header (model_vocabulary, bindings_*).
function(salvo_public_calls dir var)
    file(GLOB headers "${dir}/*.h")
    set(api "")
    foreach(header IN LISTS headers)
        file(READ "${header}" text)
        # A declaration starts its line with SALVO_API; the name is the last
        # word before the first parenthesis (the #define of SALVO_API does
        # not start with it).
        string(REGEX MATCHALL "\nSALVO_API[^;(]*\\(" decls "${text}")
        foreach(decl IN LISTS decls)
            string(REGEX REPLACE ".*[ \t\n*]([A-Za-z_][A-Za-z0-9_]*)[ \t\n]*\\($" "\\1" name
                                 "${decl}")
            list(APPEND api "${name}")
        endforeach()
    endforeach()
    list(REMOVE_DUPLICATES api)
    list(LENGTH api count)
    if(count LESS 10)
        message(FATAL_ERROR "only ${count} SALVO_API functions found in ${dir}: is the pattern "
                            "still right?")
    endif()
    set(${var} "${api}" PARENT_SCOPE)
endfunction()
