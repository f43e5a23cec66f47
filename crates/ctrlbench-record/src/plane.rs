//! `plane.csv`: the local plane's own processes beyond etcd and the
//! apiservers — kube-controller-manager, kube-scheduler and kwok, those the
//! plane runs — one row per scrape with each one's CPU seconds and resident
//! memory from /proc, so a report can show what fake nodes and the plane's
//! own controllers cost. etcd's and the apiservers' figures stay in their
//! own files, from their metrics pages.

pub const FILE_NAME: &str = "plane.csv";

/// The processes this file may have, in the report's order.
pub const PROCESSES: [&str; 3] = ["kube-controller-manager", "kube-scheduler", "kwok"];

/// The column of process `name`'s CPU seconds (user + system).
pub fn cpu_column(name: &str) -> String {
    format!("{}_cpu_seconds", name.replace('-', "_"))
}

/// The column of process `name`'s resident memory in bytes.
pub fn rss_column(name: &str) -> String {
    format!("{}_rss_bytes", name.replace('-', "_"))
}

/// The header for `names`: timestamp, scrape_ok, then two columns each.
pub fn header(names: &[&str]) -> Vec<String> {
    let mut h = vec!["timestamp".to_string(), "scrape_ok".to_string()];
    for n in names {
        h.push(cpu_column(n));
        h.push(rss_column(n));
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::series::Series;
    use crate::table::Table;

    #[test]
    fn rows_read_back_by_column() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join(FILE_NAME);
        let mut t = Table::create(&p, header(&["kube-scheduler", "kwok"])).unwrap();
        for (ts, cpu, rss) in [
            ("2026-12-04T10:00:00.000Z", "1.5", "1000"),
            ("2026-12-04T10:00:01.000Z", "2.25", "3000"),
        ] {
            t.row(vec![
                ts.into(),
                "1".into(),
                cpu.into(),
                rss.into(),
                "0.1".into(),
                "5".into(),
            ])
            .unwrap();
        }
        let s = Series::read(&p).unwrap().unwrap();
        assert_eq!(s.delta(&cpu_column("kube-scheduler")), Some(0.75));
        assert_eq!(s.max(&rss_column("kube-scheduler")), Some(3000.0));
        assert_eq!(s.max(&rss_column("kwok")), Some(5.0));
        assert_eq!(s.delta(&cpu_column("kube-controller-manager")), None);
    }
}
