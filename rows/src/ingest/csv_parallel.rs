//! One CSV upload on several cores. The reading thread cuts the input where the sequential
//! parser would end each batch ([`Splitter`]), parsing threads type and check those chunks
//! side by side, and this thread takes their results in input order into the [`Validator`]
//! (problems, in-file uniqueness, the single Parquet writer), so row numbers, problems, their
//! order and cap, and every error are those of a sequential pass. At most `workers` chunks
//! are in flight: memory does not grow with the file.

use std::io::Read;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, sync_channel, Receiver, Sender, SyncSender};
use std::sync::Mutex;

use super::checks::PreparedCheck;
use super::csv_batch::{BatchBuilder, CsvOptions, Layout, ParsedBatch};
use super::csv_records::CsvRecords;
use super::csv_split::Splitter;
use super::problems::Problems;
use super::{check_batch, IngestPlan, Validator};
use crate::error::{Error, Result};
use crate::profile::Profiler;

/// How much the reading thread asks of its input at a time.
const READ_BYTES: usize = 256 * 1024;

/// A batch parsed and checked, ready to be recorded in order.
struct Checked {
    parsed: ParsedBatch,
    checks: Vec<Problems>,
    /// Whether the parsing thread profiled the batch (see [`Shared::profiles`]).
    profiled: bool,
}

/// One chunk for a parsing thread: whole records from a record's end, the batch they make.
struct Job {
    bytes: Vec<u8>,
    first_row: u64,
    rows: usize,
    /// The parser's line at the chunk's start (for the message of an unreadable input).
    line: u64,
    /// The input broke off after these bytes: parsing them ends with this error.
    then: Option<std::io::Error>,
    result: SyncSender<Result<Checked>>,
}

/// Results in input order: one per chunk, or every batch of the tail the reading thread
/// parsed itself.
enum Entry {
    Chunk(Receiver<Result<Checked>>),
    Tail(Receiver<Result<Checked>>),
}

/// What the threads share, read-only.
struct Shared<'a, 'l> {
    layout: &'a Layout<'l>,
    checks: Vec<Vec<PreparedCheck>>,
    max_value_bytes: usize,
    options: CsvOptions,
    stop: AtomicBool,
    /// Chunk buffers parsed and given back, for the next chunks (fresh megabyte buffers cost
    /// page faults and zeroing every time).
    spare: Mutex<Vec<Vec<u8>>>,
    /// Profile each batch on the thread that parsed it (not when quarantining: only kept rows
    /// count, which the validator knows). Each thread keeps one profile for all its batches
    /// (profiles do not depend on row order) and leaves it here when it ends.
    profile: bool,
    profiles: Mutex<Vec<Profiler>>,
}

impl Shared<'_, '_> {
    fn new_profiler(&self) -> Option<Profiler> {
        self.profile
            .then(|| Profiler::for_columns(self.layout.columns))
    }

    fn keep_profile(&self, profiler: Option<Profiler>) {
        if let Some(p) = profiler {
            self.profiles
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(p);
        }
    }
}

/// Ingests the records `reader` has not read yet, the first of them row `first_row` (1 just
/// after the header); returns the last row's number.
pub(super) fn ingest<R: Read + Send>(
    reader: CsvRecords<R>,
    layout: &Layout<'_>,
    validator: &mut Validator,
    plan: &IngestPlan<'_>,
    options: CsvOptions,
    first_row: u64,
) -> Result<u64> {
    let shared = Shared {
        layout,
        checks: layout
            .columns
            .iter()
            .map(|c| c.checks.iter().map(PreparedCheck::new).collect())
            .collect(),
        max_value_bytes: plan.max_value_bytes,
        options,
        stop: AtomicBool::new(false),
        spare: Mutex::new(Vec::new()),
        profile: plan.on_error == super::OnError::Reject && plan.profile,
        profiles: Mutex::new(Vec::new()),
    };
    let (job_tx, job_rx) = channel::<Job>();
    let job_rx = Mutex::new(job_rx);
    let (order_tx, order_rx) = channel::<Entry>();
    // A bounded channel of tokens as a semaphore: one per chunk in flight.
    let (permit_tx, permit_rx) = sync_channel::<()>(options.workers);
    // Chunks are allocated here and freed on the parsing threads (see allocator).
    crate::allocator::steady();
    std::thread::scope(|scope| {
        for _ in 0..options.workers {
            scope.spawn(|| work(&shared, &job_rx));
        }
        let shared = &shared;
        scope.spawn(move || {
            let (pending, input, line) = reader.into_rest();
            let reading = Reading {
                shared,
                jobs: job_tx,
                order: order_tx,
                permits: permit_tx,
            };
            reading.split(pending, input, line, first_row);
        });
        let outcome = sequence(order_rx, permit_rx, validator, plan, first_row);
        if outcome.is_err() {
            shared.stop.store(true, Ordering::Relaxed);
        }
        outcome
    })
    .inspect(|_| {
        // Every thread has ended: their profiles join the validator's.
        let profiles = shared
            .profiles
            .into_inner()
            .unwrap_or_else(|p| p.into_inner());
        profiles
            .into_iter()
            .for_each(|p| validator.profiler.merge(p));
    })
}

/// This thread: results in input order into the validator.
fn sequence(
    order: Receiver<Entry>,
    permits: Receiver<()>,
    validator: &mut Validator,
    plan: &IngestPlan<'_>,
    first_row: u64,
) -> Result<u64> {
    let mut row = first_row - 1;
    let mut record = |checked: Result<Checked>| -> Result<()> {
        let Checked {
            parsed,
            checks,
            profiled,
        } = checked?;
        row = parsed.first_row - 1 + parsed.batch.num_rows() as u64;
        validator.accept_profiled(parsed, checks, profiled)?;
        (plan.progress)(row);
        Ok(())
    };
    for entry in order {
        match entry {
            Entry::Chunk(result) => {
                record(result.recv().map_err(|_| stopped())?)?;
                let _ = permits.recv();
            }
            Entry::Tail(results) => {
                for result in results {
                    record(result)?;
                }
            }
        }
    }
    Ok(row)
}

fn stopped() -> Error {
    Error::internal("a CSV parsing thread stopped")
}

/// A parsing thread: chunks until the reading thread is done.
fn work(shared: &Shared<'_, '_>, jobs: &Mutex<Receiver<Job>>) {
    let mut profiler = shared.new_profiler();
    parse_jobs(shared, jobs, &mut profiler);
    shared.keep_profile(profiler);
}

fn parse_jobs(
    shared: &Shared<'_, '_>,
    jobs: &Mutex<Receiver<Job>>,
    profiler: &mut Option<Profiler>,
) {
    let mut builder = BatchBuilder::new(shared.layout);
    loop {
        // The lock is held only while waiting for the next job; poisoning cannot leave the
        // receiver inconsistent, so a poisoned lock is used as it is.
        let job = match jobs.lock().unwrap_or_else(|p| p.into_inner()).recv() {
            Ok(job) => job,
            Err(_) => return,
        };
        let sender = job.result.clone();
        let _ = sender.send(parse_chunk(shared, &mut builder, job, profiler));
    }
}

fn parse_chunk(
    shared: &Shared<'_, '_>,
    builder: &mut BatchBuilder,
    job: Job,
    profiler: &mut Option<Profiler>,
) -> Result<Checked> {
    let mut reader = CsvRecords::resume_after(
        job.bytes,
        Failing(job.then),
        shared.max_value_bytes,
        job.line,
    );
    let parsed = builder.read(&mut reader, shared.layout, job.first_row)?;
    let whole = reader.at_end().unwrap_or(false);
    let mut spare = shared.spare.lock().unwrap_or_else(|p| p.into_inner());
    // One spare is enough to skip most fresh buffers; more would hold memory for little.
    if spare.is_empty() {
        spare.push(reader.into_buffer());
    }
    drop(spare);
    let parsed = match parsed {
        Some(p) if p.batch.num_rows() == job.rows && whole => p,
        _ => {
            return Err(Error::internal(format!(
                "a CSV chunk from row {} did not hold the {} rows it was cut for",
                job.first_row, job.rows
            )))
        }
    };
    Ok(checked(shared, parsed, profiler))
}

fn checked(
    shared: &Shared<'_, '_>,
    parsed: ParsedBatch,
    profiler: &mut Option<Profiler>,
) -> Checked {
    let checks = check_batch(
        shared.layout.columns,
        &shared.checks,
        &parsed.batch,
        parsed.first_row,
    );
    if let Some(p) = profiler {
        p.observe(&parsed.batch);
    }
    Checked {
        parsed,
        checks,
        profiled: profiler.is_some(),
    }
}

/// The end of a chunk whose input broke off: reading past its bytes gives the input's error.
struct Failing(Option<std::io::Error>);

impl Read for Failing {
    fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
        match self.0.take() {
            Some(e) => Err(e),
            None => Ok(0),
        }
    }
}

/// The reading thread's ends of the channels.
struct Reading<'s, 'a, 'l> {
    shared: &'s Shared<'a, 'l>,
    jobs: Sender<Job>,
    order: Sender<Entry>,
    permits: SyncSender<()>,
}

impl Reading<'_, '_, '_> {
    /// Reads `pending` then `input` (continuing where a record ended: row `first_row`, parser
    /// line `header_line`) and hands out chunks, until the input ends or the results are no
    /// longer wanted.
    fn split<R: Read>(self, pending: Vec<u8>, mut input: R, header_line: u64, first_row: u64) {
        let options = self.shared.options;
        let rule = self.shared.layout.rule;
        let mut splitter = Splitter::new(
            rule,
            self.shared.layout.header_len,
            self.shared.layout.columns.len(),
        );
        // `buf` always starts where a batch starts: row `first_row`, parser line `line`.
        let mut buf = pending;
        let (mut first_row, mut line) = (first_row, header_line);
        loop {
            while let Some(cut) = splitter.scan(&buf) {
                let spare = self.shared.spare.lock().map(|mut s| s.pop());
                let mut rest = spare.ok().flatten().unwrap_or_default();
                rest.clear();
                rest.reserve(cut.at + READ_BYTES);
                rest.extend_from_slice(&buf[cut.at..]);
                buf.truncate(cut.at);
                let chunk = std::mem::replace(&mut buf, rest);
                let newlines = chunk.iter().filter(|b| **b == b'\n').count() as u64;
                if !self.send(chunk, first_row, cut.rows, line, None) {
                    return;
                }
                first_row += cut.rows as u64;
                line += newlines;
            }
            if self.shared.stop.load(Ordering::Relaxed) {
                return;
            }
            if buf.len() > options.max_chunk_bytes {
                return self.tail(buf, input, first_row, line);
            }
            buf.reserve(READ_BYTES);
            let len = buf.len();
            buf.resize(len + READ_BYTES, 0);
            let n = loop {
                match input.read(&mut buf[len..]) {
                    Ok(n) => break n,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(e) => {
                        buf.truncate(len);
                        let rows = splitter.pending_rows();
                        self.send(buf, first_row, rows, line, Some(e));
                        return;
                    }
                }
            };
            buf.truncate(len + n);
            if n == 0 {
                let rows = splitter.finish(&buf);
                if rows > 0 {
                    self.send(buf, first_row, rows, line, None);
                }
                return;
            }
        }
    }

    /// Hands a chunk to the parsing threads, its result's place to the sequence; false once
    /// the results are no longer wanted.
    fn send(
        &self,
        bytes: Vec<u8>,
        first_row: u64,
        rows: usize,
        line: u64,
        then: Option<std::io::Error>,
    ) -> bool {
        if self.permits.send(()).is_err() {
            return false;
        }
        let (result, receiver) = sync_channel(1);
        let job = Job {
            bytes,
            first_row,
            rows,
            line,
            then,
            result,
        };
        self.order.send(Entry::Chunk(receiver)).is_ok() && self.jobs.send(job).is_ok()
    }

    /// A chunk grew past the limit (very long rows or values): this thread parses the rest of
    /// the file itself, batch by batch, as the sequential path does.
    fn tail<R: Read>(self, buf: Vec<u8>, input: R, first_row: u64, line: u64) {
        let (tx, rx) = sync_channel(1);
        if self.order.send(Entry::Tail(rx)).is_err() {
            return;
        }
        let shared = self.shared;
        let mut profiler = shared.new_profiler();
        let reader = CsvRecords::resume_after(buf, input, shared.max_value_bytes, line);
        tail_batches(shared, reader, tx, first_row, &mut profiler);
        shared.keep_profile(profiler);
    }
}

/// The tail's batches, parsed and checked on this thread, in order into `tx`.
fn tail_batches<R: Read>(
    shared: &Shared<'_, '_>,
    mut reader: CsvRecords<R>,
    tx: std::sync::mpsc::SyncSender<Result<Checked>>,
    first_row: u64,
    profiler: &mut Option<Profiler>,
) {
    let mut builder = BatchBuilder::new(shared.layout);
    let mut row = first_row - 1;
    loop {
        let result = builder.read(&mut reader, shared.layout, row + 1);
        let sent = match result {
            Ok(None) => return,
            Ok(Some(parsed)) => {
                row += parsed.batch.num_rows() as u64;
                tx.send(Ok(checked(shared, parsed, profiler)))
            }
            Err(e) => {
                let _ = tx.send(Err(e));
                return;
            }
        };
        if sent.is_err() || shared.stop.load(Ordering::Relaxed) {
            return;
        }
    }
}

#[cfg(test)]
#[path = "csv_parallel_tests.rs"]
mod tests;
