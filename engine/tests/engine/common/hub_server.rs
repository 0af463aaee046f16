//! An in-process WebSocket broadcast hub (a thread per connection): every data message a
//! connection sends goes to every other open member, each delivery done as a policy says by
//! (receiving connection, message number) — delivered, dropped, duplicated, corrupted,
//! fragmented, after a ping, or followed by a close — and counted, so tests can demand that the
//! engine's counts equal what the hub did.

use std::collections::HashMap;
use std::io::Write;
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::ws_server::{bump, frame, read_frame, read_head, reply, upgrade};
use super::{Msg, Upgrade};

type DeliverPolicy = dyn Fn(u64, u64) -> Msg + Send + Sync;

#[derive(Default)]
pub struct HubCounts {
    pub upgrades: Mutex<HashMap<Upgrade, u64>>,
    /// Deliveries by what the hub did.
    pub deliveries: Mutex<HashMap<Msg, u64>>,
    /// Data messages received from clients (the publisher's).
    pub published: AtomicU64,
    pub client_closes: Mutex<HashMap<u16, u64>>,
}

/// The open members, by connection index: where to write to them.
type Members = Mutex<Vec<(u64, TcpStream)>>;

pub struct HubServer {
    pub port: u16,
    pub counts: Arc<HubCounts>,
    stop: Arc<AtomicBool>,
}

impl Drop for HubServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

impl HubServer {
    pub fn start(
        upgrade: impl Fn(u64) -> Upgrade + Send + Sync + 'static,
        deliver: impl Fn(u64, u64) -> Msg + Send + Sync + 'static,
    ) -> HubServer {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let counts = Arc::new(HubCounts::default());
        let stop = Arc::new(AtomicBool::new(false));
        let members: Arc<Members> = Arc::default();
        let policy: Arc<DeliverPolicy> = Arc::new(deliver);
        let c = counts.clone();
        super::accept_until(listener, stop.clone(), move |i, conn| {
            let how = upgrade(i);
            serve(conn, i, how, &c, &members, &*policy)
        });
        HubServer { port, counts, stop }
    }

    pub fn delivered(&self, m: Msg) -> u64 {
        *self.counts.deliveries.lock().unwrap().get(&m).unwrap_or(&0)
    }

    pub fn published(&self) -> u64 {
        self.counts.published.load(Ordering::SeqCst)
    }
}

fn serve(
    mut s: TcpStream,
    conn: u64,
    how: Upgrade,
    c: &HubCounts,
    members: &Members,
    policy: &DeliverPolicy,
) {
    s.set_nodelay(true).ok();
    let Some(head) = read_head(&mut s) else {
        return;
    };
    bump(&c.upgrades, how);
    // A member before its 101 goes out: a client that saw it open gets every later message.
    if how == Upgrade::Accept {
        members.lock().unwrap().push((conn, s.try_clone().unwrap()));
    }
    if !upgrade(&mut s, &head, how) {
        return;
    }
    let mut seq = 0;
    while let Some((op, payload, _)) = read_frame(&mut s) {
        match op {
            0x9 | 0xA => continue,
            0x8 => {
                let code = payload
                    .get(..2)
                    .map_or(1005, |b| u16::from_be_bytes([b[0], b[1]]));
                bump(&c.client_closes, code);
                members.lock().unwrap().retain(|(i, _)| *i != conn);
                let _ = s.write_all(&frame(0x8, true, &payload));
                return;
            }
            _ => {}
        }
        c.published.fetch_add(1, Ordering::SeqCst);
        fan_out(conn, seq, &payload, c, members, policy);
        seq += 1;
    }
}

/// Message `seq` of `from` to every other member, as the policy says; a member sent a close
/// leaves.
fn fan_out(
    from: u64,
    seq: u64,
    payload: &[u8],
    c: &HubCounts,
    members: &Members,
    policy: &DeliverPolicy,
) {
    let mut m = members.lock().unwrap();
    m.retain_mut(|(to, sock)| {
        if *to == from {
            return true;
        }
        let what = policy(*to, seq);
        bump(&c.deliveries, what);
        let Some(out) = reply(what, payload) else {
            return true;
        };
        sock.write_all(&out).is_ok() && !matches!(what, Msg::EchoThenClose(_))
    });
}
