//! pi-tui: the terminal library (line-diff renderer, keys, components); depends on no other pi crate.
