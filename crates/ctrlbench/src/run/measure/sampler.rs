//! The sampler: every interval it scrapes each controller, every apiserver
//! and every etcd member (directly, never through the front), and appends
//! one flushed row per target with the real timestamp, columns as the record
//! crate's catalogues define them. One apiserver and one member write
//! apiserver.csv and etcd.csv; several write apiserver-<k>.csv and
//! etcd-<k>.csv (with the leader flag). A failed scrape is written as such
//! (scrape_ok=0), never as zeros.

use std::time::{Duration, Instant};

use anyhow::Result;
use ctrlbench_record::RunDir;
use ctrlbench_record::columns::{Catalogue, apiserver, controller, etcd};
use ctrlbench_record::prom::Page;
use ctrlbench_record::table::Table;
use ctrlbench_record::time::now_rfc3339;

use crate::run::Ctx;
use crate::run::member::Member;

/// The apiserver's page through the catalogue (None: the scrape failed).
pub async fn apiserver_values(client: &kube::Client) -> Option<Vec<Option<f64>>> {
    apiserver_values_as(client, None).await
}

/// `apiserver_values`, reading the requests for `kind` (group, plural) as
/// the catalogue's widget columns: a workload of another kind gets the same
/// server-side figures (the Widgets' own requests are then set apart).
async fn apiserver_values_as(
    client: &kube::Client,
    kind: Option<&(String, String)>,
) -> Option<Vec<Option<f64>>> {
    let req = http::Request::get("/metrics").body(Vec::new()).ok()?;
    let mut text = tokio::time::timeout(Duration::from_secs(5), client.request_text(req))
        .await
        .ok()?
        .ok()?;
    if let Some(k) = kind {
        text = as_widgets(&text, k);
    }
    let c = &apiserver::CATALOGUE;
    Some(c.values(&Page::parse_only(&text, c.keep).ok()?))
}

/// The apiserver's request lines for (group, plural) relabelled
/// `resource="widgets"`, and the Widgets' own `resource="widgets-builtin"`.
pub fn as_widgets(text: &str, (group, plural): &(String, String)) -> String {
    let (g, r) = (
        format!("group=\"{group}\""),
        format!("resource=\"{plural}\""),
    );
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        if !line.starts_with("apiserver_") {
            out.push_str(line);
        } else if line.contains(&g) && line.contains(&r) {
            out.push_str(&line.replacen(&r, "resource=\"widgets\"", 1));
        } else {
            out.push_str(&line.replacen("resource=\"widgets\"", "resource=\"widgets-builtin\"", 1));
        }
        out.push('\n');
    }
    out
}

/// One named value of an apiserver row.
pub fn apiserver_value(values: &[Option<f64>], name: &str) -> Option<f64> {
    values
        .get(apiserver::CATALOGUE.index(name)?)
        .copied()
        .flatten()
}

/// `fut`'s output with the moment it returned (RFC 3339 and monotonic).
async fn stamped<T>(fut: impl std::future::Future<Output = T>) -> (String, Instant, T) {
    let v = fut.await;
    (now_rfc3339(), Instant::now(), v)
}

/// How long one replica of several gets to answer a scrape.
const REPLICA_WAIT: Duration = Duration::from_millis(900);

/// A /metrics page larger than this is a failed scrape, not an out-of-memory.
pub const MAX_PAGE: usize = 64 << 20;

/// The body as text, or None when it is larger than `cap` bytes (or not text).
async fn read_capped(mut resp: reqwest::Response, cap: usize) -> Option<String> {
    if resp.content_length().is_some_and(|n| n > cap as u64) {
        return None;
    }
    let mut buf = Vec::new();
    while let Some(chunk) = resp.chunk().await.ok()? {
        buf.extend_from_slice(&chunk);
        if buf.len() > cap {
            return None;
        }
    }
    String::from_utf8(buf).ok()
}

/// The values the runner reads back from a controller row.
#[derive(Debug, Clone, Copy, Default)]
pub struct ControllerRow {
    pub reconciles: f64,
    pub success: f64,
    pub errors: f64,
    pub depth: f64,
}

impl ControllerRow {
    fn of(values: &[Option<f64>]) -> ControllerRow {
        let c = &controller::CATALOGUE;
        let v = |name: &str| {
            c.index(name)
                .and_then(|i| values.get(i).copied().flatten())
                .unwrap_or(0.0)
        };
        let (success, errors) = (v("reconcile_success_total"), v("reconcile_error_total"));
        ControllerRow {
            reconciles: success + errors + v("reconcile_requeue_total"),
            success,
            errors,
            depth: v("queue_depth"),
        }
    }
}

/// One controller being sampled.
pub struct ControllerTarget {
    pub variant: String,
    /// Each replica's metrics URL; none at all: the controller is not
    /// scraped (no metrics-<variant>.csv).
    pub urls: Vec<Option<String>>,
    /// With more than one replica: how their scrapes add up.
    pub fleet: Option<super::fleet::Fleet>,
    /// A controller ctrlbench did not write: its controller-runtime
    /// controllers and work queues, whatever their names, are summed into
    /// the columns (ours are read by their name, "widget").
    pub any_controller: bool,
    table: Option<Table>,
    pub baseline: Option<ControllerRow>,
    pub last: Option<ControllerRow>,
    pub ok: u64,
    pub failed: u64,
    /// When the reconcile count last changed.
    pub last_change: Instant,
    /// (time, reconciles) of the previous successful scrape, for rates.
    pub prev: Option<(Instant, f64)>,
    pub rate: f64,
    /// The counters a restarted controller lost (its last row before the
    /// drop), added to every later row: `last` minus `baseline` stays the
    /// increase, as Prometheus's `increase()` takes it.
    carry: ControllerRow,
    /// The last row as scraped, before `carry`.
    raw: Option<ControllerRow>,
    /// Whether an answered scrape gave the process's CPU and resident
    /// memory (`process_*`): where it did not, the OS figures stand in
    /// (`controller_os`). A page without the family sums to 0, and a live
    /// process has neither 0 bytes resident nor 0 CPU seconds for a whole run.
    pub gave_cpu: bool,
    pub gave_rss: bool,
}

/// Samples one group of runs (one variant, or all at once).
pub struct Sampler {
    http: reqwest::Client,
    /// One admin client per apiserver (aimed at it directly).
    apis: Vec<kube::Client>,
    /// The workload's (group, plural) when it is not the Widgets: read as them.
    kind: Option<(String, String)>,
    /// Every etcd member's metrics URL.
    etcd_urls: Vec<String>,
    pub controllers: Vec<ControllerTarget>,
    /// (apiserver, its file in one run directory).
    apiserver_tables: Vec<(usize, Table)>,
    /// (member, its file in one run directory).
    etcd_tables: Vec<(usize, Table)>,
    /// Scrapes at which no apiserver (no etcd member) answered.
    pub apiserver_failed: u64,
    pub etcd_failed: u64,
}

impl Sampler {
    /// `targets`: (variant, each replica's metrics URL or None when not
    /// scraped, run directory); the apiserver and etcd files go in each run
    /// directory.
    pub fn new(
        apis: Vec<kube::Client>,
        etcd_urls: Vec<String>,
        targets: Vec<(String, Vec<Option<String>>, RunDir)>,
    ) -> Result<Sampler> {
        let mut controllers = Vec::new();
        let mut apiserver_tables = Vec::new();
        let mut etcd_tables = Vec::new();
        for (variant, urls, dir) in targets {
            let table = match urls.iter().any(Option::is_some) {
                true => Some(Table::for_source(&dir.metrics(), &controller::CATALOGUE)?),
                false => None,
            };
            let fleet = match urls.len() {
                0 | 1 => None,
                n => Some(super::fleet::Fleet::new(n, &dir)?),
            };
            for k in 0..apis.len() {
                let path = match apis.len() {
                    1 => dir.apiserver(),
                    _ => dir.apiserver_member(k),
                };
                apiserver_tables.push((k, Table::for_source(&path, &apiserver::CATALOGUE)?));
            }
            for k in 0..etcd_urls.len() {
                let t = match etcd_urls.len() {
                    1 => Table::for_source(&dir.etcd(), &etcd::CATALOGUE)?,
                    _ => Table::for_source(&dir.etcd_member(k), &etcd::MEMBER_CATALOGUE)?,
                };
                etcd_tables.push((k, t));
            }
            controllers.push(ControllerTarget {
                variant,
                urls,
                fleet,
                any_controller: false,
                table,
                baseline: None,
                last: None,
                ok: 0,
                failed: 0,
                last_change: Instant::now(),
                prev: None,
                rate: 0.0,
                carry: ControllerRow::default(),
                raw: None,
                gave_cpu: false,
                gave_rss: false,
            });
        }
        Ok(Sampler {
            // Loopback targets only: never through a proxy from the environment.
            http: reqwest::Client::builder()
                .timeout(Duration::from_secs(5))
                .no_proxy()
                .build()?,
            apis,
            kind: None,
            etcd_urls,
            controllers,
            apiserver_tables,
            etcd_tables,
            apiserver_failed: 0,
            etcd_failed: 0,
        })
    }

    /// The sampler of a run group: every apiserver and etcd member directly
    /// (an existing cluster: its URL, no etcd) and each member's controller.
    pub async fn of_group(ctx: &Ctx<'_>, members: &[Member]) -> Result<Sampler> {
        let (apis, etcd_urls) = match &ctx.cluster.plane {
            Some(p) => {
                let mut apis = Vec::new();
                for k in 0..p.apiserver_urls().len() {
                    apis.push(ctrlbench_plane::kubeconfig::client(&p.kubeconfig_for(k)).await?);
                }
                (apis, p.etcd_metrics_urls())
            }
            None => (vec![ctx.cluster.client.clone()], Vec::new()),
        };
        let targets = members
            .iter()
            .map(|m| {
                (
                    ctx.exp.variants[m.variant].name.clone(),
                    m.metrics_urls(),
                    m.dir.clone(),
                )
            })
            .collect();
        let mut sampler = Sampler::new(apis, etcd_urls, targets)?;
        let w = &ctx.exp.workload;
        if !w.is_builtin() {
            sampler.kind = Some((w.resource.group.clone(), w.resource.plural.clone()));
        }
        for (c, m) in sampler.controllers.iter_mut().zip(members) {
            c.any_controller = !ctx.exp.variants[m.variant].is_own();
        }
        Ok(sampler)
    }

    async fn get(&self, url: String, c: &Catalogue) -> Option<Vec<Option<f64>>> {
        self.get_as(url, c, false).await
    }

    /// `get`; with `any_controller`, every controller-runtime controller and
    /// work queue on the page counts (see [`as_one_controller`]).
    async fn get_as(
        &self,
        url: String,
        c: &Catalogue,
        any_controller: bool,
    ) -> Option<Vec<Option<f64>>> {
        let resp = self
            .http
            .get(url)
            .send()
            .await
            .ok()?
            .error_for_status()
            .ok()?;
        let mut text = read_capped(resp, MAX_PAGE).await?;
        if any_controller {
            text = as_one_controller(&text);
        }
        Some(c.values(&Page::parse_only(&text, c.keep).ok()?))
    }

    /// One scrape of every target, written as one row each. Each row carries
    /// the moment its own scrape returned (sources answer at different speeds;
    /// rates use the real gaps between a source's rows).
    pub async fn scrape_once(&mut self) -> Result<()> {
        let this = &*self;
        let ctl = futures::future::join_all(this.controllers.iter().map(|c| {
            // A stopped (hung) replica must not hold up its fleet's row:
            // each replica gets REPLICA_WAIT, then counts as not answering.
            let wait = match c.urls.len() {
                1 => Duration::from_secs(60),
                _ => REPLICA_WAIT,
            };
            stamped(futures::future::join_all(c.urls.iter().map(
                move |u| async move {
                    let u = u.as_ref()?;
                    let page = this.get_as(u.clone(), &controller::CATALOGUE, c.any_controller);
                    tokio::time::timeout(wait, page).await.ok().flatten()
                },
            )))
        }));
        let etcd_catalogue = match self.etcd_urls.len() {
            1 => &etcd::CATALOGUE,
            _ => &etcd::MEMBER_CATALOGUE,
        };
        let etcd = futures::future::join_all(
            self.etcd_urls
                .iter()
                .map(|u| stamped(self.get(u.clone(), etcd_catalogue))),
        );
        let apis = futures::future::join_all(
            self.apis
                .iter()
                .map(|c| stamped(apiserver_values_as(c, self.kind.as_ref()))),
        );
        let (pages, apis, etcd) = tokio::join!(ctl, apis, etcd);
        for (c, (ts, now, mut pages)) in self.controllers.iter_mut().zip(pages) {
            let Some(table) = c.table.as_mut() else {
                continue;
            };
            let values = match c.fleet.as_mut() {
                Some(f) => f.merge(&ts, &c.variant, &pages)?,
                None => pages.pop().flatten(),
            };
            let cells = controller::CATALOGUE.row(&ts, &c.variant, values.as_deref());
            table.row(cells)?;
            let Some(values) = values else {
                c.failed += 1;
                continue;
            };
            let has = |name: &str| {
                controller::CATALOGUE
                    .index(name)
                    .and_then(|i| values.get(i).copied().flatten())
                    .is_some_and(|v| v > 0.0)
            };
            c.gave_cpu |= has("cpu_seconds");
            c.gave_rss |= has("rss_bytes");
            let raw = ControllerRow::of(&values);
            if c.raw.is_some_and(|p| raw.reconciles < p.reconciles) {
                // A counter reset: the controller restarted.
                let p = c.raw.unwrap_or_default();
                c.carry.reconciles += p.reconciles;
                c.carry.success += p.success;
                c.carry.errors += p.errors;
            }
            c.raw = Some(raw);
            let r = ControllerRow {
                reconciles: raw.reconciles + c.carry.reconciles,
                success: raw.success + c.carry.success,
                errors: raw.errors + c.carry.errors,
                depth: raw.depth,
            };
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
        if !apis.is_empty() && apis.iter().all(|(_, _, v)| v.is_none()) {
            self.apiserver_failed += 1;
        }
        for (k, t) in &mut self.apiserver_tables {
            let (ts, _, v) = &apis[*k];
            t.row(apiserver::CATALOGUE.row(ts, "", v.as_deref()))?;
        }
        if !etcd.is_empty() && etcd.iter().all(|(_, _, v)| v.is_none()) {
            self.etcd_failed += 1;
        }
        for (k, t) in &mut self.etcd_tables {
            let (ts, _, v) = &etcd[*k];
            t.row(etcd_catalogue.row(ts, "", v.as_deref()))?;
        }
        Ok(())
    }
}

/// The label values the controller catalogue selects (`controller` on
/// controller_runtime_*, `name` on workqueue_*) set to "widget" on every
/// sample of those families: a user's controller-runtime controllers, under
/// whatever names, count as one controller.
pub fn as_one_controller(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let key = if line.starts_with("controller_runtime_") {
            Some("controller=\"")
        } else if line.starts_with("workqueue_") {
            Some("name=\"")
        } else {
            None
        };
        match key.and_then(|k| {
            let open = line.find('{')?;
            let at = line[open..]
                .match_indices(k)
                .map(|(i, _)| open + i)
                .find(|i| matches!(line.as_bytes()[i - 1], b'{' | b','))?;
            let start = at + k.len();
            let end = start + line[start..].find('"')?;
            Some((start, end))
        }) {
            Some((start, end)) => {
                out.push_str(&line[..start]);
                out.push_str("widget");
                out.push_str(&line[end..]);
            }
            None => out.push_str(line),
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn another_kinds_requests_read_as_widgets() {
        let page = "apiserver_request_total{code=\"201\",group=\"samplecontroller.k8s.io\",resource=\"foos\",verb=\"POST\"} 5\n\
apiserver_request_total{code=\"201\",group=\"benchmark.example.com\",resource=\"widgets\",verb=\"POST\"} 7\n\
apiserver_request_total{code=\"201\",group=\"apps\",resource=\"foos\",verb=\"POST\"} 11\n\
process_cpu_seconds_total 3\n";
        let kind = ("samplecontroller.k8s.io".to_string(), "foos".to_string());
        let p = Page::parse(&as_widgets(page, &kind)).unwrap();
        let widgets = |r: &str| p.sum("apiserver_request_total", &[("resource", r)]);
        assert_eq!(widgets("widgets"), 5.0);
        assert_eq!(widgets("widgets-builtin"), 7.0);
        assert_eq!(widgets("foos"), 11.0, "another group's foos stay");
        assert_eq!(p.sum("process_cpu_seconds_total", &[]), 3.0);
    }

    #[test]
    fn a_users_controllers_count_as_one() {
        let page = "# TYPE controller_runtime_reconcile_total counter\n\
controller_runtime_reconcile_total{controller=\"thing\",result=\"success\"} 3\n\
controller_runtime_reconcile_total{controller=\"other\",result=\"success\"} 4\n\
workqueue_depth{controller=\"thing\",name=\"thing\"} 2\n\
rest_client_requests_total{code=\"200\",method=\"GET\"} 9\n";
        let text = as_one_controller(page);
        let p = Page::parse(&text).unwrap();
        assert_eq!(
            p.sum(
                "controller_runtime_reconcile_total",
                &[("controller", "widget"), ("result", "success")]
            ),
            7.0
        );
        assert_eq!(p.sum("workqueue_depth", &[("name", "widget")]), 2.0);
        assert_eq!(p.sum("rest_client_requests_total", &[]), 9.0);
    }

    fn response(body: Vec<u8>) -> reqwest::Response {
        reqwest::Response::from(http::Response::new(body))
    }

    #[tokio::test]
    async fn a_page_over_the_cap_is_a_failed_scrape() {
        let small = response(b"up 1\n".to_vec());
        assert_eq!(read_capped(small, 64).await.as_deref(), Some("up 1\n"));
        let big = response(vec![b'#'; 65]);
        assert_eq!(read_capped(big, 64).await, None);
        let not_text = response(vec![0xff, 0xfe]);
        assert_eq!(read_capped(not_text, 64).await, None);
    }
}
