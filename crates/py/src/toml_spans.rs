//! Positions of keys and values in a TOML text, for error messages.
//!
//! Python's `tomllib` keeps no positions, so the scenario loader asks this module where
//! each key and value sits. `toml_edit`'s parser keeps a byte span on every key, value
//! and table header; this module walks the document and turns those spans into 1-based
//! line and column numbers (columns count characters, not bytes, as editors do).
//!
//! A path is the list of table keys (str) and array indices (int) from the root:
//! `("link", 2, "ends", 1)` is the second element of `ends` in the third `[[link]]`.
//! No validation happens here; a text that does not parse raises `ValueError` (the
//! loader reports syntax errors from `tomllib`, which it runs first).

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use toml_edit::{Document, InlineTable, Item, Table, Value};

/// One step in a path: a table key or an array index.
#[derive(Clone)]
enum Step {
    Key(String),
    Index(usize),
}

/// Where a path's key and its value start, as 1-based (line, column).
type Pos = Option<(usize, usize)>;

struct Walker<'a> {
    text: &'a str,
    /// Byte offset at which each line starts.
    line_starts: Vec<usize>,
    out: Vec<(Vec<Step>, Pos, Pos)>,
}

impl<'a> Walker<'a> {
    fn new(text: &'a str) -> Self {
        let mut line_starts = vec![0];
        line_starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        Walker { text, line_starts, out: Vec::new() }
    }

    fn pos(&self, span: Option<std::ops::Range<usize>>) -> Pos {
        let start = span?.start;
        let line = self.line_starts.partition_point(|&s| s <= start); // 1-based
        let line_start = self.line_starts[line - 1];
        let column = self.text.get(line_start..start).map_or(start - line_start, |s| s.chars().count()) + 1;
        Some((line, column))
    }

    fn record(&mut self, path: &[Step], key: Pos, value: Pos) {
        self.out.push((path.to_vec(), key, value));
    }

    fn table(&mut self, table: &Table, path: &mut Vec<Step>) {
        for (name, item) in table.iter() {
            let key = table.key(name).and_then(|k| self.pos(k.span()));
            path.push(Step::Key(name.to_owned()));
            self.item(item, key, path);
            path.pop();
        }
    }

    fn inline_table(&mut self, table: &InlineTable, path: &mut Vec<Step>) {
        for (name, value) in table.iter() {
            let key = table.key(name).and_then(|k| self.pos(k.span()));
            path.push(Step::Key(name.to_owned()));
            self.value(value, key, path);
            path.pop();
        }
    }

    fn item(&mut self, item: &Item, key: Pos, path: &mut Vec<Step>) {
        match item {
            Item::None => {}
            Item::Value(value) => self.value(value, key, path),
            Item::Table(table) => {
                // A table's own span is its `[header]` (none for implicit parents).
                let at = self.pos(table.span());
                self.record(path, key, at.or(key));
                self.table(table, path);
            }
            Item::ArrayOfTables(tables) => {
                let first = tables.iter().next().and_then(|t| self.pos(t.span()));
                self.record(path, key, first.or(key));
                for (i, table) in tables.iter().enumerate() {
                    path.push(Step::Index(i));
                    let at = self.pos(table.span());
                    self.record(path, at, at);
                    self.table(table, path);
                    path.pop();
                }
            }
        }
    }

    fn value(&mut self, value: &Value, key: Pos, path: &mut Vec<Step>) {
        let at = self.pos(value.span());
        self.record(path, key, at);
        match value {
            Value::Array(array) => {
                for (i, element) in array.iter().enumerate() {
                    path.push(Step::Index(i));
                    self.value(element, None, path);
                    path.pop();
                }
            }
            Value::InlineTable(table) => self.inline_table(table, path),
            _ => {}
        }
    }
}

/// Positions of every key and value in a TOML text.
///
/// Returns a dict mapping each path (a tuple of str keys and int indices) to a pair
/// `(key_position, value_position)`, each a 1-based `(line, column)` or `None` (array
/// elements have no key; implicit tables such as `node` in `[node.ws1]` have the
/// position of their first mention). The root is not included.
#[pyfunction]
pub fn toml_key_spans<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyDict>> {
    let doc = Document::parse(text).map_err(|e| PyValueError::new_err(e.to_string()))?;
    let mut walker = Walker::new(text);
    let mut path = Vec::new();
    walker.table(doc.as_table(), &mut path);
    let dict = PyDict::new(py);
    for (steps, key, value) in walker.out {
        let elems: Vec<Bound<'py, PyAny>> = steps
            .into_iter()
            .map(|s| match s {
                Step::Key(k) => k.into_pyobject(py).expect("str converts").into_any(),
                Step::Index(i) => i.into_pyobject(py).expect("int converts").into_any(),
            })
            .collect();
        dict.set_item(PyTuple::new(py, elems)?, (key, value))?;
    }
    Ok(dict)
}
