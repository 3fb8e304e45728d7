//! The `langevin` command line.
fn main() {}
