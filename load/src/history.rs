//! The history of a run: every request a client made and what came back (or that nothing did),
//! every fault injected, one JSON object per line. The checker reads it back from the file.

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use anyhow::{Context, Result};
use serde_json::{json, Value};

#[derive(Clone)]
pub struct History {
    out: Arc<Mutex<BufWriter<File>>>,
    started: Instant,
    pub path: PathBuf,
}

impl History {
    pub fn create(path: &Path) -> Result<History> {
        let file = File::create(path)
            .with_context(|| format!("cannot create the history file {}", path.display()))?;
        Ok(History {
            out: Arc::new(Mutex::new(BufWriter::new(file))),
            started: Instant::now(),
            path: path.to_owned(),
        })
    }

    /// Appends `record` (an object) with the milliseconds since the run began.
    pub fn record(&self, kind: &str, mut record: Value) {
        let at = self.started.elapsed().as_millis() as u64;
        if let Some(object) = record.as_object_mut() {
            object.insert("kind".into(), json!(kind));
            object.insert("at_ms".into(), json!(at));
        }
        let mut out = self.out.lock().unwrap();
        let _ = serde_json::to_writer(&mut *out, &record);
        let _ = out.write_all(b"\n");
    }

    pub fn flush(&self) -> Result<()> {
        self.out.lock().unwrap().flush()?;
        Ok(())
    }

    /// Every record of the file, in order.
    pub fn read(path: &Path) -> Result<Vec<Value>> {
        let file = File::open(path)?;
        let mut records = Vec::new();
        for line in BufReader::new(file).lines() {
            let line = line?;
            if !line.trim().is_empty() {
                records.push(serde_json::from_str(&line)?);
            }
        }
        Ok(records)
    }
}
