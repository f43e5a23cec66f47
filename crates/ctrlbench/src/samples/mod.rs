//! Samples: Prometheus text turned into rows (`prom`), the CSV files of a run
//! with their exact headers (`csv`), and the results directory (`layout`).

pub mod csv;
pub mod layout;
pub mod prom;
