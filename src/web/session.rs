//! Web sessions: an opaque id in an HttpOnly, SameSite=Strict cookie; everything else (who, until
//! when, the CSRF token, whether the password must first be replaced) stays on the server.
//!
//! Sessions live in memory: a restart signs everyone out, which is the safe failure. Expiry is
//! checked on every request and expired entries are swept when sessions are created.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use actix_web::cookie::{Cookie, SameSite};
use actix_web::{web, HttpRequest};
use rapid_actors::auth::permission::{Access, Permission};
use rapid_actors::auth::{now_seconds, Subject};
pub(super) use subtle_eq::constant_time_eq;

use crate::state::AppState;

pub const SESSION_COOKIE: &str = "rapid_session";
/// Before sign-in there is no session: the sign-in form's CSRF token is also set in this cookie
/// (double submit), so a cross-site page cannot sign a victim into the attacker's account.
pub const SIGNIN_COOKIE: &str = "rapid_signin";

/// How many jobs' queries the pages remember.
const REMEMBERED_QUERIES: usize = 2000;

#[derive(Clone)]
struct Session {
    subject_id: String,
    csrf: String,
    expires: i64,
    must_change_password: bool,
}

pub struct WebState {
    sessions: Mutex<HashMap<String, Session>>,
    /// The builder's query behind each large-query job started from the pages (its form as a
    /// query string), newest last, at most [`REMEMBERED_QUERIES`]; kept until a restart.
    job_queries: Mutex<std::collections::VecDeque<(String, String)>>,
    ttl_seconds: i64,
    secure_cookie: bool,
}

/// The signed-in subject of a page request.
pub struct Viewer {
    pub subject: Arc<Subject>,
    /// The token every changing form of this session carries.
    pub csrf: String,
    pub session_id: String,
}

impl Viewer {
    pub fn is_data_admin(&self) -> bool {
        self.subject.has(&Permission::DataAdmin)
    }

    pub fn is_user_admin(&self) -> bool {
        self.subject.has(&Permission::UserAdmin)
    }

    /// Whether the viewer may write any dataset at all (the upload page is offered only then).
    pub fn can_write_any(&self) -> bool {
        let writes = |p: &Permission| p.is_access(Access::Write);
        self.subject.permissions.iter().any(writes)
    }
}

/// A random token: two v4 UUIDs, 244 random bits.
pub fn random_token() -> String {
    format!(
        "{}{}",
        uuid::Uuid::new_v4().simple(),
        uuid::Uuid::new_v4().simple()
    )
}

mod subtle_eq {
    /// Equal lengths and equal bytes, without an early exit on the first difference.
    pub(crate) fn constant_time_eq(a: &str, b: &str) -> bool {
        a.len() == b.len()
            && a.bytes()
                .zip(b.bytes())
                .fold(0u8, |acc, (x, y)| acc | (x ^ y))
                == 0
    }
}

impl WebState {
    pub fn new(ttl_seconds: i64, secure_cookie: bool) -> WebState {
        WebState {
            sessions: Mutex::new(HashMap::new()),
            job_queries: Mutex::new(std::collections::VecDeque::new()),
            ttl_seconds,
            secure_cookie,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Session>> {
        // A panic while holding this lock leaves only plain data behind: keep using it.
        self.sessions.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A new session for `subject_id`; its cookie.
    pub fn create(&self, subject_id: &str, must_change_password: bool) -> Cookie<'static> {
        let id = random_token();
        let now = now_seconds();
        let mut map = self.lock();
        map.retain(|_, s| s.expires > now);
        map.insert(
            id.clone(),
            Session {
                subject_id: subject_id.to_string(),
                csrf: random_token(),
                expires: now + self.ttl_seconds,
                must_change_password,
            },
        );
        self.cookie(SESSION_COOKIE, id, self.ttl_seconds)
    }

    /// Remembers the builder's form (`query`, a URL query string) that started job `job_id`.
    pub fn remember_job_query(&self, job_id: &str, query: String) {
        let mut q = self.job_queries.lock().unwrap_or_else(|p| p.into_inner());
        if q.len() >= REMEMBERED_QUERIES {
            q.pop_front();
        }
        q.push_back((job_id.to_string(), query));
    }

    /// The builder's form that started job `job_id`, if these pages started it since the start.
    pub fn job_query(&self, job_id: &str) -> Option<String> {
        let q = self.job_queries.lock().unwrap_or_else(|p| p.into_inner());
        q.iter()
            .find(|(id, _)| id == job_id)
            .map(|(_, s)| s.clone())
    }

    pub fn remove(&self, session_id: &str) {
        self.lock().remove(session_id);
    }

    pub fn password_changed(&self, session_id: &str) {
        if let Some(s) = self.lock().get_mut(session_id) {
            s.must_change_password = false;
        }
    }

    /// A cookie of ours: HttpOnly, SameSite=Strict, the whole site.
    pub fn cookie(&self, name: &'static str, value: String, max_age: i64) -> Cookie<'static> {
        Cookie::build(name, value)
            .path("/")
            .http_only(true)
            .same_site(SameSite::Strict)
            .secure(self.secure_cookie)
            .max_age(actix_web::cookie::time::Duration::seconds(max_age))
            .finish()
    }

    /// The cookie that removes `name` from the browser.
    pub fn expired_cookie(&self, name: &'static str) -> Cookie<'static> {
        self.cookie(name, String::new(), 0)
    }
}

/// What a request's session cookie says.
pub enum Found {
    None,
    MustChangePassword(Viewer),
    Ready(Viewer),
}

/// The sessions [`crate::web::configure`] registered as app data.
pub fn sessions(req: &HttpRequest) -> &WebState {
    // web::configure always registers them with the pages that call this.
    req.app_data::<web::Data<WebState>>()
        .expect("the web pages' sessions are registered with the pages")
}

pub fn find(req: &HttpRequest, state: &AppState) -> Found {
    let sessions = sessions(req);
    let Some(id) = req.cookie(SESSION_COOKIE).map(|c| c.value().to_string()) else {
        return Found::None;
    };
    let session = {
        let mut map = sessions.lock();
        match map.get(&id) {
            Some(s) if s.expires > now_seconds() => s.clone(),
            Some(_) => {
                map.remove(&id);
                return Found::None;
            }
            None => return Found::None,
        }
    };
    // The subject as it is now: deleted subjects are signed out, permission changes apply at once.
    let Some(subject) = state
        .auth()
        .snapshot()
        .subjects
        .get(&session.subject_id)
        .cloned()
    else {
        sessions.remove(&id);
        return Found::None;
    };
    let viewer = Viewer {
        subject,
        csrf: session.csrf,
        session_id: id,
    };
    if session.must_change_password {
        Found::MustChangePassword(viewer)
    } else {
        Found::Ready(viewer)
    }
}
