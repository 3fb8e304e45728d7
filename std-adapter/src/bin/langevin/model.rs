//! `langevin model`: write a model file from one of the zoo's seeded generators.

use crate::CliError;
use crate::sample::check_writable;
use clap::{ArgAction, Args, Subcommand, ValueEnum};
use langevin_std::binary::BinaryModel;
use langevin_std::io::npy::{NpyData, read_npy};
use langevin_std::io::{is_stdout, npy_bytes, prepare, write_all, write_atomically};
use langevin_std::models::schema;
use langevin_std::models::zoo::{
    BarabasiAlbertSpec, BinaryQuadraticSpec, GaussianStructure, IsingLatticeSpec,
    LatticeGaussianSpec, LatticeMixtureSpec, LogisticRegressionSpec, MixtureDistance, ModelSpec,
    RbmSpec, ZooError, rbm_from_weights,
};
use langevin_std::resources::{MemoryBudget, parse_size, product};
use std::path::{Path, PathBuf};

/// Arguments of `langevin model`.
#[derive(Args, Debug, Clone)]
pub struct ModelArgs {
    /// The generator.
    #[command(subcommand)]
    pub generator: Option<Generator>,
    /// Print the JSON Schema of model files (every kind, discrete and continuous, with its
    /// fields) instead of generating a model.
    #[arg(long, conflicts_with_all = ["npy"])]
    pub schema: bool,
    /// Refuse a model whose generation would need more memory than this (4G, 512M, 100000)
    /// [default: half of the machine's memory].
    #[arg(long = "max-memory", global = true, value_parser = parse_size)]
    pub max_memory: Option<u64>,
    /// Write the model file here instead of printing it.
    #[arg(long, global = true)]
    pub out: Option<PathBuf>,
    /// Write every array to a `.npy` file beside `--out`, named `<stem>_<field>.npy`.
    #[arg(long, global = true, requires = "out")]
    pub npy: bool,
}

/// The generators.
#[derive(Subcommand, Debug, Clone)]
pub enum Generator {
    /// 2-D nearest-neighbour Ising model (kind `ising_lattice`).
    #[command(allow_negative_numbers = true)]
    IsingLattice {
        /// Rows.
        #[arg(long, default_value_t = 20)]
        rows: usize,
        /// Columns.
        #[arg(long, default_value_t = 20)]
        cols: usize,
        /// Coupling J of every bond (0.4407 is critical).
        #[arg(long, default_value_t = 0.4407)]
        coupling: f64,
        /// Field h at every site.
        #[arg(long, default_value_t = 0.0)]
        field: f64,
        /// Wrap around the edges (`--periodic false` for an open lattice).
        #[arg(long, default_value_t = true, num_args = 0..=1, default_missing_value = "true",
              action = ArgAction::Set)]
        periodic: bool,
    },
    /// Ising model on a Barabási–Albert graph (kind `ising` with an edge list).
    #[command(allow_negative_numbers = true)]
    IsingBa {
        /// Nodes.
        #[arg(long, default_value_t = 400)]
        nodes: usize,
        /// Edges each new node brings.
        #[arg(long = "edges-per-node", default_value_t = 4)]
        edges_per_node: usize,
        /// Coupling J of every edge.
        #[arg(long, default_value_t = 0.4407)]
        coupling: f64,
        /// Field h at every node.
        #[arg(long, default_value_t = 0.0)]
        field: f64,
        /// Seed of the graph.
        #[arg(long, default_value_t = 0)]
        seed: u64,
    },
    /// RBM with random Gaussian weights, or with weights from `.npy` files (kind `rbm`).
    #[command(allow_negative_numbers = true)]
    Rbm {
        /// Visible units.
        #[arg(long, default_value_t = 784, conflicts_with = "weights")]
        visible: usize,
        /// Hidden units.
        #[arg(long, default_value_t = 500, conflicts_with = "weights")]
        hidden: usize,
        /// Standard deviation of the random weights and biases [default: 1/√visible].
        #[arg(long, conflicts_with = "weights")]
        scale: Option<f64>,
        /// Seed of the random weights.
        #[arg(long, default_value_t = 0, conflicts_with = "weights")]
        seed: u64,
        /// Weights W, hidden × visible, from a `.npy` file.
        #[arg(long)]
        weights: Option<PathBuf>,
        /// Visible biases b from a `.npy` file [default: zeros].
        #[arg(long = "visible-bias", requires = "weights")]
        visible_bias: Option<PathBuf>,
        /// Hidden biases c from a `.npy` file [default: zeros].
        #[arg(long = "hidden-bias", requires = "weights")]
        hidden_bias: Option<PathBuf>,
    },
    /// Random binary quadratic U(x) = xᵀWx + bᵀx (kind `binary_quadratic`).
    #[command(allow_negative_numbers = true)]
    BinaryQuadratic {
        /// Dimension.
        #[arg(long, default_value_t = 100)]
        dim: usize,
        /// Standard deviation of the entries [default: 1/√dim].
        #[arg(long)]
        scale: Option<f64>,
        /// Seed.
        #[arg(long, default_value_t = 0)]
        seed: u64,
    },
    /// Bayesian logistic regression over β ∈ {0,1}^d with Sun et al. (2023)'s data generator
    /// (kind `binary_logistic`).
    #[command(allow_negative_numbers = true)]
    BinaryLogistic {
        /// Coefficients d.
        #[arg(long, default_value_t = 100)]
        dim: usize,
        /// Observations m.
        #[arg(long, default_value_t = 50)]
        samples: usize,
        /// Leading coefficients that are 1 in the truth.
        #[arg(long, default_value_t = 7)]
        active: usize,
        /// Seed of the data.
        #[arg(long, default_value_t = 0)]
        seed: u64,
    },
    /// Lattice Gaussian over {0..S−1}^d, rotated or on a sparse cycle (kind
    /// `ordinal_quadratic`).
    #[command(allow_negative_numbers = true)]
    LatticeGaussian {
        /// Dimension d.
        #[arg(long, default_value_t = 100)]
        dim: usize,
        /// States per coordinate S.
        #[arg(long, default_value_t = 21)]
        states: usize,
        /// Precision P Λ Pᵀ with a random rotation P (the default).
        #[arg(long, conflicts_with = "sparse_cycle")]
        rotated: bool,
        /// Tridiagonal precision with wrap-around: a Markov random field on a cycle.
        #[arg(long = "sparse-cycle")]
        sparse_cycle: bool,
        /// Ratio of the largest to the smallest eigenvalue (rotated) or scale (cycle).
        #[arg(long, default_value_t = 10.0)]
        condition: f64,
        /// Neighbour coupling ρ ∈ [0, 0.5) of the cycle.
        #[arg(long, default_value_t = 0.3, requires = "sparse_cycle")]
        coupling: f64,
        /// Seed.
        #[arg(long, default_value_t = 0)]
        seed: u64,
    },
    /// The 25-mode lattice mixture of Pynadath et al. (2024) (kind `lattice_mixture`).
    #[command(allow_negative_numbers = true)]
    LatticeMixture {
        /// Dimension d.
        #[arg(long, default_value_t = 2)]
        dim: usize,
        /// States per coordinate S.
        #[arg(long, default_value_t = 450)]
        states: usize,
        /// Modes along each axis.
        #[arg(long = "modes-per-axis", default_value_t = 5)]
        modes_per_axis: usize,
        /// Scale of the distance to each mode.
        #[arg(long, default_value_t = 3.75)]
        scale: f64,
        /// Distance to a mode.
        #[arg(long, value_enum, default_value_t = Distance::L2)]
        distance: Distance,
    },
}

/// Distance of the lattice mixture, as the command line spells it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Distance {
    /// Euclidean distance.
    L2,
    /// Squared Euclidean distance.
    Squared,
}

pub fn run(args: &ModelArgs) -> Result<(), CliError> {
    if let Some(out) = &args.out {
        check_writable(out)?;
    }
    if args.schema {
        if args.generator.is_some() {
            return Err(CliError(
                "--schema prints the schema of every kind and takes no generator".into(),
            ));
        }
        let mut text = serde_json::to_string_pretty(&schema::json_schema())?;
        text.push('\n');
        return match &args.out {
            Some(out) => Ok(write_atomically(out, text.as_bytes())?),
            None => {
                print!("{text}");
                Ok(())
            }
        };
    }
    let Some(generator) = &args.generator else {
        return Err(CliError(
            "name a generator (ising-lattice, ising-ba, rbm, binary-quadratic, binary-logistic, \
             lattice-gaussian, lattice-mixture) or --schema; `langevin model --help` lists them"
                .into(),
        ));
    };
    let inputs = generator.inputs();
    // Held until the model is written: a second run writing it is refused.
    let _outputs = match &args.out {
        Some(out) => Some(prepare(&inputs, &[("--out", out.as_path())])?),
        None => None,
    };
    MemoryBudget::new(args.max_memory).check(&generator.memory())?;
    let spec = generate(generator)?;
    // Kinds `sample` knows are checked by loading them as it would.
    BinaryModel::from_doc(&spec.to_doc()?)?;
    let Some(out) = &args.out else {
        print!("{}", spec.to_json());
        return Ok(());
    };
    if !args.npy {
        return Ok(write_atomically(out, spec.to_json().as_bytes())?);
    }
    if is_stdout(out) {
        return Err(CliError(
            "--npy writes files beside --out, which cannot be standard output".into(),
        ));
    }
    let stem = out
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .ok_or_else(|| CliError(format!("{}: not a file name", out.display())))?;
    let dir = out.parent().unwrap_or(Path::new(""));
    let (json, arrays) = spec.to_json_with_files(&stem);
    let mut files: Vec<(PathBuf, Vec<u8>)> = Vec::new();
    for (name, array) in arrays {
        files.push((dir.join(name), npy_bytes(&array.shape, &array.data)?));
    }
    files.push((out.clone(), json.into_bytes()));
    let outputs: Vec<(String, &Path)> = files
        .iter()
        .map(|(p, _)| (p.display().to_string(), p.as_path()))
        .collect();
    let inputs: Vec<(String, &Path)> = inputs
        .iter()
        .map(|(flag, p)| ((*flag).to_string(), *p))
        .collect();
    let _arrays = prepare(&inputs, &outputs[..outputs.len().saturating_sub(1)])?;
    Ok(write_all(&files)?)
}

impl Generator {
    /// The memory generation needs, by part: the arrays in f64 (and a rotation for the lattice
    /// Gaussian), their single-precision check, and the JSON text (up to 24 bytes a number).
    fn memory(&self) -> Vec<(&'static str, Option<u64>)> {
        let entries = match *self {
            Generator::BinaryQuadratic { dim, .. } => product(&[dim as u64, dim as u64]),
            Generator::LatticeGaussian { dim, .. } => {
                product(&[dim as u64, dim as u64]).and_then(|n| n.checked_mul(2))
            }
            Generator::Rbm {
                visible,
                hidden,
                ref weights,
                ..
            } if weights.is_none() => product(&[visible as u64, hidden as u64]),
            Generator::BinaryLogistic { dim, samples, .. } => {
                product(&[dim as u64, samples as u64])
            }
            Generator::IsingBa {
                nodes,
                edges_per_node,
                ..
            } => product(&[nodes as u64, edges_per_node as u64, 3]),
            _ => Some(0),
        };
        let times = |k: u64| entries.and_then(|n| n.checked_mul(k));
        vec![("arrays", times(8 + 4)), ("JSON text", times(24))]
    }

    /// The files this generator reads, with their flags.
    fn inputs(&self) -> Vec<(&'static str, &Path)> {
        match self {
            Generator::Rbm {
                weights,
                visible_bias,
                hidden_bias,
                ..
            } => [
                ("--weights", weights),
                ("--visible-bias", visible_bias),
                ("--hidden-bias", hidden_bias),
            ]
            .into_iter()
            .filter_map(|(flag, p)| Some((flag, p.as_deref()?)))
            .collect(),
            _ => Vec::new(),
        }
    }
}

fn zoo(e: ZooError) -> CliError {
    CliError(format!(
        "--{}: {}",
        e.parameter.replace('_', "-"),
        e.problem
    ))
}

fn generate(generator: &Generator) -> Result<ModelSpec, CliError> {
    let spec = match *generator {
        Generator::IsingLattice {
            rows,
            cols,
            coupling,
            field,
            periodic,
        } => IsingLatticeSpec {
            rows,
            cols,
            coupling,
            field,
            periodic,
        }
        .generate(),
        Generator::IsingBa {
            nodes,
            edges_per_node,
            coupling,
            field,
            seed,
        } => BarabasiAlbertSpec {
            nodes,
            edges_per_node,
            coupling,
            field,
            seed,
        }
        .generate(),
        Generator::Rbm {
            visible,
            hidden,
            scale,
            seed,
            ref weights,
            ref visible_bias,
            ref hidden_bias,
        } => match weights {
            None => RbmSpec {
                visible,
                hidden,
                scale,
                seed,
            }
            .generate(),
            Some(path) => {
                let (shape, w) = read_array(path, "--weights")?;
                let &[h, v] = shape.as_slice() else {
                    return Err(CliError(format!(
                        "{}: --weights must be a matrix (hidden × visible), found shape {shape:?}",
                        path.display()
                    )));
                };
                let b = visible_bias
                    .as_ref()
                    .map(|p| read_array(p, "--visible-bias").map(|a| a.1))
                    .transpose()?;
                let c = hidden_bias
                    .as_ref()
                    .map(|p| read_array(p, "--hidden-bias").map(|a| a.1))
                    .transpose()?;
                rbm_from_weights(h, v, &w, b.as_deref(), c.as_deref())
            }
        },
        Generator::BinaryQuadratic { dim, scale, seed } => {
            BinaryQuadraticSpec { dim, scale, seed }.generate()
        }
        Generator::BinaryLogistic {
            dim,
            samples,
            active,
            seed,
        } => LogisticRegressionSpec {
            dim,
            samples,
            active,
            seed,
        }
        .generate(),
        Generator::LatticeGaussian {
            dim,
            states,
            sparse_cycle,
            condition,
            coupling,
            seed,
            ..
        } => LatticeGaussianSpec {
            dim,
            states,
            structure: if sparse_cycle {
                GaussianStructure::SparseCycle { coupling }
            } else {
                GaussianStructure::Rotated
            },
            condition,
            seed,
        }
        .generate(),
        Generator::LatticeMixture {
            dim,
            states,
            modes_per_axis,
            scale,
            distance,
        } => LatticeMixtureSpec {
            dim,
            states,
            modes_per_axis,
            scale,
            distance: match distance {
                Distance::L2 => MixtureDistance::L2,
                Distance::Squared => MixtureDistance::Squared,
            },
        }
        .generate(),
    };
    spec.map_err(zoo)
}

/// A numeric `.npy` array as doubles: `(shape, data)`.
fn read_array(path: &Path, flag: &str) -> Result<(Vec<usize>, Vec<f64>), CliError> {
    let array = read_npy(path).map_err(|e| CliError(format!("{}: {flag}: {e}", path.display())))?;
    let data = match array.data {
        NpyData::F64(v) => v,
        NpyData::F32(v) => v.into_iter().map(f64::from).collect(),
        NpyData::U8(v) => v.into_iter().map(f64::from).collect(),
        NpyData::U16(v) => v.into_iter().map(f64::from).collect(),
        NpyData::I32(v) => v.into_iter().map(f64::from).collect(),
        NpyData::I64(v) => v.into_iter().map(|x| x as f64).collect(),
    };
    Ok((array.shape, data))
}
