//! What is wrong with a controller, named from what it did: one table of
//! rules, each defined once (its name, what it means, the evidence and
//! threshold it judges, the fix in each framework, its source), and that
//! table drives the detection, the report's "What to fix", verdicts.json
//! and docs/diagnosis.md alike. Most evidence is counts: the run's API
//! footprint (the apiserver's audit log names every request's caller) and
//! the controller's own counters, per object and per reconcile, so one
//! repeat decides a rule. A rule on measures (time, memory) says so in its
//! `basis`, and its findings are suspects. A rule whose signature another
//! rule explains (the conflicts of a loop) is suppressed by it, so each
//! finding names a cause, not its echoes.

use crate::figures::{Group, RunFigures};
use crate::metrics::Metric;

/// The controller frameworks a fix is written for (a variant's
/// `framework` key, in the same words).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Framework {
    ControllerRuntime,
    ClientGo,
    KubeRs,
    Kopf,
}

impl Framework {
    pub const ALL: [Framework; 4] = [
        Framework::ControllerRuntime,
        Framework::ClientGo,
        Framework::KubeRs,
        Framework::Kopf,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Framework::ControllerRuntime => "controller-runtime",
            Framework::ClientGo => "client-go",
            Framework::KubeRs => "kube-rs",
            Framework::Kopf => "kopf",
        }
    }

    /// The framework a run's implementation names, or a user's controller's
    /// stated framework (its variant's `framework`); None where neither says.
    pub fn of(implementation: &str) -> Option<Framework> {
        if let Some(f) = Framework::ALL
            .into_iter()
            .find(|f| f.name() == implementation)
        {
            return Some(f);
        }
        if implementation == "rust" {
            Some(Framework::KubeRs)
        } else if implementation.starts_with("go") {
            Some(Framework::ControllerRuntime)
        } else {
            None
        }
    }
}

/// The fix, per framework.
pub struct Fixes {
    pub controller_runtime: &'static str,
    pub client_go: &'static str,
    pub kube_rs: &'static str,
    pub kopf: &'static str,
}

impl Fixes {
    pub fn of(&self, f: Framework) -> &'static str {
        match f {
            Framework::ControllerRuntime => self.controller_runtime,
            Framework::ClientGo => self.client_go,
            Framework::KubeRs => self.kube_rs,
            Framework::Kopf => self.kopf,
        }
    }
}

/// A line of an operator's source that a rule's anti-pattern likely sits
/// on: a regular expression `find` matched per line; with `unless`, only
/// in a file where `unless` matches nowhere (a `For(` in a file with no
/// generation predicate). The harness matches them (`run::likely`); here
/// they are data.
pub struct Pattern {
    pub find: &'static str,
    pub unless: &'static str,
}

/// A pattern matched on its own.
pub const fn find(find: &'static str) -> Pattern {
    Pattern { find, unless: "" }
}

/// A pattern matched only in files where `unless` matches nowhere.
pub const fn unless(find: &'static str, unless: &'static str) -> Pattern {
    Pattern { find, unless }
}

/// Where in the operator's own code a rule's anti-pattern likely is, per
/// framework: pointers for the reader, never the evidence.
pub struct Likely {
    pub controller_runtime: &'static [Pattern],
    pub client_go: &'static [Pattern],
    pub kube_rs: &'static [Pattern],
    pub kopf: &'static [Pattern],
}

impl Likely {
    pub fn of(&self, f: Framework) -> &'static [Pattern] {
        match f {
            Framework::ControllerRuntime => self.controller_runtime,
            Framework::ClientGo => self.client_go,
            Framework::KubeRs => self.kube_rs,
            Framework::Kopf => self.kopf,
        }
    }
}

impl Framework {
    /// The frameworks a source file of this extension may use: Go files
    /// controller-runtime's and client-go's, Rust kube-rs's, Python kopf's.
    pub fn of_extension(ext: &str) -> &'static [Framework] {
        match ext {
            "go" => &[Framework::ControllerRuntime, Framework::ClientGo],
            "rs" => &[Framework::KubeRs],
            "py" => &[Framework::Kopf],
            _ => &[],
        }
    }
}

/// What a rule's finding rests on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Basis {
    /// Counts (requests, writes, reconciles): one repeat decides it.
    Counts,
    /// Measures that vary from run to run (time, memory): the finding is
    /// suspected, and names the figures it rests on.
    Measured,
}

impl Basis {
    /// Its name in verdicts.json.
    pub fn name(self) -> &'static str {
        match self {
            Basis::Counts => "counts",
            Basis::Measured => "measured",
        }
    }

    /// How the report and docs/diagnosis.md say it.
    pub fn words(self) -> &'static str {
        match self {
            Basis::Counts => "counts, so one repeat decides it",
            Basis::Measured => {
                "measures that vary from run to run (time, memory): a finding is suspected, not decided"
            }
        }
    }
}

/// One rule of the table.
pub struct Rule {
    /// A stable identifier (verdicts.json, docs anchors).
    pub id: &'static str,
    pub name: &'static str,
    /// What the anti-pattern is, in a sentence.
    pub means: &'static str,
    /// What the rule reads, in words.
    pub evidence: &'static str,
    /// When it fires, in words (the code below is the same threshold).
    pub threshold: &'static str,
    /// Whether a finding is decided (counts) or suspected (measures).
    pub basis: Basis,
    pub fix: Fixes,
    pub source: &'static str,
    /// Where in the operator's source to look (the report's "likely:" lines).
    pub likely: Likely,
    /// Rules whose finding explains this one's signature.
    pub suppressed_by: &'static [&'static str],
    /// This group's evidence and what it costs, if the rule fires.
    pub detect: fn(&Evidence) -> Option<(String, String)>,
}

/// What a group's runs show, summed over its runs (counts add up, so the
/// per-object figures are totals over total objects).
#[derive(Clone, Debug, Default)]
pub struct Evidence {
    pub runs: usize,
    /// Objects created, over the runs.
    pub objects: f64,
    /// Objects first Ready, over the runs.
    pub ready: f64,
    /// Every run had an audit log (its footprint is known).
    pub footprint: bool,
    pub requests: f64,
    pub gets: f64,
    pub extra_lists: f64,
    pub watches: f64,
    pub object_writes: f64,
    pub status_writes: f64,
    pub conflicts: f64,
    pub already_existed: f64,
    pub events: f64,
    pub cluster_wide: f64,
    pub cluster_targets: Vec<String>,
    /// Accepted writes of the workload's objects that changed nothing, over
    /// the runs (None: some run's watch did not count its changes).
    pub noop_writes: Option<f64>,
    /// The median share of objects first Ready whose status named no
    /// generation (None: no run's status could say it).
    pub generation_missing: Option<f64>,
    /// Medians over the runs: the mean wait of a key in the work queue, the
    /// mean reconcile, and the controller's CPU over the time to converge
    /// (cores busy).
    pub queue_wait: Option<f64>,
    pub reconcile_mean: Option<f64>,
    pub cpu_share: Option<f64>,
    /// The median apiserver CPU over the time to converge (cores busy;
    /// the whole apiserver's, every caller's).
    pub apiserver_share: Option<f64>,
    /// Reconciles over the runs (None: some run did not count them).
    pub reconciles: Option<f64>,
    pub requeues: Option<f64>,
    pub replicas: usize,
    /// Some(false): the settings say the replicas elect no leader.
    pub leader_election: Option<bool>,
    /// The median share of a reconcile spent in the client's rate limiter.
    pub throttle_share: Option<f64>,
    /// The workload's kind, for the report's words.
    pub kind: String,
    /// `[workload] decoys` of the runs (0: none).
    pub decoys: u64,
    /// What the cluster-wide lists and watches read that the decoys are
    /// made of (the workload's kind, Secrets, ConfigMaps).
    pub decoy_targets: Vec<String>,
    /// The runs' median peak RSS, bytes.
    pub peak_rss: Option<f64>,
    /// The runs shared the cluster with other variants.
    pub concurrent: bool,
    /// The counterpart preset's variant beside it and its median peak RSS
    /// (set by `diagnose`, which sees every group).
    pub counterpart_rss: Option<(String, f64)>,
    /// Medians over the runs that sampled them: an object's JSON and its
    /// managedFields' as the apiserver sent them (summary.json's
    /// object_sample), in bytes.
    pub object_bytes: Option<f64>,
    pub managed_fields_bytes: Option<f64>,
    /// The median over the runs of the controller's RSS growth (peak less
    /// first scrape) per object, in bytes.
    pub rss_growth_per_object: Option<f64>,
}

impl Evidence {
    pub fn of(g: &Group) -> Evidence {
        let runs: Vec<&RunFigures> = g.runs.iter().collect();
        let mut e = Evidence {
            runs: runs.len(),
            footprint: !runs.is_empty() && runs.iter().all(|r| r.footprint.is_some()),
            kind: g.kind().unwrap_or("Widget").to_string(),
            replicas: runs.iter().map(|r| r.replicas).max().unwrap_or(1),
            leader_election: runs
                .iter()
                .find_map(|r| r.settings.as_ref())
                .map(|s| s.leader_election.is_some()),
            decoys: runs.iter().map(|r| r.decoys).max().unwrap_or(0),
            peak_rss: median_rss(&runs),
            concurrent: runs.iter().any(|r| r.concurrent),
            ..Evidence::default()
        };
        let mut reconciles = Some(0.0);
        let mut requeues = Some(0.0);
        let mut noop = Some(0.0);
        let mut shares = Vec::new();
        let mut missing = Vec::new();
        let (mut waits, mut means, mut cores) = (Vec::new(), Vec::new(), Vec::new());
        let mut apiserver = Vec::new();
        let (mut whole, mut fields, mut grown) = (Vec::new(), Vec::new(), Vec::new());
        for r in &runs {
            if let Some(o) = &r.object_sample {
                whole.push(o.bytes as f64);
                fields.push(o.managed_fields_bytes as f64);
            }
            if let Some(g) = r.rss_growth
                && r.scale > 0
            {
                grown.push(g / r.scale as f64);
            }
            e.objects += r.scale as f64;
            e.ready += r.ready as f64;
            reconciles = reconciles
                .zip(r.get(Metric::ReconcilesPerObject))
                .map(|(s, v)| s + v * r.scale as f64);
            requeues = requeues.zip(r.get(Metric::Requeues)).map(|(s, v)| s + v);
            missing.extend(r.get(Metric::GenerationMissingShare));
            waits.extend(r.get(Metric::QueueWait));
            means.extend(r.get(Metric::MeanLatency));
            if let (Some(cpu), Some(t)) = (r.get(Metric::Cpu), r.get(Metric::Convergence))
                && t > 0.0
            {
                cores.push(cpu / t);
            }
            if let (Some(cpu), Some(t)) = (r.get(Metric::ApiserverCpu), r.get(Metric::Convergence))
                && t > 0.0
            {
                apiserver.push(cpu / t);
            }
            noop = noop
                .zip(r.get(Metric::NoopWritesPerObject))
                .map(|(s, v)| s + v * r.scale as f64);
            if let (Some(t), Some(m)) = (r.attribution.throttle, r.attribution.mean)
                && m > 0.0
            {
                shares.push(t / m);
            }
            if let Some(f) = &r.footprint {
                e.requests += f.requests();
                e.gets += f.verb("get");
                e.extra_lists += f.extra_lists();
                e.watches += f.opened_watches(|_| true);
                e.object_writes += f.object_writes();
                e.status_writes += f.status_writes();
                e.conflicts += f.conflicts();
                e.already_existed += f.already_existed();
                e.events += f.events();
                let wide: Vec<String> = f
                    .cluster_wide_targets()
                    .into_iter()
                    .filter(|t| !cluster_scoped(t))
                    .collect();
                e.cluster_wide += f.count(|row| {
                    (row.verb == "list" || row.verb == "watch")
                        && !row.namespaced
                        && wide.contains(&row.target())
                });
                e.decoy_targets.extend(f.rows.iter().filter_map(|row| {
                    let decoy = row.workload
                        || (row.group.is_empty()
                            && (row.resource == "secrets" || row.resource == "configmaps"));
                    ((row.verb == "list" || row.verb == "watch") && !row.namespaced && decoy)
                        .then(|| row.target())
                }));
                e.cluster_targets.extend(wide);
            }
        }
        e.cluster_targets.sort();
        e.cluster_targets.dedup();
        e.decoy_targets.sort();
        e.decoy_targets.dedup();
        e.reconciles = reconciles.filter(|r| *r > 0.0);
        e.requeues = requeues;
        e.noop_writes = noop.filter(|_| e.footprint);
        e.generation_missing = median(missing);
        e.queue_wait = median(waits);
        e.reconcile_mean = median(means);
        e.cpu_share = median(cores);
        e.apiserver_share = median(apiserver);
        e.object_bytes = median(whole);
        e.managed_fields_bytes = median(fields);
        e.rss_growth_per_object = median(grown);
        shares.sort_by(f64::total_cmp);
        e.throttle_share = (!shares.is_empty()).then(|| shares[shares.len() / 2]);
        e
    }

    fn per_object(&self, v: f64) -> f64 {
        if self.objects > 0.0 {
            v / self.objects
        } else {
            0.0
        }
    }

    fn per_reconcile(&self, v: f64) -> Option<f64> {
        self.reconciles.map(|r| v / r)
    }

    fn reconciles_per_object(&self) -> Option<f64> {
        self.reconciles.map(|r| self.per_object(r))
    }
}

/// The median peak RSS of runs that measured it.
fn median_rss(runs: &[&RunFigures]) -> Option<f64> {
    let v: Vec<f64> = runs.iter().filter_map(|r| r.get(Metric::PeakRss)).collect();
    crate::quantile::median(&v)
}

/// The median peak RSS of `g`'s counterpart preset's variant, when one ran
/// beside it at its scale with like settings.
fn counterpart_rss(g: &Group, groups: &[Group]) -> Option<(String, f64)> {
    let (.., counterpart) = crate::counterparts::info(g)?;
    let h = crate::counterparts::counterpart_of(g, counterpart, groups)?;
    let runs: Vec<&RunFigures> = h.runs.iter().collect();
    Some((h.variant.clone(), median_rss(&runs)?))
}

/// Resources without a namespace: a list of them reads no other namespace.
fn cluster_scoped(target: &str) -> bool {
    const CLUSTER: [&str; 16] = [
        "nodes",
        "namespaces",
        "persistentvolumes",
        "apiextensions.k8s.io/customresourcedefinitions",
        "rbac.authorization.k8s.io/clusterroles",
        "rbac.authorization.k8s.io/clusterrolebindings",
        "storage.k8s.io/storageclasses",
        "storage.k8s.io/csidrivers",
        "storage.k8s.io/csinodes",
        "storage.k8s.io/volumeattachments",
        "scheduling.k8s.io/priorityclasses",
        "node.k8s.io/runtimeclasses",
        "networking.k8s.io/ingressclasses",
        "admissionregistration.k8s.io/validatingwebhookconfigurations",
        "admissionregistration.k8s.io/mutatingwebhookconfigurations",
        "apiregistration.k8s.io/apiservices",
    ];
    CLUSTER.contains(&target)
}

/// A count as the findings print it: whole numbers as they are, else two
/// significant digits at least.
pub(super) fn n2(v: f64) -> String {
    if v.fract() == 0.0 || v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

pub use docs::markdown;
pub use rules::RULES;

mod docs;
mod reads;
mod rules;
mod writes;

/// One rule that fired for one group.
#[derive(Clone)]
pub struct Finding {
    pub rule: &'static Rule,
    pub scale: u64,
    pub variant: String,
    /// This run's evidence, in words with its numbers.
    pub evidence: String,
    pub cost: String,
    /// The framework whose fix applies, when known.
    pub framework: Option<Framework>,
}

/// The middle value (the upper of two), None for none.
fn median(mut v: Vec<f64>) -> Option<f64> {
    v.sort_by(f64::total_cmp);
    (!v.is_empty()).then(|| v[v.len() / 2])
}

/// What each group shows: every rule that fires, less those a firing rule
/// suppresses.
pub fn diagnose(groups: &[Group]) -> Vec<Finding> {
    let mut out = Vec::new();
    for g in groups {
        let mut e = Evidence::of(g);
        if e.decoys > 0 {
            e.counterpart_rss = counterpart_rss(g, groups);
        }
        let fired: Vec<(&'static Rule, (String, String))> = RULES
            .iter()
            .filter_map(|r| (r.detect)(&e).map(|x| (r, x)))
            .collect();
        let framework = g
            .runs
            .iter()
            .find_map(|r| r.framework.as_deref().or(r.implementation.as_deref()))
            .and_then(Framework::of);
        for (rule, (evidence, cost)) in &fired {
            if rule
                .suppressed_by
                .iter()
                .any(|s| fired.iter().any(|(f, _)| f.id == *s))
            {
                continue;
            }
            out.push(Finding {
                rule,
                scale: g.scale,
                variant: g.variant.clone(),
                evidence: evidence.clone(),
                cost: cost.clone(),
                framework,
            });
        }
    }
    out
}

/// The most likely lines shown for one finding.
pub const LIKELY_SHOWN: usize = 3;

/// The likely lines of `rows` (likely.csv) for finding `f`, at most
/// LIKELY_SHOWN; none for our reference controllers (rust, go@…), whose
/// source the experiment does not name.
pub fn likely_for<'a>(
    rows: &'a [ctrlbench_record::likely::LikelyRow],
    groups: &[Group],
    f: &Finding,
) -> Vec<&'a ctrlbench_record::likely::LikelyRow> {
    let ours = groups.iter().filter(|g| g.variant == f.variant).any(|g| {
        g.runs.iter().any(|r| {
            r.implementation
                .as_deref()
                .is_some_and(|i| i == "rust" || i.starts_with("go"))
        })
    });
    if ours {
        return Vec::new();
    }
    rows.iter()
        .filter(|l| l.rule == f.rule.id)
        .take(LIKELY_SHOWN)
        .collect()
}

/// Whether a group's runs carry what the footprint rules read.
pub fn checked(g: &Group) -> bool {
    Evidence::of(g).footprint
}

#[cfg(test)]
mod tests;
