#!/usr/bin/env python3
"""A misbehaving Hegel client for scripts/bad-input.sh.

  bad_input_client.py GEIST_SERVER CASE

Starts GEIST_SERVER (on stdin/stdout), sends it the bad input CASE names,
and prints what the server said (its reply's error, or its stderr) on
standard error. Exit status: the server's own status when it is not 0 (a
crash shows as 101 or 134, or as -N for a signal); otherwise 1 when the
server refused the input with an error reply and then ended normally once
the connection closed; 3 when the server accepted what it should have
refused. A server that never answers is ended by the timeout around this.
"""
import os
import struct
import subprocess
import sys
import zlib

MAGIC = 0x4845474C
CLOSE_ID = (1 << 31) - 1


# ---- CBOR (the subset the protocol uses) ----

def cbor_head(major, n):
    if n < 24:
        return bytes([major << 5 | n])
    for info, fmt in ((24, ">B"), (25, ">H"), (26, ">I"), (27, ">Q")):
        if n < 1 << (8 * struct.calcsize(fmt)):
            return bytes([major << 5 | info]) + struct.pack(fmt, n)
    raise ValueError(n)


def cbor(value):
    if value is None:
        return b"\xf6"
    if value is True:
        return b"\xf5"
    if value is False:
        return b"\xf4"
    if isinstance(value, int):
        if value >= 1 << 64:
            raw = value.to_bytes((value.bit_length() + 7) // 8, "big")
            return b"\xc2" + cbor_head(2, len(raw)) + raw
        return cbor_head(0, value) if value >= 0 else cbor_head(1, -1 - value)
    if isinstance(value, bytes):
        return cbor_head(2, len(value)) + value
    if isinstance(value, str):
        raw = value.encode()
        return cbor_head(3, len(raw)) + raw
    if isinstance(value, list):
        return cbor_head(4, len(value)) + b"".join(cbor(v) for v in value)
    if isinstance(value, dict):
        return cbor_head(5, len(value)) + b"".join(
            cbor(k) + cbor(v) for k, v in value.items())
    raise TypeError(value)


def uncbor(data, at=0):
    """Decodes one item at `at`; returns (value, next offset)."""
    first = data[at]
    major, info = first >> 5, first & 31
    at += 1
    if info < 24:
        n = info
    elif info in (24, 25, 26, 27):
        size = 1 << (info - 24)
        n = int.from_bytes(data[at:at + size], "big")
        at += size
    else:
        n = None
    if major == 0:
        return n, at
    if major == 1:
        return -1 - n, at
    if major in (2, 3):
        raw = data[at:at + n]
        return (raw if major == 2 else raw.decode(errors="replace")), at + n
    if major == 4:
        items = []
        for _ in range(n):
            item, at = uncbor(data, at)
            items.append(item)
        return items, at
    if major == 5:
        entries = {}
        for _ in range(n):
            key, at = uncbor(data, at)
            value, at = uncbor(data, at)
            entries[key if not isinstance(key, list) else str(key)] = value
        return entries, at
    if major == 6:
        return uncbor(data, at)
    if first == 0xf4:
        return False, at
    if first == 0xf5:
        return True, at
    if first in (0xf6, 0xf7):
        return None, at
    if first == 0xfb:
        return struct.unpack(">d", data[at:at + 8])[0], at + 8
    raise ValueError(f"CBOR byte {first:#x}")


# ---- packets ----

def packet(stream, message, payload, reply=False, magic=MAGIC, length=None,
           terminator=0x0A, bad_checksum=False):
    mid = message | (1 << 31 if reply else 0)
    size = len(payload) if length is None else length
    header = struct.pack(">IIIII", magic, 0, stream, mid, size)
    checksum = zlib.crc32(header + payload) & 0xFFFFFFFF
    if bad_checksum:
        checksum ^= 0xFFFFFFFF
    header = struct.pack(">IIIII", magic, checksum, stream, mid, size)
    return header + payload + bytes([terminator])


class Server:
    def __init__(self, binary, args=()):
        self.process = subprocess.Popen(
            [binary, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE)
        self.next_id = 1

    def send(self, raw):
        try:
            self.process.stdin.write(raw)
            self.process.stdin.flush()
        except BrokenPipeError:
            pass

    def read(self):
        """The next packet as (stream, message id, is reply, payload), or None at the end."""
        header = self.process.stdout.read(20)
        if len(header) < 20:
            return None
        _, _, stream, mid, size = struct.unpack(">IIIII", header)
        payload = self.process.stdout.read(size)
        self.process.stdout.read(1)
        return stream, mid & 0x7FFFFFFF, bool(mid >> 31), payload

    def request(self, stream, payload):
        mid = self.next_id
        self.next_id += 1
        self.send(packet(stream, mid, payload))
        return mid

    def await_reply(self, stream, mid):
        while True:
            p = self.read()
            if p is None:
                return None
            if p[2] and p[0] == stream and p[1] == mid:
                return p[3]

    def call(self, stream, message):
        reply = self.await_reply(stream, self.request(stream, cbor(message)))
        return None if reply is None else uncbor(reply)[0]

    def handshake(self):
        reply = self.await_reply(0, self.request(0, b"hegel_handshake_start"))
        assert reply and reply.startswith(b"Hegel/"), reply

    def ack(self, p, value=None):
        self.send(packet(p[0], p[1], cbor({"result": value}), reply=True))

    def finish(self):
        """Closes the connection and waits: (exit status, stderr text)."""
        try:
            self.process.stdin.close()
        except BrokenPipeError:
            pass
        self.process.stdout.read()
        status = self.process.wait()
        return status, self.process.stderr.read().decode(errors="replace")


def error_of(reply):
    if isinstance(reply, dict) and "error" in reply:
        return f"{reply.get('type', '')}: {reply['error']}"
    return None


def start_run(server, stream, **extra):
    fields = {"command": "run_test", "stream_id": stream, "test_cases": 1,
              "database": None, "seed": 1}
    fields.update(extra)
    return server.call(0, fields)


def first_case(server):
    """Starts a run of one test case and returns its stream."""
    reply = start_run(server, 1)
    assert reply == {"result": True}, reply
    p = server.read()
    event = uncbor(p[3])[0]
    server.ack(p)
    return event["stream_id"]


def refused_by_reply(server, reply):
    message = error_of(reply)
    status, stderr = server.finish()
    if status != 0:
        print(f"server exit {status}: {stderr.strip()}", file=sys.stderr)
        return status
    if message is None:
        print(f"accepted: {reply!r}", file=sys.stderr)
        return 3
    print(f"refused: {message}", file=sys.stderr)
    return 1


def refused_by_event(server, event):
    """A run that ended with test_done carrying an error."""
    status, stderr = server.finish()
    if status != 0:
        print(f"server exit {status}: {stderr.strip()}", file=sys.stderr)
        return status
    if not (isinstance(event, dict) and event.get("event") == "test_done"
            and "error" in repr(event)):
        print(f"accepted: {event!r}", file=sys.stderr)
        return 3
    print(f"refused: {event!r}", file=sys.stderr)
    return 1


def refused_by_exit(server):
    status, stderr = server.finish()
    print(f"server exit {status}: {stderr.strip()}", file=sys.stderr)
    return status if status != 0 else 3


def generate(server, case, schema):
    return server.call(case, {"command": "generate", "schema": schema})


def main():
    binary, case = sys.argv[1], sys.argv[2]
    args = ["--max-runs", "1"] if case == "too-many-runs" else []
    s = Server(binary, args)
    if case == "bad-handshake":
        s.request(0, b"hello")
        return refused_by_exit(s)
    if case == "no-handshake":
        s.send(packet(0, 1, cbor({"command": "run_test"})))
        return refused_by_exit(s)
    s.handshake()
    if case == "bad-magic":
        s.send(packet(0, 9, b"\xa0", magic=0x58454753))
        return refused_by_exit(s)
    if case == "oversized-packet":
        s.send(packet(0, 9, b"", length=100 << 20)[:20])
        return refused_by_exit(s)
    if case == "huge-length":
        s.send(packet(0, 9, b"", length=0xFFFFFFFF)[:20])
        return refused_by_exit(s)
    if case == "truncated-packet":
        s.send(packet(0, 9, b"\xa0")[:12])
        return refused_by_exit(s)
    if case == "bad-terminator":
        s.send(packet(0, 9, b"\xa0", terminator=0))
        return refused_by_exit(s)
    if case == "bad-checksum":
        s.send(packet(0, 50, cbor({"command": "x"}), bad_checksum=True))
        p = s.read()
        return refused_by_reply(s, uncbor(p[3])[0] if p else None)
    # From protocol 0.10 (the default version is later) hegel-core ends the
    # connection on a bad control message, and so does geist-server: no
    # reply, the reason on stderr, exit status 1.
    if case == "invalid-cbor":
        s.request(0, b"\xff\x00")
        return refused_by_exit(s)
    if case == "deep-cbor":
        s.request(0, b"\x81" * 100_000 + b"\x00")
        return refused_by_exit(s)
    if case == "second-handshake":
        s.request(0, b"hegel_handshake_start")
        return refused_by_exit(s)
    if case == "unknown-command":
        s.request(0, cbor({"command": "frobnicate"}))
        return refused_by_exit(s)
    if case == "test-cases-2-64":
        return refused_by_reply(s, s.call(0, {"command": "run_test", "stream_id": 1,
                                              "test_cases": 1 << 64}))
    if case == "even-stream":
        return refused_by_reply(s, start_run(s, 2))
    if case == "empty-database":
        # The run is accepted, then ends at once with test_done saying why.
        reply = start_run(s, 1, database="")
        if error_of(reply) is not None:
            return refused_by_reply(s, reply)
        p = s.read()
        event = uncbor(p[3])[0] if p else None
        if p:
            s.ack(p, True)
        return refused_by_event(s, event)
    if case == "unregistered-stream":
        return refused_by_reply(s, s.call(77, {"command": "generate"}))
    if case == "too-many-runs":
        assert start_run(s, 1) == {"result": True}
        return refused_by_reply(s, start_run(s, 3))
    case_stream = first_case(s)
    if case == "huge-string":
        schema = {"type": "string", "min_size": 1_000_000_000}
    elif case == "huge-binary":
        schema = {"type": "binary", "min_size": 1_000_000_000}
    elif case == "huge-list":
        schema = {"type": "list", "min_size": 1000,
                  "elements": {"type": "binary", "min_size": 10_000}}
    elif case == "unknown-schema":
        schema = {"type": "tesseract"}
    elif case == "inverted-bounds":
        schema = {"type": "integer", "min_value": 10, "max_value": 1}
    else:
        print(f"unknown case {case}", file=sys.stderr)
        return 64
    return refused_by_reply(s, generate(s, case_stream, schema))


if __name__ == "__main__":
    sys.exit(main())
