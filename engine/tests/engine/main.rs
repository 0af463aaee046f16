//! The engine's integration tests as one binary (one build and link instead of one per file): each
//! file is a module, and `common` holds the test servers they share.

mod common;

mod backends;
mod broadcast;
mod contract;
mod expect;
mod failures;
mod gate;
mod http2;
mod intended;
mod limits;
mod misbehaving;
mod models;
mod pool;
mod quiet;
mod stall;
mod tls;
mod trace;
mod turnaround;
mod unannounced;
mod websocket;
mod window;
mod wrong;
