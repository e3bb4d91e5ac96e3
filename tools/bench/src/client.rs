//! The tool's client of the service: a token, schemas created for the run, retried reads.

use std::time::Duration;

use serde_json::{json, Value};

use crate::{retry, BenchArgs, Shape, Target};

pub(crate) struct Client {
    pub(crate) http: reqwest::Client,
    pub(crate) base: String,
    pub(crate) token: String,
    /// Retries of idempotent requests (polls, counts), for the summary.
    pub(crate) retries: retry::Retries,
}

impl Client {
    pub(crate) async fn connect(args: &BenchArgs) -> Result<Client, String> {
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(3600))
            // Below the server's default keep-alive (5 s), so that a pooled connection is
            // rarely reused just as the server closes it.
            .pool_idle_timeout(Duration::from_secs(2))
            .build()
            .map_err(|e| e.to_string())?;
        let base = args.url.trim_end_matches('/').to_string();
        let token =
            rapid_testkit::nonblocking::token(&http, &base, &args.client_id, &args.client_secret)
                .await?;
        Ok(Client {
            http,
            base,
            token,
            retries: retry::Retries::default(),
        })
    }

    /// Not retried: used for requests that change something (schemas).
    pub(crate) async fn post_json(&self, path: &str, body: &Value) -> Result<(u16, Value), String> {
        let res = self
            .http
            .post(format!("{}{path}", self.base))
            .bearer_auth(&self.token)
            .json(body)
            .send()
            .await;
        let res = res.map_err(|e| e.to_string())?;
        let status = res.status().as_u16();
        Ok((status, res.json().await.unwrap_or(Value::Null)))
    }

    /// A query: it changes nothing, so it is retried.
    pub(crate) async fn query(&self, path: &str, body: &Value) -> Result<(u16, Value), String> {
        let url = format!("{}{path}", self.base);
        self.retries
            .send(|| self.http.post(&url).bearer_auth(&self.token).json(body))
            .await
    }

    /// Polls a job until it ends; each poll is retried.
    pub(crate) async fn wait_job(&self, id: &str) -> Result<Value, String> {
        let url = format!("{}/jobs/{id}", self.base);
        loop {
            let (status, job) = self
                .retries
                .send(|| self.http.get(&url).bearer_auth(&self.token))
                .await?;
            if status != 200 {
                return Err(format!("job poll answered {status}: {job}"));
            }
            if rapid_testkit::job_ended(&job) {
                return Ok(job);
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

/// One dataset per uploader (or one for all), named after this run; their schemas created.
pub(crate) async fn create_datasets(
    client: &Client,
    args: &BenchArgs,
    shape: &Shape,
) -> Result<Vec<String>, String> {
    let run_id = format!(
        "{:08x}",
        (chrono::Utc::now().timestamp_millis() as u64 ^ args.seed) & 0xffff_ffff
    );
    let names: Vec<String> = match args.datasets {
        Target::One => vec![format!("bench_{run_id}")],
        Target::Many => (0..args.uploaders)
            .map(|i| format!("bench_{run_id}_{i}"))
            .collect(),
    };
    for name in &names {
        let schema = json!({
            "metadata": {"domain": "bench", "dataset": name, "sensitivity": "PUBLIC",
                         "owners": [{"name": "rapid-rs bench", "email": "bench@example.com"}]},
            "columns": shape.columns_json(),
        });
        let (status, body) = client.post_json("/schema", &schema).await?;
        if status != 201 {
            return Err(format!("creating schema {name} failed ({status}): {body}"));
        }
    }
    Ok(names)
}
