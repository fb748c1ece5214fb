//! pi-test-support: mock LLM servers speaking each wire format, for tests and benchmarks.
