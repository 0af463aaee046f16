//! A TLS front for the test servers: a test CA made here (rcgen) signs a certificate for
//! 127.0.0.1 and localhost; the front terminates TLS 1.3 with it (rustls), relays the plaintext
//! to a backend test server, and counts handshakes, resumed sessions and the protocol ALPN
//! chose, so tests can demand that the engine's TLS counts equal the server's.

use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use rustls::{HandshakeKind, ServerConfig, ServerConnection};

/// A CA, its PEM file (what a plan's `tls.ca_file` names) and a server certificate it signed.
pub struct TestCa {
    pub ca_file: PathBuf,
    chain: Vec<CertificateDer<'static>>,
    key: Vec<u8>,
}

impl TestCa {
    pub fn new() -> TestCa {
        static N: AtomicU64 = AtomicU64::new(0);
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        let ca = CertifiedIssuer::self_signed(params, KeyPair::generate().unwrap()).unwrap();
        let key = KeyPair::generate().unwrap();
        let leaf = CertificateParams::new(vec!["127.0.0.1".into(), "localhost".into()])
            .unwrap()
            .signed_by(&key, &ca)
            .unwrap();
        let n = N.fetch_add(1, Ordering::SeqCst);
        let ca_file =
            std::env::temp_dir().join(format!("wsgibench-test-ca-{}-{n}.pem", std::process::id()));
        std::fs::write(&ca_file, ca.pem()).unwrap();
        TestCa {
            ca_file,
            chain: vec![leaf.der().clone()],
            key: key.serialize_der(),
        }
    }

    pub fn ca(&self) -> String {
        self.ca_file.to_string_lossy().into_owned()
    }
}

impl Drop for TestCa {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.ca_file);
    }
}

#[derive(Default)]
pub struct TlsCounts {
    pub handshakes: AtomicU64,
    pub resumed: AtomicU64,
    /// Handshakes where ALPN chose h2, http/1.1, or nothing.
    pub alpn_h2: AtomicU64,
    pub alpn_http11: AtomicU64,
    pub alpn_none: AtomicU64,
    /// Connections whose handshake failed on the server's side.
    pub failed: AtomicU64,
}

pub struct TlsFront {
    pub port: u16,
    pub counts: Arc<TlsCounts>,
    stop: Arc<AtomicBool>,
}

impl Drop for TlsFront {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

impl TlsFront {
    /// TLS on a free port in front of `backend`, offering `alpn` (empty: no ALPN).
    pub fn start(backend: u16, ca: &TestCa, alpn: &[&[u8]]) -> TlsFront {
        let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(ca.key.clone()));
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut cfg = ServerConfig::builder_with_provider(provider)
            .with_protocol_versions(&[&rustls::version::TLS13])
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(ca.chain.clone(), key)
            .unwrap();
        cfg.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
        let cfg = Arc::new(cfg);
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let counts = Arc::new(TlsCounts::default());
        let stop = Arc::new(AtomicBool::new(false));
        let c = counts.clone();
        super::accept_until(listener, stop.clone(), move |_, conn| {
            relay(conn, backend, cfg.clone(), &c)
        });
        TlsFront { port, counts, stop }
    }

    pub fn n(&self, f: impl Fn(&TlsCounts) -> &AtomicU64) -> u64 {
        f(&self.counts).load(Ordering::SeqCst)
    }
}

/// Handshake, then move bytes both ways until either side closes.
fn relay(mut client: TcpStream, backend: u16, cfg: Arc<ServerConfig>, c: &TlsCounts) {
    let mut tls = ServerConnection::new(cfg).unwrap();
    client.set_nodelay(true).unwrap();
    client
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    while tls.is_handshaking() {
        if tls.complete_io(&mut client).is_err() {
            c.failed.fetch_add(1, Ordering::SeqCst);
            return;
        }
    }
    c.handshakes.fetch_add(1, Ordering::SeqCst);
    if tls.handshake_kind() == Some(HandshakeKind::Resumed) {
        c.resumed.fetch_add(1, Ordering::SeqCst);
    }
    match tls.alpn_protocol() {
        Some(b"h2") => &c.alpn_h2,
        Some(_) => &c.alpn_http11,
        None => &c.alpn_none,
    }
    .fetch_add(1, Ordering::SeqCst);
    let mut back = TcpStream::connect(("127.0.0.1", backend)).unwrap();
    back.set_nodelay(true).unwrap();
    let _ = pump(&mut client, &mut back, &mut tls);
    let _ = client.shutdown(Shutdown::Both);
    let _ = back.shutdown(Shutdown::Both);
}

fn pump(
    client: &mut TcpStream,
    back: &mut TcpStream,
    tls: &mut ServerConnection,
) -> io::Result<()> {
    client.set_nonblocking(true)?;
    back.set_nonblocking(true)?;
    let mut buf = vec![0u8; 64 * 1024];
    // Requests that came with the client's Finished are already opened.
    let mut early = Vec::new();
    let _ = tls.reader().read_to_end(&mut early);
    write_all(back, &early)?;
    loop {
        flush(client, tls)?;
        let mut fds = [
            libc::pollfd {
                fd: client.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: back.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        // SAFETY: two valid pollfd entries.
        unsafe { libc::poll(fds.as_mut_ptr(), 2, 200) };
        if fds[0].revents != 0 {
            match tls.read_tls(client) {
                Ok(0) => return Ok(()),
                Ok(_) => {
                    tls.process_new_packets().map_err(io::Error::other)?;
                    let mut plain = Vec::new();
                    let _ = tls.reader().read_to_end(&mut plain);
                    write_all(back, &plain)?;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(e),
            }
        }
        if fds[1].revents != 0 {
            match back.read(&mut buf) {
                Ok(0) => {
                    tls.send_close_notify();
                    return flush(client, tls);
                }
                Ok(n) => tls.writer().write_all(&buf[..n])?,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(e),
            }
        }
    }
}

fn flush(client: &mut TcpStream, tls: &mut ServerConnection) -> io::Result<()> {
    while tls.wants_write() {
        match tls.write_tls(client) {
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(1))
            }
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

fn write_all(s: &mut TcpStream, mut bytes: &[u8]) -> io::Result<()> {
    while !bytes.is_empty() {
        match s.write(bytes) {
            Ok(n) => bytes = &bytes[n..],
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(1))
            }
            Err(e) => return Err(e),
        }
    }
    Ok(())
}
