"""The results' JSON Schema as scripts/gen_plan.sh hands it to datamodel-codegen.

datamodel-codegen makes a pydantic ``RootModel`` class for every constrained schema that
is not a field of an object: each ``u64`` of an array (``"minimum": 0``), of a map, of a
fixed-length pair. A result's arrays are long (a TCP sender's per-ACK trace has one entry
per ACK, nine columns), and a RootModel per entry would make each number an object to
build and to read through ``.root``. So the constraints of array and map *elements* (``minimum``, ``format``,
``minItems``/``maxItems`` of a nested array that is not a tuple) are left out of the copy
the generator reads: the elements become plain ``int``; the fields of objects keep theirs.
(A tuple inside an array, LANE's ``joined`` and ``log``, stays a small RootModel: its
length is what makes it a tuple to the generator.) schema/results.schema.json itself keeps every constraint (the Rust types and
tests/test_plan_schema.py check runs against it with the ``jsonschema`` package).

Usage: ``python3 scripts/results_codegen_schema.py IN.json OUT.json``
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

ELEMENT_KEYS = ("items", "prefixItems", "additionalProperties")
"""The keywords whose schemas describe elements, not named fields."""

ELEMENT_CONSTRAINTS = ("minimum", "format", "minItems", "maxItems")


def unconstrain_elements(schema: Any, *, element: bool = False) -> Any:
    """A copy of ``schema`` without :data:`ELEMENT_CONSTRAINTS` inside element schemas."""
    if isinstance(schema, list):
        return [unconstrain_elements(s, element=element) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {}
    tuple_ = "prefixItems" in schema
    for key, value in schema.items():
        # A tuple's length (minItems = maxItems = its arity) is what makes it a tuple.
        if element and key in ELEMENT_CONSTRAINTS and not (tuple_ and key in ("minItems", "maxItems")):
            continue
        out[key] = unconstrain_elements(value, element=element or key in ELEMENT_KEYS)
    return out


def main(argv: list[str]) -> int:
    source, target = Path(argv[1]), Path(argv[2])
    schema = json.loads(source.read_text(encoding="utf-8"))
    target.write_text(json.dumps(unconstrain_elements(schema), indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
