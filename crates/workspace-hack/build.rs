//! Empty: a package's [build-dependencies] are only resolved when it has a
//! build script, and they are what unifies the host side's features.
fn main() {}
