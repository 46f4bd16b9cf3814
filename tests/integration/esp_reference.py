# SPDX-License-Identifier: BSD-3-Clause
"""An independent ESP (RFC 4303) tunnel-mode implementation for the interop
matrix, written from the RFCs with Python's `cryptography` and `hmac` (no esgw
code), plus the glue that puts scapy's SecurityAssociation behind the same
interface. The matrix uses scapy wherever scapy 2.5 is right and this module
where it is not:

- scapy 2.5 signs ESP with HMAC without the high half of an extended sequence
  number (it does ESN for AH and for AEAD AAD only), so ESN with an HMAC
  integrity algorithm (aes-cbc-* and null-*) uses EspSA below;
- scapy's nat_t_header writes a UDP length of 8 (the bare header) and a zero
  UDP checksum over IPv6: neither reference builds the UDP header, the test
  wraps the ESP bytes in IP/IPv6 + UDP itself (outer_packet below).

Both references work on the ESP part only (SPI to ICV); outer headers are
the caller's."""

import hashlib
import hmac
import os
import struct

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM, ChaCha20Poly1305

# esgw alg name -> (cipher, key bytes, salt bytes, integrity hash, integ key bytes, ICV bytes)
ALGS = {
    "aes-gcm-128": ("gcm", 16, 4, None, 0, 16),
    "aes-gcm-256": ("gcm", 32, 4, None, 0, 16),
    "chacha20-poly1305": ("chacha", 32, 4, None, 0, 16),
    "aes-cbc-128-sha1-96": ("cbc", 16, 0, hashlib.sha1, 20, 12),
    "aes-cbc-256-sha1-96": ("cbc", 32, 0, hashlib.sha1, 20, 12),
    "aes-cbc-128-sha256-128": ("cbc", 16, 0, hashlib.sha256, 32, 16),
    "aes-cbc-256-sha256-128": ("cbc", 32, 0, hashlib.sha256, 32, 16),
    "aes-cbc-128-sha512-256": ("cbc", 16, 0, hashlib.sha512, 64, 32),
    "aes-cbc-256-sha512-256": ("cbc", 32, 0, hashlib.sha512, 64, 32),
    "null-sha1-96": ("null", 0, 0, hashlib.sha1, 20, 12),
    "null-sha256-128": ("null", 0, 0, hashlib.sha256, 32, 16),
    "null-sha512-256": ("null", 0, 0, hashlib.sha512, 64, 32),
}
NEXT_HEADER_IPV4, NEXT_HEADER_IPV6 = 4, 41


class EspError(Exception):
    pass


def is_aead(alg):
    return ALGS[alg][0] in ("gcm", "chacha")


def has_hmac(alg):
    return ALGS[alg][3] is not None


def key_lengths(alg):
    """(crypto key, salt, integrity key) lengths in bytes."""
    _, klen, slen, _, ilen, _ = ALGS[alg]
    return klen, slen, ilen


class EspSA:
    """One direction of an SA. keys: dict with crypto/salt/integ as bytes."""

    def __init__(self, alg, spi, keys, esn=False):
        self.alg = alg
        self.spi = spi
        self.esn = esn
        self.kind, _, _, self.hash, _, self.icv_len = ALGS[alg]
        self.key = keys.get("crypto", b"")
        self.salt = keys.get("salt", b"")
        self.integ = keys.get("integ", b"")
        self.iv_len = {"gcm": 8, "chacha": 8, "cbc": 16, "null": 0}[self.kind]
        # Padding aligns to the cipher block, and at least so that the ICV
        # starts on a 4-byte boundary (RFC 4303 2.4).
        self.align = 16 if self.kind == "cbc" else 4

    def _aad(self, seq):
        # RFC 4106 5 / RFC 7634 2.1: SPI, then the 64-bit ESN or the 32-bit seq.
        if self.esn:
            return struct.pack("!LLL", self.spi, seq >> 32, seq & 0xffffffff)
        return struct.pack("!LL", self.spi, seq & 0xffffffff)

    def _aead(self):
        return AESGCM(self.key) if self.kind == "gcm" else ChaCha20Poly1305(self.key)

    def _icv(self, covered, seq):
        # RFC 4303 2.2.1: with ESN the high half is appended to what the ICV
        # covers, but is not sent.
        if self.esn:
            covered += struct.pack("!L", seq >> 32)
        return hmac.new(self.integ, covered, self.hash).digest()[:self.icv_len]

    def encrypt(self, inner, seq, next_header=None, iv=None):
        """ESP bytes (SPI .. ICV) carrying the inner IP packet (bytes)."""
        if next_header is None:
            next_header = NEXT_HEADER_IPV6 if inner[0] >> 4 == 6 else NEXT_HEADER_IPV4
        pad_len = (-(len(inner) + 2)) % self.align
        plain = inner + bytes(range(1, pad_len + 1)) + bytes((pad_len, next_header))
        header = struct.pack("!LL", self.spi, seq & 0xffffffff)
        iv = os.urandom(self.iv_len) if iv is None else iv
        if self.kind in ("gcm", "chacha"):
            # RFC 4106 4 / RFC 7634 2: nonce = salt || explicit IV.
            sealed = self._aead().encrypt(self.salt + iv, plain, self._aad(seq))
            return header + iv + sealed
        if self.kind == "cbc":
            enc = Cipher(algorithms.AES(self.key), modes.CBC(iv)).encryptor()
            body = iv + enc.update(plain) + enc.finalize()
        else:
            body = plain
        return header + body + self._icv(header + body, seq)

    def decrypt(self, esp, seq_hi=0):
        """(seq, next header, inner bytes) of ESP bytes; EspError if the ICV,
        SPI, padding or length is wrong. seq_hi: the high half with ESN."""
        if len(esp) < 8 + self.iv_len + 2 + self.icv_len:
            raise EspError("ESP packet too short: %d bytes" % len(esp))
        spi, seq_lo = struct.unpack("!LL", esp[:8])
        if spi != self.spi:
            raise EspError("SPI 0x%x, expected 0x%x" % (spi, self.spi))
        seq = (seq_hi << 32 | seq_lo) if self.esn else seq_lo
        iv = esp[8:8 + self.iv_len]
        if self.kind in ("gcm", "chacha"):
            try:
                plain = self._aead().decrypt(self.salt + iv, esp[8 + self.iv_len:],
                                             self._aad(seq))
            except Exception as exc:
                raise EspError("AEAD tag check failed: %r" % exc)
        else:
            body, icv = esp[8:-self.icv_len], esp[-self.icv_len:]
            if not hmac.compare_digest(self._icv(esp[:8] + body, seq), icv):
                raise EspError("ICV mismatch")
            if self.kind == "cbc":
                cipher_text = body[self.iv_len:]
                if len(cipher_text) % 16:
                    raise EspError("CBC payload not a whole number of blocks")
                dec = Cipher(algorithms.AES(self.key), modes.CBC(iv)).decryptor()
                plain = dec.update(cipher_text) + dec.finalize()
            else:
                plain = body
        if (len(plain) + 8 + self.iv_len) % 4:
            raise EspError("ESP trailer not 4-byte aligned")
        pad_len, next_header = plain[-2], plain[-1]
        if pad_len + 2 > len(plain):
            raise EspError("pad length %d beyond the payload" % pad_len)
        padding = plain[-2 - pad_len:-2]
        # RFC 4303 2.4: the default padding is 1, 2, 3, ...
        if padding != bytes(range(1, pad_len + 1)):
            raise EspError("padding bytes %s are not 1, 2, 3, ..." % padding.hex())
        return seq, next_header, plain[:-2 - pad_len]


class ScapySA:
    """scapy.layers.ipsec.SecurityAssociation behind EspSA's interface: ESP
    bytes in and out; the outer header only feeds scapy (tunnel mode)."""

    CRYPT = {"gcm": "AES-GCM", "chacha": "CHACHA20-POLY1305", "cbc": "AES-CBC", "null": "NULL"}
    AUTH = {hashlib.sha1: "HMAC-SHA1-96", hashlib.sha256: "SHA2-256-128",
            hashlib.sha512: "SHA2-512-256", None: "NULL"}

    def __init__(self, alg, spi, keys, esn=False, outer_src="192.0.2.1", outer_dst="192.0.2.2"):
        from scapy.layers.inet import IP
        from scapy.layers.inet6 import IPv6
        from scapy.layers.ipsec import ESP, SecurityAssociation
        if esn and has_hmac(alg):
            raise ValueError("scapy 2.5 leaves the ESN high half out of HMAC ICVs: use EspSA")
        kind, _, _, hashfn, _, _ = ALGS[alg]
        self.alg, self.spi, self.esn = alg, spi, esn
        self.outer_src, self.outer_dst = outer_src, outer_dst
        self.v6 = ":" in outer_src
        header = IPv6(src=outer_src, dst=outer_dst) if self.v6 else IP(src=outer_src, dst=outer_dst)
        key = keys.get("crypto", b"") + keys.get("salt", b"")
        self.sa = SecurityAssociation(ESP, spi=spi, crypt_algo=self.CRYPT[kind],
                                      crypt_key=key or None, auth_algo=self.AUTH[hashfn],
                                      auth_key=keys.get("integ") or None,
                                      tunnel_header=header, esn_en=esn, esn=0)

    def encrypt(self, inner, seq, next_header=None, iv=None):
        from scapy.layers.inet import IP
        from scapy.layers.inet6 import IPv6
        from scapy.layers.ipsec import ESP
        pkt = IPv6(inner) if inner[0] >> 4 == 6 else IP(inner)
        # seq_num=0 would mean "scapy's own counter": the matrix starts at 1.
        return bytes(self.sa.encrypt(pkt, seq_num=seq, iv=iv)[ESP])

    def decrypt(self, esp, seq_hi=0):
        from scapy.layers.inet import IP
        from scapy.layers.inet6 import IPv6
        from scapy.layers.ipsec import ESP
        outer = (IPv6(src=self.outer_src, dst=self.outer_dst, nh=50) if self.v6 else
                 IP(src=self.outer_src, dst=self.outer_dst, proto=50)) / ESP(esp)
        try:
            inner = self.sa.decrypt(outer, esn_en=self.esn, esn=seq_hi)
        except Exception as exc:  # IPSecIntegrityError, bad padding, ...
            raise EspError("scapy: %r" % exc)
        raw = bytes(inner)
        seq_lo = struct.unpack("!L", esp[4:8])[0]
        return seq_lo, NEXT_HEADER_IPV6 if raw[0] >> 4 == 6 else NEXT_HEADER_IPV4, raw


def reference_sa(alg, spi, keys, esn, outer_src, outer_dst):
    """The matrix's choice of reference for one SA: scapy unless scapy 2.5
    gets the combination wrong (ESN with an HMAC integrity algorithm)."""
    if esn and has_hmac(alg):
        return EspSA(alg, spi, keys, esn)
    return ScapySA(alg, spi, keys, esn, outer_src, outer_dst)


# ------------------------------------------------------------ outer headers

def outer_packet(esp, src, dst, udp_ports=None):
    """Bytes of an outer IPv4/IPv6 packet carrying esp, plain (next header 50)
    or in UDP (RFC 3948) from udp_ports = (sport, dport). Over IPv4 the UDP
    checksum is zero (RFC 3948 2.1); over IPv6 it is computed (RFC 8200 8.1)."""
    from scapy.layers.inet import IP, UDP
    from scapy.layers.inet6 import IPv6
    from scapy.packet import Raw
    v6 = ":" in src
    ip = IPv6(src=src, dst=dst, hlim=64) if v6 else IP(src=src, dst=dst, ttl=64)
    if udp_ports is None:
        if v6:
            ip.nh = 50
        else:
            ip.proto = 50
        return bytes(ip / Raw(esp))
    udp = UDP(sport=udp_ports[0], dport=udp_ports[1])
    if not v6:
        udp.chksum = 0
    return bytes(ip / udp / Raw(esp))


def _sum16(data):
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while total >> 16:
        total = (total & 0xffff) + (total >> 16)
    return total


def parse_outer(ip):
    """(src, dst, udp ports or None, udp checksum ok, ESP bytes) of an outer
    IPv4/IPv6 packet carrying ESP or ESP in UDP; None for anything else (and
    for NAT keepalives and non-ESP markers)."""
    import ipaddress
    if len(ip) < 20:
        return None
    if ip[0] >> 4 == 6:
        if len(ip) < 40:
            return None
        proto, hdr_len = ip[6], 40
        end = 40 + struct.unpack("!H", ip[4:6])[0]
        src, dst = str(ipaddress.IPv6Address(ip[8:24])), str(ipaddress.IPv6Address(ip[24:40]))
    elif ip[0] >> 4 == 4:
        proto, hdr_len = ip[9], (ip[0] & 15) * 4
        end = struct.unpack("!H", ip[2:4])[0]
        src, dst = str(ipaddress.IPv4Address(ip[12:16])), str(ipaddress.IPv4Address(ip[16:20]))
    else:
        return None
    if end > len(ip):
        return None
    payload = ip[hdr_len:end]
    if proto == 50:
        return src, dst, None, True, payload
    if proto != 17 or len(payload) < 8:
        return None
    sport, dport, length, checksum = struct.unpack("!HHHH", payload[:8])
    if length != len(payload):
        return src, dst, (sport, dport), False, payload[8:]
    if ip[0] >> 4 == 6:
        pseudo = ip[8:40] + struct.pack("!LxxxB", length, 17)
        ok = checksum != 0 and _sum16(pseudo + payload) == 0xffff
    else:
        ok = checksum == 0 or _sum16(ip[12:20] + struct.pack("!xBH", 17, length) + payload) == 0xffff
    esp = payload[8:]
    if len(esp) < 8 or esp[:4] == b"\0\0\0\0":
        return None  # keepalive or IKE
    return src, dst, (sport, dport), ok, esp
