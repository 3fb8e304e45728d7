//! `docs/bad-input.md` and the tests it cites cannot drift apart: every test the document names
//! (a code span `prefix::name` with a prefix from its table, anywhere in the text) exists in the
//! file that prefix points to, and every row of its tables names a test or another check.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the tests package lives in the workspace")
        .to_path_buf()
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

/// The cells of a Markdown table row, or `None` for a line that is not one. Pipes inside
/// backticks do not separate cells.
fn cells(line: &str) -> Option<Vec<String>> {
    let body = line.trim().strip_prefix('|')?.strip_suffix('|')?;
    let mut out = vec![String::new()];
    let mut code = false;
    for c in body.chars() {
        match c {
            '`' => {
                code = !code;
                out.last_mut().expect("one cell at least").push(c);
            }
            '|' if !code => out.push(String::new()),
            _ => out.last_mut().expect("one cell at least").push(c),
        }
    }
    Some(out.into_iter().map(|c| c.trim().to_owned()).collect())
}

/// The spans between backticks.
fn code_spans(text: &str) -> Vec<&str> {
    text.split('`').skip(1).step_by(2).collect()
}

/// The prefix table: `` `inv::` `` → the file holding those tests.
fn prefixes(doc: &str) -> BTreeMap<String, PathBuf> {
    let mut map = BTreeMap::new();
    for row in doc.lines().filter_map(cells) {
        let [prefix, file, _run] = row.as_slice() else {
            continue;
        };
        let (Some(&prefix), Some(&file)) = (code_spans(prefix).first(), code_spans(file).first())
        else {
            continue;
        };
        if let Some(p) = prefix.strip_suffix("::") {
            map.insert(p.to_owned(), root().join(file));
        }
    }
    map
}

/// Whether `source` defines a function called `name` (Rust or C).
fn defines(source: &str, name: &str) -> bool {
    source.contains(&format!("fn {name}(")) || source.contains(&format!("void {name}("))
}

#[test]
fn every_cited_test_exists() {
    let doc = read(&root().join("docs/bad-input.md"));
    let prefixes = prefixes(&doc);
    for p in ["inv", "dom", "ord", "cont", "ffi", "c", "cli"] {
        assert!(
            prefixes.contains_key(p),
            "prefix `{p}::` missing from the table"
        );
    }
    let sources: BTreeMap<&str, String> = prefixes
        .iter()
        .map(|(p, file)| (p.as_str(), read(file)))
        .collect();
    let mut cited = 0;
    let mut missing = Vec::new();
    for (line_no, line) in doc.lines().enumerate() {
        for span in code_spans(line) {
            let Some((prefix, name)) = span.split_once("::") else {
                continue;
            };
            let Some(source) = sources.get(prefix) else {
                continue;
            };
            if name.is_empty() {
                continue; // the prefix table itself
            }
            cited += 1;
            if !defines(source, name) {
                missing.push(format!("line {}: `{span}`", line_no + 1));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "tests cited but not defined:\n{}",
        missing.join("\n")
    );
    // The document cites about a hundred tests; a parser that finds few is broken.
    assert!(cited >= 90, "only {cited} test references found");
}

#[test]
fn every_row_names_a_check() {
    let doc = read(&root().join("docs/bad-input.md"));
    let mut header_width = None;
    for (i, line) in doc.lines().enumerate() {
        let Some(row) = cells(line) else {
            header_width = None;
            continue;
        };
        let Some(width) = header_width else {
            header_width = Some(row.len());
            continue;
        };
        if row
            .iter()
            .all(|c| c.chars().all(|ch| ch == '-' || ch == ':'))
        {
            continue;
        }
        assert_eq!(
            row.len(),
            width,
            "line {}: {} cells, header has {width}",
            i + 1,
            row.len()
        );
        let last = row.last().expect("a row has cells");
        assert!(!last.is_empty(), "line {}: the last cell is empty", i + 1);
    }
}

#[test]
fn the_parser_reads_cells_and_code_spans() {
    let row = cells("| a `x|y` | `inv::t`; same |").expect("a row");
    assert_eq!(row, ["a `x|y`", "`inv::t`; same"]);
    assert_eq!(code_spans("`inv::t`; `c::u`"), ["inv::t", "c::u"]);
    assert!(cells("text").is_none());
    assert!(defines("fn t() {}", "t") && defines("static void u(void)", "u"));
    assert!(!defines("fn tt() {}", "t"));
}
