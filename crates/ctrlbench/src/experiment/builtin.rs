//! The experiments that ship with ctrlbench, runnable by name: the user's
//! (`experiments/*.toml`) and the lab's (`experiments/lab/*.toml`, ctrlbench's
//! own studies of its controllers). build.rs generates the table from those
//! directories, so it cannot drift from what is committed.

/// One built-in experiment file.
#[derive(Debug, Clone, Copy)]
pub struct Builtin {
    /// Its name: the file name without `.toml`, what `ctrlbench run` takes.
    pub name: &'static str,
    /// Its repository path, against which its workload files resolve.
    pub path: &'static str,
    /// One of ctrlbench's own studies, listed apart from the user's.
    pub lab: bool,
    /// The file's text.
    pub text: &'static str,
}

include!(concat!(env!("OUT_DIR"), "/builtin.rs"));

/// Parses a built-in experiment (its workload files from [`FILES`]).
pub fn parse(b: &Builtin) -> Result<super::spec::Experiment, super::spec::SpecError> {
    let path = std::path::PathBuf::from(b.path);
    super::spec::parse_with(&path, b.text, &|p: &std::path::Path| {
        let key = p.to_string_lossy().replace('\\', "/");
        FILES
            .iter()
            .find(|(n, _)| *n == key)
            .map(|(_, t)| t.to_string())
            .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::NotFound, "not a built-in file"))
    })
}

/// The built-in experiment called `name`, user's or lab's.
pub fn get(name: &str) -> Option<&'static Builtin> {
    BUILTIN.iter().find(|b| b.name == name)
}
