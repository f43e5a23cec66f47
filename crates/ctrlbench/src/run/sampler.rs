//! The sampler: every interval it scrapes each controller, the apiserver and
//! etcd, and appends one flushed row per target with the real timestamp. A
//! failed scrape is written as such (scrape_ok=0), never as zeros.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::Result;

use crate::samples::csv::{self, ControllerRow, Table};
use crate::samples::layout::now_rfc3339;
use crate::samples::prom::Page;

/// One controller being sampled.
pub struct ControllerTarget {
    pub variant: String,
    pub addr: String,
    table: Table,
    pub baseline: Option<ControllerRow>,
    pub last: Option<ControllerRow>,
    pub ok: u64,
    pub failed: u64,
    /// When the reconcile count last changed.
    pub last_change: Instant,
    /// (time, reconciles) of the previous successful scrape, for rates.
    pub prev: Option<(Instant, f64)>,
    pub rate: f64,
}

/// Samples one group of runs (one variant, or all at once).
pub struct Sampler {
    http: reqwest::Client,
    api: Option<kube::Client>,
    etcd_url: Option<String>,
    pub controllers: Vec<ControllerTarget>,
    apiserver_tables: Vec<Table>,
    etcd_tables: Vec<Table>,
    pub apiserver_failed: u64,
    pub etcd_failed: u64,
}

impl Sampler {
    /// `dirs`: the run directory of each variant (apiserver.csv and etcd.csv go in each).
    pub fn new(
        api: Option<kube::Client>,
        etcd_url: Option<String>,
        targets: Vec<(String, String, PathBuf)>,
    ) -> Result<Sampler> {
        let mut controllers = Vec::new();
        let mut apiserver_tables = Vec::new();
        let mut etcd_tables = Vec::new();
        for (variant, addr, dir) in targets {
            let table = csv::controller_table(&dir.join(format!("metrics-{variant}.csv")))?;
            if api.is_some() {
                apiserver_tables.push(csv::apiserver_table(&dir.join("apiserver.csv"))?);
            }
            if etcd_url.is_some() {
                etcd_tables.push(csv::etcd_table(&dir.join("etcd.csv"))?);
            }
            controllers.push(ControllerTarget {
                variant,
                addr,
                table,
                baseline: None,
                last: None,
                ok: 0,
                failed: 0,
                last_change: Instant::now(),
                prev: None,
                rate: 0.0,
            });
        }
        Ok(Sampler {
            http: reqwest::Client::builder()
                .timeout(Duration::from_secs(5))
                .build()?,
            api,
            etcd_url,
            controllers,
            apiserver_tables,
            etcd_tables,
            apiserver_failed: 0,
            etcd_failed: 0,
        })
    }

    async fn get(&self, url: String, keep: fn(&str) -> bool) -> Option<Page> {
        let text = self
            .http
            .get(url)
            .send()
            .await
            .ok()?
            .error_for_status()
            .ok()?
            .text()
            .await
            .ok()?;
        Page::parse_only(&text, keep).ok()
    }

    async fn apiserver_page(&self) -> Option<Page> {
        let client = self.api.as_ref()?;
        let req = http::Request::get("/metrics").body(Vec::new()).ok()?;
        let text = tokio::time::timeout(Duration::from_secs(5), client.request_text(req))
            .await
            .ok()?
            .ok()?;
        Page::parse_only(&text, csv::apiserver_keep).ok()
    }

    /// One scrape of every target, written as one row each.
    pub async fn scrape_once(&mut self) -> Result<()> {
        let ts = now_rfc3339();
        let now = Instant::now();
        let ctl = futures::future::join_all(
            self.controllers
                .iter()
                .map(|c| self.get(format!("http://{}/metrics", c.addr), |_| true)),
        );
        let etcd = async {
            match &self.etcd_url {
                Some(u) => self.get(u.clone(), csv::etcd_keep).await,
                None => None,
            }
        };
        let (pages, api, etcd) = tokio::join!(ctl, self.apiserver_page(), etcd);
        for (c, page) in self.controllers.iter_mut().zip(pages) {
            let row = csv::controller_row(&mut c.table, &ts, &c.variant, page.as_ref())?;
            match row {
                Some(r) => {
                    c.ok += 1;
                    if c.baseline.is_none() {
                        c.baseline = Some(r);
                    }
                    if c.last.is_none_or(|l| l.reconciles != r.reconciles) {
                        c.last_change = now;
                    }
                    if let Some((t, n)) = c.prev {
                        let dt = now.duration_since(t).as_secs_f64();
                        if dt > 0.0 {
                            c.rate = (r.reconciles - n) / dt;
                        }
                    }
                    c.prev = Some((now, r.reconciles));
                    c.last = Some(r);
                }
                None => c.failed += 1,
            }
        }
        if self.api.is_some() {
            if api.is_none() {
                self.apiserver_failed += 1;
            }
            for t in &mut self.apiserver_tables {
                csv::apiserver_row(t, &ts, api.as_ref())?;
            }
        }
        if self.etcd_url.is_some() {
            if etcd.is_none() {
                self.etcd_failed += 1;
            }
            for t in &mut self.etcd_tables {
                csv::etcd_row(t, &ts, etcd.as_ref())?;
            }
        }
        Ok(())
    }
}
