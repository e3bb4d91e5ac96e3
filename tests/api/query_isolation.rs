//! Time limits, memory limits and admission of queries.
