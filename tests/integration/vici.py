# SPDX-License-Identifier: BSD-3-Clause
"""A small client of strongSwan's vici protocol (the one swanctl speaks), so
tests read charon's state as structured data instead of parsing swanctl's
text: list-sas, initiate, terminate, rekey.

Wire format: a 4-byte big-endian length, then a packet: a type byte, for
named types a length-prefixed name, then a message of elements (section
start/end, key = value, list start/item/end)."""

import socket
import struct

CMD_REQUEST, CMD_RESPONSE, CMD_UNKNOWN = 0, 1, 2
EVENT_REGISTER, EVENT_UNREGISTER, EVENT_CONFIRM, EVENT_UNKNOWN, EVENT = 3, 4, 5, 6, 7
SECTION_START, SECTION_END, KEY_VALUE, LIST_START, LIST_ITEM, LIST_END = 1, 2, 3, 4, 5, 6


class ViciError(Exception):
    pass


def encode(msg):
    out = b""
    for key, value in msg.items():
        k = key.encode()
        if isinstance(value, dict):
            out += bytes([SECTION_START, len(k)]) + k + encode(value) + bytes([SECTION_END])
        elif isinstance(value, list):
            out += bytes([LIST_START, len(k)]) + k
            for item in value:
                v = str(item).encode()
                out += bytes([LIST_ITEM]) + struct.pack(">H", len(v)) + v
            out += bytes([LIST_END])
        else:
            v = str(value).encode()
            out += bytes([KEY_VALUE, len(k)]) + k + struct.pack(">H", len(v)) + v
    return out


def decode(data):
    root = {}
    stack = [root]
    i = 0
    current_list = None
    while i < len(data):
        kind = data[i]
        i += 1
        if kind in (SECTION_START, KEY_VALUE, LIST_START):
            n = data[i]
            name = data[i + 1:i + 1 + n].decode()
            i += 1 + n
        if kind == SECTION_START:
            section = {}
            stack[-1][name] = section
            stack.append(section)
        elif kind == SECTION_END:
            stack.pop()
        elif kind == KEY_VALUE:
            (n,) = struct.unpack(">H", data[i:i + 2])
            stack[-1][name] = data[i + 2:i + 2 + n].decode(errors="replace")
            i += 2 + n
        elif kind == LIST_START:
            current_list = stack[-1][name] = []
        elif kind == LIST_ITEM:
            (n,) = struct.unpack(">H", data[i:i + 2])
            current_list.append(data[i + 2:i + 2 + n].decode(errors="replace"))
            i += 2 + n
        elif kind == LIST_END:
            current_list = None
        else:
            raise ViciError("bad vici element %d" % kind)
    return root


class Session:
    def __init__(self, path, timeout=60):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.connect(path)

    def close(self):
        self.sock.close()

    def _send(self, kind, name=None, msg=None):
        pkt = bytes([kind])
        if name is not None:
            pkt += bytes([len(name)]) + name.encode()
        if msg:
            pkt += encode(msg)
        self.sock.sendall(struct.pack(">I", len(pkt)) + pkt)

    def _recv_exact(self, n):
        buf = b""
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:
                raise ViciError("charon closed the vici connection")
            buf += chunk
        return buf

    def _recv(self):
        (n,) = struct.unpack(">I", self._recv_exact(4))
        pkt = self._recv_exact(n)
        kind = pkt[0]
        if kind == EVENT:
            ln = pkt[1]
            return kind, pkt[2:2 + ln].decode(), decode(pkt[2 + ln:])
        return kind, None, decode(pkt[1:])

    def request(self, cmd, msg=None, stream_event=None):
        """Sends a command; returns (response, [events]) when stream_event is
        given (list-sas streams list-sa events), else the response."""
        events = []
        if stream_event:
            self._send(EVENT_REGISTER, stream_event)
            kind, _, _ = self._recv()
            if kind != EVENT_CONFIRM:
                raise ViciError("event %s not registered" % stream_event)
        self._send(CMD_REQUEST, cmd, msg)
        while True:
            kind, name, body = self._recv()
            if kind == EVENT:
                events.append(body)
                continue
            if kind == CMD_UNKNOWN:
                raise ViciError("unknown vici command %s" % cmd)
            response = body
            break
        if stream_event:
            self._send(EVENT_UNREGISTER, stream_event)
            while self._recv()[0] != EVENT_CONFIRM:
                pass
            return response, events
        return response


def call(path, cmd, msg=None, stream_event=None, timeout=60):
    s = Session(path, timeout)
    try:
        return s.request(cmd, msg, stream_event)
    finally:
        s.close()


def list_sas(path):
    """Every IKE_SA as a dict (with "name" added), its CHILD_SAs under
    "child-sas" keyed by "<name>-<uniqueid>"."""
    _, events = call(path, "list-sas", stream_event="list-sa")
    sas = []
    for ev in events:
        for name, sa in ev.items():
            sa["name"] = name
            sas.append(sa)
    return sas
