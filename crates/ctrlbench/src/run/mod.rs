//! Per-run machinery: namespaces and identities now; controller processes,
//! loader, watch and sampler arrive with the runner.

pub mod identity;
