//! Process-level knobs: file-descriptor limit, CPU pinning, CPU-time accounting.

use std::io;

/// Raise the descriptor limit and grow the descriptor table to it, before any connection opens.
/// Returns the soft limit in force afterwards.
pub fn make_room_for_fds() -> u64 {
    let limit = raise_nofile();
    presize_fd_table(limit);
    limit
}

/// Raise RLIMIT_NOFILE: soft up to hard, and as root also beyond the hard limit.
/// Returns the soft limit in force afterwards.
fn raise_nofile() -> u64 {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: valid out-pointer.
    unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) };
    // Root (CAP_SYS_RESOURCE) may lift the hard limit up to fs.nr_open.
    let nr_open = std::fs::read_to_string("/proc/sys/fs/nr_open")
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok())
        .unwrap_or(0)
        .min(1 << 20);
    if nr_open > lim.rlim_max {
        let want = libc::rlimit {
            rlim_cur: nr_open as libc::rlim_t,
            rlim_max: nr_open as libc::rlim_t,
        };
        // SAFETY: valid rlimit.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &want) } == 0 {
            return nr_open;
        }
    }
    let want = libc::rlimit {
        rlim_cur: lim.rlim_max,
        rlim_max: lim.rlim_max,
    };
    // SAFETY: valid rlimit.
    unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &want) };
    lim.rlim_max
}

/// The most descriptors `presize_fd_table` makes room for (a table of 1 MiB of pointers).
const FD_TABLE_PRESIZE: u64 = 1 << 17;

/// Grow the process's descriptor table now, to `limit` entries (at most `FD_TABLE_PRESIZE`), by
/// duplicating a descriptor to the top and closing it: the kernel never shrinks the table. It
/// otherwise doubles as connections open, and in a process of several threads (the engine's
/// workers, io_uring's) each doubling waits for an RCU grace period: the thread opening the
/// next connection stalls for 10-20 ms, which an open loop records as schedule lag.
fn presize_fd_table(limit: u64) {
    let top = limit.min(FD_TABLE_PRESIZE).saturating_sub(1);
    if top < 1024 {
        return;
    }
    for open in 0..3 {
        // SAFETY: fcntl(F_DUPFD) of a standard descriptor to a free number at or above `top`,
        // then closing the copy; a closed standard descriptor fails and the next one is tried.
        let fd = unsafe { libc::fcntl(open, libc::F_DUPFD_CLOEXEC, top as libc::c_int) };
        if fd >= 0 {
            // SAFETY: `fd` was just opened here and is used by nothing else.
            unsafe { libc::close(fd) };
            return;
        }
    }
}

/// Pin the calling thread to the given CPUs.
pub fn pin_current_thread(cpus: &[usize]) -> io::Result<()> {
    if cpus.is_empty() {
        return Ok(());
    }
    // SAFETY: cpu_set_t is plain data; CPU_SET indexes are bounded by the set size check.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &c in cpus {
            if c >= libc::CPU_SETSIZE as usize {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "cpu number too large",
                ));
            }
            libc::CPU_SET(c, &mut set);
        }
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// The CPUs the calling thread may run on, as the kernel holds them (sched_getaffinity).
pub fn thread_affinity() -> io::Result<Vec<usize>> {
    // SAFETY: cpu_set_t is plain data, a valid out-parameter of sched_getaffinity.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok((0..libc::CPU_SETSIZE as usize)
            .filter(|&c| libc::CPU_ISSET(c, &set))
            .collect())
    }
}

/// Pin the calling thread to `cpus` and read the mask back: Err names what the kernel refused
/// or what it holds instead (a CPU that does not exist is dropped from a mask silently when
/// others in it do). Ok: the CPUs read back (the thread's own mask when `cpus` is empty).
pub fn pin_verified(cpus: &[usize]) -> Result<Vec<usize>, String> {
    pin_current_thread(cpus).map_err(|e| format!("sched_setaffinity({cpus:?}): {e}"))?;
    let got = thread_affinity().map_err(|e| format!("sched_getaffinity: {e}"))?;
    let mut want = cpus.to_vec();
    want.sort_unstable();
    want.dedup();
    if !cpus.is_empty() && got != want {
        return Err(format!(
            "asked for CPU(s) {want:?}, the kernel holds {got:?}"
        ));
    }
    Ok(got)
}

/// User and system CPU seconds of the whole process so far.
pub fn cpu_times_s() -> (f64, f64) {
    // SAFETY: zeroed rusage is a valid out-parameter.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: valid out-pointer.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (tv(ru.ru_utime), tv(ru.ru_stime))
}

/// CPU time (user + system) the calling thread has used so far, in ns (RUSAGE_THREAD).
pub fn thread_cpu_ns() -> u64 {
    // SAFETY: zeroed rusage is a valid out-parameter.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: valid out-pointer.
    unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) };
    let ns = |t: libc::timeval| t.tv_sec as u64 * 1_000_000_000 + t.tv_usec as u64 * 1000;
    ns(ru.ru_utime) + ns(ru.ru_stime)
}

/// Peak resident set size of the process in KiB.
pub fn max_rss_kib() -> u64 {
    // SAFETY: as above.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    ru.ru_maxrss as u64
}

#[cfg(test)]
mod fd_table_tests {
    /// The kernel's descriptor table size (`FDSize` in /proc/self/status).
    fn fd_table_size() -> u64 {
        let status = std::fs::read_to_string("/proc/self/status").unwrap();
        let line = status.lines().find(|l| l.starts_with("FDSize:")).unwrap();
        line["FDSize:".len()..].trim().parse().unwrap()
    }

    #[test]
    fn the_descriptor_table_is_grown_to_the_limit_before_any_connection() {
        let limit = super::make_room_for_fds();
        let want = limit.min(super::FD_TABLE_PRESIZE);
        assert!(
            want >= 1024,
            "a descriptor limit of {limit} leaves nothing to test"
        );
        assert!(
            fd_table_size() >= want,
            "FDSize {} < {want}",
            fd_table_size()
        );
    }
}
