//! Every YAML the harness reads (CRDs, object templates, patches, and the
//! files `init --from` scans in someone else's repository) goes through
//! here. serde-saphyr parses it: maintained, panic-free, bounded by a budget
//! of events, anchors and nesting, and already in the build through kube's
//! kubeconfig reader. Its multi-document reader ends on a document it cannot
//! parse; serde_yaml 0.9's iterator yielded the same error forever, which
//! hung `init --from` on the first Helm template it met. Untagged scalars
//! resolve as Kubernetes' own YAML reader resolves them (`yes`, `on` and
//! `y` are booleans, as in YAML 1.1), so a template means here what it
//! means to kubectl.

use serde::de::DeserializeOwned;
use serde_json::Value;

/// One document of `text`, with a one-line error ("line L column C: …").
pub fn one<T: DeserializeOwned>(text: &str) -> Result<T, String> {
    serde_saphyr::from_str(text).map_err(|e| line(&e))
}

/// Every document of `text`, or the first error in one line. A stream is
/// taken whole or not at all: after a syntax error the parser's position in
/// the stream is not a document boundary.
pub fn documents(text: &str) -> Result<Vec<Value>, String> {
    let docs: Vec<Value> = serde_saphyr::from_multiple(text).map_err(|e| line(&e))?;
    // An empty document ("---" at the end) reads as null: not a document.
    Ok(docs.into_iter().filter(|d| !d.is_null()).collect())
}

/// The error without its source snippet, on one line.
fn line(e: &serde_saphyr::Error) -> String {
    let s = e.without_snippet().to_string();
    let s = s.trim().trim_start_matches("error: ");
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    /// A Helm template's metadata: `{{` opens a flow mapping, and
    /// `{{- include … | nindent 4 }}` cannot be parsed at all.
    const HELM: &str = "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: {{ include \"controller.fullname\" . }}\n  labels:\n    {{- include \"controller.labels\" . | nindent 4 }}\n---\napiVersion: v1\nkind: Secret\n";

    #[test]
    fn a_helm_template_is_an_error_at_once_not_a_hang() {
        let t = Instant::now();
        let e = documents(HELM).unwrap_err();
        assert!(t.elapsed() < Duration::from_secs(1), "{:?}", t.elapsed());
        assert!(e.contains("line 4"), "{e}");
        assert!(!e.contains('\n'), "{e}");
    }

    #[test]
    fn a_stream_gives_its_documents_and_skips_empty_ones() {
        let docs = documents("a: 1\n---\nb: [x, z]\n---\n").unwrap();
        assert_eq!(
            docs,
            vec![
                serde_json::json!({"a": 1}),
                serde_json::json!({"b": ["x", "z"]})
            ]
        );
        let v: Value = one("c: true\n").unwrap();
        assert_eq!(v, serde_json::json!({"c": true}));
    }
}
