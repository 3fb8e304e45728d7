//! Online chain statistics.
