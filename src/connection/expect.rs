//! `Expect: 100-continue`: refuse before `100 Continue`.
//!
//! actix-http asks an "expect" service before it writes `100 Continue`; actix-web's default says
//! yes to everything. Ours asks the application itself: it sends it a probe (the same head, no
//! body, marked [`Preflight`]); the authentication middleware and the permission extractors
//! (`Authorized`, `DatasetAccess`) answer a passing probe with [`PREFLIGHT_PASSED`] instead of
//! running the handler. Any other answer (401, 403, 404, 405, 413) is sent as the refusal, and
//! the request's body stream is kept until it is written, so the connection is closed rather than
//! drained (see `hold.rs`).

use std::rc::Rc;

use actix_http::{HttpMessage, Request, Response};
use actix_service::{fn_factory, fn_service, Service, ServiceFactory};
use actix_web::body::{BoxBody, MessageBody};
use actix_web::http::StatusCode;
use actix_web::{HttpResponse, ResponseError};

use super::hold::{BodyTracker, Holding};

/// In a probe's extensions: check, do not act.
#[derive(Debug, Clone, Copy)]
pub struct Preflight;

/// Header on the answer to a probe that passed every check.
pub const PREFLIGHT_PASSED: &str = "x-rapid-preflight-passed";

/// Returned by the checks when a probe passes them: stops before the handler runs.
#[derive(Debug)]
pub struct PreflightPassed;

impl std::fmt::Display for PreflightPassed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("preflight passed")
    }
}

impl ResponseError for PreflightPassed {
    fn status_code(&self) -> StatusCode {
        StatusCode::NO_CONTENT
    }

    fn error_response(&self) -> HttpResponse {
        HttpResponse::NoContent()
            .insert_header((PREFLIGHT_PASSED, "1"))
            .finish()
    }
}

/// The expect service of one worker, probing its own instance of the application.
pub fn preflight_factory<S, B>(
    app: S,
) -> impl ServiceFactory<
    Request,
    Config = (),
    Response = Request,
    Error = Response<BoxBody>,
    InitError = (),
>
where
    S: ServiceFactory<Request, Config = (), Error = actix_web::Error> + 'static,
    S::Response: Into<Response<B>>,
    S::InitError: std::fmt::Debug,
    S::Service: 'static,
    B: MessageBody + 'static,
{
    let app = Rc::new(app);
    fn_factory(move || {
        let init = app.new_service(());
        async move {
            let service = Rc::new(init.await.map_err(|e| {
                tracing::error!("starting the expect service: {e:?}");
            })?);
            Ok::<_, ()>(fn_service(move |req: Request| {
                let service = service.clone();
                async move { probe(&*service, req).await }
            }))
        }
    })
}

async fn probe<S, B>(service: &S, mut req: Request) -> Result<Request, Response<BoxBody>>
where
    S: Service<Request, Error = actix_web::Error>,
    S::Response: Into<Response<B>>,
    B: MessageBody + 'static,
{
    let mut probe = Request::new();
    *probe.head_mut() = req.head().clone();
    probe.extensions_mut().insert(Preflight);
    let answer: Response<BoxBody> = match service.call(probe).await {
        Ok(res) => res.into().map_body(|_, body| BoxBody::new(body)),
        Err(e) => e.error_response().into(),
    };
    if answer.headers().contains_key(PREFLIGHT_PASSED) {
        return Ok(req);
    }
    // Keep the unread body alive until the refusal is written: the connection then closes, the
    // front reading at most a capped remainder of the body.
    if let Some(tracker) = req.conn_data::<Rc<BodyTracker>>() {
        let index = tracker.route();
        tracker.abandon(index);
    }
    let payload = req.take_payload();
    Err(answer.map_body(|_, body| BoxBody::new(Holding::new(body, Box::new(payload)))))
}
