//! Opening sled databases.

use std::path::Path;
use std::time::{Duration, Instant};

/// How long to wait for another handle on the same database to let go.
const LOCK_WAIT: Duration = Duration::from_secs(5);

/// Opens the sled database at `path` with a bounded page cache.
///
/// sled releases its file lock from a background thread after the last
/// handle is dropped, so a database closed a moment ago in this process
/// may still be locked: wait for the lock, up to a few seconds, rather
/// than fail. A database held by a live handle still fails, after the wait.
pub(crate) fn open_db(path: &Path) -> Result<sled::Db, sled::Error> {
    let start = Instant::now();
    loop {
        match sled::Config::new()
            .path(path)
            .cache_capacity(64 << 20)
            .open()
        {
            Err(sled::Error::Io(e))
                if e.to_string().contains("could not acquire lock")
                    && start.elapsed() < LOCK_WAIT =>
            {
                std::thread::sleep(Duration::from_millis(10));
            }
            other => return other,
        }
    }
}
