"""The scenario language: load a TOML scenario, validate it, show it, describe it.

Public API
----------
- :func:`load_scenario` / :func:`loads_scenario`: read and validate; every problem is
  raised at once as :class:`qoslab.errors.InputError`, each with file:line:column,
  key path, what was expected and what was found.
- :func:`topology_tree`: the topology as a :class:`rich.tree.Tree`.
- :func:`json_schema`: the JSON Schema of the language, for editors.
- :class:`Scenario` and the table models in :mod:`qoslab.scenario.model`.

The ``over`` reference of a tunnel names another tunnel (its ``name``), a link (its
``name``, or ``link[N]`` for the N-th ``[[link]]`` from 0); left out, an IP tunnel
follows the routed path from ``from`` to ``to``.
"""

from __future__ import annotations

from typing import Any

from qoslab.scenario.load import load_scenario, loads_scenario
from qoslab.scenario.model import Scenario
from qoslab.scenario.tree import topology_tree

_ONE_OR_MANY = ("address", "loss", "shaper")


def json_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of the scenario language, from the models.

    Examples
    --------
    >>> schema = json_schema()
    >>> schema["title"], "link" in schema["properties"]
    ('Scenario', True)
    """
    schema = Scenario.model_json_schema(by_alias=True)
    # Fields that accept one item where a list is expected (address = "10.0.0.1/24",
    # loss = "1 %", shaper = { … }): the models see a list, the file may hold one item.
    for definition in schema.get("$defs", {}).values():
        for name, prop in definition.get("properties", {}).items():
            if name in _ONE_OR_MANY and prop.get("type") == "array":
                forms = [prop["items"], {k: v for k, v in prop.items() if k not in ("description", "default")}]
                if name == "loss":
                    forms.insert(
                        0, {"type": ["string", "number"], "description": "Bernoulli loss both ways: '1 %' or 0.01."}
                    )
                definition["properties"][name] = {
                    "anyOf": forms,
                    **{k: v for k, v in prop.items() if k in ("description", "default")},
                }
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema.setdefault("description", Scenario.__doc__)
    return schema


__all__ = ["Scenario", "load_scenario", "loads_scenario", "topology_tree", "json_schema"]
