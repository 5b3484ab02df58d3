//! The connection limits of the listener ([`Connections`]) and the table that enforces the global and
//! per-client-IP bounds ([`ConnectionTable`]): a connection past either bound is closed at once (after a
//! best-effort `503 too_many_connections`), so neither a flood of sockets from one address nor from many
//! can exhaust the process's file descriptors. Its counters are in `/metrics`.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::proxies::TrustedProxies;

/// The default time a client has to send a complete request head once its first byte arrived.
pub const DEFAULT_HEADER_READ_TIMEOUT: Duration = Duration::from_secs(30);
/// The default time a client has to send a whole request body, from the request head on.
pub const DEFAULT_BODY_READ_TIMEOUT: Duration = Duration::from_secs(60);
/// The default time a connection may sit with no request in flight and no byte received.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(120);
/// The default bound of open connections.
pub const DEFAULT_MAX_CONNECTIONS: usize = 4096;
/// The default bound of open connections from one client IP.
pub const DEFAULT_MAX_CONNECTIONS_PER_IP: usize = 256;

/// How the listener bounds its connections (the `[connections]` table of the configuration file).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Connections {
    /// From the first byte of a request head to its end; past it the connection is closed.
    pub header_read_timeout: Duration,
    /// From the request head to the end of its body; past it the request fails `408 body_timeout`
    /// and the connection is closed.
    pub body_read_timeout: Duration,
    /// How long a connection may wait for its next request (no request in flight, no byte received:
    /// a fresh connection or a keep-alive one between requests) before it is closed.
    pub idle_timeout: Duration,
    /// Connections open at once; the next one is closed at once.
    pub max_connections: usize,
    /// Connections open at once from one client IP; the next one is closed at once.
    pub max_connections_per_ip: usize,
}

impl Default for Connections {
    fn default() -> Self {
        Connections {
            header_read_timeout: DEFAULT_HEADER_READ_TIMEOUT,
            body_read_timeout: DEFAULT_BODY_READ_TIMEOUT,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            max_connections_per_ip: DEFAULT_MAX_CONNECTIONS_PER_IP,
        }
    }
}

/// Why a connection was turned away.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// `max_connections` are open.
    Global,
    /// `max_connections_per_ip` are open from this address.
    PerIp,
}

#[derive(Debug, Default)]
struct Open {
    total: usize,
    per_ip: HashMap<IpAddr, usize>,
}

/// Counts open connections, globally and per client IP, against [`Connections`]' bounds.
#[derive(Debug)]
pub struct ConnectionTable {
    max: usize,
    max_per_ip: usize,
    exempt: TrustedProxies,
    open: Mutex<Open>,
    refused: AtomicU64,
    timed_out: AtomicU64,
}

impl ConnectionTable {
    /// A table for `limits`.
    pub fn new(limits: &Connections) -> Self {
        ConnectionTable {
            max: limits.max_connections.max(1),
            max_per_ip: limits.max_connections_per_ip.max(1),
            exempt: TrustedProxies::default(),
            open: Mutex::new(Open::default()),
            refused: AtomicU64::new(0),
            timed_out: AtomicU64::new(0),
        }
    }

    /// Exempts the trusted proxies from the per-IP bound (each carries many clients); they still count
    /// against the global bound.
    pub fn exempting(mut self, proxies: TrustedProxies) -> Self {
        self.exempt = proxies;
        self
    }

    /// Admits one more connection from `ip`, or says which bound it is past (counted).
    pub fn admit(self: &Arc<Self>, ip: IpAddr) -> Result<Permit, Refusal> {
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        let from_ip = open.per_ip.get(&ip).copied().unwrap_or(0);
        let refusal = if open.total >= self.max {
            Some(Refusal::Global)
        } else if from_ip >= self.max_per_ip && !self.exempt.trusts(ip) {
            Some(Refusal::PerIp)
        } else {
            None
        };
        if let Some(r) = refusal {
            self.refused.fetch_add(1, Ordering::Relaxed);
            return Err(r);
        }
        open.total += 1;
        *open.per_ip.entry(ip).or_insert(0) += 1;
        Ok(Permit {
            table: self.clone(),
            ip,
        })
    }

    /// Connections open now.
    pub fn open(&self) -> usize {
        self.open.lock().unwrap_or_else(|p| p.into_inner()).total
    }

    /// Connections turned away so far.
    pub fn refused(&self) -> u64 {
        self.refused.load(Ordering::Relaxed)
    }

    /// Connections closed by a header, body or idle timeout so far.
    pub fn timed_out(&self) -> u64 {
        self.timed_out.load(Ordering::Relaxed)
    }

    /// Counts one connection closed by a timeout.
    pub(crate) fn count_timeout(&self) {
        self.timed_out.fetch_add(1, Ordering::Relaxed);
    }

    /// The `/metrics` lines: open connections, refused and timed-out ones.
    pub fn render(&self) -> String {
        format!(
            "# HELP agent_adaptor_connections_open HTTP connections open now.\n\
             # TYPE agent_adaptor_connections_open gauge\n\
             agent_adaptor_connections_open {}\n\
             # HELP agent_adaptor_connections_refused_total Connections closed at once: past max_connections or max_connections_per_ip.\n\
             # TYPE agent_adaptor_connections_refused_total counter\n\
             agent_adaptor_connections_refused_total {}\n\
             # HELP agent_adaptor_connections_timed_out_total Connections closed by the header, body or idle timeout.\n\
             # TYPE agent_adaptor_connections_timed_out_total counter\n\
             agent_adaptor_connections_timed_out_total {}\n",
            self.open(),
            self.refused(),
            self.timed_out()
        )
    }
}

/// One admitted connection; dropping it frees its place in the table.
#[derive(Debug)]
pub struct Permit {
    table: Arc<ConnectionTable>,
    ip: IpAddr,
}

impl Drop for Permit {
    fn drop(&mut self) {
        let mut open = self.table.open.lock().unwrap_or_else(|p| p.into_inner());
        open.total = open.total.saturating_sub(1);
        if let Some(n) = open.per_ip.get_mut(&self.ip) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                open.per_ip.remove(&self.ip);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::net::Ipv4Addr;

    use super::*;

    fn ip(n: u8) -> IpAddr {
        IpAddr::V4(Ipv4Addr::new(10, 0, 0, n))
    }

    #[test]
    fn both_bounds_refuse_and_permits_free_their_place() {
        let t = Arc::new(ConnectionTable::new(&Connections {
            max_connections: 3,
            max_connections_per_ip: 2,
            ..Default::default()
        }));
        let a = t.admit(ip(1)).unwrap();
        let _b = t.admit(ip(1)).unwrap();
        assert_eq!(t.admit(ip(1)).unwrap_err(), Refusal::PerIp);
        let _c = t.admit(ip(2)).unwrap();
        assert_eq!(t.admit(ip(3)).unwrap_err(), Refusal::Global);
        assert_eq!((t.open(), t.refused()), (3, 2));
        drop(a);
        assert!(t.admit(ip(1)).is_ok(), "a closed connection frees its place");
        assert_eq!(t.open(), 2, "the temporary permit was dropped");
    }
}
