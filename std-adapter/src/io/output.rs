//! Where outputs go, and the rules that keep them from destroying anything.
//!
//! * A path of `-` is standard output.
//! * A symbolic link at an output path is written through: the file it points to (after every
//!   link in the chain) is replaced atomically and the link stays.
//! * A path naming something other than a regular file (a FIFO, a character device such as
//!   `/dev/null`) is opened and written in place, never replaced by a regular file.
//! * Any other path is written through a temporary file in the same folder and a rename, so a
//!   failed write never leaves a partial file behind.
//! * Several outputs are written all or none: every temporary file is written before the first
//!   rename, and standard output and special files come last.
//! * An output too large to hold in memory is a [`StreamedFile`]: written in pieces, at any
//!   offset, while it is produced, into its temporary file (for standard output or a special
//!   file: a temporary file in the system's temporary folder, copied there at the end), and
//!   committed with the others by [`write_all_with`] under the same rules.
//! * Two outputs naming the same file, or an output naming an input, are refused before
//!   anything is written ([`check_distinct`]). Paths are compared after following symbolic links
//!   and resolving the folder, and on Unix also by device and inode (hard links).

use std::fmt;
use std::fs::File;
use std::io::{Read as _, Seek as _, SeekFrom, Write as _};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// Links followed before giving up on a chain of symbolic links (Linux's own limit).
const MAX_LINKS: usize = 40;

/// A file that could not be written.
#[derive(Debug)]
pub struct WriteError {
    /// The file.
    pub path: PathBuf,
    /// Why.
    pub source: std::io::Error,
}

impl fmt::Display for WriteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.source)
    }
}

impl std::error::Error for WriteError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
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

/// How one output is written.
enum Plan<'a> {
    /// Through a temporary file and a rename onto `target`.
    Replace {
        target: PathBuf,
        tmp: PathBuf,
        bytes: &'a [u8],
    },
    /// Opened and written in place (a FIFO or device).
    InPlace { target: PathBuf, bytes: &'a [u8] },
    /// Standard output.
    Stdout { bytes: &'a [u8] },
}

fn plan<'a>(path: &Path, bytes: &'a [u8]) -> Result<Plan<'a>, WriteError> {
    let fail = |source| WriteError {
        path: path.to_path_buf(),
        source,
    };
    if is_stdout(path) {
        return Ok(Plan::Stdout { bytes });
    }
    let target = resolve_links(path).map_err(fail)?;
    if let Ok(meta) = std::fs::metadata(&target) {
        if meta.is_dir() {
            return Err(fail(std::io::Error::other("is a folder")));
        }
        if !meta.is_file() {
            return Ok(Plan::InPlace { target, bytes });
        }
    }
    let name = target
        .file_name()
        .ok_or_else(|| fail(std::io::Error::other("not a file name")))?;
    let tmp = target.with_file_name(format!(".{}.partial", name.to_string_lossy()));
    Ok(Plan::Replace { target, tmp, bytes })
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

/// Streamed outputs so far in this process, for unique temporary names.
static STREAMED: AtomicU64 = AtomicU64::new(0);

/// An output written in pieces while it is produced, then committed by [`write_all_with`]
/// with the other outputs (all or none). Until then it lives in a temporary file: next to the
/// target (`.NAME.partial`, renamed onto it), or, for standard output and special files, in
/// the system's temporary folder (copied out at the end). Dropped uncommitted, it removes its
/// temporary file and leaves the target as it was.
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
        let spill = || {
            let n = STREAMED.fetch_add(1, Ordering::Relaxed);
            std::env::temp_dir().join(format!(".langevin-{}-{n}.partial", std::process::id()))
        };
        let (destination, tmp) = match plan(path, &[])? {
            Plan::Replace { target, tmp, .. } => (Destination::Replace(target), tmp),
            Plan::InPlace { target, .. } => (Destination::InPlace(target), spill()),
            Plan::Stdout { .. } => (Destination::Stdout, spill()),
        };
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&tmp)
            .map_err(fail)?;
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

    fn lock(&self) -> std::sync::MutexGuard<'_, File> {
        self.file
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
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
    let folder = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if let Ok(free) = fs4::available_space(folder)
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
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

/// Like [`write_all`], with outputs already written in pieces ([`StreamedFile`]): all are
/// checked to name distinct files, every byte output is written to its temporary file, then
/// every temporary file (streamed ones included) is renamed, then standard output and special
/// files are written (streamed ones copied from their temporary files).
///
/// # Errors
///
/// As [`write_all`]; a streamed output's temporary file is removed on failure.
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
    let plans = files
        .iter()
        .map(|(p, bytes)| plan(p.as_ref(), bytes))
        .collect::<Result<Vec<_>, _>>()?;
    let remove_temporaries = |plans: &[Plan]| {
        for p in plans {
            if let Plan::Replace { tmp, .. } = p {
                let _ = std::fs::remove_file(tmp);
            }
        }
    };
    for p in &plans {
        if let Plan::Replace { target, tmp, bytes } = p
            && let Err(source) = std::fs::write(tmp, bytes)
        {
            remove_temporaries(&plans);
            return Err(WriteError {
                path: target.clone(),
                source,
            });
        }
    }
    for f in &streamed {
        if let Destination::Replace(target) = &f.destination
            && let Err(source) = f.lock().sync_data()
        {
            remove_temporaries(&plans);
            return Err(WriteError {
                path: target.clone(),
                source,
            });
        }
    }
    for f in &mut streamed {
        if let Destination::Replace(target) = &f.destination {
            if let Err(source) = std::fs::rename(&f.tmp, target) {
                remove_temporaries(&plans);
                return Err(WriteError {
                    path: target.clone(),
                    source,
                });
            }
            f.committed = true;
        }
    }
    for (k, p) in plans.iter().enumerate() {
        if let Plan::Replace { target, tmp, .. } = p
            && let Err(source) = std::fs::rename(tmp, target)
        {
            remove_temporaries(plans.get(k..).unwrap_or(&[]));
            return Err(WriteError {
                path: target.clone(),
                source,
            });
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
    for p in &plans {
        match p {
            Plan::InPlace { target, bytes } => std::fs::OpenOptions::new()
                .write(true)
                .open(target)
                .and_then(|mut f| f.write_all(bytes))
                .map_err(|source| WriteError {
                    path: target.clone(),
                    source,
                })?,
            Plan::Stdout { bytes } => {
                let mut out = std::io::stdout().lock();
                out.write_all(bytes)
                    .and_then(|()| out.flush())
                    .map_err(|source| WriteError {
                        path: PathBuf::from("-"),
                        source,
                    })?;
            }
            Plan::Replace { .. } => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh folder under the system's temporary folder, removed when dropped.
    struct Scratch(PathBuf);

    impl std::ops::Deref for Scratch {
        type Target = Path;
        fn deref(&self) -> &Path {
            &self.0
        }
    }

    impl AsRef<Path> for Scratch {
        fn as_ref(&self) -> &Path {
            &self.0
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn scratch(name: &str) -> Scratch {
        let dir =
            std::env::temp_dir().join(format!("langevin-output-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    #[test]
    fn scratch_folders_are_removed_when_dropped() {
        let dir = scratch("dropped");
        std::fs::write(dir.join("a.txt"), b"a").unwrap();
        let path = dir.0.clone();
        drop(dir);
        assert!(!path.exists(), "{}", path.display());
    }

    #[test]
    fn outputs_are_written_and_replaced() {
        let dir = scratch("plain");
        let a = dir.join("a.txt");
        write_atomically(&a, b"one").unwrap();
        write_atomically(&a, b"two").unwrap();
        assert_eq!(std::fs::read(&a).unwrap(), b"two");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
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
        assert_eq!(std::fs::read(&a).unwrap(), b"abcdef");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 2);
        // Dropped without committing: no temporary file stays, the target is as it was.
        let f = StreamedFile::create(&a, 3).unwrap();
        f.write_at(0, b"xyz").unwrap();
        drop(f);
        assert_eq!(std::fs::read(&a).unwrap(), b"abcdef");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 2);
        // A clash with a byte output is refused before anything is renamed.
        let f = StreamedFile::create(&a, 1).unwrap();
        assert!(write_all_with(&[(a.clone(), b"z".to_vec())], vec![f]).is_err());
        assert_eq!(std::fs::read(&a).unwrap(), b"abcdef");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 2);
    }

    #[test]
    fn a_failed_write_leaves_every_output_as_it_was() {
        let dir = scratch("none");
        let a = dir.join("a.txt");
        std::fs::write(&a, b"old").unwrap();
        let missing = dir.join("no/such/folder/b.txt");
        let files = [(a.clone(), b"new".to_vec()), (missing, b"x".to_vec())];
        assert!(write_all(&files).is_err());
        assert_eq!(std::fs::read(&a).unwrap(), b"old");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
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
