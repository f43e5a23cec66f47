//! "How the numbers are computed": the definitions behind every table, in
//! the reader's words, plus the notes that apply only to these results (the
//! concurrent schedule, a controller's CPU and memory read from /proc, an
//! audit log, pods, the plane's processes, repeats).

use ctrlbench_record::summary::Schedule;

use super::Section;
use crate::Block;
use crate::context::ReportCtx;
use crate::load::Results;
use crate::metrics::{controller_cpu, controller_peak_rss};

pub struct Method;

impl Section for Method {
    fn render(&self, ctx: &ReportCtx, out: &mut Vec<Block>) {
        out.push(Block::Heading(2, "How the numbers are computed".into()));
        out.push(Block::List(notes(&ctx.results)));
    }
}

fn notes(r: &Results) -> Vec<String> {
    let mut v = vec![
        "Time zero of every run is the load start, reconstructed as objects.csv's last \
         created_at minus summary.json's load.seconds (the loader's own clock)."
            .to_string(),
        "Convergence is the first moment Ready==N: the latest ready_at in objects.csv (our own \
         watch, not the controller's metrics), minus time zero. Time-to-Ready is ready_at − \
         created_at per object, over every created object (p50/p99 with linear interpolation); \
         an object never Ready is censored at the window end, and a percentile that falls on \
         one reads \"> window\"."
            .into(),
        "Counters (reconciles, retries, 409s, throttle wait, CPU, histogram buckets) are deltas \
         from the baseline row (the first with scrape_ok=1) to the last good row; failed scrapes \
         are skipped, never read as zeros."
            .into(),
        "Latency percentiles are interpolated from the histogram buckets as PromQL's \
         histogram_quantile does (linear within a bucket; a rank in the +Inf bucket gives the \
         highest finite bound)."
            .into(),
        "T50, T90 and T100 run from the first create (objects.csv) to the moment 50 %, 90 % and \
         100 % of N objects were Ready (the ⌈q·N⌉-th ready_at); — when that many never were."
            .into(),
        "Ready/s is N / convergence, or Ready / the observed window when not converged. \
         Controller writes/s is the controller's own client count of the writes it sent \
         (rest_writes_total: POST/PUT/PATCH/APPLY, any response), so it is per variant even \
         when variants share the apiserver, over its writing span: the last scrape before \
         its first write → the first scrape showing its final count. Rates in the plots use \
         the real gaps between scrapes."
            .into(),
        "Controller CPU and peak RSS come from the controller's metrics page: the delta of \
         process_cpu_seconds_total and the largest process_resident_memory_bytes sample."
            .into(),
        "Objects written (coverage) counts the objects that anyone but the loader ever wrote \
         (objects.csv first_write_at: the first change by another field manager, seen by our \
         own watch): the controller's status or annotation writes. — when objects.csv predates \
         the column."
            .into(),
    ];
    if let Some(note) = os_note(r) {
        v.push(note);
    }
    let concurrent = r
        .runs
        .iter()
        .filter_map(|x| x.summary.as_ref())
        .any(|s| s.schedule == Schedule::Concurrent);
    if concurrent {
        v.push(
            "Schedule concurrent: variants of a group shared the apiserver and etcd, so the \
             apiserver and etcd metrics cannot tell them apart: the server-side table has one \
             cluster-wide row per scale, and the API write time in the attribution is the \
             variant's own writes per reconcile × the cluster-wide mean update latency. \
             Controller writes/s, writes/reconcile and every controller-side figure are per \
             variant (each controller's own metrics)."
                .into(),
        );
    }
    if r.runs.iter().any(|x| x.audit.is_some()) {
        v.push(
            "Own updates and their p50/p99 come from audit.csv (the apiserver's audit log, kept \
         when the plane runs with audit_log on): the update and patch requests of this run's \
         namespace, whose caller is the variant's own ServiceAccount; latency is the event's \
         stageTimestamp − requestReceivedTimestamp (percentiles with linear interpolation). \
         Without an audit log there is no per-variant server-side figure."
                .into(),
        );
    }
    if r.runs.iter().any(|x| x.footprint.is_some()) {
        v.push(
            "The API footprint and What to fix come from footprint.csv: every request the run's \
             controller sent (its ServiceAccount in the run's namespace), from the apiserver's audit \
             log at Metadata level, counted by phase, verb, resource, subresource and code; a watch \
             when it starts, every other request when it completes. The log is on by default; its \
             cost, measured as an A/A at N=3000 with it on and off (experiments/lab/measure/aa-audit.toml, \
             8 interleaved repeats, 2026-12-06): Ready/s 0.97× [0.93–1.02], the apiserver's CPU \
             1.04× [1.00–1.09] and its peak RSS 1.01× [0.79–1.29], none decided; 2.2 KB of log per \
             object, read in 16 ms."
                .into(),
        );
    }
    if r.runs.iter().any(|x| !x.pods.is_empty()) {
        v.push(
            "Pod start comes from pods.csv (our own watch of the run's namespace, not Events): \
             per pod, scheduled_s, running_s and ready_s minus created_s (the watch's first \
             sighting; creationTimestamp has whole seconds only), p50/p90/p99 with linear \
             interpolation and the max; a stage that never came is censored, so a quantile that \
             reaches it reads \"> window\". Per owner named in objects.csv: the latest ready_s \
             of its pods minus the object's created_at, both on one clock through summary.json's \
             load_started_at."
                .into(),
        );
    }
    if r.runs.iter().any(|x| x.plane.is_some()) {
        v.push(
            "The plane's processes: CPU is the delta of cpu_seconds from the first to the last \
             good row and peak RSS the largest rss_bytes, of etcd.csv and apiserver.csv (from \
             their metrics pages) and of plane.csv (kube-controller-manager, kube-scheduler and \
             kwok, from /proc)."
                .into(),
        );
    }
    if r.runs.iter().any(|x| x.repeat > 1) {
        v.push(
            "With repeats, cells show median [min–max]; runs with problems (incomplete, failed \
             scrapes, missing files, a busy machine) are left out, of the medians and of the \
             repeat pairs, and listed under Warnings. The reconcile-time \
             breakdown is the median run's (runs ranked by mean reconcile; two middle runs \
             averaged), taken whole, so its parts add up to one run's total."
                .into(),
        );
    }
    v
}

/// Which variants' controller CPU and peak RSS were read from /proc, and
/// how; None when every figure came from a metrics page.
fn os_note(r: &Results) -> Option<String> {
    let from_os = |f: fn(&crate::load::Run) -> Option<(f64, bool)>| {
        let mut names: Vec<&str> = Vec::new();
        for run in &r.runs {
            if f(run).is_some_and(|(_, os)| os) && !names.contains(&run.variant.as_str()) {
                names.push(&run.variant);
            }
        }
        names
    };
    let (cpu, rss) = (from_os(controller_cpu), from_os(controller_peak_rss));
    if cpu.is_empty() && rss.is_empty() {
        return None;
    }
    let which = |what: &str, names: &[&str]| match names {
        [] => format!("{what} from the metrics page everywhere"),
        n => format!("{what} of {}", n.join(", ")),
    };
    Some(format!(
        "Where a controller that ctrlbench started had no such metrics (a command without a \
         metrics URL, a page without them), ctrlbench read them from /proc instead \
         (summary.json's controller_os): \
         CPU is utime + stime of the process and of its descendants, with the children they \
         reaped, from the measurement's start to the end of the window; peak RSS is the larger \
         of a process's VmHWM and the largest sampled sum of VmRSS over its process tree; both \
         summed over the replicas. Read from /proc here: {}; {}.",
        which("controller CPU", &cpu),
        which("peak RSS", &rss),
    ))
}

#[cfg(test)]
mod tests {
    use ctrlbench_record::summary::ControllerOs;

    use super::*;

    /// A figure read from /proc is the run's, and the note names whose; the
    /// other stays the metrics page's.
    #[test]
    fn the_note_names_the_variants_read_from_proc() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/results-mixed");
        let mut r = Results::load(&dir).unwrap();
        assert_eq!(os_note(&r), None);
        let run = r.runs.iter_mut().find(|x| x.variant == "go-good").unwrap();
        let page_rss = controller_peak_rss(run).unwrap();
        assert!(!page_rss.1);
        run.summary.as_mut().unwrap().controller_os = Some(ControllerOs {
            cpu_s: Some(2.5),
            peak_rss_bytes: None,
        });
        assert_eq!(controller_cpu(run), Some((2.5, true)));
        assert_eq!(controller_peak_rss(run), Some(page_rss));
        let note = os_note(&r).unwrap();
        assert!(
            note.ends_with(
                "Read from /proc here: controller CPU of go-good; peak RSS from the metrics \
                 page everywhere."
            ),
            "{note}"
        );
    }
}
