/* The portable binary's one stand-in (scripts/portable-link): libswiftCore.a and
 * libswift_Concurrency.a call std::__throw_bad_array_new_length() (GLIBCXX_3.4.29, GCC 11's
 * libstdc++), which Debian 11's libstdc++ (GCC 10) lacks. Swift catches no C++ exception: the
 * runtime would end the process either way, so here it aborts. Linked only into the portable
 * binary, hidden (the symbol is not exported). */
#include <stdlib.h>

__attribute__((noreturn, visibility("hidden"))) void rx_throw_bad_array_new_length(void) __asm__(
    "_ZSt28__throw_bad_array_new_lengthv");

void rx_throw_bad_array_new_length(void) { abort(); }
