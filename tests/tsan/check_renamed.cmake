# check_renamed.cmake: fails when librheap exports a function the TSan test does not rename.
# An unrenamed entry point compiled into tsan_threads would replace the process's own function
# (a malloc or an exec) and the test would no longer be what it claims.
# Usage: cmake -DSOURCES=<libtrace/src> -DRENAMED=<a;b;c> -P check_renamed.cmake
file(GLOB sources ${SOURCES}/*.c)
set(missing "")
set(count 0)
foreach(source IN LISTS sources)
  file(STRINGS ${source} lines REGEX "^RHEAP_EXPORT ")
  foreach(line IN LISTS lines)
    # "RHEAP_EXPORT void *malloc(size_t size) {" -> malloc
    string(REGEX MATCH "([A-Za-z_][A-Za-z0-9_]*)\\(" name "${line}")
    set(name "${CMAKE_MATCH_1}")
    math(EXPR count "${count} + 1")
    if(name MATCHES "^rheap_")
      continue() # the rheap.h API: the test calls it under its own name
    endif()
    list(FIND RENAMED "${name}" at)
    if(at EQUAL -1)
      get_filename_component(file ${source} NAME)
      list(APPEND missing "${file}: ${name}")
    endif()
  endforeach()
endforeach()
if(count EQUAL 0)
  message(FATAL_ERROR "no RHEAP_EXPORT function found in ${SOURCES}")
endif()
if(missing)
  message(FATAL_ERROR "exported but not renamed in tests/tsan/CMakeLists.txt: ${missing}")
endif()
message(STATUS "${count} exported functions, every interposed one renamed")
