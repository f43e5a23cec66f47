//! `{{pad N}}` in an object template: N letters `x`, to give a workload's
//! objects a size, bounded by what the apiserver and etcd take per object.

/// The largest object a run creates: the apiserver takes up to 3 MiB per
/// request, etcd 1.5 MiB; 1 MiB leaves room for metadata and status.
pub const MAX_OBJECT_BYTES: u64 = 1 << 20;

/// `text` with every `{{pad N}}` replaced by N letters `x`; an error names
/// a helper whose N is not a whole number up to [`MAX_OBJECT_BYTES`].
pub fn expand_pads(text: &str) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("{{pad ") {
        out.push_str(&rest[..at]);
        let after = &rest[at + "{{pad ".len()..];
        let end = after
            .find("}}")
            .ok_or_else(|| "{{pad N}} is not closed with }}".to_string())?;
        let n: u64 = after[..end].trim().parse().map_err(|_| {
            format!(
                "{{{{pad {}}}}}: N must be a whole number of bytes",
                &after[..end]
            )
        })?;
        if n > MAX_OBJECT_BYTES {
            return Err(format!(
                "{{{{pad {n}}}}}: at most {MAX_OBJECT_BYTES} bytes per object"
            ));
        }
        out.extend(std::iter::repeat_n('x', n as usize));
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    Ok(out)
}
