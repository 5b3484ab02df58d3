//! How much memory this machine has to spare, from `MemAvailable` in `/proc/meminfo`, and the
//! capacity defaults derived from it: kept CLI processes ([`default_max_kept`]) and admitted runs
//! ([`default_max_active`]). A machine without `/proc/meminfo` (or with an unreadable one) gets fixed
//! defaults instead.

/// One GiB.
const GIB: u64 = 1024 * 1024 * 1024;
/// The memory budgeted per active run (its CLI process and the service's share).
const PER_ACTIVE_RUN: u64 = 256 * 1024 * 1024;
/// Kept processes when `MemAvailable` is unknown.
pub const FALLBACK_MAX_KEPT: usize = 8;
/// Active runs when `MemAvailable` is unknown.
pub const FALLBACK_MAX_ACTIVE: usize = 16;
/// The most kept processes the memory-derived default allows.
pub const MAX_DEFAULT_KEPT: usize = 64;

/// `MemAvailable` in bytes, from `/proc/meminfo`; `None` where it cannot be read.
pub fn mem_available() -> Option<u64> {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|text| parse_mem_available(&text))
}

/// `MemAvailable` in bytes from the text of `/proc/meminfo` (`MemAvailable:  23647220 kB`).
pub fn parse_mem_available(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let mut parts = line["MemAvailable:".len()..].split_whitespace();
    let n: u64 = parts.next()?.parse().ok()?;
    let unit = match parts.next() {
        Some("kB") | Some("KB") | Some("kiB") => 1024,
        None => 1,
        Some(_) => return None,
    };
    n.checked_mul(unit)
}

/// Kept processes for `available` bytes: one per GiB, clamped to 1..=[`MAX_DEFAULT_KEPT`];
/// [`FALLBACK_MAX_KEPT`] when unknown.
pub fn max_kept_for(available: Option<u64>) -> usize {
    match available {
        Some(bytes) => ((bytes / GIB) as usize).clamp(1, MAX_DEFAULT_KEPT),
        None => FALLBACK_MAX_KEPT,
    }
}

/// Active runs for `available` bytes with `max_kept` processes kept besides: one per 256 MiB less
/// the kept processes, at least 1; [`FALLBACK_MAX_ACTIVE`] when unknown.
pub fn max_active_for(available: Option<u64>, max_kept: usize) -> usize {
    match available {
        Some(bytes) => ((bytes / PER_ACTIVE_RUN) as usize)
            .saturating_sub(max_kept)
            .max(1),
        None => FALLBACK_MAX_ACTIVE,
    }
}

/// The default cap of kept processes on this machine now.
pub fn default_max_kept() -> usize {
    max_kept_for(mem_available())
}

/// The default admission limit on this machine now, with `max_kept` processes kept besides.
pub fn default_max_active(max_kept: usize) -> usize {
    max_active_for(mem_available(), max_kept)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mem_available_is_read_in_kib() {
        let text = "MemTotal:       32000000 kB\nMemFree:  1 kB\nMemAvailable:   23647220 kB\n";
        assert_eq!(parse_mem_available(text), Some(23_647_220 * 1024));
        assert_eq!(parse_mem_available("MemTotal: 5 kB\n"), None);
        assert_eq!(parse_mem_available("MemAvailable: lots kB\n"), None);
    }

    #[test]
    fn defaults_follow_memory_and_clamp() {
        assert_eq!(max_kept_for(Some(GIB / 2)), 1);
        assert_eq!(max_kept_for(Some(3 * GIB + 5)), 3);
        assert_eq!(max_kept_for(Some(1000 * GIB)), MAX_DEFAULT_KEPT);
        assert_eq!(max_kept_for(None), FALLBACK_MAX_KEPT);
        assert_eq!(max_active_for(Some(4 * GIB), 4), 12);
        assert_eq!(max_active_for(Some(GIB / 2), 1), 1);
        assert_eq!(max_active_for(None, 3), FALLBACK_MAX_ACTIVE);
    }
}
