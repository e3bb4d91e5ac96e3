//! Authentication and authorisation: subjects (clients and users), their credentials, permissions
//! and the protected domains that make `*_PROTECTED_{DOMAIN}` permissions valid.
//!
//! [`Auth`] is the handle the HTTP edge holds. Reads (token checks, permission checks, listings)
//! come from the published snapshot without awaiting; writes go through the AuthActor (`actor.rs`).

mod actor;
mod bootstrap;
pub mod hash_pool;
pub mod key_file;
pub mod names;
pub mod pass;
pub mod permission;
mod permission_words;
pub mod secrets;
#[cfg(test)]
mod shared_tests;
mod signin;
pub mod signin_stats;
mod snapshot;
mod subjects;
pub mod throttle;
pub mod token;

use std::path::PathBuf;
use std::sync::{Arc, RwLock};

use actix::{Actor, Addr, Arbiter};

pub(crate) use bootstrap::admin_client_id;
pub use bootstrap::{AdminCredentials, Bootstrap};
pub use snapshot::{AuthSnapshot, Subject, SubjectKind};
pub use subjects::{NewClient, NewUser, SubjectView};

use crate::auth::actor::{read_snapshot, Apply, AuthActor, Published};
use crate::auth::hash_pool::{HashPool, HashPoolSettings};
use crate::auth::signin_stats::{SignInCounts, SignInStats};
use crate::auth::throttle::{SignInThrottle, ThrottleSettings};
use crate::auth::token::TokenSigner;
use crate::catalog::{Catalog, SharedCatalog};
use crate::error::{Error, Result};
use crate::traced::Traced;

/// Instance settings that auth needs.
#[derive(Debug, Clone)]
pub struct AuthSettings {
    pub token_ttl_seconds: i64,
    pub allowed_email_domains: Vec<String>,
    /// `RAPID_ADMIN_CLIENT_ID` / `RAPID_ADMIN_CLIENT_SECRET`, when both are set.
    pub admin_override: Option<AdminCredentials>,
    /// Where the generated admin credentials are written on first start.
    pub credentials_file: PathBuf,
    /// The token signing key's own file (0600), outside the catalog.
    pub key_file: PathBuf,
    /// The configured layers (lower-case), which rAPId's layered permission names refer to.
    pub layers: Vec<String>,
    /// The pool argon2 runs on.
    pub hash_pool: HashPoolSettings,
    /// The failed sign-in throttle's policy.
    pub throttle: ThrottleSettings,
}

#[derive(Debug, Clone, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct IssuedToken {
    pub access_token: String,
    #[cfg_attr(feature = "openapi", schema(example = "Bearer"))]
    pub token_type: &'static str,
    pub expires_in: i64,
}

#[derive(Clone)]
pub struct Auth {
    addr: Addr<AuthActor>,
    published: Published,
    /// Read again when shared with other nodes, whose changes must be seen at once.
    catalog: SharedCatalog,
    signer: Arc<TokenSigner>,
    settings: Arc<AuthSettings>,
    pool: HashPool,
    throttle: Arc<SignInThrottle>,
    stats: Arc<SignInStats>,
    /// Checked against for unknown user names (see `secrets::decoy_hash`).
    decoy: String,
}

impl Auth {
    /// Prepares the catalog (signing key, admin client: a generated one's credentials file
    /// synced as `durability` says) and starts the AuthActor on its own arbiter, so its catalog
    /// writes never block an HTTP worker. Call inside a running actix system.
    pub fn start(
        catalog: SharedCatalog,
        settings: AuthSettings,
        durability: crate::storage::Durability,
    ) -> Result<(Auth, Bootstrap)> {
        let key = key_file::load_or_create(catalog.as_ref(), &settings.key_file)?;
        let bootstrap = bootstrap::prepare(catalog.as_ref(), &settings, durability)?;
        let layers: Arc<[String]> = settings.layers.clone().into();
        let snapshot = AuthSnapshot::load(catalog.as_ref(), layers)?;
        let published: Published = Arc::new(RwLock::new(Arc::new(snapshot)));
        let actor = AuthActor {
            catalog: catalog.clone(),
            published: published.clone(),
        };
        let addr = AuthActor::start_in_arbiter(&Arbiter::new().handle(), move |_| actor);
        let auth = Auth {
            addr,
            published,
            catalog,
            signer: Arc::new(TokenSigner::new(&key)),
            pool: HashPool::start(settings.hash_pool),
            throttle: SignInThrottle::new(settings.throttle),
            stats: Arc::new(SignInStats::default()),
            decoy: secrets::decoy_hash(),
            settings: Arc::new(settings),
        };
        Ok((auth, bootstrap))
    }

    /// Subjects, permissions and protected domains as they are now. On a catalog shared by
    /// several nodes, a change made by another node is seen here at once (a failed check keeps
    /// the cached picture, and says so in the log; [`Self::authenticate`] refuses instead).
    pub fn snapshot(&self) -> Arc<AuthSnapshot> {
        self.current().unwrap_or_else(|e| {
            tracing::warn!(error = %e.report(), "could not check the catalog for auth changes");
            read_snapshot(&self.published)
        })
    }

    /// The published picture, read again first when the shared catalog's auth version moved on.
    fn current(&self) -> Result<Arc<AuthSnapshot>> {
        let cached = read_snapshot(&self.published);
        if !self.catalog.is_shared() || self.catalog.auth_version()? == cached.version {
            return Ok(cached);
        }
        let fresh = AuthSnapshot::load(self.catalog.as_ref(), cached.layers.clone())?;
        Ok(actor::publish(&self.published, fresh))
    }

    /// The subject behind a bearer token, with its permissions as they are now. A deleted subject's
    /// token stops working at once, even before it expires (on every node).
    pub fn authenticate(&self, token: &str) -> Result<Arc<Subject>> {
        let claims = self.signer.verify(token, now_seconds())?;
        self.current()?
            .subjects
            .get(&claims.sub)
            .cloned()
            .ok_or_else(|| Error::unauthenticated("The subject of this token no longer exists"))
    }

    /// Sign-in outcomes by reason since start (never a secret).
    pub fn signin_counts(&self) -> SignInCounts {
        self.stats.counts()
    }

    /// The signature of a download link to `name` valid until `expires` (seconds since the epoch).
    /// The prefix keeps link signatures from ever being valid tokens, and the other way round.
    pub fn sign_link(&self, name: &str, expires: i64) -> String {
        self.signer
            .sign_bytes(format!("download-link\n{name}\n{expires}").as_bytes())
    }

    /// The key of the `hash` column mask: derived from the signing key under a prefix no token
    /// or link signs, so it is the instance's own and never stored.
    pub fn mask_key(&self) -> Vec<u8> {
        self.signer.sign_bytes(b"column-mask-hash-key").into_bytes()
    }

    /// The signed download link of the kept result `name` (`GET /api/results/{name}`), valid for
    /// `ttl_seconds` from now; `origin` is where clients reach the service (empty: a path).
    pub fn result_link(&self, origin: &str, name: &str, ttl_seconds: i64) -> String {
        let expires = now_seconds() + ttl_seconds;
        let signature = self.sign_link(name, expires);
        format!("{origin}/api/results/{name}?expires={expires}&signature={signature}")
    }

    /// A download link bound to `bound` (what the reader was allowed when the result was made,
    /// see `Engine::result`): signed with it, so the link cannot be given another.
    pub fn result_link_bound(&self, origin: &str, name: &str, bound: &str, ttl: i64) -> String {
        let expires = now_seconds() + ttl;
        let signature = self.sign_link(&format!("{name}#{bound}"), expires);
        format!("{origin}/api/results/{name}?expires={expires}&bound={bound}&signature={signature}")
    }

    /// Checks a download link: 403 when expired or when the signature does not match.
    pub fn verify_link(&self, name: &str, expires: i64, signature: &str) -> Result<()> {
        if !self.signer.verify_bytes(
            format!("download-link\n{name}\n{expires}").as_bytes(),
            signature,
        ) {
            return Err(Error::forbidden("This download link is not valid"));
        }
        if expires < now_seconds() {
            return Err(Error::forbidden(
                "This download link has expired: run the query again",
            ));
        }
        Ok(())
    }

    fn issue(&self, subject_id: &str) -> IssuedToken {
        let ttl = self.settings.token_ttl_seconds;
        IssuedToken {
            access_token: self.signer.issue(subject_id, now_seconds(), ttl),
            token_type: "Bearer",
            expires_in: ttl,
        }
    }

    async fn apply<R: Send + 'static>(
        &self,
        change: impl FnOnce(&dyn Catalog, &AuthSnapshot) -> Result<R> + Send + 'static,
    ) -> Result<R> {
        self.addr.send(Traced::new(Apply(Box::new(change)))).await?
    }
}

pub fn now_seconds() -> i64 {
    chrono::Utc::now().timestamp()
}
