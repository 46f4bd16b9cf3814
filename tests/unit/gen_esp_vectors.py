#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Writes esp_vectors.h: ESP tunnel-mode packets encrypted by scapy, the
# independent reference the ESP unit tests compare esgw against.
#
# Run with the system python (it has scapy 2.5 and cryptography):
#   /usr/bin/python3 tests/unit/gen_esp_vectors.py > tests/unit/esp_vectors.h
#
# The IV of each vector is the one esgw's encap derives for the given seq and
# iv_nonce (see make_iv in crypto-worker/esp_encap.c), so esgw's encap output
# must equal scapy's packet byte for byte; the packet also has to decap.
import sys

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from scapy.all import ICMP, IP, UDP, Raw, raw
from scapy.layers.ipsec import ESP, SecurityAssociation, _ESPPlain

GCM, CBC = 1, 2  # enum esp_alg

GCM_KEY = bytes.fromhex("4c80cdefbb5d10da906ac73c3613a634")
GCM_SALT = bytes.fromhex("2e443b68")
CBC_KEY = bytes.fromhex("0123456789abcdef0123456789abcdef")
CBC_INTEG = bytes.fromhex("000102030405060708090a0b0c0d0e0f10111213")
NONCE = bytes.fromhex("a5a5c3c30f0f9696")
OUTER_SRC, OUTER_DST = "192.0.2.1", "198.51.100.2"


def esgw_iv(alg, seq):
    seq_be = seq.to_bytes(8, "big")
    if alg == GCM:
        return bytes(a ^ b for a, b in zip(seq_be, NONCE))
    enc = Cipher(algorithms.AES(CBC_KEY), modes.ECB()).encryptor()
    return enc.update(NONCE + seq_be) + enc.finalize()


def make_sa(alg, spi, ip_id, tos, integ=CBC_INTEG):
    tunnel = IP(src=OUTER_SRC, dst=OUTER_DST, ttl=64, id=ip_id, tos=tos, flags=0)
    if alg == GCM:
        return SecurityAssociation(ESP, spi=spi, crypt_algo="AES-GCM", crypt_key=GCM_KEY + GCM_SALT,
                                   auth_algo="NULL", tunnel_header=tunnel)
    return SecurityAssociation(ESP, spi=spi, crypt_algo="AES-CBC", crypt_key=CBC_KEY,
                               auth_algo="HMAC-SHA1-96", auth_key=integ, tunnel_header=tunnel)


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
    return "\n".join(out)


vectors = []


def add(name, alg, spi, seq, ip_id, inner, packet, drop="-1", exact=0):
    vectors.append(dict(name=name, alg=alg, spi=spi, seq=seq, ip_id=ip_id, inner=inner,
                        packet=packet, drop=drop, exact=exact))


for alg, algname in ((GCM, "gcm"), (CBC, "cbc")):
    spi = 0x1000 + alg
    # Inner lengths chosen so the padding takes every small value somewhere.
    for i, payload_len in enumerate((0, 1, 2, 13, 14, 56, 100, 1372)):
        seq = 1 + i * 1000
        tos = 0xb8 if i == 3 else 0
        ip_id = 0x4000 + i
        inner = raw(inner_packet(payload_len, tos))
        sa = make_sa(alg, spi, ip_id, tos)
        pkt = raw(sa.encrypt(IP(inner), seq_num=seq, iv=esgw_iv(alg, seq)))
        # Scapy must decrypt its own packet back to the inner one.
        assert raw(sa.decrypt(IP(pkt))) == inner
        add("%s_icmp_%u" % (algname, len(inner)), alg, spi, seq, ip_id, inner, pkt, exact=1)
    sa = make_sa(alg, spi, 0x5000, 0)
    inner = raw(inner_packet(20))
    add("%s_tfc_dummy" % algname, alg, spi, 77, 0x5000, inner,
        crafted(sa, alg, spi, 77, 0x5000, b"\xaa" * 30, 59), drop="ESGW_DROP_TFC_DUMMY")
    add("%s_next_header_udp" % algname, alg, spi, 78, 0x5001, inner,
        crafted(sa, alg, spi, 78, 0x5001, raw(IP(dst="10.2.0.7") / UDP() / Raw(b"x" * 9))[20:], 17),
        drop="ESGW_DROP_BAD_NEXT_HEADER")
    add("%s_bad_padding" % algname, alg, spi, 79, 0x5002, inner,
        crafted(sa, alg, spi, 79, 0x5002, inner, 4, corrupt_padding=True),
        drop="ESGW_DROP_BAD_PADDING")
    # Encrypted with another integrity key (CBC) or another salt (GCM): forged.
    if alg == CBC:
        other = make_sa(alg, spi, 0x5003, 0, integ=bytes(20))
    else:
        other = SecurityAssociation(ESP, spi=spi, crypt_algo="AES-GCM", crypt_key=GCM_KEY + b"\0\0\0\0",
                                    auth_algo="NULL",
                                    tunnel_header=IP(src=OUTER_SRC, dst=OUTER_DST, ttl=64, id=0x5003))
    add("%s_forged" % algname, alg, spi, 80, 0x5003, inner,
        raw(other.encrypt(IP(inner), seq_num=80, iv=esgw_iv(alg, 80))), drop="ESGW_DROP_AUTH_FAILED")

out = sys.stdout
out.write("/* SPDX-License-Identifier: BSD-3-Clause */\n")
out.write("/* ESP test vectors made by scapy %s: generated by gen_esp_vectors.py, do not edit. */\n"
          % __import__("scapy").VERSION)
out.write("#ifndef ESGW_ESP_VECTORS_H\n#define ESGW_ESP_VECTORS_H\n\n#include <stdint.h>\n\n")
out.write("static const uint8_t vec_gcm_key[] = {\n%s\n};\n" % c_bytes(GCM_KEY))
out.write("static const uint8_t vec_gcm_salt[] = {\n%s\n};\n" % c_bytes(GCM_SALT))
out.write("static const uint8_t vec_cbc_key[] = {\n%s\n};\n" % c_bytes(CBC_KEY))
out.write("static const uint8_t vec_cbc_integ_key[] = {\n%s\n};\n" % c_bytes(CBC_INTEG))
out.write("static const uint8_t vec_iv_nonce[] = {\n%s\n};\n" % c_bytes(NONCE))
out.write("static const uint8_t vec_outer_src[] = {%s};\n" % ", ".join(OUTER_SRC.split(".")))
out.write("static const uint8_t vec_outer_dst[] = {%s};\n\n" % ", ".join(OUTER_DST.split(".")))
for i, v in enumerate(vectors):
    out.write("static const uint8_t vec%u_inner[] = {\n%s\n};\n" % (i, c_bytes(v["inner"])))
    out.write("static const uint8_t vec%u_packet[] = {\n%s\n};\n" % (i, c_bytes(v["packet"])))
out.write("""
struct esp_vector {
	const char *name;
	int alg;             /* enum esp_alg */
	uint32_t spi;
	uint32_t seq;
	uint16_t ip_id;
	const uint8_t *inner; /* the inner IPv4 packet */
	uint16_t inner_len;
	const uint8_t *packet; /* outer IPv4 + ESP, as scapy built it */
	uint16_t packet_len;
	int drop;  /* -1: decap passes and yields inner; else the drop reason */
	int exact; /* 1: esgw's encap of inner must equal packet byte for byte */
};

static const struct esp_vector esp_vectors[] = {
""")
for i, v in enumerate(vectors):
    out.write('\t{"%s", %u, 0x%x, %u, 0x%x, vec%u_inner, %u, vec%u_packet, %u, %s, %u},\n'
              % (v["name"], v["alg"], v["spi"], v["seq"], v["ip_id"], i, len(v["inner"]), i,
                 len(v["packet"]), v["drop"], v["exact"]))
out.write("};\n\n#endif\n")
