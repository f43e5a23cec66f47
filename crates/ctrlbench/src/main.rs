//! The `ctrlbench` command. Its body is `ctrlbench::entry::main`, in the
//! library, so that its code is generated once (see entry.rs).

fn main() -> std::process::ExitCode {
    ctrlbench::entry::main()
}
