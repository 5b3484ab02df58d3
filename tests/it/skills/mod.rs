//! Skills: every source kind materialized for real on disk (`materialize.rs`), the archive extractor's
//! limits and traversal refusals (`archive.rs`, with a property test over hostile archives), and the
//! launch stopping with the spec's skill errors (`launch.rs`).

mod archive;
mod launch;
mod materialize;

use std::io::Write;

/// One archive entry as a test writes it: raw name, kind and content.
#[derive(Debug, Clone)]
pub enum Entry {
    /// A regular file.
    File(String, Vec<u8>),
    /// A directory.
    Dir(String),
    /// A symlink to a target.
    Symlink(String, String),
}

/// A tar with raw (unvalidated) names, so hostile names reach the extractor unchanged.
pub fn tar_bytes(entries: &[Entry]) -> Vec<u8> {
    let mut b = tar::Builder::new(Vec::new());
    for e in entries {
        let mut h = tar::Header::new_gnu();
        let (name, data, kind, link): (&str, &[u8], tar::EntryType, Option<&str>) = match e {
            Entry::File(n, d) => (n, d, tar::EntryType::Regular, None),
            Entry::Dir(n) => (n, &[], tar::EntryType::Directory, None),
            Entry::Symlink(n, t) => (n, &[], tar::EntryType::Symlink, Some(t)),
        };
        let raw = &mut h.as_old_mut().name;
        raw.fill(0);
        let n = name.len().min(raw.len());
        raw[..n].copy_from_slice(&name.as_bytes()[..n]);
        h.set_entry_type(kind);
        h.set_size(data.len() as u64);
        h.set_mode(0o644);
        if let Some(t) = link {
            let raw = &mut h.as_old_mut().linkname;
            raw.fill(0);
            let n = t.len().min(raw.len());
            raw[..n].copy_from_slice(&t.as_bytes()[..n]);
        }
        h.set_cksum();
        b.append(&h, data).unwrap();
    }
    b.into_inner().unwrap()
}

/// The gzip of `bytes`.
pub fn gz(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

/// A zip with raw names, or `None` when the zip writer itself refuses them (e.g. a duplicate name).
pub fn zip_bytes(entries: &[Entry]) -> Option<Vec<u8>> {
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    for e in entries {
        match e {
            Entry::File(n, d) => {
                w.start_file(n.as_str(), opts).ok()?;
                w.write_all(d).ok()?;
            }
            Entry::Dir(n) => w.add_directory(n.as_str(), opts).ok()?,
            Entry::Symlink(n, t) => w.add_symlink(n.as_str(), t.as_str(), opts).ok()?,
        }
    }
    Some(w.finish().ok()?.into_inner())
}
