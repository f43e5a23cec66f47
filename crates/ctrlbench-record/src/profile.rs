//! A controller's CPU profile as the run directory keeps it: folded stacks,
//! one line per distinct stack, `root;…;leaf samples` (the format inferno
//! and flamegraph.pl read), summed over every profile taken during the run.
//! Profiles arrive in pprof's protobuf format — Go's net/http/pprof gzips
//! it, our Rust controller's pprof-rs does not — and [`fold`] adds one to
//! the stacks so far.

use std::collections::{BTreeMap, HashMap};
use std::io::Read;
use std::path::Path;

use anyhow::{Context, Result, bail};
use pprof::protos::{Message, Profile};

/// Samples per stack, the stack spelled root first, frames joined by `;`.
pub type Folded = BTreeMap<String, u64>;

/// Adds the samples of one pprof profile (gzipped or not) to `into`;
/// returns how many it had. The first sample value is the count in both
/// runtimes' CPU profiles (Go: samples/count, then cpu/nanoseconds).
pub fn fold(body: &[u8], into: &mut Folded) -> Result<u64> {
    let raw;
    let bytes = if body.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(body)
            .read_to_end(&mut out)
            .context("a gzipped profile that does not decompress")?;
        raw = out;
        raw.as_slice()
    } else {
        body
    };
    let p = Profile::decode(bytes).context("not a pprof profile")?;
    if p.sample_type.is_empty() {
        bail!("a pprof profile without sample types");
    }
    let text = |i: i64| p.string_table.get(i as usize).map_or("?", String::as_str);
    let functions: HashMap<u64, &str> = p.function.iter().map(|f| (f.id, text(f.name))).collect();
    // A location's frames, caller first: pprof lists inlined functions
    // before the function they were inlined into.
    let frames: HashMap<u64, Vec<String>> = p
        .location
        .iter()
        .map(|l| {
            let names: Vec<String> = if l.line.is_empty() {
                vec![format!("0x{:x}", l.address)]
            } else {
                l.line
                    .iter()
                    .rev()
                    .map(|ln| functions.get(&ln.function_id).copied().unwrap_or("?"))
                    .map(|n| n.replace(';', ":"))
                    .collect()
            };
            (l.id, names)
        })
        .collect();
    let mut total = 0;
    for s in &p.sample {
        let n = s.value.first().copied().unwrap_or(0).max(0) as u64;
        if n == 0 {
            continue;
        }
        // location_id[0] is the leaf.
        let stack: Vec<&str> = s
            .location_id
            .iter()
            .rev()
            .flat_map(|id| frames.get(id).into_iter().flatten().map(String::as_str))
            .collect();
        if stack.is_empty() {
            continue;
        }
        *into.entry(stack.join(";")).or_default() += n;
        total += n;
    }
    Ok(total)
}

/// Writes the stacks, one `stack count` line each.
pub fn write(path: &Path, stacks: &Folded) -> Result<()> {
    let mut text = String::new();
    for (stack, n) in stacks {
        text.push_str(&format!("{stack} {n}\n"));
    }
    std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))
}

/// Reads a folded-stacks file written by [`write`].
pub fn read(path: &Path) -> Result<Folded> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let mut out = Folded::new();
    for (i, line) in text.lines().enumerate() {
        let parsed = line
            .rsplit_once(' ')
            .and_then(|(s, n)| Some((s, n.parse::<u64>().ok()?)));
        let Some((stack, n)) = parsed else {
            bail!("{}:{}: not `stack count`", path.display(), i + 1);
        };
        *out.entry(stack.to_string()).or_default() += n;
    }
    Ok(out)
}

/// Samples per function where it was the leaf (self time), most first.
pub fn self_time(stacks: &Folded) -> Vec<(String, u64)> {
    let mut by: HashMap<&str, u64> = HashMap::new();
    for (stack, n) in stacks {
        let leaf = stack.rsplit(';').next().unwrap_or(stack);
        *by.entry(leaf).or_default() += n;
    }
    let mut v: Vec<(String, u64)> = by.into_iter().map(|(f, n)| (f.to_string(), n)).collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use pprof::protos::{Function, Line, Location, Sample, ValueType};

    /// main → work (with helper inlined into work) 3 samples; main alone 1.
    fn profile() -> Profile {
        let strings = ["", "samples", "count", "main", "work", "helper"];
        let f = |id, name| Function {
            id,
            name,
            ..Function::default()
        };
        let line = |function_id| Line {
            function_id,
            line: 0,
        };
        Profile {
            sample_type: vec![ValueType { ty: 1, unit: 2 }],
            string_table: strings.map(String::from).to_vec(),
            function: vec![f(1, 3), f(2, 4), f(3, 5)],
            location: vec![
                Location {
                    id: 10,
                    line: vec![line(1)],
                    ..Location::default()
                },
                // helper inlined into work: helper listed first.
                Location {
                    id: 11,
                    line: vec![line(3), line(2)],
                    ..Location::default()
                },
            ],
            sample: vec![
                Sample {
                    location_id: vec![11, 10],
                    value: vec![3, 30_000_000],
                    label: vec![],
                },
                Sample {
                    location_id: vec![10],
                    value: vec![1, 10_000_000],
                    label: vec![],
                },
            ],
            ..Profile::default()
        }
    }

    #[test]
    fn stacks_are_root_first_with_inlined_frames_after_their_caller() {
        let body = profile().encode_to_vec();
        let mut stacks = Folded::new();
        assert_eq!(fold(&body, &mut stacks).unwrap(), 4);
        let want: Folded = [("main".to_string(), 1), ("main;work;helper".to_string(), 3)].into();
        assert_eq!(stacks, want);
        assert_eq!(
            self_time(&stacks),
            [("helper".to_string(), 3), ("main".to_string(), 1)]
        );
    }

    #[test]
    fn gzipped_profiles_fold_alike_and_files_round_trip() {
        let body = profile().encode_to_vec();
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut gz, &body).unwrap();
        let mut a = Folded::new();
        fold(&body, &mut a).unwrap();
        let mut b = Folded::new();
        fold(&gz.finish().unwrap(), &mut b).unwrap();
        assert_eq!(a, b);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("profile.folded");
        write(&path, &a).unwrap();
        assert_eq!(read(&path).unwrap(), a);
        assert!(fold(b"not a profile", &mut a).is_err());
    }
}
