//! The parallel CSV writer: every row once, indexes in order, each partition's rows in their
//! order, whatever order the partitions' batches finish in.

use std::sync::Arc;

use arrow::array::{Int64Array, RecordBatch};
use arrow::datatypes::{DataType, Field, Schema};
use datafusion::physical_plan::memory::MemoryStream;

use super::*;

fn partition(p: i64, batches: i64, rows: i64) -> SendableRecordBatchStream {
    let schema = Arc::new(Schema::new(vec![Field::new("v", DataType::Int64, false)]));
    let batches = (0..batches)
        .map(|b| {
            let values = (0..rows).map(|r| p * 1_000_000 + b * 1_000 + r);
            let column = Arc::new(Int64Array::from_iter_values(values));
            RecordBatch::try_new(schema.clone(), vec![column]).unwrap()
        })
        .collect();
    Box::pin(MemoryStream::try_new(batches, schema, None).unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn partitions_are_written_whole_with_indexes_in_order() {
    // More batches than places in flight, partitions of different lengths.
    let streams = vec![
        partition(0, 40, 7),
        partition(1, 3, 50),
        partition(2, 25, 1),
    ];
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out.csv");
    let mut file = std::fs::File::create(&path).unwrap();
    let reported = std::sync::Mutex::new(Vec::new());
    let count = write_rows(streams, &mut file, |n| reported.lock().unwrap().push(n))
        .await
        .unwrap();
    assert_eq!(count, 40 * 7 + 3 * 50 + 25);
    let text = std::fs::read_to_string(&path).unwrap();
    let mut per_partition: Vec<Vec<i64>> = vec![Vec::new(); 4];
    for (i, line) in text.lines().enumerate() {
        let (index, value) = line.split_once(',').unwrap();
        assert_eq!(index, i.to_string(), "indexes run 0, 1, 2... down the file");
        let value: i64 = value.parse().unwrap();
        per_partition[(value / 1_000_000) as usize].push(value);
    }
    assert_eq!(text.lines().count() as u64, count);
    for (p, (batches, rows)) in [(40, 7), (3, 50), (25, 1)].into_iter().enumerate() {
        let p = p as i64;
        let expected: Vec<i64> = (0..batches)
            .flat_map(|b| (0..rows).map(move |r| p * 1_000_000 + b * 1_000 + r))
            .collect();
        assert_eq!(
            per_partition[p as usize], expected,
            "partition {p} in its order"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_partitions_write_no_rows() {
    let dir = tempfile::tempdir().unwrap();
    let mut file = std::fs::File::create(dir.path().join("out.csv")).unwrap();
    assert_eq!(write_rows(Vec::new(), &mut file, |_| {}).await.unwrap(), 0);
}
