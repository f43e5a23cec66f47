//! The report's title and where its numbers come from: the results
//! directory, when it ran, the cluster and machine, where the processes
//! were placed on its CPUs, the schedule, window and repeats (and why the
//! runner stopped repeating), the tool's version, and the workload when not
//! the built-in one.

use ctrlbench_record::manifest::{Manifest, Placement, Repeats};

use super::Section;
use crate::Block;
use crate::context::ReportCtx;

/// "3 repeats (auto: all questions decided)"; "2 repeat(s)" counted from
/// the run directories when the manifest does not say.
fn repeats(r: Option<&Repeats>, counted: u32) -> String {
    let Some(r) = r else {
        return format!("{counted} repeat(s)");
    };
    let n = format!("{} repeat{}", r.done, if r.done == 1 { "" } else { "s" });
    let why = match r.stopped.as_str() {
        "all decided" => "all questions decided".to_string(),
        "max_repeats" => format!(
            "stopped at the maximum, {}, with questions undecided",
            r.max
        ),
        "interrupted" => "interrupted".to_string(),
        "fixed" | "" => String::new(),
        other => other.to_string(),
    };
    match (r.mode.as_str(), why.is_empty()) {
        ("auto", false) => format!("{n} (auto, {}–{}: {why})", r.min, r.max),
        ("auto", true) => format!("{n} (auto, {}–{})", r.min, r.max),
        (mode, true) => format!("{n} ({mode})"),
        (mode, false) => format!("{n} ({mode}: {why})"),
    }
}

/// What cluster the runs used, with the local plane's extra processes and
/// where its binaries came from.
fn plane_line(m: &Manifest) -> String {
    if !m.local_plane {
        return "existing cluster".into();
    }
    format!("{}{}", plane_kind(m), binaries_line(m))
}

/// "; its binaries downloaded and verified" when they all came one way,
/// else each by name; empty in results older than the record.
fn binaries_line(m: &Manifest) -> String {
    let words = |how: &str| match how {
        "downloaded" => "downloaded and verified".to_string(),
        "built" => "built with Go".to_string(),
        "cached" => "from the cache".to_string(),
        "environment" => "named by the environment".to_string(),
        other => other.to_string(),
    };
    let Some(first) = m.plane_binaries.first() else {
        return String::new();
    };
    if m.plane_binaries.iter().all(|b| b.how == first.how) {
        return format!("; its binaries {}", words(&first.how));
    }
    let each: Vec<String> = m
        .plane_binaries
        .iter()
        .map(|b| format!("{} {}", b.name, words(&b.how)))
        .collect();
    format!("; {}", each.join(", "))
}

fn plane_kind(m: &Manifest) -> String {
    if m.nodes > 0 {
        return format!(
            "local control plane with {} fake node(s) of {} pods each (KWOK), kube-scheduler and \
             kube-controller-manager (workload, namespace and garbage-collector controllers){}{}",
            m.nodes,
            m.node_pods,
            client_limits(m),
            if m.scheduler_without_default_spread {
                "; kube-scheduler without PodTopologySpread's default constraints \
                 (scheduler_default_spread = false)"
            } else {
                ""
            }
        );
    }
    if m.controller_manager {
        return format!(
            "local control plane with kube-controller-manager (namespace and garbage-collector controllers){}",
            client_limits(m)
        );
    }
    "local control plane".into()
}

/// "; client limits: kube-controller-manager --kube-api-qps=…", the flags
/// the plane's components ran with (recorded since they became keys).
fn client_limits(m: &Manifest) -> String {
    let parts: Vec<String> = [
        ("kube-controller-manager", &m.controller_manager_args),
        ("kube-scheduler", &m.scheduler_args),
    ]
    .iter()
    .filter(|(_, a)| !a.is_empty())
    .map(|(who, a)| format!("{who} {}", a.join(" ")))
    .collect();
    if parts.is_empty() {
        String::new()
    } else {
        format!("; client limits: {}", parts.join(", "))
    }
}

/// "none (2 cores)", or "plane 0, controller 1, harness unpinned (note)".
fn placement(p: Option<&Placement>, m: &Manifest) -> String {
    let Some(p) = p else {
        return format!("none ({} cores)", m.machine.cores);
    };
    let cpus = |v: &Option<String>| v.clone().unwrap_or("unpinned".into());
    let mut s = format!(
        "plane {}, controller {}, harness {}",
        cpus(&p.plane),
        cpus(&p.controller),
        cpus(&p.harness)
    );
    if !p.note.is_empty() {
        s.push_str(&format!(" ({})", p.note));
    }
    if !p.cpu_limits.is_empty() {
        let limits: Vec<String> = p
            .cpu_limits
            .iter()
            .map(|(v, m)| format!("{v} {m}m"))
            .collect();
        s.push_str(&format!("; CPU quota (cpu_limit): {}", limits.join(", ")));
    }
    s
}

/// The report's first line: how many questions were decided, and in how
/// long (the experiment's wall time, start to finish, from the manifest).
fn decided_line(ctx: &ReportCtx, m: &Manifest) -> String {
    use ctrlbench_record::time::parse_time;
    let decided = ctx.answers.iter().filter(|a| a.verdict.decided()).count();
    let took = match (
        parse_time(&m.started_at),
        m.finished_at.as_deref().and_then(parse_time),
    ) {
        (Some(a), Some(b)) if b >= a => {
            let s = (b - a).round() as u64;
            format!(" in {} min {:02} s", s / 60, s % 60)
        }
        _ => String::new(),
    };
    format!(
        "{decided} of {} questions decided{took} (see Questions, answered).",
        ctx.answers.len()
    )
}

pub struct Header;

impl Section for Header {
    fn render(&self, ctx: &ReportCtx, out: &mut Vec<Block>) {
        let r = &ctx.results;
        let m = &r.manifest;
        // Missing (empty) manifest fields show as "?".
        let s = |v: &str| {
            if v.is_empty() {
                "?".to_string()
            } else {
                v.to_string()
            }
        };
        let first = r.runs.iter().find_map(|x| x.summary.as_ref());
        let schedule = first.map(|s| s.schedule.to_string()).unwrap_or("?".into());
        let window = first.map(|s| s.window_s);
        let repeats = repeats(
            m.repeats.as_ref(),
            r.runs.iter().map(|x| x.repeat).max().unwrap_or(0),
        );
        let mut background = match first.map_or(0, |s| s.background_objects) {
            0 => String::new(),
            k => format!(
                " {k} background widgets in a namespace of their own, created before any controller started."
            ),
        };
        if let Some(k) = first.map(|s| s.decoys).filter(|k| *k > 0) {
            background.push_str(&format!(
                " {k} decoys (as many objects of the workload's kind, Secrets and ConfigMaps of 1 KiB) in a namespace no controller was asked to reconcile, created before any controller started."
            ));
        }
        if let Some(k) = first.map(|s| s.field_managers).filter(|k| *k > 0) {
            background.push_str(&format!(
                " Each object created carrying {k} appliers' managedFields entries besides the loader's (field_managers)."
            ));
        }
        if let Some(b) = first.and_then(|s| s.object_bytes) {
            background.push_str(&format!(
                " Objects of {b} bytes ({:.1} KiB) each as created.",
                b as f64 / 1024.0
            ));
        }
        let name = r
            .dir
            .path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        out.push(Block::Heading(
            1,
            format!("ctrlbench report: {}", r.experiment()),
        ));
        if !ctx.answers.is_empty() {
            out.push(Block::Para(decided_line(ctx, m)));
        }
        out.push(Block::Para(format!(
            "Results {name}, started {} and finished {}. Kubernetes {}, etcd {}, {}. \
             Machine: {} cores, {:.1} GiB; CPU placement: {}. Schedule {schedule}, window {}, \
             {repeats}, {} run(s). ctrlbench {} (git {}).{background}",
            s(&m.started_at),
            m.finished_at.as_deref().unwrap_or("never"),
            s(&m.kubernetes_version),
            s(&m.etcd_version),
            plane_line(m),
            m.machine.cores,
            m.machine.memory_bytes as f64 / f64::from(1u32 << 30),
            placement(m.placement.as_ref(), m),
            window.map(|w| format!("{w} s")).unwrap_or("?".into()),
            r.runs.len(),
            s(&m.tool_version),
            m.git_revision
                .as_deref()
                .map(|g| &g[..g.len().min(12)])
                .unwrap_or("unknown"),
        )));
        if let Some(w) = first.and_then(|s| s.workload.as_deref()) {
            out.push(Block::Para(format!(
                "Workload: {w}. \"Ready\" below means this rule held, as our own watch saw it."
            )));
        }
        if let Some(line) = grow_line(m) {
            out.push(Block::Para(line));
        }
    }
}

/// `run --grow`'s plan and its re-estimate after round 1, as the runner
/// recorded them (manifest.json's `grow`); None without `--grow`.
fn grow_line(m: &Manifest) -> Option<String> {
    (!m.grow.is_empty()).then(|| format!("Scales picked by `--grow`: {}.", m.grow.join("; then ")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ctrlbench_record::manifest::PlaneBinary;

    #[test]
    fn repeats_and_placement_in_words() {
        let r = |mode: &str, stopped: &str| Repeats {
            mode: mode.into(),
            done: 3,
            min: 2,
            max: 5,
            stopped: stopped.into(),
        };
        assert_eq!(repeats(None, 2), "2 repeat(s)");
        let mut b = Manifest {
            local_plane: true,
            ..Manifest::default()
        };
        assert_eq!(plane_line(&b), "local control plane");
        let bin = |name: &str, how: &str| PlaneBinary {
            name: name.into(),
            how: how.into(),
            ..PlaneBinary::default()
        };
        b.plane_binaries = vec![
            bin("etcd", "downloaded"),
            bin("kube-apiserver", "downloaded"),
        ];
        assert_eq!(
            plane_line(&b),
            "local control plane; its binaries downloaded and verified"
        );
        b.plane_binaries[1].how = "built".into();
        assert_eq!(
            plane_line(&b),
            "local control plane; etcd downloaded and verified, kube-apiserver built with Go"
        );
        let mut g = Manifest::default();
        assert_eq!(grow_line(&g), None);
        g.grow = vec!["planned N = 100, 1000".into(), "grow: re-picked".into()];
        assert_eq!(
            grow_line(&g).as_deref(),
            Some("Scales picked by `--grow`: planned N = 100, 1000; then grow: re-picked.")
        );
        assert_eq!(
            repeats(Some(&r("auto", "all decided")), 0),
            "3 repeats (auto, 2–5: all questions decided)"
        );
        assert_eq!(
            repeats(Some(&r("auto", "max_repeats")), 0),
            "3 repeats (auto, 2–5: stopped at the maximum, 5, with questions undecided)"
        );
        assert_eq!(repeats(Some(&r("fixed", "fixed")), 0), "3 repeats (fixed)");
        let mut m = Manifest::default();
        m.machine.cores = 2;
        assert_eq!(placement(None, &m), "none (2 cores)");
        let p = Placement {
            plane: Some("0".into()),
            controller: Some("1".into()),
            harness: None,
            note: "shared with the loader".into(),
            cpu_limits: Default::default(),
        };
        assert_eq!(
            placement(Some(&p), &m),
            "plane 0, controller 1, harness unpinned (shared with the loader)"
        );
        let mut q = p.clone();
        q.cpu_limits.insert("rust-lim".into(), 500);
        assert_eq!(
            placement(Some(&q), &m),
            "plane 0, controller 1, harness unpinned (shared with the loader); CPU quota (cpu_limit): rust-lim 500m"
        );
    }
}
