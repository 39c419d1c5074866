//! Why a crawl could not start or go on.

use std::path::PathBuf;

use crate::embedded::store::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum CrawlError {
    #[error("crawl state: {0}")]
    State(#[from] StoreError),
    #[error("duplicate index: {0}")]
    Index(#[from] nearcrawl_index::IndexError),
    #[error("fetcher: {0}")]
    Fetch(#[from] nearcrawl_fetch::FetchError),
    #[error("scope: {0}")]
    Scope(#[from] regex::Error),
    #[error("output: {0}")]
    Output(#[from] std::io::Error),
    #[error("recrawl: {0}")]
    Recrawl(#[from] crate::recrawl::RecrawlError),
    #[error("remembered crawls: {0}")]
    Remember(#[from] crate::remembered::RememberError),
    #[error("{0} holds results of another crawl but no crawl state; use another output directory")]
    ForeignOutput(PathBuf),
    #[error(
        "this crawl writes {stored}; the config asks for {requested}: outputs cannot change \
         midway (use another output directory)"
    )]
    OutputsChanged { stored: String, requested: String },
}
