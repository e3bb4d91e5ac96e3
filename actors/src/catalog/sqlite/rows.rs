//! Row mappers shared by the catalog's modules.

use crate::catalog::DataFile;

/// A `data_files` (or `retired_files`) row selected as `id, raw_filename, partition_path, path, rows, bytes, stats`.
pub(super) fn data_file(r: &rusqlite::Row<'_>) -> rusqlite::Result<DataFile> {
    Ok(DataFile {
        id: r.get(0)?,
        raw_filename: r.get(1)?,
        partition_path: r.get(2)?,
        path: r.get(3)?,
        rows: r.get(4)?,
        bytes: r.get(5)?,
        stats: r.get(6)?,
    })
}
