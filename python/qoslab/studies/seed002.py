"""Seed 002 (002_598018829ac6eeaa.txt): PPPoE or PPTP over an OpenVPN-UDP layer-2 VPN —
what MTU must each interface have, and what TCP loses when it is wrong.

The MTU rows are computed now by ``qoslab mtu`` (real encodings, with the seed's
accounting of an FCS inside the tunnel, ``--count-fcs``). The TCP rows need OpenVPN and
PPPoE tunnels in the simulator, which are not there yet.
"""

from __future__ import annotations

from typing import Any

from qoslab.studies import EXACT, Ours, Point, Published, Study, Tolerance

PPPOE = "ethernet/ipv4/udp/openvpn(cipher=none,auth=sha1)/ethernet/pppoe/ipv4/tcp"
PPTP = "ethernet/ipv4/udp/openvpn(cipher=none,auth=sha1)/ethernet/ipv4/gre(pptp)/ppp/ipv4/tcp"
NOT_TCP = "TCP through OpenVPN/PPPoE tunnels (30 Mb/s, 1 % loss, OpenVPN's fragmentation) is not simulated yet"
TCP = Tolerance("iperf averages of 7 runs of 10 s; 5 %", rel=0.05)


class Seed002(Study):
    seed = "002"
    title = "MTUs of PPPoE and PPTP over an OpenVPN-UDP layer-2 VPN"
    paper = "Z. Zhang, E. Takimoto and T. Nishimura, MTU Analysis for Integrated Wireless Authentication System (Ritsumeikan University)"
    question = "In a stack of PPPoE or PPTP over an OpenVPN-UDP layer-2 VPN, what MTU must each interface have, and what does TCP lose when it is wrong (30 Mb/s, 1 % loss)?"
    scenarios = ["seed002_pppoe_over_openvpn.toml"]

    def published(self) -> list[Published]:
        return [
            Published("eth.frame", "§3.1: largest Ethernet frame (IEEE 802.3)", 1518, "bytes", EXACT, source="§3.1"),
            Published("eth.overhead", "§3.1: Ethernet header and FCS", 18, "bytes", EXACT, source="§3.1"),
            Published("mtu.real", "§3.1: MTU of the real network interface", 1500, "bytes", EXACT, source="§3.1"),
            Published("openvpn.overhead", "§3.2: OpenVPN overhead without cipher, SHA1 digest (tag 1 + peer id 3 + HMAC 20)", 24, "bytes", EXACT, source="§3.2"),
            Published("openvpn.payload", "§3.2: space left for the OpenVPN payload", 1448, "bytes", EXACT, source="§3.2"),
            Published("mtu.tap", "§3.2: MTU of the L2-VPN (TAP) interface", 1430, "bytes", EXACT, source="§3.2"),
            Published("pppoe.overhead", "§3.3: PPP header in PPPoE", 8, "bytes", EXACT, source="§3.3"),
            Published("mtu.pppoe", "§3.3: MTU of the PPPoE interface", 1422, "bytes", EXACT, source="§3.3"),
            Published("gre.overhead", "§3.4: GRE header in PPTP", 12, "bytes", EXACT, source="§3.4"),
            Published("pptp.ppp", "§3.4: PPP header in PPTP", 1, "bytes", EXACT, source="§3.4"),
            Published("mtu.pptp", "§3.4: MTU of the PPTP interface", 1397, "bytes", EXACT, source="§3.4"),
            Published("tcp.mss", "§4: largest TCP payload", 1382, "bytes", EXACT, source="§4"),
            Published("tcp.theory", "§4: theoretical maximum TCP throughput on the 30 Mb/s link", 27.3, "Mb/s", Tolerance("the paper's arithmetic, rounded", rel=0.01), not_reproduced=NOT_TCP, source="§4"),
            Published("tcp.theory.loss", "§4: the same with 1 % loss (99 %)", 27.04, "Mb/s", Tolerance("the paper's arithmetic, rounded", rel=0.01), not_reproduced=NOT_TCP, source="§4"),
            Published("tcp.576", "§4 / Fig. 6: TCP throughput, PPPoE MTU 576", 16.10, "Mb/s", TCP, not_reproduced=NOT_TCP, source="§4, Fig. 6"),
            Published("tcp.1422", "§4 / Fig. 6: TCP throughput, PPPoE MTU 1422 (the maximum)", 26.91, "Mb/s", TCP, not_reproduced=NOT_TCP, source="§4, Fig. 6"),
            Published("tcp.1423", "§4 / Fig. 6: TCP throughput, PPPoE MTU 1423 (one byte over)", 24.26, "Mb/s", TCP, not_reproduced=NOT_TCP, source="§4, Fig. 6"),
            Published("tcp.1492", "§4 / Fig. 6: TCP throughput, PPPoE MTU 1492", 25.26, "Mb/s", TCP, not_reproduced=NOT_TCP, source="§4, Fig. 6"),
            Published("tcp.window", "§4: TCP window (CUBIC's default)", 85.3, "kbyte", Tolerance("a setting", abs=0.0), not_reproduced=NOT_TCP, source="§4"),
        ]

    def points(self, workdir=None) -> list[Point]:
        def run(progress: Any) -> list[dict[str, Any]]:
            from qoslab.analysis.mtu import analyse

            out = []
            for name, stack in (("pppoe", PPPOE), ("pptp", PPTP)):
                progress(f"MTU analysis of the {name} stack")
                r = analyse(stack, count_fcs=True).to_json()
                out.append({"test": "mtu", "name": name, "from": None, "to": None, "parameters": {"stack": stack, "count_fcs": True}, "metrics": {"mtu": r["mtu"], "tcp_mss": r["tcp_mss"], "interfaces": {i["name"]: i["mtu"] for i in r["interfaces"]}, "layers": [[l["name"], l["overhead_bytes"]] for l in r["layers"]]}})
            return out

        return [Point("mtu", "seed 002: MTU analysis of both stacks", run, spec={"stacks": [PPPOE, PPTP]})]

    def ours(self, data: dict[str, list[dict[str, Any]]]) -> dict[str, Ours]:
        recs = {r["name"]: r["metrics"] for r in data.get("mtu", [])}
        if not recs:
            return {}
        p, t = recs["pppoe"], recs["pptp"]
        layers = dict((n, b) for n, b in p["layers"] if n in ("openvpn", "pppoe"))
        note = "qoslab mtu with the seed's FCS accounting (--count-fcs)"
        o = {
            "mtu.real": Ours(p["interfaces"]["eth0"], note),
            "mtu.tap": Ours(p["interfaces"]["tap0"], note),
            "mtu.pppoe": Ours(p["interfaces"]["ppp0"], note),
            "mtu.pptp": Ours(t["interfaces"]["ppp0"], note),
            "tcp.mss": Ours(p["tcp_mss"], "MTU of the PPPoE interface - 40"),
            "openvpn.overhead": Ours(layers.get("openvpn"), "replay protection off, as the seed counts"),
            "openvpn.payload": Ours(p["interfaces"]["tap0"] + 18, "TAP MTU + the inner Ethernet header and FCS"),
            "pppoe.overhead": Ours(layers.get("pppoe"), "PPPoE 6 + PPP protocol 2"),
            "gre.overhead": Ours(dict(t["layers"]).get("gre"), "enhanced GRE (RFC 2637) with sequence number"),
            "pptp.ppp": Ours(dict(t["layers"]).get("ppp"), "PPP protocol field compressed"),
            "eth.overhead": Ours(18, "14-byte header + 4-byte FCS (constant of the analysis)"),
            "eth.frame": Ours(p["interfaces"]["eth0"] + 18, "MTU + 18"),
        }
        return {k: v for k, v in o.items() if v.value is not None}

    def discussion(self, rows, data):
        return ["The MTUs come out of real encodings with the seed's accounting of a 4-byte FCS inside the TAP tunnel; without it (a TAP device carries no FCS) each is 4 bytes larger. The TCP rows wait for OpenVPN and PPPoE in the simulator."]


__all__ = ["Seed002"]
