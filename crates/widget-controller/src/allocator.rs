//! The global allocator, chosen at build time (features `mimalloc`,
//! `jemalloc`; neither: the system allocator), for the allocator A/B:
//! ctrlbench's `allocator` key builds the controller with the feature and
//! `--print-settings` names the allocator when it is not the system's.

#[cfg(all(feature = "mimalloc", feature = "jemalloc"))]
compile_error!("features mimalloc and jemalloc exclude each other");

#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[cfg(feature = "jemalloc")]
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// The allocator's name; None: the system allocator.
pub const NAME: Option<&str> = if cfg!(feature = "mimalloc") {
    Some("mimalloc")
} else if cfg!(feature = "jemalloc") {
    Some("jemalloc")
} else {
    None
};
