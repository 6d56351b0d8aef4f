//! The gateway's TLS: the per-job CA ([`JobCa`]) the sandbox trusts and the leaf certificates it
//! signs for secret hosts, the server side the worker's client talks to, and the client side
//! towards the real host, which verifies it against the system's roots plus the operator's.
//!
//! Every config is built on rustls' ring provider (aws-lc needs cmake). The CA's key never
//! leaves the bot's process: only [`JobCa::cert_pem`] goes into the sandbox.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, GeneralSubtree, IsCa,
    Issuer, KeyPair, KeyUsagePurpose, NameConstraints,
};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

use super::EgressError;

/// Only HTTP/1.1 is served to the worker and asked of the real host.
const ALPN_HTTP1: &[u8] = b"http/1.1";

/// A job's certificate authority: made fresh for the job, valid a few days around now, and
/// able to sign only end-entity certificates (path length 0).
pub struct JobCa {
    issuer: Issuer<'static, KeyPair>,
    cert_der: CertificateDer<'static>,
    cert_pem: String,
    /// Leaf configs by host: one key and certificate per host for the job.
    leaves: Mutex<HashMap<String, Arc<rustls::ServerConfig>>>,
}

impl fmt::Debug for JobCa {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JobCa").finish_non_exhaustive()
    }
}

/// The validity window of the CA and its leaves: from a day before today (clocks in the
/// sandbox may lag) to a few days after (longer than any job may run).
fn validity(params: &mut CertificateParams) {
    use chrono::{Datelike, Days, Utc};
    let today = Utc::now().date_naive();
    let ymd = |d: chrono::NaiveDate| rcgen::date_time_ymd(d.year(), d.month() as u8, d.day() as u8);
    if let (Some(before), Some(after)) = (
        today.checked_sub_days(Days::new(1)),
        today.checked_add_days(Days::new(4)),
    ) {
        params.not_before = ymd(before);
        params.not_after = ymd(after);
    }
}

fn cert_error(e: rcgen::Error) -> EgressError {
    EgressError::Certificate(e.to_string())
}

impl JobCa {
    /// A new CA, valid for any host name.
    pub fn generate() -> Result<JobCa, EgressError> {
        JobCa::make(None)
    }

    /// A new CA whose name constraints permit only `hosts` (and names below them): a client
    /// that checks constraints (OpenSSL, rustls, Go) would refuse its signature on any other
    /// name.
    pub fn generate_for(hosts: &[String]) -> Result<JobCa, EgressError> {
        if hosts.is_empty() {
            return JobCa::make(None);
        }
        JobCa::make(Some(NameConstraints {
            permitted_subtrees: hosts
                .iter()
                .map(|h| GeneralSubtree::DnsName(h.clone()))
                .collect(),
            excluded_subtrees: Vec::new(),
        }))
    }

    fn make(constraints: Option<NameConstraints>) -> Result<JobCa, EgressError> {
        let key = KeyPair::generate().map_err(cert_error)?;
        let mut params = CertificateParams::default();
        params
            .distinguished_name
            .push(DnType::CommonName, "forgeward egress job CA");
        params
            .distinguished_name
            .push(DnType::OrganizationName, "forgeward");
        params.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
        params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        params.name_constraints = constraints;
        validity(&mut params);
        let cert = params.self_signed(&key).map_err(cert_error)?;
        Ok(JobCa {
            cert_pem: cert.pem(),
            cert_der: cert.der().clone(),
            issuer: Issuer::new(params, key),
            leaves: Mutex::new(HashMap::new()),
        })
    }

    /// The CA's certificate, PEM: what the sandbox's trust store adds.
    pub fn cert_pem(&self) -> String {
        self.cert_pem.clone()
    }

    /// The CA's certificate, DER.
    pub fn cert_der(&self) -> &CertificateDer<'static> {
        &self.cert_der
    }

    /// A leaf certificate for `host` signed by this CA, and its key (ECDSA P-256).
    pub fn issue(
        &self,
        host: &str,
    ) -> Result<(CertificateDer<'static>, PrivateKeyDer<'static>), EgressError> {
        let key = KeyPair::generate().map_err(cert_error)?;
        let mut params = CertificateParams::new(vec![host.to_owned()]).map_err(cert_error)?;
        params.distinguished_name.push(DnType::CommonName, host);
        params.is_ca = IsCa::ExplicitNoCa;
        params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        params.use_authority_key_identifier_extension = true;
        validity(&mut params);
        let cert = params.signed_by(&key, &self.issuer).map_err(cert_error)?;
        let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()));
        Ok((cert.der().clone(), key))
    }

    /// The server config the gateway presents to the worker for `host`, made on first use
    /// and kept for the job.
    pub(crate) fn server_config(
        &self,
        host: &str,
    ) -> Result<Arc<rustls::ServerConfig>, EgressError> {
        if let Some(config) = self.lock_leaves().get(host) {
            return Ok(config.clone());
        }
        let (cert, key) = self.issue(host)?;
        let mut config = rustls::ServerConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .map_err(tls_error)?
            .with_no_client_auth()
            .with_single_cert(vec![cert, self.cert_der.clone()], key)
            .map_err(tls_error)?;
        config.alpn_protocols = vec![ALPN_HTTP1.to_vec()];
        let config = Arc::new(config);
        self.lock_leaves()
            .entry(host.to_owned())
            .or_insert_with(|| config.clone());
        Ok(config)
    }

    fn lock_leaves(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<rustls::ServerConfig>>> {
        // A panic while holding the lock leaves a map that is still whole.
        self.leaves.lock().unwrap_or_else(|p| p.into_inner())
    }
}

fn tls_error(e: rustls::Error) -> EgressError {
    EgressError::Tls(e.to_string())
}

pub(crate) fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// The client config towards real hosts: the system's roots plus `extra`, ALPN http/1.1.
pub(crate) fn upstream_config(
    extra: &[CertificateDer<'static>],
) -> Result<Arc<rustls::ClientConfig>, EgressError> {
    let mut roots = rustls::RootCertStore::empty();
    roots.add_parsable_certificates(rustls_native_certs::load_native_certs().certs);
    let (_, unparsable) = roots.add_parsable_certificates(extra.iter().cloned());
    if unparsable > 0 {
        return Err(EgressError::Tls(format!(
            "{unparsable} of the configured extra roots could not be read as certificates"
        )));
    }
    let mut config = rustls::ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(tls_error)?
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![ALPN_HTTP1.to_vec()];
    Ok(Arc::new(config))
}

/// The certificates in a PEM bundle (the operator's extra roots).
pub fn parse_pem_certs(pem: &[u8]) -> Result<Vec<CertificateDer<'static>>, EgressError> {
    let certs = CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| EgressError::Tls(format!("a PEM bundle could not be read: {e}")))?;
    if certs.is_empty() {
        return Err(EgressError::Tls(
            "the PEM bundle holds no certificate".to_owned(),
        ));
    }
    Ok(certs)
}

/// The system's roots as one PEM bundle (read by rustls-native-certs, which honours
/// `SSL_CERT_FILE` and `SSL_CERT_DIR`): with [`JobCa::cert_pem`] appended, the sandbox's CA
/// bundle. Empty when the system has none.
pub fn system_bundle_pem() -> String {
    use base64::Engine;
    let mut out = String::new();
    for cert in rustls_native_certs::load_native_certs().certs {
        let b64 = base64::engine::general_purpose::STANDARD.encode(cert.as_ref());
        out.push_str("-----BEGIN CERTIFICATE-----\n");
        for line in b64.as_bytes().chunks(64) {
            out.push_str(&String::from_utf8_lossy(line));
            out.push('\n');
        }
        out.push_str("-----END CERTIFICATE-----\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ca_signs_leaves_a_client_trusting_it_accepts() {
        let ca = JobCa::generate().unwrap();
        assert!(ca.cert_pem().starts_with("-----BEGIN CERTIFICATE-----"));
        let (leaf, _) = ca.issue("api.example.com").unwrap();
        let mut roots = rustls::RootCertStore::empty();
        roots.add(ca.cert_der().clone()).unwrap();
        let verifier = rustls::client::WebPkiServerVerifier::builder_with_provider(
            Arc::new(roots),
            provider(),
        )
        .build()
        .unwrap();
        let now = rustls::pki_types::UnixTime::now();
        let name = rustls::pki_types::ServerName::try_from("api.example.com").unwrap();
        use rustls::client::danger::ServerCertVerifier;
        verifier
            .verify_server_cert(&leaf, &[], &name, &[], now)
            .unwrap();
        let other = rustls::pki_types::ServerName::try_from("other.example.com").unwrap();
        assert!(
            verifier
                .verify_server_cert(&leaf, &[], &other, &[], now)
                .is_err()
        );
        // The config is made once per host.
        let a = ca.server_config("api.example.com").unwrap();
        let b = ca.server_config("api.example.com").unwrap();
        assert!(Arc::ptr_eq(&a, &b));
    }

    #[test]
    fn a_constrained_ca_cannot_vouch_for_other_names() {
        let ca = JobCa::generate_for(&["api.example.com".to_owned()]).unwrap();
        let mut roots = rustls::RootCertStore::empty();
        roots.add(ca.cert_der().clone()).unwrap();
        let verifier = rustls::client::WebPkiServerVerifier::builder_with_provider(
            Arc::new(roots),
            provider(),
        )
        .build()
        .unwrap();
        use rustls::client::danger::ServerCertVerifier;
        let now = rustls::pki_types::UnixTime::now();
        let (good, _) = ca.issue("api.example.com").unwrap();
        let name = rustls::pki_types::ServerName::try_from("api.example.com").unwrap();
        verifier
            .verify_server_cert(&good, &[], &name, &[], now)
            .unwrap();
        let (bad, _) = ca.issue("pypi.example.com").unwrap();
        let name = rustls::pki_types::ServerName::try_from("pypi.example.com").unwrap();
        assert!(
            verifier
                .verify_server_cert(&bad, &[], &name, &[], now)
                .is_err()
        );
    }

    #[test]
    fn pem_bundles_round_trip() {
        let ca = JobCa::generate().unwrap();
        let certs = parse_pem_certs(ca.cert_pem().as_bytes()).unwrap();
        assert_eq!(certs, vec![ca.cert_der().clone()]);
        assert!(parse_pem_certs(b"not pem").is_err());
        let bundle = system_bundle_pem();
        assert!(
            !bundle.is_empty(),
            "the system has no CA roots: install Debian's ca-certificates"
        );
        assert!(parse_pem_certs(bundle.as_bytes()).unwrap().len() > 10);
    }
}
