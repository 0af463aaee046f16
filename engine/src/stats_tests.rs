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

fn stamp(sec: usize, in_window: bool) -> Stamp {
    Stamp {
        sec,
        offset_ns: sec as u64 * 1_000_000_000 + 7,
        in_window,
    }
}

/// Every counter of a kind set to a distinct value: `base` times a distinct prime each, so that
/// a sum can be told from a product or a difference (3 + 5 is neither 15 nor -2).
fn filled_kind(k: &mut KindStats, base: u64) {
    k.requests_sent = 3 * base;
    k.resent = 5 * base;
    k.responses = 7 * base;
    k.ok = 11 * base;
    k.errors = [13 * base; ERROR_CLASSES];
    k.bad_status_codes.insert(503, 17 * base);
    k.ok_in_window = 19 * base;
    for (i, h) in [
        &mut k.latency_us,
        &mut k.reply_latency_us,
        &mut k.failed_latency_us,
        &mut k.service_us,
        &mut k.connect_us,
    ]
    .into_iter()
    .enumerate()
    {
        h.saturating_record_n(100 + i as u64, base);
    }
}

/// Every counter of a thread set so (its kinds' too), and one second of timeline at `sec`.
fn filled(base: u64, sec: usize) -> ThreadStats {
    let mut t = ThreadStats::new(1);
    filled_kind(&mut t.kinds[0], base);
    t.idle_close = 23 * base;
    t.unannounced_closes = 29 * base;
    t.connections_opened = 31 * base;
    t.connection_close_replies = 37 * base;
    t.bytes_received = 41 * base;
    t.unsolicited_bytes = 43 * base;
    t.syscalls = 47 * base;
    t.abandoned = 53 * base;
    t.queue_timeouts = 59 * base;
    t.lag_us.saturating_record_n(10, base);
    t.turnaround(500, base);
    t.exhaustion.fd_limit = 61 * base;
    t.exhaustion.ephemeral_ports = 67 * base;
    t.peak_open = 71 * base;
    t.window.ok_in = 73 * base;
    t.window.responses_in = 79 * base;
    t.window.completed_after = 83 * base;
    t.window.last_completion_ns = 89 * base;
    t.ws.handshakes_ok = 97 * base;
    t.h2.streams = 101 * base;
    t.tls.handshakes = 103 * base;
    t.threads.push(ThreadCpu {
        thread: base as usize,
        cpus: vec![base as usize],
        cpu_ns: 1,
        wall_ns: 2,
        responses: 3,
    });
    let s = t.second(sec);
    s.completed = 107 * base;
    s.ok = 109 * base;
    s.errors = [113 * base; ERROR_CLASSES];
    s.resent = 127 * base;
    s.open_connections = 131 * base;
    s.cpu_ns = 137 * base;
    s.wall_ns = 139 * base;
    s.busiest_cpu = 0.1 * base as f64;
    s.arrivals = 149 * base;
    s.latency_us = Some(new_hist());
    s.latency_us
        .as_mut()
        .unwrap()
        .saturating_record_n(100, base);
    t
}

/// A thread with 1 of each merged with one with 2 of each: 3 of each (2 + 1 = 3, not 2 × 1),
/// each with a wrong reply of its own class.
fn merged() -> ThreadStats {
    let mut a = filled(1, 1);
    let mut b = filled(2, 1);
    let quote = |class, status, at_ns| {
        crate::wrong::WrongReply::bare(class, status, "quoted".into(), at_ns)
    };
    a.kinds[0].wrong.keep(quote(ErrorClass::BadBody, 200, 9));
    b.kinds[0].wrong.keep(quote(ErrorClass::BadStatus, 500, 8));
    a.merge(&b);
    a
}

#[test]
fn merge_adds_every_counter_of_both_threads_kinds() {
    let a = merged();
    let k = &a.kinds[0];
    assert_eq!(
        (k.requests_sent, k.resent, k.responses, k.ok, k.ok_in_window),
        (9, 15, 21, 33, 57)
    );
    assert_eq!(k.errors, [39; ERROR_CLASSES]);
    assert_eq!(k.bad_status_codes.get(&503), Some(&51));
    for h in [
        &k.latency_us,
        &k.reply_latency_us,
        &k.failed_latency_us,
        &k.service_us,
        &k.connect_us,
    ] {
        assert_eq!(h.len(), 3);
    }
    assert!(!k.wrong.wants(ErrorClass::BadBody) && !k.wrong.wants(ErrorClass::BadStatus));
}

#[test]
fn merge_adds_every_counter_of_both_threads() {
    let a = merged();
    assert_eq!(
        (
            a.idle_close,
            a.unannounced_closes,
            a.connections_opened,
            a.connection_close_replies,
            a.bytes_received,
            a.unsolicited_bytes,
            a.syscalls,
            a.abandoned,
            a.queue_timeouts,
        ),
        (69, 87, 93, 111, 123, 129, 141, 159, 177)
    );
    assert_eq!((a.lag_us.len(), a.turnaround_ns.len()), (3, 3));
    assert_eq!(
        (
            a.exhaustion.fd_limit,
            a.exhaustion.ephemeral_ports,
            a.peak_open
        ),
        (183, 201, 213)
    );
    let w = &a.window;
    assert_eq!(
        (
            w.ok_in,
            w.responses_in,
            w.completed_after,
            w.last_completion_ns
        ),
        (219, 237, 249, 178)
    );
    assert_eq!(
        (a.ws.handshakes_ok, a.h2.streams, a.tls.handshakes),
        (291, 303, 309)
    );
    assert_eq!(
        a.threads.iter().map(|t| t.thread).collect::<Vec<_>>(),
        vec![1, 2]
    );
}

#[test]
fn merge_adds_every_counter_of_both_threads_seconds() {
    let a = merged();
    let s = &a.timeline[1];
    assert_eq!(
        (
            s.completed,
            s.ok,
            s.resent,
            s.open_connections,
            s.cpu_ns,
            s.wall_ns,
            s.arrivals
        ),
        (321, 327, 381, 393, 411, 417, 447)
    );
    assert_eq!(s.errors, [339; ERROR_CLASSES]);
    assert_eq!(s.busiest_cpu, 0.2); // the busiest thread's share, not a sum
    assert_eq!(s.latency_us.as_ref().map(|h| h.len()), Some(3));
    assert!(a.timeline[0].latency_us.is_none());
}

#[test]
fn merge_extends_the_timeline_to_the_longer_thread_s() {
    let mut a = ThreadStats::new(1);
    let b = filled(2, 3);
    a.merge(&b);
    assert_eq!(a.timeline.len(), 4);
    assert_eq!(a.timeline[3].completed, 214);
    assert_eq!(a.timeline[3].latency_us.as_ref().map(|h| h.len()), Some(2));
    assert!(a.timeline[1].latency_us.is_none());
}

#[test]
fn a_reply_in_and_after_the_window_and_a_resent_request() {
    let mut t = ThreadStats::new(2);
    t.response(1, 200, Ok(()), 40, Some(30), stamp(0, true));
    t.response(1, 200, Ok(()), 50, None, stamp(2, false));
    t.response(1, 404, Err(ErrorClass::BadStatus), 60, None, stamp(1, true));
    t.resent(1, stamp(1, true));
    t.resent(1, stamp(1, true));
    let k = &t.kinds[1];
    assert_eq!((k.responses, k.ok, k.ok_in_window, k.resent), (3, 2, 1, 2));
    assert_eq!(
        (k.service_us.len(), k.bad_status_codes.get(&404)),
        (1, Some(&1))
    );
    assert_eq!(t.kinds[0].responses, 0);
    let w = &t.window;
    assert_eq!(
        (
            w.ok_in,
            w.responses_in,
            w.completed_after,
            w.last_completion_ns
        ),
        (1, 2, 1, 2_000_000_007)
    );
    assert_eq!(t.timeline.len(), 3);
    assert_eq!((t.timeline[1].resent, t.timeline[1].completed), (2, 1));
    assert_eq!(t.timeline[1].errors[ErrorClass::BadStatus as usize], 1);
    assert_eq!((t.timeline[2].ok, t.timeline[0].ok), (1, 1));
}

#[test]
fn failures_without_a_message_and_none_at_all_are_counted_as_such() {
    let mut t = ThreadStats::new(1);
    t.errors_n(0, ErrorClass::Reset, 0, stamp(4, true), 10); // nothing: no second either
    assert!(t.timeline.is_empty() && t.window.last_completion_ns == 0);
    t.link_error(0, ErrorClass::ConnectRefused, stamp(1, true));
    t.link_error(0, ErrorClass::ConnectRefused, stamp(1, true));
    let k = &t.kinds[0];
    assert_eq!(k.errors[ErrorClass::ConnectRefused as usize], 2);
    assert_eq!(k.latency_us.len(), 0); // no message's latency
    assert_eq!(t.timeline[1].completed, 2);
    assert_eq!(t.timeline[1].errors[ErrorClass::ConnectRefused as usize], 2);
    assert_eq!(t.window.last_completion_ns, 1_000_000_007);
    t.errors_n(0, ErrorClass::Reset, 3, stamp(2, true), 10);
    assert_eq!(t.timeline[2].errors[ErrorClass::Reset as usize], 3);
    // a failure far past the histogram's range is kept at its top, not lost
    t.error(0, ErrorClass::Timeout, stamp(1, true), u64::MAX);
    assert_eq!(t.kinds[0].failed_latency_us.len(), 4); // the three resets and it
    assert!(t.kinds[0].failed_latency_us.max() >= HIST_MAX_US * 999 / 1000);
    t.turnaround(0, 4); // a turnaround under a nanosecond is counted at 1 ns
    t.turnaround(2_000, 1);
    assert_eq!((t.turnaround_ns.len(), t.turnaround_ns.min()), (5, 1));
    assert_eq!(t.turnaround_ns.count_at(0), 0);
    // the turnaround's range reaches an hour in ns: a stall of 10 s is kept as 10 s
    t.turnaround(10_000_000_000, 1);
    assert!(t.turnaround_ns.max() >= 9_990_000_000);
}
