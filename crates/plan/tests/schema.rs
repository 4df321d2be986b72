//! The checked-in JSON Schema of the plan (`schema/plan.schema.json`) is what the Rust
//! types generate: a change of the types without regenerating the file fails here.
//!
//! Regenerate: `QOSLAB_WRITE_SCHEMA=1 cargo test -p qoslab-plan --test schema`.

use qoslab_plan::{plan_schema, SimConfig, PLAN_SCHEMA};

const PATH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../schema/plan.schema.json");

fn generated() -> String {
    serde_json::to_string_pretty(&plan_schema()).expect("a schema prints") + "\n"
}

#[test]
fn the_checked_in_schema_is_what_the_types_generate() {
    let text = generated();
    if std::env::var_os("QOSLAB_WRITE_SCHEMA").is_some() {
        std::fs::write(PATH, &text).expect("schema/plan.schema.json is writable");
    }
    let checked_in = std::fs::read_to_string(PATH).expect("schema/plan.schema.json is checked in");
    assert!(
        checked_in == text,
        "schema/plan.schema.json differs from the plan's Rust types; regenerate it with \
         QOSLAB_WRITE_SCHEMA=1 cargo test -p qoslab-plan --test schema"
    );
}

#[test]
fn the_schema_demands_the_version_field() {
    let schema = plan_schema();
    let required = schema["required"].as_array().expect("SimConfig has required fields");
    assert!(required.iter().any(|f| f == "schema"), "\"schema\" is required: {required:?}");
    assert_eq!(schema["properties"]["schema"]["type"], "integer");
}

#[test]
fn a_plan_without_its_version_is_refused_when_read() {
    let err = serde_json::from_str::<SimConfig>(r#"{"seed": 1, "duration_ns": 5, "nodes": [], "links": []}"#)
        .expect_err("no schema field");
    assert!(err.to_string().contains("missing field `schema`"), "{err}");
}

#[test]
fn a_plan_of_another_version_is_refused_by_check() {
    let text = format!(r#"{{"schema": {}, "seed": 1, "duration_ns": 5, "nodes": [], "links": []}}"#, PLAN_SCHEMA + 1);
    let plan: SimConfig = serde_json::from_str(&text).expect("well-formed");
    let err = plan.check().expect_err("another version");
    assert_eq!(err.field, "schema");
    let ok: SimConfig =
        serde_json::from_str(&text.replace(&format!("{}", PLAN_SCHEMA + 1), &PLAN_SCHEMA.to_string())).unwrap();
    ok.check().expect("this version");
}

#[test]
fn a_tcp_word_outside_the_vocabulary_is_refused_when_read() {
    // The scenario's words are the plan's: "hystart++" and "4.4bsd" read, a misspelling
    // is refused by serde with the words it takes.
    let flow = |tcp: &str| {
        format!(
            r#"{{"kind": "tcp", "id": 1, "from": 0, "to": "10.0.0.2", "dst_port": 5001, "start_ns": 0, "stop_ns": 1, "tcp": {tcp}}}"#
        )
    };
    let ok: qoslab_plan::FlowConfig =
        serde_json::from_str(&flow(r#"{"hystart": "hystart++", "cwnd_growth": "4.4bsd", "congestion": "newreno"}"#))
            .expect("the scenario's words");
    let qoslab_plan::FlowConfig::Tcp { tcp, .. } = ok else { panic!("a TCP flow") };
    assert_eq!(tcp.hystart, Some(qoslab_plan::flow::HyStartMode::PlusPlus));
    assert_eq!(tcp.cwnd_growth, Some(qoslab_plan::flow::CwndGrowth::Bsd44));
    let err =
        serde_json::from_str::<qoslab_plan::FlowConfig>(&flow(r#"{"hystart": "uff"}"#)).expect_err("a misspelling");
    assert!(err.to_string().contains("expected one of `off`, `classic`, `hystart++`"), "{err}");
}
