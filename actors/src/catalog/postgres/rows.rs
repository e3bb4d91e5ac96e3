//! Row mappers shared by the catalog's modules.

use crate::catalog::DataFile;
use crate::error::Result;

/// A `data_files` (or `retired_files`) row selected as `id, raw_filename, partition_path, path, rows, bytes, stats`.
pub(super) fn data_file(r: &tokio_postgres::Row) -> Result<DataFile> {
    Ok(DataFile {
        id: r.try_get(0)?,
        raw_filename: r.try_get(1)?,
        partition_path: r.try_get(2)?,
        path: r.try_get(3)?,
        rows: r.try_get(4)?,
        bytes: r.try_get(5)?,
        stats: r.try_get(6)?,
    })
}
