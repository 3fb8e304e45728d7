//! Shared helpers for the integration tests: exact enumeration of small models and the
//! statistical thresholds of the sampling-path protocol.
