//! The local control plane: etcd + kube-apiserver built from upstream Go
//! modules and started on loopback, envtest-style. It knows nothing of
//! experiments or runs. One small type per process
//! (`etcd`, `apiserver`, the optional `controller_manager`, `scheduler` and
//! `kwok`, the latter two with the fake `nodes`), the front that gives several apiservers one URL
//! (`front`), the CA (`tinyca`), the whole plane (`plane`, its processes
//! configured in `assemble`), named
//! planes that outlive the command (`state`), the binaries (`binaries`, the
//! lookup; `releases`, the versions known; `fetch`, release downloads,
//! verified; `go_build` and `kwok_build`) and
//! what is known of a version before building it (`known`).
//! `process` is the one way a child is started (process group, parent-death
//! signal), `cpus` where it runs; `progress` the one progress display; `testing` one shared plane
//! per test binary.

pub mod apiserver;
pub mod assemble;
pub mod audit;
pub mod bench;
pub mod binaries;
pub mod controller_manager;
pub mod cpus;
pub mod etcd;
pub mod fetch;
pub mod flags;
pub mod front;
pub mod go_build;
pub mod known;
pub mod kubeconfig;
pub mod kwok;
pub mod kwok_build;
pub mod nodes;
pub mod options;
pub mod origin;
pub mod plane;
pub mod process;
pub mod progress;
pub mod quota;
pub mod releases;
pub mod scheduler;
pub mod state;
pub mod supervisor;
pub mod tempdir;
pub mod testing;
pub mod tinyca;

pub use binaries::{Binaries, DEFAULT_K8S_VERSION};
pub use options::{Member, PlaneOptions};
pub use plane::ControlPlane;
