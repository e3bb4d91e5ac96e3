//! The DatasetActor: one per dataset, the only writer of that dataset's catalog rows and files.
//! Messages are handled one at a time in arrival order, which is what makes a version bump (and,
//! later, an upload commit) atomic with respect to every other change of the same dataset.

use actix::{Actor, Context, Handler, Message};

use crate::catalog::Catalog;
use crate::error::{Error, Result};
use crate::registry::{find_dataset, DatasetRecord};
use crate::schema::ValidSchema;

pub struct DatasetActor {
    catalog: Catalog,
    record: DatasetRecord,
}

impl DatasetActor {
    pub(crate) fn new(catalog: Catalog, record: DatasetRecord) -> DatasetActor {
        DatasetActor { catalog, record }
    }
}

impl Actor for DatasetActor {
    type Context = Context<Self>;
}

/// Store a schema as the next version. The sensitivity of a dataset never changes.
pub struct BumpSchema(pub ValidSchema);

impl Message for BumpSchema {
    type Result = Result<ValidSchema>;
}

impl Handler<BumpSchema> for DatasetActor {
    type Result = Result<ValidSchema>;

    fn handle(&mut self, msg: BumpSchema, _: &mut Context<Self>) -> Self::Result {
        let mut schema = msg.0;
        let key = self.record.key.clone();
        let record = self.catalog.transaction(|tx| {
            let current = find_dataset(tx, &key)?.ok_or_else(|| key.not_found())?;
            if schema.sensitivity() != current.sensitivity {
                return Err(Error::invalid(format!(
                    "The sensitivity of this updated schema [{}] does not match the original [{}]. \
                     You cannot change the sensitivity when updating a schema",
                    schema.sensitivity(),
                    current.sensitivity
                )));
            }
            schema.set_version(current.latest_version + 1);
            crate::registry::records_insert_version(tx, current.id, &schema)?;
            Ok(DatasetRecord {
                latest_version: current.latest_version + 1,
                ..current
            })
        })?;
        self.record = record;
        Ok(schema)
    }
}
