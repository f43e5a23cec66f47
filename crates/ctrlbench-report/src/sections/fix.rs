//! "What to fix", first in the report: each anti-pattern the runs show
//! (the diagnosis table's rules, `diagnosis.rs`), with this run's evidence,
//! what it costs and the fix in the controller's framework; for a variant
//! with nothing found, what was checked; under a finding of the operator's
//! own code (not our reference controllers), up to three likely lines of
//! its source (likely.csv, when the experiment named it). A run of one
//! operator, which asks no question, also gets its one summary line here.

use super::Section;
use crate::Block;
use crate::context::ReportCtx;
use crate::diagnosis::{self, Basis, Framework, RULES};
use crate::metrics::Metric;

pub struct WhatToFix;

impl Section for WhatToFix {
    fn render(&self, ctx: &ReportCtx, out: &mut Vec<Block>) {
        let groups = &ctx.groups;
        if groups.is_empty() {
            return;
        }
        out.push(Block::Heading(2, "What to fix".into()));
        let mut variants: Vec<&str> = groups.iter().map(|g| g.variant.as_str()).collect();
        variants.sort();
        variants.dedup();
        let findings = diagnosis::diagnose(groups);
        if variants.len() == 1 {
            out.push(Block::List(
                groups.iter().map(|g| summary_line(g, &findings)).collect(),
            ));
        }
        let grown = crate::growth::of(&ctx.groups, crate::growth::delta_of(&ctx.results.manifest));
        let mut items = Vec::new();
        for (f, also) in at_largest_n(&findings) {
            let fix = match f.framework {
                Some(fw) => format!("{} ({})", f.rule.fix.of(fw), fw.name()),
                None => Framework::ALL
                    .iter()
                    .map(|fw| format!("{}: {}", fw.name(), f.rule.fix.of(*fw)))
                    .collect::<Vec<_>>()
                    .join("; "),
            };
            let also = if also.is_empty() {
                String::new()
            } else {
                format!(
                    " Also found at N = {}.",
                    also.iter()
                        .map(u64::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            };
            let suspected = match f.rule.basis {
                Basis::Counts => "",
                Basis::Measured => " (suspected: it rests on measures, not counts)",
            };
            items.push(format!(
                "**{}** (N={}): **{}**{suspected}: {}{}. Costs: {}. Fix: {}.{also}{}",
                f.variant,
                f.scale,
                f.rule.name,
                f.evidence,
                growth_clause(&grown, f),
                f.cost,
                fix,
                likely_lines(ctx, f)
            ));
        }
        let clean: Vec<String> = groups
            .iter()
            .filter(|g| diagnosis::checked(g))
            .filter(|g| {
                !findings
                    .iter()
                    .any(|f| f.variant == g.variant && f.scale == g.scale)
            })
            .map(|g| format!("{} (N={})", g.variant, g.scale))
            .collect();
        if !items.is_empty() {
            out.push(Block::List(items));
        }
        if !clean.is_empty() {
            out.push(Block::Para(format!(
                "Nothing found for {}: checked the {} rules of docs/diagnosis.md against each one's API footprint and counters.",
                clean.join(", "),
                RULES.len()
            )));
        }
        let unchecked: Vec<String> = groups
            .iter()
            .filter(|g| !diagnosis::checked(g))
            .map(|g| format!("{} (N={})", g.variant, g.scale))
            .collect();
        if !unchecked.is_empty() {
            out.push(Block::Para(format!(
                "No API footprint for {}: its runs had no audit log (an existing cluster, or `audit_log = false`), so only the rules on the controller's own counters were checked.",
                unchecked.join(", ")
            )));
        }
        out.push(Block::Para(
            "Each finding rests on counts from this run (footprint.csv: every request of the controller, from the apiserver's audit log; and the controller's own counters), per object and per reconcile, so one repeat decides it; those marked suspected rest on time or memory, which vary from run to run, and name the figures they read.".into(),
        ));
    }
}

/// Each (variant, rule) once, at the largest N it was found at (the
/// evidence of the most objects), with the other scales it was found at:
/// a run over several scales would otherwise repeat each finding per N.
/// verdicts.json keeps every finding.
fn at_largest_n(findings: &[diagnosis::Finding]) -> Vec<(&diagnosis::Finding, Vec<u64>)> {
    let mut out: Vec<(&diagnosis::Finding, Vec<u64>)> = Vec::new();
    for f in findings {
        match out
            .iter_mut()
            .find(|(g, _)| g.variant == f.variant && g.rule.id == f.rule.id)
        {
            Some((g, also)) => {
                let smaller = if f.scale > g.scale {
                    std::mem::replace(g, f).scale
                } else {
                    f.scale
                };
                also.push(smaller);
                also.sort_unstable();
            }
            None => out.push((f, Vec::new())),
        }
    }
    out
}

/// One operator's run in a line: Ready, T100, reconciles, writes and
/// requests per object, errors, time-to-Ready p99, and the top finding.
fn summary_line(g: &crate::figures::Group, findings: &[diagnosis::Finding]) -> String {
    let top = findings
        .iter()
        .find(|f| f.variant == g.variant && f.scale == g.scale)
        .map_or("nothing to fix found".to_string(), |f| {
            format!("top finding: {}", f.rule.name)
        });
    format!(
        "**{}**, N={}: {} Ready, T100 {}; per object {} reconciles, {} writes, {} API requests; {} reconcile errors; time-to-Ready p99 {}; {}",
        g.variant,
        g.scale,
        g.cell(Metric::Ready),
        g.cell(Metric::T100),
        g.cell(Metric::ReconcilesPerObject),
        g.cell(Metric::ApiWritesPerObject),
        g.cell(Metric::RequestsPerObject),
        g.cell(Metric::Errors),
        g.cell(Metric::TtrP99),
        top
    )
}

/// " Likely: `path:line` `text`; …" for a finding of the operator's own
/// code, from likely.csv; "" when it has none.
fn likely_lines(ctx: &ReportCtx, f: &diagnosis::Finding) -> String {
    let lines: Vec<String> = diagnosis::likely_for(&ctx.results.likely, &ctx.groups, f)
        .into_iter()
        .map(|l| {
            format!(
                "likely: {}:{} `{}`",
                l.path,
                l.line,
                l.text.replace('`', "'")
            )
        })
        .collect();
    if lines.is_empty() {
        return String::new();
    }
    format!(" {} (pointers, not evidence).", lines.join("; "))
}

/// For a LIST per reconcile where the run grew N: how the objects its
/// LISTs return grow per object, e.g. "; the objects its LISTs return:
/// linear per object (O(N²) in total), b = 1.00 [0.95, 1.06] over N = 50–500".
fn growth_clause(grown: &[crate::growth::Growth], f: &diagnosis::Finding) -> String {
    if f.rule.id != "list-per-reconcile" {
        return String::new();
    }
    grown
        .iter()
        .filter(|g| {
            g.variant == f.variant
                && g.figure.metric == crate::metrics::Metric::ListReturnedPerObject
        })
        .find_map(|g| g.fit.as_ref().ok())
        .map_or(String::new(), |fit| {
            format!(
                "; the objects its LISTs return: {}, {}",
                fit.verdict.words(),
                fit.line()
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finding(variant: &str, rule: usize, scale: u64) -> diagnosis::Finding {
        diagnosis::Finding {
            rule: &RULES[rule],
            scale,
            variant: variant.into(),
            evidence: format!("at {scale}"),
            cost: String::new(),
            framework: None,
        }
    }

    #[test]
    fn a_finding_at_several_scales_is_listed_once_at_the_largest() {
        let all = [
            finding("a", 0, 100),
            finding("a", 1, 100),
            finding("a", 0, 4900),
            finding("b", 0, 370),
            finding("a", 0, 370),
        ];
        let got: Vec<(&str, &str, u64, Vec<u64>)> = at_largest_n(&all)
            .into_iter()
            .map(|(f, also)| (f.variant.as_str(), f.rule.id, f.scale, also))
            .collect();
        assert_eq!(
            got,
            [
                ("a", RULES[0].id, 4900, vec![100, 370]),
                ("a", RULES[1].id, 100, vec![]),
                ("b", RULES[0].id, 370, vec![]),
            ]
        );
    }
}
