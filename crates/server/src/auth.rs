//! API keys and tenants: which tenant a request acts for.
//!
//! Keys are declared per tenant in the configuration and held only as SHA-256 hashes ([`KeyHash`]). A
//! request presents its key as `Authorization: Bearer <key>` or `X-API-Key: <key>`; the key is hashed and
//! compared with **every** configured hash in constant time (no early exit, no map lookup keyed by the
//! secret), so the timing tells nothing about which keys exist.
//!
//! [`guard`] is the middleware on every `/v1/*` route: it resolves the tenant (401 with the JSON error
//! shape and a `WWW-Authenticate` challenge when the key is missing or unknown), applies the tenant's
//! request-rate limit (429), and stores the [`Tenant`] in the request's extensions. Unauthenticated
//! traffic — every request in dev mode, and a request that fails authentication — is charged to its
//! client address first ([`super::ip_limits`], 429 before the 401). Handlers take the
//! [`Tenant`] extractor. With no key configured the service is in dev mode: every request is tenant
//! [`DEFAULT_TENANT`](crate::runtime::DEFAULT_TENANT) and `Server::start` keeps the loopback-only rule.

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::sync::{Arc, PoisonError, RwLock};

use axum::extract::{ConnectInfo, FromRequestParts, Request, State};
use axum::http::HeaderMap;
use axum::http::request::Parts;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};

use super::AppState;
use super::error::ApiError;
use super::limits::Limits;

/// The SHA-256 hash of an API key. Its `Debug` never shows the hash.
#[derive(Clone, PartialEq, Eq)]
pub struct KeyHash([u8; 32]);

impl KeyHash {
    /// Hashes a plain key.
    pub fn of(key: &str) -> Self {
        KeyHash(Sha256::digest(key.as_bytes()).into())
    }

    /// Equality without an early exit.
    fn ct_eq(&self, other: &KeyHash) -> bool {
        let diff = self
            .0
            .iter()
            .zip(other.0.iter())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b));
        std::hint::black_box(diff) == 0
    }
}

impl std::fmt::Debug for KeyHash {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("KeyHash(..)")
    }
}

/// The shortest API key accepted in the configuration.
pub const MIN_KEY_LEN: usize = 16;

/// One tenant: its name (the store's tenant), its API keys (hashed) and limits overriding the defaults.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TenantSpec {
    /// The tenant name every record of its requests is stored under.
    pub name: String,
    /// The hashes of its API keys.
    pub keys: Vec<KeyHash>,
    /// Limits overriding the service defaults, field by field.
    pub limits: Limits,
    /// An operator tenant: its keys also read every tenant's usage (`GET /v1/usage?tenant=`).
    pub admin: bool,
}

impl TenantSpec {
    /// A tenant named `name` without keys.
    pub fn new(name: impl Into<String>) -> Self {
        TenantSpec {
            name: name.into(),
            ..Default::default()
        }
    }

    /// Adds an API key (hashed at once; the plain key is not kept). Keys shorter than [`MIN_KEY_LEN`]
    /// are refused by `Server::start`, which sees only the hash, so the length is checked here.
    pub fn key(mut self, plain: &str) -> Result<Self, AuthConfigError> {
        if plain.len() < MIN_KEY_LEN {
            return Err(AuthConfigError::ShortKey {
                tenant: self.name.clone(),
            });
        }
        self.keys.push(KeyHash::of(plain));
        Ok(self)
    }

    /// Replaces the tenant's limits.
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Makes the tenant an operator (see [`TenantSpec::admin`]).
    pub fn admin(mut self, admin: bool) -> Self {
        self.admin = admin;
        self
    }
}

/// Why the tenants of a configuration are unusable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AuthConfigError {
    /// A tenant without a name.
    #[error("a tenant has an empty name")]
    EmptyName,
    /// Two tenants share a name.
    #[error("duplicate tenant {0:?}")]
    DuplicateTenant(String),
    /// One key is declared twice (for one tenant or for two).
    #[error("tenant {0:?} declares a key that is already declared")]
    DuplicateKey(String),
    /// A key is too short to be a secret.
    #[error("tenant {tenant:?}: API keys must be at least {MIN_KEY_LEN} bytes")]
    ShortKey {
        /// The tenant.
        tenant: String,
    },
    /// A reload would leave no key configured (it would turn authentication off).
    #[error(
        "the new configuration has no API keys: a reload never turns authentication off (restart to do that)"
    )]
    WouldDisable,
}

/// One key hash and the tenant it resolves to.
type KeyEntry = (KeyHash, Arc<str>);

/// The key table: every configured key hash and the tenant it resolves to. It can be replaced as a
/// whole while the service runs ([`Auth::replace`], on SIGHUP): a request sees the old table or the new
/// one, never a mix.
#[derive(Debug, Default)]
pub struct Auth {
    keys: RwLock<Arc<[KeyEntry]>>,
    /// The operator tenants, swapped with the keys.
    admins: RwLock<Arc<BTreeSet<String>>>,
}

impl Auth {
    /// Builds the table; refuses empty or duplicate tenant names and duplicate keys.
    pub fn new(tenants: &[TenantSpec]) -> Result<Self, AuthConfigError> {
        let mut names = BTreeSet::new();
        let mut admins = BTreeSet::new();
        let mut keys: Vec<(KeyHash, Arc<str>)> = Vec::new();
        for t in tenants {
            if t.name.trim().is_empty() {
                return Err(AuthConfigError::EmptyName);
            }
            if !names.insert(t.name.as_str()) {
                return Err(AuthConfigError::DuplicateTenant(t.name.clone()));
            }
            if t.admin {
                admins.insert(t.name.clone());
            }
            let name: Arc<str> = Arc::from(t.name.as_str());
            for k in &t.keys {
                if keys.iter().any(|(h, _)| h == k) {
                    return Err(AuthConfigError::DuplicateKey(t.name.clone()));
                }
                keys.push((k.clone(), name.clone()));
            }
        }
        Ok(Auth {
            keys: RwLock::new(keys.into()),
            admins: RwLock::new(Arc::new(admins)),
        })
    }

    fn table(&self) -> Arc<[KeyEntry]> {
        // Nothing panics while holding the lock; recover the table if something ever did.
        self.keys.read().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// True when `tenant` is an operator tenant (its keys read every tenant's usage).
    pub fn is_admin(&self, tenant: &str) -> bool {
        self.admins
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .contains(tenant)
    }

    /// True when at least one key is configured (otherwise: dev mode).
    pub fn enabled(&self) -> bool {
        !self.table().is_empty()
    }

    /// How many keys are configured.
    pub fn key_count(&self) -> usize {
        self.table().len()
    }

    /// Replaces the whole table by `next`'s (a reload of the tenants and their keys). Refuses to turn
    /// authentication off: a service started with keys keeps requiring one until it restarts, so a
    /// half-written configuration file can never open it.
    pub fn replace(&self, next: Auth) -> Result<(), AuthConfigError> {
        let admins = next.admins.read().unwrap_or_else(PoisonError::into_inner).clone();
        let next = next.table();
        let mut keys = self.keys.write().unwrap_or_else(PoisonError::into_inner);
        if !keys.is_empty() && next.is_empty() {
            return Err(AuthConfigError::WouldDisable);
        }
        *keys = next;
        *self.admins.write().unwrap_or_else(PoisonError::into_inner) = admins;
        Ok(())
    }

    /// The tenant of a request with `headers`.
    pub fn resolve(&self, headers: &HeaderMap) -> Result<Tenant, ApiError> {
        if !self.enabled() {
            return Ok(Tenant(crate::runtime::DEFAULT_TENANT.to_owned()));
        }
        let Some(key) = presented_key(headers) else {
            return Err(ApiError::unauthorized(
                "an API key is required: `Authorization: Bearer <key>` or `X-API-Key: <key>`",
                false,
            ));
        };
        let hash = KeyHash::of(key);
        let table = self.table();
        let mut found: Option<&Arc<str>> = None;
        for (h, tenant) in table.iter() {
            // Compare with every key; remember a match without leaving the loop.
            if h.ct_eq(&hash) {
                found = Some(tenant);
            }
        }
        match found {
            Some(t) => Ok(Tenant(t.to_string())),
            None => Err(ApiError::unauthorized("the API key is not valid", true)),
        }
    }
}

/// The key a request presents: `Authorization: Bearer <key>` (scheme case-insensitive), else `X-API-Key`.
fn presented_key(headers: &HeaderMap) -> Option<&str> {
    let bearer = headers
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            let (scheme, rest) = v.trim().split_once(' ')?;
            scheme.eq_ignore_ascii_case("bearer").then(|| rest.trim())
        })
        .filter(|k| !k.is_empty());
    bearer.or_else(|| {
        headers
            .get("x-api-key")
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
            .filter(|k| !k.is_empty())
    })
}

/// The tenant a request acts for. Every lookup of threads, runs, events, approvals and messages is
/// scoped by it; another tenant's ids answer 404.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tenant(pub String);

impl Tenant {
    /// The tenant name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl FromRequestParts<Arc<AppState>> for Tenant {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &Arc<AppState>) -> Result<Self, Self::Rejection> {
        if let Some(t) = parts.extensions.get::<Tenant>() {
            return Ok(t.clone());
        }
        // A route outside the guard still authenticates (without the rate limit).
        state.auth.resolve(&parts.headers)
    }
}

/// The middleware of every `/v1/*` route: authenticate (401), rate-limit the tenant (429), then hand the
/// [`Tenant`] to the handler.
pub async fn guard(State(state): State<Arc<AppState>>, mut req: Request, next: Next) -> Response {
    // Unauthenticated traffic (dev mode, or a failed authentication) is limited per client address.
    // Behind a trusted proxy the client is the one `X-Forwarded-For` names (`super::proxies`).
    let client = req
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| state.config.trusted_proxies.client_ip(c.0.ip(), req.headers()));
    if let Some(ip) = client {
        super::telemetry::record_client(ip);
    }
    let by_ip = |state: &AppState| match client {
        Some(ip) => state.ip_limits.admit(ip),
        None => Ok(()),
    };
    let tenant = match state.auth.resolve(req.headers()) {
        Ok(t) => t,
        Err(e) => {
            return match by_ip(&state) {
                Err(limited) => limited.into_response(),
                Ok(()) => e.into_response(),
            };
        }
    };
    if !state.auth.enabled()
        && let Err(limited) = by_ip(&state)
    {
        return limited.into_response();
    }
    super::telemetry::record_tenant(tenant.as_str());
    if let Err(e) = state.limits.admit_request(tenant.as_str()) {
        return e.into_response();
    }
    req.extensions_mut().insert(tenant);
    next.run(req).await
}
