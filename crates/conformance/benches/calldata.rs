//! Calldata benchmark (being written).

fn main() {}
