//! Whether the engine itself may have limited the load (`saturated`, `saturation_reasons`).

use crate::plan::{ModelSpec, Plan};
use crate::runner::RunOutcome;
use crate::stats::Second;

/// Saturation thresholds of the protocol.
pub const CPU_SATURATED_FRACTION: f64 = 0.95;
const LAG_P99_SATURATED_US: u64 = 10_000;

/// Why the engine itself may have limited the load (empty: it did not). `cpu_fraction` is the
/// busiest thread's over the whole run (one saturated thread limits its share of the load
/// however idle the others are), `window_s` the measured window.
pub fn reasons(
    plan: &Plan,
    out: &RunOutcome,
    cpu_fraction: f64,
    lag_p99: u64,
    window_s: f64,
) -> Vec<String> {
    let st = &out.stats;
    let mut reasons = Vec::new();
    let closed_loop = matches!(
        plan.model,
        ModelSpec::Closed { .. } | ModelSpec::Count { .. }
    );
    if closed_loop {
        reasons.extend(window_cpu(&st.timeline, window_s));
    } else if cpu_fraction >= CPU_SATURATED_FRACTION {
        reasons.push(format!(
            "engine CPU {:.0}% in its busiest of {} thread(s)",
            cpu_fraction * 100.0,
            plan.threads
        ));
    }
    if plan.model.is_open() && lag_p99 > LAG_P99_SATURATED_US {
        reasons.push(format!(
            "schedule lag p99 {} us > {} us",
            lag_p99, LAG_P99_SATURATED_US
        ));
    }
    if st.exhaustion.fd_limit > 0 {
        reasons.push(format!(
            "engine hit its file-descriptor limit ({}) {} times",
            out.nofile_limit, st.exhaustion.fd_limit
        ));
    }
    if st.exhaustion.ephemeral_ports > 0 {
        reasons.push(format!(
            "engine ran out of ephemeral ports {} times",
            st.exhaustion.ephemeral_ports
        ));
    }
    if st.abandoned > 0 {
        reasons.push(format!(
            "{} planned requests never started before the hard stop",
            st.abandoned
        ));
    }
    reasons
}

/// Closed loops (closed, count) judged over the measured window, not the whole run (whose
/// drain, idle, would hide a saturated window): saturated when at least a quarter of the
/// window's full seconds, and at least one, had its busiest engine thread at or above the
/// threshold. A
/// window shorter than a second is judged on its first second.
pub fn window_cpu(timeline: &[Second], window_s: f64) -> Option<String> {
    let full = (window_s.max(0.0).floor() as usize)
        .max(1)
        .min(timeline.len());
    let busy = timeline[..full]
        .iter()
        .filter(|s| s.wall_ns > 0 && s.saturation_cpu() >= CPU_SATURATED_FRACTION)
        .count();
    let threshold = CPU_SATURATED_FRACTION * 100.0;
    (busy >= 1 && busy * 4 >= full).then(|| {
        if window_s < 1.0 {
            // Not "1 of 1 seconds": a count of 100 requests may be a window of 10 ms.
            format!(
                "engine CPU >= {threshold:.0}% over the whole measured window ({window_s:.2} s)"
            )
        } else {
            format!(
                "engine CPU >= {threshold:.0}% in {busy} of {full} seconds of the measured window"
            )
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seconds(cpu: &[f64]) -> Vec<Second> {
        cpu.iter()
            .map(|&c| Second {
                cpu_ns: (c * 1e9) as u64,
                wall_ns: 1_000_000_000,
                ..Second::default()
            })
            .collect()
    }

    #[test]
    fn cpu_saturation_is_judged_over_the_window_seconds() {
        // 10 s window, then a 5 s idle drain: 3 of 10 busy seconds are enough (>= a quarter),
        // though the whole run's average is far below the threshold.
        let mut t = seconds(&[0.99, 0.97, 0.96, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5]);
        t.extend(seconds(&[0.0; 5]));
        let r = window_cpu(&t, 10.0).expect("saturated");
        assert!(r.contains("in 3 of 10 seconds"), "{r}");
        // 2 of 10 is less than a quarter.
        t[2] = seconds(&[0.9]).remove(0);
        assert_eq!(window_cpu(&t, 10.0), None);
        // Busy seconds after the window's full seconds (the partial one, the drain) do not count.
        let t = seconds(&[0.5, 0.5, 0.5, 0.5, 1.0, 1.0, 1.0, 1.0]);
        assert_eq!(window_cpu(&t, 4.5), None);
        // A sub-second window: its first second alone.
        let r = window_cpu(&seconds(&[0.96, 0.0]), 0.01).expect("saturated");
        assert!(
            r.ends_with("over the whole measured window (0.01 s)"),
            "{r}"
        );
        assert_eq!(window_cpu(&seconds(&[0.9]), 0.5), None);
        assert_eq!(window_cpu(&[], 3.0), None);
    }

    #[test]
    fn one_saturated_thread_saturates_the_second_however_idle_the_others() {
        // Two threads summed: 1.0 of 2.0 cores is an average of 0.5, but one of them was at 0.98.
        let mut t = seconds(&[0.5, 0.5, 0.5, 0.5]);
        for s in &mut t {
            s.busiest_cpu = 0.98;
        }
        let r = window_cpu(&t, 4.0).expect("saturated");
        assert!(r.contains("in 4 of 4 seconds"), "{r}");
        for s in &mut t {
            s.busiest_cpu = 0.6;
        }
        assert_eq!(window_cpu(&t, 4.0), None);
    }
}
