"""The blackbox side-by-side lab's TCP services (run in the target namespace by net.py):

  python3 -m rxlab.blackboxlab.banner CERT KEY ADDRESS...

On each ADDRESS (IPv4 or IPv6):
  22    an SSH banner (`SSH-2.0-OpenSSH_9.2\\r\\n`), then reads until the client closes
  2222  a wrong banner (an SMTP greeting), then the end of the stream
  2223  accepts and says nothing
  25    SMTP with STARTTLS (EHLO offers STARTTLS before TLS, AUTH after it)
  143   IMAP with STARTTLS (`. STARTTLS`, then `. capability`)
  6667  IRC: after NICK and USER a PING, and 001 for the right PONG
  5671  TLS from the first byte; after the client's four lines, AMQP's protocol header and the
        end of the stream
CERT and KEY are the TLS server's (the lab CA's leaf). Every connection is held at most 10 s.
Prints `ready` once every socket listens; runs until it is stopped (by PID)."""

import socket
import ssl
import sys
import threading
import time

HOLD = 10.0


def readline(conn):
    """One line (bytes, without its end), read a byte at a time so that nothing after it (a TLS
    handshake) is consumed; None at the end of the stream."""
    out = bytearray()
    while len(out) < 4096:
        b = conn.recv(1)
        if not b:
            return None if not out else bytes(out)
        if b == b"\n":
            return bytes(out).rstrip(b"\r")
        out += b
    return bytes(out)


def drain(conn):
    deadline = time.time() + HOLD
    while time.time() < deadline and conn.recv(4096):
        pass


def ssh(conn, _tls):
    conn.sendall(b"SSH-2.0-OpenSSH_9.2\r\n")
    drain(conn)


def wrong(conn, _tls):
    # Half-closed after the banner: the client reads the end of the stream (never a reset, even
    # when it sends), whatever it sends is read until it closes.
    conn.sendall(b"220 mail.lab.test ESMTP ready\r\n")
    conn.shutdown(socket.SHUT_WR)
    drain(conn)


def silent(_conn, _tls):
    time.sleep(HOLD)


def smtp(conn, tls):
    conn.sendall(b"220 mail.lab.test ESMTP lab\r\n")
    secure = False
    while True:
        line = readline(conn)
        if line is None:
            return
        verb = line.split(b" ")[0].upper()
        if verb == b"EHLO":
            offer = b"250-AUTH PLAIN\r\n" if secure else b"250-STARTTLS\r\n"
            conn.sendall(b"250-mail.lab.test\r\n" + offer + b"250 8BITMIME\r\n")
        elif verb == b"STARTTLS" and not secure:
            conn.sendall(b"220 2.0.0 Ready to start TLS\r\n")
            conn = tls.wrap_socket(conn, server_side=True)
            secure = True
        elif verb == b"QUIT":
            conn.sendall(b"221 2.0.0 Bye\r\n")
            return
        else:
            conn.sendall(b"502 5.5.2 Error\r\n")


def imap(conn, tls):
    conn.sendall(b"* OK [CAPABILITY IMAP4rev1 STARTTLS] lab ready\r\n")
    while True:
        line = readline(conn)
        if line is None:
            return
        tag, _, command = line.partition(b" ")
        command = command.upper()
        if command == b"STARTTLS":
            conn.sendall(tag + b" OK Begin TLS negotiation now\r\n")
            conn = tls.wrap_socket(conn, server_side=True)
        elif command == b"CAPABILITY":
            conn.sendall(b"* CAPABILITY IMAP4rev1 AUTH=PLAIN\r\n" + tag + b" OK CAPABILITY completed\r\n")
        elif command == b"LOGOUT":
            conn.sendall(b"* BYE\r\n" + tag + b" OK LOGOUT completed\r\n")
            return
        else:
            conn.sendall(tag + b" BAD unknown command\r\n")


def irc(conn, _tls):
    seen = set()
    while len(seen) < 2:
        line = readline(conn)
        if line is None:
            return
        seen.add(line.split(b" ")[0].upper())
    conn.sendall(b"PING :lab12345\r\n")
    line = readline(conn)
    if line == b"PONG lab12345":
        conn.sendall(b":irc.lab.test 001 prober :Welcome to the lab\r\n")
    else:
        conn.sendall(b":irc.lab.test 464 prober :Bad PONG\r\n")
    drain(conn)


def amqp(conn, tls):
    # As a broker answers what is not AMQP: its protocol header, then the end of the stream
    # (close_notify), once the client's four lines are in.
    conn = tls.wrap_socket(conn, server_side=True)
    got = b""
    while got.count(b"\n") < 4:
        data = conn.recv(64)
        if not data:
            return
        got += data
    conn.sendall(b"AMQP\x00\x00\x09\x01")
    raw = conn.unwrap()
    raw.shutdown(socket.SHUT_WR)
    drain(raw)


SERVICES = {22: ssh, 2222: wrong, 2223: silent, 25: smtp, 143: imap, 6667: irc, 5671: amqp}


def serve(conn, service, tls):
    try:
        conn.settimeout(HOLD)
        service(conn, tls)
    except (OSError, ssl.SSLError):
        pass
    finally:
        conn.close()


def accept(sock, service, tls):
    while True:
        try:
            conn, _ = sock.accept()
        except OSError:
            continue
        threading.Thread(target=serve, args=(conn, service, tls), daemon=True).start()


def main(cert, key, addresses):
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(cert, key)
    for address in addresses:
        family = socket.AF_INET6 if ":" in address else socket.AF_INET
        for port, service in SERVICES.items():
            sock = socket.socket(family, socket.SOCK_STREAM)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((address, port))
            sock.listen(64)
            threading.Thread(target=accept, args=(sock, service, tls), daemon=True).start()
    print("ready", flush=True)
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3:])
