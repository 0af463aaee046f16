//! Client sockets: non-blocking connect with TCP_NODELAY, optional loopback source spreading and SO_LINGER 0.

use std::io;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use socket2::{Domain, Protocol, Socket, Type};

/// How a connect attempt ended before any event loop involvement.
pub enum ConnectStart {
    /// Handshake under way (or already done); wait for writability.
    Pending(mio::net::TcpStream),
    Failed(io::Error),
}

/// Cycles client source addresses over 127.0.0.1..=127.0.0.250 so that each address has its
/// own ephemeral port range (connection-per-request load leaves TIME_WAIT sockets behind).
pub struct SourceSpread {
    next: u32,
    enabled: bool,
}

const SPREAD_ADDRS: u32 = 250;

impl SourceSpread {
    pub fn new(target: SocketAddr, enabled: bool, offset: u32) -> SourceSpread {
        let loopback_v4 = matches!(target.ip(), IpAddr::V4(v4) if v4.is_loopback());
        SourceSpread {
            next: offset % SPREAD_ADDRS,
            enabled: enabled && loopback_v4,
        }
    }

    fn next_addr(&mut self) -> Option<SocketAddr> {
        if !self.enabled {
            return None;
        }
        let x = self.next;
        self.next = (self.next + 1) % SPREAD_ADDRS;
        Some(SocketAddr::new(
            IpAddr::V4(Ipv4Addr::new(127, 0, 0, 1 + x as u8)),
            0,
        ))
    }
}

/// A socket connecting to `target`; `calls` counts the system calls it took.
pub fn start_connect(
    target: SocketAddr,
    spread: &mut SourceSpread,
    linger_zero: bool,
    calls: &mut u64,
) -> ConnectStart {
    match try_connect(target, spread, linger_zero, calls) {
        Ok(s) => ConnectStart::Pending(s),
        Err(e) => ConnectStart::Failed(e),
    }
}

fn try_connect(
    target: SocketAddr,
    spread: &mut SourceSpread,
    linger_zero: bool,
    calls: &mut u64,
) -> io::Result<mio::net::TcpStream> {
    let sock = new_socket(target, spread, linger_zero, true, calls)?;
    *calls += 1;
    match sock.connect(&target.into()) {
        Ok(()) => {}
        Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => {}
        Err(e) => return Err(e),
    }
    Ok(mio::net::TcpStream::from_std(sock.into()))
}

/// A TCP socket for `target` with the engine's options, bound to the next spread source
/// address if spreading; not connected. The io_uring backend takes it blocking (`nonblocking`
/// false): the ring waits for readiness itself. `calls` counts the system calls it took.
pub fn new_socket(
    target: SocketAddr,
    spread: &mut SourceSpread,
    linger_zero: bool,
    nonblocking: bool,
    calls: &mut u64,
) -> io::Result<Socket> {
    let ty = if nonblocking {
        Type::STREAM.nonblocking().cloexec()
    } else {
        Type::STREAM.cloexec()
    };
    *calls += 1;
    let sock = Socket::new(Domain::for_address(target), ty, Some(Protocol::TCP))?;
    *calls += 1;
    sock.set_nodelay(true)?;
    if linger_zero {
        *calls += 1;
        sock.set_linger(Some(std::time::Duration::ZERO))?;
    }
    if let Some(src) = spread.next_addr() {
        *calls += 2;
        // Defer the port choice to connect(), so the full 4-tuple decides uniqueness.
        let one: libc::c_int = 1;
        // SAFETY: setsockopt with a valid int option on an owned socket.
        unsafe {
            libc::setsockopt(
                std::os::fd::AsRawFd::as_raw_fd(&sock),
                libc::IPPROTO_IP,
                libc::IP_BIND_ADDRESS_NO_PORT,
                (&one as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            )
        };
        sock.bind(&src.into())?;
    }
    Ok(sock)
}

/// Map a connect failure to the protocol's class names.
pub fn connect_error_class(e: &io::Error) -> crate::stats::ErrorClass {
    use crate::stats::ErrorClass::*;
    match e.raw_os_error() {
        Some(libc::ECONNREFUSED) => ConnectRefused,
        Some(libc::ETIMEDOUT) => ConnectTimeout,
        Some(libc::EMFILE) | Some(libc::ENFILE) => FdLimit,
        Some(libc::EADDRNOTAVAIL) => PortsExhausted,
        _ => ConnectError,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::ErrorClass;

    #[test]
    fn connect_errors_map_to_classes() {
        let class = |errno| connect_error_class(&io::Error::from_raw_os_error(errno));
        assert_eq!(class(libc::ECONNREFUSED), ErrorClass::ConnectRefused);
        assert_eq!(class(libc::ETIMEDOUT), ErrorClass::ConnectTimeout);
        assert_eq!(class(libc::EMFILE), ErrorClass::FdLimit);
        assert_eq!(class(libc::ENFILE), ErrorClass::FdLimit);
        assert_eq!(class(libc::EADDRNOTAVAIL), ErrorClass::PortsExhausted);
        assert_eq!(class(libc::ENETUNREACH), ErrorClass::ConnectError);
    }
}
