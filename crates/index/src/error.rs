/// What can go wrong opening or writing an index.
#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    #[error("index storage: {0}")]
    Storage(#[from] sled::Error),
    #[error(
        "the index was built with layout {stored}, not {requested}: \
         reopen it with the same k (and blocks), or build a new index"
    )]
    LayoutMismatch { stored: String, requested: String },
    #[error("bad index config: {0}")]
    Config(String),
    #[error("index file: {0}")]
    Io(String),
    #[error("index data is corrupt: {0}")]
    Corrupt(String),
}
