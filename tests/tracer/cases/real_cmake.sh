# cmake --version (a C++ program), traced and untraced.
[ -x "${CMAKE:-}" ] || skip "cmake not found"
real_program "$CMAKE" --version
