# The picture outputs of the rheap command: `rheap export` (collapsed stacks, pprof) and
# `rheap report --html`, added to the `rheap` target.
#
# pprof's profile.proto comes from Debian's golang-github-google-pprof-dev and is compiled by
# protoc-c (protobuf-c-compiler) into C at build time; the code links libprotobuf-c and zlib.
# The HTML page's script and style sheet (html/) are embedded into the binary, as the converter
# embeds schema.sql.

find_program(RHEAP_PROTOC_C protoc-c)
find_file(RHEAP_PPROF_PROTO profile.proto
  PATHS /usr/share/gocode/src/github.com/google/pprof/proto
  DOC "pprof's profile.proto (Debian: golang-github-google-pprof-dev)")
pkg_check_modules(PROTOBUF_C IMPORTED_TARGET libprotobuf-c)
pkg_check_modules(ZLIB IMPORTED_TARGET zlib)
if(NOT RHEAP_PROTOC_C OR NOT RHEAP_PPROF_PROTO OR NOT PROTOBUF_C_FOUND OR NOT ZLIB_FOUND)
  message(FATAL_ERROR "rheap export needs protoc-c, pprof's profile.proto, libprotobuf-c and "
    "zlib: apt-get install protobuf-c-compiler libprotobuf-c-dev "
    "golang-github-google-pprof-dev zlib1g-dev (scripts/setup.sh)")
endif()

get_filename_component(_rheap_proto_dir ${RHEAP_PPROF_PROTO} DIRECTORY)
set(_rheap_pb ${CMAKE_CURRENT_BINARY_DIR}/profile.pb-c)
add_custom_command(
  OUTPUT ${_rheap_pb}.c ${_rheap_pb}.h
  COMMAND ${RHEAP_PROTOC_C} --proto_path=${_rheap_proto_dir} --c_out=${CMAKE_CURRENT_BINARY_DIR}
          ${RHEAP_PPROF_PROTO}
  DEPENDS ${RHEAP_PPROF_PROTO}
  COMMENT "Compiling pprof's profile.proto with protoc-c")
# The generated code is not ours to keep warning-free.
set_source_files_properties(${_rheap_pb}.c PROPERTIES COMPILE_OPTIONS "-w")

set(_rheap_html_parts report.html report.css report.js)
set(_rheap_html_c ${CMAKE_CURRENT_BINARY_DIR}/html_parts.c)
set(_rheap_html_deps)
foreach(part IN LISTS _rheap_html_parts)
  list(APPEND _rheap_html_deps ${CMAKE_CURRENT_SOURCE_DIR}/html/${part})
endforeach()
add_custom_command(
  OUTPUT ${_rheap_html_c}
  COMMAND ${CMAKE_COMMAND} -DDIR=${CMAKE_CURRENT_SOURCE_DIR}/html -DOUT=${_rheap_html_c}
          -DPARTS=report.html,report.css,report.js -P ${CMAKE_CURRENT_SOURCE_DIR}/embed_html.cmake
  DEPENDS ${_rheap_html_deps} ${CMAKE_CURRENT_SOURCE_DIR}/embed_html.cmake
  COMMENT "Embedding the HTML report's page")

target_sources(rheap PRIVATE export.c diff.c pprof.c html.c heap.c heapprof.c http.c serve.c
  servepages.c reports.c dumps.c snapshot.c cgroup.c ${_rheap_pb}.c ${_rheap_html_c})
target_include_directories(rheap PRIVATE ${CMAKE_CURRENT_BINARY_DIR})
target_link_libraries(rheap PRIVATE PkgConfig::PROTOBUF_C PkgConfig::ZLIB)
