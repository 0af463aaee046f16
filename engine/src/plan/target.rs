//! Where the load goes: the `target` host and port, resolved, and the loopback-only rule.

use std::net::{IpAddr, SocketAddr, ToSocketAddrs};

use serde_json::{Map, Value};

use super::fields::{boolean, err, obj, req_int, string};
use super::PlanError;

/// 127.0.0.0/8 and ::1 (also IPv4-mapped loopback).
pub fn is_loopback(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.is_loopback(),
        IpAddr::V6(v6) => {
            v6.is_loopback() || v6.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
        }
    }
}

/// The target's host (as given) and resolved address; refuses non-loopback targets unless the
/// plan's `allow_remote` says otherwise.
pub(super) fn parse_target(plan: &Map<String, Value>) -> Result<(String, SocketAddr), PlanError> {
    let t = obj(plan.get("target").unwrap_or(&Value::Null), "target")?;
    let host = string(t, "host", "target")?
        .unwrap_or("127.0.0.1")
        .to_owned();
    let port = req_int(t, "port", "target")?;
    if port == 0 || port > 65535 {
        return err("target.port must be in 1..=65535");
    }
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    let addr = match (bare, port as u16).to_socket_addrs() {
        Ok(mut it) => match it.next() {
            Some(a) => a,
            None => return err(format!("target.host {host:?} does not resolve")),
        },
        Err(e) => return err(format!("target.host {host:?} does not resolve: {e}")),
    };
    let allow_remote = boolean(plan, "allow_remote", "plan")?.unwrap_or(false);
    if !allow_remote && !is_loopback(addr.ip()) {
        return err(format!(
            "target {addr} is outside loopback; refusing without allow_remote / --allow-remote"
        ));
    }
    Ok((host, addr))
}
