//! Reading the `file` part of a multipart body: a bounded sample for schema generation, or the
//! file part of an upload, which the engine streams into its ingest. Shared by the API and the
//! web pages.

use std::path::PathBuf;

use actix_multipart::{Field, Multipart, MultipartError};
use futures_util::StreamExt;
use rapid_actors::auth::pass::SubjectPass;
use rapid_actors::engine::{UploadAccepted, UploadTarget};
use rapid_actors::file_kind::{FileKind, StagedFile};
use rapid_actors::infer::DraftTarget;
use rapid_actors::infer::{Sample, CSV_SAMPLE_BYTES};
use rapid_actors::schema::Schema;
use rapid_actors::{Error, ErrorKind};
use tokio::io::AsyncWriteExt;

use crate::state::AppState;

pub fn multipart_error(e: MultipartError) -> Error {
    Error::invalid(format!("The multipart body could not be read: {e}"))
}

fn too_large(limit: u64) -> Error {
    Error::new(
        ErrorKind::TooLarge,
        format!("The file is larger than the upload limit of {limit} bytes"),
    )
}

/// Finds the `file` part, skipping (and draining) any other part.
pub async fn file_field(payload: &mut Multipart) -> Result<(Field, String), Error> {
    while let Some(field) = payload.next().await {
        let mut field = field.map_err(multipart_error)?;
        let disposition = field.content_disposition().cloned();
        let name = disposition
            .as_ref()
            .and_then(|d| d.get_name())
            .unwrap_or_default();
        if name == "file" {
            let filename = disposition
                .as_ref()
                .and_then(|d| d.get_filename())
                .unwrap_or_default()
                .to_string();
            return Ok((field, filename));
        }
        while let Some(chunk) = field.next().await {
            chunk.map_err(multipart_error)?;
        }
    }
    Err(Error::invalid(
        "The multipart form field [file] is required: send the data file as `file`",
    ))
}

/// Reads the sample a schema is generated from (the multipart's `file` part, found by the
/// caller) into staging: the first 50 MB of a CSV, cut at
/// its last line end (the rest is read and discarded, so the client gets its answer), or a whole
/// Parquet file. Nothing is held in memory beyond one chunk.
pub async fn read_sample_field(
    mut field: Field,
    filename: &str,
    sample_path: impl FnOnce(FileKind) -> PathBuf,
    limit: u64,
    max_value: usize,
) -> Result<Sample, Error> {
    let kind = FileKind::from_filename(filename)?;
    let staged = StagedFile::new(sample_path(kind));
    let mut file = tokio::fs::File::create(staged.path()).await?;
    let room = match kind {
        FileKind::Csv => CSV_SAMPLE_BYTES as u64,
        FileKind::Parquet => u64::MAX,
    };
    let (mut received, mut kept, mut last_line_end) = (0u64, 0u64, None::<u64>);
    while let Some(chunk) = field.next().await {
        let chunk = chunk.map_err(multipart_error)?;
        received += chunk.len() as u64;
        if received > limit {
            return Err(too_large(limit));
        }
        let take = (room - kept).min(chunk.len() as u64) as usize;
        if take > 0 {
            if let Some(i) = chunk[..take].iter().rposition(|b| *b == b'\n') {
                last_line_end = Some(kept + i as u64 + 1);
            }
            file.write_all(&chunk[..take]).await?;
            kept += take as u64;
        }
    }
    file.flush().await?;
    Ok(match kind {
        FileKind::Csv => {
            // Never half a line: a cut sample ends at its last line end.
            let truncated = received > kept;
            let len = if truncated {
                last_line_end.unwrap_or(0)
            } else {
                kept
            };
            Sample::Csv {
                file: staged,
                len,
                truncated,
                max_value,
            }
        }
        FileKind::Parquet => Sample::Parquet(staged),
    })
}

/// Streams the multipart's `file` part (other parts skipped) into the checked upload target.
/// The API's upload and the web page's (whose form sends its CSRF token first).
pub async fn receive_upload(
    target: UploadTarget,
    payload: &mut Multipart,
) -> Result<UploadAccepted, Error> {
    let (field, filename) = file_field(payload).await?;
    let body = field.map(|chunk| chunk.map_err(multipart_error));
    target.receive(&filename, body).await
}

/// Receives a sample from its `file` part and drafts a schema from it (the caller holds a
/// generation permit). The API's generate and the web page's.
pub async fn draft_from_field(
    state: &AppState,
    pass: &SubjectPass,
    target: DraftTarget,
    field: Field,
    filename: &str,
) -> Result<Schema, Error> {
    let sample = read_sample_field(
        field,
        filename,
        |kind| state.engine.new_sample_path(pass, kind),
        state.max_upload_bytes,
        state.max_value_bytes,
    )
    .await?;
    state.engine.draft_schema(pass, sample, target).await
}
