//! `[[fault]]` entries, parsed once into a typed [`Fault`]: the target's
//! grammar (controller, apiserver:<k>, etcd:<k>, etcd:leader,
//! etcd:follower), whether the plane has that process, and when and how
//! long. The runner (run/faults.rs) reads only the typed form.

use super::errors::{Checked, Source};
use super::schema::{FaultAction, FaultSpec};
use super::top::WINDOW_S;

/// Which process a fault hits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultTarget {
    /// The run's controller (every replica of every controller of a
    /// concurrent group).
    Controller,
    /// Replica k of the run's controller(s), numbered from 0.
    ControllerReplica(usize),
    /// The replica that leads when the fault fires (leader election).
    ControllerLeader,
    ApiServer(usize),
    Etcd(usize),
    /// Whichever member leads when the fault fires.
    EtcdLeader,
    /// The first member that does not lead when the fault fires.
    EtcdFollower,
}

impl FaultTarget {
    /// Whether it hits a controller process (not the plane).
    pub fn is_controller(self) -> bool {
        matches!(
            self,
            FaultTarget::Controller
                | FaultTarget::ControllerReplica(_)
                | FaultTarget::ControllerLeader
        )
    }

    pub fn parse(s: &str) -> Option<FaultTarget> {
        Some(match s {
            "controller" => FaultTarget::Controller,
            "controller:leader" => FaultTarget::ControllerLeader,
            "etcd:leader" => FaultTarget::EtcdLeader,
            "etcd:follower" => FaultTarget::EtcdFollower,
            _ => {
                let (kind, k) = s.split_once(':')?;
                let k: usize = k.parse().ok()?;
                match kind {
                    "apiserver" => FaultTarget::ApiServer(k),
                    "etcd" => FaultTarget::Etcd(k),
                    "controller" => FaultTarget::ControllerReplica(k),
                    _ => return None,
                }
            }
        })
    }
}

impl std::fmt::Display for FaultTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FaultTarget::Controller => write!(f, "controller"),
            FaultTarget::ControllerReplica(k) => write!(f, "controller:{k}"),
            FaultTarget::ControllerLeader => write!(f, "controller:leader"),
            FaultTarget::ApiServer(k) => write!(f, "apiserver:{k}"),
            FaultTarget::Etcd(k) => write!(f, "etcd:{k}"),
            FaultTarget::EtcdLeader => write!(f, "etcd:leader"),
            FaultTarget::EtcdFollower => write!(f, "etcd:follower"),
        }
    }
}

/// A validated fault.
#[derive(Debug, Clone, PartialEq)]
pub struct Fault {
    /// Seconds after the load starts.
    pub at_s: f64,
    pub action: FaultAction,
    pub target: FaultTarget,
    /// stop: seconds stopped; restart: seconds down before the new start.
    pub duration_s: f64,
}

/// What the faults may hit: the plane's shape.
pub struct Plane {
    pub local: bool,
    pub etcd_members: usize,
    pub apiservers: usize,
}

/// Checks every `[[fault]]` against the plane and the window.
pub fn check(
    src: &Source,
    specs: &[FaultSpec],
    plane: &Plane,
    window_s: f64,
) -> Checked<Vec<Fault>> {
    specs
        .iter()
        .map(|f| check_one(src, f, plane, window_s))
        .collect()
}

fn check_one(src: &Source, f: &FaultSpec, plane: &Plane, window_s: f64) -> Checked<Fault> {
    let bad_target = |m: String| src.at("target", f.target.span(), m);
    let Some(target) = FaultTarget::parse(f.target.get_ref()) else {
        return Err(bad_target(format!(
            "unknown fault target {:?}: use controller, controller:<k>, controller:leader, apiserver:<k>, etcd:<k>, etcd:leader or etcd:follower",
            f.target.get_ref()
        )));
    };
    let plane_only = |what: &str| {
        if plane.local {
            Ok(())
        } else {
            Err(bad_target(format!(
                "{what} faults need the local plane, not an existing cluster"
            )))
        }
    };
    let (members, apiservers) = (plane.etcd_members, plane.apiservers);
    match target {
        // Checked against the variants' replicas and leases once they are known.
        FaultTarget::Controller
        | FaultTarget::ControllerReplica(_)
        | FaultTarget::ControllerLeader => {}
        FaultTarget::ApiServer(k) => {
            plane_only("apiserver")?;
            if k >= apiservers {
                return Err(bad_target(format!(
                    "apiserver:{k} does not exist: the plane has {apiservers} apiserver(s), numbered from 0 ([cluster] apiservers)"
                )));
            }
        }
        FaultTarget::Etcd(k) => {
            plane_only("etcd")?;
            if k >= members {
                return Err(bad_target(format!(
                    "etcd:{k} does not exist: the plane has {members} etcd member(s), numbered from 0 ([cluster] etcd_members)"
                )));
            }
        }
        FaultTarget::EtcdLeader => plane_only("etcd")?,
        FaultTarget::EtcdFollower => {
            plane_only("etcd")?;
            if members < 2 {
                return Err(bad_target(
                    "etcd:follower needs at least 2 etcd members ([cluster] etcd_members)".into(),
                ));
            }
        }
    }
    let at = *f.at_s.get_ref();
    if !(at >= 0.0 && at.is_finite()) {
        return Err(src.at(
            "at_s",
            f.at_s.span(),
            format!("must be a number of seconds ≥ 0, not {at}"),
        ));
    }
    if at >= window_s {
        return Err(src.at(
            "at_s",
            f.at_s.span(),
            format!(
                "the fault at {at} s comes after the window ({window_s} s): it would never run"
            ),
        ));
    }
    let d = *f.duration_s.get_ref();
    if !(d >= 0.0 && d <= WINDOW_S.1) {
        return Err(src.at(
            "duration_s",
            f.duration_s.span(),
            format!("must be from 0 to {} seconds, not {d}", WINDOW_S.1),
        ));
    }
    let action = *f.action.get_ref();
    if action == FaultAction::Stop && d <= 0.0 {
        return Err(src.at(
            "duration_s",
            f.action.span(),
            "a stop needs duration_s > 0 (how long the process stays stopped)",
        ));
    }
    Ok(Fault {
        at_s: at,
        action,
        target,
        duration_s: d,
    })
}
