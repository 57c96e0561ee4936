//! The GenVM pack: Calldata and the results sub-VMs and modules hand back.
//!
//! GenVM (GenLayer's VM for intelligent contracts) passes values as Calldata
//! and answers calls with result blobs; consensus hashes cover both, so tools
//! must read them exactly as GenVM writes them and refuse anything else.
//! [`calldata`] is the strict codec with its vectors runner, generators and the
//! genlayer-js peer; [`results`] reads sub-VM and module results.

pub mod calldata;
pub mod results;
