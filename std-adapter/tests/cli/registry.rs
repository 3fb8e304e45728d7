//! The sampler registry against what users read: the README's sampler table, `--help` and the
//! error for a sampler the model's domain lacks.

use crate::common;

use common::{Scratch, fails, ok};
use langevin_std::samplers::{Domain, Param, SAMPLERS, SamplerEntry, markdown_table};

/// The README's sampler table, one row of cells per sampler.
fn readme_rows() -> Vec<Vec<String>> {
    let readme = include_str!("../../../README.md");
    let header = "| sampler | binary | ordinal | categorical | parameters | description |";
    let start = readme.find(header).expect("README.md has no sampler table");
    readme[start..]
        .lines()
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .map(|l| {
            l.trim()
                .trim_matches('|')
                .split(" | ")
                .map(|c| c.trim().to_string())
                .collect()
        })
        .collect()
}

/// The parameters cell the registry implies: each flag with its default, or `none`.
fn parameters_cell(entry: &SamplerEntry) -> String {
    if entry.params.is_empty() {
        return "none".into();
    }
    entry
        .params
        .iter()
        .map(|p| {
            let info = p.info();
            match info.default {
                Some(d) => format!("`{} {d}`", info.flag),
                None => format!("`{}`", info.flag),
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

#[test]
fn readme_sampler_table_matches_the_registry() {
    let rows = readme_rows();
    let names: Vec<&str> = rows.iter().map(|r| r[0].trim_matches('`')).collect();
    let registry: Vec<&str> = SAMPLERS.iter().map(|e| e.name).collect();
    assert_eq!(names, registry, "README rows and registry entries differ");
    for (row, entry) in rows.iter().zip(SAMPLERS) {
        assert_eq!(row.len(), 6, "{}: {row:?}", entry.name);
        for (k, domain) in Domain::ALL.into_iter().enumerate() {
            let yes = if entry.applies_to(domain) {
                "yes"
            } else {
                "no"
            };
            assert_eq!(
                row[1 + k],
                yes,
                "{} on {} models",
                entry.name,
                domain.name()
            );
        }
        assert_eq!(row[4], parameters_cell(entry), "{}: parameters", entry.name);
        assert_eq!(row[5], entry.description, "{}: description", entry.name);
    }
}

/// The README's parameter table is the registry's ([`markdown_table`]), between its two
/// markers; `LANGEVIN_BLESS=1` rewrites it.
#[test]
fn readme_parameter_table_is_the_registry_table() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md");
    let readme = std::fs::read_to_string(&path).unwrap();
    let (start, end) = (
        "<!-- parameter table: generated -->\n",
        "<!-- end of parameter table -->",
    );
    let from = readme
        .find(start)
        .expect("README.md has no parameter table")
        + start.len();
    let to = from
        + readme[from..]
            .find(end)
            .expect("the parameter table has no end");
    let table = markdown_table();
    if std::env::var_os("LANGEVIN_BLESS").is_some() {
        let mut text = readme.clone();
        text.replace_range(from..to, &table);
        std::fs::write(&path, text).unwrap();
        return;
    }
    assert_eq!(
        &readme[from..to],
        table.as_str(),
        "README.md's parameter table differs from the registry's (rewrite it with LANGEVIN_BLESS=1)"
    );
    for p in Param::ALL {
        assert!(table.contains(&format!("| `{}` |", p.info().flag)), "{p:?}");
    }
}

#[test]
fn help_lists_every_sampler_with_its_description() {
    let help = ok(std::env::temp_dir().as_path(), &["sample", "--help"]);
    for entry in SAMPLERS {
        let listed = help.lines().any(|l| {
            l.trim()
                .strip_prefix(&format!("- {}:", entry.name))
                .is_some_and(|rest| rest.trim() == entry.description)
        });
        assert!(listed, "{} missing from --help:\n{help}", entry.name);
    }
    // A name the registry lacks is refused by the parser, which lists the registry's names.
    let line = fails(
        std::env::temp_dir().as_path(),
        &["sample", "--model", "m.json", "--sampler", "nuts"],
    );
    for entry in SAMPLERS {
        assert!(line.contains(entry.name), "{line}");
    }
}

#[test]
fn a_sampler_the_domain_lacks_names_the_ones_it_has() {
    let s = Scratch::new("registry-domains");
    s.write("ord.json", common::ORDINAL);
    s.write("potts.json", common::POTTS);
    for (file, domain) in [
        ("ord.json", Domain::Ordinal),
        ("potts.json", Domain::Categorical),
    ] {
        let usable: Vec<&str> = SAMPLERS
            .iter()
            .filter(|e| e.applies_to(domain))
            .map(|e| e.name)
            .collect();
        for entry in SAMPLERS.iter().filter(|e| !e.applies_to(domain)) {
            let line = fails(
                &s.0,
                &[
                    "sample",
                    "--model",
                    file,
                    "--sampler",
                    entry.name,
                    "--steps",
                    "10",
                ],
            );
            let (last, rest) = usable.split_last().unwrap();
            let expected = format!(
                "error: sampler {} does not apply to {} models (use {} or {last})",
                entry.name,
                domain.name(),
                rest.join(", ")
            );
            assert_eq!(line, expected);
        }
    }
}
