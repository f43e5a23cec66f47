//! A parsed /metrics page (Prometheus or OpenMetrics text) with the lookups
//! the column catalogue needs: sums over label filters and summed histogram
//! buckets.

use std::collections::BTreeMap;

use anyhow::{Context, Result};
use prometheus_parse::{Scrape, Value};

/// One scrape, parsed.
pub struct Page {
    scrape: Scrape,
}

impl Page {
    pub fn parse(text: &str) -> Result<Page> {
        Page::parse_only(text, |_| true)
    }

    /// Parses only the sample lines `keep` accepts (comments are kept): the
    /// apiserver's page is ~1.6 MB a second, and the sampler needs a few families.
    pub fn parse_only(text: &str, keep: impl Fn(&str) -> bool) -> Result<Page> {
        let lines = text
            .lines()
            .filter(|l| l.starts_with('#') || keep(l))
            .map(|l| Ok(l.to_string()));
        let scrape = Scrape::parse(lines).context("not Prometheus text")?;
        // The parser skips lines it cannot read: a page with no sample at
        // all (an HTML error page, garbage) is a failed scrape, not zeros.
        anyhow::ensure!(
            !scrape.samples.is_empty(),
            "no samples: not a /metrics page"
        );
        Ok(Page { scrape })
    }

    fn matching<'a>(
        &'a self,
        name: &'a str,
        filter: &'a [(&'a str, &'a str)],
    ) -> impl Iterator<Item = &'a prometheus_parse::Sample> + 'a {
        self.scrape.samples.iter().filter(move |s| {
            s.metric == name && filter.iter().all(|(k, v)| s.labels.get(k) == Some(*v))
        })
    }

    /// Sum of a counter, gauge or untyped metric over samples matching `filter`.
    pub fn sum(&self, name: &str, filter: &[(&str, &str)]) -> f64 {
        self.matching(name, filter)
            .map(|s| match &s.value {
                Value::Counter(v) | Value::Gauge(v) | Value::Untyped(v) => *v,
                _ => 0.0,
            })
            .sum()
    }

    /// Like `sum`, but only samples whose label `key` is one of `values`.
    pub fn sum_where(
        &self,
        name: &str,
        filter: &[(&str, &str)],
        key: &str,
        values: &[&str],
    ) -> f64 {
        self.matching(name, filter)
            .filter(|s| s.labels.get(key).is_some_and(|v| values.contains(&v)))
            .map(|s| match &s.value {
                Value::Counter(v) | Value::Gauge(v) | Value::Untyped(v) => *v,
                _ => 0.0,
            })
            .sum()
    }

    /// True if any sample of `name` exists.
    pub fn has(&self, name: &str) -> bool {
        self.scrape.samples.iter().any(|s| s.metric == name)
    }

    /// Cumulative bucket counts of a histogram, summed over matching label sets
    /// (and optionally only label `key` in `values`), keyed by upper bound.
    pub fn buckets(
        &self,
        name: &str,
        filter: &[(&str, &str)],
        only: Option<(&str, &[&str])>,
    ) -> BTreeMap<Bound, f64> {
        let mut out = BTreeMap::new();
        for s in self.matching(name, filter) {
            if let Some((k, vs)) = only
                && !s.labels.get(k).is_some_and(|v| vs.contains(&v))
            {
                continue;
            }
            if let Value::Histogram(h) = &s.value {
                for b in h {
                    *out.entry(Bound(b.less_than)).or_insert(0.0) += b.count;
                }
            }
        }
        out
    }
}

/// A bucket's upper bound, ordered (+Inf last).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bound(pub f64);

impl Eq for Bound {}

impl PartialOrd for Bound {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Bound {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = r#"# TYPE req counter
req_total{code="200",method="PUT"} 3
req_total{code="409",method="PUT"} 2
req_total{code="200",method="GET"} 5
# TYPE lat histogram
lat_bucket{verb="PUT",le="0.1"} 1
lat_bucket{verb="PUT",le="+Inf"} 2
lat_sum{verb="PUT"} 0.3
lat_count{verb="PUT"} 2
lat_bucket{verb="GET",le="0.1"} 4
lat_bucket{verb="GET",le="+Inf"} 4
"#;

    #[test]
    fn a_garbage_page_does_not_parse() {
        // The sampler writes such a scrape as failed (scrape_ok=0), never as zeros.
        assert!(Page::parse("<html>not metrics</html>\n<body>oops</body>\n").is_err());
        assert!(Page::parse("").is_err());
    }

    #[test]
    fn sums_and_buckets() {
        let p = Page::parse(TEXT).unwrap();
        assert_eq!(p.sum("req_total", &[]), 10.0);
        assert_eq!(p.sum("req_total", &[("method", "PUT")]), 5.0);
        assert_eq!(p.sum_where("req_total", &[], "code", &["409"]), 2.0);
        let b = p.buckets("lat", &[], Some(("verb", &["PUT"])));
        assert_eq!(b.values().copied().collect::<Vec<_>>(), vec![1.0, 2.0]);
        assert_eq!(p.sum("lat_sum", &[("verb", "PUT")]), 0.3);
    }
}
