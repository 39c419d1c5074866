//! Opening sled databases.

use std::path::Path;
use std::time::{Duration, Instant};

/// How long to wait for another handle on the same database to let go.
const LOCK_WAIT: Duration = Duration::from_secs(5);

/// Opens the sled database at `path` with a bounded page cache.
pub(crate) fn open_db(path: &Path) -> Result<sled::Db, sled::Error> {
    open_sled(&sled::Config::new().path(path).cache_capacity(64 << 20))
}

/// Opens a sled database as `config` says.
///
/// sled releases its file lock from a background thread after the last
/// handle is dropped, so a database closed a moment ago in this process
/// may still be locked: wait for the lock, up to a few seconds, rather
/// than fail. A database held by a live handle still fails, after the wait.
pub fn open_sled(config: &sled::Config) -> Result<sled::Db, sled::Error> {
    let start = Instant::now();
    loop {
        match config.open() {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A handle let go of while the second open waits (as sled's flusher
    /// thread lets go of a dropped database) does not fail the open; a
    /// handle kept does, once the wait is over.
    #[test]
    fn open_waits_for_a_handle_let_go_of_meanwhile() {
        let dir = std::env::temp_dir().join(format!("nearcrawl-open-sled-{}", std::process::id()));
        let config = sled::Config::new().path(&dir);
        let first = open_sled(&config).unwrap();
        let kept = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            drop(first);
        });
        let start = Instant::now();
        let second = open_sled(&config).expect("opened once the first handle is gone");
        assert!(start.elapsed() >= Duration::from_millis(250));
        kept.join().unwrap();

        let start = Instant::now();
        assert!(open_sled(&config).is_err(), "a live handle holds the lock");
        assert!(start.elapsed() >= LOCK_WAIT);
        drop(second);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
