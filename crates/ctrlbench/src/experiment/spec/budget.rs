//! `[budget]`: limits on figures of every variant — API requests, writes,
//! conflicts, GETs, LISTs and Events per object, peak RSS per object,
//! time-to-Ready p99 — each to be stayed at or below. Every key is one
//! entry of `budget_keys!`: its doc comment (its row in docs/experiments.md,
//! from [`markdown`]), its name, the figure it reads and whether that
//! figure comes from the audit log's footprint. The serde type, the checks,
//! the manifest's record and `ctrlbench budget`'s table all come from it.

use ctrlbench_record::manifest::Budget;
use ctrlbench_report::budget::Figure;
use ctrlbench_report::metrics::Metric;
use serde::{Deserialize, Serialize};
use toml::Spanned;

use super::errors::{Source, SpecError};

/// One `[budget]` key.
pub struct Key {
    pub name: &'static str,
    pub doc: &'static str,
    pub figure: Figure,
    /// Measured from footprint.csv, which only the local plane's audit log
    /// gives.
    pub footprint: bool,
}

macro_rules! budget_keys {
    ($($(#[doc = $doc:literal])+ $name:ident => $figure:expr, footprint = $fp:literal;)*) => {
        /// `[budget]` as written: each limit with its place in the file.
        #[derive(Debug, Clone, Default, Deserialize, Serialize)]
        #[serde(deny_unknown_fields)]
        pub struct BudgetSpec {
            $($(#[doc = $doc])+ pub $name: Option<Spanned<f64>>,)*
        }

        /// Every key, in the table's order.
        pub const KEYS: &[Key] = &[$(Key {
            name: stringify!($name),
            doc: concat!($($doc, "\n"),+),
            figure: $figure,
            footprint: $fp,
        }),*];

        impl BudgetSpec {
            /// The keys given, in the table's order.
            fn given(&self) -> Vec<(&'static Key, &Spanned<f64>)> {
                let all = [$(&self.$name),*];
                KEYS.iter()
                    .zip(all)
                    .filter_map(|(k, v)| Some((k, v.as_ref()?)))
                    .collect()
            }
        }
    };
}

budget_keys! {
    /// API requests of any kind the controller sent, per object.
    requests_per_object => Figure::Metric(Metric::RequestsPerObject), footprint = true;
    /// Writes the apiserver accepted from the controller (any resource), per object.
    writes_per_object => Figure::Metric(Metric::ApiWritesPerObject), footprint = true;
    /// Updates and patches refused with 409 Conflict, per object.
    conflicts_per_object => Figure::Metric(Metric::ConflictsPerObject), footprint = true;
    /// GETs per object.
    gets_per_object => Figure::Metric(Metric::GetsPerObject), footprint = true;
    /// LISTs beyond the one each watch starts with, per object.
    lists_per_object => Figure::Metric(Metric::ListsPerObject), footprint = true;
    /// Events created, per object.
    events_per_object => Figure::Metric(Metric::EventsPerObject), footprint = true;
    /// The controller's peak RSS ÷ N, in KiB.
    rss_per_object_kib => Figure::RssPerObjectKib, footprint = false;
    /// Time-to-Ready p99, in seconds.
    ready_p99_s => Figure::Metric(Metric::TtrP99), footprint = false;
}

/// Every limit: a number at or above 0 (a wrong type or an unknown key
/// serde refused already); a footprint figure only where the audit log
/// gives one. `audit` is None on the local plane with its audit log, else
/// why there is none.
pub fn check(
    src: &Source,
    spec: Option<&BudgetSpec>,
    audit: Option<&str>,
) -> Result<Vec<Budget>, SpecError> {
    let Some(spec) = spec else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for (k, v) in spec.given() {
        let limit = *v.get_ref();
        if !(limit.is_finite() && limit >= 0.0) {
            return Err(src.at(
                k.name,
                v.span(),
                format!("must be a limit at or above 0, got {limit}"),
            ));
        }
        if k.footprint
            && let Some(why) = audit
        {
            return Err(src.at(
                k.name,
                v.span(),
                format!(
                    "{} comes from the API footprint, which needs the local plane's audit log ({why})",
                    k.figure.label()
                ),
            ));
        }
        out.push(Budget {
            key: k.name.to_string(),
            figure: k.figure.label().to_string(),
            limit,
        });
    }
    Ok(out)
}

/// The rows of the `[budget]` table in docs/experiments.md.
pub fn markdown() -> String {
    let mut s = String::from("| key | figure (at or below the limit) | meaning |\n|---|---|---|\n");
    for k in KEYS {
        let doc: Vec<&str> = k
            .doc
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect();
        s.push_str(&format!(
            "| `{}` | {}{} | {} |\n",
            k.name,
            k.figure.label(),
            if k.footprint { " (footprint)" } else { "" },
            doc.join(" ").replace('|', "\\|")
        ));
    }
    s
}
