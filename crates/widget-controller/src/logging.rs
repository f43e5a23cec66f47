//! The controller's log: our own lines at the chosen level, libraries at
//! warn, as the write-up's zap setup logged only the controller. The one line
//! a reconcile writes is defined here too, so that examples/log_line.rs times
//! exactly what the controller writes.

use tracing::Subscriber;
use tracing_subscriber::fmt::MakeWriter;
use widget_api::presets::{LogFormat, LogLevel};

/// The subscriber: each line formatted, then written with one `write` to
/// `writer` (the controller's is stderr, a file the harness opened).
pub fn subscriber<W>(
    level: LogLevel,
    format: LogFormat,
    writer: W,
    ansi: bool,
) -> Box<dyn Subscriber + Send + Sync>
where
    W: for<'a> MakeWriter<'a> + Send + Sync + 'static,
{
    let filter =
        tracing_subscriber::EnvFilter::new(format!("warn,widget_controller={}", level.as_str()));
    let b = tracing_subscriber::fmt()
        .with_writer(writer)
        .with_ansi(ansi)
        .with_env_filter(filter);
    match format {
        LogFormat::Console => Box::new(b.finish()),
        LogFormat::Json => Box::new(b.json().finish()),
    }
}

/// Installs [`subscriber`] for the whole process.
pub fn init<W>(level: LogLevel, format: LogFormat, writer: W, ansi: bool)
where
    W: for<'a> MakeWriter<'a> + Send + Sync + 'static,
{
    tracing::subscriber::set_global_default(subscriber(level, format, writer, ansi))
        .expect("the log is set up once");
}

/// The debug line at the start of every reconcile (controller-runtime's
/// "Reconciling" carries the same keys). The target is spelled out so that
/// the line reads, and filters, the same from an example.
pub fn reconciling(namespace: &str, name: &str) {
    tracing::debug!(target: "widget_controller::controller", controller = "widget", namespace = %namespace, name, "Reconciling");
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;

    /// What the subscriber wrote, for the tests.
    #[derive(Clone, Default)]
    struct Buf(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Buf {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn written(level: LogLevel, format: LogFormat) -> String {
        let buf = Buf::default();
        let out = buf.clone();
        let s = subscriber(level, format, move || out.clone(), false);
        tracing::subscriber::with_default(s, || reconciling("ns-a", "widget-000007"));
        String::from_utf8(buf.0.lock().unwrap().clone()).unwrap()
    }

    #[test]
    fn the_reconcile_line_is_written_at_debug_only() {
        let line = written(LogLevel::Debug, LogFormat::Console);
        assert!(
            line.ends_with(
                " DEBUG widget_controller::controller: Reconciling controller=\"widget\" namespace=ns-a name=\"widget-000007\"\n"
            ),
            "{line:?}"
        );
        assert_eq!(line.lines().count(), 1);
        assert_eq!(written(LogLevel::Info, LogFormat::Console), "");
        let json: serde_json::Value =
            serde_json::from_str(&written(LogLevel::Debug, LogFormat::Json)).unwrap();
        assert_eq!(json["fields"]["message"], "Reconciling");
        assert_eq!(json["fields"]["name"], "widget-000007");
        assert_eq!(json["target"], "widget_controller::controller");
    }
}
