//! Ranking reproductions of papers 003 and 004 as accuracy-versus-data-passes tables.
