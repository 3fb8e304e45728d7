//! `langevin merge`: the shards of a run (`sample --first-chain`) joined into the run's `.npy`
//! file and summary, as one run of all their chains gives them.
//!
//! The shards' summaries say which chains each holds and how it ran; the merge checks that they
//! ran the same model, sampler, options and seed and that their chains follow one another
//! without overlap, concatenates the draws along the chain axis and recomputes the summary's
//! statistics from the merged draws with the code a single run uses (the diagnostics, the
//! means, the warnings), its counts by adding the shards' exact totals.

use super::{CoordinateColumns, coordinate_columns_of, no_diagnostics_warning, warnings_of};
use crate::CliError;
use crate::args::{MemoryArgs, ReportArgs};
use clap::Args;
use langevin_std::binary::Depth;
use langevin_std::io::npy::{NpyData, read_npy_within};
use langevin_std::io::{json_bytes, npy_bytes, parse_json_exact, prepare, write_all};
use langevin_std::shards::{self, Merged, RangeError, merge_summaries, mismatch};
use serde_json::{Map, Value};
use std::fmt;
use std::path::{Path, PathBuf};

/// Arguments of `langevin merge`.
#[derive(Args, Debug, Clone)]
pub struct MergeArgs {
    /// The shards: the summaries their `sample --summary` wrote (each names its `.npy` file),
    /// or their `.npy` files alone (then the draws are joined in the order given, without the
    /// checks, and no summary can be written).
    #[arg(required = true, value_name = "SHARD")]
    pub shards: Vec<PathBuf>,
    /// Write the merged draws here (`.npy`, shape (chains, draws, d)).
    #[arg(long)]
    pub out: PathBuf,
    #[command(flatten)]
    pub report: ReportArgs,
    #[command(flatten)]
    pub memory: MemoryArgs,
}

/// Why shards cannot be merged.
#[derive(Debug)]
pub enum MergeError {
    /// A shard's summary could not be read or is not a `sample` summary.
    NotASummary {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        problem: String,
    },
    /// Two shards differ in something one run holds fixed.
    Mismatch {
        /// What differs (a summary field or an option).
        field: String,
        /// The first shard and its value.
        first: (PathBuf, String),
        /// The other shard and its value.
        other: (PathBuf, String),
    },
    /// Two shards hold the same chain.
    Overlap {
        /// The shards.
        shards: (PathBuf, PathBuf),
        /// Their chain ranges, `[first, end)`.
        ranges: ([usize; 2], [usize; 2]),
    },
    /// Chains are missing between two shards.
    Gap {
        /// The chains missing, `[first, end)`.
        missing: [usize; 2],
    },
    /// A shard's draws do not have the shape or type its summary (or the first shard) says.
    Draws {
        /// The `.npy` file.
        path: PathBuf,
        /// What is wrong.
        problem: String,
    },
    /// `--summary` with bare `.npy` shards: their model, sampler and seed are unknown.
    SummaryNeedsSummaries,
}

impl fmt::Display for MergeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MergeError::NotASummary { path, problem } => {
                write!(
                    f,
                    "{}: not a summary of `langevin sample`: {problem}",
                    path.display()
                )
            }
            MergeError::Mismatch {
                field,
                first,
                other,
            } => write!(
                f,
                "the shards differ in `{field}`: {} has {}, {} has {}; shards of one run share \
                 the model, sampler, options and seed",
                first.0.display(),
                first.1,
                other.0.display(),
                other.1
            ),
            MergeError::Overlap { shards, ranges } => write!(
                f,
                "{} (chains {}..{}) and {} (chains {}..{}) overlap: each chain must come from \
                 one shard",
                shards.0.display(),
                ranges.0[0],
                ranges.0[1],
                shards.1.display(),
                ranges.1[0],
                ranges.1[1]
            ),
            MergeError::Gap { missing } => write!(
                f,
                "chains {}..{} are in no shard: the merged chains must follow one another",
                missing[0], missing[1]
            ),
            MergeError::Draws { path, problem } => write!(f, "{}: {problem}", path.display()),
            MergeError::SummaryNeedsSummaries => f.write_str(
                "--summary needs the shards' summaries (they record the model, sampler and \
                 seed); give the summaries rather than the .npy files",
            ),
        }
    }
}

impl std::error::Error for MergeError {}

/// One shard: its summary (when given), its draws file and its chains.
struct Shard {
    summary: Option<Map<String, Value>>,
    /// The summary file, or the `.npy` file when given alone.
    path: PathBuf,
    draws: PathBuf,
    range: [usize; 2],
}

pub fn run(args: &MergeArgs) -> Result<(), CliError> {
    let mut shards = args
        .shards
        .iter()
        .map(|p| read_shard(p))
        .collect::<Result<Vec<_>, _>>()?;
    let with_summaries = shards.iter().all(|s| s.summary.is_some());
    if args.report.summary.is_some() && !with_summaries {
        return Err(MergeError::SummaryNeedsSummaries.into());
    }
    if with_summaries {
        check_agree(&shards)?;
        shards.sort_by_key(|s| s.range[0]);
        check_ranges(&shards)?;
    }
    let mut inputs: Vec<(String, PathBuf)> = Vec::new();
    for s in &shards {
        inputs.push(("a shard".into(), s.path.clone()));
        inputs.push(("a shard's draws".into(), s.draws.clone()));
    }
    let mut outputs = vec![("--out".to_string(), args.out.clone())];
    if let Some(p) = &args.report.summary {
        outputs.push(("--summary".into(), p.clone()));
    }
    let _locks = prepare(&inputs, &outputs)?;
    let budget = args.memory.budget();
    let (shape, data) = concatenate(&shards, &budget)?;
    let mut files = vec![(args.out.clone(), npy_bytes(&shape, &data)?)];
    if let Some(path) = &args.report.summary {
        let summary = merged_summary(&shards, &args.out, shape, &data)?;
        files.push((path.clone(), json_bytes(&summary)?));
    }
    write_all(&files)?;
    if !args.report.quiet {
        println!(
            "{:<22}{} shards, chains {}..{} ({} draws of d = {} per chain) into {}",
            "merged",
            shards.len(),
            shards.first().map_or(0, |s| s.range[0]),
            shards.first().map_or(0, |s| s.range[0]) + shape[0],
            shape[1],
            shape[2],
            args.out.display()
        );
    }
    Ok(())
}

/// A shard from its summary (a JSON file) or its `.npy` file alone.
fn read_shard(path: &Path) -> Result<Shard, MergeError> {
    let not = |problem: String| MergeError::NotASummary {
        path: path.to_path_buf(),
        problem,
    };
    let is_npy = std::fs::File::open(path)
        .and_then(|mut f| {
            let mut magic = [0u8; 6];
            std::io::Read::read_exact(&mut f, &mut magic).map(|()| &magic == b"\x93NUMPY")
        })
        .unwrap_or(false);
    if is_npy {
        return Ok(Shard {
            summary: None,
            path: path.to_path_buf(),
            draws: path.to_path_buf(),
            range: [0, 0],
        });
    }
    let text = std::fs::read_to_string(path).map_err(|e| not(e.to_string()))?;
    // Read exactly: the fields copied into the merged summary keep their every digit.
    let value = parse_json_exact(&text).map_err(|e| not(e.to_string()))?;
    let Value::Object(summary) = value else {
        return Err(not("not a JSON object".into()));
    };
    let count = |key: &str| {
        summary
            .get(key)
            .and_then(Value::as_u64)
            .map(|v| v as usize)
            .ok_or_else(|| not(format!("no `{key}`")))
    };
    let (first, chains) = (count("first_chain")?, count("chains")?);
    if summary.get("totals").is_none() {
        return Err(not("no `totals`".into()));
    }
    let out = summary
        .get("out")
        .and_then(Value::as_str)
        .ok_or_else(|| not("no `out`: the shard was run without --out".into()))?;
    // As given to `sample`: from the folder it ran in, else beside the summary.
    let mut draws = PathBuf::from(out);
    if !draws.exists()
        && let (Some(dir), Some(name)) = (path.parent(), draws.file_name())
    {
        draws = dir.join(name);
    }
    Ok(Shard {
        summary: Some(summary),
        path: path.to_path_buf(),
        draws,
        range: [first, first + chains],
    })
}

/// The text of a summary value for a message.
fn text(v: Option<&Value>) -> String {
    v.map_or_else(|| "nothing".into(), Value::to_string)
}

/// Refuses shards that differ in a shared field or option.
fn check_agree(shards: &[Shard]) -> Result<(), MergeError> {
    let Some((first, rest)) = shards.split_first() else {
        return Ok(());
    };
    let Some(a) = &first.summary else {
        return Ok(());
    };
    for shard in rest {
        let Some(b) = &shard.summary else { continue };
        if let Some(m) = mismatch(a, b) {
            return Err(MergeError::Mismatch {
                field: m.field,
                first: (first.path.clone(), text(m.first.as_ref())),
                other: (shard.path.clone(), text(m.other.as_ref())),
            });
        }
    }
    Ok(())
}

/// Refuses overlapping shards and gaps between them (`shards` sorted by first chain).
fn check_ranges(shards: &[Shard]) -> Result<(), MergeError> {
    let ranges: Vec<[usize; 2]> = shards.iter().map(|s| s.range).collect();
    match shards::check_ranges(&ranges) {
        Ok(()) => Ok(()),
        Err(RangeError::Gap(missing)) => Err(MergeError::Gap { missing }),
        Err(RangeError::Overlap(i)) => {
            let (a, b) = (&shards[i], &shards[i + 1]);
            Err(MergeError::Overlap {
                shards: (a.path.clone(), b.path.clone()),
                ranges: (a.range, b.range),
            })
        }
    }
}

/// The shards' draws joined along the chain axis: the shape and the values.
fn concatenate(
    shards: &[Shard],
    budget: &langevin_std::resources::MemoryBudget,
) -> Result<([usize; 3], NpyData), CliError> {
    let mut shape = [0usize; 3];
    let mut data: Option<NpyData> = None;
    for s in shards {
        let bad = |problem: String| MergeError::Draws {
            path: s.draws.clone(),
            problem,
        };
        let array = read_npy_within(&s.draws, budget).map_err(|e| bad(e.to_string()))?;
        let [c, n, d] = <[usize; 3]>::try_from(array.shape.as_slice())
            .map_err(|_| bad(format!("shape {:?}, not (chains, draws, d)", array.shape)))?;
        if s.summary.is_some() && c != s.range[1] - s.range[0] {
            return Err(bad(format!(
                "{c} chains, its summary says {}",
                s.range[1] - s.range[0]
            ))
            .into());
        }
        if data.is_some() && [n, d] != [shape[1], shape[2]] {
            return Err(bad(format!(
                "{n} draws of d = {d} per chain, the first shard {} of d = {}",
                shape[1], shape[2]
            ))
            .into());
        }
        data = Some(match (data, array.data) {
            (None, new) => new,
            (Some(NpyData::U8(mut a)), NpyData::U8(b)) => {
                a.extend(b);
                NpyData::U8(a)
            }
            (Some(NpyData::I32(mut a)), NpyData::I32(b)) => {
                a.extend(b);
                NpyData::I32(a)
            }
            (Some(a), b) => {
                return Err(bad(format!(
                    "dtype {}, the first shard {}",
                    b.descr(),
                    a.descr()
                ))
                .into());
            }
        });
        shape = [shape[0] + c, n, d];
    }
    let data = data.ok_or_else(|| CliError("no shards".into()))?;
    if !matches!(data, NpyData::U8(_) | NpyData::I32(_)) {
        return Err(CliError(format!(
            "the shards' draws have dtype {}; `sample` writes uint8 or int32",
            data.descr()
        )));
    }
    Ok((shape, data))
}

/// The merged run's summary: the first shard's, with the chains, counts and statistics of all.
fn merged_summary(
    shards: &[Shard],
    out: &Path,
    shape: [usize; 3],
    data: &NpyData,
) -> Result<Value, CliError> {
    let summaries: Vec<&Map<String, Value>> =
        shards.iter().filter_map(|s| s.summary.as_ref()).collect();
    let Some(&first) = summaries.first() else {
        return Err(MergeError::SummaryNeedsSummaries.into());
    };
    let depth = match first.get("diagnostics").and_then(Value::as_str) {
        Some("none") => None,
        Some("summary") => Some(Depth::Statistic),
        _ => Some(Depth::Coordinates(None)),
    };
    let [_, kept, dim] = shape;
    // Binary draws as `u8`, label draws as `u16`: the types a run diagnoses them in.
    let binary = first.get("domain").and_then(Value::as_str) == Some("binary");
    let (merged, coordinates) = if binary {
        let NpyData::U8(values) = data else {
            return Err(CliError("binary draws must be uint8".into()));
        };
        let merged = merge_summaries(&summaries, values, shape, depth);
        let columns = coordinates(&merged, values, kept, dim);
        (merged, columns)
    } else {
        let values: Vec<u16> = match data {
            NpyData::U8(v) => v.iter().map(|&x| u16::from(x)).collect(),
            NpyData::I32(v) => v
                .iter()
                .map(|&x| x.clamp(0, i32::from(u16::MAX)) as u16)
                .collect(),
            _ => Vec::new(),
        };
        let merged = merge_summaries(&summaries, &values, shape, depth);
        let columns = coordinates(&merged, &values, kept, dim);
        (merged, columns)
    };
    let mut m = merged.summary;
    m.insert(
        "command_line".into(),
        serde_json::to_value(std::env::args().collect::<Vec<_>>())?,
    );
    m.insert("out".into(), out.display().to_string().into());
    if let Some(Value::Object(t)) = coordinates.map(serde_json::to_value).transpose()? {
        for key in t.keys() {
            m.remove(key);
        }
        m.extend(t);
    }
    let warnings = match &merged.diagnostics {
        Some(d) => warnings_of(d),
        None => vec![no_diagnostics_warning(kept)],
    };
    m.insert("warnings".into(), serde_json::to_value(warnings)?);
    m.insert("mean".into(), serde_json::to_value(merged.means)?);
    let paths: Vec<String> = shards
        .iter()
        .map(|s| s.path.display().to_string())
        .collect();
    m.insert("merged_from".into(), serde_json::to_value(paths)?);
    Ok(Value::Object(m))
}

/// The per-coordinate columns of the merged run's diagnostics, as a run writes them.
fn coordinates<T: Copy + Into<f64>>(
    merged: &Merged,
    values: &[T],
    kept: usize,
    dim: usize,
) -> Option<CoordinateColumns> {
    let views: Vec<&[T]> = values.chunks((kept * dim).max(1)).collect();
    merged
        .diagnostics
        .as_ref()
        .and_then(|d| coordinate_columns_of(d, &views, dim))
}
