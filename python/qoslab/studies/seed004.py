"""Seed 004 (004_19875980762e8d71.txt): a fast wireless downlink whose acknowledgements
return over a slow modem; hidden terminals; a router that picks the radio or the modem.

Every number the seed's text states is transcribed; none is reproduced by this study
yet (the seed's figures give no numbers in the text, and the WaveLAN download sweep is
being added by another helper). Each row says why.
"""

from __future__ import annotations

from qoslab.studies import Published, Study, Tolerance

NOT_SWEEP = "the download-vs-upload sweep over the 2 Mb/s WaveLAN downlink is not in this study yet"
NOT_ADAPTIVE = "the adaptive radio/modem router is not wired into a simulated node yet"
STATED = Tolerance("a setting or fact the seed states", abs=0.0)


class Seed004(Study):
    seed = "004"
    title = "Asymmetric wireless networking: a radio downlink, a modem uplink"
    paper = "B. Maggs (Carnegie Mellon), Asymmetric Wireless Networking (web page, June 1998)"
    question = "With a fast wireless downlink and acknowledgements over a slow modem, how does download speed follow upload speed? Hidden terminals; a router that picks radio or modem by delivery ratio and caps its backoff."
    scenarios = ["seed004_asymmetric.toml"]

    def published(self) -> list[Published]:
        rows = [
            ("peak95.uplink", "95 % of peak download over 2 Mb/s wireless is reached with an uplink of", 57.6, "kb/s", Tolerance("one of the serial speeds swept", rel=0.0), NOT_SWEEP),
            ("backoff.cap", "the router's acknowledgement backoff never exceeds", 0.1, "s", STATED, NOT_ADAPTIVE),
            ("tcp.shutdown.loss", "TCP effectively shuts down once losses approach", 10, "%", Tolerance("'approach': 3 points", abs=3.0), NOT_SWEEP),
            ("delay.noticeable", "a delay the user notices", 100, "ms", STATED, "a statement about users, not a measurement"),
            ("wavelan.rate", "WaveLAN data rate", 2, "Mb/s", STATED, NOT_SWEEP),
            ("wavelan.freq", "WaveLAN carrier", 915, "MHz", STATED, "radio frequency is not modelled"),
            ("ttcp.file", "file downloaded with ttcp", 10, "MB", STATED, NOT_SWEEP),
            ("serial.min", "slowest serial line of the sweep", 1200, "b/s", STATED, NOT_SWEEP),
            ("serial.max", "fastest serial line of the sweep", 115200, "b/s", STATED, NOT_SWEEP),
            ("trials", "trials per point (maximum reported)", 10, "trials", STATED, NOT_SWEEP),
            ("modem.rate", "V.34bis modem upload speed", 33.6, "kb/s", STATED, NOT_SWEEP),
            ("modem.compression", "modem compression ratio (about 2:1)", 2, "", Tolerance("'about'", rel=0.25), NOT_SWEEP),
            ("adsl.down", "Pittsburgh ADSL trial download", 1.5, "Mb/s", STATED, "a cited deployment, not an experiment of the seed"),
            ("adsl.up", "Pittsburgh ADSL trial upload", 64, "kb/s", STATED, "a cited deployment, not an experiment of the seed"),
            ("ack.size", "acknowledgement datagram (20-byte IP + 20-byte TCP header)", 40, "bytes", STATED, NOT_SWEEP),
            ("data.size", "download datagram payload (approximately)", 1500, "bytes", Tolerance("'approximately'", rel=0.05), NOT_SWEEP),
            ("serial115.beats.wireless", "a 115.2 kb/s serial uplink beats wireless both ways (2 Mb/s)", "yes", "", STATED, NOT_SWEEP),
            ("delivery.threshold", "the router leaves the radio below this delivery ratio (seed: 'based on the percentage… received')", None, "%", STATED, "the seed gives no number; the simulator's 90 % is our choice"),
        ]
        return [Published(k, i, p, u, t, not_reproduced=r, source="text") for k, i, p, u, t, r in rows if p is not None]

    def discussion(self, rows, data):
        return ["No row is reproduced by this study yet. The simulator already gives a download whose ACKs return over SLIP proportional to the upload rate (tests/test_tcp_asymmetric.py, on 10 Mb/s Ethernet); the WaveLAN sweep and the adaptive router will fill these rows."]


__all__ = ["Seed004"]
