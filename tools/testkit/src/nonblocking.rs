//! The same token and job requests as the blocking helpers, for async clients (`rapid-rs bench`,
//! which drives many uploads at once from one runtime). `api` is the API's base URL, `/api`
//! included, as a bench user passes it.

use std::time::Duration;

use reqwest::Client;
use serde_json::Value;

/// A bearer token for the client, requested as the rAPId SDK does.
pub async fn token(http: &Client, api: &str, id: &str, secret: &str) -> Result<String, String> {
    let res = http
        .post(format!("{api}{}", super::TOKEN_PATH))
        .basic_auth(id, Some(secret))
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body(super::token_body(id))
        .send()
        .await
        .map_err(|e| format!("cannot reach {api}: {e}"))?;
    let status = res.status();
    let body: Value = res.json().await.map_err(|e| e.to_string())?;
    super::access_token(status, &body)
}

/// Polls `GET {api}/jobs/{job_id}` every `poll` until the job has ended, and returns it.
pub async fn wait_job(
    http: &Client,
    api: &str,
    token: &str,
    job_id: &str,
    poll: Duration,
) -> Result<Value, String> {
    loop {
        let job: Value = http
            .get(format!("{api}/jobs/{job_id}"))
            .bearer_auth(token)
            .send()
            .await
            .map_err(|e| e.to_string())?
            .json()
            .await
            .map_err(|e| e.to_string())?;
        if super::job_ended(&job) {
            return Ok(job);
        }
        tokio::time::sleep(poll).await;
    }
}
