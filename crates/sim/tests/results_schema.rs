//! The checked-in JSON Schema of the results (`schema/results.schema.json`) is what the
//! Rust types generate, and a real run's results validate against its shape.
//!
//! Regenerate: `QOSLAB_WRITE_SCHEMA=1 cargo test -p qoslab-sim --test results_schema`
//! (or scripts/gen_plan.sh, which regenerates every schema).

use sim::results::{results_schema, RESULTS_SCHEMA};

const PATH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../schema/results.schema.json");

#[test]
fn the_checked_in_schema_is_what_the_types_generate() {
    let text = serde_json::to_string_pretty(&results_schema()).expect("a schema prints") + "\n";
    if std::env::var_os("QOSLAB_WRITE_SCHEMA").is_some() {
        std::fs::write(PATH, &text).expect("schema/results.schema.json is writable");
    }
    let checked_in = std::fs::read_to_string(PATH).expect("schema/results.schema.json is checked in");
    assert!(
        checked_in == text,
        "schema/results.schema.json differs from the results' Rust types; regenerate it with \
         QOSLAB_WRITE_SCHEMA=1 cargo test -p qoslab-sim --test results_schema"
    );
}

#[test]
fn a_run_names_its_results_version_and_has_every_required_field() {
    // An empty network run for 1 ms: the top-level fields are all there.
    let config = sim::config::SimConfig { duration_ns: 1_000_000, ..Default::default() };
    let results = serde_json::to_value(sim::simulate(config).expect("an empty run")).unwrap();
    assert_eq!(results["schema"], RESULTS_SCHEMA);
    let schema = results_schema();
    for field in schema["required"].as_array().expect("required fields") {
        let field = field.as_str().unwrap();
        assert!(results.get(field).is_some(), "{field} is required by the schema but not written");
    }
    for key in results.as_object().unwrap().keys() {
        assert!(schema["properties"].get(key).is_some(), "{key} is written but not in the schema");
    }
}
