//! `cluster bench`: how long a plane takes to answer `/readyz`, with etcd
//! fsync on and off, over several start/stop cycles.

use std::time::{Duration, Instant};

use anyhow::Result;

use crate::options::{PlaneOptions, install_blocking};
use crate::plane::ControlPlane;
use crate::progress::Progress;

/// Seconds for one configuration.
pub struct BenchRow {
    pub fsync: bool,
    pub ready: Vec<f64>,
    pub crd: Vec<f64>,
    pub stop: Vec<f64>,
}

/// Starts and stops a plane `times` times per fsync setting.
pub async fn run(base: &PlaneOptions, times: usize) -> Result<Vec<BenchRow>> {
    install_blocking(&base.k8s_version, &base.downloads).await?;
    let progress = Progress::new(
        &["etcd fsync on".to_string(), "etcd fsync off".to_string()],
        times as u64,
        "cycles",
        Duration::ZERO,
        true,
    );
    let mut rows = Vec::new();
    for fsync in [true, false] {
        let mut row = BenchRow {
            fsync,
            ready: vec![],
            crd: vec![],
            stop: vec![],
        };
        for i in 0..times {
            let opts = PlaneOptions {
                etcd_fsync: fsync,
                ..base.clone()
            };
            let t0 = Instant::now();
            let plane = ControlPlane::start(&opts).await?;
            row.crd.push(t0.elapsed().as_secs_f64());
            row.ready.push(plane.ready_after.as_secs_f64());
            let t1 = Instant::now();
            tokio::task::spawn_blocking(move || plane.stop()).await?;
            row.stop.push(t1.elapsed().as_secs_f64());
            progress.set(
                usize::from(!fsync),
                i as u64 + 1,
                Some(format!(
                    "last: ready {:.2} s, CRD established {:.2} s, stopped in {:.2} s",
                    row.ready[i], row.crd[i], row.stop[i]
                )),
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        rows.push(row);
    }
    progress.finish();
    Ok(rows)
}

pub fn on_off(b: bool) -> &'static str {
    if b { "on" } else { "off" }
}

/// (median, min, max) of a non-empty sample.
pub fn stats(xs: &[f64]) -> (f64, f64, f64) {
    let mut v = xs.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    let median = if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    };
    (median, v[0], v[n - 1])
}

/// The table `cluster bench` prints.
pub fn render(rows: &[BenchRow]) -> String {
    let mut out = String::from(
        "etcd fsync | seconds to /readyz: median [min–max] | to CRD Established | stop\n",
    );
    for r in rows {
        let (m, lo, hi) = stats(&r.ready);
        let (cm, clo, chi) = stats(&r.crd);
        let (sm, slo, shi) = stats(&r.stop);
        out.push_str(&format!(
            "{:<10} | {m:.2} [{lo:.2}–{hi:.2}] | {cm:.2} [{clo:.2}–{chi:.2}] | {sm:.2} [{slo:.2}–{shi:.2}]\n",
            on_off(r.fsync)
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::stats;

    #[test]
    fn median_of_odd_and_even_samples() {
        assert_eq!(stats(&[3.0, 1.0, 2.0]), (2.0, 1.0, 3.0));
        assert_eq!(stats(&[4.0, 1.0, 2.0, 3.0]), (2.5, 1.0, 4.0));
    }
}
