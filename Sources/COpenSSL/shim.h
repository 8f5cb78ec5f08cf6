#ifndef COPENSSL_SHIM_H
#define COPENSSL_SHIM_H
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/sha.h>
#include <openssl/crypto.h>

// Function-like macros Swift cannot import.
static inline long cossl_set_sni(SSL *s, const char *name) { return SSL_set_tlsext_host_name(s, name); }
static inline long cossl_set_min_proto(SSL_CTX *c, int v) { return SSL_CTX_set_min_proto_version(c, v); }
static inline long cossl_set_mode(SSL *s, long m) { return SSL_set_mode(s, m); }
/// SSL_OP_IGNORE_UNEXPECTED_EOF (a macro expression): treat a peer that closes without
/// close_notify as a clean end of stream, as most HTTP servers do.
static inline uint64_t cossl_op_ignore_unexpected_eof(void) { return SSL_OP_IGNORE_UNEXPECTED_EOF; }
static inline long cossl_ctx_set_mode(SSL_CTX *c, long m) { return SSL_CTX_set_mode(c, m); }
static inline long cossl_ctx_set_max_proto(SSL_CTX *c, int v) { return SSL_CTX_set_max_proto_version(c, v); }
static inline long cossl_ctx_set_groups_list(SSL_CTX *c, const char *list) { return SSL_CTX_set1_groups_list(c, list); }
/// Accepts any client certificate (RequestClientCert, RequireAnyClientCert: no verification).
static inline int cossl_accept_any_certificate(int ok, X509_STORE_CTX *ctx) { (void)ok; (void)ctx; return 1; }
static inline void cossl_ctx_verify_any(SSL_CTX *c, int mode) { SSL_CTX_set_verify(c, mode, cossl_accept_any_certificate); }
static inline uint64_t cossl_op_no_renegotiation(void) { return SSL_OP_NO_RENEGOTIATION; }
static inline uint64_t cossl_op_server_preference(void) { return SSL_OP_CIPHER_SERVER_PREFERENCE; }
/* Frees a connection's 16 KiB read and write buffers while it has nothing buffered (idle keep-alive). */
static inline long cossl_ctx_release_buffers(SSL_CTX *c) { return SSL_CTX_set_mode(c, SSL_MODE_RELEASE_BUFFERS); }
static inline int cossl_has_pending(const SSL *s) { return SSL_has_pending(s); }
static inline long cossl_ctx_add1_chain_cert(SSL_CTX *c, X509 *x) { return SSL_CTX_add1_chain_cert(c, x); }
#endif
