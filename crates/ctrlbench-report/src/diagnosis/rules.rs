//! The diagnosis's rules, one entry each: name, meaning, evidence,
//! threshold, fixes, source, what suppresses it, and its detection over a
//! group's `Evidence`. Everything else (the report's words, verdicts.json,
//! docs/diagnosis.md) is generated from this table; each rule is defined
//! once, in `writes.rs` (what a controller writes) or `reads.rs` (what it
//! reads and how it paces itself).

use super::{Rule, reads, writes};

/// The rules, in the order "What to fix" lists their findings.
pub const RULES: &[Rule] = &[
    writes::STATUS_DROPPED,
    writes::SELF_TRIGGERED_LOOP,
    writes::STATUS_EVERY_RECONCILE,
    writes::NOOP_WRITES,
    writes::NO_OBSERVED_GENERATION,
    reads::UNCACHED_READS,
    reads::LIST_PER_RECONCILE,
    reads::WATCH_PER_RECONCILE,
    reads::REQUEUE_LOOP,
    writes::REPLICAS_WITHOUT_ELECTION,
    writes::CONFLICTS,
    writes::BLIND_CREATES,
    writes::EVENT_SPAM,
    reads::CLUSTER_WIDE_CACHE,
    reads::MANAGED_FIELDS_IN_CACHE,
    reads::CLIENT_THROTTLING,
    reads::TOO_FEW_WORKERS,
];
