//! Unit tests of the per-thread counters and their merge.

use super::*;

#[test]
fn merge_adds_counts_histograms_and_timeline() {
    let mut a = ThreadStats::new(1);
    let mut b = ThreadStats::new(1);
    let at = |sec: usize| Stamp {
        sec,
        offset_ns: sec as u64 * 1_000_000_000,
        in_window: true,
    };
    a.response(0, 200, Ok(()), 100, None, at(0));
    b.response(0, 500, Err(ErrorClass::BadStatus), 300, None, at(2));
    b.error(0, ErrorClass::Timeout, at(2), 1_000_000);
    a.merge(&b);
    let k = &a.kinds[0];
    // Every request in the latency, the timeout at its second; replies and failures apart.
    assert_eq!((k.responses, k.ok, k.latency_us.len()), (2, 1, 3));
    assert_eq!(
        (k.reply_latency_us.len(), k.failed_latency_us.len()),
        (2, 1)
    );
    assert_eq!(k.latency_us.max(), k.failed_latency_us.max());
    assert!(k.failed_latency_us.min() >= 999_000);
    assert_eq!(k.errors[ErrorClass::BadStatus as usize], 1);
    assert_eq!(k.errors[ErrorClass::Timeout as usize], 1);
    assert_eq!(k.bad_status_codes.get(&500), Some(&1));
    assert_eq!(a.timeline.len(), 3);
    assert_eq!((a.timeline[2].completed, a.timeline[2].ok), (2, 0));
}

#[test]
fn the_engines_own_limits_are_counted_but_are_no_latency() {
    let mut a = ThreadStats::new(1);
    let at = Stamp {
        sec: 0,
        offset_ns: 0,
        in_window: true,
    };
    a.error(0, ErrorClass::FdLimit, at, 5);
    a.errors_n(0, ErrorClass::PortsExhausted, 3, at, 5);
    a.errors_n(0, ErrorClass::Reset, 2, at, 700);
    let k = &a.kinds[0];
    assert_eq!(k.errors[ErrorClass::FdLimit as usize], 1);
    assert_eq!(k.errors[ErrorClass::PortsExhausted as usize], 3);
    assert_eq!((k.latency_us.len(), k.failed_latency_us.len()), (2, 2));
    assert_eq!(a.timeline[0].completed, 6);
    let second = a.timeline[0].latency_us.as_ref().expect("recorded");
    assert_eq!(second.len(), 2);
}
