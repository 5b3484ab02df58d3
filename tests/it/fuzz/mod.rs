//! Fuzzing on stable Rust (issue #22): property-based, with proptest, under a wall-clock budget. Every
//! target feeds hostile input to one parser and asserts that it never panics and that what it refuses
//! is a typed error: each provider's wire parser and translator (Claude, Codex app-server and exec,
//! CodeBuddy, Cursor), the JSON-lines codec of `driver::process`, `RunAgentInput`, the REST bodies
//! (through the real router) and the server's config file.
//!
//! Inputs are structure-aware: the recorded fixtures of each CLI (`tests/fixtures/`) mutated at random
//! JSON paths (a value replaced by arbitrary JSON built from the fixtures' own keys and strings, a key
//! removed or added, a value duplicated elsewhere), plus byte-level damage (truncation, inserted and
//! flipped bytes), so most cases reach the typed decoders instead of failing at the first byte.
//!
//! `AGENT_ADAPTOR_FUZZ_SECS` is each target's budget in seconds (default [`DEFAULT_SECS`], the CI
//! variant); the long run is `AGENT_ADAPTOR_FUZZ_SECS=3600 cargo nextest run -E 'test(fuzz::)'`
//! (BENCHMARKS.md). A failure prints the shrunk input.

mod codec;
mod config;
mod inputs;
mod providers;
mod rest;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestError, TestRunner};
use serde_json::{Map, Value};

/// Each target's budget in CI, seconds: 12 targets × 15 s is 3 min of CPU, 1.5 min on 2 cores.
pub const DEFAULT_SECS: u64 = 15;

/// Cases per proptest batch; batches repeat with fresh seeds until the budget is spent.
const BATCH: u32 = 256;

/// The budget of one target.
pub fn budget() -> Duration {
    let secs = std::env::var("AGENT_ADAPTOR_FUZZ_SECS")
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
        .unwrap_or(DEFAULT_SECS);
    Duration::from_secs(secs)
}

/// Runs `test` on values of `strategy` until the budget is spent; panics with the shrunk input when a
/// case fails (a panic inside `test` is a failure too). Returns how many cases ran.
pub fn fuzz<S>(name: &str, strategy: S, test: impl Fn(S::Value) -> Result<(), TestCaseError>) -> u64
where
    S: Strategy,
    S::Value: std::fmt::Debug,
{
    let started = Instant::now();
    let budget = budget();
    let mut cases = 0u64;
    loop {
        let mut runner = TestRunner::new(Config {
            cases: BATCH,
            failure_persistence: None,
            max_shrink_iters: 4096,
            ..Config::default()
        });
        match runner.run(&strategy, &test) {
            Ok(()) => cases += u64::from(BATCH),
            Err(TestError::Fail(reason, input)) => {
                panic!("fuzz {name}: {reason}\nshrunk input: {input:#?}")
            }
            Err(TestError::Abort(reason)) => panic!("fuzz {name}: aborted: {reason}"),
        }
        if started.elapsed() >= budget {
            break;
        }
    }
    eprintln!(
        "fuzz {name}: {cases} cases in {:.1} s, 0 failures",
        started.elapsed().as_secs_f64()
    );
    cases
}

/// The repository's `tests/fixtures/<dir>`.
pub fn fixtures(dir: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(dir)
}

/// The lines of every file under `dir` (recursively) whose name ends with `suffix` and that is not
/// excluded, one `Vec` per file, in name order.
pub fn fixture_files(dir: &Path, suffix: &str, exclude: &[&str]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            out.extend(fixture_files(&path, suffix, exclude));
        } else if name.ends_with(suffix) && !exclude.iter().any(|x| name.ends_with(x)) {
            let text = std::fs::read_to_string(&path).unwrap();
            let lines: Vec<String> = text
                .lines()
                .filter(|l| !l.trim().is_empty())
                .map(str::to_owned)
                .collect();
            if !lines.is_empty() {
                out.push(lines);
            }
        }
    }
    assert!(!out.is_empty(), "no fixtures *{suffix} under {}", dir.display());
    out
}

/// Object keys and short strings found in `values`: the vocabulary arbitrary JSON is built from, so
/// generated objects carry the field names and tags the decoders look for.
pub fn vocabulary<'a>(values: impl IntoIterator<Item = &'a Value>) -> Vec<String> {
    fn walk(v: &Value, out: &mut BTreeSet<String>) {
        match v {
            Value::String(s) if s.len() <= 48 => {
                out.insert(s.clone());
            }
            Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
            Value::Object(o) => {
                for (k, x) in o {
                    out.insert(k.clone());
                    walk(x, out);
                }
            }
            _ => {}
        }
    }
    let mut out = BTreeSet::new();
    for v in values {
        walk(v, &mut out);
    }
    out.into_iter().collect()
}

/// A string: mostly from `vocab`, sometimes arbitrary Unicode (NUL, controls, astral planes included).
pub fn word(vocab: &[String]) -> BoxedStrategy<String> {
    let vocab = vocab.to_vec();
    prop_oneof![
        6 => (0..vocab.len().max(1)).prop_map(move |i| vocab.get(i).cloned().unwrap_or_default()),
        2 => any::<String>(),
        1 => Just(String::new()),
        1 => prop::collection::vec(any::<char>(), 0..4).prop_map(|c| c.into_iter().collect()),
    ]
    .boxed()
}

/// A JSON scalar, edge values over-represented.
fn scalar(vocab: &[String]) -> BoxedStrategy<Value> {
    prop_oneof![
        1 => Just(Value::Null),
        1 => any::<bool>().prop_map(Value::from),
        2 => any::<i64>().prop_map(Value::from),
        1 => any::<u64>().prop_map(Value::from),
        1 => prop_oneof![
            Just(i64::MIN), Just(i64::MAX), Just(-1i64), Just(0i64), Just(1i64), Just(i64::from(u32::MAX) + 1)
        ]
        .prop_map(Value::from),
        1 => Just(Value::from(u64::MAX)),
        1 => any::<f64>()
            .prop_filter_map("finite", |f| serde_json::Number::from_f64(f).map(Value::Number)),
        5 => word(vocab).prop_map(Value::String),
    ]
    .boxed()
}

/// Arbitrary JSON up to 4 levels deep, keys and strings mostly from `vocab`.
pub fn json(vocab: &[String]) -> BoxedStrategy<Value> {
    let keys = word(vocab);
    scalar(vocab)
        .prop_recursive(4, 48, 6, move |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                prop::collection::vec((keys.clone(), inner), 0..6)
                    .prop_map(|kv| Value::Object(kv.into_iter().collect::<Map<String, Value>>())),
            ]
        })
        .boxed()
}

/// One change to a JSON document at the path picked by `at` (modulo the number of paths).
#[derive(Debug, Clone)]
pub enum Mutation {
    /// The value at the path becomes this.
    Replace(usize, Value),
    /// The value at the path is removed from its parent (the root becomes `null`).
    Remove(usize),
    /// An object at the path gets this key (an array this element).
    Add(usize, String, Value),
    /// The value at the first path is copied over the value at the second.
    Copy(usize, usize),
}

/// Byte-level damage to the serialized document.
#[derive(Debug, Clone)]
pub enum Damage {
    /// Keep the first `n` bytes (modulo the length).
    Truncate(usize),
    /// Insert these bytes at a position.
    Insert(usize, Vec<u8>),
    /// XOR one byte.
    Flip(usize, u8),
}

/// Mutations of a JSON document.
pub fn mutations(vocab: &[String]) -> BoxedStrategy<Vec<Mutation>> {
    let one = prop_oneof![
        4 => (any::<usize>(), json(vocab)).prop_map(|(a, v)| Mutation::Replace(a, v)),
        2 => any::<usize>().prop_map(Mutation::Remove),
        2 => (any::<usize>(), word(vocab), json(vocab)).prop_map(|(a, k, v)| Mutation::Add(a, k, v)),
        1 => (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Mutation::Copy(a, b)),
    ];
    prop::collection::vec(one, 0..4).boxed()
}

/// Byte damage, mostly none.
pub fn damage() -> BoxedStrategy<Option<Damage>> {
    prop_oneof![
        6 => Just(None),
        1 => any::<usize>().prop_map(|n| Some(Damage::Truncate(n))),
        1 => (any::<usize>(), prop::collection::vec(any::<u8>(), 1..6))
            .prop_map(|(at, b)| Some(Damage::Insert(at, b))),
        1 => (any::<usize>(), 1..=255u8).prop_map(|(at, x)| Some(Damage::Flip(at, x))),
    ]
    .boxed()
}

/// One step of a JSON path.
#[derive(Debug, Clone)]
enum Step {
    Key(String),
    Index(usize),
}

fn paths(v: &Value, prefix: &mut Vec<Step>, out: &mut Vec<Vec<Step>>) {
    out.push(prefix.clone());
    match v {
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                prefix.push(Step::Index(i));
                paths(x, prefix, out);
                prefix.pop();
            }
        }
        Value::Object(o) => {
            for (k, x) in o {
                prefix.push(Step::Key(k.clone()));
                paths(x, prefix, out);
                prefix.pop();
            }
        }
        _ => {}
    }
}

fn at_mut<'a>(v: &'a mut Value, path: &[Step]) -> Option<&'a mut Value> {
    path.iter().try_fold(v, |v, step| match step {
        Step::Key(k) => v.get_mut(k.as_str()),
        Step::Index(i) => v.get_mut(*i),
    })
}

/// `doc` with `muts` applied in order.
pub fn mutate(mut doc: Value, muts: &[Mutation]) -> Value {
    for m in muts {
        let mut all = Vec::new();
        paths(&doc, &mut Vec::new(), &mut all);
        let pick = |a: usize| all[a % all.len()].clone();
        match m {
            Mutation::Replace(a, v) => {
                if let Some(slot) = at_mut(&mut doc, &pick(*a)) {
                    *slot = v.clone();
                }
            }
            Mutation::Remove(a) => {
                let path = pick(*a);
                match path.split_last() {
                    None => doc = Value::Null,
                    Some((last, parent)) => match (at_mut(&mut doc, parent), last) {
                        (Some(Value::Object(o)), Step::Key(k)) => {
                            o.remove(k);
                        }
                        (Some(Value::Array(arr)), Step::Index(i)) if *i < arr.len() => {
                            arr.remove(*i);
                        }
                        _ => {}
                    },
                }
            }
            Mutation::Add(a, k, v) => match at_mut(&mut doc, &pick(*a)) {
                Some(Value::Object(o)) => {
                    o.insert(k.clone(), v.clone());
                }
                Some(Value::Array(arr)) => arr.push(v.clone()),
                _ => {}
            },
            Mutation::Copy(a, b) => {
                let from = at_mut(&mut doc, &pick(*a)).map(|v| v.clone());
                if let (Some(from), Some(slot)) = (from, at_mut(&mut doc, &pick(*b))) {
                    *slot = from;
                }
            }
        }
    }
    doc
}

/// `line` parsed, mutated and serialized again, then damaged; a line that is not JSON is only damaged.
pub fn mutate_line(line: &str, muts: &[Mutation], dmg: &Option<Damage>) -> Vec<u8> {
    let text = match serde_json::from_str::<Value>(line) {
        Ok(v) => serde_json::to_string(&mutate(v, muts)).unwrap(),
        Err(_) => line.to_owned(),
    };
    let mut bytes = text.into_bytes();
    match dmg {
        None => {}
        Some(Damage::Truncate(n)) => bytes.truncate(n % (bytes.len() + 1)),
        Some(Damage::Insert(at, b)) => {
            let at = at % (bytes.len() + 1);
            bytes.splice(at..at, b.iter().copied());
        }
        Some(Damage::Flip(at, x)) if !bytes.is_empty() => {
            let at = at % bytes.len();
            bytes[at] ^= x;
        }
        Some(Damage::Flip(..)) => {}
    }
    bytes
}

/// A session: one fixture file picked by index, with some of its lines mutated or damaged.
#[derive(Debug, Clone)]
pub struct Session {
    /// Which fixture file (modulo their number).
    pub file: usize,
    /// `(line index, mutations, damage)`, each applied to the line it picks.
    pub edits: Vec<(usize, Vec<Mutation>, Option<Damage>)>,
    /// Arbitrary lines spliced in at positions.
    pub extra: Vec<(usize, Value)>,
}

/// Sessions over fixture files with `vocab`.
pub fn sessions(vocab: &[String]) -> BoxedStrategy<Session> {
    (
        any::<usize>(),
        prop::collection::vec((any::<usize>(), mutations(vocab), damage()), 0..6),
        prop::collection::vec((any::<usize>(), json(vocab)), 0..2),
    )
        .prop_map(|(file, edits, extra)| Session { file, edits, extra })
        .boxed()
}

impl Session {
    /// The session's lines, as bytes (a damaged line may not be UTF-8).
    pub fn lines(&self, files: &[Vec<String>]) -> Vec<Vec<u8>> {
        let file = &files[self.file % files.len()];
        let mut lines: Vec<Vec<u8>> = file.iter().map(|l| l.clone().into_bytes()).collect();
        for (at, muts, dmg) in &self.edits {
            let i = at % file.len();
            lines[i] = mutate_line(&file[i], muts, dmg);
        }
        for (at, v) in &self.extra {
            let i = at % (lines.len() + 1);
            lines.insert(i, serde_json::to_vec(v).unwrap());
        }
        lines
    }
}

/// The fixtures' lines parsed as JSON (those that are).
pub fn parsed(files: &[Vec<String>]) -> Vec<Value> {
    files
        .iter()
        .flatten()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}
