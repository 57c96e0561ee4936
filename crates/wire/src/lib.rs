//! Hegel packets.
