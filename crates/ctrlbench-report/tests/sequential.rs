//! "Repeats until decided" peeks after every repeat; this holds its error
//! rate. 10 000 simulated A/A sequences per case (two runs of one
//! controller per repeat, so the true ratio is 1) look at every repeat from
//! the first to `MAX_LOOKS` with the production decision code (the pooled,
//! look-adjusted interval of `evidence`, then `verdict::decide`) and stop
//! at the first decided look. A sequence that ever decides "higher" or
//! "lower" is a false decision; every case must stay at or below 5 %. Per-run
//! noise is normal or Student's t with 3 degrees of freedom (scaled to the
//! same standard deviation) at 3, 8 and 13 %, with a slow drift of the
//! machine between runs (AB then BA: the order alternates, as the plan's
//! counterbalancing does), judged with the default spread and with a
//! calibration that measured the true one over 10 repeats; and at 30 and
//! 45 % per run (a few-second run's Ready/s), beyond what the counts'
//! default assumes, with the timings' default (and the counts' at 30 %).

mod common;

use common::normal;
use ctrlbench_record::manifest::Spread;
use ctrlbench_report::evidence::{self, DEFAULT_SPREAD, DEFAULT_TIMING_SPREAD};
use ctrlbench_report::verdict::{Verdict, decide};
use rand::SeedableRng;
use rand::rngs::StdRng;

const SEQUENCES: usize = 10_000;
const MAX_LOOKS: u32 = 10;
const MARGIN: f64 = 0.05;
/// The machine gets this much slower (log scale) with every run.
const DRIFT_PER_RUN: f64 = 0.01;

#[derive(Clone, Copy, Debug)]
enum Noise {
    Normal,
    T3,
}

/// One draw with standard deviation 1.
fn draw(rng: &mut StdRng, noise: Noise) -> f64 {
    match noise {
        Noise::Normal => normal(rng),
        Noise::T3 => {
            let chi2: f64 = (0..3).map(|_| normal(rng).powi(2)).sum();
            // t3 has variance 3.
            normal(rng) / (chi2 / 3.0).sqrt() / 3f64.sqrt()
        }
    }
}

/// The share of sequences that ever decide higher or lower, and the share
/// that end decided equivalent.
fn simulate(noise: Noise, sd: f64, prior: Spread, seed: u64) -> (f64, f64) {
    let mut rng = StdRng::seed_from_u64(seed);
    let (mut wrong, mut equivalent) = (0usize, 0usize);
    for _ in 0..SEQUENCES {
        let mut logs = Vec::new();
        let mut run = 0.0;
        for k in 0..MAX_LOOKS {
            // A then B on even repeats, B then A on odd ones.
            let (pos_a, pos_b) = if k % 2 == 0 { (0.0, 1.0) } else { (1.0, 0.0) };
            let a = sd * draw(&mut rng, noise) + DRIFT_PER_RUN * (run + pos_a);
            let b = sd * draw(&mut rng, noise) + DRIFT_PER_RUN * (run + pos_b);
            run += 2.0;
            logs.push(b - a);
            let (interval, _) = evidence::pooled_interval(&logs, prior, MAX_LOOKS).unwrap();
            match decide(Some(interval), MARGIN) {
                Verdict::Higher | Verdict::Lower => {
                    wrong += 1;
                    break;
                }
                Verdict::Equivalent => {
                    equivalent += 1;
                    break;
                }
                Verdict::Undecided => {}
            }
        }
    }
    (
        wrong as f64 / SEQUENCES as f64,
        equivalent as f64 / SEQUENCES as f64,
    )
}

#[test]
fn no_a_a_sequence_is_decided_higher_or_lower_more_than_five_percent_of_the_time() {
    let mut table = String::from(
        "| noise | per-run spread | prior | false decisions | ended equivalent |\n|---|---|---|---|---|\n",
    );
    let mut worst: f64 = 0.0;
    let mut seed = 1;
    for noise in [Noise::Normal, Noise::T3] {
        for sd in [0.03, 0.08, 0.13, 0.30, 0.45] {
            let calibrated = Spread {
                s: sd * 2f64.sqrt(),
                df: 9.0,
            };
            // Timings' default covers every case; the counts' covers up
            // to 30 % per run (a pair 42 % apart, 1.4 times its own 30 %:
            // the repeats widen it), not the few-second runs' 45 %, where
            // it errs about 10 % of the time and timings take theirs.
            let mut priors = vec![("timing default", DEFAULT_TIMING_SPREAD)];
            if sd <= 0.30 {
                priors.push(("default", DEFAULT_SPREAD));
            }
            if sd <= 0.13 {
                priors.push(("calibrated", calibrated));
            }
            for (name, prior) in priors {
                seed += 1;
                let (wrong, eq) = simulate(noise, sd, prior, seed);
                worst = worst.max(wrong);
                table.push_str(&format!(
                    "| {noise:?} | {:.0} % | {name} | {:.2} % | {:.1} % |\n",
                    sd * 100.0,
                    wrong * 100.0,
                    eq * 100.0
                ));
                assert!(
                    wrong <= 0.05,
                    "{noise:?} at {sd}, {name} prior: {:.2} % false decisions\n{table}",
                    wrong * 100.0
                );
            }
        }
    }
    println!("{table}worst: {:.2} %", worst * 100.0);
}

/// The same code does decide: a real 10 % difference at 3 % per-run noise
/// is found higher in most sequences, calibrated (a rule that never
/// decides would pass the test above), and in many without a calibration,
/// once the repeats' own small spread contradicts the timings' 65 %
/// default (held at that default, no sequence would reach it in 10 looks).
#[test]
fn a_ten_percent_difference_is_decided_higher() {
    let sd = 0.03;
    let calibrated = Spread {
        s: sd * 2f64.sqrt(),
        df: 9.0,
    };
    for (name, prior, least) in [
        ("calibrated", calibrated, 1400),
        ("timing default", DEFAULT_TIMING_SPREAD, 1000),
    ] {
        let mut rng = StdRng::seed_from_u64(7);
        let mut higher = 0;
        for _ in 0..2000 {
            let mut logs = Vec::new();
            for _ in 0..MAX_LOOKS {
                logs.push(
                    1.1f64.ln()
                        + sd * (draw(&mut rng, Noise::Normal) - draw(&mut rng, Noise::Normal)),
                );
                let (i, _) = evidence::pooled_interval(&logs, prior, MAX_LOOKS).unwrap();
                let v = decide(Some(i), MARGIN);
                if v.decided() {
                    higher += usize::from(v == Verdict::Higher);
                    break;
                }
            }
        }
        println!("10 % at 3 % per run, {name}: {higher} of 2000 decided higher");
        assert!(higher > least, "{name}: {higher} of 2000 decided higher");
    }
}
