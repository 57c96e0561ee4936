//! The blockstore one vector executes on: the vector's own blocks over the
//! shared actor-bundle blocks.
//!
//! Bundles hold a few megabytes of actor Wasm and are loaded once per
//! process; every vector gets a fresh [`VectorStore`] that reads through to
//! them, so no bundle block is copied per vector and nothing a vector writes
//! reaches the next one.

use cid::Cid;
use fvm_ipld_blockstore::Blockstore;
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

/// Blocks by CID, immutable once built (the loaded bundles).
pub type SharedBlocks = Arc<HashMap<Cid, Vec<u8>>>;

/// A vector's blocks (read and written by the VM) layered over the shared bundle blocks.
pub struct VectorStore {
    own: RefCell<HashMap<Cid, Vec<u8>>>,
    shared: SharedBlocks,
}

impl VectorStore {
    /// An empty layer over `shared`.
    pub fn new(shared: SharedBlocks) -> VectorStore {
        VectorStore {
            own: RefCell::new(HashMap::new()),
            shared,
        }
    }

    /// Adds a block to the vector's layer.
    pub fn insert(&self, cid: Cid, data: Vec<u8>) {
        self.own.borrow_mut().insert(cid, data);
    }

    /// The number of blocks in the vector's layer (the CAR's and those the VM wrote).
    pub fn own_len(&self) -> usize {
        self.own.borrow().len()
    }
}

impl Blockstore for VectorStore {
    fn get(&self, cid: &Cid) -> anyhow::Result<Option<Vec<u8>>> {
        if let Some(data) = self.own.borrow().get(cid) {
            return Ok(Some(data.clone()));
        }
        Ok(self.shared.get(cid).cloned())
    }

    fn put_keyed(&self, cid: &Cid, block: &[u8]) -> anyhow::Result<()> {
        self.insert(*cid, block.to_vec());
        Ok(())
    }

    fn has(&self, cid: &Cid) -> anyhow::Result<bool> {
        Ok(self.own.borrow().contains_key(cid) || self.shared.contains_key(cid))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cid::multihash::Multihash;

    fn cid(n: u8) -> Cid {
        Cid::new_v1(0x55, Multihash::wrap(0, &[n]).unwrap())
    }

    #[test]
    fn reads_through_to_shared_blocks_and_keeps_writes_to_itself() {
        let shared: SharedBlocks = Arc::new(HashMap::from([(cid(1), vec![1])]));
        let first = VectorStore::new(shared.clone());
        assert_eq!(first.get(&cid(1)).unwrap(), Some(vec![1]));
        first.put_keyed(&cid(2), &[2]).unwrap();
        assert!(first.has(&cid(2)).unwrap());
        let second = VectorStore::new(shared);
        assert!(!second.has(&cid(2)).unwrap());
        assert_eq!(second.get(&cid(3)).unwrap(), None);
    }
}
