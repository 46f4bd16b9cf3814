#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Writes the seed corpus of fuzz_router (tests/fuzz/fuzz_router.c) with scapy:
# ARP and ND exchanges, ICMP and ICMPv6 (echo, errors), IPv4 and IPv6
# fragment series (whole, overlapping, with a hole, beyond the end), ESP for
# each of the target's tunnels encrypted with its keys (IPv4 and IPv6 outer,
# NAT-T), NAT keepalives and IKE, LAN traffic into every tunnel and policy,
# martians and cleartext a tunnel covers. Each seed is a sequence of frames
# in the target's format: [control][length, 2 bytes][frame], control bit 0
# the port (0 LAN, 1 WAN), bit 1 a 1.5 s clock step first, bit 2 301 s.
#   /usr/bin/python3 tests/fuzz/gen_router_corpus.py tests/fuzz/corpus_router
import hashlib
import os
import struct
import sys

from scapy.layers.inet import ICMP, IP, TCP, UDP, fragment
from scapy.layers.inet6 import (ICMPv6EchoRequest, ICMPv6ND_NA, ICMPv6ND_NS,
                                ICMPv6NDOptDstLLAddr, ICMPv6NDOptSrcLLAddr, IPv6,
                                IPv6ExtHdrFragment)
from scapy.layers.ipsec import ESP, SecurityAssociation
from scapy.layers.l2 import ARP, Ether
from scapy.packet import Raw

LAN, WAN = 0, 1
GW_MAC = {LAN: "02:00:00:00:00:01", WAN: "02:00:00:00:00:02"}
H1_MAC, PEER_MAC = "02:00:00:00:00:bb", "02:00:00:00:00:aa"
SRC_MAC = {LAN: H1_MAC, WAN: PEER_MAC}
STEP, LONG_STEP = 2, 4


def key(sa_id, n):
    return bytes([sa_id // 10 * 16 + 1]) * n


def salt(sa_id, n=4):
    return bytes([sa_id // 10 * 16 + 2]) * n


# The target's inbound SAs (peer -> gateway) with its keys and endpoints.
def sa_t4():
    return SecurityAssociation(ESP, spi=2000, crypt_algo="AES-CBC", crypt_key=key(20, 16),
                               auth_algo="HMAC-SHA1-96", auth_key=salt(20, 20),
                               tunnel_header=IP(src="192.168.3.2", dst="192.168.3.1"))


def sa_t6():
    return SecurityAssociation(ESP, spi=4000, crypt_algo="AES-GCM",
                               crypt_key=key(40, 16) + salt(40),
                               tunnel_header=IPv6(src="2001:db8:3::2", dst="2001:db8:3::1"))


def sa_t7():
    return SecurityAssociation(ESP, spi=8000, crypt_algo="AES-GCM",
                               crypt_key=key(80, 32) + salt(80),
                               tunnel_header=IP(src="192.168.3.2", dst="192.168.3.1"))


def sa_t8():
    return SecurityAssociation(ESP, spi=6000, crypt_algo="CHACHA20-POLY1305",
                               crypt_key=key(60, 32) + salt(60),
                               tunnel_header=IP(src="192.168.3.9", dst="192.168.3.1"),
                               nat_t_header=UDP(sport=4500, dport=4500))


def natt(pkt):
    """scapy leaves the NAT-T UDP length at 8: the same ESP in a right header."""
    raw = bytes(pkt)
    return IP(src=pkt[IP].src, dst=pkt[IP].dst) / UDP(sport=4500, dport=4500, chksum=0) / \
        Raw(raw[28:])


def eth(port, payload, dst=None, src=None, etype=None):
    if etype is None:
        etype = 0x86DD if bytes(payload)[0] >> 4 == 6 else 0x0800
    return Ether(dst=dst or GW_MAC[port], src=src or SRC_MAC[port], type=etype) / payload


def frame(port, pkt, control=0):
    data = bytes(pkt)[:2047]
    return bytes([port | control]) + struct.pack(">H", len(data)) + data


def ip_frame(port, pkt, control=0):
    return frame(port, eth(port, pkt), control)


def arp(port, op, psrc, pdst, hwsrc=None, dst="ff:ff:ff:ff:ff:ff", control=0):
    hwsrc = hwsrc or SRC_MAC[port]
    return frame(port, Ether(dst=dst, src=hwsrc) /
                 ARP(op=op, hwsrc=hwsrc, psrc=psrc, pdst=pdst,
                     hwdst="00:00:00:00:00:00" if op == 1 else GW_MAC[port]), control)


def arp_reply(port, psrc, pdst):
    return arp(port, 2, psrc, pdst, dst=GW_MAC[port])


def udp(src, dst, payload=b"fuzz", sport=5555, dport=9998):
    if ":" in src:
        return IPv6(src=src, dst=dst) / UDP(sport=sport, dport=dport) / Raw(payload)
    return IP(src=src, dst=dst) / UDP(sport=sport, dport=dport) / Raw(payload)


seeds = {}


def seed(name, *frames):
    seeds[name] = b"".join(frames)


# ARP: requests to us (on and off the subnet), replies, gratuitous, probes.
seed("arp-request-lan", arp(LAN, 1, "192.168.1.1", "192.168.1.2"))
seed("arp-request-wan-second", arp(WAN, 1, "10.99.7.7", "10.99.0.1"))
seed("arp-request-off-subnet", arp(WAN, 1, "203.0.113.5", "192.168.3.1"))
seed("arp-probe", arp(LAN, 1, "0.0.0.0", "192.168.1.2"))
seed("arp-unsolicited-reply", arp_reply(WAN, "10.98.1.1", "10.99.0.1"))
seed("arp-gratuitous", arp(WAN, 1, "192.168.3.2", "192.168.3.2"))
seed("arp-reply-static", arp_reply(WAN, "192.168.3.254", "192.168.3.1"))
seed("arp-not-for-us", arp(LAN, 1, "192.168.1.1", "192.168.1.77"))
# Resolution: h1 sends into t4, the router asks for the peer, the peer answers.
seed("lan-to-t4-arp", ip_frame(LAN, udp("192.168.1.1", "192.168.2.1")),
     ip_frame(LAN, udp("192.168.1.1", "192.168.2.1", b"second")),
     arp_reply(WAN, "192.168.3.2", "192.168.3.1"))
seed("lan-to-t4-arp-timeout", ip_frame(LAN, udp("192.168.1.1", "192.168.2.1")),
     frame(LAN, b"", STEP), frame(LAN, b"", STEP), frame(LAN, b"", STEP))
t4 = sa_t4()
seed("arp-learn-then-expire", arp(LAN, 1, "192.168.1.1", "192.168.1.2"),
     ip_frame(WAN, t4.encrypt(udp("192.168.2.1", "192.168.1.1"))),
     frame(LAN, b"", LONG_STEP), ip_frame(WAN, t4.encrypt(udp("192.168.2.1",
                                                              "192.168.1.1", b"late"))))

# Neighbor discovery.
ns_us = (IPv6(src="2001:db8:3::2", dst="ff02::1:ff00:1", hlim=255) /
         ICMPv6ND_NS(tgt="2001:db8:3::1") / ICMPv6NDOptSrcLLAddr(lladdr=PEER_MAC))
seed("nd-solicit", frame(WAN, eth(WAN, ns_us, dst="33:33:ff:00:00:01")))
seed("nd-solicit-dad", frame(WAN, eth(WAN, IPv6(src="::", dst="ff02::1:ff00:1", hlim=255) /
                                      ICMPv6ND_NS(tgt="2001:db8:3::1"),
                                      dst="33:33:ff:00:00:01")))
seed("nd-solicit-linklocal", ip_frame(WAN, IPv6(src="fe80::aa", dst="2001:db8:3::1", hlim=255) /
                                      ICMPv6ND_NS(tgt="2001:db8:3::1") /
                                      ICMPv6NDOptSrcLLAddr(lladdr=PEER_MAC)))
na = (IPv6(src="2001:db8:3::2", dst="2001:db8:3::1", hlim=255) /
      ICMPv6ND_NA(tgt="2001:db8:3::2", R=0, S=1, O=1) / ICMPv6NDOptDstLLAddr(lladdr=PEER_MAC))
seed("nd-advert-unsolicited", ip_frame(WAN, na))
seed("lan-to-t6-nd", ip_frame(LAN, udp("192.168.1.1", "192.168.4.1")), ip_frame(WAN, na),
     ip_frame(WAN, IPv6(src="2001:db8:3::2", dst="2001:db8:3::1", hlim=255) /
              ICMPv6ND_NA(tgt="2001:db8:3::2", R=0, S=0, O=0) /
              ICMPv6NDOptDstLLAddr(lladdr="02:66:66:66:66:66")))

# ICMP and ICMPv6 to the gateway.
seed("echo-wan", ip_frame(WAN, IP(src="192.168.3.2", dst="192.168.3.1") / ICMP() / b"ping"),
     arp_reply(WAN, "192.168.3.2", "192.168.3.1"))
seed("echo-lan-bad-checksum", ip_frame(LAN, IP(src="192.168.1.1", dst="192.168.1.2") /
                                       ICMP(chksum=0x1234) / b"ping"))
seed("echo6", ip_frame(WAN, IPv6(src="2001:db8:3::2", dst="2001:db8:3::1") /
                       ICMPv6EchoRequest(data=b"ping6")), ip_frame(WAN, na))
seed("icmp-unreachable-to-us", ip_frame(WAN, IP(src="192.168.3.2", dst="192.168.3.1") /
                                        ICMP(type=3, code=1) /
                                        bytes(IP(src="192.168.3.1", dst="192.168.3.2") /
                                              UDP())[:28]))
seed("broadcast-echo", ip_frame(LAN, IP(src="192.168.1.1", dst="192.168.1.255") / ICMP(),
                                ))

# Fragments to the gateway: whole ESP series (IPv4, IPv6), attacks.
outer = sa_t4().encrypt(udp("192.168.2.1", "192.168.1.1", b"R" * 1200))
outer.id = 0x4242
seed("frag4-esp", *[ip_frame(WAN, f) for f in reversed(fragment(outer, fragsize=504))],
     arp_reply(LAN, "192.168.1.1", "192.168.1.2"))
seed("frag4-overlap", *[ip_frame(WAN, f) for f in fragment(outer, fragsize=504)[:1]],
     ip_frame(WAN, IP(src="192.168.3.2", dst="192.168.3.1", id=0x4242, proto=50,
                      flags="MF", frag=8) / Raw(b"z" * 64)))
icmp = struct.pack(">BBHHH", 8, 0, 0, 1, 1) + b"ECHO-FRG"
seed("frag4-hole", ip_frame(WAN, IP(src="192.168.3.2", dst="192.168.3.1", id=7, proto=1,
                                    flags="MF") / Raw(icmp)),
     ip_frame(WAN, IP(src="192.168.3.2", dst="192.168.3.1", id=7, proto=1, flags="MF",
                      frag=125) / Raw(b"Z" * 8)),
     ip_frame(WAN, IP(src="192.168.3.2", dst="192.168.3.1", id=7, proto=1, frag=3) /
              Raw(b"T" * 8)))
seed("frag4-timeout", ip_frame(WAN, IP(src="198.51.100.9", dst="192.168.3.1", id=9, proto=17,
                                       flags="MF") / Raw(b"F" * 64)), frame(WAN, b"", STEP))
seed("frag4-flood", *[ip_frame(WAN, IP(src="198.51.100.%d" % (i % 5), dst="192.168.3.1",
                                       id=100 + i, proto=17, flags="MF") / Raw(b"F" * 16))
                      for i in range(20)])
inner6 = sa_t6().encrypt(udp("192.168.4.1", "192.168.1.1", b"S" * 1100))
raw6 = bytes(inner6)
payload6 = raw6[40:]
frags6 = []
for off in range(0, len(payload6), 512):
    chunk = payload6[off:off + 512]
    frags6.append(IPv6(src="2001:db8:3::2", dst="2001:db8:3::1", nh=44) /
                  IPv6ExtHdrFragment(nh=50, offset=off // 8, id=0x6000,
                                     m=1 if off + 512 < len(payload6) else 0) / Raw(chunk))
seed("frag6-esp", *[ip_frame(WAN, f) for f in frags6], ip_frame(WAN, na),
     arp_reply(LAN, "192.168.1.1", "192.168.1.2"))
base6 = IPv6(src="2001:db8:3::2", dst="2001:db8:3::1", nh=44)
seed("frag6-no-first", ip_frame(WAN, base6 / IPv6ExtHdrFragment(nh=58, offset=125, m=1, id=1) /
                                Raw(b"A" * 8)),
     ip_frame(WAN, base6 / IPv6ExtHdrFragment(nh=58, offset=1, m=0, id=1) / Raw(b"B" * 8)))
seed("frag6-atomic", ip_frame(WAN, base6 / IPv6ExtHdrFragment(nh=58, offset=0, m=0, id=2) /
                              ICMPv6EchoRequest()))

# ESP of every tunnel, inner packets of every kind.
seed("esp-t4-udp", ip_frame(WAN, sa_t4().encrypt(udp("192.168.2.1", "192.168.1.1"))),
     arp_reply(LAN, "192.168.1.1", "192.168.1.2"))
seed("esp-t4-echo-to-gw", ip_frame(WAN, sa_t4().encrypt(IP(src="192.168.2.1",
                                                           dst="192.168.1.2") / ICMP())),
     arp_reply(WAN, "192.168.3.2", "192.168.3.1"))
seed("esp-t4-6in4", ip_frame(WAN, sa_t4().encrypt(udp("2001:db8:2::1", "2001:db8:1::1"))))
t4 = sa_t4()
seed("esp-t4-spoofed", ip_frame(WAN, t4.encrypt(udp("192.168.4.1", "192.168.1.1"))),
     ip_frame(WAN, t4.encrypt(udp("192.168.2.1", "192.168.4.1"))),
     ip_frame(WAN, t4.encrypt(udp("192.168.1.77", "192.168.1.1"))),
     ip_frame(WAN, t4.encrypt(udp("2001:db8:4::1", "2001:db8:1::1"))))
seed("esp-t4-ttl1", ip_frame(WAN, sa_t4().encrypt(IP(src="192.168.2.1", dst="192.168.1.1",
                                                     ttl=1) / UDP() / b"x")))
seed("esp-t4-replay", ip_frame(WAN, sa_t4().encrypt(udp("192.168.2.1", "192.168.1.1"),
                                                   seq_num=5)),
     ip_frame(WAN, sa_t4().encrypt(udp("192.168.2.1", "192.168.1.1"), seq_num=5)))
seed("esp-t6-4in6", ip_frame(WAN, sa_t6().encrypt(udp("192.168.4.1", "192.168.1.1"))))
seed("esp-t6-6in6", ip_frame(WAN, sa_t6().encrypt(udp("2001:db8:4::1", "2001:db8:1::1"))),
     ip_frame(LAN, IPv6(src="2001:db8:1::1", dst="2001:db8:1::2", hlim=255) /
              ICMPv6ND_NA(tgt="2001:db8:1::1", R=0, S=1, O=1) /
              ICMPv6NDOptDstLLAddr(lladdr=H1_MAC)))
t7 = sa_t7()
seed("esp-t7-policy", ip_frame(WAN, t7.encrypt(udp("192.168.5.1", "192.168.1.1"))),
     ip_frame(WAN, t7.encrypt(udp("192.168.6.1", "192.168.1.1"))),
     arp_reply(LAN, "192.168.1.1", "192.168.1.2"))
t8 = sa_t8()
seed("esp-t8-natt", ip_frame(WAN, natt(t8.encrypt(udp("192.168.8.1", "192.168.1.1")))),
     ip_frame(WAN, natt(t8.encrypt(IP(src="192.168.8.1", dst="192.168.1.2") / ICMP()))),
     arp_reply(LAN, "192.168.1.1", "192.168.1.2"), arp_reply(WAN, "192.168.3.9", "192.168.3.1"))
seed("esp-unknown-spi", ip_frame(WAN, IP(src="192.168.3.2", dst="192.168.3.1") /
                                 ESP(spi=4242, seq=1) / Raw(b"e" * 40)))
natt = IP(src="192.168.3.9", dst="192.168.3.1") / UDP(sport=4500, dport=4500)
seed("natt-keepalive", ip_frame(WAN, natt / Raw(b"\xff")))
seed("natt-ike", ip_frame(WAN, natt / Raw(b"\0\0\0\0IKE_SA_INIT")))
seed("ike-500", ip_frame(WAN, IP(src="192.168.3.2", dst="192.168.3.1") /
                         UDP(sport=500, dport=500) / Raw(b"IKE")))
seed("ike-500-v6", ip_frame(WAN, IPv6(src="2001:db8:3::2", dst="2001:db8:3::1") /
                            UDP(sport=500, dport=500) / Raw(b"IKE")))
seed("tcp-ssh", ip_frame(LAN, IP(src="192.168.1.1", dst="192.168.1.2") /
                         TCP(sport=40000, dport=22, flags="S")))
seed("udp-other-port", ip_frame(WAN, IP(src="192.168.3.2", dst="192.168.3.1") /
                                UDP(sport=1, dport=9) / Raw(b"flood")))

# LAN traffic into every tunnel, policy, and route.
for name, dst in (("t4", "192.168.2.1"), ("t6", "192.168.4.1"), ("t7-policy", "192.168.5.1"),
                  ("t8-natt", "192.168.8.1"), ("discard", "192.168.2.99"),
                  ("bypass", "192.168.2.50"), ("default", "198.51.100.1")):
    seed("lan-" + name, ip_frame(LAN, udp("192.168.1.1", dst)),
         arp_reply(WAN, "192.168.3.9" if "natt" in name else "192.168.3.2", "192.168.3.1"),
         ip_frame(WAN, na))
seed("lan-v6-t4", ip_frame(LAN, udp("2001:db8:1::1", "2001:db8:2::1")),
     arp_reply(WAN, "192.168.3.2", "192.168.3.1"))
seed("lan-v6-t6", ip_frame(LAN, udp("2001:db8:1::1", "2001:db8:4::1")), ip_frame(WAN, na))
seed("lan-v6-default", ip_frame(LAN, udp("2001:db8:1::1", "2001:db8:99::1")))
seed("lan-big-no-df", ip_frame(LAN, IP(src="192.168.1.1", dst="192.168.2.1", flags=0) /
                               UDP() / Raw(b"B" * 1450)),
     arp_reply(WAN, "192.168.3.2", "192.168.3.1"))
seed("lan-big-df", ip_frame(LAN, IP(src="192.168.1.1", dst="192.168.2.1", flags="DF") /
                            UDP() / Raw(b"B" * 1450)))
seed("lan-big-v6", ip_frame(LAN, IPv6(src="2001:db8:1::1", dst="2001:db8:4::1") / UDP() /
                            Raw(b"B" * 1400)))
seed("lan-ttl1", ip_frame(LAN, IP(src="192.168.1.1", dst="192.168.2.1", ttl=1) / UDP()))
seed("lan-hop1-v6", ip_frame(LAN, IPv6(src="2001:db8:1::1", dst="2001:db8:2::1", hlim=1) /
                             UDP()))
seed("lan-no-route-v6", ip_frame(LAN, udp("2001:db8:1::1", "3fff::1")))

# Martians, cleartext that a tunnel or policy covers.
seed("martians", *[ip_frame(WAN, udp(s, "192.168.1.1")) for s in
                   ("127.0.0.1", "0.0.0.1", "224.0.0.1", "255.255.255.255", "192.168.1.2")],
     ip_frame(WAN, udp("::1", "2001:db8:1::1")), ip_frame(WAN, udp("ff02::1", "2001:db8:1::1")))
seed("cleartext-covered", ip_frame(WAN, udp("192.168.2.1", "192.168.1.1")),
     ip_frame(WAN, udp("192.168.5.7", "192.168.1.1")),
     ip_frame(WAN, udp("2001:db8:2::1", "2001:db8:1::1")))

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
for name, data in seeds.items():
    with open(os.path.join(out, "%s-%s" % (name, hashlib.sha1(data).hexdigest()[:8])), "wb") as f:
        f.write(data)
print("%d seeds in %s" % (len(seeds), out))
