//! Checkpoints of a run: every chain's state, kernel state, random-stream position, step
//! totals and the draws it has kept, saved every so often to one file, so that a run stopped
//! at any moment (`SIGKILL` included) and started again with the same command continues where
//! the file left it and gives exactly the draws of an uninterrupted run.
//!
//! * Each chain saves a snapshot of itself between two steps when a period has passed
//!   ([`Checkpoint::new`]'s `every`); a chain's snapshot is consistent on its own, since
//!   chains share nothing. The file is written once every running chain has saved one since
//!   the last write (chains not started yet have no record and start from scratch on resume;
//!   finished ones keep their final record, so the file of a finished run holds them all).
//! * The file is written through a temporary file and a rename
//!   ([`crate::io::write_atomically`]): it always holds a whole checkpoint, the previous one
//!   until the rename.
//! * The file starts with a [`Fingerprint`] of the command (format version, crate version,
//!   and what the front end lists: model file hash, sampler and its parameters, seed,
//!   chains, …). [`Checkpoint::resume`] refuses a file whose fingerprint differs, naming the
//!   first field that does ([`CheckpointError::Mismatch`]), and a damaged or truncated file
//!   ([`CheckpointError::Corrupt`], found by lengths and a checksum).
//! * Chains of kernels whose state cannot be saved are refused before their first step
//!   ([`CheckpointError::Unsupported`]).
//!
//! Layout: the magic line `LANGEVIN-CHECKPOINT`, then length-prefixed blocks (little-endian
//! `u64` lengths): the fingerprint as JSON, the number of records, and per record its
//! metadata as JSON, its kept draws (each value in [`Saved::WIDTH`] little-endian bytes) and
//! the log-densities at them (`f64` bits); last, an FNV-1a hash of everything before it.

use crate::io::write_atomically;
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

/// The version of the file layout.
pub const FORMAT_VERSION: u32 = 2;

/// The first bytes of a checkpoint file.
const MAGIC: &[u8] = b"LANGEVIN-CHECKPOINT\n";

/// The default period between two checkpoints.
pub const DEFAULT_EVERY: Duration = Duration::from_secs(60);

/// Why a checkpoint could not be written, read or used.
#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    /// The file could not be read.
    #[error("reading the checkpoint {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The reason.
        source: std::io::Error,
    },
    /// The file could not be written.
    #[error("writing the checkpoint {path}: {error}")]
    Write {
        /// The file.
        path: PathBuf,
        /// The reason.
        #[source]
        error: crate::io::output::WriteError,
    },
    /// The file is not a checkpoint, or is truncated or damaged.
    #[error("{path} is not a usable checkpoint: {reason}")]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        #[source]
        reason: DecodeError,
    },
    /// The file belongs to another command.
    #[error(
        "the checkpoint {path} belongs to another command: its {field}: {saved}; this \
         command's: {now}"
    )]
    Mismatch {
        /// The file.
        path: PathBuf,
        /// The first field that differs.
        field: String,
        /// Its value in the file.
        saved: String,
        /// Its value for this command.
        now: String,
    },
    /// The model at a checkpoint's saved state failed, or is not the one the run had.
    #[error("restoring a checkpoint: {0}")]
    Restore(#[source] super::ModelError),
    /// The run has chains whose state cannot be saved.
    #[error("--checkpoint does not support {what}")]
    Unsupported {
        /// What cannot be saved.
        what: String,
    },
}

/// What a checkpoint belongs to: named fields with their values, compared one by one on
/// resume. [`Checkpoint`] adds the format and crate versions first.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fingerprint {
    /// `(name, value)` pairs, in the order they are compared.
    pub fields: Vec<(String, String)>,
}

impl Fingerprint {
    /// No fields.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds the field `name` with `value`.
    #[must_use]
    pub fn with(mut self, name: impl Into<String>, value: impl fmt::Display) -> Self {
        self.fields.push((name.into(), value.to_string()));
        self
    }

    /// Adds the field `name` with the hash of the bytes of the file at `path`.
    ///
    /// # Errors
    ///
    /// The file's read error.
    pub fn with_file_hash(self, name: impl Into<String>, path: &Path) -> std::io::Result<Self> {
        use std::io::Read;
        let mut file = std::io::BufReader::new(std::fs::File::open(path)?);
        let mut h = Fnv1a::default();
        let mut buf = vec![0u8; 1 << 16];
        loop {
            let n = file.read(&mut buf)?;
            if n == 0 {
                break;
            }
            h.add(buf.get(..n).unwrap_or_default());
        }
        Ok(self.with(name, format!("{:016x}", h.0)))
    }

    /// Adds the field `name` with the hash of `bytes`.
    #[must_use]
    pub fn with_bytes_hash(self, name: impl Into<String>, bytes: &[u8]) -> Self {
        self.with(name, format!("{:016x}", fnv1a(bytes)))
    }

    /// The fingerprint with the format and crate versions in front.
    fn versioned(self) -> Self {
        let mut f = Fingerprint::new()
            .with("checkpoint format", FORMAT_VERSION)
            .with("langevin version", env!("CARGO_PKG_VERSION"));
        f.fields.extend(self.fields);
        f
    }

    /// The first field where `saved` (a file's) and `self` differ: `(name, saved, now)`.
    fn first_difference(&self, saved: &Fingerprint) -> Option<(String, String, String)> {
        let missing = || "(none)".to_string();
        let n = self.fields.len().max(saved.fields.len());
        (0..n).find_map(|i| {
            let now = self.fields.get(i);
            let old = saved.fields.get(i);
            if now == old {
                return None;
            }
            let name = now.or(old).map(|(k, _)| k.clone()).unwrap_or_default();
            let value = |f: Option<&(String, String)>| {
                f.filter(|(k, _)| *k == name)
                    .map_or_else(missing, |(_, v)| v.clone())
            };
            Some((name.clone(), value(old), value(now)))
        })
    }
}

/// FNV-1a, 64 bits: the checksum that finds a damaged file, and the hash of a model file.
#[derive(Debug)]
struct Fnv1a(u64);

impl Default for Fnv1a {
    fn default() -> Self {
        Self(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv1a {
    fn add(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }
}

/// [`Fnv1a`] of `bytes`.
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h = Fnv1a::default();
    h.add(bytes);
    h.0
}

/// A state value a checkpoint can save: `u8` (binary) and `u16` (labels).
pub trait Saved: Copy + Send + Sync + 'static {
    /// Bytes per value in the file.
    const WIDTH: usize;
    /// The value as a word.
    fn to_word(self) -> u64;
    /// The value of a word, if it fits.
    fn from_word(w: u64) -> Option<Self>;
}

impl Saved for u8 {
    const WIDTH: usize = 1;
    fn to_word(self) -> u64 {
        u64::from(self)
    }
    fn from_word(w: u64) -> Option<Self> {
        Self::try_from(w).ok()
    }
}

impl Saved for u16 {
    const WIDTH: usize = 2;
    fn to_word(self) -> u64 {
        u64::from(self)
    }
    fn from_word(w: u64) -> Option<Self> {
        Self::try_from(w).ok()
    }
}

/// What a chain's driver saves: the state, the stream, the kernel's state, and the cached
/// `U` (checked against a fresh evaluation on restore).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct DriverState {
    /// The state, one word per coordinate.
    pub(crate) state: Vec<u64>,
    /// The chain's random stream.
    pub(crate) rng: Xoshiro256PlusPlus,
    /// The kernel's state ([`crate::kernels::DynKernel::save`]).
    pub(crate) kernel: serde_json::Value,
    /// The bits of `U` at the state, where tracked.
    pub(crate) log_density: Option<u64>,
    /// The bits of `∇U` at the state, where tracked (empty otherwise).
    #[serde(default)]
    pub(crate) grad: Vec<u32>,
    /// The bits of the target's running sums ([`langevin_core::Eval::running_sums`]).
    #[serde(default)]
    pub(crate) sums: Vec<u64>,
}

impl DriverState {
    /// The state as values of `T`.
    pub(crate) fn values<T: Saved>(&self) -> Option<Vec<T>> {
        self.state.iter().map(|&w| T::from_word(w)).collect()
    }
}

/// Where a chain stands in its run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Position {
    /// Burn-in steps taken.
    pub(crate) burn_in: u64,
    /// Tuning steps taken beyond the burn-in.
    pub(crate) extra: u64,
    /// Whether the tuning is over (the kept phase has begun).
    pub(crate) tuned: bool,
    /// Kept-phase steps taken.
    pub(crate) kept: u64,
    /// Whether the chain has finished.
    pub(crate) finished: bool,
}

/// A chain's step totals: `[steps, accepted, proposed_flips, accepted_flips, invalid,
/// evaluations]`.
pub(crate) type Totals = [u64; 6];

/// A chain's record, as saved.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Meta {
    /// The chain (from 0 within the run).
    pub(crate) chain: usize,
    /// Where it stands.
    pub(crate) position: Position,
    /// Kept-phase totals.
    pub(crate) stats: Totals,
    /// Burn-in totals.
    pub(crate) burn_in_stats: Totals,
    /// Distance moved over the kept phase.
    pub(crate) jump: u64,
    /// Kept draws.
    pub(crate) kept: usize,
    /// The driver.
    pub(crate) driver: DriverState,
    /// Bytes per draw value.
    pub(crate) width: usize,
}

/// A chain's record: its metadata, its kept draws (encoded) and the log-densities at them.
#[derive(Clone, Debug)]
pub(crate) struct Record {
    pub(crate) meta: Meta,
    pub(crate) draws: Vec<u8>,
    pub(crate) log_density: Vec<f64>,
}

impl Record {
    /// Encodes draws of `T`.
    pub(crate) fn encode<T: Saved>(draws: &[T]) -> Vec<u8> {
        let mut out = Vec::with_capacity(draws.len() * T::WIDTH);
        for &v in draws {
            out.extend_from_slice(&v.to_word().to_le_bytes()[..T::WIDTH]);
        }
        out
    }

    /// The draws as values of `T`, if the record holds values of that width.
    pub(crate) fn draws<T: Saved>(&self) -> Option<Vec<T>> {
        if self.meta.width != T::WIDTH || !self.draws.len().is_multiple_of(T::WIDTH) {
            return None;
        }
        self.draws
            .chunks_exact(T::WIDTH)
            .map(|c| {
                let mut w = [0u8; 8];
                w[..c.len()].copy_from_slice(c);
                T::from_word(u64::from_le_bytes(w))
            })
            .collect()
    }
}

/// The chains' records and which are newer than the file.
#[derive(Debug, Default)]
struct Slots {
    records: BTreeMap<usize, Record>,
    /// Chains that have saved a snapshot since the file was last written.
    fresh: BTreeSet<usize>,
    /// Chains running now.
    running: BTreeSet<usize>,
    /// Whether a write failed (the chain that hit it reported it; no more are tried).
    failed: bool,
}

/// A run's checkpoint file: where the chains save their snapshots, and (on resume) the
/// records they continue from. Shared by every chain of a run, through [`super::Keep`].
#[derive(Debug)]
pub struct Checkpoint {
    path: PathBuf,
    fingerprint: Fingerprint,
    /// The number of whole periods since the start, kept up to date by a clock thread so that
    /// a chain asks whether a snapshot is due with one atomic load per step, no clock read.
    epoch: Arc<AtomicU64>,
    slots: Mutex<Slots>,
    resumed: Mutex<BTreeMap<usize, Record>>,
}

impl Checkpoint {
    /// A new checkpoint at `path`, written every `every` (at the earliest), for the command
    /// `fingerprint` describes.
    pub fn new(path: &Path, every: Duration, fingerprint: Fingerprint) -> Self {
        let every = every.max(Duration::from_millis(1));
        let epoch = Arc::new(AtomicU64::new(0));
        start_clock(Arc::downgrade(&epoch), every);
        Self {
            path: path.to_path_buf(),
            fingerprint: fingerprint.versioned(),
            epoch,
            slots: Mutex::new(Slots::default()),
            resumed: Mutex::new(BTreeMap::new()),
        }
    }

    /// [`Checkpoint::new`], continuing from the checkpoint in the file `from` (which may be
    /// `path` itself): its chains start where the file left them.
    ///
    /// # Errors
    ///
    /// [`CheckpointError::Read`] when the file cannot be read, [`CheckpointError::Corrupt`]
    /// when it is not a whole checkpoint, [`CheckpointError::Mismatch`] when it belongs to
    /// another command.
    pub fn resume(
        path: &Path,
        every: Duration,
        fingerprint: Fingerprint,
        from: &Path,
    ) -> Result<Self, CheckpointError> {
        let bytes = std::fs::read(from).map_err(|source| CheckpointError::Read {
            path: from.to_path_buf(),
            source,
        })?;
        let (saved, records) = decode(&bytes).map_err(|reason| CheckpointError::Corrupt {
            path: from.to_path_buf(),
            reason,
        })?;
        let checkpoint = Self::new(path, every, fingerprint);
        if let Some((field, saved, now)) = checkpoint.fingerprint.first_difference(&saved) {
            return Err(CheckpointError::Mismatch {
                path: from.to_path_buf(),
                field,
                saved,
                now,
            });
        }
        let records: BTreeMap<usize, Record> =
            records.into_iter().map(|r| (r.meta.chain, r)).collect();
        lock(&checkpoint.slots).records = records.clone();
        *lock(&checkpoint.resumed) = records;
        Ok(checkpoint)
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The record chain `chain` continues from, if the file had one; the chain is counted as
    /// running from now.
    pub(crate) fn begin(&self, chain: usize) -> Option<Record> {
        lock(&self.slots).running.insert(chain);
        lock(&self.resumed).remove(&chain)
    }

    /// The period now, if it is later than `last` (which it then becomes): the chain is due
    /// to save a snapshot.
    #[inline]
    pub(crate) fn due(&self, last: &mut u64) -> Option<u64> {
        let period = self.epoch.load(Ordering::Relaxed);
        (period > *last).then(|| {
            *last = period;
            period
        })
    }

    /// Chain `record.meta.chain`'s snapshot; the file is written once every running chain
    /// has saved one since the last write. A finished chain's record stays and the chain
    /// stops counting as running.
    ///
    /// # Errors
    ///
    /// [`CheckpointError::Write`] when the file cannot be written.
    pub(crate) fn save(&self, record: Record) -> Result<(), CheckpointError> {
        let chain = record.meta.chain;
        let finished = record.meta.position.finished;
        let mut slots = lock(&self.slots);
        slots.records.insert(chain, record);
        slots.fresh.insert(chain);
        if finished {
            slots.running.remove(&chain);
        }
        let all_fresh = slots.running.iter().all(|c| slots.fresh.contains(c));
        if all_fresh && !slots.failed {
            slots.fresh.clear();
            let bytes = encode(&self.fingerprint, slots.records.values());
            if let Err(error) = write_atomically(&self.path, &bytes) {
                slots.failed = true;
                return Err(CheckpointError::Write {
                    path: self.path.clone(),
                    error,
                });
            }
        }
        Ok(())
    }
}

/// Starts the thread that counts the periods of `every` into `epoch`: it wakes at each
/// period's end (at least every 50 ms, to notice the checkpoint is gone: it ends then). If no
/// thread can be started, the count stays 0 and only the final records are saved.
fn start_clock(epoch: Weak<AtomicU64>, every: Duration) {
    let start = Instant::now();
    let nanos = every.as_nanos().max(1);
    let tick = move || {
        loop {
            let elapsed = start.elapsed().as_nanos();
            let period = elapsed / nanos;
            let next = (period + 1).saturating_mul(nanos);
            let wait = u64::try_from(next - elapsed).unwrap_or(u64::MAX);
            std::thread::sleep(Duration::from_nanos(wait).min(Duration::from_millis(50)));
            let Some(epoch) = epoch.upgrade() else {
                return;
            };
            let now = (start.elapsed().as_nanos() / nanos) as u64;
            epoch.store(now, Ordering::Relaxed);
        }
    };
    let _ = std::thread::Builder::new()
        .name("checkpoint-clock".into())
        .spawn(tick);
}

/// The mutex's content, also after a panic elsewhere (records are replaced whole).
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Appends a length-prefixed block.
fn block(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
    out.extend_from_slice(bytes);
}

/// The file's bytes.
fn encode<'r>(
    fingerprint: &Fingerprint,
    records: impl ExactSizeIterator<Item = &'r Record>,
) -> Vec<u8> {
    let mut out = MAGIC.to_vec();
    block(
        &mut out,
        &serde_json::to_vec(fingerprint).unwrap_or_default(),
    );
    out.extend_from_slice(&(records.len() as u64).to_le_bytes());
    for r in records {
        block(&mut out, &serde_json::to_vec(&r.meta).unwrap_or_default());
        block(&mut out, &r.draws);
        let u: Vec<u8> = r
            .log_density
            .iter()
            .flat_map(|u| u.to_bits().to_le_bytes())
            .collect();
        block(&mut out, &u);
    }
    let sum = fnv1a(&out);
    out.extend_from_slice(&sum.to_le_bytes());
    out
}

/// Why a checkpoint's bytes do not decode ([`CheckpointError::Corrupt`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// The bytes do not start with the checkpoint header.
    #[error("it does not start with the checkpoint header")]
    NoHeader,
    /// Too short for the header and the checksum.
    #[error("truncated")]
    Truncated,
    /// The checksum is not the one of the bytes before it.
    #[error("its checksum does not match (truncated or damaged)")]
    Checksum,
    /// The bytes end inside a block.
    #[error("truncated in {what}")]
    TruncatedIn {
        /// The block.
        what: &'static str,
    },
    /// A block's length does not fit in memory's address space.
    #[error("impossible length in {what}")]
    ImpossibleLength {
        /// The block.
        what: &'static str,
    },
    /// The fingerprint is not the JSON of one.
    #[error("the fingerprint: {0}")]
    Fingerprint(#[source] serde_json::Error),
    /// A record's description is not the JSON of one.
    #[error("record {index}: {source}")]
    Record {
        /// The record, from 0.
        index: u64,
        /// The parser's error.
        source: serde_json::Error,
    },
    /// A record's log-densities are not a whole number of `f64`s.
    #[error("record {index}: log-densities of {bytes} bytes")]
    LogDensityBytes {
        /// The record, from 0.
        index: u64,
        /// Their length in bytes.
        bytes: usize,
    },
    /// Bytes follow the last record.
    #[error("bytes after the last record")]
    TrailingBytes,
}

/// A reader of the file's blocks.
struct Reader<'b> {
    bytes: &'b [u8],
}

impl<'b> Reader<'b> {
    fn take(&mut self, n: usize, what: &'static str) -> Result<&'b [u8], DecodeError> {
        if self.bytes.len() < n {
            return Err(DecodeError::TruncatedIn { what });
        }
        let (head, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Ok(head)
    }

    fn word(&mut self, what: &'static str) -> Result<u64, DecodeError> {
        let b = self.take(8, what)?;
        let mut w = [0u8; 8];
        w.copy_from_slice(b);
        Ok(u64::from_le_bytes(w))
    }

    fn block(&mut self, what: &'static str) -> Result<&'b [u8], DecodeError> {
        let n = self.word(what)?;
        let n = usize::try_from(n).map_err(|_| DecodeError::ImpossibleLength { what })?;
        self.take(n, what)
    }
}

/// The fingerprint and records of a file's bytes.
fn decode(bytes: &[u8]) -> Result<(Fingerprint, Vec<Record>), DecodeError> {
    if !bytes.starts_with(MAGIC) {
        return Err(DecodeError::NoHeader);
    }
    if bytes.len() < MAGIC.len() + 8 {
        return Err(DecodeError::Truncated);
    }
    let (body, sum) = bytes.split_at(bytes.len() - 8);
    let mut s = [0u8; 8];
    s.copy_from_slice(sum);
    if fnv1a(body) != u64::from_le_bytes(s) {
        return Err(DecodeError::Checksum);
    }
    let mut r = Reader {
        bytes: &body[MAGIC.len()..],
    };
    let fp = r.block("the fingerprint")?;
    let fingerprint: Fingerprint = serde_json::from_slice(fp).map_err(DecodeError::Fingerprint)?;
    let n = r.word("the record count")?;
    let mut records = Vec::new();
    for i in 0..n {
        let meta: Meta = serde_json::from_slice(r.block("a record")?)
            .map_err(|source| DecodeError::Record { index: i, source })?;
        let draws = r.block("a record's draws")?.to_vec();
        let u = r.block("a record's log-densities")?;
        if !u.len().is_multiple_of(8) {
            return Err(DecodeError::LogDensityBytes {
                index: i,
                bytes: u.len(),
            });
        }
        let log_density = u
            .chunks_exact(8)
            .map(|c| {
                let mut w = [0u8; 8];
                w.copy_from_slice(c);
                f64::from_bits(u64::from_le_bytes(w))
            })
            .collect();
        records.push(Record {
            meta,
            draws,
            log_density,
        });
    }
    if !r.bytes.is_empty() {
        return Err(DecodeError::TrailingBytes);
    }
    Ok((fingerprint, records))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fingerprint_names_the_first_field_that_differs() {
        let a = Fingerprint::new().with("seed", 1).with("sampler", "dmala");
        let b = Fingerprint::new().with("seed", 1).with("sampler", "dula");
        assert_eq!(
            a.first_difference(&b),
            Some(("sampler".into(), "dula".into(), "dmala".into()))
        );
        assert_eq!(a.first_difference(&a.clone()), None);
    }

    #[test]
    fn every_truncation_and_every_flipped_byte_is_refused() {
        let fp = Fingerprint::new().with("seed", 3).versioned();
        let rng = crate::seeding::chain_rng(3, 0);
        let record = Record {
            meta: Meta {
                chain: 0,
                position: Position::default(),
                stats: [1, 2, 3, 4, 5, 6],
                burn_in_stats: [0; 6],
                jump: 7,
                kept: 2,
                driver: DriverState {
                    state: vec![0, 1, 1],
                    rng,
                    kernel: serde_json::Value::Null,
                    log_density: Some(1.5f64.to_bits()),
                    grad: vec![0.25f32.to_bits(); 3],
                    sums: vec![2.0f64.to_bits()],
                },
                width: 1,
            },
            draws: vec![0, 1, 1, 1, 0, 1],
            log_density: vec![0.5, -2.0],
        };
        let bytes = encode(&fp, [&record].into_iter());
        let (f, rs) = decode(&bytes).unwrap();
        assert_eq!(f, fp);
        assert_eq!(rs.len(), 1);
        assert_eq!(rs[0].draws::<u8>().unwrap(), vec![0, 1, 1, 1, 0, 1]);
        assert_eq!(rs[0].log_density, record.log_density);
        for n in 0..bytes.len() {
            assert!(decode(&bytes[..n]).is_err(), "truncated to {n}");
        }
        for i in 0..bytes.len() {
            let mut b = bytes.clone();
            b[i] ^= 0x10;
            assert!(decode(&b).is_err(), "byte {i} flipped");
        }
        assert!(matches!(decode(b"x"), Err(DecodeError::NoHeader)));
        assert!(matches!(
            decode(&bytes[..MAGIC.len() + 4]),
            Err(DecodeError::Truncated)
        ));
        assert!(matches!(
            decode(&bytes[..bytes.len() - 1]),
            Err(DecodeError::Checksum)
        ));
        let mut longer = bytes[..bytes.len() - 8].to_vec();
        longer.push(0);
        let sum = fnv1a(&longer);
        longer.extend_from_slice(&sum.to_le_bytes());
        assert!(matches!(decode(&longer), Err(DecodeError::TrailingBytes)));
    }
}
