//! The `[workload]` table every `init --from` writes (kubebuilder,
//! kube-rs and kopf alike): the operator's source directory, the CRD, the
//! other kinds' CRDs, the example object and the readiness rule, paths as
//! the file shows them. The generators find those; this only spells them.

/// The `[workload]` table `init --from` writes, paths as the file shows
/// them: the operator's source directory, the CRD, the other kinds' CRDs,
/// the example object and the readiness rule (its comment and line).
pub(super) fn workload_toml(
    source: &str,
    crd: &str,
    extra: &[String],
    object: &str,
    ready: &str,
) -> String {
    let mut t = String::from("[workload]\n");
    t.push_str("# The operator's source: each finding also points to its likely lines there.\n");
    t.push_str(&format!("source = {}\n", q(source)));
    t.push_str(&format!("crd = {}\n", q(crd)));
    if !extra.is_empty() {
        t.push_str(
            "# The other kinds the controller watches: installed when missing,\n\
             # removed afterwards only if ctrlbench installed them.\n",
        );
        t.push_str(&string_list("extra_crds", extra));
    }
    t.push_str(
        "# The project's example: ctrlbench sets every object's metadata.name and\n\
         # namespace; {{index}}, {{name}}, {{namespace}} and {{run}} may be used in it.\n",
    );
    t.push_str(&format!("object = {}\n", q(object)));
    t.push_str(ready);
    t.push('\n');
    t
}

/// `key = [ … ]`, one string a line.
pub(super) fn string_list(key: &str, items: &[String]) -> String {
    let mut s = format!("{key} = [\n");
    for i in items {
        s.push_str(&format!("  {},\n", q(i)));
    }
    s.push_str("]\n");
    s
}

/// A TOML basic string (JSON's escapes are TOML's).
pub(super) fn q(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}
