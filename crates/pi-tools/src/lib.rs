//! pi-tools: the built-in tools read, bash, edit, write, grep, find and ls.
