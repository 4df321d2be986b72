"""Seed 001 (001_1bddba40cb4b88d6.txt): IP over ATM — CLIP vs LANE vs MPOA, the BUS and
route-server limits, TCP throughput against MTU and socket buffer.

Every number the seed states is transcribed; none is reproduced yet: ATM links, LANE
and MPOA are not simulated (another helper adds them). Each row says so.
"""

from __future__ import annotations

from qoslab.studies import Published, Study, Tolerance

NOT_ATM = "ATM (cells, AAL5, CLIP, LANE, MPOA) is not simulated yet"
NOT_TCP_ATM = "TCP over CLIP (ATM links, the NICs' and hosts' limits) is not simulated yet"
RATE = Tolerance("a rate read from a measured trace ('approx.'): 10 %", rel=0.10)
COUNT = Tolerance("a count from a trace: 10 %", rel=0.10)


class Seed001(Study):
    seed = "001"
    title = "IP over ATM: CLIP, LANE and MPOA"
    paper = "K.-O. Detken, Quality-of-Service (QoS) in heterogeneous networks: CLIP, LANE, and MPOA performance test (WWL Internet)"
    question = "What do CLIP, LANE and MPOA cost IP over ATM: the BUS and route-server limits, and TCP throughput against MTU (576/1500/9180/65 K) and socket buffer (16-64 KiB)?"
    scenarios = ["seed001_clip.toml"]

    def published(self) -> list[Published]:
        rows = [
            ("lane.eth.fps", "§2.4 / Fig. 3: LANE Ethernet-to-Ethernet throughput at 100 % load", 13500, "frames/s", RATE),
            ("lane.eth.util", "§2.4 / Fig. 3: LANE Ethernet exploitation", 99.4, "%", Tolerance("a percentage of a 10 Mb/s link: ±1 point", abs=1.0)),
            ("lane.eth.collisions", "§2.4 / Fig. 3: collisions during the LANE Ethernet test", 27, "collisions", COUNT),
            ("lane.bus.cells", "§2.4 / Fig. 4: maximum BUS throughput", 53000, "cells/s", RATE),
            ("lane.bus.mbps", "§2.4 / Fig. 4: maximum BUS throughput as a data rate", 22.4, "Mb/s", RATE),
            ("lane.bus.hold", "§2.4 / Fig. 4: time the BUS holds its maximum", 1, "min", Tolerance("'approx. one minute'", rel=0.5)),
            ("lane.bus.load", "§2.4: BUS load set for the longer test", 50, "%", Tolerance("a setting", abs=0.0)),
            ("lane.unknown.frames", "§2.4 / Fig. 5: frames the BUS sent for unknown addresses", [5, 6], "frames", Tolerance("the paper gives a range: 5-6")),
            ("lane.unknown.overhead", "§2.4 / Fig. 5: overhead frames of the unknown-address traffic", [0, 1], "frames", Tolerance("the paper gives a range: 0-1")),
            ("mpoa.eth.util", "§2.5 / Fig. 6: MPOA Ethernet exploitation", 99.4, "%", Tolerance("±1 point", abs=1.0)),
            ("mpoa.eth.collisions", "§2.5 / Fig. 6: collisions during the MPOA Ethernet test", 1100, "collisions", COUNT),
            ("mpoa.shortcut.cells", "§2.5: MPOA shortcut maximum throughput (unidirectional)", 27000, "cells/s", RATE),
            ("mpoa.shortcut.mbps", "§2.5: MPOA shortcut maximum throughput as a data rate", 11.45, "Mb/s", RATE),
            ("clip.576", "§2.6 / Fig. 8: TCP over CLIP, 576-byte packets, buffers 15-64 kbyte", 35, "Mb/s", RATE),
            ("clip.1500", "§2.6 / Fig. 9: TCP over CLIP, 1500-byte packets (limited to approx.)", 60, "Mb/s", RATE),
            ("clip.9180", "§2.6 / Fig. 10: TCP over CLIP, 9180-byte packets (up to)", 80, "Mb/s", RATE),
            ("clip.9180.fluct", "§2.6 / Fig. 10: buffer size with the strongest fluctuations, 9180 bytes", 55, "kbyte", Tolerance("a buffer setting of the sweep", abs=0.0)),
            ("clip.9180.best", "§2.6 / Fig. 10: buffer sizes with the best results, 9180 bytes", [40, 65], "kbyte", Tolerance("two settings of the sweep")),
            ("clip.65k.low", "§2.6 / Fig. 11: TCP over CLIP, 65-kbyte packets, lowest", 5, "Mb/s", RATE),
            ("clip.65k.best", "§2.6 / Fig. 11: TCP over CLIP, 65-kbyte packets, best (up to)", 100, "Mb/s", RATE),
            ("clip.nic.max", "§3: maximum throughput of the Fore and Olicom adapters with CLIP", 100, "Mb/s", RATE),
            ("eies.lane", "§3: earlier EIES measurement, LANE, two Sun workstations", 117, "Mb/s", RATE),
            ("eies.clip", "§3: earlier EIES measurement, CLIP, two Sun workstations", 134, "Mb/s", RATE),
            ("nic.memory", "§2.6: memory both NICs need to operate efficiently", 128, "Mbyte", Tolerance("a stated requirement", abs=0.0)),
        ]
        out = []
        for key, item, paper, unit, tol in rows:
            reason = NOT_TCP_ATM if key.startswith(("clip", "eies", "nic")) else NOT_ATM
            out.append(Published(key, item, paper, unit, tol, not_reproduced=reason, source=item.split(":")[0]))
        return out

    def discussion(self, rows, data):
        return ["No row is reproduced yet: the simulator has no ATM links, LANE or MPOA. The rows are here so that summary.json holds every number the seed states; they fill in as the ATM models land."]


__all__ = ["Seed001"]
