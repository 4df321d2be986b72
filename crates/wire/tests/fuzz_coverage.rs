//! Every module of the wire crate that parses bytes has a cargo-fuzz target in
//! crates/wire/fuzz/fuzz_targets (issue 20: "cargo-fuzz targets for every crates/wire
//! parser"), so that a new parser cannot be added without one. The fuzz crate itself
//! builds only with a nightly compiler (scripts/fuzz.sh), so this test reads the
//! sources instead of building it.

use std::fs;
use std::path::Path;

/// Modules with no input format to parse, and why; each is checked to still have none.
const NO_PARSER: [(&str, &str); 4] = [
    ("checksum", "the Internet checksum (RFC 1071): arithmetic over bytes, no format"),
    ("crc", "CRC parameter sets, no format"),
    ("encap", "builds frames from layer options for `qoslab mtu`; the bytes it reads back are its own, through the other modules' parsers"),
    ("pcap", "a capture writer only; qoslab never reads pcap files"),
];

/// A module's source: `src/NAME.rs`, or every file of the folder `src/NAME/` (a module
/// split into files, smoltcp's way), in name order.
fn module_source(root: &Path, module: &str) -> String {
    let file = root.join(format!("src/{module}.rs"));
    if file.exists() {
        return fs::read_to_string(file).unwrap();
    }
    let mut files: Vec<_> = fs::read_dir(root.join("src").join(module)).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    files.iter().filter(|p| p.extension().is_some_and(|e| e == "rs")).map(|p| fs::read_to_string(p).unwrap()).collect()
}

fn modules(lib: &str) -> Vec<String> {
    lib.lines().filter_map(|l| l.trim().strip_prefix("pub mod ")?.strip_suffix(';').map(str::to_owned)).collect()
}

#[test]
fn every_parser_has_a_fuzz_target() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let lib = fs::read_to_string(root.join("src/lib.rs")).unwrap();
    let mut targets = String::new();
    for entry in fs::read_dir(root.join("fuzz/fuzz_targets")).unwrap() {
        targets += &fs::read_to_string(entry.unwrap().path()).unwrap();
    }
    let manifest = fs::read_to_string(root.join("fuzz/Cargo.toml")).unwrap();
    let mut missing = Vec::new();
    for module in modules(&lib) {
        let source = module_source(root, &module);
        if let Some((_, why)) = NO_PARSER.iter().find(|(m, _)| *m == module) {
            for parser in ["pub fn parse", "pub fn new_checked", "pub fn decode", "pub fn decapsulate"] {
                assert!(!source.contains(parser), "{module} ({why}) now has `{parser}`: give it a fuzz target");
            }
            continue;
        }
        let used = targets.contains(&format!("wire::{module}::"))
            || targets.contains(&format!("wire::{module};"))
            || targets.contains(&format!("{module}::"));
        if !used {
            missing.push(module);
        }
    }
    assert!(missing.is_empty(), "modules with no fuzz target in crates/wire/fuzz/fuzz_targets: {missing:?}");
    // Every target file is declared as a binary of the fuzz crate and has seeds.
    for entry in fs::read_dir(root.join("fuzz/fuzz_targets")).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_str().unwrap().to_owned();
        assert!(
            manifest.contains(&format!("path = \"fuzz_targets/{name}.rs\"")),
            "{name} is not a [[bin]] of crates/wire/fuzz/Cargo.toml"
        );
        let seeds = root.join("fuzz/seeds").join(&name);
        assert!(fs::read_dir(&seeds).is_ok_and(|mut d| d.next().is_some()), "no seed corpus in {}", seeds.display());
    }
}
