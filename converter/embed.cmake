# Turns schema.sql into a C source defining `cv__schema_sql`, so the converter carries the
# schema it creates and schema.sql stays the single source of truth.
# Usage: cmake -DIN=schema.sql -DOUT=schema_sql.c -P embed.cmake
file(READ "${IN}" hex HEX)
string(REGEX REPLACE "(..)" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "((0x..,){16})" "\\1\n" bytes "${bytes}")
file(WRITE "${OUT}.new"
  "/* Generated from schema.sql by converter/embed.cmake; do not edit. */\n"
  "const char cv__schema_sql[] = {\n${bytes}0x00\n};\n")
file(RENAME "${OUT}.new" "${OUT}")
