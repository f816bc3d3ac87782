# The picture outputs of the rheap command: `rheap export` (collapsed stacks, pprof; the pprof
# encoding is the analysis library's) and `rheap report --html`, added to the `rheap` target.
# The HTML page's script and style sheet (html/) are embedded into the binary, as the converter
# embeds schema.sql.

# The scripts run in this order, as one script: each file before report.js defines what
# report.js calls (cli/README.md says what each holds).
set(_rheap_html_parts report.html report.css table.js weights.js views.js rss.js moment.js report.js)
string(JOIN "," _rheap_html_list ${_rheap_html_parts})
set(_rheap_html_c ${CMAKE_CURRENT_BINARY_DIR}/html_parts.c)
set(_rheap_html_deps)
foreach(part IN LISTS _rheap_html_parts)
  list(APPEND _rheap_html_deps ${CMAKE_CURRENT_SOURCE_DIR}/html/${part})
endforeach()
add_custom_command(
  OUTPUT ${_rheap_html_c}
  COMMAND ${CMAKE_COMMAND} -DDIR=${CMAKE_CURRENT_SOURCE_DIR}/html -DOUT=${_rheap_html_c}
          -DPARTS=${_rheap_html_list} -P ${CMAKE_CURRENT_SOURCE_DIR}/embed_html.cmake
  DEPENDS ${_rheap_html_deps} ${CMAKE_CURRENT_SOURCE_DIR}/embed_html.cmake
  COMMENT "Embedding the HTML report's page")

target_sources(rheap PRIVATE export.c diff.c html.c ${_rheap_html_c})
# The host collector's commands (rheap serve, rheap snapshot), over the collector library.
target_sources(rheap PRIVATE serve.c snapshot.c)
