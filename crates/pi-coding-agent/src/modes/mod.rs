//! Run modes of the product: how pi talks to its caller.

pub mod rpc;
