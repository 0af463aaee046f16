//! A connection's writes on the epoll backend: the pending bytes flushed, and new ones sent
//! after them (what the socket does not take is kept).

use std::io::{self, Write};

use super::conn::Conn;
use super::driver::Sock;

impl Conn {
    /// Write the pending bytes; Err when the connection failed.
    pub fn flush(&mut self) -> io::Result<()> {
        let Sock::Mio(sock) = &mut self.sock else {
            unreachable!("an epoll flush on a ring socket")
        };
        while !self.wbuf.is_empty() {
            match sock.write(&self.wbuf) {
                Ok(n) => {
                    self.wbuf.drain(..n);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        self.wbuf = Vec::new();
        Ok(())
    }

    /// Send `bytes` after whatever is pending, keeping what the socket does not take; Err when
    /// the connection failed.
    pub fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
        if !self.wbuf.is_empty() {
            self.wbuf.extend_from_slice(bytes);
            return Ok(());
        }
        let mut written = 0;
        loop {
            match self.mio().write(&bytes[written..]) {
                Ok(n) => {
                    written += n;
                    if written == bytes.len() {
                        return Ok(());
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        self.wbuf.extend_from_slice(&bytes[written..]);
        Ok(())
    }
}
