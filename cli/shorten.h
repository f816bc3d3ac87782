/*
 * shorten.h: the text transformations that make function names and locations fit a table.
 * Pure functions of a string: no state, no output; each runs in time linear in its input
 * (tests/fuzz/fuzz_names.c holds them to that on real and random names) and never returns a
 * longer text than it was given.
 */
#ifndef RHEAP_SHORTEN_H
#define RHEAP_SHORTEN_H

#include <stddef.h>

/* A copy of name with each template argument list longer than 3 characters shortened to
 * <...>: `std::vector<int, std::allocator<int> >::push_back` reads `std::vector<...>::push_back`.
 * The characters of operator<, operator<<, operator<=, operator<=>, operator> and operator->
 * are kept as a name, not taken for a list; a '<' at the start or after a blank (Rust's
 * `<T as Trait>::f`) is kept and only its insides shortened. malloc'ed; NULL on no memory. */
char *cli__name_short(const char *name);

/* A copy of name without its trailing parameter list and qualifiers, for a column too narrow
 * for both: `Table::operator[](int) const` reads `Table::operator[]`, and
 * `main::{lambda(int)#1}::operator()(int) const` reads `main::{lambda(int)#1}::operator()`.
 * A name that does not end with a parameter list (C, Rust) is copied whole. malloc'ed; NULL on
 * no memory. */
char *cli__name_without_params(const char *name);

/* Display columns of a UTF-8 string: its code points. */
size_t cli__text_columns(const char *s);

/* A copy of s cut to `keep` columns when it is wider, the cut marked with "...": the first
 * keep - 3 columns and "..." (from_end: "..." and the last keep - 3 columns, as a location
 * keeps its file:line). A keep below 4 leaves s whole. malloc'ed; NULL on no memory. */
char *cli__text_clip(const char *s, size_t keep, int from_end);

#endif
