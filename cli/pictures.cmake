# The picture outputs of the rheap command: `rheap export` (collapsed stacks, pprof; the pprof
# encoding is the analysis library's) and `rheap report --html`, added to the `rheap` target.
# The HTML page's script and style sheet (html/) are embedded into the binary, as the converter
# embeds schema.sql.

set(_rheap_html_parts report.html report.css report.js rss.js)
set(_rheap_html_c ${CMAKE_CURRENT_BINARY_DIR}/html_parts.c)
set(_rheap_html_deps)
foreach(part IN LISTS _rheap_html_parts)
  list(APPEND _rheap_html_deps ${CMAKE_CURRENT_SOURCE_DIR}/html/${part})
endforeach()
add_custom_command(
  OUTPUT ${_rheap_html_c}
  COMMAND ${CMAKE_COMMAND} -DDIR=${CMAKE_CURRENT_SOURCE_DIR}/html -DOUT=${_rheap_html_c}
          -DPARTS=report.html,report.css,report.js,rss.js -P ${CMAKE_CURRENT_SOURCE_DIR}/embed_html.cmake
  DEPENDS ${_rheap_html_deps} ${CMAKE_CURRENT_SOURCE_DIR}/embed_html.cmake
  COMMENT "Embedding the HTML report's page")

target_sources(rheap PRIVATE export.c diff.c html.c ${_rheap_html_c})
# The host collector's commands (rheap serve, rheap snapshot), over the collector library.
target_sources(rheap PRIVATE serve.c snapshot.c)
