"""Seed 000 §2.2's L3F bridge on real interfaces: a small daemon, run inside the bridge
node's namespace, doing what the simulator's L3F bridge (crates/sim node/forward/) does
with the kernel's help, as Debian's parprouted does:

- the kernel answers ARP on each port for hosts it has a /32 route to through another
  port (``proxy_arp`` = 1, ``neigh.PORT.proxy_delay`` = 0: without it the first reply
  waits up to 0.8 s) and forwards IP between the ports (``ip_forward`` = 1);
- the daemon learns where each host is from every ARP packet it sees (the sender's
  address on the port it came in by, RFC 826's "merge" of the sender) and installs a
  /32 route to it through that port, and the sender's MAC in the port's neighbour table;
- an ARP request for a host not yet learned is asked again on the other ports, from the
  bridge's own address, and the requester remembered; when the reply comes back, the
  daemon learns the host and answers the requester on its behalf with the MAC of the
  requester's port (seed 000 §2.2: "When an ARP reply is received, it creates a new entry
  for WS2 in its forwarding table, and sends ARP reply to WS1 with MAC-A1"; the
  simulator's bridge, crates/sim/src/node/forward/l3f.rs, step 4). Later requests are
  answered by the kernel's proxy ARP.

Usage (in the namespace): ``python -m qoslab.backends.emu.l3f ADDRESS/PREFIX PORT...``;
it prints ``ready`` once it listens on every port, and ends when its parent (the run
that started it) is gone.
"""

from __future__ import annotations

import os
import select
import socket
import struct
import sys
import time
from ipaddress import IPv4Address, IPv4Interface

ETH_P_ARP = 0x0806
"""EtherType of ARP (IEEE 802 numbers; RFC 826)."""
ARP_REQUEST, ARP_REPLY = 1, 2
"""RFC 826 ar$op."""
_ARP = struct.Struct("!HHBBH6s4s6s4s")
"""RFC 826: hrd, pro, hln, pln, op, sha, spa, tha, tpa (Ethernet and IPv4: 28 octets)."""
PARENT_CHECK_S = 1.0
"""How often the daemon looks whether its parent is still there."""
NUD_REACHABLE = 0x02
"""linux/neighbour.h: a neighbour entry confirmed now (an ARP packet from the host is its
confirmation, RFC 826's merge); it goes stale after the interface's reachable time."""
PENDING_TIMEOUT_S = 1.0
"""How long a requester waits for the answer to the request the daemon asked again: Linux
retransmits an unanswered ARP request after 1 s (``neigh.*.retrans_time_ms``), and its
retry is answered by proxy ARP; the simulator's ``PENDING_TIMEOUT_NS``."""


def arp_request(mac: bytes, own: IPv4Address, target: IPv4Address) -> bytes:
    """A broadcast ARP request for ``target`` from ``own`` at ``mac`` (RFC 826)."""
    body = _ARP.pack(1, 0x0800, 6, 4, ARP_REQUEST, mac, own.packed, b"\0" * 6, target.packed)
    return b"\xff" * 6 + mac + struct.pack("!H", ETH_P_ARP) + body


def arp_reply(mac: bytes, sender: IPv4Address, to_mac: bytes, to: IPv4Address) -> bytes:
    """An ARP reply to ``to`` at ``to_mac``: ``sender`` is at ``mac`` (RFC 826)."""
    body = _ARP.pack(1, 0x0800, 6, 4, ARP_REPLY, mac, sender.packed, to_mac, to.packed)
    return to_mac + mac + struct.pack("!H", ETH_P_ARP) + body


def parse_arp(frame: bytes) -> tuple[int, bytes, IPv4Address, IPv4Address] | None:
    """(op, sender MAC, sender address, target address) of an Ethernet/IPv4 ARP frame."""
    if len(frame) < 14 + _ARP.size:
        return None
    hrd, pro, hln, pln, op, sha, spa, _tha, tpa = _ARP.unpack_from(frame, 14)
    if (hrd, pro, hln, pln) != (1, 0x0800, 6, 4):
        return None
    return op, sha, IPv4Address(spa), IPv4Address(tpa)


def run(own: IPv4Interface, ports: list[str]) -> None:
    """Learn and ask until the parent is gone."""
    from pyroute2 import IPRoute

    parent = os.getppid()
    socks: dict[socket.socket, str] = {}
    for name in ports:
        s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ARP))
        s.bind((name, ETH_P_ARP))
        socks[s] = name
    learned: dict[IPv4Address, str] = {}
    # Target -> the requesters waiting for it: (port, MAC, address, when it asked).
    pending: dict[IPv4Address, list[tuple[str, bytes, IPv4Address, float]]] = {}
    with IPRoute() as ipr:
        index = {name: ipr.link_lookup(ifname=name)[0] for name in ports}
        macs = {
            name: bytes.fromhex(ipr.link("get", index=index[name])[0].get("address").replace(":", "")) for name in ports
        }
        # The run waits for this line before its tests: a request missed while the
        # daemon was starting would cost the requester an ARP retry (1 s).
        sys.stdout.write("ready\n")
        sys.stdout.flush()
        while os.getppid() == parent:
            ready, _, _ = select.select(list(socks), [], [], PARENT_CHECK_S)
            if not ready:  # quiet: forget the requesters nobody answered
                pending.clear()
            for s in ready:
                port = socks[s]
                frame, addr = s.recvfrom(2048)
                if addr[2] == socket.PACKET_OUTGOING:
                    continue
                arp = parse_arp(frame)
                if arp is None:
                    continue
                op, sha, sender, target = arp
                if sender in own.network and sender != own.ip:
                    if learned.get(sender) != port:
                        learned[sender] = port
                        ipr.route("replace", dst=str(sender), dst_len=32, oif=index[port])
                    # The table's MAC too (seed 000 Fig. 6: IP, port, MAC): the kernel
                    # forwards to the host without asking for it first.
                    mac = sha.hex(":")
                    ipr.neigh("replace", dst=str(sender), lladdr=mac, ifindex=index[port], state=NUD_REACHABLE)
                now = time.monotonic()
                if op == ARP_REPLY:
                    for asker_port, asker_mac, asker, since in pending.pop(sender, []):
                        if asker_port != port and now - since < PENDING_TIMEOUT_S:
                            out = next(o for o, name in socks.items() if name == asker_port)
                            out.send(arp_reply(macs[asker_port], sender, asker_mac, asker))
                unknown = target not in learned and target != own.ip and target in own.network
                if op == ARP_REQUEST and unknown and target != sender:
                    waiting = [w for w in pending.get(target, []) if w[2] != sender and now - w[3] < PENDING_TIMEOUT_S]
                    pending[target] = [*waiting, (port, sha, sender, now)]
                    for other, o in socks.items():
                        if o != port:
                            other.send(arp_request(macs[o], own.ip, target))


def main() -> None:
    run(IPv4Interface(sys.argv[1]), sys.argv[2:])


if __name__ == "__main__":
    main()
