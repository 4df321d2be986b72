#!/usr/bin/env bash
# Regenerates the plan's and the results' JSON Schemas from the Rust types
# (schema/plan.schema.json, schema/results.schema.json) and the Python plan models from
# the plan's schema (python/qoslab/plan/models.py). Run it after changing a type in
# crates/plan or the results record in crates/sim/src/results.rs, and commit the three
# files with the change: tests/test_plan_schema.py and the crates' schema tests fail
# until they agree. DATAMODEL_CODEGEN names the generator (datamodel-code-generator
# from PyPI, the version below; default: `datamodel-codegen` on PATH). The models take
# their fields by name as well as by alias (populate_by_name), so that the lowering
# writes a flow's `from` as `from_=` and mypy checks it.
set -euo pipefail
cd "$(dirname "$0")/.."
codegen=${DATAMODEL_CODEGEN:-datamodel-codegen}
ruff=${RUFF:-ruff}
"$codegen" --version | grep -q " 0.89.0$" || { echo "need datamodel-code-generator 0.89.0: pip install datamodel-code-generator==0.89.0" >&2; exit 1; }
QOSLAB_WRITE_SCHEMA=1 cargo test -q -p qoslab-plan --test schema
QOSLAB_WRITE_SCHEMA=1 cargo test -q -p qoslab-sim --test results_schema
"$codegen" --input schema/plan.schema.json --input-file-type jsonschema \
    --output python/qoslab/plan/models.py --output-model-type pydantic_v2.BaseModel \
    --target-python-version 3.11 --use-standard-collections --use-union-operator \
    --disable-timestamp --use-double-quotes --use-schema-description --use-field-description \
    --field-constraints --use-title-as-name --set-default-enum-member --formatters black \
    --allow-population-by-field-name \
    2> >(grep -v "format of .* not understood\|_get_type(\|FutureWarning\|warn_deprecated" >&2)
"$ruff" check -q --fix python/qoslab/plan/models.py
"$ruff" format -q python/qoslab/plan/models.py
