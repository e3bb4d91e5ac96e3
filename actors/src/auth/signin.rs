//! Credential checks: client secrets, user passwords, each behind the sign-in throttle; argon2
//! on the bounded hash pool; an unknown name costing what a known one does.

use std::net::IpAddr;

use super::secrets;
use super::signin_stats::Outcome;
use super::snapshot::Credential;
use super::throttle::{AccountKind, Attempt, Refused, Scope};
use super::{Auth, IssuedToken};
use crate::error::{Error, ErrorKind, Result};

const BAD_CLIENT_CREDENTIALS: &str = "Invalid client credentials";
const BAD_USER_CREDENTIALS: &str = "Invalid username or password";

impl Auth {
    /// OAuth2 client credentials grant. Unknown id and wrong secret give the same answer.
    ///
    /// The secret is checked first (a digest, microseconds): the true secret always gets its
    /// token, whatever others have guessed. A 256-bit secret cannot be guessed, so refusing it
    /// would protect nothing and let anyone lock a client out. Wrong secrets go through the
    /// throttle, so a guesser is answered 429.
    pub fn client_token(
        &self,
        client_id: &str,
        client_secret: &str,
        addr: IpAddr,
    ) -> Result<IssuedToken> {
        let snapshot = self.snapshot();
        let known = match snapshot.subjects.get(client_id).map(|s| &s.credential) {
            Some(Credential::SecretDigest(d)) => Some(d.as_slice()),
            _ => None,
        };
        // Spend the same digest work for an unknown id.
        let ok =
            secrets::secret_matches(client_secret, known.unwrap_or(&[0u8; 32])) && known.is_some();
        if ok {
            self.throttle.forgive(AccountKind::Client, client_id, addr);
            self.stats.record(Outcome::Succeeded, Some(client_id));
            return Ok(self.issue(client_id));
        }
        let attempt = self.begin_attempt(AccountKind::Client, client_id, addr)?;
        attempt.failed();
        let (outcome, name) = match known {
            Some(_) => (Outcome::WrongSecret, Some(client_id)),
            None => (Outcome::UnknownClient, None),
        };
        self.stats.record(outcome, name);
        Err(Error::unauthenticated(BAD_CLIENT_CREDENTIALS))
    }

    /// OAuth2 password grant for users.
    pub async fn password_token(
        &self,
        username: &str,
        password: &str,
        addr: IpAddr,
    ) -> Result<IssuedToken> {
        let user_id = self.check_password(username, password, addr).await?;
        Ok(self.issue(&user_id))
    }

    /// Signs in with a name and secret where only one credential field exists (the PostgreSQL
    /// front's user and password): a client's id and secret when `name` is a client id, a
    /// user's name and password otherwise, each through the same throttle and hash pool as
    /// the token endpoint. The subject's id.
    pub async fn sign_in(&self, name: &str, secret: &str, addr: IpAddr) -> Result<String> {
        let is_client = matches!(
            self.snapshot().subjects.get(name).map(|s| &s.credential),
            Some(Credential::SecretDigest(_))
        );
        if is_client {
            self.client_token(name, secret, addr)?;
            return Ok(name.to_string());
        }
        self.check_password(name, secret, addr).await
    }

    /// Checks a user's password behind the throttle; the user's id when it matches, 401 when not
    /// (the same for an unknown name), 429 when throttled, 503 when the hash pool is full.
    pub(super) async fn check_password(
        &self,
        username: &str,
        password: &str,
        addr: IpAddr,
    ) -> Result<String> {
        let key = username.to_ascii_lowercase();
        let attempt = self.begin_attempt(AccountKind::User, &key, addr)?;
        let (user_id, hash) = self.user_credential(&key);
        let password = password.to_string();
        let stats = self.stats.clone();
        let checked = self
            .pool
            .run(move |memory| {
                stats.password_checked();
                secrets::password_matches_in(&password, &hash, memory)
            })
            .await;
        let ok = match checked {
            Ok(ok) => ok,
            Err(e) => {
                // Not a failure of the credential: the attempt counts as nothing.
                if e.kind == ErrorKind::Busy {
                    self.stats.record(Outcome::Busy, None);
                }
                drop(attempt);
                return Err(e);
            }
        };
        match user_id {
            Some(id) if ok => {
                attempt.succeeded();
                self.stats.record(Outcome::Succeeded, Some(&key));
                Ok(id)
            }
            Some(_) => {
                attempt.failed();
                self.stats.record(Outcome::WrongPassword, Some(&key));
                Err(Error::unauthenticated(BAD_USER_CREDENTIALS))
            }
            None => {
                attempt.failed();
                self.stats.record(Outcome::UnknownUser, None);
                Err(Error::unauthenticated(BAD_USER_CREDENTIALS))
            }
        }
    }

    fn begin_attempt(&self, kind: AccountKind, account: &str, addr: IpAddr) -> Result<Attempt> {
        self.throttle
            .begin(kind, account, addr)
            .map_err(|r: Refused| {
                let outcome = match r.scope {
                    Scope::Pair => Outcome::ThrottledPair,
                    Scope::Account => Outcome::ThrottledAccount,
                    Scope::Address => Outcome::ThrottledAddress,
                };
                // The name only when it is a real account (an unknown one may be a mistyped secret).
                let snapshot = self.snapshot();
                let known = match kind {
                    AccountKind::Client => snapshot.subjects.contains_key(account),
                    AccountKind::User => snapshot.users_by_name.contains_key(account),
                };
                self.stats.record(outcome, known.then_some(account));
                let seconds = r.retry_after.as_secs_f64().ceil().max(1.0) as u64;
                Error::throttled(
                    seconds,
                    format!("Too many failed sign-in attempts: try again in {seconds} seconds"),
                )
            })
    }

    /// The user id and password hash for the lower-cased `username`; for an unknown name, the
    /// decoy hash, so that a failed sign-in costs the same whether or not the user exists.
    fn user_credential(&self, username: &str) -> (Option<String>, String) {
        let snapshot = self.snapshot();
        let found = snapshot
            .users_by_name
            .get(username)
            .and_then(|id| snapshot.subjects.get(id));
        match found.map(|s| (&s.id, &s.credential)) {
            Some((id, Credential::PasswordHash(h))) => (Some(id.clone()), h.clone()),
            _ => (None, self.decoy.clone()),
        }
    }
}
