//! Connection slots: a slab of live connections addressed by mio tokens that carry a generation,
//! so that events and timers of a connection that has since ended miss.

use mio::Token;

/// The token of the thread's timerfd; never a connection's.
pub const TIMER_TOKEN: Token = Token(usize::MAX);

/// The token of slot `idx` in its generation `gen`.
pub(super) fn token(idx: usize, gen: u32) -> Token {
    Token(idx | (gen as usize) << 32)
}

/// The slot and generation a token names.
pub(super) fn split_token(t: Token) -> (usize, u32) {
    (t.0 & 0xffff_ffff, (t.0 >> 32) as u32)
}

pub(super) struct Slots<T> {
    items: Vec<Option<T>>,
    gens: Vec<u32>,
    free: Vec<usize>,
    live: u64,
}

impl<T> Default for Slots<T> {
    fn default() -> Self {
        Slots {
            items: Vec::new(),
            gens: Vec::new(),
            free: Vec::new(),
            live: 0,
        }
    }
}

impl<T> Slots<T> {
    /// Items stored now.
    pub fn live(&self) -> u64 {
        self.live
    }

    /// Number of slots, used or not.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Take a free slot for an item about to be [`put`](Self::put); returns it and its generation.
    pub fn reserve(&mut self) -> (usize, u32) {
        let idx = self.free.pop().unwrap_or_else(|| {
            self.items.push(None);
            self.gens.push(0);
            self.items.len() - 1
        });
        (idx, self.gens[idx])
    }

    /// Give back a reserved slot that never got its item.
    pub fn unreserve(&mut self, idx: usize) {
        self.free.push(idx);
    }

    pub fn put(&mut self, idx: usize, item: T) {
        self.items[idx] = Some(item);
        self.live += 1;
    }

    pub fn gen(&self, idx: usize) -> u32 {
        self.gens[idx]
    }

    /// The item in `idx` if it is still of generation `gen`.
    pub fn get_mut(&mut self, idx: usize, gen: u32) -> Option<&mut T> {
        if self.gens.get(idx) != Some(&gen) {
            return None;
        }
        self.items[idx].as_mut()
    }

    pub fn get(&self, idx: usize) -> Option<&T> {
        self.items[idx].as_ref()
    }

    /// The item in `idx`, which the caller knows is there.
    pub fn live_ref(&self, idx: usize) -> &T {
        self.items[idx].as_ref().expect("live")
    }

    /// The item in `idx`, which the caller knows is there.
    pub fn live_mut(&mut self, idx: usize) -> &mut T {
        self.items[idx].as_mut().expect("live")
    }

    /// Take the item out; the slot's next generation makes its old token and timers miss.
    pub fn remove(&mut self, idx: usize) -> T {
        let item = self.items[idx].take().expect("live");
        self.gens[idx] = self.gens[idx].wrapping_add(1);
        self.free.push(idx);
        self.live -= 1;
        item
    }
}
