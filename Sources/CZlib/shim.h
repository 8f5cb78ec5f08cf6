#ifndef CZLIB_SHIM_H
#define CZLIB_SHIM_H
#include <zlib.h>

// deflateInit2 is a macro: a gzip stream (window bits 15 + 16 for the gzip wrapper).
static inline int czlib_deflate_init_gzip(z_stream *s, int level) {
    return deflateInit2(s, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
}
// inflateInit2 is a macro: a gzip stream, for tests.
static inline int czlib_inflate_init_gzip(z_stream *s) { return inflateInit2(s, 15 + 16); }
#endif
