//! Frontiers as earlier versions kept them, in store keys, moved to the
//! frontier's files when a crawl they wrote is opened.

use url::Url;

use super::seen::seen_fp;
use super::{Additions, Frontier, be_u64, host_of, io_error};
use crate::embedded::store::{StoreError, Writes};

use crate::embedded::store::tag::{OLD_IN_FLIGHT, OLD_QUEUE, OLD_SEEN, OLD_SEEN_URLS};

impl Frontier {
    /// Moves a queue and seen set kept as store keys (earlier versions) to
    /// the files, in batches, each atomic with the files' new lengths: a
    /// crash midway leaves the rest as keys, and the next open goes on.
    pub(super) fn migrate_store_keys(&mut self) -> Result<(), StoreError> {
        for tag in [OLD_SEEN, OLD_SEEN_URLS, OLD_IN_FLIGHT, OLD_QUEUE] {
            loop {
                let mut batch = Writes::default();
                let mut adds = Additions::default();
                for item in self.store.scan_prefix(&[tag]).take(10_000) {
                    let (key, value) = item?;
                    batch.remove(key.clone());
                    let url = || Url::parse(&String::from_utf8_lossy(&value)).ok();
                    match tag {
                        OLD_SEEN => adds.seen.push(be_u64(&key[1..])),
                        OLD_SEEN_URLS => {
                            // Keys that are not URLs cannot be looked up.
                            if let Ok(u) = Url::parse(&String::from_utf8_lossy(&key[1..])) {
                                adds.seen.push(seen_fp(&u));
                            }
                        }
                        _ => {
                            let Some(u) = url() else { continue };
                            // host 0x00 depth(u32) seq(u64)
                            let depth = key
                                .len()
                                .checked_sub(12)
                                .and_then(|at| key.get(at..at + 4))
                                .map_or(0, |d| u32::from_be_bytes(d.try_into().unwrap()));
                            adds.enqueue(host_of(&u), depth, self.seq, u.as_str());
                            self.seq += 1;
                        }
                    }
                }
                if batch.is_empty() {
                    break;
                }
                self.write(&mut adds).map_err(io_error)?;
                self.save(&mut batch)?;
                self.store.apply(batch)?;
                self.added(adds);
            }
        }
        Ok(())
    }
}
