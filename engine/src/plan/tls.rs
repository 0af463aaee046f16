//! The plan's `tls` section: every connection is TLS 1.3 (rustls), its certificate verified
//! against a CA file or, when the plan says so, not at all (engine addition).

use serde_json::Value;

use super::fields::{boolean, err, obj, string};
use super::PlanError;

/// Where the CA's certificates are: a PEM file on the load host, or the PEM text in the plan
/// (a plan sent to remote load hosts carries its CA with it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CaSource {
    File(String),
    Pem(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsSpec {
    /// The name sent as SNI and checked against the certificate (the target host by default).
    pub server_name: String,
    /// The CA the server's certificate must chain to; None: not verified.
    pub ca: Option<CaSource>,
    /// Offer the session tickets of earlier connections (TLS 1.3 resumption).
    pub resume: bool,
}

/// `tls`: `{"server_name"?, "ca_file"? | "ca_pem"?, "verify"?, "resume"?}`. Verifying is the
/// default, so a plan without a CA must say `"verify": false`.
pub(super) fn parse_tls(v: Option<&Value>, host: &str) -> Result<Option<TlsSpec>, PlanError> {
    let t = match v {
        None | Some(Value::Null) => return Ok(None),
        Some(t) => obj(t, "tls")?,
    };
    for key in t.keys() {
        if !["server_name", "ca_file", "ca_pem", "verify", "resume"].contains(&key.as_str()) {
            return err(format!("tls.{key} is not a known field"));
        }
    }
    let verify = boolean(t, "verify", "tls")?.unwrap_or(true);
    let ca = match (string(t, "ca_file", "tls")?, string(t, "ca_pem", "tls")?) {
        (Some(_), Some(_)) => return err("tls.ca_file and tls.ca_pem exclude each other"),
        (Some(f), None) => Some(CaSource::File(f.to_string())),
        (None, Some(p)) => Some(CaSource::Pem(p.to_string())),
        (None, None) => None,
    };
    match (verify, &ca) {
        (true, None) => {
            return err("tls.ca_file or tls.ca_pem is needed to verify the server's certificate (or tls.verify: false)")
        }
        (false, Some(_)) => return err("a CA and tls.verify: false exclude each other"),
        _ => {}
    }
    let server_name = string(t, "server_name", "tls")?
        .unwrap_or(host.trim_start_matches('[').trim_end_matches(']'))
        .to_string();
    if rustls::pki_types::ServerName::try_from(server_name.as_str()).is_err() {
        return err(format!(
            "tls.server_name {server_name:?} is not a DNS name or IP address"
        ));
    }
    Ok(Some(TlsSpec {
        server_name,
        ca,
        resume: boolean(t, "resume", "tls")?.unwrap_or(true),
    }))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::plan::Plan;

    fn base() -> serde_json::Value {
        json!({
            "protocol_version": 1,
            "target": {"host": "127.0.0.1", "port": 8443},
            "model": {"kind": "closed", "connections": 2, "duration_s": 1.0},
            "requests": [{"name": "pong", "path": "/", "expect": {"status": 200}}],
        })
    }

    #[test]
    fn tls_defaults_to_the_target_host_and_resumption() {
        let mut v = base();
        v["tls"] = json!({"ca_file": "/tmp/ca.pem"});
        let t = Plan::from_value(&v).unwrap().tls.unwrap();
        assert_eq!(t.server_name, "127.0.0.1");
        assert_eq!(t.ca, Some(super::CaSource::File("/tmp/ca.pem".into())));
        assert!(t.resume);
    }

    #[test]
    fn tls_refuses_an_unverified_default_and_unknown_fields() {
        for (tls, want) in [
            (json!({}), "tls.ca_file or tls.ca_pem is needed"),
            (
                json!({"verify": false, "ca_file": "x"}),
                "exclude each other",
            ),
            (json!({"ca_pem": "x", "ca_file": "x"}), "exclude each other"),
            (
                json!({"verify": false, "sni": "x"}),
                "tls.sni is not a known field",
            ),
            (
                json!({"verify": false, "server_name": "a b"}),
                "not a DNS name",
            ),
        ] {
            let mut v = base();
            v["tls"] = tls;
            let e = Plan::from_value(&v).unwrap_err().0;
            assert!(e.contains(want), "{e}");
        }
        let mut v = base();
        v["tls"] = json!({"verify": false, "resume": false, "server_name": "localhost"});
        let t = Plan::from_value(&v).unwrap().tls.unwrap();
        assert_eq!(
            (t.ca, t.resume, t.server_name.as_str()),
            (None, false, "localhost")
        );
    }
}
