//! Models with incremental updates.
