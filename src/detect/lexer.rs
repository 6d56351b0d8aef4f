//! Masks comments and string literals so rules only ever match code.
