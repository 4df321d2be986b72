# %% [markdown]
# # qoslab from Python: a sweep of a wired LAN joined to Wi-Fi, in a few cells
#
# Run it as a script (`python docs/api_example.py`) or cell by cell in an editor that knows
# `# %%` cells (VS Code, Spyder, JupyterLab with jupytext). The tests run it.

# %%
import qoslab

# A scenario built in code is checked as a file is: a wrong key, unit or reference raises
# qoslab.InputError naming the key path, what was expected and what was found.
scenario = qoslab.Scenario(
    scenario={"name": "Ethernet host to a Wi-Fi station through an AP", "seed": 1},
    node={
        "wired": {"role": "host", "address": "192.168.1.10/24"},
        "ap": {"role": "ap"},
        "laptop": {"role": "host", "address": "192.168.1.20/24"},
    },
    link=[
        {"type": "ethernet", "rate": "100 Mbps", "ends": ["wired", "ap"]},
        {"type": "wifi", "standard": "802.11b", "rate": "11 Mbps", "ap": "ap", "stations": ["laptop"]},
    ],
    test=[{"method": "udp.flow", "from": "wired", "to": "laptop", "rate": "8 Mbps", "payload": 1472, "duration": "2 s"}],
)

# %%
# One run: the records are the numbers `qoslab run` prints (docs/metrics.md defines each).
results = qoslab.run(scenario)
for record in results.records:
    print(record["test"], record["metrics"]["goodput_mbps"], "Mb/s,", record["metrics"]["loss_pct"], "% lost")

# %%
# The same path at several offered rates: build the scenario again with another rate.
rows = []
for mbps in (2, 4, 6, 8):
    tables = scenario.model_dump(mode="json", by_alias=True, exclude_unset=True)
    tables["test"][0]["rate"] = f"{mbps} Mbps"
    rows += qoslab.run(qoslab.Scenario(**tables)).rows()
for row in rows:  # offered_mbps counts Ethernet frames, as RFC 2544 testers do (docs/metrics.md)
    print(f"offered {row['offered_mbps']:6.3f} Mb/s  goodput {row['goodput_mbps']:6.3f} Mb/s  lost {row['loss_pct']:5.2f} %")

# %%
# Results as Arrow (and pandas, if installed) for the tools you already use.
table = results.to_arrow()
print(table.column_names[:8], "...")

# %%
# The MTU analysis of a stacked VPN, as `qoslab mtu` prints it.
analysis = qoslab.mtu("ethernet/ipv4/udp/openvpn(cipher=none,auth=sha1)/ethernet/pppoe/ipv4/tcp")
for interface in analysis.interfaces:
    print(f"{interface.name:>12}  MTU {interface.mtu}")
print("TCP MSS inside:", analysis.tcp_mss)
