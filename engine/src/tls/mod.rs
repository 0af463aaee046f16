//! TLS 1.3 for the engine's connections (rustls with ring): the client configuration a plan's
//! `tls` section makes (trust, ALPN, resumption), and the reasons a handshake fails.

mod stats;

use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::Resumption;
use rustls::crypto::{ring, verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};

use crate::plan::{CaSource, TlsSpec};
pub use stats::TlsStats;

/// Why a TLS connection failed, as counted in the result's `tls.failures`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum TlsFailure {
    /// The server's bytes were not TLS records (a plaintext server, for one).
    NotTls,
    /// The certificate did not verify against the CA, or does not name the server.
    Certificate,
    /// The server sent a fatal alert.
    Alert,
    /// The server chose no protocol the engine offered (h2 asked, HTTP/1.1 or nothing chosen).
    Alpn,
    /// The server closed or reset the connection during the handshake.
    Closed,
    /// The handshake did not finish within the request timeout.
    Timeout,
    /// Anything else rustls refused (a version or cipher the server could not agree on, a
    /// broken record after the handshake).
    Other,
}

impl TlsFailure {
    pub fn name(self) -> &'static str {
        match self {
            TlsFailure::NotTls => "not_tls",
            TlsFailure::Certificate => "certificate",
            TlsFailure::Alert => "alert",
            TlsFailure::Alpn => "alpn",
            TlsFailure::Closed => "closed",
            TlsFailure::Timeout => "timeout",
            TlsFailure::Other => "other",
        }
    }

    pub fn of(e: &rustls::Error) -> TlsFailure {
        use rustls::Error as E;
        match e {
            E::InvalidMessage(_) | E::InappropriateMessage { .. } => TlsFailure::NotTls,
            E::InvalidCertificate(_) => TlsFailure::Certificate,
            E::AlertReceived(rustls::AlertDescription::NoApplicationProtocol)
            | E::NoApplicationProtocol => TlsFailure::Alpn,
            E::AlertReceived(_) => TlsFailure::Alert,
            _ => TlsFailure::Other,
        }
    }
}

/// Why a `tls` section could not become a client configuration.
pub fn client_config(spec: &TlsSpec, alpn: &[&[u8]]) -> Result<Arc<ClientConfig>, String> {
    let provider = Arc::new(ring::default_provider());
    let builder = ClientConfig::builder_with_provider(Arc::clone(&provider))
        .with_protocol_versions(&[&rustls::version::TLS13])
        .map_err(|e| format!("TLS 1.3: {e}"))?;
    let mut cfg = match &spec.ca {
        Some(ca) => builder
            .with_root_certificates(roots(ca)?)
            .with_no_client_auth(),
        None => builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(Unverified(provider)))
            .with_no_client_auth(),
    };
    cfg.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    if !spec.resume {
        cfg.resumption = Resumption::disabled();
    }
    Ok(Arc::new(cfg))
}

/// The CA's certificates, from a PEM file or PEM text.
fn roots(ca: &CaSource) -> Result<RootCertStore, String> {
    let (what, certs): (String, Vec<_>) = match ca {
        CaSource::File(path) => (
            format!("tls.ca_file {path}"),
            CertificateDer::pem_file_iter(path)
                .map_err(|e| format!("tls.ca_file {path}: {e}"))?
                .collect(),
        ),
        CaSource::Pem(text) => (
            "tls.ca_pem".to_string(),
            CertificateDer::pem_slice_iter(text.as_bytes()).collect(),
        ),
    };
    let mut roots = RootCertStore::empty();
    for cert in certs {
        let cert = cert.map_err(|e| format!("{what}: {e}"))?;
        roots.add(cert).map_err(|e| format!("{what}: {e}"))?;
    }
    if roots.is_empty() {
        return Err(format!("{what} holds no certificate"));
    }
    Ok(roots)
}

/// The server name of a spec (checked when the plan was read).
pub fn server_name(spec: &TlsSpec) -> ServerName<'static> {
    ServerName::try_from(spec.server_name.clone()).expect("checked by the plan")
}

/// `verify: false`: any certificate is taken, but the handshake's signatures are still checked
/// (the server holds the key of the certificate it showed).
#[derive(Debug)]
struct Unverified(Arc<CryptoProvider>);

impl ServerCertVerifier for Unverified {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}
