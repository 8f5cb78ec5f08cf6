"""Basic auth for the adversarial suite: bcrypt hashes of the system's libcrypt for web configs,
and the Authorization header a client sends."""

import base64
import ctypes
import ctypes.util
import warnings


def bcrypt_hash(password, cost=10):
    """A $2b$ bcrypt hash from the system's libcrypt (the crypt module where it still exists)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            import crypt
        h = crypt.crypt(password, crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=1 << cost))
        if h and h.startswith("$2"):
            return h
    except ImportError:
        pass
    lib = ctypes.CDLL(ctypes.util.find_library("crypt") or "libcrypt.so.1")
    lib.crypt_gensalt.restype = ctypes.c_char_p
    lib.crypt_gensalt.argtypes = [ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p, ctypes.c_int]
    lib.crypt.restype = ctypes.c_char_p
    lib.crypt.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
    salt = lib.crypt_gensalt(b"$2b$", cost, None, 0)
    return lib.crypt(password.encode(), salt).decode()


def basic(user, password):
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
