//! The one timestamp format of every record: RFC 3339 UTC with milliseconds.

/// Now, as written into CSV rows and JSON records.
pub fn now_rfc3339() -> String {
    jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%S%.3fZ")
        .to_string()
}

/// Unix seconds as written into records (RFC 3339, milliseconds).
pub fn rfc3339_of_unix(s: f64) -> String {
    jiff::Timestamp::from_millisecond((s * 1000.0).round() as i64)
        .unwrap_or(jiff::Timestamp::UNIX_EPOCH)
        .strftime("%Y-%m-%dT%H:%M:%S%.3fZ")
        .to_string()
}

/// Now, as used in a results directory's name (`20261130T043745Z`).
pub fn now_compact() -> String {
    jiff::Timestamp::now()
        .strftime("%Y%m%dT%H%M%SZ")
        .to_string()
}

/// RFC 3339 → seconds since the Unix epoch (millisecond precision).
pub fn parse_time(s: &str) -> Option<f64> {
    let ts: jiff::Timestamp = s.trim().parse().ok()?;
    Some(ts.as_millisecond() as f64 / 1000.0)
}

/// Now as Unix seconds.
pub fn now_unix() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

#[cfg(test)]
mod tests {
    #[test]
    fn round_trip() {
        let t = super::parse_time("2026-11-30T01:12:28.142Z").unwrap();
        assert_eq!(t, 1796001148.142);
        assert!(super::parse_time("yesterday").is_none());
        assert_eq!(super::rfc3339_of_unix(t), "2026-11-30T01:12:28.142Z");
        assert!(super::parse_time(&super::now_rfc3339()).is_some());
    }
}
