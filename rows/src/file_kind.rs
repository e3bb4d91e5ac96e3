//! The two file types the service takes, recognised by the uploaded file's name.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    Csv,
    Parquet,
}

impl FileKind {
    /// From the extension of `filename` (case-insensitive): `.csv` or `.parquet`.
    pub fn from_filename(filename: &str) -> Result<FileKind> {
        let ext = Path::new(filename)
            .extension()
            .and_then(|e| e.to_str())
            .map(|e| e.to_ascii_lowercase());
        match ext.as_deref() {
            Some("csv") => Ok(FileKind::Csv),
            Some("parquet") => Ok(FileKind::Parquet),
            Some(other) => Err(Error::invalid(format!(
                "This file type [{other}] is not supported: upload a .csv or .parquet file"
            ))),
            None => Err(Error::invalid(format!(
                "The file [{filename}] has no extension: upload a .csv or .parquet file"
            ))),
        }
    }

    pub fn extension(self) -> &'static str {
        match self {
            FileKind::Csv => "csv",
            FileKind::Parquet => "parquet",
        }
    }
}

/// A file in the staging folder that is removed when dropped, whatever happens to the request.
#[derive(Debug)]
pub struct StagedFile {
    path: PathBuf,
}

impl StagedFile {
    pub fn new(path: PathBuf) -> StagedFile {
        StagedFile { path }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for StagedFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_come_from_the_extension_in_any_case() {
        assert_eq!(FileKind::from_filename("a.CSV").unwrap(), FileKind::Csv);
        assert_eq!(
            FileKind::from_filename("x.y.parquet").unwrap(),
            FileKind::Parquet
        );
        let err = FileKind::from_filename("notes.txt").unwrap_err();
        assert!(err.to_string().contains("[txt] is not supported"));
        assert!(FileKind::from_filename("noext").is_err());
    }
}
