//! HTTP/1.x on the wire, sans IO: request serialisation and an incremental response parser.
//!
//! - `request`: the bytes of one request;
//! - `head`: reading a response head (status, body framing, persistence);
//! - `response`: the incremental parser that walks a response through head, body and end.

mod head;
mod request;
mod response;
#[cfg(test)]
mod tests;

pub use head::{Head, MediaType, MEDIA_TYPE_MAX};
pub use request::build_request;
pub use response::{EofOutcome, Event, ParseError, ResponseParser};
