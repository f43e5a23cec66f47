//! The power the report and `--dry-run` state is what the decision code
//! does: for each case, K = `evidence::repeats_for` repeats of simulated
//! pairs (each pair's log ratio normal around the true effect, spreading as
//! the calibration says) are judged with the production code
//! (`evidence::pooled_interval`, then `verdict::decide`), and about 80 % of
//! them are decided in the effect's direction; one repeat fewer decides
//! fewer. The change `evidence::detectable` names is decided about 80 % of
//! the time too.

mod common;

use common::normal;
use ctrlbench_record::manifest::Spread;
use ctrlbench_report::evidence;
use ctrlbench_report::verdict::{Verdict, decide};
use rand::SeedableRng;
use rand::rngs::StdRng;

const SIMULATIONS: usize = 4000;
const MARGIN: f64 = 0.05;

/// The share of `repeats`-pair runs decided in the direction of `effect`.
fn decided(spread: Spread, effect: f64, repeats: u32, looks: u32, seed: u64) -> f64 {
    let mut rng = StdRng::seed_from_u64(seed);
    let want = if effect > 1.0 {
        Verdict::Higher
    } else {
        Verdict::Lower
    };
    let mut hits = 0;
    for _ in 0..SIMULATIONS {
        let logs: Vec<f64> = (0..repeats)
            .map(|_| effect.ln() + spread.s * normal(&mut rng))
            .collect();
        let (interval, _) = evidence::pooled_interval(&logs, spread, looks).unwrap();
        if decide(Some(interval), MARGIN) == want {
            hits += 1;
        }
    }
    hits as f64 / SIMULATIONS as f64
}

#[test]
fn the_stated_repeats_reach_eighty_percent_power_and_one_fewer_does_not() {
    let cases = [
        // (spread, df, effect, looks)
        (0.034, 5.0, 1.10, 1),
        (0.034, 5.0, 0.90, 8),
        (0.08, 9.0, 1.25, 1),
        (0.08, 9.0, 1.10, 10),
        (0.30, 4.0, 3.0, 1),
    ];
    let mut seed = 7;
    for (s, df, effect, looks) in cases {
        let spread = Spread { s, df };
        let k = evidence::repeats_for(spread, effect, MARGIN, 0.8, looks, 40)
            .unwrap_or_else(|| panic!("{s} {effect}: not within 40 repeats"));
        seed += 1;
        let at_k = decided(spread, effect, k, looks, seed);
        assert!(
            at_k >= 0.74,
            "spread {s}, effect {effect}, {looks} looks: {k} repeats decide {at_k}"
        );
        if k > 1 {
            let fewer = decided(spread, effect, k - 1, looks, seed + 100);
            assert!(
                fewer < 0.86 && fewer < at_k,
                "spread {s}, effect {effect}: {} repeats already decide {fewer}",
                k - 1
            );
        }
        let d = evidence::detectable(spread, MARGIN, 0.8, k, looks);
        let at_d = decided(spread, 1.0 + d, k, looks, seed + 200);
        assert!(
            (0.72..=0.88).contains(&at_d),
            "spread {s}: a change of {d} at {k} repeats is decided {at_d}"
        );
        println!(
            "spread {s} df {df}, effect {effect}, {looks} looks: {k} repeats, decided {at_k:.3}; {d:.3} at {k}: {at_d:.3}"
        );
    }
}

#[test]
fn the_default_spread_puts_ten_percent_out_of_reach_and_says_what_is_not() {
    let e = evidence::default_evidence(8);
    let lines = evidence::power_lines(&e, &["Ready/s"], MARGIN, 10);
    assert_eq!(lines.len(), 1);
    assert!(
        lines[0].starts_with(
            "Ready/s: a 10 % change is out of reach in 10 repeats, which decide a change of "
        ),
        "{}",
        lines[0]
    );
    let mut calibrated = evidence::default_evidence(1);
    calibrated
        .spread
        .insert("Ready/s".into(), Spread { s: 0.034, df: 5.0 });
    let lines = evidence::power_lines(&calibrated, &["Ready/s"], MARGIN, 10);
    assert!(
        lines[0].starts_with("Ready/s: a 10 % change is decided with 80 % probability in "),
        "{}",
        lines[0]
    );
}
