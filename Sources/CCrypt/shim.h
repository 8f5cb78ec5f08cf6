#ifndef CCRYPT_SHIM_H
#define CCRYPT_SHIM_H
// libcrypt (libxcrypt on Debian): bcrypt ($2a$, $2b$, $2y$) password hashes.
#include <crypt.h>
#endif
