//! The log subscriber: text or one JSON object a line (`RAPID_LOG_FORMAT`), on stderr. Request
//! lines and everything logged while a request is handled carry its `request_id` (a span field).

use std::io::IsTerminal;

use tracing_subscriber::EnvFilter;

use crate::config_ops::LogFormat;

pub fn init(filter: &str, format: LogFormat) {
    let filter = EnvFilter::try_new(filter).unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    match format {
        LogFormat::Text => builder.with_ansi(std::io::stderr().is_terminal()).init(),
        LogFormat::Json => builder
            .json()
            // The innermost span's fields in `span`; every enclosing span's in `spans`, so a
            // line logged inside an upload's job span still carries its request's id.
            .with_current_span(true)
            .with_span_list(true)
            .flatten_event(true)
            .init(),
    }
}
