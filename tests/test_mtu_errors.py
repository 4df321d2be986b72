"""Bad stacks: each refusal names the offending token, its column, and what would fit."""

from __future__ import annotations

import subprocess
import sys

import pytest
from qoslab.analysis.mtu import analyse
from qoslab.errors import InputError


def refusal(stack: str) -> str:
    with pytest.raises(InputError) as caught:
        analyse(stack)
    return str(caught.value)


def column_of(stack: str, token: str) -> int:
    return stack.index(token) + 1


def test_unknown_layer_with_suggestion():
    stack = "ethrnet/ipv4/tcp"
    message = refusal(stack)
    assert f"STACK:1:{column_of(stack, 'ethrnet')}:" in message
    assert "unknown layer" in message and "'ethrnet'" in message
    assert "did you mean 'ethernet'?" in message


def test_ip_over_nothing():
    stack = "ipv4/tcp"
    message = refusal(stack)
    assert "STACK:1:1:" in message
    assert "cannot be the outermost layer" in message
    assert "'ethernet'" in message  # what would fit there
    assert "try 'ethernet/ipv4/tcp'" in message


def test_tcp_under_ip():
    stack = "ethernet/tcp/ipv4"
    message = refusal(stack)
    assert f"STACK:1:{column_of(stack, 'tcp')}:" in message
    assert "'ethernet' cannot carry 'tcp'" in message
    assert "expected: one of 'ipv4', 'pppoe'" in message


def test_nothing_above_icmp():
    stack = "ethernet/ipv4/icmp/udp"
    message = refusal(stack)
    assert f"STACK:1:{column_of(stack, 'udp')}:" in message
    assert "'icmp' ends the stack" in message


@pytest.mark.parametrize(
    ("stack", "token", "expected"),
    [
        ("ethernet(mtu=70000)/ipv4", "mtu=70000", "an integer from 68 to 9216"),
        ("ethernet(mtu=40)/ipv4", "mtu=40", "an integer from 68 to 9216"),
        ("ethernet/ipv4/esp(cipher=rot13)/udp", "cipher=rot13", "'3des-cbc'"),
        ("serial(9x1)/slip/ipv4", "9x1", "a character format such as '8n1'"),
    ],
)
def test_option_out_of_range(stack, token, expected):
    message = refusal(stack)
    assert f"STACK:1:{column_of(stack, token)}:" in message
    assert "value out of range" in message
    assert expected in message


def test_unknown_option_with_suggestion():
    stack = "ethernet/ipv4/udp/openvpn(chiper=none)/ethernet"
    message = refusal(stack)
    assert f"STACK:1:{column_of(stack, 'chiper')}:" in message
    assert "unknown option" in message and "did you mean 'cipher'?" in message


def test_cli_exit_code_2_without_traceback():
    proc = subprocess.run(
        [sys.executable, "-m", "qoslab", "mtu", "ethernet/tcp/ipv4"], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert "'ethernet' cannot carry 'tcp'" in proc.stderr
    assert proc.stdout == ""
