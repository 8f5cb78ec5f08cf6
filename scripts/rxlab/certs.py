"""The labs' certificates, made by openssl in a directory of the caller's: a lab CA, leaves it
signs (server or client), and a self-signed RSA certificate. Each is valid for two days and
written as NAME.key and NAME.pem (a leaf also leaves NAME.csr and NAME.ext, its CA a NAME.srl);
the functions return (certificate path, key path).

Used by the fault lab (its main CA and an interceptor's, and the filtered phase's CA), the web
security proof (server and client certificates) and the adversarial suite (an RSA server)."""

import os

from .util import run

EC_KEY = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes")
DAYS = "2"


def openssl(*args):
    """openssl with `args`; raises with its output when it fails (a loaded machine gets time)."""
    return run("openssl", *args, timeout=120)


def paths(d, name):
    return os.path.join(d, f"{name}.pem"), os.path.join(d, f"{name}.key")


def self_signed(d, name, key_args, cn, *extensions):
    """A self-signed certificate with a new key (`key_args`: openssl req's for it), subject
    CN=`cn` and the `extensions` (openssl -addext texts), as NAME.pem and NAME.key in `d`."""
    pem, key = paths(d, name)
    addext = [arg for extension in extensions for arg in ("-addext", extension)]
    openssl("req", "-x509", *key_args, "-keyout", key, "-out", pem, "-days", DAYS, "-subj", f"/CN={cn}", *addext)
    return pem, key


def make_ca(d, cn, name="ca"):
    """A CA certificate (EC P-256) with subject CN=`cn`, as NAME.pem and NAME.key in `d`."""
    return self_signed(
        d, name, EC_KEY, cn, "basicConstraints=critical,CA:TRUE", "keyUsage=critical,keyCertSign,cRLSign"
    )


def make_leaf(d, name, cn, san, ca="ca", usage="serverAuth"):
    """A leaf (EC P-256) signed by the CA `ca` of `d` (made by make_ca): subject CN=`cn`, the
    subject alternative names `san` (e.g. "IP:127.0.0.1,DNS:localhost") and the extended key
    usage `usage` (serverAuth or clientAuth)."""
    pem, key = paths(d, name)
    ca_pem, ca_key = paths(d, ca)
    csr, ext = os.path.join(d, f"{name}.csr"), os.path.join(d, f"{name}.ext")
    with open(ext, "w") as f:
        f.write(f"subjectAltName={san}\nbasicConstraints=CA:FALSE\nextendedKeyUsage={usage}\n")
    openssl("req", "-new", *EC_KEY, "-keyout", key, "-out", csr, "-subj", f"/CN={cn}")
    openssl(
        "x509",
        "-req",
        "-in",
        csr,
        "-CA",
        ca_pem,
        "-CAkey",
        ca_key,
        "-CAcreateserial",
        "-out",
        pem,
        "-days",
        DAYS,
        "-extfile",
        ext,
    )
    return pem, key


def make_self_signed_rsa(d, name="server", cn="127.0.0.1", san="IP:127.0.0.1,DNS:localhost"):
    """A self-signed RSA 2048 certificate (RSA so that static-RSA suites could be offered)."""
    return self_signed(d, name, ("-newkey", "rsa:2048", "-nodes"), cn, f"subjectAltName={san}")
