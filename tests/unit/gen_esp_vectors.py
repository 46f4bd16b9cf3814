#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Writes esp_vectors.h: ESP tunnel-mode packets encrypted by scapy, the
# independent reference the ESP unit tests compare esgw against, for every
# algorithm esgw supports, with and without extended sequence numbers.
#
# Run with the system python (it has scapy 2.5 and cryptography):
#   /usr/bin/python3 tests/unit/gen_esp_vectors.py > tests/unit/esp_vectors.h
#
# The IV of each vector is the one esgw's encap derives for the given seq,
# iv_nonce and IV key (see make_iv in crypto-worker/esp_encap.c), so esgw's
# encap output must equal scapy's packet byte for byte; the packet also has to
# decap.
import hashlib
import hmac
import struct
import sys

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from scapy.all import ICMP, IP, UDP, Raw, raw
from scapy.layers.ipsec import ESP, SecurityAssociation, _ESPPlain

# enum esp_alg -> (C name, scapy crypt algo, key length, scapy auth algo, integrity key length)
ALGS = {
    1: ("AES_GCM_128", "AES-GCM", 16, "NULL", 0),
    2: ("AES_CBC_128_HMAC_SHA1_96", "AES-CBC", 16, "HMAC-SHA1-96", 20),
    3: ("AES_GCM_256", "AES-GCM", 32, "NULL", 0),
    4: ("AES_CBC_256_HMAC_SHA1_96", "AES-CBC", 32, "HMAC-SHA1-96", 20),
    5: ("AES_CBC_128_HMAC_SHA256_128", "AES-CBC", 16, "SHA2-256-128", 32),
    6: ("AES_CBC_256_HMAC_SHA256_128", "AES-CBC", 32, "SHA2-256-128", 32),
    7: ("AES_CBC_128_HMAC_SHA512_256", "AES-CBC", 16, "SHA2-512-256", 64),
    8: ("AES_CBC_256_HMAC_SHA512_256", "AES-CBC", 32, "SHA2-512-256", 64),
    9: ("CHACHA20_POLY1305", "CHACHA20-POLY1305", 32, "NULL", 0),
    10: ("NULL_HMAC_SHA1_96", "NULL", 0, "HMAC-SHA1-96", 20),
    11: ("NULL_HMAC_SHA256_128", "NULL", 0, "SHA2-256-128", 32),
    12: ("NULL_HMAC_SHA512_256", "NULL", 0, "SHA2-512-256", 64),
}
AEAD = ("AES-GCM", "CHACHA20-POLY1305")

KEY_MATERIAL = bytes.fromhex(
    "4c80cdefbb5d10da906ac73c3613a6340123456789abcdef0123456789abcdef"
    "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
    "202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f")
SALT = bytes.fromhex("2e443b68")
NONCE = bytes.fromhex("a5a5c3c30f0f9696")
IV_KEY = bytes.fromhex("f00dfacec0ffee0123456789abcdef42")
OUTER_SRC, OUTER_DST = "192.0.2.1", "198.51.100.2"


def crypt_key(alg):
    """The cipher key of alg (different per key length), without the salt."""
    n = ALGS[alg][2]
    return KEY_MATERIAL[32 - n // 2:32 - n // 2 + n] if n else b""


def integ_key(alg):
    n = ALGS[alg][4]
    return KEY_MATERIAL[len(KEY_MATERIAL) - n:]


def esgw_iv(alg, seq):
    seq_be = seq.to_bytes(8, "big")
    crypt = ALGS[alg][1]
    if crypt in AEAD:
        return bytes(a ^ b for a, b in zip(seq_be, NONCE))
    if crypt == "NULL":
        return b""
    enc = Cipher(algorithms.AES(IV_KEY), modes.ECB()).encryptor()
    return enc.update(NONCE + seq_be) + enc.finalize()


def make_sa(alg, spi, ip_id, tos, integ=None, salt=SALT, esn=False):
    _, crypt, _, auth, _ = ALGS[alg]
    tunnel = IP(src=OUTER_SRC, dst=OUTER_DST, ttl=64, id=ip_id, tos=tos, flags=0)
    key = crypt_key(alg) + (salt if crypt in AEAD else b"")
    if auth == "NULL":
        return SecurityAssociation(ESP, spi=spi, crypt_algo=crypt, crypt_key=key,
                                   auth_algo="NULL", tunnel_header=tunnel, esn_en=esn)
    return SecurityAssociation(ESP, spi=spi, crypt_algo=crypt, crypt_key=key or None,
                               auth_algo=auth, auth_key=integ if integ is not None else integ_key(alg),
                               tunnel_header=tunnel, esn_en=esn)


def inner_packet(payload_len, tos=0):
    return IP(src="10.1.0.5", dst="10.2.0.7", ttl=63, id=0x1234, tos=tos) / ICMP(id=7, seq=1) / Raw(
        bytes((i * 7) & 0xff for i in range(payload_len)))


def crafted(sa, alg, spi, seq, ip_id, data, nh, corrupt_padding=False):
    """An ESP packet scapy's encrypt() would not build: another next header or
    wrong padding bytes, still with a valid ICV."""
    esp = _ESPPlain(spi=spi, seq=seq, iv=esgw_iv(alg, seq), data=data, nh=nh)
    esp = sa.crypt_algo.pad(esp)
    if corrupt_padding:
        assert len(esp.padding) > 0
        esp.padding = b"\x00" * len(esp.padding)
    esp = sa.crypt_algo.encrypt(sa, esp, sa.crypt_key, sa.crypt_icv_size)
    sa.auth_algo.sign(esp, sa.auth_key)
    pkt = IP(src=OUTER_SRC, dst=OUTER_DST, ttl=64, id=ip_id, flags=0, proto=50) / esp
    return raw(IP(raw(pkt)))


def c_bytes(b):
    out = []
    for i in range(0, len(b), 16):
        out.append("\t" + " ".join("0x%02x," % x for x in b[i:i + 16]))
    return "\n".join(out) if out else "\t0"


vectors = []


def add(name, alg, spi, seq, ip_id, inner, packet, drop="-1", exact=0, esn=0, top=0):
    vectors.append(dict(name=name, alg=alg, spi=spi, seq=seq, ip_id=ip_id, inner=inner,
                        packet=packet, drop=drop, exact=exact, esn=esn, top=top))


HASHES = {"HMAC-SHA1-96": (hashlib.sha1, 12), "SHA2-256-128": (hashlib.sha256, 16),
          "SHA2-512-256": (hashlib.sha512, 32)}


def encrypt(sa, alg, inner, seq, esn):
    # Scapy takes seq_num 0 for "use your own counter": make that 0 too.
    sa.seq_num = seq & 0xffffffff
    if not esn:
        return raw(sa.encrypt(IP(inner), seq_num=seq, iv=esgw_iv(alg, seq)))
    pkt = raw(sa.encrypt(IP(inner), seq_num=seq & 0xffffffff, iv=esgw_iv(alg, seq),
                         esn_en=True, esn=seq >> 32))
    auth = ALGS[alg][3]
    if auth == "NULL":
        return pkt  # AEAD: scapy puts seq_hi into the AAD itself
    # Scapy 2.5 signs ESP without seq_hi even with esn_en (it handles ESN for
    # AH only), so the ICV comes from Python's hmac: RFC 4303 2.2.1 appends
    # seq_hi to the data the ICV covers, without sending it.
    hashfn, icv_len = HASHES[auth]
    body = pkt[20:-icv_len]
    icv = hmac.new(integ_key(alg), body + struct.pack("!L", seq >> 32), hashfn).digest()
    return pkt[:-icv_len] + icv[:icv_len]


def decrypt(sa, pkt, seq, esn):
    if esn and ALGS[sa_alg(sa)][3] != "NULL":
        # The HMAC ICV was checked when it was made; scapy checks the rest.
        return None
    if esn:
        return raw(sa.decrypt(IP(pkt), esn_en=True, esn=seq >> 32))
    return raw(sa.decrypt(IP(pkt)))


def sa_alg(sa):
    return sa.spi - 0x1000


for alg, (cname, crypt, _, _, _) in ALGS.items():
    algname = cname.lower()
    spi = 0x1000 + alg
    # Inner lengths chosen so the padding takes every small value somewhere.
    sizes = (0, 1, 2, 13, 14, 56, 100, 1372) if alg <= 2 else (0, 1, 2, 13, 14, 56, 300)
    for i, payload_len in enumerate(sizes):
        seq = 1 + i * 1000
        tos = 0xb8 if i == 3 else 0
        ip_id = 0x4000 + i
        inner = raw(inner_packet(payload_len, tos))
        sa = make_sa(alg, spi, ip_id, tos)
        pkt = encrypt(sa, alg, inner, seq, False)
        # Scapy must decrypt its own packet back to the inner one.
        assert decrypt(sa, pkt, seq, False) == inner
        add("%s_icmp_%u" % (algname, len(inner)), alg, spi, seq, ip_id, inner, pkt, exact=1)
    # ESN around the 2^32 boundary: esgw's encap at these 64-bit seqs must
    # equal scapy's (seq_hi in the ICV, not on the wire), and decap must infer
    # seq_hi from the window (RFC 4303 A2.2): case A (the window within one
    # subspace) for the first three, case B (spanning two) for the late one.
    inner = raw(inner_packet(40))
    for j, (seq, top) in enumerate(((2**32 - 1, 2**32 - 2), (2**32, 2**32 - 1),
                                    (2**32 + 1, 2**32), (2**32 - 3, 2**32 + 5))):
        sa = make_sa(alg, spi, 0x6000 + j, 0, esn=True)
        pkt = encrypt(sa, alg, inner, seq, True)
        assert decrypt(sa, pkt, seq, True) in (inner, None)
        add("%s_esn_%x" % (algname, seq), alg, spi, seq, 0x6000 + j, inner, pkt, exact=1,
            esn=1, top=top)
    # The same packet with the high half wrong must fail: seq_hi is in the ICV.
    seq = 2**32 + 1
    sa = make_sa(alg, spi, 0x6010, 0, esn=True)
    add("%s_esn_wrong_hi" % algname, alg, spi, seq, 0x6010, inner, encrypt(sa, alg, inner, seq + 2**32, True),
        drop="ESGW_DROP_AUTH_FAILED", esn=1, top=2**32)
    if alg > 2 and alg not in (3, 9, 10):
        continue  # the crafted cases need one AEAD, one CBC and one NULL each
    sa = make_sa(alg, spi, 0x5000, 0)
    inner = raw(inner_packet(20))
    add("%s_tfc_dummy" % algname, alg, spi, 77, 0x5000, inner,
        crafted(sa, alg, spi, 77, 0x5000, b"\xaa" * 30, 59), drop="ESGW_DROP_TFC_DUMMY")
    add("%s_next_header_udp" % algname, alg, spi, 78, 0x5001, inner,
        crafted(sa, alg, spi, 78, 0x5001, raw(IP(dst="10.2.0.7") / UDP() / Raw(b"x" * 9))[20:], 17),
        drop="ESGW_DROP_BAD_NEXT_HEADER")
    if crypt != "NULL":  # scapy pads NULL to 4 bytes: often no padding to corrupt
        add("%s_bad_padding" % algname, alg, spi, 79, 0x5002, inner,
            crafted(sa, alg, spi, 79, 0x5002, inner, 4, corrupt_padding=True),
            drop="ESGW_DROP_BAD_PADDING")
    # Encrypted with another integrity key (HMAC) or another salt (AEAD): forged.
    if crypt in AEAD:
        other = make_sa(alg, spi, 0x5003, 0, salt=b"\0\0\0\0")
    else:
        other = make_sa(alg, spi, 0x5003, 0, integ=bytes(ALGS[alg][4]))
    add("%s_forged" % algname, alg, spi, 80, 0x5003, inner,
        raw(other.encrypt(IP(inner), seq_num=80, iv=esgw_iv(alg, 80))), drop="ESGW_DROP_AUTH_FAILED")
    # TFC padding (RFC 4303 2.7): bytes between the inner packet and the ESP
    # padding are accepted and cut off by the inner packet's total length.
    sa = make_sa(alg, spi, 0x5004, 0)
    add("%s_tfc_padding" % algname, alg, spi, 81, 0x5004, inner,
        crafted(sa, alg, spi, 81, 0x5004, inner + b"\0" * 37, 4))

def write_header(out):
    out.write("/* SPDX-License-Identifier: BSD-3-Clause */\n")
    out.write("/* ESP test vectors made by scapy %s: generated by gen_esp_vectors.py, do not edit. */\n"
              % __import__("scapy").VERSION)
    out.write("#ifndef ESGW_ESP_VECTORS_H\n#define ESGW_ESP_VECTORS_H\n\n#include <stdint.h>\n\n")
    out.write("static const uint8_t vec_salt[] = {\n%s\n};\n" % c_bytes(SALT))
    out.write("static const uint8_t vec_iv_nonce[] = {\n%s\n};\n" % c_bytes(NONCE))
    out.write("static const uint8_t vec_iv_key[] = {\n%s\n};\n" % c_bytes(IV_KEY))
    out.write("static const uint8_t vec_outer_src[] = {%s};\n" % ", ".join(OUTER_SRC.split(".")))
    out.write("static const uint8_t vec_outer_dst[] = {%s};\n\n" % ", ".join(OUTER_DST.split(".")))
    for alg in ALGS:
        out.write("static const uint8_t vec_key_%u[] = {\n%s\n};\n" % (alg, c_bytes(crypt_key(alg))))
        out.write("static const uint8_t vec_integ_%u[] = {\n%s\n};\n" % (alg, c_bytes(integ_key(alg))))
    out.write("""
/* Keys of each algorithm, indexed by enum esp_alg. */
struct esp_vector_keys {
	const uint8_t *crypto_key;
	uint8_t crypto_key_len;
	const uint8_t *integ_key;
	uint8_t integ_key_len;
	uint8_t salt_len;
};

static const struct esp_vector_keys vec_keys[] = {
	[0] = {0},
""")
    for alg, (cname, crypt, klen, _, ilen) in ALGS.items():
        out.write("\t[%u] = {vec_key_%u, %u, vec_integ_%u, %u, %u}, /* %s */\n"
                  % (alg, alg, klen, alg, ilen, 4 if crypt in AEAD else 0, cname))
    out.write("};\n\n")
    for i, v in enumerate(vectors):
        out.write("static const uint8_t vec%u_inner[] = {\n%s\n};\n" % (i, c_bytes(v["inner"])))
        out.write("static const uint8_t vec%u_packet[] = {\n%s\n};\n" % (i, c_bytes(v["packet"])))
    out.write("""
struct esp_vector {
	const char *name;
	int alg;             /* enum esp_alg */
	uint32_t spi;
	uint64_t seq;        /* all 64 bits: the high half counts only with esn */
	uint16_t ip_id;
	const uint8_t *inner; /* the inner IPv4 packet */
	uint16_t inner_len;
	const uint8_t *packet; /* outer IPv4 + ESP, as scapy built it */
	uint16_t packet_len;
	int drop;  /* -1: decap passes and yields inner; else the drop reason */
	int exact; /* 1: esgw's encap of inner must equal packet byte for byte */
	int esn;   /* the SA uses extended sequence numbers */
	uint64_t top; /* replay window top before decap (ESN inference) */
};

static const struct esp_vector esp_vectors[] = {
""")
    for i, v in enumerate(vectors):
        out.write('\t{"%s", %u, 0x%x, 0x%xull, 0x%x, vec%u_inner, %u, vec%u_packet, %u, %s, %u, %u, 0x%xull},\n'
                  % (v["name"], v["alg"], v["spi"], v["seq"], v["ip_id"], i, len(v["inner"]), i,
                     len(v["packet"]), v["drop"], v["exact"], v["esn"], v["top"]))
    out.write("};\n\n#endif\n")

# tests/fuzz/gen_corpus.py imports this module for `vectors` and the keys.
if __name__ == "__main__":
    write_header(sys.stdout)
