# SPDX-License-Identifier: BSD-3-Clause
"""UDP encapsulation of ESP (RFC 3948) against scapy's independent ESP: gw1's
SAs are `encap udp` (4500/4500); a scapy peer at 192.168.3.2 receives ESP in
UDP on its port 4500 and sends ESP in UDP back. NAT keepalives are absorbed
and counted; IKE (non-ESP marker on 4500, anything on 500) goes to the punt
path, never to ESP decryption."""

import os
import socket

import pytest

import esgw_harness as h

NATT_PORT = 4500
PEER_PORT = 4600  # the peer's port differs from ours: sport/dport are not mixed up


class HkTopology(h.Topology):
    """The harness topology with this helper's namespace prefix."""

    def __init__(self):
        super().__init__()
        self.tag = "hk" + self.tag[2:]


def _sa_args(sa_id, spi, alg):
    return h.sa_add_args(sa_id, spi, alg) + ["encap", "udp", "sport", NATT_PORT,
                                             "dport", PEER_PORT]


def _scapy_sa(alg, spi, src, dst, nat_t):
    from scapy.layers.inet import UDP
    sa = h.scapy_sa(alg, spi, src, dst)
    if nat_t:
        sa.nat_t_header = UDP(sport=PEER_PORT, dport=NATT_PORT)
    return sa


class NattPeer:
    """The far end: receives gw1's ESP-in-UDP on a UDP socket bound to
    192.168.3.2:PEER_PORT and sends whole frames to gw1's MAC."""

    def __init__(self, netns, dev, alg, gw_mac):
        self.alg = alg
        self.gw_mac = gw_mac
        self.mac = h.link_mac(netns, dev)
        self.sa_from_gw = _scapy_sa(alg, h.SPI_GW1_OUT, h.GW1_WAN, h.GW2_WAN, False)
        self.sa_to_gw = _scapy_sa(alg, h.SPI_GW1_IN, h.GW2_WAN, h.GW1_WAN, True)
        with h.in_netns(netns):
            self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            self.l2 = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
        self.udp.bind((h.GW2_WAN, PEER_PORT))
        self.l2.bind((dev, 0))

    def close(self):
        self.udp.close()
        self.l2.close()

    def recv(self, timeout):
        """(ESP bytes, source address) of the next datagram, or None."""
        self.udp.settimeout(timeout)
        try:
            data, addr = self.udp.recvfrom(65535)
        except socket.timeout:
            return None
        return data, addr

    def decrypt(self, esp_bytes):
        from scapy.layers.inet import IP
        from scapy.layers.ipsec import ESP
        return self.sa_from_gw.decrypt(IP(src=h.GW1_WAN, dst=h.GW2_WAN, proto=50) /
                                       ESP(esp_bytes))

    def encrypt(self, inner):
        """ESP in UDP to gw1. scapy 2.5 writes the UDP length of the bare
        header (8) into nat_t_header; a real peer (and RFC 768) counts the
        payload too, and esgw refuses the short one as malformed: fix it."""
        raw = bytearray(bytes(self.sa_to_gw.encrypt(inner)))
        ihl = (raw[0] & 0x0f) * 4
        raw[ihl + 4:ihl + 6] = (len(raw) - ihl).to_bytes(2, "big")
        return bytes(raw)

    def send_ip(self, ip_pkt):
        from scapy.layers.l2 import Ether
        self.l2.send(bytes(Ether(dst=self.gw_mac, src=self.mac, type=0x0800) / bytes(ip_pkt)))

    def send_udp_payload(self, payload, dport=NATT_PORT, sport=PEER_PORT):
        from scapy.layers.inet import IP, UDP
        self.send_ip(IP(src=h.GW2_WAN, dst=h.GW1_WAN) / UDP(sport=sport, dport=dport) / payload)


@pytest.fixture(scope="module", params=h.ALGORITHMS)
def natt(request):
    if os.geteuid() != 0 or h.missing_binaries():
        pytest.skip("needs root and a build in %s" % h.ESGW_BUILD)
    alg = request.param
    topo = HkTopology()
    gw = peer = None
    try:
        ns = h.build_standard(topo, peer=True)
        gw = h.Gateway("gw1", ns["gw1"], topo.tag)
        gw.start()
        gw.ctl("interface", "add", "lan", "net_af_packet0,iface=gw1-lan")
        gw.ctl("interface", "address", "add", "lan", h.GW1_LAN + "/24")
        gw.ctl("interface", "add", "wan", "net_af_packet1,iface=gw1-wan")
        gw.ctl("interface", "address", "add", "wan", h.GW1_WAN + "/24")
        gw.ctl(*_sa_args(h.SA_ID_GW1_OUT, h.SPI_GW1_OUT, alg))
        gw.ctl(*_sa_args(h.SA_ID_GW1_IN, h.SPI_GW1_IN, alg))
        gw.ctl("tunnel", "add", "t0", "local", h.GW1_WAN, "remote", h.GW2_WAN,
               "sa-out", h.SA_ID_GW1_OUT, "sa-in", h.SA_ID_GW1_IN)
        gw.ctl("route", "add", "192.168.2.0/24", "tunnel", "t0")
        gw.wait_running()
        peer = NattPeer(ns["peer"], "peer-wan", alg, h.link_mac(ns["gw1"], "gw1-wan"))
        yield {"alg": alg, "ns": ns, "gw1": gw, "peer": peer}
    finally:
        if peer is not None:
            peer.close()
        problems = gw.stop() if gw is not None else []
        topo.teardown()
    assert not problems, problems


def test_outbound_is_esp_in_udp_and_decrypts_in_scapy(natt):
    from scapy.layers.inet import IP, UDP
    from scapy.packet import Raw
    peer = natt["peer"]
    marker = b"NATT-OUT-" + natt["alg"].encode()
    s = h.udp_socket(natt["ns"]["h1"], h.H1_ADDR, 0)
    got = None
    try:
        for _ in range(10):
            s.sendto(marker, (h.H2_ADDR, 9999))
            got = peer.recv(1.0)
            if got:
                break
    finally:
        s.close()
    assert got, "no ESP-in-UDP reached the peer's port %d" % PEER_PORT
    esp, addr = got
    assert addr == (h.GW1_WAN, NATT_PORT), addr
    assert int.from_bytes(esp[:4], "big") == h.SPI_GW1_OUT
    assert marker not in esp
    inner = peer.decrypt(esp)
    assert inner[IP].src == h.H1_ADDR and inner[IP].dst == h.H2_ADDR
    assert inner[UDP].dport == 9999 and bytes(inner[Raw].load) == marker


def test_inbound_esp_in_udp_reaches_h1(natt):
    from scapy.layers.inet import IP, UDP
    from scapy.packet import Raw
    peer, gw = natt["peer"], natt["gw1"]
    marker = b"NATT-IN-" + natt["alg"].encode()
    s = h.udp_socket(natt["ns"]["h1"], h.H1_ADDR, h.PORT_H1, timeout=1.0)
    try:
        for _ in range(10):
            outer = IP(peer.encrypt(IP(src=h.H2_ADDR, dst=h.H1_ADDR) /
                                    UDP(sport=5555, dport=h.PORT_H1) / Raw(marker)))
            assert UDP in outer and outer[UDP].dport == NATT_PORT
            assert outer[UDP].sport == PEER_PORT and outer[UDP].chksum == 0
            peer.send_ip(outer)
            try:
                data, _ = s.recvfrom(2048)
                if data == marker:
                    break
            except OSError:
                continue
        else:
            stats = gw.ctl("show", "stats")
            raise AssertionError("h1 never received the ESP-in-UDP packet: drops %s, "
                                 "processes %s" % ({k: v for k, v in stats["drops"].items()
                                                    if v}, stats["processes"]))
    finally:
        s.close()
    assert gw.sa(h.SA_ID_GW1_IN)["packets"] >= 1
    assert gw.sa_drop(h.SA_ID_GW1_IN, "auth_failed") == 0


def test_plain_esp_to_udp_sa_refused(natt):
    """An SA configured for UDP takes only ESP in UDP on its port."""
    from scapy.layers.inet import IP, UDP
    from scapy.packet import Raw
    peer, gw = natt["peer"], natt["gw1"]
    plain = _scapy_sa(natt["alg"], h.SPI_GW1_IN, h.GW2_WAN, h.GW1_WAN, False)
    before = gw.total_drop("no_sa")
    peer.send_ip(plain.encrypt(IP(src=h.H2_ADDR, dst=h.H1_ADDR) / UDP(dport=h.PORT_H1) /
                               Raw(b"plain"), seq_num=100000))
    h.wait_for(lambda: gw.total_drop("no_sa") > before, 10, 0.3, "no_sa for plain ESP")


def test_keepalive_absorbed_and_counted(natt):
    peer, gw = natt["peer"], natt["gw1"]
    before = gw.counter("router", "natt_keepalive")
    drops_before = gw.ctl("show", "stats")["drops"]
    for _ in range(3):
        peer.send_udp_payload(b"\xff")
    h.wait_for(lambda: gw.counter("router", "natt_keepalive") >= before + 3, 10, 0.3,
               "natt_keepalive counter")
    drops = gw.ctl("show", "stats")["drops"]
    for name in ("malformed", "no_sa", "unsupported_protocol"):
        assert drops.get(name, 0) == drops_before.get(name, 0), name


def test_ike_goes_to_punt_not_esp(natt):
    """A non-ESP marker (four zero bytes: IKE on 4500) and IKE on 500 are for
    the host. Without a punt ring from rxtx they count as punted_no_host."""
    peer, gw = natt["peer"], natt["gw1"]
    stats = gw.ctl("show", "stats")
    before = stats["drops"].get("punted_no_host", 0) + gw.counter("router", "punted")
    no_sa = stats["drops"].get("no_sa", 0)
    peer.send_udp_payload(b"\x00\x00\x00\x00" + b"IKE_SA_INIT" * 4)
    peer.send_udp_payload(b"IKE_SA_INIT on 500" * 3, dport=500, sport=500)

    def punted():
        s = gw.ctl("show", "stats")
        return s["drops"].get("punted_no_host", 0) + gw.counter("router", "punted") >= before + 2
    h.wait_for(punted, 10, 0.3, "two packets punted")
    assert gw.ctl("show", "stats")["drops"].get("no_sa", 0) == no_sa


def test_sa_add_encap_validation(natt):
    gw = natt["gw1"]
    res = gw.ctl_raw("sa", "add", 99, "spi", 9999, "alg", "aes-gcm-128", "crypto-key",
                     "00" * 20, "sport", 4500)
    assert res.returncode != 0 and "encap udp" in res.stderr
    res = gw.ctl_raw("sa", "add", 99, "spi", 9999, "alg", "aes-gcm-128", "crypto-key",
                     "00" * 20, "encap", "tcp")
    assert res.returncode == 2
    cfg = gw.ctl("show", "config")["config"]
    sas = {sa["id"]: sa for sa in cfg["sas"]}
    assert sas[h.SA_ID_GW1_OUT]["udp_encap"] is True
    assert sas[h.SA_ID_GW1_OUT]["udp_sport"] == NATT_PORT
    assert sas[h.SA_ID_GW1_OUT]["udp_dport"] == PEER_PORT
