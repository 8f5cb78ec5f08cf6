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
#endif
