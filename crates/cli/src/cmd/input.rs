//! Reading the files named on the command line.

use std::io::{self, Read};
use std::path::Path;

use anyhow::Context;

/// Reads a file, or standard input for `-`, gunzipping `.gz` files.
pub fn read_input(path: &Path) -> anyhow::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    if path.as_os_str() == "-" {
        io::stdin()
            .lock()
            .read_to_end(&mut bytes)
            .context("reading standard input")?;
        return Ok(bytes);
    }
    let raw = std::fs::read(path).context("cannot read")?;
    if path.extension().is_some_and(|e| e == "gz") {
        flate2::read::MultiGzDecoder::new(&raw[..])
            .read_to_end(&mut bytes)
            .context("not valid gzip")?;
        Ok(bytes)
    } else {
        Ok(raw)
    }
}
