//! The archive extractor: zip / tar / tgz round trips, each limit, traversal and link refusals, and a
//! property test: whatever the entries, nothing is ever written outside the destination, and an
//! extraction succeeds exactly when every entry is safe, unique and within the limits.

use std::io::Cursor;
use std::path::Path;

use agent_adaptor::skills::archive::{ArchiveError, ArchiveFormat, Limits, extract, safe_relative};
use proptest::prelude::*;

use super::{Entry, gz, tar_bytes, zip_bytes};

/// The archive bytes, or `None` when the zip writer refuses the entries.
fn bytes_for(format: ArchiveFormat, entries: &[Entry]) -> Option<Vec<u8>> {
    match format {
        ArchiveFormat::Zip => zip_bytes(entries),
        ArchiveFormat::Tar => Some(tar_bytes(entries)),
        ArchiveFormat::TarGz => Some(gz(&tar_bytes(entries))),
    }
}

const FORMATS: [ArchiveFormat; 3] = [ArchiveFormat::Zip, ArchiveFormat::Tar, ArchiveFormat::TarGz];

fn run(format: ArchiveFormat, bytes: Vec<u8>, limits: Limits, dest: &Path) -> Result<(), ArchiveError> {
    extract(Cursor::new(bytes), format, dest, limits).map(|_| ())
}

/// Every path under `root`, relative.
fn tree(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_owned()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            out.push(p.strip_prefix(root).unwrap().display().to_string());
            if e.file_type().unwrap().is_dir() {
                stack.push(p);
            }
        }
    }
    out.sort();
    out
}

#[test]
fn every_format_round_trips_a_skill() {
    for format in FORMATS {
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("out");
        let entries = [
            Entry::Dir("skill/".into()),
            Entry::File("skill/SKILL.md".into(), b"# hi".to_vec()),
            Entry::File("skill/scripts/run.sh".into(), b"echo".to_vec()),
        ];
        let bytes = bytes_for(format, &entries).unwrap();
        let got = extract(Cursor::new(bytes), format, &dest, Limits::default()).unwrap();
        assert_eq!(got.entries, 3, "{format:?}");
        assert_eq!(got.bytes, 8);
        assert_eq!(std::fs::read(dest.join("skill/SKILL.md")).unwrap(), b"# hi");
        assert_eq!(std::fs::read(dest.join("skill/scripts/run.sh")).unwrap(), b"echo");
    }
}

#[test]
fn each_limit_and_each_unsafe_entry_is_refused() {
    let small = Limits {
        max_total_bytes: 10,
        max_file_bytes: 6,
        max_entries: 2,
    };
    for format in FORMATS {
        let dir = tempfile::tempdir().unwrap();
        let case = |name: &str, entries: &[Entry]| {
            run(
                format,
                bytes_for(format, entries).unwrap(),
                small,
                &dir.path().join(name),
            )
        };
        let f = |n: &str, len: usize| Entry::File(n.into(), vec![b'x'; len]);
        assert!(matches!(
            case("big", &[f("a", 7)]),
            Err(ArchiveError::FileTooLarge { .. })
        ));
        assert!(matches!(
            case("total", &[f("a", 6), f("b", 6)]),
            Err(ArchiveError::TooLarge { .. })
        ));
        assert!(matches!(
            case("many", &[f("a", 1), f("b", 1), f("c", 1)]),
            Err(ArchiveError::TooManyEntries { .. })
        ));
        assert!(matches!(
            case("up", &[f("../evil", 1)]),
            Err(ArchiveError::UnsafePath(_))
        ));
        assert!(matches!(
            case("abs", &[f("/tmp/evil", 1)]),
            Err(ArchiveError::UnsafePath(_))
        ));
        assert!(matches!(
            case("deep", &[f("a/../../evil", 1)]),
            Err(ArchiveError::UnsafePath(_))
        ));
        assert!(matches!(
            case("link", &[Entry::Symlink("l".into(), "/etc".into())]),
            Err(ArchiveError::UnsupportedEntry(_))
        ));
        if format != ArchiveFormat::Zip {
            // The zip writer itself refuses duplicate names.
            assert!(matches!(
                case("dup", &[f("a", 1), f("a", 1)]),
                Err(ArchiveError::Duplicate(_))
            ));
        }
        assert!(!dir.path().parent().unwrap().join("evil").exists(), "{format:?}");
        assert!(!Path::new("/tmp/evil").exists());
    }
}

#[test]
fn a_corrupt_archive_is_a_typed_error() {
    let dir = tempfile::tempdir().unwrap();
    for format in FORMATS {
        let r = extract(
            Cursor::new(b"not an archive at all".to_vec()),
            format,
            dir.path(),
            Limits::default(),
        );
        assert!(r.is_err(), "{format:?}");
    }
}

/// Name components a hostile archive might use.
fn component() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => "[a-z]{1,6}",
        1 => Just("..".to_owned()),
        1 => Just(".".to_owned()),
        1 => Just(String::new()),
        1 => Just("C:".to_owned()),
        1 => Just("a\\..".to_owned()),
    ]
}

fn name() -> impl Strategy<Value = String> {
    (any::<bool>(), prop::collection::vec(component(), 1..4))
        .prop_map(|(abs, parts)| format!("{}{}", if abs { "/" } else { "" }, parts.join("/")))
}

fn entry() -> impl Strategy<Value = Entry> {
    prop_oneof![
        6 => (name(), prop::collection::vec(any::<u8>(), 0..40)).prop_map(|(n, d)| {
            // A trailing slash makes a zip entry a directory: keep files files.
            let n = if n.ends_with('/') || n.is_empty() { format!("{n}f") } else { n };
            Entry::File(n, d)
        }),
        1 => name().prop_map(|n| Entry::Dir(format!("{n}/"))),
        1 => (name(), name()).prop_map(|(n, t)| Entry::Symlink(n, t)),
    ]
}

fn format() -> impl Strategy<Value = ArchiveFormat> {
    prop_oneof![
        Just(ArchiveFormat::Zip),
        Just(ArchiveFormat::Tar),
        Just(ArchiveFormat::TarGz)
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 192, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn hostile_archives_never_escape_and_succeed_only_when_safe(
        entries in prop::collection::vec(entry(), 0..8),
        format in format(),
        max_entries in 1usize..8,
        max_file in 1u64..48,
        max_total in 1u64..160,
    ) {
        let limits = Limits { max_total_bytes: max_total, max_file_bytes: max_file, max_entries };
        let root = tempfile::tempdir().unwrap();
        let dest = root.path().join("out");
        let bytes = bytes_for(format, &entries);
        prop_assume!(bytes.is_some());
        let result = run(format, bytes.unwrap(), limits, &dest);
        // Nothing outside the destination, ever.
        let outside: Vec<String> = tree(root.path()).into_iter().filter(|p| p != "out" && !p.starts_with("out/")).collect();
        prop_assert!(outside.is_empty(), "wrote outside: {outside:?}");

        // The model of a safe archive.
        let mut files = std::collections::BTreeSet::new();
        let mut total = 0u64;
        let mut safe = entries.len() <= max_entries;
        for e in &entries {
            match e {
                Entry::File(n, d) => {
                    match safe_relative(n) {
                        Ok(Some(p)) => safe &= files.insert(p),
                        _ => safe = false,
                    }
                    safe &= (d.len() as u64) <= max_file;
                    total += d.len() as u64;
                }
                Entry::Dir(n) => safe &= safe_relative(n).is_ok(),
                Entry::Symlink(..) => safe = false,
            }
        }
        safe &= total <= max_total;
        // A file and a directory on the same path, or a file under a file, fail with an I/O error:
        // only claim success is required when no name is a prefix of another file's name.
        let names: Vec<_> = files.iter().collect();
        let nested = names.iter().any(|a| names.iter().any(|b| a != b && b.starts_with(a)));
        let dir_clash = entries.iter().any(|e| match e {
            Entry::Dir(n) => safe_relative(n).ok().flatten().is_some_and(|d| files.iter().any(|f| d.starts_with(f))),
            _ => false,
        });
        if result.is_ok() {
            prop_assert!(safe, "accepted an unsafe archive: {entries:?} {limits:?}");
            for e in &entries {
                if let Entry::File(n, d) = e {
                    let p = dest.join(safe_relative(n).unwrap().unwrap());
                    prop_assert_eq!(&std::fs::read(p).unwrap(), d);
                }
            }
        } else if safe && !nested && !dir_clash {
            prop_assert!(false, "refused a safe archive: {entries:?} {limits:?}: {result:?}");
        }
    }
}
