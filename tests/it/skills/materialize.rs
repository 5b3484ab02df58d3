//! Every skill source materialized for real: directory (copied, symlinks refused), inline, embedded
//! files, zip / tar / tgz archives (root or single top-level directory), bare keys through a
//! [`SkillSet`]; missing sources and unknown keys stop required skills and skip optional ones.

use std::path::Path;

use agent_adaptor::skills::{
    DefaultSkillMaterializer, Limits, SkillError, SkillMaterializer, SkillProvider, SkillSet, materialize_all,
};
use agent_adaptor::vocab::SkillRef;

use super::{Entry, gz, tar_bytes, zip_bytes};

const SKILL: &str = "---\nname: review\ndescription: Reviews code\n---\n# Review\n";

fn write(path: &Path, bytes: &[u8]) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, bytes).unwrap();
}

#[test]
fn every_source_kind_lands_as_a_directory_with_skill_md() {
    let src = tempfile::tempdir().unwrap();
    let s = src.path();
    write(&s.join("dir/SKILL.md"), SKILL.as_bytes());
    write(&s.join("dir/scripts/x.sh"), b"echo x");
    let entries = [
        Entry::Dir("pkg/".into()),
        Entry::File("pkg/SKILL.md".into(), SKILL.as_bytes().to_vec()),
        Entry::File("pkg/ref.md".into(), b"ref".to_vec()),
    ];
    write(&s.join("a.zip"), &zip_bytes(&entries).unwrap());
    write(&s.join("a.tar"), &tar_bytes(&entries));
    write(&s.join("a.tgz"), &gz(&tar_bytes(&entries)));
    let flat = [Entry::File("SKILL.md".into(), SKILL.as_bytes().to_vec())];
    write(&s.join("flat.tar.gz"), &gz(&tar_bytes(&flat)));

    let refs = vec![
        SkillRef::dir("from-dir", s.join("dir")),
        SkillRef::inline("inline", SKILL),
        SkillRef::files("embedded", [("SKILL.md", SKILL), ("docs/more.md", "more")]),
        SkillRef::archive("zip", s.join("a.zip")),
        SkillRef::archive("tar", s.join("a.tar")),
        SkillRef::archive("tgz", s.join("a.tgz")),
        SkillRef::archive("flat", s.join("flat.tar.gz")),
        SkillRef::key("catalogued").require(),
    ];
    let set = SkillSet::new([SkillRef::inline("catalogued", "# From the set")]);
    let out = tempfile::tempdir().unwrap();
    let m = materialize_all(
        &refs,
        Some(&set),
        &DefaultSkillMaterializer::default(),
        out.path(),
    )
    .unwrap();
    assert!(m.warnings.is_empty(), "{:?}", m.warnings);
    assert_eq!(m.skills.len(), refs.len());
    for (skill, r) in m.skills.iter().zip(&refs) {
        assert_eq!(skill.key, r.key);
        assert!(skill.dir.starts_with(out.path()), "{}", skill.dir.display());
        assert!(skill.dir.join("SKILL.md").is_file(), "{}", skill.key);
    }
    assert_eq!(m.skills[0].name.as_deref(), Some("review"));
    assert_eq!(m.skills[0].description.as_deref(), Some("Reviews code"));
    assert!(
        m.skills[0].dir.join("scripts/x.sh").is_file(),
        "the whole directory is copied"
    );
    assert!(m.skills[2].dir.join("docs/more.md").is_file());
    assert!(
        m.skills[3].dir.ends_with("zip/pkg"),
        "a single top-level dir is the skill root"
    );
    assert!(m.skills[3].dir.join("ref.md").is_file());
    assert_eq!(
        std::fs::read_to_string(m.skills[7].dir.join("SKILL.md")).unwrap(),
        "# From the set"
    );
}

#[test]
fn missing_sources_stop_required_skills_and_skip_optional_ones() {
    let out = tempfile::tempdir().unwrap();
    let mat = DefaultSkillMaterializer::default();
    let run =
        |refs: Vec<SkillRef>, p: Option<&dyn SkillProvider>| materialize_all(&refs, p, &mat, out.path());

    let gone = SkillRef::dir("gone", "/nonexistent/skill");
    assert!(matches!(
        run(vec![gone.clone().require()], None),
        Err(SkillError::SourceMissing { .. })
    ));
    let skipped = run(vec![gone, SkillRef::inline("ok", "# ok")], None).unwrap();
    assert_eq!(skipped.skills.len(), 1);
    assert_eq!(skipped.warnings.len(), 1, "{:?}", skipped.warnings);

    assert!(matches!(
        run(vec![SkillRef::key("nope").require()], None),
        Err(SkillError::NotFound(_))
    ));
    let set = SkillSet::new([]);
    assert!(matches!(
        run(vec![SkillRef::key("nope").require()], Some(&set)),
        Err(SkillError::NotFound(_))
    ));

    let no_md = tempfile::tempdir().unwrap();
    let r = run(vec![SkillRef::dir("nomd", no_md.path()).require()], None);
    assert!(matches!(r, Err(SkillError::SourceMissing { .. })), "{r:?}");
    assert!(matches!(
        run(vec![SkillRef::inline("../up", "# x")], None),
        Err(SkillError::KeyMissing(_))
    ));
    assert!(matches!(
        run(vec![SkillRef::inline("empty", "  ")], None),
        Err(SkillError::MaterializationFailed { .. })
    ));
}

#[test]
fn unsafe_or_oversized_sources_always_stop_and_leave_nothing_behind() {
    let src = tempfile::tempdir().unwrap();
    let evil = src.path().join("evil.tar");
    write(
        &evil,
        &tar_bytes(&[
            Entry::File("SKILL.md".into(), b"# x".to_vec()),
            Entry::File("../escaped".into(), b"x".to_vec()),
        ]),
    );
    let out = tempfile::tempdir().unwrap();
    let mat = DefaultSkillMaterializer::default();
    // Optional, yet refused: an unsafe archive is never skipped silently.
    let r = materialize_all(&[SkillRef::archive("evil", &evil)], None, &mat, out.path());
    assert!(
        matches!(r, Err(SkillError::MaterializationFailed { .. })),
        "{r:?}"
    );
    assert!(
        !out.path().join("evil").exists(),
        "a failed skill leaves no directory"
    );
    assert!(!out.path().join("escaped").exists());

    let tiny = DefaultSkillMaterializer::new(Limits {
        max_total_bytes: 1024,
        max_file_bytes: 4,
        max_entries: 10,
    });
    let r = tiny.materialize(
        &SkillRef::inline("big", "# far too long"),
        &out.path().join("big"),
    );
    assert!(
        matches!(r, Err(SkillError::MaterializationFailed { .. })),
        "{r:?}"
    );
    let r = tiny.materialize(
        &SkillRef::files("bad", [("SKILL.md", "# x"), ("../../x", "x")]),
        &out.path().join("bad"),
    );
    assert!(
        matches!(r, Err(SkillError::MaterializationFailed { .. })),
        "{r:?}"
    );

    #[cfg(unix)]
    {
        let d = src.path().join("linked");
        write(&d.join("SKILL.md"), b"# x");
        std::os::unix::fs::symlink("/etc/passwd", d.join("passwd")).unwrap();
        let r = mat.materialize(&SkillRef::dir("linked", &d), &out.path().join("linked"));
        assert!(
            matches!(r, Err(SkillError::MaterializationFailed { .. })),
            "symlinks are refused: {r:?}"
        );
    }
}
