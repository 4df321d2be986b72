#!/usr/bin/env bash
# Installs qoslab, then runs its main job. Until the simulator exists the main job is
# the MTU analysis of seed 002's stacks: PPPoE and PPTP over an OpenVPN-UDP TAP L2-VPN.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
qoslab=.venv/bin/qoslab
"$qoslab" mtu "ethernet/ipv4/udp/openvpn(cipher=none,auth=sha1)/ethernet/pppoe/ipv4/tcp" --count-fcs
"$qoslab" mtu "ethernet/ipv4/udp/openvpn(cipher=none,auth=sha1)/ethernet/ipv4/gre(pptp)/ppp/ipv4/tcp" --count-fcs
