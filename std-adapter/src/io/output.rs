//! Where outputs go, and the rules that keep them from destroying anything.
//!
//! * A path of `-` is standard output.
//! * A symbolic link at an output path is written through: the file it points to (after every
//!   link in the chain) is replaced atomically and the link stays.
//! * A path naming something other than a regular file (a FIFO, a character device such as
//!   `/dev/null`) is opened and written in place, never replaced by a regular file.
//! * Any other path is written through a temporary file in the same folder and a rename, so a
//!   failed write never leaves a partial file behind.
//! * Before any work, [`prepare`] checks every output a run may write (derived ones, such as a
//!   picture's companions, included): no output names an input or another output
//!   ([`check_distinct`]: paths are compared after following symbolic links and resolving the
//!   folder, and on Unix also by device and inode, so hard links count); no output is a
//!   folder; each output's folder exists and takes a new file (a probe file is created and
//!   removed there); and no other run is writing the same file (below).
//! * Temporary files have unique names that carry the process id,
//!   `.langevin-<pid>-<random>.partial` (`.backup` for an old output kept aside, `.probe`,
//!   `.render` for a picture being drawn). Every error path removes them; so does `SIGINT`,
//!   `SIGTERM` or `SIGHUP` once [`clean_up_on_signals`] is installed (the process then exits
//!   with 128 + the signal's number). A process killed outright (`SIGKILL`) leaves them behind:
//!   the next run that writes into that folder removes those whose process is no longer running
//!   ([`sweep_leftovers`]).
//! * Two runs never mix their outputs: [`prepare`] takes an advisory lock per output file
//!   (`.NAME.langevin-lock` beside it, holding the process id) and keeps it until the outputs
//!   are written, then removes it. A second run naming any of the same files is refused before
//!   it starts, with the first run's process id. (A unique temporary file per run alone would
//!   not do: two runs writing a draws file and a summary could each win one rename.) A lock
//!   file left by a killed run is held by nobody and is taken over or removed by the next run.
//! * Several outputs are written all or none: every temporary file is written before the first
//!   rename; each existing output is kept aside (a hard link, or a copy) until every rename has
//!   succeeded, and when one fails the outputs already replaced are put back; standard output
//!   and special files come last. A signal arriving during the renames takes effect after them.
//! * An output too large to hold in memory is a [`StreamedFile`]: written in pieces, at any
//!   offset, while it is produced, into its temporary file (for standard output or a special
//!   file: a temporary file in the system's temporary folder, under the same rules, copied
//!   there at the end), and committed with the others by [`write_all_with`]. Its blocks are
//!   reserved when it is created, so a disk too small for it fails before the run.

use std::fmt;
use std::fs::File;
use std::io::{Read as _, Seek as _, SeekFrom, Write as _};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};

/// Links followed before giving up on a chain of symbolic links (Linux's own limit).
const MAX_LINKS: usize = 40;

/// A file that could not be written.
#[derive(Debug, thiserror::Error)]
#[error("{}: {source}", .path.display())]
pub struct WriteError {
    /// The file.
    pub path: PathBuf,
    /// Why.
    pub source: std::io::Error,
}

/// Whether `path` means standard output (`-`).
pub fn is_stdout(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// The path a write to `path` lands on: every symbolic link at the end of `path` followed
/// (relative links resolve against the link's folder). A dangling link gives the path it
/// points to.
///
/// # Errors
///
/// A link that cannot be read, or a chain of more than 40 links.
pub fn resolve_links(path: &Path) -> std::io::Result<PathBuf> {
    let mut current = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        match std::fs::symlink_metadata(&current) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let target = std::fs::read_link(&current)?;
                current = match current.parent() {
                    Some(dir) if target.is_relative() => dir.join(target),
                    _ => target,
                };
            }
            _ => return Ok(current),
        }
    }
    Err(std::io::Error::other("too many levels of symbolic links"))
}

/// What a path names, for telling whether two paths are one file.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Identity {
    Stdout,
    File {
        /// The resolved path, its folder made canonical where it exists.
        path: PathBuf,
        /// Device and inode, when the file exists (Unix).
        inode: Option<(u64, u64)>,
    },
}

impl Identity {
    fn of(path: &Path) -> Self {
        if is_stdout(path) {
            return Identity::Stdout;
        }
        let resolved = resolve_links(path).unwrap_or_else(|_| path.to_path_buf());
        let canonical = std::fs::canonicalize(&resolved).unwrap_or_else(|_| {
            let dir = resolved
                .parent()
                .filter(|d| !d.as_os_str().is_empty())
                .unwrap_or(Path::new("."));
            let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
            match resolved.file_name() {
                Some(name) => dir.join(name),
                None => resolved.clone(),
            }
        });
        Identity::File {
            path: canonical,
            inode: inode(&resolved),
        }
    }

    fn same(&self, other: &Self) -> bool {
        match (self, other) {
            (Identity::Stdout, Identity::Stdout) => true,
            (Identity::File { path: a, inode: ia }, Identity::File { path: b, inode: ib }) => {
                a == b || (ia.is_some() && ia == ib)
            }
            _ => false,
        }
    }
}

#[cfg(unix)]
fn inode(path: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

#[cfg(not(unix))]
fn inode(_path: &Path) -> Option<(u64, u64)> {
    None
}

/// Two named paths that must differ but name the same file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathClash {
    /// The output's name (a flag such as `--out`) and path.
    pub output: (String, PathBuf),
    /// The input or earlier output it collides with.
    pub other: (String, PathBuf),
    /// Whether `other` is an input (else another output).
    pub other_is_input: bool,
}

impl fmt::Display for PathClash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (name, path) = &self.output;
        let (other_name, other_path) = &self.other;
        if self.other_is_input {
            write!(
                f,
                "{name} {} is the input {other_name} {}: refusing to overwrite an input",
                path.display(),
                other_path.display()
            )
        } else {
            write!(
                f,
                "{name} {} and {other_name} {} are the same file: give each output its own path",
                path.display(),
                other_path.display()
            )
        }
    }
}

impl std::error::Error for PathClash {}

/// Refuses an output that names an input, or the same file as another output.
///
/// `inputs` and `outputs` are `(name, path)` pairs; the name (a flag, or a field of a model
/// file) is what the message shows.
///
/// # Errors
///
/// The first [`PathClash`].
pub fn check_distinct<N: AsRef<str>, P: AsRef<Path>>(
    inputs: &[(N, P)],
    outputs: &[(N, P)],
) -> Result<(), PathClash> {
    let named = |(n, p): &(N, P)| (n.as_ref().to_owned(), p.as_ref().to_path_buf());
    let inputs: Vec<_> = inputs
        .iter()
        .map(|e| (named(e), Identity::of(e.1.as_ref())))
        .collect();
    let mut seen: Vec<((String, PathBuf), Identity)> = Vec::new();
    for output in outputs {
        let id = Identity::of(output.1.as_ref());
        if let Some((other, _)) = inputs.iter().find(|(_, i)| i.same(&id)) {
            return Err(PathClash {
                output: named(output),
                other: other.clone(),
                other_is_input: true,
            });
        }
        if let Some((other, _)) = seen.iter().find(|(_, i)| i.same(&id)) {
            return Err(PathClash {
                output: named(output),
                other: other.clone(),
                other_is_input: false,
            });
        }
        seen.push((named(output), id));
    }
    Ok(())
}

// Temporary files: unique names that carry the process id, registered for removal on a signal.

/// What every temporary file's name starts with: `.langevin-<pid>-<random><ending>`.
const TEMP_PREFIX: &str = ".langevin-";
/// The endings of temporary files: an output being written, an old output kept aside until
/// every rename has succeeded, a writability probe, a picture being rendered.
const TEMP_ENDINGS: [&str; 4] = [".partial", ".backup", ".probe", ".render"];
/// The ending of a lock file: `.NAME.langevin-lock` beside the output `NAME`.
const LOCK_ENDING: &str = ".langevin-lock";

/// Files of this process to remove on a signal: temporary files and lock files.
static REGISTRY: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
/// Folders this process has already swept of leftovers.
static SWEPT: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn registry() -> MutexGuard<'static, Vec<PathBuf>> {
    REGISTRY.lock().unwrap_or_else(PoisonError::into_inner)
}

fn unregister(registry: &mut Vec<PathBuf>, path: &Path) {
    registry.retain(|p| p != path);
}

/// Removes a file of this process and forgets it.
fn remove_registered(registry: &mut Vec<PathBuf>, path: &Path) {
    let _ = std::fs::remove_file(path);
    unregister(registry, path);
}

/// The folder a file is in (`.` for a bare name).
fn folder_of(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// A new temporary file's name pattern for this process.
fn temp_builder(ending: &str) -> tempfile::Builder<'static, '_> {
    static PREFIX: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    let prefix = PREFIX.get_or_init(|| format!("{TEMP_PREFIX}{}-", std::process::id()));
    let mut builder = tempfile::Builder::new();
    builder.prefix(prefix.as_str()).suffix(ending);
    builder
}

/// Creates a temporary file in `dir` (`.langevin-<pid>-<random><ending>`, open for reading and
/// writing), registered for removal on a signal; leftovers of dead processes in `dir` are
/// removed first ([`sweep_leftovers`]).
fn create_temporary(dir: &Path, ending: &str) -> std::io::Result<(File, PathBuf)> {
    sweep_leftovers(dir);
    let mut registry = registry();
    let named = temp_builder(ending).make_in(dir, |p| {
        std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(p)
    })?;
    let (file, path) = named.keep().map_err(|e| e.error)?;
    registry.push(path.clone());
    Ok((file, path))
}

/// Whether a process with this id is running (on systems without `/proc`: assumed so, and its
/// leftovers are kept).
fn alive(pid: u32) -> bool {
    #[cfg(target_os = "linux")]
    {
        Path::new("/proc").join(pid.to_string()).exists()
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = pid;
        true
    }
}

/// The process id in the name of a temporary file of this module, if `name` is one.
fn leftover_pid(name: &str) -> Option<u32> {
    let rest = name.strip_prefix(TEMP_PREFIX)?;
    if !TEMP_ENDINGS.iter().any(|e| rest.ends_with(e)) {
        return None;
    }
    let (pid, _) = rest.split_once('-')?;
    pid.parse().ok()
}

/// Removes from `dir`, once per process and folder, what runs killed without a chance to clean
/// up (`SIGKILL`, a power cut) left there: temporary files of processes no longer running, and
/// lock files nobody holds. Called before a temporary file is created in a folder.
pub fn sweep_leftovers(dir: &Path) {
    let key = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    {
        let mut swept = SWEPT.lock().unwrap_or_else(PoisonError::into_inner);
        if swept.contains(&key) {
            return;
        }
        swept.push(key);
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let own = std::process::id();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else {
            continue;
        };
        let is_file = entry.file_type().is_ok_and(|t| t.is_file());
        if !is_file {
            continue;
        }
        if let Some(pid) = leftover_pid(name) {
            if pid != own && !alive(pid) {
                let _ = std::fs::remove_file(entry.path());
            }
        } else if name.starts_with('.') && name.ends_with(LOCK_ENDING) {
            // Taking a lock nobody holds and dropping it removes its file.
            drop(OutputLock::take(&entry.path()));
        }
    }
}

/// Installs the handler of `SIGINT`, `SIGTERM` and `SIGHUP` (Ctrl-C, `kill`, `timeout`, a
/// closed terminal): it removes every temporary file and lock file of this process, then exits
/// with status 128 + the signal's number, as a shell reports a process the signal ended.
/// Outputs being renamed into place finish first (the renames hold the same lock), so a signal
/// never leaves some outputs replaced and others not.
///
/// # Errors
///
/// The system refusing the handler.
#[cfg(unix)]
pub fn clean_up_on_signals() -> std::io::Result<()> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP])?;
    std::thread::Builder::new()
        .name("langevin-signals".into())
        .spawn(move || {
            if let Some(signal) = signals.forever().next() {
                let mut registry = registry();
                for path in registry.drain(..) {
                    let _ = std::fs::remove_file(path);
                }
                std::process::exit(128 + signal);
            }
        })?;
    Ok(())
}

/// Elsewhere than on Unix: nothing is installed (leftovers are still recognisable by name).
///
/// # Errors
///
/// None.
#[cfg(not(unix))]
pub fn clean_up_on_signals() -> std::io::Result<()> {
    Ok(())
}

// Locks: one run at a time writes an output.

/// An advisory lock on one output (`.NAME.langevin-lock` beside it, holding the owner's process
/// id), held from before the work until the output is written, then removed.
#[derive(Debug)]
struct OutputLock {
    path: PathBuf,
    _file: File,
}

/// Why a lock was not taken.
enum LockError {
    /// Another process holds it (its id, when it could be read).
    Busy(Option<u32>),
    /// The lock file could not be opened or locked.
    Io(std::io::Error),
}

impl OutputLock {
    /// The lock file of the output `target`.
    fn path_for(target: &Path) -> Option<PathBuf> {
        let name = target.file_name()?;
        Some(target.with_file_name(format!(".{}{LOCK_ENDING}", name.to_string_lossy())))
    }

    /// Takes the lock at `path`, without waiting.
    fn take(path: &Path) -> Result<Self, LockError> {
        loop {
            let mut file = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(path)
                .map_err(LockError::Io)?;
            match file.try_lock() {
                Ok(()) => {}
                Err(std::fs::TryLockError::WouldBlock) => {
                    let mut text = String::new();
                    let _ = file.read_to_string(&mut text);
                    return Err(LockError::Busy(text.trim().parse().ok()));
                }
                Err(std::fs::TryLockError::Error(e)) => return Err(LockError::Io(e)),
            }
            // The run that held it may have removed the file between the open and the lock:
            // then this lock guards nothing, and the lock file at `path` (if any) is taken anew.
            if !same_file(&file, path) {
                continue;
            }
            let mut registry = registry();
            file.set_len(0)
                .and_then(|()| file.write_all(format!("{}\n", std::process::id()).as_bytes()))
                .map_err(LockError::Io)?;
            registry.push(path.to_path_buf());
            return Ok(Self {
                path: path.to_path_buf(),
                _file: file,
            });
        }
    }
}

impl Drop for OutputLock {
    fn drop(&mut self) {
        // Removed while still held, so that no other run locks a file about to disappear.
        remove_registered(&mut registry(), &self.path);
    }
}

/// Whether the open `file` is still the file at `path`.
#[cfg(unix)]
fn same_file(file: &File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), std::fs::metadata(path)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

#[cfg(not(unix))]
fn same_file(_file: &File, path: &Path) -> bool {
    path.exists()
}

// Checks before the work.

/// Why a run's outputs were refused before any work.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    /// An output names an input or another output.
    #[error("{0}")]
    Clash(#[source] PathClash),
    /// An output's folder is missing or cannot be written (a probe file could not be created
    /// there), or the output is a folder.
    #[error("{name} {}: cannot write there ({source}); refused before the run", .path.display())]
    Unwritable {
        /// The output's name (a flag).
        name: String,
        /// The output's path.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// Another run is writing the same file.
    #[error(
        "{name} {}: another langevin run{} is writing this file; wait for it to finish or \
         choose another path",
        .path.display(),
        .pid.map_or_else(String::new, |p| format!(" (process {p})"))
    )]
    Busy {
        /// The output's name (a flag).
        name: String,
        /// The output's path.
        path: PathBuf,
        /// The other run's process id, when its lock file says.
        pid: Option<u32>,
    },
}

/// A run's outputs, checked and locked by [`prepare`]: hold it until the outputs are written;
/// dropping it releases and removes the locks.
#[derive(Debug)]
pub struct Prepared {
    _locks: Vec<OutputLock>,
}

/// Creates and removes a probe file in `dir`.
fn probe(dir: &Path) -> std::io::Result<()> {
    let (file, path) = create_temporary(dir, ".probe")?;
    drop(file);
    remove_registered(&mut registry(), &path);
    Ok(())
}

/// Everything about a run's outputs that can be known before the run, checked before it
/// starts: no output names an input or another output ([`check_distinct`]); each output is not
/// a folder, its folder exists and a file can be created there (a probe file is created and
/// removed; for standard output, FIFOs and devices, the system's temporary folder, where a
/// streamed output waits); and no other run is writing it: each output that is a file is
/// locked (`.NAME.langevin-lock` beside it, holding this process's id, removed when the
/// returned [`Prepared`] is dropped), and a second run on the same file is refused, naming the
/// first's process id.
///
/// `inputs` and `outputs` are `(name, path)` pairs; list every file a run may write, derived
/// ones (such as a picture's companions) included.
///
/// # Errors
///
/// The first [`OutputError`].
pub fn prepare<N: AsRef<str>, P: AsRef<Path>>(
    inputs: &[(N, P)],
    outputs: &[(N, P)],
) -> Result<Prepared, OutputError> {
    check_distinct(inputs, outputs).map_err(OutputError::Clash)?;
    let mut locks = Vec::new();
    for (name, path) in outputs {
        let (name, path) = (name.as_ref(), path.as_ref());
        let unwritable = |source| OutputError::Unwritable {
            name: name.to_owned(),
            path: path.to_path_buf(),
            source,
        };
        match target(path).map_err(|e| unwritable(e.source))? {
            Target::Replace(target) => {
                let dir = folder_of(&target);
                if !dir.is_dir() {
                    return Err(unwritable(std::io::Error::new(
                        std::io::ErrorKind::NotFound,
                        format!("folder {} does not exist", dir.display()),
                    )));
                }
                probe(dir).map_err(unwritable)?;
                let lock = OutputLock::path_for(&target).ok_or_else(|| {
                    unwritable(std::io::Error::other("not a file name".to_string()))
                })?;
                match OutputLock::take(&lock) {
                    Ok(lock) => locks.push(lock),
                    Err(LockError::Busy(pid)) => {
                        return Err(OutputError::Busy {
                            name: name.to_owned(),
                            path: path.to_path_buf(),
                            pid,
                        });
                    }
                    Err(LockError::Io(e)) => return Err(unwritable(e)),
                }
            }
            Target::InPlace(_) | Target::Stdout => {
                probe(&std::env::temp_dir()).map_err(unwritable)?;
            }
        }
    }
    Ok(Prepared { _locks: locks })
}

// Writing.

/// Where an output goes.
#[derive(Debug)]
enum Target {
    /// A regular file (or none yet): written through a temporary file and a rename onto it.
    Replace(PathBuf),
    /// A FIFO or device: opened and written in place.
    InPlace(PathBuf),
    /// Standard output.
    Stdout,
}

fn target(path: &Path) -> Result<Target, WriteError> {
    let fail = |source| WriteError {
        path: path.to_path_buf(),
        source,
    };
    if is_stdout(path) {
        return Ok(Target::Stdout);
    }
    let target = resolve_links(path).map_err(fail)?;
    if let Ok(meta) = std::fs::metadata(&target) {
        if meta.is_dir() {
            return Err(fail(std::io::Error::other("is a folder")));
        }
        if !meta.is_file() {
            return Ok(Target::InPlace(target));
        }
    }
    if target.file_name().is_none() {
        return Err(fail(std::io::Error::other("not a file name")));
    }
    Ok(Target::Replace(target))
}

/// Writes `bytes` to `path` by the rules of this module (a single output).
///
/// # Errors
///
/// [`WriteError`] when `path` names no file or a folder, or the write or the rename fails.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), WriteError> {
    write_all(&[(path, bytes.to_vec())])
}

/// Writes every output by the rules of this module, all or none: temporary files first, then
/// the renames, then standard output and special files.
///
/// # Errors
///
/// A [`WriteError`] for the first output that fails, naming it; two outputs naming the same
/// file are refused before anything is written.
pub fn write_all<P: AsRef<Path>>(files: &[(P, Vec<u8>)]) -> Result<(), WriteError> {
    write_all_with(files, Vec::new())
}

/// A file that a function writes to a path (a picture), drawn into a temporary file beside its
/// output (`.langevin-<pid>-<random>.render`, removed when dropped) and then read back, for
/// writing with the other outputs by [`write_all_with`].
#[derive(Debug)]
pub struct Rendering {
    output: PathBuf,
    tmp: PathBuf,
}

impl Rendering {
    /// A temporary file beside `output` (after following symbolic links).
    ///
    /// # Errors
    ///
    /// [`WriteError`] naming `output` when the temporary file cannot be created.
    pub fn beside(output: &Path) -> Result<Self, WriteError> {
        let fail = |source| WriteError {
            path: output.to_path_buf(),
            source,
        };
        let resolved = resolve_links(output).map_err(fail)?;
        let (file, tmp) = create_temporary(folder_of(&resolved), ".render").map_err(fail)?;
        drop(file);
        Ok(Self {
            output: output.to_path_buf(),
            tmp,
        })
    }

    /// Where to draw.
    pub fn path(&self) -> &Path {
        &self.tmp
    }

    /// The output's path and what was drawn; the temporary file is removed.
    ///
    /// # Errors
    ///
    /// [`WriteError`] naming the output when the temporary file cannot be read.
    pub fn bytes(self) -> Result<(PathBuf, Vec<u8>), WriteError> {
        let bytes = std::fs::read(&self.tmp).map_err(|source| WriteError {
            path: self.output.clone(),
            source,
        })?;
        Ok((self.output.clone(), bytes))
    }
}

impl Drop for Rendering {
    fn drop(&mut self) {
        remove_registered(&mut registry(), &self.tmp);
    }
}

/// Draws with `draw` into a [`Rendering`] beside `path` and returns the bytes.
///
/// # Errors
///
/// [`WriteError`] naming `path` when the temporary file cannot be created or read, or `draw`
/// fails (its message).
pub fn render<E: fmt::Display>(
    path: &Path,
    draw: impl FnOnce(&Path) -> Result<(), E>,
) -> Result<Vec<u8>, WriteError> {
    let rendering = Rendering::beside(path)?;
    draw(rendering.path()).map_err(|e| WriteError {
        path: path.to_path_buf(),
        source: std::io::Error::other(e.to_string()),
    })?;
    Ok(rendering.bytes()?.1)
}

/// Where a [`StreamedFile`] ends up.
#[derive(Debug)]
enum Destination {
    /// Its temporary file is renamed onto `target`.
    Replace(PathBuf),
    /// Its temporary file is copied into `target` (a FIFO or device), then removed.
    InPlace(PathBuf),
    /// Its temporary file is copied to standard output, then removed.
    Stdout,
}

/// An output written in pieces while it is produced, then committed by [`write_all_with`]
/// with the other outputs (all or none). Until then it lives in a temporary file
/// (`.langevin-<pid>-<random>.partial`): next to the target (renamed onto it), or, for
/// standard output and special files, in the system's temporary folder (copied out at the
/// end). Dropped uncommitted, it removes its temporary file and leaves the target as it was.
#[derive(Debug)]
pub struct StreamedFile {
    /// The path as given.
    path: PathBuf,
    destination: Destination,
    /// The temporary file's path.
    tmp: PathBuf,
    /// The temporary file, open for reading and writing.
    file: Mutex<File>,
    /// Whether `tmp` has been renamed or copied out (nothing left to remove).
    committed: bool,
}

impl StreamedFile {
    /// Creates the temporary file of an output to `path` (rules as for [`write_all`]), `len`
    /// bytes long (zeros until written).
    ///
    /// # Errors
    ///
    /// [`WriteError`] when `path` names a folder or no file, or the temporary file cannot be
    /// created.
    pub fn create(path: &Path, len: u64) -> Result<Self, WriteError> {
        let fail = |source| WriteError {
            path: path.to_path_buf(),
            source,
        };
        let (destination, dir) = match target(path)? {
            Target::Replace(target) => {
                let dir = folder_of(&target).to_path_buf();
                (Destination::Replace(target), dir)
            }
            Target::InPlace(target) => (Destination::InPlace(target), std::env::temp_dir()),
            Target::Stdout => (Destination::Stdout, std::env::temp_dir()),
        };
        let (file, tmp) = create_temporary(&dir, ".partial").map_err(fail)?;
        let out = Self {
            path: path.to_path_buf(),
            destination,
            tmp,
            file: Mutex::new(file),
            committed: false,
        };
        reserve(&out.lock(), &out.tmp, len).map_err(fail)?;
        Ok(out)
    }

    /// The path as given.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn lock(&self) -> MutexGuard<'_, File> {
        self.file.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Writes `bytes` at `offset` (from any thread).
    ///
    /// # Errors
    ///
    /// The file system's error.
    pub fn write_at(&self, offset: u64, bytes: &[u8]) -> std::io::Result<()> {
        let mut file = self.lock();
        file.seek(SeekFrom::Start(offset))?;
        file.write_all(bytes)
    }

    /// Reads `buf.len()` bytes at `offset` (what was written there).
    ///
    /// # Errors
    ///
    /// The file system's error, or the file ending first.
    pub fn read_at(&self, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
        let mut file = self.lock();
        file.seek(SeekFrom::Start(offset))?;
        file.read_exact(buf)
    }

    /// Copies the temporary file into `out`.
    fn copy_into(&self, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        let mut file = self.lock();
        file.seek(SeekFrom::Start(0))?;
        std::io::copy(&mut *file, out)?;
        out.flush()
    }
}

/// Makes `file` (at `path`) `len` bytes long, with its blocks reserved where the file system can
/// reserve them, so that a file system too small for the output fails here, before any work,
/// rather than part way through a run.
fn reserve(file: &File, path: &Path, len: u64) -> std::io::Result<()> {
    if let Ok(free) = fs4::available_space(folder_of(path))
        && free < len
    {
        return Err(std::io::Error::new(
            std::io::ErrorKind::StorageFull,
            format!(
                "needs {}, but its file system has {} free",
                crate::resources::human(len),
                crate::resources::human(free)
            ),
        ));
    }
    match fs4::FileExt::allocate(file, len) {
        Ok(()) => Ok(()),
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::StorageFull
                    | std::io::ErrorKind::QuotaExceeded
                    | std::io::ErrorKind::FileTooLarge
            ) =>
        {
            Err(e)
        }
        // A file system that cannot reserve blocks gets a sparse file.
        Err(_) => file.set_len(len),
    }
}

impl Drop for StreamedFile {
    fn drop(&mut self) {
        if !self.committed {
            remove_registered(&mut registry(), &self.tmp);
        }
    }
}

/// Keeps the file at `target` (if any) aside until every rename has succeeded: a hard link
/// beside it (`.langevin-<pid>-<random>.backup`), or a copy where links are not possible.
fn keep_aside(registry: &mut Vec<PathBuf>, target: &Path) -> std::io::Result<Option<PathBuf>> {
    match std::fs::symlink_metadata(target) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
        Ok(meta) if !meta.is_file() => return Ok(None),
        Ok(_) => {}
    }
    let dir = folder_of(target);
    let builder = temp_builder(".backup");
    let kept = match builder.make_in(dir, |p| std::fs::hard_link(target, p)) {
        Ok(named) => named.keep().map(|((), p)| p).map_err(|e| e.error)?,
        Err(_) => {
            let named = builder.make_in(dir, |p| std::fs::copy(target, p).map(drop))?;
            registry.push(named.path().to_path_buf());
            named.keep().map(|((), p)| p).map_err(|e| e.error)?
        }
    };
    if !registry.contains(&kept) {
        registry.push(kept.clone());
    }
    Ok(Some(kept))
}

/// Renames each temporary file onto its target, all or none: each existing target is first kept
/// aside ([`keep_aside`]), and when a rename fails the targets already replaced are put back
/// (or removed, where there was none) before the error is returned.
fn rename_all(registry: &mut Vec<PathBuf>, moves: &[(&Path, &Path)]) -> Result<(), WriteError> {
    let mut kept: Vec<Option<PathBuf>> = Vec::with_capacity(moves.len());
    let discard = |registry: &mut Vec<PathBuf>, kept: &[Option<PathBuf>]| {
        for k in kept.iter().flatten() {
            remove_registered(registry, k);
        }
    };
    for (_, target) in moves {
        match keep_aside(registry, target) {
            Ok(k) => kept.push(k),
            Err(source) => {
                discard(registry, &kept);
                return Err(WriteError {
                    path: target.to_path_buf(),
                    source: std::io::Error::new(
                        source.kind(),
                        format!("cannot keep the old file aside while replacing it: {source}"),
                    ),
                });
            }
        }
    }
    for (k, (tmp, target)) in moves.iter().enumerate() {
        if let Err(source) = std::fs::rename(tmp, target) {
            let mut restored = true;
            for ((_, done), old) in moves.iter().zip(&kept).take(k) {
                restored &= match old {
                    Some(old) => std::fs::rename(old, done).is_ok(),
                    None => std::fs::remove_file(done).is_ok(),
                };
            }
            discard(registry, &kept);
            let outcome = if k == 0 {
                "no output was replaced"
            } else if restored {
                "the outputs already replaced were put back as they were"
            } else {
                "some outputs already replaced could not be put back"
            };
            return Err(WriteError {
                path: target.to_path_buf(),
                source: std::io::Error::new(source.kind(), format!("{source} ({outcome})")),
            });
        }
    }
    discard(registry, &kept);
    Ok(())
}

/// Like [`write_all`], with outputs already written in pieces ([`StreamedFile`]): all are
/// checked to name distinct files, every byte output is written to its temporary file, then
/// every temporary file (streamed ones included) is renamed, all or none (an old file is kept
/// aside until every rename has succeeded, and put back if one fails), then standard output
/// and special files are written (streamed ones copied from their temporary files).
///
/// # Errors
///
/// As [`write_all`]; every temporary file is removed on failure.
pub fn write_all_with<P: AsRef<Path>>(
    files: &[(P, Vec<u8>)],
    mut streamed: Vec<StreamedFile>,
) -> Result<(), WriteError> {
    let mut named: Vec<(String, &Path)> = files
        .iter()
        .map(|(p, _)| (p.as_ref().display().to_string(), p.as_ref()))
        .collect();
    named.extend(
        streamed
            .iter()
            .map(|f| (f.path.display().to_string(), f.path.as_path())),
    );
    check_distinct::<String, &Path>(&[], &named).map_err(|clash| WriteError {
        path: clash.output.1.clone(),
        source: std::io::Error::other(format!("written twice (also {})", clash.other.1.display())),
    })?;
    let targets = files
        .iter()
        .map(|(p, bytes)| Ok((target(p.as_ref())?, bytes.as_slice())))
        .collect::<Result<Vec<_>, WriteError>>()?;
    // Byte outputs into temporary files beside their targets.
    let mut staged: Vec<(PathBuf, &Path)> = Vec::new();
    let discard = |staged: &[(PathBuf, &Path)]| {
        let mut registry = registry();
        for (tmp, _) in staged {
            remove_registered(&mut registry, tmp);
        }
    };
    for (t, bytes) in &targets {
        if let Target::Replace(target) = t {
            let written = create_temporary(folder_of(target), ".partial").and_then(|(f, tmp)| {
                staged.push((tmp, target.as_path()));
                let mut f = f;
                f.write_all(bytes)?;
                f.sync_data()
            });
            if let Err(source) = written {
                discard(&staged);
                return Err(WriteError {
                    path: target.clone(),
                    source,
                });
            }
        }
    }
    for f in &streamed {
        if let Destination::Replace(target) = &f.destination
            && let Err(source) = f.lock().sync_data()
        {
            discard(&staged);
            return Err(WriteError {
                path: target.clone(),
                source,
            });
        }
    }
    // The renames, all or none; a signal waits for them (they hold the registry).
    {
        let mut registry = registry();
        let mut moves: Vec<(&Path, &Path)> = Vec::new();
        for f in &streamed {
            if let Destination::Replace(target) = &f.destination {
                moves.push((f.tmp.as_path(), target.as_path()));
            }
        }
        moves.extend(staged.iter().map(|(tmp, target)| (tmp.as_path(), *target)));
        if let Err(e) = rename_all(&mut registry, &moves) {
            for (tmp, _) in &staged {
                remove_registered(&mut registry, tmp);
            }
            return Err(e);
        }
        for (tmp, _) in &staged {
            unregister(&mut registry, tmp);
        }
        for f in &mut streamed {
            if matches!(f.destination, Destination::Replace(_)) {
                unregister(&mut registry, &f.tmp);
                f.committed = true;
            }
        }
    }
    for f in &streamed {
        let result = match &f.destination {
            Destination::Replace(_) => continue,
            Destination::InPlace(target) => std::fs::OpenOptions::new()
                .write(true)
                .open(target)
                .and_then(|mut out| f.copy_into(&mut out))
                .map_err(|source| WriteError {
                    path: target.clone(),
                    source,
                }),
            Destination::Stdout => f
                .copy_into(&mut std::io::stdout().lock())
                .map_err(|source| WriteError {
                    path: PathBuf::from("-"),
                    source,
                }),
        };
        result?;
    }
    for (t, bytes) in &targets {
        match t {
            Target::InPlace(target) => std::fs::OpenOptions::new()
                .write(true)
                .open(target)
                .and_then(|mut f| f.write_all(bytes))
                .map_err(|source| WriteError {
                    path: target.clone(),
                    source,
                })?,
            Target::Stdout => {
                let mut out = std::io::stdout().lock();
                out.write_all(bytes)
                    .and_then(|()| out.flush())
                    .map_err(|source| WriteError {
                        path: PathBuf::from("-"),
                        source,
                    })?;
            }
            Target::Replace(_) => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh folder under the system's temporary folder, removed when dropped.
    struct Scratch(tempfile::TempDir);

    impl std::ops::Deref for Scratch {
        type Target = Path;
        fn deref(&self) -> &Path {
            self.0.path()
        }
    }

    impl AsRef<Path> for Scratch {
        fn as_ref(&self) -> &Path {
            self.0.path()
        }
    }

    fn scratch(name: &str) -> Scratch {
        let prefix = format!("langevin-output-{name}-");
        Scratch(tempfile::Builder::new().prefix(&prefix).tempdir().unwrap())
    }

    /// Asserts that `file` holds `bytes` and that `dir` holds `entries` entries (no temporary
    /// file left behind).
    fn assert_holds(dir: &Path, file: &Path, bytes: &[u8], entries: usize) {
        assert_eq!(std::fs::read(file).unwrap(), bytes);
        assert_eq!(std::fs::read_dir(dir).unwrap().count(), entries);
    }

    #[test]
    fn outputs_are_written_and_replaced() {
        let dir = scratch("plain");
        let a = dir.join("a.txt");
        write_atomically(&a, b"one").unwrap();
        write_atomically(&a, b"two").unwrap();
        assert_holds(&dir, &a, b"two", 1);
    }

    #[test]
    fn streamed_outputs_are_written_in_pieces_then_committed_or_removed() {
        let dir = scratch("streamed");
        let a = dir.join("a.bin");
        std::fs::write(&a, b"old").unwrap();
        let f = StreamedFile::create(&a, 6).unwrap();
        f.write_at(3, b"def").unwrap();
        f.write_at(0, b"abc").unwrap();
        let mut back = [0u8; 3];
        f.read_at(2, &mut back).unwrap();
        assert_eq!(&back, b"cde");
        // Not yet committed: the target is untouched.
        assert_eq!(std::fs::read(&a).unwrap(), b"old");
        write_all_with(&[(dir.join("b.txt"), b"b".to_vec())], vec![f]).unwrap();
        assert_holds(&dir, &a, b"abcdef", 2);
        // Dropped without committing: no temporary file stays, the target is as it was.
        let f = StreamedFile::create(&a, 3).unwrap();
        f.write_at(0, b"xyz").unwrap();
        drop(f);
        assert_holds(&dir, &a, b"abcdef", 2);
        // A clash with a byte output is refused before anything is renamed.
        let f = StreamedFile::create(&a, 1).unwrap();
        assert!(write_all_with(&[(a.clone(), b"z".to_vec())], vec![f]).is_err());
        assert_holds(&dir, &a, b"abcdef", 2);
    }

    #[test]
    fn a_failed_write_leaves_every_output_as_it_was() {
        let dir = scratch("none");
        let a = dir.join("a.txt");
        std::fs::write(&a, b"old").unwrap();
        let missing = dir.join("no/such/folder/b.txt");
        let files = [(a.clone(), b"new".to_vec()), (missing, b"x".to_vec())];
        assert!(write_all(&files).is_err());
        assert_holds(&dir, &a, b"old", 1);
    }

    #[cfg(unix)]
    #[test]
    fn symbolic_links_are_written_through_and_stay() {
        let dir = scratch("links");
        let real = dir.join("real.txt");
        std::fs::write(&real, b"old").unwrap();
        let link = dir.join("link.txt");
        std::os::unix::fs::symlink("real.txt", &link).unwrap();
        write_atomically(&link, b"new").unwrap();
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read(&real).unwrap(), b"new");
        // A link and its target are one file.
        assert!(check_distinct(&[("--model", &real)], &[("--out", &link)]).is_err());
        assert!(write_all(&[(link, b"a".to_vec()), (real, b"b".to_vec())]).is_err());
    }

    /// The names in `dir`, sorted.
    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn a_failed_rename_puts_back_what_was_replaced() {
        let dir = scratch("restore");
        let (old, new_file, blocked) = (dir.join("old.txt"), dir.join("new.txt"), dir.join("b"));
        std::fs::write(&old, b"old").unwrap();
        // Renaming a file onto a non-empty folder fails, for root too.
        std::fs::create_dir_all(blocked.join("inside")).unwrap();
        let temporaries: Vec<PathBuf> = (0..3)
            .map(|k| {
                let (mut f, p) = create_temporary(&dir, ".partial").unwrap();
                f.write_all(format!("new {k}").as_bytes()).unwrap();
                p
            })
            .collect();
        let moves: Vec<(&Path, &Path)> = vec![
            (&temporaries[0], &old),
            (&temporaries[1], &new_file),
            (&temporaries[2], &blocked),
        ];
        let err = rename_all(&mut registry(), &moves).unwrap_err();
        assert_eq!(err.path, blocked);
        assert!(err.to_string().contains("put back"), "{err}");
        assert_eq!(std::fs::read(&old).unwrap(), b"old");
        assert!(!new_file.exists());
        // The old file kept aside is gone; the unrenamed temporary is the caller's to remove.
        assert_eq!(
            names(&dir),
            [
                temporaries[2].file_name().unwrap().to_str().unwrap(),
                "b",
                "old.txt"
            ]
        );
        remove_registered(&mut registry(), &temporaries[2]);
        // Without the blocked one, both are replaced and nothing else stays.
        let temporaries: Vec<PathBuf> = (0..2)
            .map(|k| {
                let (mut f, p) = create_temporary(&dir, ".partial").unwrap();
                f.write_all(format!("new {k}").as_bytes()).unwrap();
                p
            })
            .collect();
        let moves: Vec<(&Path, &Path)> =
            vec![(&temporaries[0], &old), (&temporaries[1], &new_file)];
        rename_all(&mut registry(), &moves).unwrap();
        assert_eq!(std::fs::read(&old).unwrap(), b"new 0");
        assert_eq!(std::fs::read(&new_file).unwrap(), b"new 1");
        assert_eq!(names(&dir), ["b", "new.txt", "old.txt"]);
    }

    #[test]
    fn temporary_files_carry_the_process_id_and_are_unique() {
        let dir = scratch("unique");
        let a = StreamedFile::create(&dir.join("a.bin"), 4).unwrap();
        let b = StreamedFile::create(&dir.join("a.bin"), 4).unwrap();
        assert_ne!(a.tmp, b.tmp);
        for f in [&a, &b] {
            let name = f.tmp.file_name().unwrap().to_str().unwrap();
            assert_eq!(leftover_pid(name), Some(std::process::id()), "{name}");
            assert!(registry().contains(&f.tmp));
        }
        drop((a, b));
        assert!(names(&dir).is_empty());
    }

    #[test]
    fn leftovers_of_dead_processes_are_swept_and_others_kept() {
        let dir = scratch("sweep");
        // No process has this id (above Linux's largest, 2^22).
        let dead = dir.join(".langevin-99999999-abc123.partial");
        let own = dir.join(format!(".langevin-{}-abc123.partial", std::process::id()));
        let alike = dir.join(".langevin-99999999-abc123.txt");
        let stale_lock = dir.join(".a.npy.langevin-lock");
        for p in [&dead, &own, &alike, &stale_lock] {
            std::fs::write(p, b"x").unwrap();
        }
        sweep_leftovers(&dir);
        let expected: Vec<&Path> = if cfg!(target_os = "linux") {
            vec![&alike, &own]
        } else {
            vec![&dead, &alike, &own]
        };
        let mut expected: Vec<String> = expected
            .iter()
            .map(|p| p.file_name().unwrap().to_str().unwrap().to_owned())
            .collect();
        expected.sort();
        assert_eq!(names(&dir), expected);
    }

    #[test]
    fn a_second_writer_of_an_output_is_refused_naming_the_first() {
        let dir = scratch("lock");
        let out = dir.join("d.npy");
        let held = prepare::<&str, &Path>(&[], &[("--out", &out)]).unwrap();
        let lock = dir.join(".d.npy.langevin-lock");
        assert_eq!(
            std::fs::read_to_string(&lock).unwrap().trim(),
            std::process::id().to_string()
        );
        // A lock is per open file: a second one fails here as it would in another process.
        let err = prepare::<&str, &Path>(&[], &[("--summary", &out)]).unwrap_err();
        assert!(
            matches!(err, OutputError::Busy { pid: Some(p), .. } if p == std::process::id()),
            "{err}"
        );
        assert!(err.to_string().contains("another langevin run"), "{err}");
        drop(held);
        assert!(!lock.exists());
        let again = prepare::<&str, &Path>(&[], &[("--out", &out)]).unwrap();
        drop(again);
        assert!(names(&dir).is_empty());
        // A missing folder and a folder as output are refused.
        let missing = dir.join("no/such/d.npy");
        let err = prepare::<&str, &Path>(&[], &[("--out", &missing)]).unwrap_err();
        assert!(err.to_string().contains("does not exist"), "{err}");
        let err = prepare::<&str, &Path>(&[], &[("--out", &dir)]).unwrap_err();
        assert!(err.to_string().contains("is a folder"), "{err}");
    }

    #[test]
    fn clashes_are_named() {
        let dir = scratch("clash");
        let a = dir.join("a.json");
        let b = dir.join("sub/../a.json");
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        let clash = check_distinct(&[("--model", &a)], &[("--out", &b)]).unwrap_err();
        assert!(clash.to_string().contains("--out"), "{clash}");
        assert!(clash.to_string().contains("input --model"), "{clash}");
        let clash =
            check_distinct::<&str, &Path>(&[], &[("--out", &a), ("--summary", &b)]).unwrap_err();
        assert!(clash.to_string().contains("same file"), "{clash}");
        assert!(
            check_distinct(&[("--model", &a)], &[("--out", &dir.join("c"))]).is_ok(),
            "distinct paths"
        );
        assert!(
            check_distinct::<&str, &Path>(
                &[],
                &[("--out", Path::new("-")), ("--csv", Path::new("-"))]
            )
            .is_err()
        );
    }
}
