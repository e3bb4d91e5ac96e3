//! TLS for the listener: a certificate chain and a PKCS#8 or RSA key from PEM files
//! (`RAPID_PG_TLS_CERT`, `RAPID_PG_TLS_KEY`), served with rustls on ring. Clients ask for it with
//! PostgreSQL's SSLRequest (`sslmode=require`).

use std::fs::File;
use std::io::BufReader;
use std::path::Path;
use std::sync::Arc;

use datafusion_postgres::pgwire::tokio::TlsAcceptor;
use tokio_rustls::rustls::crypto::ring::default_provider;
use tokio_rustls::rustls::pki_types::CertificateDer;
use tokio_rustls::rustls::ServerConfig;

/// The acceptor for `cert` and `key`; an error names the file and what is wrong with it.
pub fn acceptor(cert: &Path, key: &Path) -> std::io::Result<TlsAcceptor> {
    let invalid = |what: &Path, e: &dyn std::fmt::Display| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("PostgreSQL TLS: {}: {e}", what.display()),
        )
    };
    let certs: Vec<CertificateDer<'static>> = rustls_pemfile::certs(&mut BufReader::new(
        File::open(cert).map_err(|e| invalid(cert, &e))?,
    ))
    .collect::<Result<_, _>>()
    .map_err(|e| invalid(cert, &e))?;
    if certs.is_empty() {
        return Err(invalid(cert, &"no certificate in the file"));
    }
    let key_der = rustls_pemfile::private_key(&mut BufReader::new(
        File::open(key).map_err(|e| invalid(key, &e))?,
    ))
    .map_err(|e| invalid(key, &e))?
    .ok_or_else(|| invalid(key, &"no private key in the file"))?;
    let config = ServerConfig::builder_with_provider(Arc::new(default_provider()))
        .with_safe_default_protocol_versions()
        .map_err(|e| invalid(cert, &e))?
        .with_no_client_auth()
        .with_single_cert(certs, key_der)
        .map_err(|e| invalid(cert, &e))?;
    Ok(TlsAcceptor::from(Arc::new(config)))
}
