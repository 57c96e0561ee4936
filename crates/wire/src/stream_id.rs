//! Stream ids and per-stream message ids.
//!
//! Streams are created by either side without coordination: the low bit of a
//! stream id (the S bit) says who created it, 1 for the client (odd ids) and 0
//! for the server (even ids, 2, 4, 6 ...). Stream 0 is the control stream.

use std::sync::atomic::{AtomicU32, Ordering};

/// Which side of a connection created a stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamOrigin {
    /// Stream 0, present from the start.
    Control,
    /// Created by the client: the S bit is set (odd id).
    Client,
    /// Created by the server: the S bit is clear (even, non-zero id).
    Server,
}

impl StreamOrigin {
    /// The origin encoded in a stream id.
    pub fn of(stream_id: u32) -> StreamOrigin {
        if stream_id == 0 {
            StreamOrigin::Control
        } else if stream_id & 1 == 1 {
            StreamOrigin::Client
        } else {
            StreamOrigin::Server
        }
    }
}

/// Hands out fresh stream ids for one side of a connection.
#[derive(Debug)]
pub struct StreamIdAllocator {
    next: AtomicU32,
    origin_bit: u32,
}

impl StreamIdAllocator {
    /// An allocator for the server side: 2, 4, 6, ...
    pub fn server() -> StreamIdAllocator {
        StreamIdAllocator {
            next: AtomicU32::new(1),
            origin_bit: 0,
        }
    }

    /// An allocator for the client side: 1, 3, 5, ...
    pub fn client() -> StreamIdAllocator {
        StreamIdAllocator {
            next: AtomicU32::new(0),
            origin_bit: 1,
        }
    }

    /// The next unused stream id. Wraps only after 2^31 streams, which a
    /// connection would take days of continuous testing to reach.
    pub fn allocate(&self) -> u32 {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        (n << 1) | self.origin_bit
    }
}

/// Message ids for requests sent on one stream, starting at 1.
#[derive(Debug)]
pub struct MessageCounter {
    next: AtomicU32,
}

impl Default for MessageCounter {
    fn default() -> Self {
        MessageCounter {
            next: AtomicU32::new(1),
        }
    }
}

impl MessageCounter {
    /// The next request id; skips the reserved close id and never sets the reply bit.
    pub fn next_id(&self) -> u32 {
        loop {
            let id = self.next.fetch_add(1, Ordering::Relaxed) & !crate::REPLY_BIT;
            if id != 0 && id != crate::CLOSE_STREAM_MESSAGE_ID {
                return id;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_ids_are_even_and_client_ids_odd() {
        let server = StreamIdAllocator::server();
        assert_eq!(
            (0..3).map(|_| server.allocate()).collect::<Vec<_>>(),
            [2, 4, 6]
        );
        let client = StreamIdAllocator::client();
        assert_eq!(
            (0..3).map(|_| client.allocate()).collect::<Vec<_>>(),
            [1, 3, 5]
        );
        assert_eq!(StreamOrigin::of(0), StreamOrigin::Control);
        assert_eq!(StreamOrigin::of(7), StreamOrigin::Client);
        assert_eq!(StreamOrigin::of(8), StreamOrigin::Server);
    }

    #[test]
    fn message_ids_start_at_one_and_increase() {
        let counter = MessageCounter::default();
        assert_eq!(counter.next_id(), 1);
        assert_eq!(counter.next_id(), 2);
    }
}
