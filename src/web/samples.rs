//! Kept samples through the engine facade: a schema generation that keeps its sample
//! ([`sample_store`]), and the upload of a kept sample as the saved dataset's first upload,
//! through the upload page's own path (target check, validation, job, durability).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use futures_util::StreamExt;
use rapid_actors::auth::pass::{AdminPass, Write};
use rapid_actors::auth::Subject;
use rapid_actors::engine::UploadAccepted;
use rapid_actors::infer::{DraftTarget, Sample};
use rapid_actors::key::DatasetKey;
use rapid_actors::schema::Schema;
use rapid_actors::{Error, Result};

use crate::state::AppState;
use crate::web::sample_store::{self, Kept};

/// A draft schema, and the token and record of its kept sample.
pub(super) struct Generated {
    pub schema: Schema,
    pub token: String,
    pub kept: Kept,
}

/// Where the samples are kept.
pub(super) fn samples_root(state: &AppState) -> PathBuf {
    state.engine.kept_samples_root()
}

/// Receives the sample from the page's `file` part, keeps it (the file itself when all of it was
/// received) and drafts its schema, as the API does, with each column's examples and null count.
pub(super) async fn generate(
    state: &AppState,
    admin: &AdminPass,
    target: [String; 4],
    field: actix_multipart::Field,
    filename: &str,
) -> Result<Generated> {
    let [layer, sensitivity, domain, dataset] = target;
    let target = DraftTarget {
        layer,
        sensitivity,
        domain,
        dataset,
        description: None,
    };
    let (root, owner) = (samples_root(state), admin.subject().id.clone());
    sample_store::sweep(&root, &owner);
    let pass = state.engine.subject_pass(admin.subject().clone());
    let new_path = |kind| state.engine.new_sample_path(&pass, kind);
    let (limit, max_value) = (state.max_upload_bytes, state.max_value_bytes);
    let sample =
        crate::upload::read_sample_field(field, filename, new_path, limit, max_value).await?;
    let token = sample_store::new_token();
    let mut kept = sample_store::kept_now(&owner, filename, false, vec![]);
    std::fs::create_dir_all(sample_store::folder(&root, &token))?;
    let drafted = async {
        kept.whole = keep_file(&sample, &sample_store::file_of(&root, &token, &kept))?;
        let (schema, columns) = state.engine.draft_sampled(&pass, sample, target).await?;
        kept.columns = columns;
        sample_store::write(&root, &token, &kept)?;
        Ok::<_, Error>(schema)
    };
    match drafted.await {
        Ok(schema) => Ok(Generated {
            schema,
            token,
            kept,
        }),
        Err(e) => {
            sample_store::remove(&root, &token);
            Err(e)
        }
    }
}

/// Links (or copies) the received sample to `to` when all of the file was received; whether so.
fn keep_file(sample: &Sample, to: &Path) -> Result<bool> {
    let (staged, whole) = match sample {
        Sample::Csv {
            file, truncated, ..
        } => (file, !truncated),
        Sample::Parquet(file) => (file, true),
    };
    if whole && std::fs::hard_link(staged.path(), to).is_err() {
        std::fs::copy(staged.path(), to)?;
    }
    Ok(whole)
}

/// Uploads kept sample `token` into the dataset and version its schema was saved as, as the
/// upload page does (the subject must may write it); the sample is removed once it is received.
pub(super) async fn upload_kept(
    state: &AppState,
    subject: &Arc<Subject>,
    token: &str,
    kept: &Kept,
) -> Result<UploadAccepted> {
    let Some((layer, domain, dataset, version)) = kept.saved.clone() else {
        return Err(Error::invalid(
            "Save the schema first: the sample is uploaded into the dataset it describes.",
        ));
    };
    let key = DatasetKey::new(&layer, &domain, &dataset);
    let pass = state.engine.dataset_pass::<Write>(subject.clone(), &key)?;
    let target = state.engine.upload_target(pass, Some(version))?;
    let root = samples_root(state);
    let file = tokio::fs::File::open(sample_store::file_of(&root, token, kept)).await?;
    let body = tokio_util::io::ReaderStream::new(file).map(|c| c.map_err(Error::from));
    let accepted = target.receive(&kept.filename, body).await;
    if accepted.is_ok() {
        sample_store::remove(&root, token);
    }
    accepted
}

#[cfg(test)]
mod tests {
    use rapid_actors::file_kind::StagedFile;

    use super::*;

    #[test]
    fn only_a_sample_received_whole_is_kept() {
        let dir = std::env::temp_dir().join(format!("rapid-keep-{}", sample_store::new_token()));
        std::fs::create_dir_all(&dir).unwrap();
        let staged = dir.join("staged.csv");
        let csv = |truncated| {
            std::fs::write(&staged, "a\n1\n").unwrap();
            Sample::Csv {
                file: StagedFile::new(staged.clone()),
                len: 4,
                truncated,
                max_value: 1024,
            }
        };
        let (part, whole) = (dir.join("part.csv"), dir.join("whole.csv"));
        assert!(!keep_file(&csv(true), &part).unwrap());
        assert!(!part.exists(), "a CSV read only in part is not kept");
        assert!(keep_file(&csv(false), &whole).unwrap());
        assert_eq!(std::fs::read_to_string(&whole).unwrap(), "a\n1\n");
        assert!(!staged.exists(), "staging is emptied as before");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
