//! The local control plane: etcd + kube-apiserver built from upstream Go
//! modules and started on loopback, envtest-style. One small type per process
//! (`etcd`, `apiserver`), the CA (`tinyca`), the whole plane (`plane`), named
//! planes that outlive the command (`state`), and the binaries (`binaries`).

pub mod apiserver;
pub mod bench;
pub mod binaries;
pub mod etcd;
pub mod kubeconfig;
pub mod plane;
pub mod process;
pub mod state;
pub mod tinyca;

pub use binaries::{Binaries, DEFAULT_K8S_VERSION};
pub use plane::{ControlPlane, PlaneOptions};
