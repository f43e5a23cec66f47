//! `--pprof`: a CPU profile of this process on request, at
//! `/debug/pprof/profile?seconds=N` on the metrics address — what Go's
//! net/http/pprof serves for the Go controller, in the same protobuf
//! format, so the harness reads both alike and renders their flame graphs
//! the same way. Sampled by pprof-rs (SIGPROF, 99 Hz, as Go's 100 Hz)
//! while the request lasts; one profile at a time.

use std::time::Duration;

use axum::extract::RawQuery;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use pprof::protos::Message;

/// The longest profile one request may ask for.
const MAX_SECONDS: u64 = 60;
/// Samples per second (Go's runtime samples at 100 Hz; 99 avoids lockstep
/// with anything that runs on a round period).
const FREQUENCY: i32 = 99;

/// Seconds asked for in `seconds=N` (default 30, as Go's), at most
/// MAX_SECONDS.
fn seconds_of(query: Option<&str>) -> Result<u64, String> {
    let Some(q) = query else { return Ok(30) };
    for pair in q.split('&') {
        if let Some(v) = pair.strip_prefix("seconds=") {
            return match v.parse::<u64>() {
                Ok(s) if (1..=MAX_SECONDS).contains(&s) => Ok(s),
                _ => Err(format!("seconds must be 1 to {MAX_SECONDS}, got {v:?}")),
            };
        }
    }
    Ok(30)
}

pub async fn serve(RawQuery(query): RawQuery) -> Response {
    let secs = match seconds_of(query.as_deref()) {
        Ok(s) => s,
        Err(e) => return (StatusCode::BAD_REQUEST, e).into_response(),
    };
    match tokio::task::spawn_blocking(move || profile_for(Duration::from_secs(secs))).await {
        Ok(Ok(body)) => (
            [(axum::http::header::CONTENT_TYPE, "application/octet-stream")],
            body,
        )
            .into_response(),
        Ok(Err(e)) => (StatusCode::CONFLICT, e).into_response(),
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()).into_response(),
    }
}

/// Samples every thread of the process for `d`; the profile as pprof's
/// protobuf (uncompressed; Go's is gzipped, the reader takes both).
fn profile_for(d: Duration) -> Result<Vec<u8>, String> {
    let guard = pprof::ProfilerGuardBuilder::default()
        .frequency(FREQUENCY)
        // Unwinding through these can fault; Go's profiles stop there too.
        .blocklist(&["libc", "libgcc", "pthread", "vdso"])
        .build()
        .map_err(|e| format!("cannot start the profiler (one profile at a time): {e}"))?;
    std::thread::sleep(d);
    let report = guard.report().build().map_err(|e| e.to_string())?;
    let profile = report.pprof().map_err(|e| e.to_string())?;
    Ok(profile.encode_to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_default_to_thirty_and_are_bounded() {
        assert_eq!(seconds_of(None), Ok(30));
        assert_eq!(seconds_of(Some("debug=1")), Ok(30));
        assert_eq!(seconds_of(Some("seconds=5")), Ok(5));
        assert!(seconds_of(Some("seconds=0")).is_err());
        assert!(seconds_of(Some("seconds=61")).is_err());
        assert!(seconds_of(Some("seconds=x")).is_err());
    }

    #[test]
    fn a_profile_decodes_and_has_a_sample_type() {
        // The body is a pprof profile of one second at our frequency. That
        // it holds the controller's own samples is checked end to end on
        // the real process (tests/run.rs in the harness): inside this test
        // binary, beside its other tests' threads, a busy second was seen
        // to yield none under CI's load.
        let body = profile_for(Duration::from_secs(1)).unwrap();
        let p = pprof::protos::Profile::decode(body.as_slice()).unwrap();
        assert!(!p.sample_type.is_empty());
        assert_eq!(p.period, 1_000_000_000 / i64::from(FREQUENCY));
        assert!(p.duration_nanos >= 1_000_000_000, "{}", p.duration_nanos);
    }
}
