//! A stateful test that finds a planted bug in a bounded queue.
//!
//! `cargo run -p geist --example bounded_queue` prints the shortest failing
//! sequence of operations geist found, as a program.

use geist::generators as gs;
use geist::stateful::StateMachine;
use geist::{Settings, TestCase, run_property};
use std::collections::VecDeque;

/// A ring buffer holding at most `capacity` items.
struct BoundedQueue {
    items: Vec<Option<u32>>,
    head: usize,
    len: usize,
}

impl BoundedQueue {
    fn new(capacity: usize) -> BoundedQueue {
        BoundedQueue {
            items: vec![None; capacity],
            head: 0,
            len: 0,
        }
    }

    /// Adds an item at the back; refuses when full.
    fn push(&mut self, item: u32) -> Result<(), u32> {
        // The planted bug: `>` should be `>=`, so a full queue accepts one
        // more item and overwrites its oldest.
        if self.len > self.items.len() {
            return Err(item);
        }
        let slot = (self.head + self.len) % self.items.len();
        self.items[slot] = Some(item);
        if self.len == self.items.len() {
            self.head = (self.head + 1) % self.items.len();
        } else {
            self.len += 1;
        }
        Ok(())
    }

    /// Removes the item at the front.
    fn pop(&mut self) -> Option<u32> {
        if self.len == 0 {
            return None;
        }
        let item = self.items[self.head].take();
        self.head = (self.head + 1) % self.items.len();
        self.len -= 1;
        item
    }
}

/// The queue under test beside a model of what it should hold.
struct World {
    queue: BoundedQueue,
    model: VecDeque<u32>,
    capacity: usize,
}

fn machine() -> StateMachine<World> {
    StateMachine::new()
        .rule("push", |w: &mut World, tc: &mut TestCase| {
            let item = tc.draw(gs::integers::<u32>().max_value(100));
            let accepted = w.queue.push(item).is_ok();
            let room = w.model.len() < w.capacity;
            assert_eq!(accepted, room, "push accepted={accepted} with room={room}");
            if room {
                w.model.push_back(item);
            }
        })
        .rule_when(
            "pop",
            |w| !w.model.is_empty(),
            |w, _tc| {
                assert_eq!(w.queue.pop(), w.model.pop_front());
            },
        )
        .invariant("length matches", |w| assert_eq!(w.queue.len, w.model.len()))
}

fn main() {
    let machine = machine();
    let settings = Settings::new()
        .test_cases(1000)
        .database(None::<&str>)
        .name("bounded_queue");
    let result = run_property(&settings, &mut |tc: &mut TestCase| {
        let world = World {
            queue: BoundedQueue::new(3),
            model: VecDeque::new(),
            capacity: 3,
        };
        machine.run(tc, world);
    });
    match result {
        Err(report) => println!("found the planted bug:\n{report}"),
        Ok(summary) => {
            println!("the planted bug was not found: {summary}");
            std::process::exit(1);
        }
    }
}
