#ifndef COPENSSL_SHIM_H
#define COPENSSL_SHIM_H
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

// Function-like macros Swift cannot import.
static inline long cossl_set_sni(SSL *s, const char *name) { return SSL_set_tlsext_host_name(s, name); }
static inline long cossl_set_min_proto(SSL_CTX *c, int v) { return SSL_CTX_set_min_proto_version(c, v); }
static inline long cossl_set_mode(SSL *s, long m) { return SSL_set_mode(s, m); }
/// SSL_OP_IGNORE_UNEXPECTED_EOF (a macro expression): treat a peer that closes without
/// close_notify as a clean end of stream, as most HTTP servers do.
static inline uint64_t cossl_op_ignore_unexpected_eof(void) { return SSL_OP_IGNORE_UNEXPECTED_EOF; }
#endif
