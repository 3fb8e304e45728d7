//! Bad input to every public entry point, keyed to `docs/bad-input.md`.

mod binary;
mod continuous;
mod doc_references;
mod domains;
mod inventory;
mod ordinal;
