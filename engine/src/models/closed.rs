//! Closed loop (wrk): N connections, each sends its next request when a reply arrives, until the duration ends.

use super::Model;
use crate::reactor::{ConnEnd, Reactor, Script};

pub struct Closed {
    connections: u64,
    stop_ns: u64,
    depth: u32,
}

impl Closed {
    pub fn new(connections: u64, stop_ns: u64, depth: u32) -> Closed {
        Closed {
            connections,
            stop_ns,
            depth,
        }
    }

    fn script(&self, tag: u64) -> Script {
        Script {
            remaining: u64::MAX,
            depth: self.depth,
            think_ns: 0,
            stop_sending_ns: self.stop_ns,
            tag,
        }
    }
}

impl Model for Closed {
    fn start(&mut self, now: u64, rt: &mut Reactor) {
        for slot in 0..self.connections {
            rt.open(self.script(slot), None, now);
        }
    }

    fn on_timer(&mut self, _now: u64, _rt: &mut Reactor) {}

    fn next_due_ns(&self) -> Option<u64> {
        None
    }

    /// Every slot keeps one connection until the end: reconnect after closes and errors alike.
    fn on_conn_end(&mut self, end: ConnEnd, now: u64, rt: &mut Reactor) {
        if now < self.stop_ns {
            rt.open(self.script(end.script.tag), None, now);
        }
    }

    fn finished(&self, now: u64, _rt: &Reactor) -> bool {
        now >= self.stop_ns
    }
}
