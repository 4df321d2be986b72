#!/usr/bin/env bash
# Regenerates the plan's and the results' JSON Schemas from the Rust types
# (schema/plan.schema.json, schema/results.schema.json) and the Python plan models from
# the plan's schema (python/qoslab/plan/models.py), and the Python results models from the
# results' schema (python/qoslab/plan/results_models.py). Run it after changing a type in
# crates/plan or the results record in crates/sim/src/results.rs, and commit the four
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
generate() {  # generate SCHEMA OUTPUT: pydantic v2 models, one setting for both files
    "$codegen" --input "$1" --input-file-type jsonschema \
        --output "$2" --output-model-type pydantic_v2.BaseModel \
        --target-python-version 3.11 --use-standard-collections --use-union-operator \
        --disable-timestamp --use-double-quotes --use-schema-description --use-field-description \
        --field-constraints --use-title-as-name --set-default-enum-member --formatters black \
        --allow-population-by-field-name \
        2> >(grep -v "format of .* not understood\|_get_type(\|FutureWarning\|warn_deprecated" >&2)
    "$ruff" check -q --fix "$2"
    "$ruff" format -q "$2"
}
generate schema/plan.schema.json python/qoslab/plan/models.py
# The results' elements (array entries, map values) as plain ints, not one RootModel
# object each: scripts/results_codegen_schema.py says why.
results_schema=$(mktemp --suffix=.json)
trap 'rm -f "$results_schema"' EXIT
python3 scripts/results_codegen_schema.py schema/results.schema.json "$results_schema"
generate "$results_schema" python/qoslab/plan/results_models.py
sed -i "s|^#   filename:  .*\.json$|#   filename:  results.schema.json (scripts/results_codegen_schema.py)|" python/qoslab/plan/results_models.py
