//! pi-session: the JSONL session tree (append-only writer, loader, migrations, branching, context rebuild).
