//! `run --grow [--max-n N] [--budget-minutes M]`: the clap flags alone,
//! flattened into `RunArgs`. What they mean, and every check, is
//! `experiment::grow`'s.

use clap::Args;

#[derive(Args, Clone, Debug, Default)]
pub struct GrowArgs {
    /// Pick the scales of a growth study: 4, geometric, spanning at least
    /// 10× from the file's smallest scale (at least 100) to --max-n or what
    /// the time budget and memory allow, in 2 rounds (--repeats sets more),
    /// each round visiting every scale before the next. Replaces the
    /// file's scales and repeats; not with --scales or --until-decided.
    #[arg(long)]
    pub grow: bool,
    /// With --grow: the largest scale (at least 10× the smallest, at most
    /// 1 000 000); without it, the budget and memory decide.
    #[arg(long, value_name = "N")]
    pub max_n: Option<u64>,
    /// With --grow: the minutes the runs may take (default 30), priced by
    /// the plan's estimate (optimistic when runs stop once converged), then
    /// re-estimated from round 1's smallest scale: without --max-n that
    /// re-picks the largest N, up or down; with it, drops the largest
    /// scales that no longer fit.
    #[arg(long, value_name = "M")]
    pub budget_minutes: Option<f64>,
}
