# Turns the HTML report's files (html/report.html, report.css, the scripts) into one C source
# defining `cli__html_<name>_<ext>` for each, NUL-terminated, so the rheap binary carries its
# page and the files stay plain, editable HTML, CSS and JavaScript; and `cli__html_scripts`, the
# .js parts in the order given, NULL-terminated: the page runs them as one script, in that order.
# Usage: cmake -DDIR=html -DOUT=html_parts.c -DPARTS=a.html,b.js -P embed_html.cmake
string(REPLACE "," ";" PARTS "${PARTS}")
set(body "/* Generated from cli/html/ by cli/embed_html.cmake; do not edit. */\n#include <stddef.h>\n")
set(scripts "")
foreach(part IN LISTS PARTS)
  file(READ "${DIR}/${part}" hex HEX)
  string(REGEX REPLACE "(..)" "0x\\1," bytes "${hex}")
  string(REGEX REPLACE "((0x..,){16})" "\\1\n" bytes "${bytes}")
  string(REGEX REPLACE "[.]" "_" name "${part}")
  string(APPEND body "const char cli__html_${name}[] = {\n${bytes}0x00\n};\n")
  if(part MATCHES "[.]js$")
    string(APPEND scripts "    cli__html_${name},\n")
  endif()
endforeach()
string(APPEND body "const char *const cli__html_scripts[] = {\n${scripts}    NULL\n};\n")
file(WRITE "${OUT}.new" "${body}")
file(RENAME "${OUT}.new" "${OUT}")
