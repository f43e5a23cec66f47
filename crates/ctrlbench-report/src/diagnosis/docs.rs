//! docs/diagnosis.md, generated from the rules' table: one entry per rule
//! with its evidence, threshold, basis, fixes, likely lines and source, so
//! the page cannot drift from what the code judges (a test compares them).

use super::{Framework, RULES};

/// docs/diagnosis.md, from the table.
pub fn markdown() -> String {
    let mut s = String::from(
        "# Diagnosis rules\n\n\
         <!-- Generated from crates/ctrlbench-report/src/diagnosis/rules.rs (RULES) by `ctrlbench diagnose --rules`; a test keeps it in step. -->\n\n\
         `ctrlbench run` (and `ctrlbench diagnose RESULTS` on older results) names each anti-pattern a controller's runs \
         show, in the report's \"What to fix\", in verdicts.json's `diagnosis` and on the terminal. Most rules rest on counts: \
         the run's API footprint (footprint.csv, from the apiserver's audit log, which names each request's caller) and \
         the controller's own counters, per object and per reconcile, so one repeat decides them. The rules whose \
         \"Rests on\" says measures (time, memory, which vary from run to run) name a suspect, marked so, with the \
         figures it rests on. A rule whose \
         signature another finding explains (the conflicts of a loop) is left out where that one fires. A rule that fires \
         at several scales is listed once in \"What to fix\", with the evidence of the largest N and the other scales \
         named; verdicts.json keeps a finding per scale.\n\n\
         To add a rule: one constant in crates/ctrlbench-report/src/diagnosis/writes.rs or reads.rs (its name, meaning, \
         evidence, threshold, fixes, likely lines, source and detection together), its place in `RULES` (rules.rs), \
         then `ctrlbench diagnose --rules > docs/diagnosis.md`.\n\n",
    );
    for r in RULES {
        s.push_str(&format!("## {} (`{}`)\n\n{}\n\n", r.name, r.id, r.means));
        s.push_str(&format!("- **Evidence:** {}.\n", r.evidence));
        s.push_str(&format!("- **Fires at:** {}.\n", r.threshold));
        s.push_str(&format!("- **Rests on:** {}.\n", r.basis.words()));
        if !r.suppressed_by.is_empty() {
            s.push_str(&format!(
                "- **Left out when these fire:** {}.\n",
                r.suppressed_by
                    .iter()
                    .map(|x| format!("`{x}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        s.push_str("- **Fix:**\n");
        for f in Framework::ALL {
            s.push_str(&format!("  - {}: {}.\n", f.name(), r.fix.of(f)));
        }
        let likely: Vec<String> = Framework::ALL
            .iter()
            .filter(|f| !r.likely.of(**f).is_empty())
            .map(|f| {
                let pats: Vec<String> = r
                    .likely
                    .of(*f)
                    .iter()
                    .map(|p| match p.unless {
                        "" => format!("`{}`", p.find),
                        u => format!("`{}` in a file without `{u}`", p.find),
                    })
                    .collect();
                format!("  - {}: {}.\n", f.name(), pats.join("; "))
            })
            .collect();
        if !likely.is_empty() {
            s.push_str("- **Likely lines** (patterns matched in the operator's source; pointers, not evidence):\n");
            s.push_str(&likely.concat());
        }
        s.push_str(&format!("- **Source:** {}.\n\n", r.source));
    }
    s
}
