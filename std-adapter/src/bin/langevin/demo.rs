//! The built-in demonstration.

use crate::CliError;
use clap::Args;

/// Arguments of `langevin demo`.
#[derive(Args, Debug, Clone, Default)]
pub struct DemoArgs {}

pub fn run(_args: &DemoArgs) -> Result<(), CliError> {
    Ok(())
}
