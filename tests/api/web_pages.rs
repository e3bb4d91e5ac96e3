//! The web pages' security over plain HTTP (the browser journey is tests/browser): sessions,
//! CSRF, CSP, permission checks on forged posts, the sign-in throttle, the forced password change.

use reqwest::blocking::{Client, Response};
use reqwest::header::{CONTENT_SECURITY_POLICY, LOCATION, SET_COOKIE};
use reqwest::StatusCode;
use serde_json::json;

use crate::support::{Options, TestServer, ADMIN_ID, ADMIN_SECRET};

/// A browser without one: no redirects followed, cookies kept by hand.
pub(crate) struct Visitor<'a> {
    server: &'a TestServer,
    http: Client,
    cookies: Vec<(String, String)>,
}

impl<'a> Visitor<'a> {
    pub(crate) fn new(server: &'a TestServer) -> Self {
        let http = Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap();
        Visitor {
            server,
            http,
            cookies: vec![],
        }
    }

    fn keep(&mut self, res: &Response) {
        for c in res.headers().get_all(SET_COOKIE) {
            let c = c.to_str().unwrap();
            let (pair, _) = c.split_once(';').unwrap_or((c, ""));
            let (name, value) = pair.split_once('=').unwrap();
            self.cookies.retain(|(n, _)| n != name);
            if !c.contains("Max-Age=0") {
                self.cookies.push((name.to_string(), value.to_string()));
            }
        }
    }

    fn cookie_header(&self) -> String {
        self.cookies
            .iter()
            .map(|(n, v)| format!("{n}={v}"))
            .collect::<Vec<_>>()
            .join("; ")
    }

    pub(crate) fn get(&mut self, path: &str) -> (StatusCode, String, Response) {
        let res = self
            .http
            .get(format!("{}{path}", self.server.base))
            .header("Cookie", self.cookie_header())
            .send()
            .unwrap();
        self.keep(&res);
        let status = res.status();
        (status, String::new(), res)
    }

    pub(crate) fn post(
        &mut self,
        path: &str,
        form: &[(&str, &str)],
    ) -> (StatusCode, String, Option<String>) {
        let res = self
            .http
            .post(format!("{}{path}", self.server.base))
            .header("Cookie", self.cookie_header())
            .form(form)
            .send()
            .unwrap();
        self.keep(&res);
        let status = res.status();
        let location = res
            .headers()
            .get(LOCATION)
            .map(|l| l.to_str().unwrap().to_string());
        (status, res.text().unwrap(), location)
    }

    /// The page's CSRF token (the first `csrf` field).
    pub(crate) fn csrf_of(&mut self, path: &str) -> String {
        let (_, _, res) = self.get(path);
        let html = res.text().unwrap();
        let at = html.find("name=\"csrf\" value=\"").expect("a csrf field") + 19;
        html[at..at + 64].to_string()
    }

    pub(crate) fn sign_in_client(
        &mut self,
        id: &str,
        secret: &str,
    ) -> (StatusCode, String, Option<String>) {
        let csrf = self.csrf_of("/signin");
        let form = [
            ("csrf", csrf.as_str()),
            ("kind", "client"),
            ("client_id", id),
            ("client_secret", secret),
        ];
        self.post("/signin", &form)
    }
}

#[test]
fn pages_need_a_session_and_carry_a_strict_csp() {
    let server = TestServer::start();
    let mut v = Visitor::new(&server);
    let (status, _, res) = v.get("/");
    assert_eq!(status, StatusCode::SEE_OTHER);
    assert_eq!(res.headers()[LOCATION], "/signin");
    let (status, _, res) = v.get("/signin");
    assert_eq!(status, StatusCode::OK);
    let csp = res.headers()[CONTENT_SECURITY_POLICY]
        .to_str()
        .unwrap()
        .to_string();
    assert!(
        csp.contains("script-src 'self'") && !csp.contains("unsafe-inline"),
        "{csp}"
    );
    let cookie = res.headers()[SET_COOKIE].to_str().unwrap().to_string();
    assert!(
        cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"),
        "{cookie}"
    );
    // An unknown page answers a browser with a page in words; anything else with JSON.
    let nope = |path: &str, accept: &str| {
        let res = server
            .request("GET", path)
            .header("Accept", accept)
            .send()
            .unwrap();
        let kind = res.headers()["content-type"].to_str().unwrap().to_string();
        (res.status(), kind, res.text().unwrap())
    };
    let (status, kind, body) = nope("/datasets", "text/html,application/xhtml+xml");
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(
        kind.starts_with("text/html") && body.contains("href=\"/signin\""),
        "{body}"
    );
    let (status, kind, body) = nope("/nope", "application/json");
    assert_eq!(
        (status, kind.starts_with("application/json")),
        (StatusCode::NOT_FOUND, true)
    );
    assert!(body.contains("no such route"), "{body}");
    let (_, kind, _) = nope("/api/nope", "text/html");
    assert!(kind.starts_with("application/json"), "{kind}");
    // The API is untouched: an unknown API route is still a JSON 404.
    let (status, body) = server.call(
        "GET",
        "/api/no-such-thing",
        Some(&server.admin_token()),
        None,
    );
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
}

#[test]
fn signin_sets_a_strict_httponly_session_and_signout_ends_it() {
    let server = TestServer::start();
    let mut v = Visitor::new(&server);
    // Without the sign-in form's token: refused before the credentials are looked at.
    let (status, body, _) = v.post(
        "/signin",
        &[
            ("kind", "client"),
            ("client_id", ADMIN_ID),
            ("client_secret", ADMIN_SECRET),
        ],
    );
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    let (status, _, location) = v.sign_in_client(ADMIN_ID, ADMIN_SECRET);
    assert_eq!(status, StatusCode::SEE_OTHER);
    assert_eq!(location.as_deref(), Some("/"));
    assert!(v.cookies.iter().any(|(n, _)| n == "rapid_session"));
    let (status, _, _) = v.get("/subjects");
    assert_eq!(status, StatusCode::OK);
    let csrf = v.csrf_of("/jobs");
    let (status, _, _) = v.post("/signout", &[("csrf", &csrf)]);
    assert_eq!(status, StatusCode::SEE_OTHER);
    let (status, _, _) = v.get("/subjects");
    assert_eq!(status, StatusCode::SEE_OTHER, "signed out");
}

#[test]
fn forged_and_tokenless_posts_are_refused() {
    let server = TestServer::start();
    let (id, secret) = server.create_client("reader", &["READ_PUBLIC"]);
    let mut reader = Visitor::new(&server);
    reader.sign_in_client(&id, &secret);
    let csrf = reader.csrf_of("/jobs");
    let (status, body, _) = reader.post(
        "/subjects/new",
        &[
            ("csrf", &csrf),
            ("kind", "client"),
            ("name", "forged"),
            ("permissions", "USER_ADMIN"),
        ],
    );
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert!(body.contains("USER_ADMIN"), "refusal in words: {body}");
    let (status, _, _) = reader.post(
        "/protected-domains",
        &[("csrf", &csrf), ("domain", "forged")],
    );
    assert_eq!(status, StatusCode::FORBIDDEN);
    let (status, _, _) = reader.get("/upload");
    assert_eq!(
        status,
        StatusCode::FORBIDDEN,
        "no write permission: no upload page"
    );

    let mut admin = Visitor::new(&server);
    admin.sign_in_client(ADMIN_ID, ADMIN_SECRET);
    let (status, _, _) = admin.post("/subjects/new", &[("kind", "client"), ("name", "no-token")]);
    assert_eq!(status, StatusCode::FORBIDDEN, "no CSRF token");
    let (status, _, _) = admin.post(
        "/subjects/new",
        &[("csrf", &csrf), ("kind", "client"), ("name", "other-token")],
    );
    assert_eq!(
        status,
        StatusCode::FORBIDDEN,
        "another session's CSRF token"
    );
    let own = admin.csrf_of("/subjects");
    let (status, body, _) = admin.post(
        "/subjects/new",
        &[
            ("csrf", &own),
            ("kind", "client"),
            ("name", "made-here"),
            ("permissions", "READ_PUBLIC"),
        ],
    );
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let (_, list) = server.call("GET", "/api/subjects", Some(&server.admin_token()), None);
    let names: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["subject_name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"made-here") && !names.contains(&"forged") && !names.contains(&"no-token")
    );
}

#[test]
fn failed_web_signins_go_through_the_signin_throttle() {
    let server = TestServer::start_with(Options {
        args: vec![
            "--signin-free-failures".into(),
            "2".into(),
            "--signin-base-delay-ms".into(),
            "60000".into(),
        ],
        ..Default::default()
    });
    let mut v = Visitor::new(&server);
    let mut statuses = vec![];
    for _ in 0..4 {
        statuses.push(v.sign_in_client(ADMIN_ID, "wrong-secret").0);
    }
    assert_eq!(statuses[0], StatusCode::UNAUTHORIZED);
    assert_eq!(
        *statuses.last().unwrap(),
        StatusCode::TOO_MANY_REQUESTS,
        "{statuses:?}"
    );
    // The API's token endpoint shares the throttle for this account and address: a wrong
    // secret is refused there too, while the true secret is never locked out.
    let (status, _) = server.try_token(ADMIN_ID, "wrong-secret");
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
    let (status, _) = server.try_token(ADMIN_ID, ADMIN_SECRET);
    assert_eq!(status, StatusCode::OK);
}

#[test]
fn a_new_user_must_replace_the_temporary_password_first() {
    let server = TestServer::start();
    let (status, user) = server.call(
        "POST",
        "/api/user",
        Some(&server.admin_token()),
        Some(&json!({"username": "newcomer", "email": "newcomer@example.com", "permissions": ["READ_PUBLIC"]})),
    );
    assert_eq!(status, StatusCode::CREATED, "{user}");
    let temporary = user["temporary_password"].as_str().unwrap();
    let mut v = Visitor::new(&server);
    let csrf = v.csrf_of("/signin");
    let form = [
        ("csrf", csrf.as_str()),
        ("kind", "user"),
        ("username", "newcomer"),
        ("password", temporary),
    ];
    let (status, _, location) = v.post("/signin", &form);
    assert_eq!(status, StatusCode::SEE_OTHER);
    assert_eq!(location.as_deref(), Some("/password"));
    let (status, _, res) = v.get("/");
    assert_eq!(status, StatusCode::SEE_OTHER);
    assert_eq!(res.headers()[LOCATION], "/password");
    let csrf = v.csrf_of("/password");
    let change = [
        ("csrf", csrf.as_str()),
        ("current_password", temporary),
        ("new_password", "a-fresh-password-9"),
        ("confirm_password", "a-fresh-password-9"),
    ];
    let (status, _, _) = v.post("/password", &change);
    assert_eq!(status, StatusCode::SEE_OTHER);
    let (status, _, _) = v.get("/");
    assert_eq!(status, StatusCode::OK);
    // A later sign-in goes straight in.
    let mut again = Visitor::new(&server);
    let csrf = again.csrf_of("/signin");
    let form = [
        ("csrf", csrf.as_str()),
        ("kind", "user"),
        ("username", "newcomer"),
        ("password", "a-fresh-password-9"),
    ];
    let (_, _, location) = again.post("/signin", &form);
    assert_eq!(location.as_deref(), Some("/"));
}

/// The must-replace flag is the engine's (kept in the catalog): it survives a restart, and a
/// password changed through the API clears it for the pages too.
#[test]
fn the_temporary_password_flag_survives_a_restart_and_clears_through_the_api() {
    let server = TestServer::start();
    let (status, user) = server.call(
        "POST",
        "/api/user",
        Some(&server.admin_token()),
        Some(&json!({"username": "later", "email": "later@example.com", "permissions": ["READ_PUBLIC"]})),
    );
    assert_eq!(status, StatusCode::CREATED, "{user}");
    let temporary = user["temporary_password"].as_str().unwrap().to_string();
    let server = TestServer::start_in(server.stop(), Options::default());
    let web_signin = |password: &str| {
        let mut v = Visitor::new(&server);
        let csrf = v.csrf_of("/signin");
        let form = [
            ("csrf", csrf.as_str()),
            ("kind", "user"),
            ("username", "later"),
            ("password", password),
        ];
        v.post("/signin", &form).2
    };
    assert_eq!(web_signin(&temporary).as_deref(), Some("/password"));
    let (status, token) = server.call(
        "POST",
        "/api/oauth2/token",
        None,
        Some(&json!({"grant_type": "password", "username": "later", "password": temporary})),
    );
    assert_eq!(status, StatusCode::OK, "{token}");
    let (status, body) = server.call(
        "PUT",
        "/api/user/password",
        token["access_token"].as_str(),
        Some(&json!({"current_password": temporary, "new_password": "a-fresh-password-9"})),
    );
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(web_signin("a-fresh-password-9").as_deref(), Some("/"));
}

/// Generates a schema from `csv` on the page (as `dataset` in domain `shop`): the editor's HTML.
fn generate(v: &mut Visitor, dataset: &str, csv: &str) -> String {
    let csrf = v.csrf_of("/schema/new");
    let file = reqwest::blocking::multipart::Part::text(csv.to_string()).file_name("orders.csv");
    let form = reqwest::blocking::multipart::Form::new()
        .text("csrf", csrf)
        .text("layer", "default")
        .text("sensitivity", "PUBLIC")
        .text("domain", "shop")
        .text("dataset", dataset.to_string())
        .part("file", file);
    let res = v
        .http
        .post(format!("{}/schema/generate", v.server.base))
        .header("Cookie", v.cookie_header())
        .multipart(form)
        .send()
        .unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    res.text().unwrap()
}

fn sample_token(editor: &str) -> String {
    let at = editor
        .find("name=\"sample\" value=\"")
        .expect("a sample field")
        + 21;
    editor[at..at + 32].to_string()
}

#[test]
fn a_kept_sample_is_its_generators_only_and_expires() {
    let server = TestServer::start();
    let mut admin = Visitor::new(&server);
    admin.sign_in_client(ADMIN_ID, ADMIN_SECRET);
    let editor = generate(&mut admin, "kept", "id,region\n1,north\n2,\n3,north\n");
    assert!(editor.contains("<code>north</code>"), "{editor}");
    assert!(editor.contains("1 null of 3 rows"), "{editor}");
    let token = sample_token(&editor);
    let saved = format!("/schema/saved/{token}");

    // Saved: the confirmation offers the sample's upload.
    let csrf = admin.csrf_of("/schema/new");
    let form = [
        ("csrf", csrf.as_str()),
        ("mode", "create"),
        ("columns", "2"),
        ("sample", token.as_str()),
        ("m_layer", "default"),
        ("m_domain", "shop"),
        ("m_dataset", "kept"),
        ("m_sensitivity", "PUBLIC"),
        ("m_update_behaviour", "APPEND"),
        ("m_owners", "Sales <sales@example.com>"),
        ("c0_name", "id"),
        ("c0_data_type", "int"),
        ("c1_name", "region"),
        ("c1_data_type", "string"),
        ("c1_allow_null", "on"),
    ];
    let (status, body, location) = admin.post("/schema/save", &form);
    assert_eq!(status, StatusCode::SEE_OTHER, "{body}");
    assert_eq!(location.as_deref(), Some(saved.as_str()));

    // Another DATA_ADMIN may neither see nor upload it, nor see its figures in the editor.
    let (id, secret) = server.create_client("other-admin", &["DATA_ADMIN", "WRITE_ALL"]);
    let mut other = Visitor::new(&server);
    other.sign_in_client(&id, &secret);
    let (status, _, _) = other.get(&saved);
    assert_eq!(status, StatusCode::FORBIDDEN);
    let other_csrf = other.csrf_of("/schema/new");
    let (status, body, _) = other.post(&format!("{saved}/upload"), &[("csrf", &other_csrf)]);
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert!(body.contains("generated by someone else"), "{body}");
    // Without the CSRF token, not even its owner.
    let (status, _, _) = admin.post(&format!("{saved}/upload"), &[]);
    assert_eq!(status, StatusCode::FORBIDDEN);
    let (status, _, res) = admin.get(&saved);
    assert_eq!(status, StatusCode::OK);
    assert!(res.text().unwrap().contains("Upload this sample"));

    // An hour later it is gone, in words.
    let kept = server
        .data_dir()
        .join("samples")
        .join(&token)
        .join("kept.json");
    let mut meta: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&kept).unwrap()).unwrap();
    meta["created"] = json!(1);
    std::fs::write(&kept, meta.to_string()).unwrap();
    let csrf = admin.csrf_of("/schema/new");
    let (status, body, _) = admin.post(&format!("{saved}/upload"), &[("csrf", &csrf)]);
    assert_eq!(status, StatusCode::GONE, "{body}");
    assert!(body.contains("no longer kept"), "{body}");
    assert!(
        !server.data_dir().join("samples").join(&token).exists(),
        "swept"
    );
}
