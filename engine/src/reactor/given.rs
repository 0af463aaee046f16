//! Requests whose kind the model gives (the trace model's schedule names each request's kind)
//! instead of the weighted pick: the kind is handed to the one place requests are reserved.

use super::{Reactor, Script};

impl Reactor {
    /// `open` for a request of kind `kind`.
    pub fn open_given(
        &mut self,
        kind: u16,
        script: Script,
        intended_ns: Option<u64>,
        now: u64,
    ) -> bool {
        self.issuer.given = Some(kind);
        let opened = self.open(script, intended_ns, now);
        self.issuer.given = None;
        opened
    }

    /// `offer` (a pool's arrival) of a request of kind `kind`.
    pub fn offer_given(&mut self, kind: u16, due_ns: u64, now: u64) {
        self.issuer.given = Some(kind);
        self.offer(due_ns, now);
        self.issuer.given = None;
    }
}
