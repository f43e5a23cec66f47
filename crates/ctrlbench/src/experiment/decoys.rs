//! `[workload] decoys = K`, as the file states it: the bound on K and the
//! shape of a `[workload]` that holds only decoys, field_managers and source (no
//! template: the built-in Widgets). The decoys themselves — K objects of the workload's
//! kind, K Secrets and K ConfigMaps in a namespace no controller is asked
//! to reconcile, made before any controller starts — are created and
//! removed by `run::background`; their count reaches summary.json
//! (`decoys`) and the report's cluster-wide-cache finding. Nothing here
//! talks to a cluster.

use toml::Spanned;

use super::ready::{ReadyRule, ReadySpec};
use super::spec::errors::{Checked, Source};
use super::workload::{Workload, WorkloadSpec};

/// The most decoys a file may ask for: each is three objects (one of the
/// workload's kind, a Secret and a ConfigMap of about 1 KiB each), all
/// made before the first run.
pub const MAX_DECOYS: i64 = 100_000;

/// Bytes of data in each decoy Secret and ConfigMap: enough that a cache
/// holding them shows in its RSS.
pub const DECOY_DATA_BYTES: u64 = 1024;

/// `decoys` (0 when unset): a whole number from 0 to [`MAX_DECOYS`].
pub fn count(src: &Source, w: &WorkloadSpec) -> Checked<u64> {
    let Some(d) = &w.decoys else { return Ok(0) };
    let k = *d.get_ref();
    if !(0..=MAX_DECOYS).contains(&k) {
        return Err(src.at(
            "decoys",
            d.span(),
            format!("must be a whole number from 0 to {MAX_DECOYS}, not {k}"),
        ));
    }
    Ok(k as u64)
}

/// The template and readiness rule a `[workload]` names, or None when it
/// names neither (nor `crd` or `extra_crds`): the built-in Widgets, with
/// its decoys. A template without a rule, or a rule or CRD without a
/// template, is one error naming the missing key.
pub fn template<'a>(
    src: &Source,
    w: &'a WorkloadSpec,
) -> Checked<Option<(&'a Spanned<String>, &'a Spanned<ReadySpec>)>> {
    match (&w.object, &w.ready) {
        (Some(o), Some(r)) => Ok(Some((o, r))),
        (Some(o), None) => Err(src.at(
            "ready",
            o.span(),
            "is required with object: when an object counts as ready (condition, jsonpath or observed_generation)",
        )),
        (None, _) => {
            let other = w
                .ready
                .as_ref()
                .map(|r| r.span())
                .or_else(|| w.crd.as_ref().map(|c| c.span()))
                .or_else(|| w.extra_crds.first().map(|c| c.span()));
            match other {
                Some(span) => Err(src.at(
                    "object",
                    span,
                    "is required with crd, ready or extra_crds (a [workload] without object is the built-in Widgets, and takes only decoys, field_managers and source)",
                )),
                None => Ok(None),
            }
        }
    }
}

/// The decoys' other kinds, a ConfigMap and a Secret of
/// [`DECOY_DATA_BYTES`] each (`configmap-000001`, `secret-000001` …): what
/// a cache of every namespace's Secrets or ConfigMaps would hold.
pub fn side_kinds() -> Vec<Workload> {
    let pad = format!("\"{{{{pad {DECOY_DATA_BYTES}}}}}\"");
    [
        format!("apiVersion: v1\nkind: ConfigMap\ndata:\n  decoy: {pad}\n"),
        format!("apiVersion: v1\nkind: Secret\ntype: Opaque\nstringData:\n  decoy: {pad}\n"),
    ]
    .into_iter()
    .map(|t| Workload::of_kind(None, t, ReadyRule::ObservedGeneration).expect("a valid template"))
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(text: &str) -> WorkloadSpec {
        toml::from_str(text).unwrap()
    }

    fn src(text: &str) -> Source<'_> {
        Source {
            file: "w.toml".into(),
            text,
        }
    }

    #[test]
    fn decoys_are_bounded_and_alone_mean_the_builtin_widgets() {
        for (text, want) in [("", 0), ("decoys = 0", 0), ("decoys = 100000", 100_000)] {
            let w = spec(text);
            assert_eq!(count(&src(text), &w).unwrap(), want, "{text}");
            assert!(template(&src(text), &w).unwrap().is_none(), "{text}");
        }
        for text in ["decoys = -1", "decoys = 100001"] {
            let e = count(&src(text), &spec(text)).unwrap_err();
            assert_eq!((e.line, e.key.as_str()), (1, "decoys"), "{e}");
            assert!(e.message.contains("from 0 to 100000"), "{e}");
        }
    }

    #[test]
    fn a_template_needs_its_rule_and_a_rule_its_template() {
        let both = "object = \"o.yaml\"\nready = { condition = \"Ready\" }\ndecoys = 3";
        assert!(template(&src(both), &spec(both)).unwrap().is_some());
        for (text, line, key) in [
            ("decoys = 3\nobject = \"o.yaml\"", 2, "ready"),
            ("decoys = 3\nready = { condition = \"Ready\" }", 2, "object"),
            ("crd = \"c.yaml\"", 1, "object"),
            ("extra_crds = [\"c.yaml\"]", 1, "object"),
        ] {
            let e = template(&src(text), &spec(text)).unwrap_err();
            assert_eq!((e.line, e.key.as_str()), (line, key), "{text}: {e}");
        }
    }

    #[test]
    fn a_file_with_decoys_keeps_the_widgets_and_runs_on_one_plane() {
        use crate::experiment::spec::parse;
        use std::path::Path;
        let v = "[[variant]]\nname = \"a\"\npreset = \"good\"\n";
        let file = |top: &str, workload: &str| {
            format!("name = \"t\"\nscales = [5]\n{top}{v}[workload]\n{workload}")
        };
        let e = parse(Path::new("exp.toml"), &file("", "decoys = 500\n")).unwrap();
        assert_eq!(e.decoys, 500);
        assert!(e.workload.is_builtin());
        let e = parse(Path::new("exp.toml"), &file("", "")).unwrap();
        assert_eq!(e.decoys, 0);
        for (top, workload, line, key) in [
            ("", "decoys = 100001\n", 7, "decoys"),
            ("", "decoys = -3\n", 7, "decoys"),
            ("fresh_plane = \"run\"\n", "decoys = 5\n", 3, "fresh_plane"),
        ] {
            let e = parse(Path::new("exp.toml"), &file(top, workload)).unwrap_err();
            assert_eq!((e.line, e.key.as_str()), (line, key), "{e}");
        }
        let e = parse(Path::new("exp.toml"), &file("", "decoys = 1.5\n")).unwrap_err();
        assert_eq!((e.line, e.key.as_str()), (7, "decoys"), "{e}");
    }

    #[test]
    fn the_side_kinds_are_configmaps_and_secrets_of_a_kib() {
        let kinds = side_kinds();
        let plurals: Vec<&str> = kinds.iter().map(|k| k.resource.plural.as_str()).collect();
        assert_eq!(plurals, ["configmaps", "secrets"]);
        let cm = kinds[0].render(7, "ns", "r").unwrap();
        assert_eq!(cm["metadata"]["name"], "configmap-000007");
        assert_eq!(cm["data"]["decoy"].as_str().unwrap().len(), 1024);
        let secret = kinds[1].render(1, "ns", "r").unwrap();
        assert_eq!(secret["stringData"]["decoy"].as_str().unwrap().len(), 1024);
    }
}
