//! A real `rapid-rs` process per test: port 0, a temp data folder, known admin credentials.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use reqwest::blocking::{Client, RequestBuilder};
use reqwest::StatusCode;
use serde_json::{json, Value};
use tempfile::TempDir;

pub(crate) const ADMIN_ID: &str = "testadmin";
pub(crate) const ADMIN_SECRET: &str = "test-admin-secret-0123456789abcdef";

pub(crate) struct TestServer {
    child: Child,
    pub base: String,
    pub dir: TempDir,
    /// Its data folder (`{dir}/data` unless [`Options::data_dir`] named another).
    data: PathBuf,
    http: Client,
    stopped: bool,
    /// What the server printed before its ready line.
    preamble: Vec<String>,
    /// Whether it keeps the current commit's files only (the default here): then a job's end
    /// waits for retention to remove what the commit replaced, which it does right after.
    keeps_one_commit: bool,
}

/// Options for starting a server.
#[derive(Default, Clone)]
pub(crate) struct Options {
    pub args: Vec<String>,
    /// Start without RAPID_ADMIN_CLIENT_ID/SECRET, so the server generates its admin.
    pub no_admin_override: bool,
    /// Extra environment variables (e.g. RAPID_CATALOG_URL).
    pub env: Vec<(String, String)>,
    /// The data folder to use instead of `{dir}/data` (several servers on one folder).
    pub data_dir: Option<PathBuf>,
}

impl TestServer {
    pub(crate) fn start() -> TestServer {
        Self::start_in(tempfile::tempdir().unwrap(), Options::default())
    }

    pub(crate) fn start_with(options: Options) -> TestServer {
        Self::start_in(tempfile::tempdir().unwrap(), options)
    }

    pub(crate) fn start_in(dir: TempDir, options: Options) -> TestServer {
        let log = File::options()
            .create(true)
            .append(true)
            .open(dir.path().join("server.log"))
            .unwrap();
        let named = options
            .data_dir
            .clone()
            .unwrap_or_else(|| dir.path().join("data"));
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_rapid-rs"));
        // A relative data folder is relative to the test's folder, where the server runs.
        cmd.current_dir(dir.path());
        let data = dir.path().join(&named);
        cmd.arg("serve")
            .args(["--bind", "127.0.0.1:0", "--workers", "2"])
            .arg("--data-dir")
            .arg(&named)
            .args(&options.args)
            // Tests read the data folder directly (`stored::stored_rows`), which a merge in
            // flight would show twice; tests of compaction turn it on (`Options::env`).
            .env("RAPID_COMPACT_AUTO", "false")
            // Likewise files kept for earlier commits (history retention) would show in the
            // folder: only the current commit's are kept; tests of history keep more.
            .env("RAPID_HISTORY_KEEP_COMMITS", "1")
            .env("RAPID_HISTORY_KEEP_SECONDS", "0")
            .envs(options.env.iter().map(|(k, v)| (k, v)))
            .env_remove("RUST_LOG")
            .env("ALLOWED_EMAIL_DOMAINS", "example.com,test.org")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(log));
        if options.no_admin_override {
            cmd.env_remove("RAPID_ADMIN_CLIENT_ID")
                .env_remove("RAPID_ADMIN_CLIENT_SECRET");
        } else {
            cmd.env("RAPID_ADMIN_CLIENT_ID", ADMIN_ID)
                .env("RAPID_ADMIN_CLIENT_SECRET", ADMIN_SECRET);
        }
        let (child, base, preamble) =
            rapid_testkit::spawn_server_noting(&mut cmd).unwrap_or_else(|e| {
                let log =
                    std::fs::read_to_string(dir.path().join("server.log")).unwrap_or_default();
                panic!("{e}:\n{log}");
            });
        TestServer {
            child,
            base,
            dir,
            data,
            http: Client::builder()
                .timeout(Duration::from_secs(60))
                .build()
                .unwrap(),
            stopped: false,
            preamble,
            keeps_one_commit: !options
                .env
                .iter()
                .any(|(k, _)| k.starts_with("RAPID_HISTORY_KEEP")),
        }
    }

    /// The PostgreSQL listener's address (`RAPID_PG_LISTEN`), as printed at start-up.
    pub(crate) fn pg_addr(&self) -> Option<std::net::SocketAddr> {
        self.preamble
            .iter()
            .find_map(|l| l.strip_prefix("postgresql listening on "))
            .map(|a| a.trim().parse().unwrap())
    }

    /// The MCP listener's URL (`RAPID_MCP_LISTEN`), as printed at start-up.
    pub(crate) fn mcp_url(&self) -> Option<String> {
        self.preamble
            .iter()
            .find_map(|l| l.strip_prefix("mcp listening on "))
            .map(|u| u.trim().to_string())
    }

    /// Stops the server with SIGTERM (graceful) and hands back its folder for a restart.
    pub(crate) fn stop(mut self) -> TempDir {
        self.terminate();
        std::mem::replace(&mut self.dir, tempfile::tempdir().unwrap())
    }

    /// Kills the server at once (SIGKILL: a crash) and hands back its folder.
    pub(crate) fn kill(mut self) -> TempDir {
        self.stopped = true;
        let _ = self.child.kill();
        let _ = self.child.wait();
        std::mem::replace(&mut self.dir, tempfile::tempdir().unwrap())
    }

    fn terminate(&mut self) {
        if std::mem::replace(&mut self.stopped, true) {
            return;
        }
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// The server's process id (to read its CPU time from /proc).
    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    pub(crate) fn data_dir(&self) -> PathBuf {
        self.data.clone()
    }

    pub(crate) fn logs(&self) -> String {
        let mut s = String::new();
        File::open(self.dir.path().join("server.log"))
            .and_then(|mut f| f.read_to_string(&mut s))
            .unwrap();
        s
    }

    pub(crate) fn url(&self, path: &str) -> String {
        format!("{}{}", self.base, path)
    }

    pub(crate) fn request(&self, method: &str, path: &str) -> RequestBuilder {
        let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
        self.http.request(method, self.url(path))
    }

    /// Client-credentials token via HTTP Basic, exactly as the rAPId SDK asks for it.
    pub(crate) fn try_token(&self, id: &str, secret: &str) -> (StatusCode, Value) {
        rapid_testkit::try_token(&self.http, &self.base, id, secret)
    }

    pub(crate) fn token(&self, id: &str, secret: &str) -> String {
        rapid_testkit::token(&self.http, &self.base, id, secret)
    }

    pub(crate) fn admin_token(&self) -> String {
        self.token(ADMIN_ID, ADMIN_SECRET)
    }

    /// Sends `body` (if any) as JSON with a bearer `token` (if any).
    pub(crate) fn call(
        &self,
        method: &str,
        path: &str,
        token: Option<&str>,
        body: Option<&Value>,
    ) -> (StatusCode, Value) {
        let mut req = self.request(method, path);
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        if let Some(b) = body {
            req = req.json(b);
        }
        into_parts(req.send().unwrap())
    }

    /// Creates a user `name` (at example.com) as the admin; returns the temporary password.
    pub(crate) fn create_user(&self, name: &str) -> String {
        let (status, body) = self.call(
            "POST",
            "/api/user",
            Some(&self.admin_token()),
            Some(&json!({"username": name, "email": format!("{name}@example.com")})),
        );
        assert_eq!(status, StatusCode::CREATED, "{body}");
        body["temporary_password"].as_str().unwrap().to_string()
    }

    /// Creates a client with `permissions` as the admin; returns (client_id, client_secret).
    pub(crate) fn create_client(&self, name: &str, permissions: &[&str]) -> (String, String) {
        let (status, body) = self.call(
            "POST",
            "/api/client",
            Some(&self.admin_token()),
            Some(&json!({"client_name": name, "permissions": permissions})),
        );
        assert_eq!(status, StatusCode::CREATED, "{body}");
        (
            body["client_id"].as_str().unwrap().to_string(),
            body["client_secret"].as_str().unwrap().to_string(),
        )
    }

    /// A token for a new client holding exactly `permissions`.
    pub(crate) fn token_with(&self, name: &str, permissions: &[&str]) -> String {
        let (id, secret) = self.create_client(name, permissions);
        self.token(&id, &secret)
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.terminate();
    }
}

pub(crate) fn into_parts(res: reqwest::blocking::Response) -> (StatusCode, Value) {
    let status = res.status();
    let text = res.text().unwrap();
    let value = if text.is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&text).unwrap_or_else(|_| panic!("not JSON ({status}): {text}"))
    };
    (status, value)
}

/// Every byte of the catalog files (database and WAL), for "never stored" checks.
pub(crate) fn catalog_bytes(data_dir: &Path) -> Vec<u8> {
    let mut all = Vec::new();
    for name in ["catalog.sqlite", "catalog.sqlite-wal"] {
        if let Ok(bytes) = std::fs::read(data_dir.join(name)) {
            all.extend(bytes);
        }
    }
    all
}

pub(crate) fn contains_bytes(haystack: &[u8], needle: &str) -> bool {
    haystack
        .windows(needle.len())
        .any(|w| w == needle.as_bytes())
}

impl TestServer {
    /// Creates a schema as the admin; panics unless 201.
    pub(crate) fn create_schema(&self, schema: &Value) {
        let (status, body) = self.call(
            "POST",
            "/api/schema",
            Some(&self.admin_token()),
            Some(schema),
        );
        assert_eq!(status, StatusCode::CREATED, "{body}");
    }

    /// Uploads `bytes` as the multipart `file` named `filename`.
    pub(crate) fn upload(
        &self,
        token: &str,
        path: &str,
        filename: &str,
        bytes: Vec<u8>,
    ) -> (StatusCode, Value) {
        let part = reqwest::blocking::multipart::Part::bytes(bytes).file_name(filename.to_string());
        let form = reqwest::blocking::multipart::Form::new().part("file", part);
        into_parts(
            self.request("POST", path)
                .bearer_auth(token)
                .multipart(form)
                .send()
                .unwrap(),
        )
    }

    /// Uploads and waits for the job; returns the 202 details and the finished job.
    pub(crate) fn upload_and_wait(
        &self,
        token: &str,
        path: &str,
        filename: &str,
        bytes: Vec<u8>,
    ) -> (Value, Value) {
        let (status, body) = self.upload(token, path, filename, bytes);
        assert_eq!(status, StatusCode::ACCEPTED, "{body}");
        let job = self.wait_job(token, body["details"]["job_id"].as_str().unwrap());
        (body["details"].clone(), job)
    }

    /// Polls a job until it is no longer IN PROGRESS.
    /// One sample of `/api/metrics` (`series` as written there, labels included).
    pub(crate) fn metric(&self, token: &str, series: &str) -> f64 {
        let res = self
            .request("GET", "/api/metrics")
            .bearer_auth(token)
            .send()
            .unwrap();
        assert_eq!(res.status(), StatusCode::OK);
        let text = res.text().unwrap();
        text.lines()
            .find_map(|line| line.strip_prefix(series)?.strip_prefix(' '))
            .unwrap_or_else(|| panic!("no {series} in the metrics:\n{text}"))
            .parse()
            .unwrap()
    }

    pub(crate) fn wait_job(&self, token: &str, job_id: &str) -> Value {
        let (deadline, poll) = (Duration::from_secs(120), Duration::from_millis(25));
        let job = rapid_testkit::wait_job(&self.http, &self.base, token, job_id, deadline, poll);
        if self.keeps_one_commit {
            self.wait_retention(token);
        }
        job
    }

    /// Until no file of an earlier commit is kept (at most 10 s): a job's SUCCESS is visible
    /// the moment its commit is, and retention removes the replaced files just after, so tests
    /// that read the data folder wait for it.
    fn wait_retention(&self, token: &str) {
        let until = std::time::Instant::now() + Duration::from_secs(10);
        let series = "rapid_catalog_objects{object=\"retained_files\"}";
        while self.metric(token, series) > 0.0 && std::time::Instant::now() < until {
            std::thread::sleep(Duration::from_millis(25));
        }
    }
}

/// A schema JSON with the given columns and metadata overrides.
pub(crate) fn schema_json(
    domain: &str,
    dataset: &str,
    sensitivity: &str,
    behaviour: &str,
    columns: Value,
) -> Value {
    json!({
        "metadata": {
            "domain": domain,
            "dataset": dataset,
            "sensitivity": sensitivity,
            "update_behaviour": behaviour,
            "owners": [{"name": "Owner", "email": "owner@example.com"}],
        },
        "columns": columns,
    })
}
