//! The safe archive extractor: zip, tar and gzip-compressed tar, with limits on the total uncompressed
//! size, the size of any one file and the number of entries, and no way out of the destination.
//!
//! Safety rules (each a test, and the whole set property-tested in `tests/it/skills/`):
//! * a name is split on `/`; `.` and empty components are dropped; an absolute name, a `..` component,
//!   a backslash, a colon or a NUL byte is refused ([`ArchiveError::UnsafePath`]);
//! * only regular files and directories are extracted; links, devices and FIFOs are refused
//!   ([`ArchiveError::UnsupportedEntry`]) — so nothing later in the archive can redirect a write;
//! * files are created with `create_new`, so a duplicate entry is refused instead of overwriting;
//! * sizes are counted on the bytes actually read (never the header's claim), and reading stops one byte
//!   past a limit.

use std::fs;
use std::io::{self, Read, Seek};
use std::path::{Component, Path, PathBuf};

/// Archive formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ArchiveFormat {
    /// `.zip` (stored or deflated entries).
    Zip,
    /// `.tar`.
    Tar,
    /// `.tgz` / `.tar.gz`.
    TarGz,
}

impl ArchiveFormat {
    /// The format a file name suggests.
    pub fn from_path(path: &Path) -> Option<ArchiveFormat> {
        let name = path.file_name()?.to_str()?.to_ascii_lowercase();
        if name.ends_with(".zip") {
            Some(ArchiveFormat::Zip)
        } else if name.ends_with(".tar.gz") || name.ends_with(".tgz") {
            Some(ArchiveFormat::TarGz)
        } else if name.ends_with(".tar") {
            Some(ArchiveFormat::Tar)
        } else {
            None
        }
    }
}

/// Extraction limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Limits {
    /// Total uncompressed bytes (and the largest archive file accepted).
    pub max_total_bytes: u64,
    /// Bytes of any one file.
    pub max_file_bytes: u64,
    /// Entries (files and directories).
    pub max_entries: usize,
}

impl Default for Limits {
    /// 16 MiB in total, 4 MiB per file, 1000 entries.
    fn default() -> Self {
        Limits {
            max_total_bytes: 16 << 20,
            max_file_bytes: 4 << 20,
            max_entries: 1000,
        }
    }
}

/// Why an archive was refused.
#[derive(Debug, thiserror::Error)]
pub enum ArchiveError {
    /// More than `max_total_bytes`.
    #[error("the archive exceeds {limit} bytes")]
    TooLarge {
        /// The limit.
        limit: u64,
    },
    /// One file exceeds `max_file_bytes`.
    #[error("{path:?} exceeds {limit} bytes")]
    FileTooLarge {
        /// The entry.
        path: String,
        /// The limit.
        limit: u64,
    },
    /// More than `max_entries`.
    #[error("the archive has more than {limit} entries")]
    TooManyEntries {
        /// The limit.
        limit: usize,
    },
    /// A name that could leave the destination (absolute, `..`, backslash, colon, NUL) or is empty.
    #[error("unsafe entry name {0:?}")]
    UnsafePath(String),
    /// A link, device or other non-regular entry.
    #[error("unsupported entry {0:?} (only regular files and directories)")]
    UnsupportedEntry(String),
    /// Two entries for the same file.
    #[error("duplicate entry {0:?}")]
    Duplicate(String),
    /// The archive is malformed.
    #[error("corrupt archive: {0}")]
    Corrupt(String),
    /// Reading or writing failed.
    #[error("i/o: {0}")]
    Io(#[from] io::Error),
}

/// The safe relative path for an entry name, or `None` when it names the root itself (`./`).
pub fn safe_relative(name: &str) -> Result<Option<PathBuf>, ArchiveError> {
    let unsafe_path = || ArchiveError::UnsafePath(name.to_owned());
    if name.starts_with('/') || name.contains(['\\', ':', '\0']) {
        return Err(unsafe_path());
    }
    let mut out = PathBuf::new();
    for part in name.split('/') {
        match part {
            "" | "." => {}
            ".." => return Err(unsafe_path()),
            p => out.push(p),
        }
    }
    // Belt and braces: every component must be a plain name.
    if !out.components().all(|c| matches!(c, Component::Normal(_))) {
        return Err(unsafe_path());
    }
    Ok((!out.as_os_str().is_empty()).then_some(out))
}

/// What was extracted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Extracted {
    /// Regular files written, relative to the destination.
    pub files: Vec<PathBuf>,
    /// Entries seen (files and directories).
    pub entries: usize,
    /// Uncompressed bytes written.
    pub bytes: u64,
}

struct Sink<'a> {
    dest: &'a Path,
    limits: Limits,
    out: Extracted,
}

impl Sink<'_> {
    fn entry(&mut self) -> Result<(), ArchiveError> {
        self.out.entries += 1;
        if self.out.entries > self.limits.max_entries {
            return Err(ArchiveError::TooManyEntries {
                limit: self.limits.max_entries,
            });
        }
        Ok(())
    }

    fn dir(&mut self, name: &str) -> Result<(), ArchiveError> {
        self.entry()?;
        if let Some(rel) = safe_relative(name)? {
            fs::create_dir_all(self.dest.join(rel))?;
        }
        Ok(())
    }

    fn file(&mut self, name: &str, data: &mut dyn Read) -> Result<(), ArchiveError> {
        self.entry()?;
        let rel = safe_relative(name)?.ok_or_else(|| ArchiveError::UnsafePath(name.to_owned()))?;
        let path = self.dest.join(&rel);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent)?;
        }
        let mut f = match fs::OpenOptions::new().write(true).create_new(true).open(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                return Err(ArchiveError::Duplicate(name.to_owned()));
            }
            Err(e) => return Err(e.into()),
        };
        let remaining = self.limits.max_total_bytes.saturating_sub(self.out.bytes);
        let cap = self.limits.max_file_bytes.min(remaining);
        let n = io::copy(&mut data.take(cap + 1), &mut f)?;
        if n > self.limits.max_file_bytes {
            return Err(ArchiveError::FileTooLarge {
                path: name.to_owned(),
                limit: self.limits.max_file_bytes,
            });
        }
        if n > remaining {
            return Err(ArchiveError::TooLarge {
                limit: self.limits.max_total_bytes,
            });
        }
        self.out.bytes += n;
        self.out.files.push(rel);
        Ok(())
    }
}

/// Extracts `archive` into `dest` (created when missing). On error `dest` may hold a partial extraction;
/// callers extract into a fresh directory and remove it on failure.
pub fn extract<R: Read + Seek>(
    archive: R,
    format: ArchiveFormat,
    dest: &Path,
    limits: Limits,
) -> Result<Extracted, ArchiveError> {
    fs::create_dir_all(dest)?;
    let mut sink = Sink {
        dest,
        limits,
        out: Extracted::default(),
    };
    match format {
        ArchiveFormat::Zip => extract_zip(archive, &mut sink)?,
        ArchiveFormat::Tar => extract_tar(archive, &mut sink)?,
        ArchiveFormat::TarGz => extract_tar(flate2::read::GzDecoder::new(archive), &mut sink)?,
    }
    Ok(sink.out)
}

/// Extracts the archive file at `path` (format from its name, or `format`).
pub fn extract_file(
    path: &Path,
    format: Option<ArchiveFormat>,
    dest: &Path,
    limits: Limits,
) -> Result<Extracted, ArchiveError> {
    let format = format
        .or_else(|| ArchiveFormat::from_path(path))
        .ok_or_else(|| ArchiveError::Corrupt(format!("unknown archive type: {}", path.display())))?;
    let file = fs::File::open(path)?;
    if file.metadata()?.len() > limits.max_total_bytes {
        return Err(ArchiveError::TooLarge {
            limit: limits.max_total_bytes,
        });
    }
    extract(io::BufReader::new(file), format, dest, limits)
}

fn extract_zip<R: Read + Seek>(archive: R, sink: &mut Sink<'_>) -> Result<(), ArchiveError> {
    let mut zip = zip::ZipArchive::new(archive).map_err(|e| ArchiveError::Corrupt(e.to_string()))?;
    if zip.len() > sink.limits.max_entries {
        return Err(ArchiveError::TooManyEntries {
            limit: sink.limits.max_entries,
        });
    }
    for i in 0..zip.len() {
        let mut entry = zip
            .by_index(i)
            .map_err(|e| ArchiveError::Corrupt(e.to_string()))?;
        let name = String::from_utf8_lossy(entry.name_raw()).into_owned();
        let kind = entry.unix_mode().map(|m| m & 0o170000);
        if entry.is_dir() {
            sink.dir(&name)?;
        } else if matches!(kind, None | Some(0) | Some(0o100000)) {
            sink.file(&name, &mut entry)?;
        } else {
            return Err(ArchiveError::UnsupportedEntry(name));
        }
    }
    Ok(())
}

fn extract_tar<R: Read>(archive: R, sink: &mut Sink<'_>) -> Result<(), ArchiveError> {
    let mut tar = tar::Archive::new(archive);
    let entries = tar.entries().map_err(|e| ArchiveError::Corrupt(e.to_string()))?;
    for entry in entries {
        let mut entry = entry.map_err(|e| ArchiveError::Corrupt(e.to_string()))?;
        let name = String::from_utf8_lossy(&entry.path_bytes()).into_owned();
        match entry.header().entry_type() {
            tar::EntryType::Directory => sink.dir(&name)?,
            tar::EntryType::Regular | tar::EntryType::Continuous => sink.file(&name, &mut entry)?,
            tar::EntryType::XGlobalHeader | tar::EntryType::XHeader => {}
            _ => return Err(ArchiveError::UnsupportedEntry(name)),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn safe_relative_accepts_plain_names_and_refuses_escapes() {
        assert_eq!(safe_relative("a/b.md").unwrap(), Some(PathBuf::from("a/b.md")));
        assert_eq!(safe_relative("./a//b/").unwrap(), Some(PathBuf::from("a/b")));
        assert_eq!(safe_relative("./").unwrap(), None);
        for bad in [
            "/etc/passwd",
            "../x",
            "a/../../x",
            "a\\..\\x",
            "C:/x",
            "a\0b",
            "a/..",
        ] {
            assert!(safe_relative(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn formats_follow_the_file_name() {
        assert_eq!(
            ArchiveFormat::from_path(Path::new("s.ZIP")),
            Some(ArchiveFormat::Zip)
        );
        assert_eq!(
            ArchiveFormat::from_path(Path::new("s.tar.gz")),
            Some(ArchiveFormat::TarGz)
        );
        assert_eq!(
            ArchiveFormat::from_path(Path::new("s.tgz")),
            Some(ArchiveFormat::TarGz)
        );
        assert_eq!(
            ArchiveFormat::from_path(Path::new("s.tar")),
            Some(ArchiveFormat::Tar)
        );
        assert_eq!(ArchiveFormat::from_path(Path::new("s.rar")), None);
    }
}
