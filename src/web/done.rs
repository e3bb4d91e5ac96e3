//! The green "done" box after a change. Its words travel in the redirect's URL (`done=`), with a
//! tag (`done_sig=`) keyed by the session's CSRF token: the box shows only words this service
//! wrote for this session, never a link's own text (issue 54).

use ring::hmac;

use crate::web::session::Viewer;

fn tag(viewer: &Viewer, message: &str) -> String {
    let key = hmac::Key::new(hmac::HMAC_SHA256, viewer.csrf.as_bytes());
    let sig = hmac::sign(&key, message.as_bytes());
    sig.as_ref().iter().map(|b| format!("{b:02x}")).collect()
}

/// The page's query after such a redirect.
#[derive(serde::Deserialize)]
pub(crate) struct Done {
    #[serde(default)]
    done: String,
    #[serde(default)]
    done_sig: String,
}

impl Done {
    /// Its message when this session's, else "".
    pub(crate) fn said(&self, viewer: &Viewer) -> &str {
        verified(viewer, &self.done, &self.done_sig)
    }
}

/// `done=...&done_sig=...` for a redirect after a change the viewer made.
pub(super) fn query(viewer: &Viewer, message: &str) -> String {
    let sig = tag(viewer, message);
    serde_urlencoded::to_string([("done", message), ("done_sig", sig.as_str())]).unwrap_or_default()
}

/// The done message when its tag is this session's, else nothing ("").
pub(super) fn verified<'a>(viewer: &Viewer, done: &'a str, sig: &str) -> &'a str {
    let key = hmac::Key::new(hmac::HMAC_SHA256, viewer.csrf.as_bytes());
    let Some(given) = unhex(sig) else {
        return "";
    };
    // ring's verify compares in constant time.
    match hmac::verify(&key, done.as_bytes(), &given) {
        Ok(()) => done,
        Err(_) => "",
    }
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    let pairs = s.as_bytes().chunks(2);
    pairs
        .map(|p| u8::from_str_radix(std::str::from_utf8(p).ok()?, 16).ok())
        .collect()
}
